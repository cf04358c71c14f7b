"""`harness validate` on an agent-server submission in Docker (issue 11 item 4): a `port:` that is not the one the
image listens on ends as `timeout` with a reason naming both ports."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness_cli import validate
from tests.simulstream_images import simulstream_submission, speech_task

pytest.importorskip("simulstream")
pytestmark = pytest.mark.docker


@pytest.mark.slow
def test_validate_names_the_port_the_image_listens_on(tmp_path: Path) -> None:
    sub = simulstream_submission(tmp_path / "subs", "wrongport", declared_port=8081, listen_port=8080)
    done = validate(sub, speech_task(tmp_path / "task", n=1, limits={"startup_timeout_s": 8}), tmp_path / "out")
    assert done.returncode == 1, done.stdout + done.stderr
    status = next(line for line in done.stdout.splitlines() if line.startswith("status"))
    assert "timeout" in status and "never answered on port 8081" in status, status
    assert "listens on 8080" in status and "port: 8081" in status, status
