"""The drivers against misbehaving agent servers (issue 11), beside tests/test_drivers.py: a slow answer is the
participant's time, an answer slower than the idle timeout ends only its instance, a server that is not an agent
service is not ready, and SimulStream's HTTP/1.0 server (close-delimited bodies, no answer at all on errors).

The participant is `tests.agent_server_fakes.FakeAgentServer` on loopback (raw HTTP over sockets); the driver is
the real one, run in-process on a real `Evaluation` and its run log. Waits are on events the test controls or on
the driver's own deadlines; nothing depends on how fast this machine is.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from harness import layout
from harness.runlog import read_records
from tests.agent_server_fakes import Act, FakeAgentServer, speech_task
from tests.driver_support import SIMULEVAL, SIMULSTREAM, run_driver, text_cfg


def test_a_slow_answer_is_the_participants_time(tmp_path: Path) -> None:
    """The participant holds its first output until the test releases it, at least 300 ms after the request came
    in: that wait is in the computation-aware elapsed time of the word it wrote."""
    with FakeAgentServer("simuleval", {"GET /output": Act("wait")}) as fake:

        def release_later() -> None:
            fake.waiting.wait()
            time.sleep(0.3)  # a lower bound on the participant's time, whatever the machine's speed
            fake.release.set()

        releaser = threading.Thread(target=release_later, daemon=True)
        releaser.start()
        report, recs = run_driver(text_cfg(tmp_path), tmp_path / "out", SIMULEVAL, fake.port)
        releaser.join()
    assert report.state == "done" and {r["status"] for r in recs.values()} == {"ok"}
    first = recs[0]
    assert first["elapsed"][0] - first["delays"][0] >= 300.0


def test_a_server_that_is_not_an_agent_service_is_a_violation_at_once(tmp_path: Path) -> None:
    """A 404 at start-up proves the server is not SimulEval's agent service: one probe, no polling until the
    start-up limit (issue 27)."""
    with FakeAgentServer("simuleval", {"GET /": Act("status", status=404)}) as fake:
        report, recs = run_driver(text_cfg(tmp_path), tmp_path / "out", SIMULEVAL, fake.port, startup_s=600.0)
    assert report.state == "violation" and recs == {}
    assert report.reason == "at start-up: GET / answered 404"
    assert fake.calls.count("GET /") == 1


def test_simulstream_close_delimited_answers_are_read_and_timed(tmp_path: Path) -> None:
    """SimulStream's server answers HTTP/1.0 without Content-Length and closes: the driver reads each answer to the
    close, one word per chunk (whose string has no leading space), with delays at the chunk ends."""
    cfg = speech_task(tmp_path, [1.2, 0.7])
    with FakeAgentServer("simulstream", chunk_s=0.5) as fake:
        report, recs = run_driver(cfg, tmp_path / "out", SIMULSTREAM, fake.port)
    assert report.state == "done"
    assert recs[0]["status"] == "ok" and recs[0]["prediction"] == "w1 w2 w3"
    assert recs[0]["delays"] == [500.0, 1000.0, 1200.0]
    assert recs[1]["prediction"] == "w1 w2" and recs[1]["delays"] == [500.0, 700.0]
    assert fake.calls.count("POST /clear") >= 2  # the probe's session and each recording's session are cleared


def test_simulstream_deleted_tokens_are_revisions_of_the_participants_own_text(tmp_path: Path) -> None:
    """Each chunk's string lacks the space before it (SentencePiece): the text is the participant's own
    `tokens_to_string` of the tokens, and an output that deletes tokens is a revision at that chunk's delay."""
    cfg = speech_task(tmp_path, [1.2])
    with FakeAgentServer("simulstream", chunk_s=0.5, revise=True) as fake:
        report, recs = run_driver(cfg, tmp_path / "out", SIMULSTREAM, fake.port)
    assert report.state == "done"
    rec = recs[0]
    assert rec["status"] == "ok" and rec["prediction"] == "w1r w2r w3"
    assert [(r["delay"], r["text"]) for r in rec["revisions"]] == [(500.0, "w1"), (1000.0, "w1r w2"),
                                                                   (1200.0, "w1r w2r w3")]
    assert rec["delays"] == [1000.0, 1200.0, 1200.0]


@pytest.mark.parametrize(("act", "endpoint", "reason"), [
    (Act("nothing"), "POST /process_chunk", "POST /process_chunk: the connection was closed before a complete "
                                            "answer"),
    (Act("garbage"), "POST /end_of_stream", "POST /end_of_stream: the answer is not JSON"),
    (Act("huge"), "POST /process_chunk", "POST /process_chunk: answer larger than"),
])
def test_simulstream_faults_are_protocol_violations_naming_the_endpoint(tmp_path: Path, act: Act, endpoint: str,
                                                                        reason: str) -> None:
    cfg = speech_task(tmp_path, [1.0])
    with FakeAgentServer("simulstream", {endpoint: act}) as fake:
        report, recs = run_driver(cfg, tmp_path / "out", SIMULSTREAM, fake.port)
    assert report.state == "done"
    assert recs[0]["status"] == "protocol_violation" and recs[0]["error"].startswith(reason), recs[0]["error"]


