"""Hostile clients against the real server (`harness server` on loopback, raw `requests` and `websocket-client`).

Issue 13: the latency cheats (reset after reading, a native `start` after reading, writing a sentence never
read) are refused or scored at full latency; a hypothesis past `limits.max_hypothesis_chars` ends the instance
as `protocol_violation`, truncated and flagged; a `PUT /hypo` body is text whatever its Content-Type.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests
import websocket

from harness import layout
from harness.runlog import read_records
from harness.scoring import score_records
from harness.scoring.options import ScoringOptions
from tests.text_task import make_text_task

SOURCES = ["the cat sat on the mat", "hello world", "one two three four five"]
FULL = ["el gato se sentó en la alfombra", "hola mundo", "uno dos tres cuatro cinco"]


@contextmanager
def harness_server(cfg: Path, out: Path) -> Iterator[str]:
    """`harness server --exit-when-done` on a free loopback port; yields its URL, waits for it to stop."""
    proc = subprocess.Popen([sys.executable, "-m", "harness", "server", "--config", str(cfg), "--dataset", "dev",
                             "--port", "0", "--output", str(out), "--exit-when-done"],
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        assert "listening on" in line, line + proc.stderr.read()
        yield line.split("listening on ")[1].split()[0]
        assert proc.wait(60) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def records(out: Path) -> dict[int, dict]:
    return {r["index"]: r for r in read_records(layout.RunDir(out).instances_log)}


def read_all_2020(url: str, sent_id: int) -> int:
    """GET /src until `</s>`; the number of words served."""
    n = 0
    while requests.get(f"{url}/src", params={"sent_id": sent_id}, timeout=5).json()["segment"] != "</s>":
        n += 1
    return n


def put_hypo(url: str, sent_id: int, text: str, **kw) -> requests.Response:
    return requests.put(f"{url}/hypo", params={"sent_id": sent_id}, data=text.encode("utf-8"), timeout=30, **kw)


def step(url: str, index: int, **body) -> requests.Response:
    return requests.post(f"{url}/v1/instances/{index}/step", json=body, timeout=30)


def honest_rest(url: str, indices: list[int]) -> None:
    """Finish the other instances honestly (read everything, then write), so that the server completes."""
    for i in indices:
        read_all_2020(url, i)
        assert put_hypo(url, i, FULL[i] + " </s>").status_code == 200


def at_full_latency(rec: dict, source_length: int) -> None:
    assert rec["status"] == "ok" and rec["prediction"] == FULL[rec["index"]]
    assert rec["delays"] == [source_length] * len(rec["delays"])
    assert len(rec["elapsed"]) == len(rec["delays"]) and min(rec["elapsed"]) >= source_length


def test_2020_reset_after_reading_keeps_the_delays_served(tmp_path: Path) -> None:
    """Read a sentence whole, `POST /` (reset), write the translation without reading: full latency."""
    out = tmp_path / "out"
    with harness_server(make_text_task(tmp_path, SOURCES), out) as url:
        assert read_all_2020(url, 0) == 6
        assert requests.post(f"{url}/", timeout=5).status_code == 200
        assert put_hypo(url, 0, FULL[0] + " </s>").status_code == 200
        honest_rest(url, [1, 2])
    at_full_latency(records(out)[0], 6)


def test_2020_reset_twice_then_reading_again_still_counts_what_was_served(tmp_path: Path) -> None:
    """Delays count the source served so far across resets, even when the new attempt reads a little again."""
    out = tmp_path / "out"
    with harness_server(make_text_task(tmp_path, SOURCES), out) as url:
        read_all_2020(url, 2)
        requests.post(f"{url}/", timeout=5)
        requests.post(f"{url}/", timeout=5)
        requests.get(f"{url}/src", params={"sent_id": 2}, timeout=5)  # one word of the new attempt
        assert put_hypo(url, 2, FULL[2] + " </s>").status_code == 200
        honest_rest(url, [0, 1])
    at_full_latency(records(out)[2], 5)


def test_2020_writing_a_sentence_never_read_is_refused(tmp_path: Path) -> None:
    """`PUT /hypo?sent_id=1` with text before any `GET /src` of sentence 1: 409, logged with no output."""
    out = tmp_path / "out"
    with harness_server(make_text_task(tmp_path, SOURCES), out) as url:
        refused = put_hypo(url, 1, FULL[1])
        assert refused.status_code == 409 and "before any source was read" in refused.json()["error"]
        assert put_hypo(url, 1, "</s>").status_code == 409  # the instance is over
        honest_rest(url, [0, 2])
    rec = records(out)[1]
    assert rec["status"] == "protocol_violation" and rec["prediction"] == "" and rec["delays"] == []


def test_native_http_start_after_reading_is_scored_at_full_latency(tmp_path: Path) -> None:
    """Read everything natively, then one step with `start`, the whole text and `finished`."""
    out = tmp_path / "out"
    with harness_server(make_text_task(tmp_path, SOURCES), out) as url:
        r = step(url, 0, read=True, start=True)
        while not r.json()["source_finished"]:
            r = step(url, 0, read=True)
        r = step(url, 0, start=True, write=FULL[0], finished=True)
        assert r.status_code == 200 and r.json()["status"] == "ok"
        honest_rest(url, [1, 2])
    at_full_latency(records(out)[0], 6)


def test_native_http_write_to_an_instance_never_read_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with harness_server(make_text_task(tmp_path, SOURCES), out) as url:
        r = step(url, 1, start=True, write=FULL[1], finished=True)
        assert r.status_code == 409 and "before any source was read" in r.json()["error"]
        honest_rest(url, [0, 2])
    rec = records(out)[1]
    assert rec["status"] == "protocol_violation" and rec["prediction"] == ""


def test_native_websocket_cheats_are_refused_or_scored_at_full_latency(tmp_path: Path) -> None:
    """Over the stream: start-after-reading on instance 0, write-before-reading on instance 1."""
    out = tmp_path / "out"
    with harness_server(make_text_task(tmp_path, SOURCES), out) as url:
        ws = websocket.create_connection(url.replace("http://", "ws://") + "/v1/stream", timeout=10)
        try:
            ws.send(json.dumps({"index": 0, "read": True, "start": True}))
            while not json.loads(ws.recv())["source_finished"]:
                ws.send(json.dumps({"index": 0, "read": True}))
            ws.send(json.dumps({"index": 0, "start": True, "write": FULL[0], "finished": True}))
            assert json.loads(ws.recv())["status"] == "ok"
            ws.send(json.dumps({"index": 1, "start": True, "write": FULL[1], "finished": True}))
            answer = json.loads(ws.recv())
            assert answer["status"] == 409 and "before any source was read" in answer["error"]
        finally:
            ws.close()
        honest_rest(url, [2])
    recs = records(out)
    at_full_latency(recs[0], 6)
    assert recs[1]["status"] == "protocol_violation" and recs[1]["prediction"] == ""


def test_zero_elapsed_is_a_value_not_missing_timing() -> None:
    """A harness record whose elapsed times are all 0 keeps its `_CA` metrics (not silently dropped)."""
    rec = {"index": 0, "prediction": "hola mundo", "delays": [1, 2], "elapsed": [0.0, 0.0], "source_length": 2,
           "references": {"orig": "hola mundo"}, "status": "ok", "timing": {"wall_s": 0.0, "server_s": 0.0},
           "source": ["a.wav"]}  # speech: computation-aware metrics are speech-only
    scores = score_records([rec], ScoringOptions(bootstrap=0), latency_unit="ms")
    assert scores["AL_CA"]["score"] is not None and scores["AL_CA"]["score"] <= scores["AL"]["score"]


# -- output size ----------------------------------------------------------------------------------------------

CAP = 1000
LIMITS = f"limits: {{max_hypothesis_chars: {CAP}}}\n"


def test_megabytes_of_2020_hypothesis_end_the_instance_truncated(tmp_path: Path) -> None:
    """6 x 900 KB of `PUT /hypo`: the first is cut to the cap and ends the instance; the rest are refused."""
    out = tmp_path / "out"
    with harness_server(make_text_task(tmp_path, SOURCES, LIMITS), out) as url:
        requests.get(f"{url}/src", params={"sent_id": 0}, timeout=5)
        statuses = [put_hypo(url, 0, "palabra " * 112_500).status_code for _ in range(6)]
        assert statuses == [200] + [409] * 5
        honest_rest(url, [1, 2])
    rec = records(out)[0]
    assert rec["status"] == "protocol_violation" and rec["truncated"] is True
    assert CAP - 8 <= len(rec["prediction"]) <= CAP and rec["prediction"].startswith("palabra palabra")


def test_megabytes_over_the_websocket_end_the_instance_truncated(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with harness_server(make_text_task(tmp_path, SOURCES, LIMITS), out) as url:
        ws = websocket.create_connection(url.replace("http://", "ws://") + "/v1/stream", timeout=30)
        try:
            ws.send(json.dumps({"index": 0, "read": True, "start": True}))
            ws.recv()
            ws.send(json.dumps({"index": 0, "write": "x" * 900_000, "read": True}))
            answer = json.loads(ws.recv())
            assert answer["finished"] and answer["status"] == "protocol_violation"
        finally:
            ws.close()
        honest_rest(url, [1, 2])
    rec = records(out)[0]
    assert rec["truncated"] is True and rec["prediction"] == "x" * CAP


def test_revisions_share_one_budget(tmp_path: Path) -> None:
    """A re-translation client that revises forever: the total kept is bounded, the instance ends truncated."""
    out = tmp_path / "out"
    with harness_server(make_text_task(tmp_path, SOURCES, LIMITS), out) as url:
        step(url, 0, read=True, start=True)
        answers = [step(url, 0, write="y" * (CAP - 1), revise=True) for _ in range(60)]
        # 50 revisions of 999 characters fit the budget of 50 x 1000; the 51st is cut and ends the instance
        assert [a.status_code for a in answers] == [200] * 51 + [409] * 9
        assert answers[50].json()["status"] == "protocol_violation"
        honest_rest(url, [1, 2])
    rec = records(out)[0]
    kept = sum(len(r["text"]) for r in rec["revisions"])
    assert rec["status"] == "protocol_violation" and rec["truncated"] is True and kept <= 50 * CAP


# -- content types --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("ctype", ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x"])
def test_hypothesis_body_is_text_whatever_its_content_type(tmp_path: Path, ctype: str) -> None:
    """Thousands of `&` in a form-typed body are words of the hypothesis, not form fields (no 400)."""
    out = tmp_path / "out"
    text = "&".join(["a"] * 3000)
    with harness_server(make_text_task(tmp_path, SOURCES), out) as url:
        read_all_2020(url, 1)
        r = put_hypo(url, 1, text + " </s>", headers={"Content-Type": ctype})
        assert r.status_code == 200, r.text
        honest_rest(url, [0, 2])
    assert records(out)[1]["prediction"] == text
