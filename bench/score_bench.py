"""Benchmark: `harness score` vs `simuleval --score-only` on the same 2,000-sentence log, in the same run.

The log is built from real English text on this machine (the licence texts in /usr/share/common-licenses,
split into sentences): each instance's source and reference is one sentence, its hypothesis the sentence with
a few seeded word edits (drops, repeats, swaps), its delays a wait-k policy (k = 1..5) and its elapsed times the
delays plus a growing computation time, so both tools compute every metric including the `_CA` ones.

Each command runs as a fresh process (imports included), best of `--repeat` runs, the three commands taking
turns so that a slow spell of a shared machine hits them alike; wall-clock and CPU time (user + system, steadier
on a shared machine) are printed, with the ratio SimulEval time / harness time, for:
  - like-for-like: the metrics SimulEval computes (BLEU, AL, LAAL, AP, DAL, ATD, StartOffset, EndOffset, + _CA),
    no intervals (SimulEval computes none). Goal: >= 5x, checked on wall-clock time (PASS/FAIL line);
  - all metrics: `harness score` with everything it computes (adds chrF, TER, YAAL, 1000-resample bootstrap
    intervals for every metric) against the same SimulEval run, which cannot compute more.
The all-metrics time is mostly sacrebleu's TER (pure Python shift search, one worker process per core); BLEU and
chrF statistics are vectorized. SimulEval runs through its console script beside this interpreter (not a pyenv
shim, whose start-up would count against SimulEval).

Usage: python bench/score_bench.py [--sentences 2000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LICENSES = Path("/usr/share/common-licenses")
GOAL = 5.0
SHARED_LATENCY = ["AL", "LAAL", "AP", "DAL", "ATD", "StartOffset", "EndOffset"]


def real_sentences() -> list[str]:
    """Sentences of 5 to 40 words from the licence texts installed with Debian."""
    text = " ".join(p.read_text(encoding="utf-8", errors="replace") for p in sorted(LICENSES.glob("*")) if p.is_file())
    out = []
    for s in re.split(r"(?<=[.;:])\s+", text):
        words = s.split()
        if 5 <= len(words) <= 40:
            out.append(" ".join(words))
    return sorted(set(out))


def build_log(run_dir: Path, n: int, seed: int = 1) -> None:
    """Write instances.log (n instances) and SimulEval's config.yaml into run_dir."""
    rng = random.Random(seed)
    sents = real_sentences()
    if not sents:
        sys.exit(f"no text found in {LICENSES}")
    with open(run_dir / "instances.log", "w", encoding="utf-8") as f:
        for i in range(n):
            ref = sents[i % len(sents)]
            words = ref.split()
            for _ in range(rng.randint(0, 4)):
                j = rng.randrange(len(words))
                op = rng.random()
                if op < 0.3 and len(words) > 1:
                    del words[j]
                elif op < 0.6:
                    words.insert(j, words[rng.randrange(len(words))])
                else:
                    k = rng.randrange(len(words))
                    words[j], words[k] = words[k], words[j]
            x = len(ref.split())
            k = rng.randint(1, 5)
            delays = [min(k + t, x) for t in range(len(words))]
            clock, elapsed = 0.0, []
            for d in delays:
                clock += rng.random() * 40
                elapsed.append(d + clock)
            rec = {"index": i, "prediction": " ".join(words), "delays": delays, "elapsed": elapsed,
                   "prediction_length": len(words), "reference": ref, "source": ref, "source_length": x}
            f.write(json.dumps(rec) + "\n")
    (run_dir / "config.yaml").write_text("source_type: text\ntarget_type: text\n")


def best_time(cmd: list[str], repeat: int) -> tuple[float, float]:
    """Best wall-clock time and best CPU time (user + system of the child) over `repeat` runs."""
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        elapsed = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best_wall, best_cpu = min(best_wall, elapsed), min(best_cpu, cpu)
    return best_wall, best_cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    beside = Path(sys.executable).with_name("simuleval")
    simuleval = str(beside) if beside.is_file() else shutil.which("simuleval")
    if simuleval is None:
        sys.exit("simuleval (1.1.4) is not installed")
    harness = [sys.executable, "-m", "harness", "score"]
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp)
        build_log(run, args.sentences)
        se_cmd = [simuleval, "--score-only", "--output", str(run), "--quality-metrics", "BLEU",
                  "--latency-metrics", *SHARED_LATENCY, "--computation-aware"]
        cmds = {
            "se": se_cmd,
            "like": harness + [str(run), "--no-write", "--format", "json", "--bootstrap", "1",
                               "--metrics", "BLEU", *SHARED_LATENCY],
            "all": harness + [str(run), "--no-write", "--format", "json"],
        }
        best = {k: (float("inf"), float("inf")) for k in cmds}
        for _ in range(args.repeat):  # interleaved: each round runs every command once
            for k, cmd in cmds.items():
                wall, cpu = best_time(cmd, 1)
                best[k] = (min(best[k][0], wall), min(best[k][1], cpu))
    t_se, t_like, t_all = best["se"], best["like"], best["all"]
    print(f"log: {args.sentences} sentences, best of {args.repeat} runs, fresh processes (wall s / CPU s)")
    rows = [
        (f"simuleval --score-only (BLEU + {len(SHARED_LATENCY)} latency, CA)", t_se, ""),
        ("harness score, like-for-like (same metrics)", t_like, "like-for-like"),
        ("harness score, all metrics + 1000-sample CIs", t_all, "all metrics  "),
    ]
    for label, (wall, cpu), tag in rows:
        ratio = f"   {tag} ratio {t_se[0] / wall:5.2f}x wall, {t_se[1] / cpu:5.2f}x CPU" if tag else ""
        print(f"{label:52s} {wall:7.3f} / {cpu:7.3f}{ratio}")
    print("like-for-like: both tools compute BLEU and the same 7 latency metrics (+ _CA), no intervals;")
    print("all metrics: harness adds chrF, TER, YAAL and 1000-resample 95% intervals, SimulEval computes what it can.")
    like = t_se[0] / t_like[0]
    verdict = "PASS" if like >= GOAL else "FAIL"
    print(f"goal: like-for-like >= {GOAL:.0f}x faster than SimulEval (wall): {like:.2f}x {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
