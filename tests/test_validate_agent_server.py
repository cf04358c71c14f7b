"""`harness validate` on agent-server submissions (issue 11 item 4): with `--no-docker` the submission's own
command (SimulStream's HTTP server) runs as a local process and is driven as in Docker; in Docker, a `port:` that is
not the one the image listens on ends as `timeout` with a reason naming both ports."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.simulstream_images import SERVER_ARGV, simulstream_submission, speech_task

pytest.importorskip("simulstream")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def validate(sub: Path, cfg: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", "validate", str(sub), "--config", str(cfg), "--output",
                           str(out), *extra], capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_validate_no_docker_drives_the_submissions_own_server_command(tmp_path: Path) -> None:
    port = free_port()
    sub = simulstream_submission(tmp_path / "subs", "local", declared_port=port, listen_port=port,
                                 hostname="127.0.0.1", agent_path="agent.py", command=SERVER_ARGV, wheels=False)
    done = validate(sub, speech_task(tmp_path / "task", n=2), tmp_path / "out", "--no-docker")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "status       ok" in done.stdout and "instances    2/2" in done.stdout
    assert "BLEU" in done.stdout


@pytest.mark.docker
@pytest.mark.slow
def test_validate_names_the_port_the_image_listens_on(tmp_path: Path) -> None:
    sub = simulstream_submission(tmp_path / "subs", "wrongport", declared_port=8081, listen_port=8080)
    done = validate(sub, speech_task(tmp_path / "task", n=1, limits={"startup_timeout_s": 8}), tmp_path / "out")
    assert done.returncode == 1, done.stdout + done.stderr
    status = next(line for line in done.stdout.splitlines() if line.startswith("status"))
    assert "timeout" in status and "never answered on port 8081" in status, status
    assert "listens on 8080" in status and "port: 8081" in status, status
