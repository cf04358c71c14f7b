"""Write the two log submissions of the IWSLT 2026 mini-campaign (run on the host; the logs are committed).

    python3 examples/iwslt2026/make_logs.py [--data data/iwslt2026]

Both systems are an Apertium en→es cascade over the talk's transcript, as a participant who ran their system on
their own hardware would hand in its SimulStream logs (one per set, dev and test):

* `log-cascade`: each sentence's translation is written word by word as the sentence is spoken, `LAG_S` behind
  (a low-latency system);
* `closed-llm-log`: the same words `CLOSED_LAG_S` behind; it declares `models: closed` (a system built on a closed
  model), so it is shown apart and never ranked.

Each line of a log is SimulStream's: a `metadata` line per recording (`wav_name`), then one line per output with
`total_audio_processed` (s), `computation_time` (s), `generated_tokens` and `deleted_tokens`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

from harness.baselines.apertium import Apertium
from harness.data.speech import audio_duration_ms, read_audio_list

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SYSTEMS = {"log-cascade": 1.2, "closed-llm-log": 2.6}
COMPUTATION_S = 0.08


def simulstream_log(data: Path, split: str, lag_s: float, mt: Apertium) -> str:
    """The SimulStream log of one set: the translation of each transcript sentence, word k of n written when
    k/n of the sentence has been spoken, plus `lag_s` (at most the end of the recording: no system has processed
    more audio than there is, and `harness check` refuses a log that says so)."""
    seg = yaml.safe_load((data / f"{split}.yaml").read_text(encoding="utf-8"))
    sentences = (data / f"{split}.src.en").read_text(encoding="utf-8").splitlines()
    audio = {p.name: p for p in read_audio_list(data / f"{split}.list")}
    lines = []
    for i, wav in enumerate(dict.fromkeys(entry["wav"] for entry in seg)):
        lines.append({"id": i, "metadata": {"wav_name": wav}})
        end = audio_duration_ms(audio[wav]) / 1000.0
        for entry, english in zip(seg, sentences, strict=True):
            if entry["wav"] != wav:
                continue
            words = mt.translate(english).split()
            for k, word in enumerate(words):
                at = min(entry["offset"] + entry["duration"] * (k + 1) / len(words) + lag_s, end)
                lines.append({"id": i, "total_audio_processed": round(at, 3), "computation_time": COMPUTATION_S,
                              "generated_tokens": [word], "deleted_tokens": []})
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "iwslt2026")
    args = ap.parse_args()
    mt = Apertium("eng-spa")
    for name, lag in SYSTEMS.items():
        for split in ("dev", "test"):
            out = HERE / "submissions" / name / f"{split}.jsonl"
            out.write_text(simulstream_log(args.data, split, lag, mt), encoding="utf-8")
            print(f"make_logs: {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
