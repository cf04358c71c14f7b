"""Benchmark: per-run overhead of the Swarm backend against the local backend, measured in the same run.

K zero-compute runs (the Docker tests' probe agent copying the 3-sentence test set) on each backend, taking turns so
that a slow spell of a shared machine hits both alike. Overhead = everything but the participant's own run time:
network up, server up and healthy, participant placed and started, everything removed. Printed: the median and max
overhead per backend, the median of each step, and the ratio swarm / local (goal <= 1.5). The participant's service
starts together with the server's and waits behind the start gate (harness/run/gate.py); its own code starts once
the server is healthy, as before. The swarm backend makes the next run's overlay network while a run works
(harness/run/swarm/spares.py) and leaves the engine's last step of removing a run's network (dropping its local
copy) to a background thread (harness/run/swarm/settle.py) while the next run starts; zero-compute runs have no
work to hide either in, so the bench waits for both between runs, outside every measured span, and prints how long
each took. A second measure leaves nothing out: K runs back to back per backend, as a batch with one worker runs
them; wall time minus the participants' own run time, per run (the worst case for the swarm backend: its
background work overlaps the next start instead of a run's work).

Two set-ups:
  default  a single-node swarm on this engine (made and left by the bench if the engine is not a manager);
  --lab    the multi-node lab of scripts/swarm-lab.sh (manager = data node + 2 workers, images through its
           registry by digest, participants on the workers): the swarm runs go to the lab's manager, the local runs
           to this machine's own engine, taking turns as above. The lab is brought up and taken down by the bench.

    python3 bench/swarm_bench.py [--runs 10] [--lab]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
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


def one_run(image: str, out: Path, backend: str, registry: str | None, docker_host: str | None = None
            ) -> dict[str, float]:
    from harness.config import load_config
    from harness.run.execute import execute_run
    from harness.run.spec import RunSpec
    from harness.run.swarm.backend import SwarmBackend
    from tests.evaluate_data.support import CONFIG

    config = load_config(CONFIG)
    track = config.track("text-en-es")
    spec = RunSpec(submission_image=image, command=["python3", "/app/probe_agent.py", "copy"], config=config,
                   track=track, dataset=track.dataset("dev"), out_dir=out)
    saved = os.environ.pop("DOCKER_HOST", None)
    if backend == "swarm" and docker_host:
        os.environ["DOCKER_HOST"] = docker_host
    try:
        result = execute_run(spec, backend=SwarmBackend(registry) if backend == "swarm" else None)
    finally:
        os.environ.pop("DOCKER_HOST", None)
        if saved is not None:
            os.environ["DOCKER_HOST"] = saved
    if result.outcome.status != "ok":
        raise SystemExit(f"{backend} run failed: {result.outcome}")
    t = result.timings
    return {**{k: t.get(k, 0.0) for k in STEPS}, "overhead_s": t["total_s"] - t["run_s"], "run_s": t["run_s"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10, help="zero-compute runs per backend")
    ap.add_argument("--lab", action="store_true", help="swarm runs on the multi-node lab (scripts/swarm-lab.sh)")
    args = ap.parse_args()
    lab_env: dict[str, str] = {}
    made = False
    if args.lab:
        up = subprocess.run(["bash", str(ROOT / "scripts" / "swarm-lab.sh"), "up", "2"], capture_output=True,
                            text=True, check=True).stdout
        lab_env = dict(re.findall(r"^export (\w+)=(\S+)$", up, re.M))
    else:
        state = subprocess.run(["docker", "info", "-f", "{{.Swarm.LocalNodeState}}"], capture_output=True,
                               text=True, check=True).stdout.strip()
        made = state != "active"
        if made:
            subprocess.run(["docker", "swarm", "init", "--advertise-addr", "127.0.0.1"], check=True,
                           capture_output=True)
    try:
        with tempfile.TemporaryDirectory() as tmp_s:
            tmp = Path(tmp_s)
            image = probe_image(tmp)
            if args.lab:
                from harness.images.base import DEFAULT_TAG

                subprocess.run(f"docker save {DEFAULT_TAG} harness-bench-probe:latest | DOCKER_HOST="
                               f"{lab_env['DOCKER_HOST']} docker load", shell=True, check=True, capture_output=True)
            rows: dict[str, list[dict[str, float]]] = {"local": [], "swarm": []}
            registry, host = lab_env.get("HARNESS_REGISTRY"), lab_env.get("DOCKER_HOST")
            one_run(image, tmp / "warm", "swarm", registry, host)  # pushes and pulls the images once
            from harness.run.swarm.settle import SETTLING
            from harness.run.swarm.spares import SPARES

            makes: list[float] = []
            settles: list[float] = []
            for i in range(args.runs):
                for backend in ("local", "swarm"):
                    rows[backend].append(one_run(image, tmp / f"{backend}-{i}", backend, registry, host))
                    if backend == "swarm":  # the next warm network is made during a run's own work; these runs
                        made_s = SPARES.wait_ready()  # have none, so wait for it outside every measured span
                        if made_s is not None:
                            makes.append(made_s)
                        SETTLING.settle()  # the last run's network removal, finished by the engine
                        if SETTLING.last_settle_s is not None:
                            settles.append(SETTLING.last_settle_s)
            batch: dict[str, float] = {}
            for backend in ("local", "swarm"):  # back to back: background work overlaps the next run's start
                t0 = time.monotonic()
                ran = sum(one_run(image, tmp / f"batch-{backend}-{i}", backend, registry, host)["run_s"]
                          for i in range(args.runs))
                if backend == "swarm":
                    SPARES.close()
                    SETTLING.settle()
                batch[backend] = (time.monotonic() - t0 - ran) / args.runs
    finally:
        if made:
            subprocess.run(["docker", "swarm", "leave", "--force"], capture_output=True)
        if args.lab:
            subprocess.run(["bash", str(ROOT / "scripts" / "swarm-lab.sh"), "down"], capture_output=True)
    where = "the 3-node lab (participants on workers, images by digest)" if args.lab else "a single-node swarm"
    print(f"{args.runs} zero-compute runs per backend (probe agent, 3 sentences), swarm on {where}, taking turns; "
          "medians in s")
    print(f"{'backend':8}" + "".join(f"{s[:-2]:>14}" for s in STEPS) + f"{'overhead':>12}{'max':>8}")
    med = {}
    for backend, rs in rows.items():
        med[backend] = statistics.median(r["overhead_s"] for r in rs)
        cells = "".join(f"{statistics.median(r[s] for r in rs):14.3f}" for s in STEPS)
        print(f"{backend:8}{cells}{med[backend]:12.3f}{max(r['overhead_s'] for r in rs):8.3f}")
    if makes:
        print(f"warm network for the next run: made in {statistics.median(makes):.3f} s (median) while a run works "
              "(not part of any overhead above; real runs last minutes)")
    if settles:
        print(f"network removal finished by the engine in the background: {statistics.median(settles):.3f} s (median; "
              "not part of any overhead above)")
    ratio = med["swarm"] / med["local"]
    verdict = "PASS" if ratio <= GOAL_RATIO else "MISS"
    print(f"swarm / local overhead: {ratio:.2f}x (goal <= {GOAL_RATIO}x) -> {verdict}")
    print(f"back to back, {args.runs} runs per backend, nothing left out (wall - run time, per run): local "
          f"{batch['local']:.3f} s, swarm {batch['swarm']:.3f} s -> {batch['swarm'] / batch['local']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
