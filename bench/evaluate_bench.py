"""Benchmark of `harness evaluate`: orchestration overhead per run, and batch wall time with 1 and 2 workers.

1. Overhead: one isolated run (`execute_run`) of a trivial participant (the Docker tests' probe agent on the
   3-sentence test config), repeated; overhead = everything but the participant's own run time (network up,
   server container up and healthy, participant container created and started, everything removed).
   Goal: ≤ 3 s per run.
2. Batch: `harness evaluate SUBMISSIONS --dataset dev` with `--workers 1` and `--workers 2` (images built
   beforehand, so both measure runs only), and their ratio.

    python3 bench/evaluate_bench.py [--submissions agent_templates/waitk_apertium ...] [--config C] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOAL_OVERHEAD_S = 3.0


def probe_image(tmp: Path) -> str:
    from harness.images.base import docker_env, ensure_base_image
    from tests.evaluate_data.support import make_submission

    ensure_base_image()
    folder = make_submission(tmp, "bench-probe", "python3 /app/probe_agent.py copy")
    out = subprocess.run(["docker", "build", "-q", "-t", "harness-bench-probe:latest", str(folder)],
                         capture_output=True, text=True, env=docker_env(), check=True)
    return out.stdout.strip().splitlines()[-1]


def bench_overhead(repeat: int, tmp: Path) -> dict[str, float]:
    from harness.config import load_config
    from harness.run.execute import execute_run
    from harness.run.spec import RunSpec
    from tests.evaluate_data.support import CONFIG

    image = probe_image(tmp)
    config = load_config(CONFIG)
    rows = []
    track = config.track("text-en-es")
    for i in range(repeat + 1):
        spec = RunSpec(submission_image=image, command=["python3", "/app/probe_agent.py", "copy"], config=config,
                       track=track, dataset=track.dataset("dev"), out_dir=tmp / f"run{i}")
        r = execute_run(spec)
        if r.outcome.status != "ok":
            raise SystemExit(f"bench run failed: {r.outcome}")
        if i:  # the first run warms the engine's caches
            rows.append(r.timings)
    med = {k: statistics.median(t[k] for t in rows) for k in rows[0]}
    med["overhead_s"] = statistics.median(t["total_s"] - t["run_s"] for t in rows)
    med["overhead_max_s"] = max(t["total_s"] - t["run_s"] for t in rows)
    return med


FROZEN = "harness-bench-frozen-base:latest"


def freeze(submissions: list[Path], tmp: Path) -> Path:
    """Copies of the submissions built FROM a fixed tag of today's base image, so that edits of the harness source
    during the benchmark (which rebuild harness-base) cannot slip image builds into the timed passes."""
    from harness.images.base import DEFAULT_TAG, ensure_base_image

    subprocess.run(["docker", "tag", ensure_base_image(), FROZEN], check=True, capture_output=True)
    dest = tmp / "frozen-submissions"
    for folder in submissions:
        shutil.copytree(folder, dest / folder.name)
    for dockerfile in dest.glob("*/Dockerfile"):
        dockerfile.write_text(dockerfile.read_text().replace(f"FROM {DEFAULT_TAG}", f"FROM {FROZEN}"))
    return dest


def bench_batch(submissions: list[Path], config: Path, dataset: str, tmp: Path, frozen: bool) -> dict[str, float]:
    out = {}
    if frozen:
        submissions = [freeze(submissions, tmp)]
    cmd = [sys.executable, "-m", "harness", "evaluate", *map(str, submissions), "--config", str(config),
           "--dataset", dataset, *(["--server-image", FROZEN] if frozen else [])]
    warm = subprocess.run([*cmd, "--output", str(tmp / "warm")], capture_output=True, text=True)
    if warm.returncode != 0:
        raise SystemExit(f"evaluate failed: {warm.stderr.strip()[-500:]}")
    summary = json.loads((tmp / "warm" / "summary.json").read_text())
    out["runs"] = len(summary["runs"])
    out["statuses"] = sorted({r["status"] for r in summary["runs"]})  # type: ignore[assignment]
    for workers in (1, 2):
        dest = tmp / f"w{workers}"
        t0 = time.monotonic()
        proc = subprocess.run([*cmd, "--output", str(dest), "--workers", str(workers)], capture_output=True,
                              text=True)
        out[f"wall_workers{workers}_s"] = time.monotonic() - t0
        if proc.returncode != 0:
            raise SystemExit(f"evaluate --workers {workers} failed: {proc.stderr.strip()[-500:]}")
        runs = []
        windows = []
        builds = 0.0
        for man in dest.glob("*/manifest.json"):
            doc = json.loads(man.read_text())
            builds += float((doc.get("timings") or {}).get("build_s") or 0.0)
            for run in doc["runs"].values():
                if "timings" in run:
                    runs.append(run["timings"])
                if run.get("window"):
                    windows.append(run["window"])
        if windows:  # from the first run's start to the last run's end: the runs alone, without image builds
            out[f"runs_wall_workers{workers}_s"] = max(w[1] for w in windows) - min(w[0] for w in windows)
        out[f"build_workers{workers}_s"] = builds  # image builds inside the pass (cache hits: ~0)
        if runs:
            out[f"runs_sum_workers{workers}_s"] = sum(t["total_s"] for t in runs)
            out[f"overhead_workers{workers}_s"] = statistics.median(t["total_s"] - t["run_s"] for t in runs)
    return out


def report_overhead(o: dict[str, float], repeat: int) -> None:
    print(f"per-run orchestration (median of {repeat}, 3-sentence probe):")
    for k in ("network_s", "server_ready_s", "startup_s", "run_s", "teardown_s", "total_s"):
        print(f"  {k:<16} {o[k]:6.2f} s")
    verdict = "PASS" if o["overhead_s"] <= GOAL_OVERHEAD_S else "MISS"
    print(f"  overhead         {o['overhead_s']:6.2f} s (max {o['overhead_max_s']:.2f} s); goal <= "
          f"{GOAL_OVERHEAD_S} s: ratio {o['overhead_s'] / GOAL_OVERHEAD_S:.2f} of the goal -> {verdict}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--submissions", type=Path, nargs="+",
                    default=[ROOT / "agent_templates" / n for n in ("waitk_apertium", "local_agreement",
                                                                     "retranslation")])
    ap.add_argument("--config", type=Path, default=ROOT / "configs" / "demo.yaml")
    ap.add_argument("--dataset", default="dev")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip-overhead", action="store_true", help="only the batch part")
    ap.add_argument("--no-freeze", action="store_true",
                    help="build the submissions as they are (FROM harness-base, rebuilt when the source changes)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="harness-bench-"))
    try:
        if not args.skip_overhead:
            report_overhead(bench_overhead(args.repeat, tmp), args.repeat)
        if args.submissions:
            b = bench_batch(args.submissions, args.config, args.dataset, tmp, frozen=not args.no_freeze)
            print(f"batch: {len(args.submissions)} submission(s) on {args.dataset}, {b['runs']} run(s), "
                  f"statuses {b['statuses']}")
            for w in (1, 2):
                key = f"overhead_workers{w}_s"
                extra = f", median overhead {b[key]:.2f} s/run" if key in b else ""
                print(f"  --workers {w}: wall {b[f'wall_workers{w}_s']:6.2f} s, first run start to last run end "
                      f"{b.get(f'runs_wall_workers{w}_s', float('nan')):6.2f} s, sum of run times "
                      f"{b.get(f'runs_sum_workers{w}_s', float('nan')):6.2f} s{extra}, "
                      f"image builds inside {b[f'build_workers{w}_s']:.1f} s")
            print(f"  speed-up workers 2 vs 1: wall {b['wall_workers1_s'] / b['wall_workers2_s']:.2f}x "
                  "(meaningful when no image was rebuilt in either pass)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
