#!/usr/bin/env bash
# The one test command (CI runs it): set up (if needed), lint, type check, then pytest in the set-up's own virtual
# environment.
#   bash scripts/test.sh           the whole suite in one pytest run, four test modules at a time (pytest-xdist
#                                  `--dist loadfile`): the longest modules first, beside each other, then the others
#                                  (the order: tests/conftest.py); the slowest durations are printed at the end.
#                                  Four on two cores: the Docker modules wait on containers, engines and deadlines
#                                  much of the time, and the others use the cores meanwhile (measured here: three
#                                  left the cores idle 6 % of the time, four 2 %)
#   bash scripts/test.sh --fast    the fast tier (two tests at a time): no Docker, no network namespaces, nothing
#                                  marked slow
# Any other argument goes to pytest (e.g. a file, or -k NAME); with one, pytest runs once, as asked.
set -euo pipefail
cd "$(dirname "$0")/.."
fast=0
args=()
for a in "$@"; do
  if [ "$a" = "--fast" ]; then fast=1; else args+=("$a"); fi
done
bash scripts/setup.sh
source scripts/env.sh
# Python keeps each module's compiled bytecode beside it (`__pycache__/`, git-ignored) unless told not to; some machines
# say not to (PYTHONDONTWRITEBYTECODE, set on ours). The suite starts hundreds of Python processes, each importing the
# harness, and its workers rewrite every test module's asserts: without the caches each one compiles them all again
# (a fifth of the fast tier's CPU, measured here). Build contexts never send `__pycache__/` (harness/images/context.py).
unset PYTHONDONTWRITEBYTECODE
python3 -m ruff check .
python3 -m mypy harness leaderboard
PYTEST=(python3 -m pytest -q -p no:cacheprovider)
if [ "$fast" = 1 ]; then
  exec "${PYTEST[@]}" -n "${HARNESS_TEST_WORKERS:-2}" -m "not docker and not lab and not slow" "${args[@]}"
fi
if [ "${#args[@]}" -gt 0 ]; then
  exec "${PYTEST[@]}" "${args[@]}"
fi
exec "${PYTEST[@]}" -n "${HARNESS_TEST_WORKERS:-4}" --dist loadfile --no-loadscope-reorder --durations=30
