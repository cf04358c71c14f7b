"""Server-side clock: computation-aware elapsed counts the client's time only; idle and total timeouts."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

import pytest

from harness.client.connection import HTTPConnection, InProcessConnection, ServerRefused
from harness.protocol import StepRequest
from harness.run.joint import loopback_server
from harness.server.evaluation import open_evaluation
from tests.text_task import make_text_task


def test_elapsed_is_delay_plus_client_time_without_server_time(tmp_path: Path) -> None:
    """The client's time between answers is charged, bounded by what this test itself measures around its calls (no
    bound that the machine's load could break)."""
    ev = open_evaluation(make_text_task(tmp_path), "dev", tmp_path / "out")
    with loopback_server(ev) as url:
        conn = HTTPConnection(url)
        t0 = time.monotonic()
        conn.step(1, StepRequest(read=True, start=True))
        t1 = time.monotonic()
        time.sleep(0.10)  # the "agent" computes 100 ms
        t2 = time.monotonic()
        conn.step(1, StepRequest(write="hola", read=True))
        t3 = time.monotonic()
        time.sleep(0.05)
        t4 = time.monotonic()
        conn.step(1, StepRequest(write="mundo", finished=True))
        t5 = time.monotonic()
        conn.close()
    ev.writer.sync()
    rec = json.loads(ev.writer.path.read_text().splitlines()[0])
    ev.close()
    assert rec["delays"] == [1, 2]
    client_ms = [e - d for e, d in zip(rec["elapsed"], rec["delays"], strict=True)]
    # at least the time between receiving an answer and sending the next request; at most the whole exchange
    assert (t2 - t1) * 1000 <= client_ms[0] <= (t3 - t0) * 1000
    assert ((t2 - t1) + (t4 - t3)) * 1000 <= client_ms[1] <= (t5 - t0) * 1000
    assert rec["timing"]["wall_s"] >= 0.15


def test_server_processing_is_not_charged_to_the_client(tmp_path: Path) -> None:
    """A controlled clock: time spent between a request's arrival and its answer never enters elapsed."""
    ev = open_evaluation(make_text_task(tmp_path), "dev", tmp_path / "out")
    now = [100.0]
    ev.clock = lambda: now[0]
    s = ev.begin(0, StepRequest(read=True, start=True), now[0])
    ev.apply(s, StepRequest(read=True, start=True))
    now[0] += 5.0  # the server itself is slow
    ev.depart(s, now[0])
    now[0] += 0.2  # the client thinks 200 ms
    req = StepRequest(write="el", read=True)
    s = ev.begin(0, req, now[0])
    ev.apply(s, req)
    now[0] += 3.0
    ev.depart(s, now[0])
    now[0] += 0.3
    req = StepRequest(write="gato", finished=True)
    s = ev.begin(0, req, now[0])
    ev.apply(s, req)
    ev.depart(s, now[0])
    rec = ev.records()[0]
    ev.close()
    assert rec["delays"] == [1, 2]
    assert rec["elapsed"] == pytest.approx([1 + 200.0, 2 + 500.0])
    assert rec["timing"]["server_s"] == pytest.approx(8.0)
    assert rec["timing"]["client_s"] == pytest.approx(0.5)  # the participant's compute time (run/compute.py)


def test_idle_timeout_ends_the_instance_with_status_timeout(tmp_path: Path) -> None:
    cfg = make_text_task(tmp_path, limits="limits: {idle_timeout_s: 0.3, instance_timeout_s: 30}\n")
    ev = open_evaluation(cfg, "dev", tmp_path / "out")
    with loopback_server(ev) as url:
        conn = HTTPConnection(url)
        conn.step(0, StepRequest(read=True, start=True))
        conn.step(0, StepRequest(write="el", read=True))
        time.sleep(0.5)
        with pytest.raises(ServerRefused) as err:
            conn.step(0, StepRequest(write="gato", read=True))
        assert err.value.status == 409 and "timeout" in err.value.reason
        conn.close()
    rec = ev.records()[0]
    ev.close()
    assert rec["status"] == "timeout" and rec["prediction"] == "el" and "no request" in rec["error"]


def test_total_instance_timeout_and_periodic_check(tmp_path: Path) -> None:
    cfg = make_text_task(tmp_path, limits="limits: {idle_timeout_s: 30, instance_timeout_s: 0.2}\n")
    ev = open_evaluation(cfg, "dev", tmp_path / "out")
    conn = InProcessConnection(ev)
    conn.step(2, StepRequest(read=True, start=True))
    time.sleep(0.3)
    ev.check_timeouts()  # what the server's periodic callback calls
    assert 2 not in ev.pending()
    rec = ev.records()[0]
    ev.close()
    assert rec["index"] == 2 and rec["status"] == "timeout" and "longer than" in rec["error"]


def test_the_server_notes_the_participants_first_request_not_its_own_probes(tmp_path: Path) -> None:
    """run.json's `first_request` (the end of the start-up time): the harness's /health and /gate requests do not
    count, the participant's first request does, and only the first one; a new server of the folder starts over."""
    ev = open_evaluation(make_text_task(tmp_path), "dev", tmp_path / "out")
    meta = tmp_path / "out" / "run.json"
    with loopback_server(ev) as url:
        conn = HTTPConnection(url)
        for path in ("/health", "/gate"):  # the harness's own readiness probe and start gate
            with urllib.request.urlopen(url + path, timeout=30) as answer:
                assert answer.status == 200
        assert "first_request" not in json.loads(meta.read_text())
        before = time.time()
        conn.info()
        first = json.loads(meta.read_text())["first_request"]
        assert first["by"] == "request" and before - 1e-3 <= first["at"] <= time.time()
        conn.step(0, StepRequest(read=True, start=True))
        conn.close()
    assert json.loads(meta.read_text())["first_request"] == first
    ev.close()
    ev = open_evaluation(make_text_task(tmp_path), "dev", tmp_path / "out", resume=True)
    assert "first_request" not in json.loads(meta.read_text())
    ev.close()
