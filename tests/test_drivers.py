"""The agent-server driver against real servers on loopback: SimulEval 1.1.4's own agent service (same scores as
the same agent through the harness client), and hostile servers that answer slowly, never, with garbage, with 10 MB,
with a 500, or close the connection mid-answer — each ends its instance with the right status and a reason that
names the endpoint, within the instance's time limit."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from harness import layout
from harness.drivers import drive
from harness.server.evaluation import open_evaluation
from tests.templates_util import demo_text_dev
from tests.text_task import make_text_task

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ["the first sentence here", "a second one", "and a third"]
#: the demo's dev sentences that SimulEval's agent service translates, driven by the harness and natively
DRIVEN_SENTENCES = 12


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


Handler = Callable[[socket.socket, str, bytes], None]


@contextmanager
def raw_server(handler: Handler, controls: dict | None = None) -> Iterator[int]:
    """A loopback HTTP/1.1 server whose every request is answered by `handler(conn, request line, body)`;
    `controls["close"]` (when a dict is given) stops it listening."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    done = threading.Event()

    def serve_conn(conn: socket.socket) -> None:
        conn.settimeout(30)
        buf = b""
        try:
            while not done.is_set():
                while b"\r\n\r\n" not in buf:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    buf += chunk
                head, buf = buf.split(b"\r\n\r\n", 1)
                lines = head.decode().split("\r\n")
                length = next((int(x.split(":")[1]) for x in lines if x.lower().startswith("content-length")), 0)
                while len(buf) < length:
                    buf += conn.recv(65536)
                body, buf = buf[:length], buf[length:]
                handler(conn, lines[0], body)
        except OSError:
            pass
        finally:
            conn.close()

    def accept() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            threading.Thread(target=serve_conn, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    if controls is not None:
        def close() -> None:
            done.set()
            with suppress(OSError):  # refuse new connections now, not when the blocked accept() returns
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        controls["close"] = close
    try:
        yield listener.getsockname()[1]
    finally:
        done.set()
        thread.join(2)
        listener.close()


def reply(conn: socket.socket, status: int, body: bytes) -> None:
    conn.sendall(f"HTTP/1.1 {status} X\r\nContent-Length: {len(body)}\r\nContent-Type: application/json\r\n\r\n"
                 .encode() + body)


def echo_service(bad_output: Callable[[socket.socket], None] | None) -> Handler:
    """SimulEval's service API with a wait-0 echo policy; `bad_output` answers GET /output instead, if given."""
    state: dict[str, list[str]] = {"src": [], "done": []}

    def handle(conn: socket.socket, line: str, body: bytes) -> None:
        method, path, _ = line.split(" ")
        if path == "/":
            reply(conn, 200, b'{"info": "echo"}')
        elif path == "/reset":
            state["src"], state["done"] = [], []
            reply(conn, 200, b"")
        elif path == "/input":
            seg = json.loads(body)
            if seg.get("content"):
                state["src"].append(seg["content"])
            state["done"] = [seg.get("finished", False)]
            reply(conn, 200, b"")
        elif path == "/output" and bad_output is not None and state["src"]:
            bad_output(conn)
        else:
            word = state["src"].pop(0) if state["src"] else ""
            fin = bool(state["done"] and state["done"][0] and not state["src"])
            reply(conn, 200, json.dumps({"index": 0, "content": word, "finished": fin, "is_empty": not word,
                                         "data_type": "text", "config": {}}).encode())
    return handle


def _drive(tmp_path: Path, port: int, *, instance_timeout: float = 5.0, startup: float = 5.0) -> tuple[dict, list]:
    cfg = make_text_task(tmp_path, SOURCES, f"limits: {{instance_timeout_s: {instance_timeout}, idle_timeout_s: 60}}\n")
    out = tmp_path / "run"
    evaluation = open_evaluation(cfg, "dev", out, overwrite=True)
    try:
        report = drive(evaluation, "simuleval-agent-server", f"127.0.0.1:{port}", startup, layout.RunDir(out))
    finally:
        evaluation.close()
    records = [json.loads(x) for x in (out / "instances.log").read_text().splitlines()] \
        if (out / "instances.log").exists() else []
    return report.__dict__, sorted(records, key=lambda r: r["index"])


def test_a_well_behaved_service_gets_every_instance_ok(tmp_path: Path) -> None:
    with raw_server(echo_service(None)) as port:
        report, records = _drive(tmp_path, port)
    assert report["state"] == "done" and [r["status"] for r in records] == ["ok"] * 3
    assert [r["prediction"] for r in records] == SOURCES  # wait-0 echo
    assert records[0]["delays"] == [1, 2, 3, 4]


@pytest.mark.parametrize("name, bad, status, reason", [
    ("garbage", lambda c: reply(c, 200, b"{not json"), "protocol_violation", "GET /output: the answer is not JSON"),
    ("500", lambda c: reply(c, 500, b"{}"), "protocol_violation", "GET /output answered 500"),
    ("10MB", lambda c: reply(c, 200, b'{"content": "' + b"x" * 10_000_000 + b'"}'), "protocol_violation",
     "GET /output: answer larger than"),
    ("cut", lambda c: (c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{\"con"), c.close()),
     "protocol_violation", "GET /output"),
    ("speech", lambda c: reply(c, 200, b'{"content": [0.1], "data_type": "speech", "finished": false}'),
     "protocol_violation", "only text output segments"),
])
def test_hostile_answers_end_the_instance_as_a_protocol_violation(tmp_path, name, bad, status, reason) -> None:
    with raw_server(echo_service(bad)) as port:
        report, records = _drive(tmp_path, port)
    assert report["state"] == "done" and len(records) == 3
    assert {r["status"] for r in records} == {status}
    assert all(reason in r["error"] for r in records), records[0]["error"]


def test_slow_and_silent_services_time_out_within_the_instance_limit(tmp_path: Path) -> None:
    never = threading.Event()

    def silent(conn: socket.socket) -> None:
        never.wait(20)  # holds the answer past the 1.5 s instance limit

    with raw_server(echo_service(silent)) as port:
        t0 = time.monotonic()
        report, records = _drive(tmp_path, port, instance_timeout=1.5)
        never.set()
    assert [r["status"] for r in records] == ["timeout"] * 3
    assert "GET /output: no answer before the instance's time limit" in records[0]["error"]
    assert time.monotonic() - t0 < 3 * 1.5 + 10  # each instance ends at its deadline, not at the socket's


def test_a_service_that_never_listens_is_not_ready(tmp_path: Path) -> None:
    report, records = _drive(tmp_path, _free_port(), startup=1.0)
    assert report["state"] == "not_ready" and records == []
    assert "never answered on port" in report["reason"] and "within 1 s" in report["reason"]


def test_a_service_that_dies_mid_run_ends_the_run(tmp_path: Path) -> None:
    controls: dict = {}

    def dying(conn: socket.socket) -> None:
        controls["close"]()  # nothing listens any more
        conn.close()

    with raw_server(echo_service(dying), controls) as port:
        report, records = _drive(tmp_path, port)
    assert report["state"] == "gone" and "connection refused" in report["reason"]
    # the answer cut by the dying server breaks the protocol; the next instance finds nobody: error, and stop
    assert [r["status"] for r in records] == ["protocol_violation", "error"]
    assert "POST /reset: connection refused" in records[1]["error"]


@pytest.fixture
def simuleval_service() -> Iterator[int]:
    """SimulEval 1.1.4's own agent service running the simuleval_agent_server template's wait-k agent."""
    pytest.importorskip("simuleval")
    port = _free_port()
    agent = ROOT / "agent_templates" / "simuleval_agent_server" / "agent.py"
    proc = subprocess.Popen([sys.executable, "-m", "simuleval.cli", "--standalone", "--remote-port", str(port),
                             "--agent", str(agent), "--waitk", "3"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.slow
@pytest.mark.apertium
def test_simuleval_service_scores_equal_the_native_adapter(simuleval_service: int, tmp_path: Path) -> None:
    from harness.cli import main

    cfg = demo_text_dev(tmp_path / "task", DRIVEN_SENTENCES)
    out = tmp_path / "driven"
    code = main(["server", "--config", str(cfg), "--track", "text-en-es", "--dataset", "dev", "--port", "0",
                 "--output", str(out), "--drive", "simuleval-agent-server", "--participant",
                 f"127.0.0.1:{simuleval_service}", "--startup-timeout", "60"])
    assert code == 0
    assert json.loads((out / "driver.json").read_text())["state"] == "done"
    native = tmp_path / "native"
    assert main(["run", "--config", str(cfg), "--track", "text-en-es", "--dataset", "dev", "--agent",
                 str(ROOT / "agent_templates" / "simuleval_waitk" / "agent.py"), "--output", str(native),
                 "--waitk", "3"]) == 0
    a = json.loads((out / "scores.json").read_text())
    b = json.loads((native / "scores.json").read_text())
    for key in ("BLEU", "chrF", "TER", "AL", "LAAL", "AP", "DAL", "ATD", "YAAL"):
        assert a[key]["score"] == b[key]["score"], key
    driven = [json.loads(x) for x in (out / "instances.log").read_text().splitlines()]
    assert all(r["status"] == "ok" for r in driven) and len(driven) == DRIVEN_SENTENCES
