"""METEOR's cost inside `harness score`, on 2,000 and 20,000 sentences of real MT output.

    python bench/meteor_bench.py [--sentences 2000 20000]

The wait-3 Apertium run of examples/runs (UDHR dev, en→es) is repeated to N instances; `harness score` runs with
its default metrics (BLEU, chrF, TER, every latency metric, 1,000-sample intervals) and again with METEOR added
(Spanish target: exact matching; and once as if the target were English, to price stems and WordNet synonyms).
Each is a separate process; printed: wall seconds, METEOR's share of the total, and its cost per sentence.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "examples" / "runs" / "udhr-dev-waitk3" / "instances.log"


def build(n: int, folder: Path) -> Path:
    recs = [json.loads(x) for x in RUN.read_text(encoding="utf-8").splitlines()]
    out = folder / f"n{n}" / "instances.log"
    out.parent.mkdir(parents=True)
    with out.open("w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({**recs[i % len(recs)], "index": i}) + "\n")
    return out


def timed(*args: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "harness", "score", *args, "--no-write", "--format", "json"],
                   check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, nargs="+", default=[2000, 20000])
    args = ap.parse_args()
    defaults = ["BLEU", "chrF", "TER", "AL", "LAAL", "AP", "DAL", "ATD", "StartOffset", "EndOffset", "YAAL"]
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sentences:
            log = str(build(n, Path(tmp)))
            base = timed(log, "--metrics", *defaults)
            es = timed(log, "--metrics", *defaults, "METEOR", "--target-lang", "es")
            en = timed(log, "--metrics", *defaults, "METEOR", "--target-lang", "en")
            print(f"{n} sentences: all default metrics {base:.2f} s; + METEOR exact (es) {es:.2f} s "
                  f"(METEOR {100 * (es - base) / es:.0f}% of the total, {1000 * (es - base) / n:.2f} ms/sentence); "
                  f"+ METEOR stems+synonyms (en) {en:.2f} s ({100 * (en - base) / en:.0f}%, "
                  f"{1000 * (en - base) / n:.2f} ms/sentence)")


if __name__ == "__main__":
    main()
