"""What everyone trips over, through the real commands (issue 26, items 10, 12, 13): one line instead of a
traceback, the documented exit codes (the same failure exiting the same way in check and validate), progress that
moves, and an export that does not overwrite."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.evaluate_data.support import CONFIG, generous_config
from tests.harness_cli import read_terminal
from tests.harness_cli import run_harness as harness

REPO = Path(__file__).resolve().parents[1]
RUN = REPO / "examples" / "runs" / "udhr-dev-waitk3"


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


@pytest.mark.slow
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


@pytest.mark.slow
def test_validate_redraws_its_table_while_no_instance_ends(tmp_path: Path) -> None:
    """The command waits for a file the test writes only once the terminal has shown the elapsed time move
    while the run was still starting (no instance ended): nothing here depends on how fast the machine is."""
    import os
    import pty
    import re
    import select

    from tests.evaluate_data.support import make_submission

    go = tmp_path / "go"
    folder = make_submission(tmp_path / "subs", "slow", f"while [ ! -e {go} ]; do sleep 0.05; done; "
                                                        "python3 probe_agent.py copy")
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    config = generous_config(tmp_path)  # the run waits on the test's file, never on the clock
    proc = subprocess.Popen([sys.executable, "-m", "harness", "validate", str(folder), "--config", str(config),
                             "--output", str(tmp_path / "out"), "--no-docker"], stdout=subprocess.PIPE,
                            stderr=slave, stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    shown, elapsed = b"", set()
    try:
        for _ in range(10_000):  # bounded: each read brings at least one byte of a redraw
            if len(elapsed) >= 3 or proc.poll() is not None:
                break
            ready, _, _ = select.select([master], [], [], 60)
            if not ready:
                break  # nothing drawn for a minute: the table does not move (the assertion below says so)
            try:
                shown += os.read(master, 4096)
            except OSError:  # the command closed the terminal: it ended
                break
            # the elapsed time while no instance has ended: starting (-), or running with none done (0/3)
            elapsed = set(re.findall(rb"(?:starting +-|running +0/3) +(\d+\.\d)s", shown))
    finally:
        go.touch()
    read_terminal(master)  # the rest of what it shows, until it closes the terminal
    os.close(master)
    code = proc.wait(timeout=120)
    assert proc.stdout is not None
    assert code == 0, proc.stdout.read().decode("utf-8", "replace") + shown.decode("utf-8", "replace")[-2000:]
    assert len(elapsed) >= 3, shown.decode("utf-8", "replace")


@pytest.mark.slow
def test_validate_off_a_terminal_prints_each_state_change(tmp_path: Path) -> None:
    from tests.evaluate_data.support import make_submission

    folder = make_submission(tmp_path / "subs", "fine", "python3 probe_agent.py copy")
    proc = harness("validate", str(folder), "--config", str(CONFIG), "--output", str(tmp_path / "out"),
                   "--no-docker")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    states = [line.split()[2] for line in proc.stderr.splitlines() if line.startswith("fine ")]
    assert states[0] == "starting" and states[-1] == "ok", proc.stderr
    assert "\x1b" not in proc.stderr


def test_score_signature_lines_never_wrap_mid_token_at_80_columns() -> None:
    proc = harness("score", str(RUN), "--no-write")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("BLEU: "))
    signature = "".join(line.strip() for line in lines[start:]).removeprefix("BLEU: ")
    assert signature.startswith("nrefs:1|") and "version:" in signature
    assert all(len(line) <= 80 for line in lines[start:]), lines[start:]
