"""SimulEval 1.1.4's own agent service on a speech track, driven by `harness server --drive
simuleval-agent-server` (issue 11): the same predictions and delays as the same agent through the harness client
(harness/client/simuleval_adapter.py), which follows SimulEval's own evaluator, including its end of a speech
instance right after the step that follows the last segment."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import pytest

from harness.layout import RunDir
from harness.runlog import read_records
from tests.agent_server_fakes import speech_task
from tests.templates_util import harness, joint_run

pytest.importorskip("simuleval")

AGENT = Path(__file__).resolve().parent / "agents" / "simuleval_speech_agent.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_simuleval_speech_service_equals_the_native_adapter(tmp_path: Path) -> None:
    cfg = speech_task(tmp_path, [2.5, 1.2, 3.0], segment_ms=320)
    port = free_port()
    log = open(tmp_path / "service.log", "wb")  # noqa: SIM115
    service = subprocess.Popen(["simuleval", "--standalone", "--remote-port", str(port), "--agent", str(AGENT)],
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        driven = subprocess.run(harness("server", "--config", str(cfg), "--dataset", "dev", "--port", "0",
                                        "--output", str(tmp_path / "driven"), "--drive", "simuleval-agent-server",
                                        "--participant", f"127.0.0.1:{port}", "--startup-timeout", "120"),
                                capture_output=True, text=True, timeout=600)
    finally:
        service.kill()
        service.wait(30)
        log.close()
    assert driven.returncode == 0, driven.stderr
    assert json.loads(RunDir(tmp_path / "driven").driver_report.read_text())["state"] == "done"
    joint_run(cfg, "speech-en-es", AGENT, tmp_path / "native")
    got = {r["index"]: r for r in read_records(RunDir(tmp_path / "driven").instances_log)}
    ref = {r["index"]: r for r in read_records(RunDir(tmp_path / "native").instances_log)}
    assert sorted(got) == sorted(ref) == [0, 1, 2]
    for i in ref:
        assert ref[i]["status"] == got[i]["status"] == "ok"
        assert (got[i]["prediction"], got[i]["delays"]) == (ref[i]["prediction"], ref[i]["delays"]), i
