# Sourced by the other scripts (not run): puts the clone's own virtual environment, which scripts/setup.sh makes,
# first on PATH, so `python3`, `harness`, `pytest`, `ruff` and `mypy` are the set-up's and never the system's.
# HARNESS_VENV names another folder for it.
HARNESS_VENV="${HARNESS_VENV:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.venv}"
export VIRTUAL_ENV="$HARNESS_VENV"
export PATH="$HARNESS_VENV/bin:$PATH"
