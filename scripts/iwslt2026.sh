#!/usr/bin/env bash
# The IWSLT 2026 mini-campaign (configs/iwslt2026.yaml) on the bundled data, as its organizers run it: set up (if
# needed), fill the image submissions' wheels, evaluate every submission of examples/iwslt2026/submissions (a
# SimulStream image, an extra-context image with a prepare step, a log submission, a closed-model log submission)
# on dev (which decides the latency regimes) and test, and render the leaderboard.
#   scripts/iwslt2026.sh [--no-setup] [SUBMISSIONS [RESULTS [SITE]]]
# Re-running it resumes: finished runs are kept, new submissions are added.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--no-setup" ]; then shift; else bash scripts/setup.sh; fi
source scripts/env.sh
subs="${1:-examples/iwslt2026/submissions}"
results="${2:-results-iwslt2026}"
site="${3:-site-iwslt2026}"
for sub in "$subs"/*/; do
  if [ -f "$sub/requirements-image.txt" ]; then python3 agent_templates/fill_wheels.py "${sub%/}"; fi
done
harness evaluate "$subs" --config configs/iwslt2026.yaml --output "$results" --dataset dev,test \
  --workers 2 --resume
harness leaderboard "$results" --config configs/iwslt2026.yaml --output "$site" --overwrite
echo
echo "Leaderboard: file://$(cd "$site" && pwd)/index.html"
