#!/usr/bin/env bash
# The main job on the bundled data: set up (if needed), evaluate the baselines of agent_templates/ (each a complete
# submission, under the ids the leaderboard shows) in isolated Docker containers against the demo task's test set,
# and render the static leaderboard.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
harness evaluate \
  baselines-waitk3=agent_templates/waitk_apertium \
  baselines-local-agreement=agent_templates/local_agreement \
  baselines-retranslation=agent_templates/retranslation \
  --config configs/demo.yaml --output results --dataset test --workers 2 --resume
harness leaderboard results --output site --overwrite
echo
echo "Leaderboard: file://$(pwd)/site/index.html  (or: python3 -m http.server -d site 8000)"