def test_an_answer_slower_than_the_idle_timeout_ends_that_instance_only(tmp_path: Path) -> None:
    """`harness server --drive`: an answer that takes longer than idle_timeout_s ends the instance as `timeout`, as
    a native client computing that long without a request does (the server's idle check or the driver's own bound
    on one answer, whichever comes first); the late answer is dropped and the driver goes on with the next
    instance. The participant answers only once that timeout is in the log."""
    cfg = text_cfg(tmp_path, idle_timeout_s=1, instance_timeout_s=600)
    out = tmp_path / "out"
    log = layout.RunDir(out).instances_log
    with FakeAgentServer("simuleval", {"GET /output": Act("wait", times=1)}) as fake:

        def release_when_logged() -> None:
            fake.waiting.wait()
            while not (log.exists() and log.stat().st_size):  # the condition: instance 0 is in the log
                time.sleep(0.05)
            fake.release.set()

        releaser = threading.Thread(target=release_when_logged, daemon=True)
        releaser.start()
        server = subprocess.run([sys.executable, "-m", "harness", "server", "--config", str(cfg), "--dataset", "dev",
                                 "--port", "0", "--output", str(out), "--drive", SIMULEVAL,
                                 "--participant", f"127.0.0.1:{fake.port}", "--startup-timeout", "30"],
                                capture_output=True, text=True, timeout=300)
        releaser.join()
    assert server.returncode == 0, server.stderr
    report = json.loads(layout.RunDir(out).driver_report.read_text(encoding="utf-8"))
    assert report["state"] == "done", report
    recs = {r["index"]: r for r in read_records(log)}
    # whichever saw it first: the server's idle check ("no request for 1 s") or the driver's bound on one answer
    assert recs[0]["status"] == "timeout" and " 1 s" in recs[0]["error"], recs[0]["error"]
    assert [recs[i]["status"] for i in (1, 2)] == ["ok", "ok"]


@pytest.mark.parametrize(("protocol", "endpoint"),
                         [("simuleval", "GET /output"), ("simulstream", "POST /process_chunk")])
def test_a_request_answered_by_a_close_is_not_sent_again(tmp_path: Path, protocol: str, endpoint: str) -> None:
    """The participant closes the connection once without answering: that instance is a protocol violation, and the
    request is not repeated (a repeat would run the agent's step, or feed it the chunk, a second time)."""
    if protocol == "simuleval":
        cfg = text_cfg(tmp_path)
    else:
        cfg = speech_task(tmp_path, [1.2, 0.7])
    with FakeAgentServer(protocol, {endpoint: Act("nothing", times=1)}, chunk_s=0.5) as fake:
        report, recs = run_driver(cfg, tmp_path / "out", SIMULEVAL if protocol == "simuleval" else SIMULSTREAM,
                                  fake.port)
    assert report.state == "done"
    assert recs[0]["status"] == "protocol_violation"
    assert recs[0]["error"] == f"{endpoint}: the connection was closed before a complete answer"
    assert recs[1]["status"] == "ok"
    first = [i for i, (m, p, _) in enumerate(fake.calls.seen) if f"{m} {p}" == endpoint][0]
    assert fake.calls.seen[first + 1][:2] != tuple(endpoint.split(" ")), "the request was sent again"


def test_an_answer_trickled_byte_by_byte_times_out_at_the_instance_limit(tmp_path: Path) -> None:
    """Every read gets a byte well within any socket timeout, but the answer never completes: the instance ends as
    `timeout` at its limit (the driver's watchdog), and the driver goes on."""
    outcome: dict[str, Any] = {}
    with FakeAgentServer("simuleval", {"GET /output": Act("trickle", times=1)}) as fake:
        cfg = text_cfg(tmp_path, instance_timeout_s=1)

        def work() -> None:
            outcome["report"], outcome["recs"] = run_driver(cfg, tmp_path / "out", SIMULEVAL, fake.port)

        worker = threading.Thread(target=work, daemon=True)
        worker.start()
        worker.join(120)  # only bounds a hang (the failure this test is about); a pass takes about a second
        assert not worker.is_alive(), "the driver kept reading a trickled answer"
    recs = outcome["recs"]
    assert recs[0]["status"] == "timeout" and "GET /output" in recs[0]["error"]
    assert [recs[i]["status"] for i in (1, 2)] == ["ok", "ok"]


def test_simulstream_detokenizer_time_is_the_participants(tmp_path: Path) -> None:
    """The text recorded is the participant's own `tokens_to_string` answer, so the time it takes is charged: a
    server that answers `process_chunk` at once and holds `tokens_to_string` until the test releases it (at least
    300 ms after the request came in) has that wait in the computation-aware time of the word it shaped (issue 32,
    item 13). The first chunk's string needs no detokenizer; the second's (no leading space) does."""
    cfg = speech_task(tmp_path, [1.2])
    with FakeAgentServer("simulstream", {"GET /tokens_to_string": Act("wait")}, chunk_s=0.5) as fake:

        def release_later() -> None:
            fake.waiting.wait()
            time.sleep(0.3)  # a lower bound on the participant's time, whatever the machine's speed
            fake.release.set()

        releaser = threading.Thread(target=release_later, daemon=True)
        releaser.start()
        report, recs = run_driver(cfg, tmp_path / "out", SIMULSTREAM, fake.port)
        releaser.join()
    assert report.state == "done"
    rec = recs[0]
    assert rec["status"] == "ok" and rec["prediction"] == "w1 w2 w3"
    assert fake.calls.count("GET /tokens_to_string") >= 1
    assert rec["elapsed"][1] - rec["delays"][1] >= 300.0, rec
