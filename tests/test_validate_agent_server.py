"""`harness validate` on agent-server submissions (issue 11 item 4): with `--no-docker` the submission's own
command (SimulStream's HTTP server) runs as a local process and is driven as in Docker (the run in Docker is
tests/test_validate_agent_server_docker.py's)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.harness_cli import validate
from tests.simulstream_images import SERVER_ARGV, simulstream_submission, speech_task

pytest.importorskip("simulstream")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_validate_no_docker_drives_the_submissions_own_server_command(tmp_path: Path) -> None:
    port = free_port()
    sub = simulstream_submission(tmp_path / "subs", "local", declared_port=port, listen_port=port,
                                 hostname="127.0.0.1", agent_path="agent.py", command=SERVER_ARGV, wheels=False)
    done = validate(sub, speech_task(tmp_path / "task", n=2), tmp_path / "out", "--no-docker")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "status       ok" in done.stdout and "instances    2/2" in done.stdout
    assert "BLEU" in done.stdout
