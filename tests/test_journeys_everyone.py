"""What everyone trips over, through the real commands (issue 26, items 10, 12, 13): one line instead of a
traceback, the documented exit codes (the same failure exiting the same way in check and validate), progress that
moves, and an export that does not overwrite."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from tests.evaluate_data.support import CONFIG

REPO = Path(__file__).resolve().parents[1]
RUN = REPO / "examples" / "runs" / "udhr-dev-waitk3"


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=300)


def one_line(proc: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stderr


def test_view_on_a_port_in_use_is_one_line() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        err = one_line(harness("view", str(RUN), "--port", str(port)))
    assert f"cannot listen on 127.0.0.1:{port}" in err and "--port" in err, err


def test_score_into_a_closed_pipe_exits_quietly() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "harness", "score", str(RUN), "--no-write", "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before anything is written (`| head -0`)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141 and err == "", err


def test_check_and_validate_exit_alike_for_the_same_failure(tmp_path: Path) -> None:
    missing = tmp_path / "nothing"
    for proc in (harness("check", str(missing), "--no-docker"),
                 harness("validate", str(missing), "--config", str(CONFIG), "--no-docker")):
        assert "submission folder not found" in one_line(proc, 2)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "submission.yaml").write_text("team: t\nsystem: s\ncomand: x\n", encoding="utf-8")
    checked = harness("check", str(bad), "--no-docker")
    validated = harness("validate", str(bad), "--config", str(CONFIG), "--no-docker", "--output",
                        str(tmp_path / "out"))
    assert checked.returncode == validated.returncode == 1, checked.stdout + validated.stdout + validated.stderr
    assert "comand: unknown field; did you mean 'command'?" in checked.stdout
    assert "status       invalid_submission:" in validated.stdout and "did you mean 'command'" in validated.stdout
