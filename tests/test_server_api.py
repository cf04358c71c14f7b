"""Native and 2020 compatibility APIs of the evaluation server, over real HTTP and WebSocket on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests
from sacrebleu.metrics import BLEU, CHRF

from harness.client.connection import HTTPConnection, ServerRefused, WebSocketConnection
from harness.protocol import StepRequest
from harness.run.joint import loopback_server
from harness.scoring import score_path
from harness.server.evaluation import open_evaluation
from tests.text_task import REFS, SOURCES, make_text_task


@pytest.fixture
def served(tmp_path: Path):
    ev = open_evaluation(make_text_task(tmp_path), "dev", tmp_path / "out")
    ev.scorer = score_path  # what `harness server` injects: GET /result scores the log file
    with loopback_server(ev) as url:
        yield url, ev
    ev.close()


def log_lines(ev) -> list[dict]:
    ev.writer.sync()
    return [json.loads(line) for line in ev.writer.path.read_text(encoding="utf-8").splitlines()]


def test_health_and_info_reveal_no_lengths_or_references(served) -> None:
    url, _ = served
    assert requests.get(f"{url}/health", timeout=5).json()["status"] == "ok"
    info = requests.get(f"{url}/v1/info", timeout=5).json()
    assert info["num_instances"] == 3 and info["pending"] == [0, 1, 2] and info["modality"] == "text"
    text = json.dumps(info)
    assert "gato" not in text and "source_length" not in text


def test_native_http_step_reads_words_then_end_of_stream(served) -> None:
    url, ev = served
    conn = HTTPConnection(url)
    words, finished_flags = [], []
    r = conn.step(1, StepRequest(read=True, start=True))
    words.append(r.segment)
    finished_flags.append(r.source_finished)
    r = conn.step(1, StepRequest(write="hola", read=True))
    words.append(r.segment)
    finished_flags.append(r.source_finished)
    assert words == ["hello", "world"] and finished_flags == [False, True]  # the last word says so, not earlier
    past = conn.step(1, StepRequest(read=True))
    assert past.segment is None and past.source_finished and not past.finished
    done = conn.step(1, StepRequest(write="mundo", finished=True))
    assert done.finished and done.status == "ok"
    with pytest.raises(ServerRefused) as err:
        conn.step(1, StepRequest(write="more"))
    assert err.value.status == 409
    rec = log_lines(ev)[0]
    assert rec["prediction"] == "hola mundo" and rec["delays"] == [1, 2]
    assert rec["references"] == {"orig": "hola mundo", "mono": "hola"} and rec["reference"] == "hola mundo"
    assert rec["source_length"] == 2 and rec["status"] == "ok"
    assert all(e >= d for e, d in zip(rec["elapsed"], rec["delays"], strict=True))
    conn.close()


def test_websocket_stream_and_errors_keep_the_stream_open(served) -> None:
    url, ev = served
    ws = WebSocketConnection(url)
    with pytest.raises(ServerRefused) as err:
        ws.step(99, StepRequest(read=True))
    assert err.value.status == 404
    r = ws.step(0, StepRequest(read=True, start=True))
    assert r.segment == "the"
    r = ws.step(0, StepRequest(write="el", revise=True, read=True))
    r = ws.step(0, StepRequest(write="el gato", revise=True, finished=True))
    assert r.finished
    rec = log_lines(ev)[0]
    assert rec["prediction"] == "el gato" and [v["text"] for v in rec["revisions"]] == ["el", "el gato"]
    assert rec["delays"] == [1, 2]  # final_token_delays: "el" stable since revision 1, "gato" since revision 2
    ws.close()


def test_start_discards_an_unfinished_attempt(served) -> None:
    url, ev = served
    conn = HTTPConnection(url)
    conn.step(2, StepRequest(read=True, start=True))
    conn.step(2, StepRequest(write="garbage", read=True))
    r = conn.step(2, StepRequest(read=True, start=True))
    assert r.segment == "one" and r.position == 1
    conn.step(2, StepRequest(write="uno", finished=True))
    assert log_lines(ev)[0]["prediction"] == "uno"


class Simul2020Client:
    """The 2020 IWSLT client's HTTP calls, as in fairseq's eval/client.py (requests, one call per action)."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def new_session(self) -> None:
        requests.post(self.base_url, timeout=5)

    def corpus_info(self) -> dict:
        return requests.get(self.base_url, timeout=5).json()

    def get_src(self, sent_id: int, extra_params: dict | None = None) -> dict:
        params = {"sent_id": sent_id, **(extra_params or {})}
        return requests.get(f"{self.base_url}/src", params=params, timeout=5).json()

    def send_hypo(self, sent_id: int, hypo: str) -> None:
        requests.put(f"{self.base_url}/hypo", params={"sent_id": sent_id}, data=hypo.encode("utf-8"), timeout=5)

    def get_scores(self) -> dict:
        return requests.get(f"{self.base_url}/result", timeout=5).json()


def test_2020_client_works_unchanged(served) -> None:
    url, ev = served
    client = Simul2020Client(url)
    client.new_session()
    n = client.corpus_info()["num_sentences"]
    assert n == 3
    for sent_id in range(n):  # wait-1 echo agent in the 2020 style: GET a word, SEND it, until </s>
        while True:
            state = client.get_src(sent_id)
            assert state["sent_id"] == sent_id
            if state["segment"] == "</s>":
                client.send_hypo(sent_id, "</s>")
                break
            client.send_hypo(sent_id, state["segment"])
    scores = client.get_scores()
    # the echo agent's output is the source itself: scores as sacrebleu gives them for SOURCES against REFS["orig"]
    assert scores["counts"]["instances"] == 3
    assert scores["BLEU"]["score"] == pytest.approx(BLEU().corpus_score(SOURCES, [REFS["orig"]]).score)
    assert scores["chrF"]["score"] == pytest.approx(CHRF().corpus_score(SOURCES, [REFS["orig"]]).score)
    recs = {r["index"]: r for r in log_lines(ev)}
    assert recs[0]["prediction"] == SOURCES[0] and recs[0]["delays"] == [1, 2, 3, 4, 5, 6]


def test_openapi_document_is_served_from_its_one_source(served) -> None:
    url, _ = served
    doc = requests.get(f"{url}/openapi.json", timeout=5).json()
    repo_doc = json.loads((Path(__file__).parents[1] / "harness" / "openapi.json").read_text(encoding="utf-8"))
    assert doc == repo_doc
    for path in ("/health", "/v1/info", "/v1/instances/{index}/step", "/v1/stream", "/", "/src", "/hypo", "/result"):
        assert path in doc["paths"], path
