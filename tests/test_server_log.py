"""instances.log writer: durable appends, resume after an interrupted write, refusal to clobber."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests

from harness.client.connection import InProcessConnection
from harness.errors import HarnessError
from harness.protocol import StepRequest
from harness.run.joint import loopback_server
from harness.runlog import LogWriter, scan
from harness.server.evaluation import open_evaluation
from tests.text_task import make_text_task


def _finish(ev, index: int, text: str) -> None:
    conn = InProcessConnection(ev)
    conn.step(index, StepRequest(read=True, start=True))
    conn.step(index, StepRequest(write=text, finished=True))


def test_resume_drops_a_torn_last_line_and_redoes_that_instance(tmp_path: Path) -> None:
    cfg = make_text_task(tmp_path)
    ev = open_evaluation(cfg, "dev", tmp_path / "out")
    _finish(ev, 0, "el")
    _finish(ev, 1, "hola")
    ev.close()
    log = tmp_path / "out" / "instances.log"
    full = log.read_bytes()
    log.write_bytes(full[: len(full) - 20])  # the second record is half-written
    ev = open_evaluation(cfg, "dev", tmp_path / "out", resume=True)
    assert ev.writer.torn and ev.pending() == [1, 2]
    _finish(ev, 1, "hola")
    _finish(ev, 2, "uno")
    ev.close()
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["index"] for r in records] == [0, 1, 2]
    assert records[1]["prediction"] == "hola"


def test_one_torn_line_rule_a_garbage_line_is_an_error_wherever_it_is(tmp_path: Path) -> None:
    log = tmp_path / "instances.log"
    good = json.dumps({"index": 0, "prediction": "a"}) + "\n"
    log.write_text(good + json.dumps({"index": 1, "prediction": "b"}))  # complete JSON, but no newline: torn
    found = scan(log)
    assert list(found.statuses) == [0] and found.valid_bytes == len(good) and found.torn
    log.write_text(good + '{"index": 1, "predic')
    found = scan(log)
    assert list(found.statuses) == [0] and found.torn
    log.write_text(good + "{not json\n")  # a newline was written: not an interrupted write
    with pytest.raises(HarnessError, match="line|:2: not a JSON line"):
        scan(log)
    log.write_bytes(good.encode() + b"\0" * 64)  # NUL bytes are garbage, not a torn record
    with pytest.raises(HarnessError, match=":2: not a JSON line"):
        scan(log)
    log.write_text(good + "{not json\n" + good)
    with pytest.raises(HarnessError, match=":2: not a JSON line"):
        scan(log)


def test_existing_log_needs_resume_or_overwrite(tmp_path: Path) -> None:
    (tmp_path / "instances.log").write_text(json.dumps({"index": 0}) + "\n")
    with pytest.raises(HarnessError, match="--resume"):
        LogWriter(tmp_path)
    w = LogWriter(tmp_path, overwrite=True)
    w.close()
    assert (tmp_path / "instances.log").read_text() == ""


def _lines(path: Path) -> list[dict]:
    """What another process opening the log reads now (no sync asked)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_record_is_in_the_file_when_write_returns(tmp_path: Path) -> None:
    w = LogWriter(tmp_path)
    try:
        for i in range(50):
            w.write({"index": i, "prediction": f"p{i}"})
            assert [r["index"] for r in _lines(w.path)] == list(range(i + 1))  # before any fsync was waited for
        w.sync()
    finally:
        w.close()
    assert [r["prediction"] for r in _lines(w.path)] == [f"p{i}" for i in range(50)]


def test_the_server_answers_an_instances_end_only_once_its_record_is_readable(tmp_path: Path) -> None:
    """The 2020 client's last `PUT /hypo </s>` of each sentence: when its answer arrives, instances.log already
    holds that sentence (the orchestrator reads the log as soon as the client exits)."""
    ev = open_evaluation(make_text_task(tmp_path), "dev", tmp_path / "out")
    try:
        with loopback_server(ev) as url:
            n = requests.get(f"{url}/", timeout=5).json()["num_sentences"]
            for sent_id in range(n):
                while (word := requests.get(f"{url}/src", params={"sent_id": sent_id}, timeout=5).json()["segment"]) \
                        != "</s>":
                    requests.put(f"{url}/hypo", params={"sent_id": sent_id}, data=word.encode(), timeout=5)
                end = requests.put(f"{url}/hypo", params={"sent_id": sent_id}, data=b"</s>", timeout=5)
                assert end.ok
                assert [r["index"] for r in _lines(ev.writer.path)] == list(range(sent_id + 1))
    finally:
        ev.close()
