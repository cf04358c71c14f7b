"""Benchmark: `harness score` vs `simuleval --score-only` on realistic logs of 2,000 and 20,000 sentences.

The log is real machine translation: the wait-3 Apertium baseline (agent_templates/waitk_apertium's policy:
translate the source prefix read so far with Apertium eng-spa, write the next word, k = 3) run over the 60 UDHR
English sentences of data/udhr (dev + test), scored against the official Spanish text. Its delays are the
policy's; its elapsed times are the delays plus the measured Apertium time (ms), as SimulEval logs text runs. The
60 instances are repeated (and renumbered) up to each size, so every sentence costs what real MT output costs —
TER's shift search in particular, which near-reference hypotheses would hide.

Each command runs as a fresh process (imports included), best of `--repeat` runs, the commands taking turns so
that a slow spell of a shared machine hits them alike. Printed per size: wall-clock and CPU time (user + system),
the peak resident memory of the command (ru_maxrss of the child and its descendants, from `os.wait4`) and the
ratio SimulEval time / harness time for:
  - like-for-like: the metrics SimulEval computes (BLEU, AL, LAAL, AP, DAL, ATD, StartOffset, EndOffset + _CA),
    no intervals. Goal: >= 5x (wall);
  - all metrics: `harness score` with everything it computes (adds chrF, TER, YAAL and 1000-resample bootstrap
    intervals for every metric) against the same SimulEval run. Goal at the largest size: >= 3x (wall) and a
    peak under 400 MiB.
At the smallest size the BLEU, chrF and TER scores and signatures of the all-metrics run are checked against
sacrebleu's own `corpus_score` (pure sacrebleu, no harness code) on the same text.

Usage: python bench/score_bench.py [--sentences 2000 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UDHR = ROOT / "data" / "udhr"
LIKE_GOAL, ALL_GOAL, MEMORY_GOAL_MIB = 5.0, 3.0, 400
SHARED_LATENCY = ["AL", "LAAL", "AP", "DAL", "ATD", "StartOffset", "EndOffset"]


def waitk_records(k: int = 3) -> list[dict]:
    """The wait-k Apertium baseline's records on the UDHR sentences (dev then test), SimulEval's text format."""
    sys.path.insert(0, str(ROOT))
    from harness.baselines.apertium import Apertium

    sources = [s for part in ("dev", "test") for s in (UDHR / f"{part}.en").read_text("utf-8").splitlines()]
    refs = [s for part in ("dev", "test") for s in (UDHR / f"{part}.es").read_text("utf-8").splitlines()]
    mt = Apertium("eng-spa")
    out = []
    try:
        for source, ref in zip(sources, refs, strict=True):
            words = source.split()
            target: list[str] = []
            delays: list[int] = []
            elapsed: list[float] = []
            compute_ms = 0.0
            read = min(k, len(words))
            while True:
                t = time.perf_counter()
                prefix = mt.translate(" ".join(words[:read])).split()
                compute_ms += (time.perf_counter() - t) * 1000
                if read == len(words):  # source finished: write the rest of the full translation
                    for w in prefix[len(target):]:
                        target.append(w)
                        delays.append(read)
                        elapsed.append(read + compute_ms)
                    break
                if len(prefix) > len(target) and read - len(target) >= k:
                    target.append(prefix[len(target)])
                    delays.append(read)
                    elapsed.append(read + compute_ms)
                else:
                    read += 1
            out.append({"prediction": " ".join(target), "delays": delays, "elapsed": elapsed,
                        "prediction_length": len(target), "reference": ref, "source": source,
                        "source_length": len(words)})
    finally:
        mt.close()
    return out


def write_log(run_dir: Path, records: list[dict], n: int) -> tuple[list[str], list[str]]:
    """instances.log with `n` instances (the records repeated) and SimulEval's config.yaml; (hyps, refs)."""
    run_dir.mkdir(parents=True)
    hyps, refs = [], []
    with open(run_dir / "instances.log", "w", encoding="utf-8") as f:
        for i in range(n):
            rec = dict(records[i % len(records)], index=i)
            hyps.append(rec["prediction"])
            refs.append(rec["reference"])
            f.write(json.dumps(rec) + "\n")
    (run_dir / "config.yaml").write_text("source_type: text\ntarget_type: text\n")
    return hyps, refs


