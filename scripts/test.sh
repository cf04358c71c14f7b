#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite: lint, then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 -m ruff check .
python3 -m pytest -q -p no:cacheprovider "$@"
