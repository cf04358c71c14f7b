"""Shared helpers of the Docker tests of `harness evaluate` / `harness validate` (not a test module; imported as
`tests.evaluate_data.support`; the Docker skip rule is the `docker` marker of tests/conftest.py).

Submissions are made on the fly in a temporary folder from `agents/probe_agent.py` (one mode per submission), so
every test builds through the real `build_submission_image` path; the probe image is built once per session.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "config.yaml"
PROBE = HERE / "agents" / "probe_agent.py"
DOCKERFILE = "FROM {base}\nCOPY probe_agent.py /app/probe_agent.py\n"


def make_submission(root: Path, name: str, command: str | list[str], team: str = "tests",
                    extra_yaml: str = "", base: str | None = None) -> Path:
    """A submission folder `root/name` running `command` in an image holding the probe agent (built FROM `base`,
    default: this checkout's base image tag, `HARNESS_BASE_TAG` included)."""
    from harness.images.base import DEFAULT_TAG

    base = base or DEFAULT_TAG
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy2(PROBE, folder / "probe_agent.py")
    (folder / "Dockerfile").write_text(DOCKERFILE.format(base=base), encoding="utf-8")
    doc = {"team": team, "system": name, "contact": "tests@example.org", "track": "text-en-es", "kind": "primary",
           "description": "probe agent for the Docker tests", "build": {"dockerfile": "Dockerfile"},
           "command": command}
    (folder / "submission.yaml").write_text(yaml.safe_dump(doc, sort_keys=False) + extra_yaml, encoding="utf-8")
    return folder


def build_probe_image(folder: Path) -> str:
    """Build the probe agent's image (`harness-test-probe:latest`) from a submission made in `folder`; its id."""
    from harness.images.base import docker_env, ensure_base_image

    ensure_base_image()
    sub = make_submission(folder, "probe", "python3 /app/probe_agent.py copy")
    out = subprocess.run(["docker", "build", "-q", "-t", "harness-test-probe:latest", str(sub)],
                         capture_output=True, text=True, env=docker_env(), check=True)
    return out.stdout.strip().splitlines()[-1]


def run_probe(image: str, config: Any, out: Path, *args: str, backend: Any = None) -> tuple[Any, str]:
    """One run of the probe image in `mode ARGS` on the dev set of CONFIG's track (`execute_run`, the local backend
    unless `backend`): (its RunResult, its client.log); nothing of the run may be left behind."""
    from harness.run.execute import execute_run
    from harness.run.spec import RunSpec
    from harness.run.swarm.settle import SETTLING

    track = config.track("text-en-es")
    spec = RunSpec(submission_image=image, command=["python3", "/app/probe_agent.py", *args], config=config,
                   track=track, dataset=track.dataset("dev"), out_dir=out)
    result = execute_run(spec, backend=backend)
    SETTLING.settle()  # what a batch does before it returns: a swarm engine has dropped the removed network
    assert leftovers(f"harness.run={spec.run_id}") == [], "services, containers or networks left behind"
    log = (out / "client.log").read_text(encoding="utf-8", errors="replace") if (out / "client.log").exists() else ""
    return result, log


def tagged(log: str, tag: str) -> dict:
    """The JSON the probe printed after `TAG ` in its client.log."""
    line = next(ln for ln in log.splitlines() if ln.startswith(tag + " "))
    return json.loads(line[len(tag) + 1:])


def frozen_base(tag: str | None = None) -> str:
    """A fixed tag of the current base image: submissions built FROM it keep their digest even when the harness
    source (and so harness-base) changes during the test."""
    from harness.images.base import DEFAULT_TAG, ensure_base_image

    tag = tag or "harness-test-frozen-base:" + DEFAULT_TAG.rpartition(":")[2]
    subprocess.run(["docker", "tag", ensure_base_image(), tag], check=True, capture_output=True)
    return tag


def patient_config(folder: Path) -> Path:
    """A copy of CONFIG in `folder` whose timeouts are far longer than any test, so that only the test ends a run
    (dataset paths made absolute)."""
    doc = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    for track in doc["tracks"]:
        for ds in track["datasets"].values():
            ds["source"] = str(HERE / ds["source"])
            ds["references"] = {k: str(HERE / v) for k, v in ds["references"].items()}
    doc["limits"].update(instance_timeout_s=3600, idle_timeout_s=3600, total_timeout_s=3600)
    path = folder / "patient.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def run_owned(args: list[str], timeout: float) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run a command to its end, as subprocess.run with captured text output, and also return its pid: what the
    harness it starts made carries `harness.pid=<pid>`, so a leftover check looks at this run's resources only
    (another test's, running beside it on the same engine, are not this test's business)."""
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    return subprocess.CompletedProcess(args, proc.returncode, out, err), proc.pid


def validate(folder: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    """Runs `harness validate` on CONFIG; the result's `pid` attribute is the harness process id."""
    done, pid = run_owned([sys.executable, "-m", "harness", "validate", str(folder), "--config", str(CONFIG),
                           "--output", str(out), *extra], timeout=600)
    done.pid = pid  # type: ignore[attr-defined]
    return done


def swarm_state() -> str:
    """This engine's swarm state (`LocalNodeState`: inactive, active, ...)."""
    from harness.run.docker_backend import docker_api

    return str((docker_api().info().get("Swarm") or {}).get("LocalNodeState"))


def leftovers(label: str) -> list[str]:
    """Swarm services, containers and networks carrying `label` (e.g. `harness.run=abc` or `harness.pid=123`)."""
    listed = subprocess.run(["docker", "service", "ls", "-q", "--filter", f"label={label}"], capture_output=True,
                            text=True)
    services = listed.stdout.split() if listed.returncode == 0 else []  # not a swarm manager: no services
    ps = subprocess.run(["docker", "ps", "-a", "-q", "--filter", f"label={label}"], capture_output=True,
                        text=True, check=True).stdout.split()
    nets = subprocess.run(["docker", "network", "ls", "-q", "--filter", f"label={label}"], capture_output=True,
                          text=True, check=True).stdout.split()
    return services + ps + nets


class HostListener:
    """A TCP listener on every host address (so also on the host side of every Docker bridge)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("0.0.0.0", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[tuple] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, addr = self.sock.accept()
                self.accepted.append(addr)
                conn.close()
            except OSError:
                continue

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        self.sock.close()


def generous_config(root: Path) -> Path:
    """The tests' task (copied into `root`) with timeouts far above what a run takes on a loaded machine, for tests
    where the protocol or the test's own condition, never the clock, must decide how a run ends."""
    import shutil

    for name in ("dev.en", "dev.es", "test.en", "test.es"):
        shutil.copy2(CONFIG.parent / name, root / name)
    text = CONFIG.read_text(encoding="utf-8").replace("instance_timeout_s: 5, idle_timeout_s: 3",
                                                       "instance_timeout_s: 300, idle_timeout_s: 300")
    text = text.replace("total_timeout_s: 40", "total_timeout_s: 900")
    assert "instance_timeout_s: 300" in text and "total_timeout_s: 900" in text
    (root / "task.yaml").write_text(text, encoding="utf-8")
    return root / "task.yaml"
