#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite: lint, type check, then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
# This machine (and CI) reaches no container registry: build the base image from Debian packages directly.
export HARNESS_AIR_GAPPED="${HARNESS_AIR_GAPPED:-1}"
bash scripts/setup.sh
source scripts/env.sh
python3 -m ruff check .
python3 -m mypy harness leaderboard
python3 -m pytest -q -p no:cacheprovider "$@"
