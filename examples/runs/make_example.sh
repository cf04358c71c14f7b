#!/usr/bin/env bash
# Re-create examples/runs/udhr-dev-waitk3: a real SimulEval 1.1.4 run (in-process mode) of a wait-3
# word-for-word apertium agent on the UDHR dev set (en→es). Needs apertium + apertium-eng-spa and simuleval==1.1.4.
set -euo pipefail
cd "$(dirname "$0")"
DATA=../../data/udhr
OUT=udhr-dev-waitk3
python build_lexicon.py "$DATA/dev.en" lexicon.json
rm -rf "$OUT"
simuleval --agent waitk_agent.py --lexicon lexicon.json --waitk 3 \
  --source "$DATA/dev.en" --target "$DATA/dev.es" --output "$OUT" \
  --quality-metrics BLEU --latency-metrics AL LAAL AP DAL ATD StartOffset EndOffset --no-progress-bar
rm -f lexicon.json
