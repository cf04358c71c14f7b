"""Bad requests get a 4xx with a one-line reason; none produces a 5xx or leaves an invalid log."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.client.connection import HTTPConnection
from harness.protocol import StepRequest
from harness.run.joint import loopback_server
from harness.server.evaluation import open_evaluation
from tests.text_task import make_text_task

JSON = {"Content-Type": "application/json"}
FIXED: list[tuple[str, str, dict, bytes]] = [
    ("POST", "/v1/instances/0/step", JSON, b"{"),
    ("POST", "/v1/instances/0/step", JSON, b"[]"),
    ("POST", "/v1/instances/0/step", JSON, b"null"),
    ("POST", "/v1/instances/0/step", JSON, b'"read"'),
    ("POST", "/v1/instances/0/step", JSON, b'{"read": 1}'),
    ("POST", "/v1/instances/0/step", JSON, b'{"write": 5}'),
    ("POST", "/v1/instances/0/step", JSON, b'{"read": true, "finished": true}'),
    ("POST", "/v1/instances/0/step", JSON, b'{"audio": "mp3", "read": true}'),
    ("POST", "/v1/instances/0/step", JSON, b'{"index": 0, "read": true}'),
    ("POST", "/v1/instances/0/step", JSON, b'{"sneaky": "x"}'),
    ("POST", "/v1/instances/0/step", JSON, b"\xff\xfe\x00garbage"),
    ("POST", "/v1/instances/0/step", {"Content-Type": "text/plain"}, b'{"read": true}'),
    ("POST", "/v1/instances/0/step", {}, b'{"read": true}'),
    ("POST", "/v1/instances/-1/step", JSON, b'{"read": true}'),
    ("POST", "/v1/instances/999/step", JSON, b'{"read": true}'),
    ("POST", "/v1/instances/abc/step", JSON, b'{"read": true}'),
    ("POST", "/v1/instances/1e3/step", JSON, b'{"read": true}'),
    ("GET", "/v1/instances/0/step", {}, b""),
    ("DELETE", "/v1/info", {}, b""),
    ("GET", "/nothing/here", {}, b""),
    ("GET", "/src", {}, b""),
    ("GET", "/src?sent_id=x", {}, b""),
    ("GET", "/src?sent_id=99", {}, b""),
    ("GET", "/src?sent_id=0&segment_size=-5", {}, b""),
    ("PUT", "/hypo", {}, b"hola"),
    ("PUT", "/hypo?sent_id=1", {}, b"\xff\xfe"),
    ("PUT", "/hypo?sent_id=77", {}, b"x"),
    ("GET", "/result", {}, b""),
    ("POST", "/v1/instances/0/step", JSON, b'{"write": "' + b"a" * 5000 + b'"}'),  # over the 4000-byte cap
]


def _raw(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(data)
        chunks = []
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        except TimeoutError:
            pass
    return b"".join(chunks)


def _check_log(path: Path) -> list[dict]:
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def test_many_malformed_requests_get_4xx_and_never_corrupt_the_log(tmp_path: Path) -> None:
    cfg = make_text_task(tmp_path, limits="limits: {max_body_bytes: 4000}\n")
    ev = open_evaluation(cfg, "dev", tmp_path / "out")
    with loopback_server(ev) as url:
        session = requests.Session()
        statuses = []

        @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
        @given(body=st.one_of(st.binary(max_size=300),
                              st.dictionaries(st.text(max_size=8), st.one_of(st.none(), st.booleans(), st.integers(),
                                                                            st.text(max_size=20)), max_size=4)
                              .map(lambda d: json.dumps(d).encode())),
               index=st.sampled_from(["0", "1", "2", "7", "-3", "x", "%00"]),
               ctype=st.sampled_from(["application/json", "application/json; charset=utf-8", "text/plain", ""]))
        def fuzz(body: bytes, index: str, ctype: str) -> None:
            r = session.post(f"{url}/v1/instances/{index}/step", data=body, headers={"Content-Type": ctype}, timeout=5)
            statuses.append(r.status_code)
            assert r.status_code < 500, r.text
            if r.status_code >= 400:
                reason = r.json()["error"]
                assert reason and "\n" not in reason

        fuzz()
        for method, path, headers, body in FIXED:
            r = session.request(method, url + path, headers=headers, data=body, timeout=5)
            assert 400 <= r.status_code < 500, (method, path, r.status_code, r.text)
            assert "\n" not in r.json()["error"]
        port = int(url.rsplit(":", 1)[1])
        head = b"POST /v1/instances/0/step HTTP/1.1\r\n"
        for raw in (b"GARBAGE\r\n\r\n", head + b"Content-Length: 99999999\r\n\r\n",
                    head + b"Content-Type: application/json\r\nContent-Length: 5\r\n\r\n{"):
            answer = _raw(port, raw)
            assert not answer.startswith(b"HTTP/1.1 5"), answer[:100]
        assert any(400 <= s < 500 for s in statuses)
        # the server still works and the log is intact
        assert session.get(f"{url}/health", timeout=5).status_code == 200
        conn = HTTPConnection(url)
        for i in ev.pending():
            conn.step(i, StepRequest(read=True, start=True))
            conn.step(i, StepRequest(write="fin", finished=True))
        conn.close()
        ev.writer.sync()
        records = _check_log(ev.writer.path)
        assert sorted(r["index"] for r in records) == [0, 1, 2]
        assert session.get(f"{url}/v1/info", timeout=5).json()["pending"] == []
    ev.close()


def test_websocket_garbage_gets_error_messages_not_a_crash(tmp_path: Path) -> None:
    import websocket

    ev = open_evaluation(make_text_task(tmp_path, limits="limits: {max_body_bytes: 4000}\n"), "dev", tmp_path / "out")
    with loopback_server(ev) as url:
        ws = websocket.create_connection(url.replace("http", "ws") + "/v1/stream", timeout=5)
        for message in ["{", "[]", '{"read": true}', '{"index": "0", "read": true}', '{"index": 9, "read": true}',
                        '{"index": 0, "read": true, "finished": true}', '{"index": 0, "x": 1}']:
            ws.send(message)
            answer = json.loads(ws.recv())
            assert 400 <= answer["status"] < 500 and answer["error"]
        ws.send_binary(b"\x00\x01")
        assert json.loads(ws.recv())["status"] == 400
        ws.send(json.dumps({"index": 0, "read": True, "start": True}))
        assert json.loads(ws.recv())["segment"] == "the"
        ws.close()
        assert requests.get(f"{url}/health", timeout=5).status_code == 200
    assert _check_log(ev.writer.path) == []
    ev.close()