def timed(cmd: list[str]) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak resident MiB, stdout) of one fresh run of `cmd` (its descendants included)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{err.read().decode(errors='replace')[-2000:]}")
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read().decode()


def check_sacrebleu(scores: dict, hyps: list[str], refs: list[str]) -> list[str]:
    """Differences between the harness's BLEU/chrF/TER scores and signatures and sacrebleu's own (empty: none)."""
    from sacrebleu.metrics import BLEU, CHRF, TER

    problems = []
    for name, metric in (("BLEU", BLEU()), ("chrF", CHRF()), ("TER", TER())):
        score = metric.corpus_score(hyps, [refs])
        metric.n_bootstrap, metric.seed = 1000, "12345"  # what a 1000-resample run's signature says
        mine = scores[name]
        if mine["score"] != score.score:
            problems.append(f"{name}: harness {mine['score']!r} != sacrebleu {score.score!r}")
        if mine["signature"] != metric.get_signature().format():
            problems.append(f"{name}: signature {mine['signature']!r} != {metric.get_signature().format()!r}")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, nargs="+", default=[2000, 20000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-check", action="store_true", help="skip the comparison with sacrebleu")
    args = ap.parse_args()
    beside = Path(sys.executable).with_name("simuleval")
    simuleval = str(beside) if beside.is_file() else shutil.which("simuleval")
    if simuleval is None:
        sys.exit("simuleval (1.1.4) is not installed")
    records = waitk_records()
    harness = [sys.executable, "-m", "harness", "score"]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for size_no, n in enumerate(sorted(args.sentences)):
            run = Path(tmp) / str(n)
            hyps, refs = write_log(run, records, n)
            cmds = {
                "se": [simuleval, "--score-only", "--output", str(run), "--quality-metrics", "BLEU",
                       "--latency-metrics", *SHARED_LATENCY, "--computation-aware"],
                "like": harness + [str(run), "--no-write", "--format", "json", "--bootstrap", "1",
                                   "--metrics", "BLEU", *SHARED_LATENCY],
                "all": harness + [str(run), "--no-write", "--format", "json"],
            }
            best = {k: [float("inf")] * 3 for k in cmds}
            all_out = ""
            for _ in range(args.repeat):  # interleaved: each round runs every command once
                for k, cmd in cmds.items():
                    wall, cpu, mib, stdout = timed(cmd)
                    best[k] = [min(best[k][0], wall), min(best[k][1], cpu), min(best[k][2], mib)]
                    all_out = stdout if k == "all" else all_out
            se, like, allm = best["se"], best["like"], best["all"]
            print(f"\n{n} sentences (wait-3 Apertium on UDHR), best of {args.repeat} fresh runs: "
                  "wall s / CPU s / peak MiB")
            for label, (wall, cpu, mib), tag in (
                (f"simuleval --score-only (BLEU + {len(SHARED_LATENCY)} latency, CA)", se, ""),
                ("harness score, like-for-like (same metrics)", like, "like-for-like"),
                ("harness score, all metrics + 1000-sample CIs", allm, "all metrics  "),
            ):
                ratio = f"   {tag} {se[0] / wall:5.2f}x wall, {se[1] / cpu:5.2f}x CPU" if tag else ""
                print(f"{label:52s} {wall:7.3f} / {cpu:7.3f} / {mib:6.1f}{ratio}")
            like_ratio, all_ratio = se[0] / like[0], se[0] / allm[0]
            verdicts = [(f"like-for-like >= {LIKE_GOAL:.0f}x", like_ratio >= LIKE_GOAL, f"{like_ratio:.2f}x"),
                        (f"all metrics peak < {MEMORY_GOAL_MIB} MiB", allm[2] < MEMORY_GOAL_MIB, f"{allm[2]:.1f}")]
            if n == max(args.sentences):
                verdicts.append((f"all metrics >= {ALL_GOAL:.0f}x", all_ratio >= ALL_GOAL, f"{all_ratio:.2f}x"))
            if size_no == 0 and not args.no_check:
                problems = check_sacrebleu(json.loads(all_out), hyps, refs)
                verdicts.append(("BLEU/chrF/TER scores and signatures == sacrebleu", not problems,
                                 "; ".join(problems) or "equal"))
            for goal, passed, value in verdicts:
                ok &= passed
                print(f"goal: {goal}: {value} {'PASS' if passed else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
