#!/usr/bin/env bash
# The GPU checks in one command, on a machine with NVIDIA GPUs, the NVIDIA container toolkit and this clone set
# up (scripts/setup.sh, with the comet extra for the second check):
#   1. a CUDA container sees exactly its GPUs: `limits.gpus` reaches the fetch step, prepare and the run
#   2. COMET and XCOMET on CUDA equal the CPU's to 1e-6 (fp32, toy checkpoints built offline)
# Usage: scripts/gpu-checks.sh [--gpus 0,1] [--only containers|comet]    (one line per check; exit 1 on a FAIL)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
export PYTHONPATH="$(pwd)${PYTHONPATH:+:$PYTHONPATH}"
echo "host GPUs:"; nvidia-smi -L 2>/dev/null || echo "  (no nvidia-smi)"
exec python3 scripts/gpu_checks.py "$@"
