"""The drivers' start-up probe and their verdicts on answers no interface allows (issue 27), beside
tests/test_drivers_hostile.py: "listening" only from a well-formed answer, the first answer that proves a protocol
violation ends the run at once (naming it) instead of being polled until the start-up limit, SimulStream's probe
never holds a processor of the server's pool, and nothing a participant sends is charged to the infrastructure.

The participant is `tests.agent_server_fakes.FakeAgentServer` on loopback; the driver is the real one, in-process,
on a real `Evaluation`. The start-up limit is long (60 s): a driver that polled a bad answer until the limit would
show in the probe counts, and nothing here waits on it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.drivers.base import AgentServerDriver
from harness.drivers.http import MAX_CUTS
from harness.drivers.simuleval_agent_server import SimulEvalAgentServer
from harness.server.evaluation import open_evaluation
from tests.agent_server_fakes import Act, FakeAgentServer, speech_task
from tests.driver_support import SIMULEVAL, SIMULSTREAM, run_driver, text_cfg

STARTUP_S = 60.0


@pytest.mark.parametrize(("act", "probes", "reason"), [
    (Act("garbage"), 1, "GET /: the answer is not JSON within bounds (malformed JSON"),
    (Act("huge"), 1, "GET /: answer larger than 1000000 bytes"),
    (Act("deep"), 1, "GET /: the answer is not JSON within bounds (arrays and objects nested deeper than 64 levels"),
    (Act("status", status=500), 1, "GET / answered 500"),
    (Act("nothing"), MAX_CUTS, f"GET /: the connection was closed before a complete answer ({MAX_CUTS} times"),
    (Act("half"), MAX_CUTS, "GET /: the connection was closed before a complete answer (7 of 100 bytes)"),
])
def test_a_bad_startup_answer_is_a_violation_at_once(tmp_path: Path, act: Act, probes: int, reason: str) -> None:
    with FakeAgentServer("simuleval", {"GET /": act}) as fake:
        report, recs = run_driver(text_cfg(tmp_path), tmp_path / "out", SIMULEVAL, fake.port, startup_s=STARTUP_S)
    assert report.state == "violation" and recs == {}, report
    assert report.reason.startswith(f"at start-up: {reason}"), report.reason
    assert fake.calls.count("GET /") == probes


def test_a_startup_answer_that_is_json_but_no_object_is_a_violation(tmp_path: Path) -> None:
    class ListInfo(FakeAgentServer):
        def _simuleval(self, endpoint: str, body: object) -> tuple[int, object]:
            return (200, ["not", "info"]) if endpoint == "GET /" else super()._simuleval(endpoint, body)

    with ListInfo("simuleval") as fake:
        report, _ = run_driver(text_cfg(tmp_path), tmp_path / "out", SIMULEVAL, fake.port, startup_s=STARTUP_S)
    assert report.state == "violation" and "GET /: expected the agent's information" in report.reason


def test_503_is_not_yet_and_a_cut_or_two_are_forgiven(tmp_path: Path) -> None:
    """A server still loading may say 503 or cut a connection while it restarts: polled on, then it runs."""
    hostile = {"GET /": Act("status", status=503, times=2)}
    with FakeAgentServer("simuleval", hostile) as fake:
        report, recs = run_driver(text_cfg(tmp_path), tmp_path / "out", SIMULEVAL, fake.port, startup_s=STARTUP_S)
    assert report.state == "done" and {r["status"] for r in recs.values()} == {"ok"}
    assert fake.calls.count("GET /") == 3
    with FakeAgentServer("simuleval", {"GET /": Act("nothing", times=MAX_CUTS - 1)}) as fake:
        report, recs = run_driver(text_cfg(tmp_path), tmp_path / "out2", SIMULEVAL, fake.port, startup_s=STARTUP_S)
    assert report.state == "done" and fake.calls.count("GET /") == MAX_CUTS


def test_the_simulstream_probe_clears_its_session_whatever_the_answer(tmp_path: Path) -> None:
    """A pool of one processor: the first `GET /speech_chunk_size` takes it and is cut (as SimulStream's server
    does when its handler raises). The probe clears its session anyway, so the retry and every recording get the
    processor; one probe session for every try. (Before: each try took another processor and kept it, so the pool
    ran dry and every later request was dropped.)"""
    cfg = speech_task(tmp_path, [1.0, 0.6])
    hostile = {"GET /speech_chunk_size": Act("nothing", times=1, keep=True)}
    with FakeAgentServer("simulstream", hostile, pool=1) as fake:
        report, recs = run_driver(cfg, tmp_path / "out", SIMULSTREAM, fake.port, startup_s=STARTUP_S)
    assert report.state == "done" and [recs[i]["status"] for i in (0, 1)] == ["ok", "ok"], report
    probe_ids = {b["session_id"] for m, p, b in fake.calls.seen[:4]}
    assert len(probe_ids) == 1 and fake.sessions == set()
    assert [f"{m} {p}" for m, p, _ in fake.calls.seen[:4]] == ["GET /speech_chunk_size", "POST /clear",
                                                               "GET /speech_chunk_size", "POST /clear"]


def test_a_simulstream_garbage_chunk_size_is_a_violation_and_its_session_is_cleared(tmp_path: Path) -> None:
    cfg = speech_task(tmp_path, [1.0])
    with FakeAgentServer("simulstream", {"GET /speech_chunk_size": Act("garbage", keep=True)}, pool=2) as fake:
        report, recs = run_driver(cfg, tmp_path / "out", SIMULSTREAM, fake.port, startup_s=STARTUP_S)
    assert report.state == "violation" and recs == {}
    assert "GET /speech_chunk_size: the answer is not JSON" in report.reason
    assert fake.calls.count("GET /speech_chunk_size") == 1 and fake.sessions == set()


@pytest.mark.parametrize(("protocol", "endpoint", "kind"), [
    ("simuleval", "GET /output", "deep"), ("simuleval", "GET /output", "bigint"),
    ("simulstream", "POST /process_chunk", "deep"), ("simulstream", "POST /end_of_stream", "bigint"),
])
def test_an_answer_out_of_bounds_is_that_instances_violation(tmp_path: Path, protocol: str, endpoint: str,
                                                            kind: str) -> None:
    """JSON nested 100,000 deep (a RecursionError in `json.loads`) or a 5,000-digit number (a ValueError) ends
    that instance only, as `protocol_violation` naming the endpoint; the run goes on (before: the driver died and
    the run was an `infra_error`, retried)."""
    cfg = text_cfg(tmp_path) if protocol == "simuleval" else speech_task(tmp_path, [1.0, 0.6])
    with FakeAgentServer(protocol, {endpoint: Act(kind, times=1)}) as fake:
        report, recs = run_driver(cfg, tmp_path / "out", SIMULEVAL if protocol == "simuleval" else SIMULSTREAM,
                                  fake.port)
    assert report.state == "done"
    assert recs[0]["status"] == "protocol_violation"
    assert recs[0]["error"].startswith(f"{endpoint}: the answer is not JSON within bounds"), recs[0]["error"]
    assert recs[1]["status"] == "ok"


class _Raises(SimulEvalAgentServer):
    """A driver whose work on instance 0 raises `error` (as a bug an answer provokes, or a failing disk, would)."""

    error: BaseException = TypeError("unhashable type: 'list'")

    def run_instance(self, index: int, deadline: float) -> None:
        if index == 0:
            raise self.error
        super().run_instance(index, deadline)


def _run_raising(tmp_path: Path, error: BaseException, port: int) -> tuple[str, dict[int, dict]]:
    tmp_path.mkdir()
    ev = open_evaluation(text_cfg(tmp_path), "dev", tmp_path / "out")
    try:
        driver: AgentServerDriver = type("R", (_Raises,), {"error": error})(ev, "127.0.0.1", port)
        try:
            state = driver.run(STARTUP_S).state
        except OSError:
            state = "raised OSError"
        finally:
            driver.http.close()
        ev.writer.sync()
        return state, {r["index"]: r for r in ev.records()}
    finally:
        ev.close()


def test_a_driver_exception_is_the_instances_violation_unless_the_machinery_failed(tmp_path: Path) -> None:
    with FakeAgentServer("simuleval") as fake:
        state, recs = _run_raising(tmp_path / "a", TypeError("unhashable type: 'list'"), fake.port)
    assert state == "done" and recs[0]["status"] == "protocol_violation"
    assert recs[0]["error"] == "the driver could not use the participant's answer (TypeError: unhashable type: 'list')"
    assert [recs[i]["status"] for i in (1, 2)] == ["ok", "ok"]
    with FakeAgentServer("simuleval") as fake:
        state, recs = _run_raising(tmp_path / "b", OSError(28, "No space left on device"), fake.port)
    assert state == "raised OSError" and recs == {}  # `drive` reports it as `failed`: the infrastructure's error
