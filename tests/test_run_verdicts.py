"""One rule for a run's verdict: timeouts hold in-process, failed instances make the run fail, empty output is
flagged, and the first traceback of a kind is shown once (the agent's frames, not the harness's)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from harness import layout
from harness.client.agent import ReadAction, TextAgent, WriteAction
from harness.run.joint import joint_run
from tests.text_task import make_task

GATE = threading.Event()


@pytest.fixture
def gate():
    GATE.clear()
    yield GATE
    GATE.set()  # lets the abandoned agent thread return at teardown


class BlocksOnInstanceOne(TextAgent):
    """Echo, except that its policy blocks on instance 1 until the test lets it go."""

    def policy(self, states):
        if states.instance_id == 1:
            GATE.wait()
        if not states.source_finished:
            return ReadAction()
        return WriteAction(" ".join(states.source), finished=True)


def _records(out: Path) -> dict[int, dict]:
    lines = layout.RunDir(out).instances_log.read_text(encoding="utf-8").splitlines()
    return {r["index"]: r for r in map(json.loads, lines)}


@pytest.mark.parametrize("transport", ["inprocess", "http"])
def test_agent_blocked_in_policy_ends_as_timeout(tmp_path: Path, gate, transport: str) -> None:
    cfg = make_task(tmp_path)
    cfg.write_text(cfg.read_text() + "limits: {idle_timeout_s: 0.2, instance_timeout_s: 30}\n", encoding="utf-8")
    out = tmp_path / "run"
    summary, _ = joint_run(cfg, "dev", out, BlocksOnInstanceOne(), transport=transport)
    assert summary.outcome.status == "timeout"
    assert "instance 1" in summary.outcome.reason
    recs = _records(out)
    assert recs[0]["status"] == "ok"
    assert recs[1]["status"] == "timeout" and recs[1]["error"] == "no request for 0.2 s"  # the server's message
    assert 2 not in recs  # the run stopped, as a container would be stopped


AGENTS = {
    "raises_on_2": '''
from harness.client.agent import TextAgent, ReadAction, WriteAction

class RaisesOnTwo(TextAgent):
    def policy(self, states):
        if states.instance_id == 2:
            raise RuntimeError("model exploded")
        if not states.source_finished:
            return ReadAction()
        return WriteAction(" ".join(states.source), finished=True)
''',
    "raises_on_long": '''
from harness.client.agent import TextAgent, ReadAction, WriteAction

class RaisesOnLong(TextAgent):
    def policy(self, states):
        if len(states.source) >= 3:
            raise RuntimeError("model exploded")
        return ReadAction()
''',
    "returns_none": '''
from harness.client.agent import TextAgent

class ReturnsNone(TextAgent):
    def policy(self, states):
        return None
''',
    "writes_nothing": '''
from harness.client.agent import TextAgent, ReadAction, WriteAction

class Silent(TextAgent):
    def policy(self, states):
        if not states.source_finished:
            return ReadAction()
        return WriteAction("", finished=True)
''',
}


def _harness_run(tmp_path: Path, name: str) -> subprocess.CompletedProcess:
    cfg = make_task(tmp_path)
    agent = tmp_path / f"{name}.py"
    agent.write_text(AGENTS[name], encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "harness", "run", "--config", str(cfg), "--dataset", "dev",
                           "--output", str(tmp_path / "run"), "--agent", str(agent)],
                          capture_output=True, text=True, timeout=120)


def test_agent_raising_on_one_instance_is_a_crash_as_under_docker(tmp_path: Path) -> None:
    proc = _harness_run(tmp_path, "raises_on_2")
    assert proc.returncode == 1
    assert "harness run: status crash" in proc.stderr
    assert "RuntimeError: model exploded" in proc.stderr
    assert "harness/client" not in proc.stderr  # the agent's frames only
    assert "raises_on_2.py" in proc.stderr


def test_an_agent_raising_in_most_instances_is_a_crash_named_for_it(tmp_path: Path) -> None:
    """Issue 32, item 5: an agent that raises on every long instance and keeps reading on the one short instance is
    a crash saying that the agent failed, in how many instances, where it raised; not a protocol violation, and no
    "[partial output]" where nothing was written."""
    proc = _harness_run(tmp_path, "raises_on_long")
    assert proc.returncode == 1, proc.stderr
    status = next(line for line in proc.stderr.splitlines() if line.startswith("harness run: status"))
    assert "status crash: the agent failed in 3 of 3 instances" in status, status
    assert "instance 0: error: RuntimeError: model exploded (raised at raises_on_long.py, line 7, in policy) " \
           "(and 1 more like it)" in status, status
    assert "instance 1: error: the agent kept reading after the end of the source" in status, status
    assert "protocol_violation" not in status and "[partial output]" not in status


def test_partial_output_is_named_where_some_output_exists(tmp_path: Path) -> None:
    proc = _harness_run(tmp_path, "raises_on_2")
    status = next(line for line in proc.stderr.splitlines() if line.startswith("harness run: status"))
    assert "crash: the agent failed in 1 of 3 instances" in status and status.endswith("[partial output]"), status


def test_policy_returning_none_one_traceback_and_a_count(tmp_path: Path) -> None:
    proc = _harness_run(tmp_path, "returns_none")
    assert proc.returncode == 1
    assert proc.stderr.count("agent failed: TypeError: ReturnsNone.policy returned None") == 1
    assert "Traceback" not in proc.stderr  # the failure is in no frame of the agent: the one line says it all
    assert f"{len(SOURCES_DEV) - 1} more instance(s) failed the same way (TypeError:" in proc.stderr


def test_empty_output_is_flagged(tmp_path: Path) -> None:
    proc = _harness_run(tmp_path, "writes_nothing")
    assert f"warning: {len(SOURCES_DEV)} of {len(SOURCES_DEV)} instance(s) have an empty output" in proc.stderr


SOURCES_DEV = ["el gato negro", "un perro", "la casa azul grande"]
