"""The run's own timeouts around an agent-server participant (issue 32, items 14 and 15), through `harness validate
--no-docker` (the real server, driver, watchdog and processes): the idle window opens when the participant's server
has started, not while it loads; and an instance cut by the harness's own kill on a timeout is logged as cut by the
harness, not as the participant's protocol violation, with no instance after it blamed on a refused connection.

The participant is `tests/agents/echo_service.py` (a SimulEval-style agent service). Its slow start-up is a fixed
load time well past the idle window; its hang is a wait on an event nothing sets, ended by the harness's kill."""

from __future__ import annotations

import json
import shutil
import socket
import sys
from pathlib import Path

import pytest

from tests.harness_cli import validate
from tests.text_task import make_text_task

pytestmark = [pytest.mark.slow]

ECHO = Path(__file__).resolve().parent / "agents" / "echo_service.py"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _submission(root: Path, *flags: str) -> Path:
    sub = root / "echo"
    sub.mkdir(parents=True)
    shutil.copy(ECHO, sub / "echo_service.py")
    port = _free_port()
    command = json.dumps([sys.executable, "echo_service.py", str(port), *flags])
    (sub / "Dockerfile").write_text("FROM scratch\n", encoding="utf-8")
    (sub / "submission.yaml").write_text(
        f"team: tests\nsystem: echo\ncontact: t@example.org\ntrack: text-en-es\nkind: primary\n"
        f"description: echo service\nbuild: {{dockerfile: Dockerfile}}\ninterface: simuleval-agent-server\n"
        f"port: {port}\ncommand: {command}\n", encoding="utf-8")
    return sub


def _validate(sub: Path, cfg: Path, out: Path) -> tuple[str, list[dict]]:
    proc = validate(sub, cfg, out, "--no-docker")
    status = next(line for line in proc.stdout.splitlines() if line.startswith("status"))
    log = out / "echo" / "dev" / "instances.log"
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []
    return status, sorted(records, key=lambda r: r["index"])


def test_the_idle_window_opens_when_the_agent_server_has_started(tmp_path: Path) -> None:
    """The server loads for 9 s; the idle window (instance 3 s + idle 3 s) is 6 s: it is not counted while the
    server starts (`startup_timeout_s` bounds that), so the run is ok."""
    cfg = make_text_task(tmp_path, limits="limits: {instance_timeout_s: 3, idle_timeout_s: 3, startup_timeout_s: 60, "
                                          "total_timeout_s: 120}\n")
    status, records = _validate(_submission(tmp_path / "subs", "--listen-after", "9"), cfg, tmp_path / "out")
    assert status.split() == ["status", "ok"], status
    assert [r["status"] for r in records] == ["ok", "ok", "ok"]


def test_an_instance_cut_by_the_harness_is_marked_so(tmp_path: Path) -> None:
    """The server never answers its second instance; the run's total timeout (6 s) kills it. That instance is a
    `timeout` cut by the harness, not a protocol violation, and no later instance is logged as a refused
    connection."""
    cfg = make_text_task(tmp_path, limits="limits: {instance_timeout_s: 600, idle_timeout_s: 600, "
                                          "startup_timeout_s: 60, total_timeout_s: 6}\n")
    status, records = _validate(_submission(tmp_path / "subs", "--hang-on", "2"), cfg, tmp_path / "out")
    assert "timeout: total timeout (6 s) after 2/3 instances" in status, status
    assert [(r["index"], r["status"]) for r in records] == [(0, "ok"), (1, "timeout")], records
    assert records[1]["error"].startswith("cut by the harness (total timeout (6 s)): GET /output:"), records[1]
    assert not (tmp_path / "out" / "echo" / "dev" / ".harness-stop").exists()
