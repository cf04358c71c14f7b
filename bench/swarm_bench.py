"""Benchmark: per-run overhead of the Swarm backend against the local backend, measured in the same run.

K zero-compute runs (the Docker tests' probe agent copying the 3-sentence test set) on each backend, taking turns so
that a slow spell of a shared machine hits both alike. Overhead = everything but the participant's own run time:
network up, server up and healthy, participant placed and started, everything removed. Printed: the median and max
overhead per backend, the median of each step, and the ratio swarm / local (goal <= 1.5).

The engine must be a swarm manager (`docker swarm init --advertise-addr 127.0.0.1`); the bench makes it one if it
is not and leaves the swarm afterwards in that case.

    python3 bench/swarm_bench.py [--runs 10] [--registry HOST:PORT]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOAL_RATIO = 1.5
STEPS = ("network_s", "server_ready_s", "startup_s", "collect_s", "teardown_s")


def probe_image(tmp: Path) -> str:
    from harness.images.base import docker_env, ensure_base_image
    from tests.evaluate_data.support import make_submission

    ensure_base_image()
    folder = make_submission(tmp, "bench-probe", "python3 /app/probe_agent.py copy")
    out = subprocess.run(["docker", "build", "-q", "-t", "harness-bench-probe:latest", str(folder)],
                         capture_output=True, text=True, env=docker_env(), check=True)
    return out.stdout.strip().splitlines()[-1]


def one_run(image: str, out: Path, backend: str, registry: str | None) -> dict[str, float]:
    from harness.config import load_config
    from harness.run.execute import execute_run
    from harness.run.spec import RunSpec
    from harness.run.swarm_backend import SwarmBackend
    from tests.evaluate_data.support import CONFIG

    config = load_config(CONFIG)
    track = config.track("text-en-es")
    spec = RunSpec(submission_image=image, command=["python3", "/app/probe_agent.py", "copy"], config=config,
                   track=track, dataset=track.dataset("dev"), out_dir=out)
    result = execute_run(spec, backend=SwarmBackend(registry) if backend == "swarm" else None)
    if result.outcome.status != "ok":
        raise SystemExit(f"{backend} run failed: {result.outcome}")
    t = result.timings
    return {**{k: t.get(k, 0.0) for k in STEPS}, "overhead_s": t["total_s"] - t["run_s"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10, help="zero-compute runs per backend")
    ap.add_argument("--registry", default=None, help="swarm: push images to this registry (HOST:PORT)")
    args = ap.parse_args()
    state = subprocess.run(["docker", "info", "-f", "{{.Swarm.LocalNodeState}}"], capture_output=True,
                           text=True, check=True).stdout.strip()
    made = state != "active"
    if made:
        subprocess.run(["docker", "swarm", "init", "--advertise-addr", "127.0.0.1"], check=True, capture_output=True)
    try:
        with tempfile.TemporaryDirectory() as tmp_s:
            tmp = Path(tmp_s)
            image = probe_image(tmp)
            rows: dict[str, list[dict[str, float]]] = {"local": [], "swarm": []}
            for i in range(args.runs):
                for backend in ("local", "swarm"):
                    rows[backend].append(one_run(image, tmp / f"{backend}-{i}", backend, args.registry))
    finally:
        if made:
            subprocess.run(["docker", "swarm", "leave", "--force"], capture_output=True)
    print(f"{args.runs} zero-compute runs per backend (probe agent, 3 sentences), taking turns; medians in s")
    print(f"{'backend':8}" + "".join(f"{s[:-2]:>14}" for s in STEPS) + f"{'overhead':>12}{'max':>8}")
    med = {}
    for backend, rs in rows.items():
        med[backend] = statistics.median(r["overhead_s"] for r in rs)
        cells = "".join(f"{statistics.median(r[s] for r in rs):14.3f}" for s in STEPS)
        print(f"{backend:8}{cells}{med[backend]:12.3f}{max(r['overhead_s'] for r in rs):8.3f}")
    ratio = med["swarm"] / med["local"]
    verdict = "PASS" if ratio <= GOAL_RATIO else "MISS"
    print(f"swarm / local overhead: {ratio:.2f}x (goal <= {GOAL_RATIO}x) -> {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
