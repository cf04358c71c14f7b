"""The start gate (harness/run/gate.py) against a real evaluation server on loopback: the participant's command
waits while `GET /gate` is closed, then runs by exec (same process, same environment); a command that is not
there reads as the shell's "not found" (the harness's `crash` with the name); a gate that never opens ends the
wait with one line; a server without `--gate-file` is open; a bad `wait` is a 400 (that an image without python3
gets no gate is tests/test_start_gate_docker.py's)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests

from harness.run import failures
from harness.run.gate import gated
from harness.run.joint import loopback_server
from harness.server.evaluation import open_evaluation
from harness.server.handlers import GateHandler
from tests.text_task import make_text_task


@pytest.fixture
def gated_server(tmp_path: Path, monkeypatch):
    """A server whose gate is the file `gate`; `asked` is set once the gate was asked while closed."""
    gate = tmp_path / "gate"
    asked = threading.Event()
    answer = GateHandler.get

    async def get(self) -> None:
        if not gate.exists():
            asked.set()
        await answer(self)

    monkeypatch.setattr(GateHandler, "get", get)
    ev = open_evaluation(make_text_task(tmp_path), "dev", tmp_path / "out")
    ev.gate_file = str(gate)
    with loopback_server(ev) as url:
        parts = urlsplit(url)
        yield parts.hostname, parts.port, gate, asked
    ev.close()


def _gate(host: str, port: int, budget: float, argv: list[str], env: dict[str, str] | None = None
          ) -> subprocess.Popen:
    return subprocess.Popen(gated(sys.executable, host, port, budget, argv), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})


def test_the_command_waits_at_the_closed_gate_then_runs_in_the_same_process(gated_server, tmp_path):
    host, port, gate, asked = gated_server
    mark = tmp_path / "ran"
    code = f"import os; open({str(mark)!r}, 'w').write(str(os.getpid()) + ' ' + os.environ['PROBE_ENV'])"
    proc = _gate(host, port, 60, [sys.executable, "-c", code], {"PROBE_ENV": "kept"})
    try:
        assert asked.wait(60), "the gate never asked the server"
        assert proc.poll() is None and not mark.exists(), "the command ran before the gate opened"
        gate.touch()
        assert proc.wait(60) == 0, proc.stderr.read()
    finally:
        proc.kill()
    assert mark.read_text() == f"{proc.pid} kept"  # exec: the same process and environment


def test_a_missing_command_reads_as_not_found_and_a_closed_gate_gives_up(gated_server):
    host, port, gate, asked = gated_server
    gate.touch()
    proc = _gate(host, port, 60, ["no-such-binary-xyz", "--flag"])
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == failures.NOT_FOUND_EXIT
    assert failures.command_not_found(proc.returncode, err.splitlines()) == "executable file not found: " \
                                                                            "no-such-binary-xyz"
    gate.unlink()
    proc = _gate(host, port, 0.3, [sys.executable, "-c", "pass"])
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 125 and asked.is_set()
    assert err.strip() == "harness gate: the evaluation server did not let the participant start within 0.3s"


def test_a_server_without_gate_file_is_open_and_a_bad_wait_is_refused(tmp_path):
    ev = open_evaluation(make_text_task(tmp_path), "dev", tmp_path / "out")
    with loopback_server(ev) as url:
        answer = requests.get(f"{url}/gate", timeout=5)
        bad = requests.get(f"{url}/gate?wait=soon", timeout=5)
    ev.close()
    assert answer.status_code == 200 and answer.json() == {"open": True}
    assert bad.status_code == 400 and "'wait' must be a number of seconds" in bad.json()["error"]
