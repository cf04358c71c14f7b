"""`harness client` fails at once on a definite answer from something that is not a harness server, and says
that it is waiting while nothing answers yet."""

from __future__ import annotations

import http.server
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.agent_sources import WITH_OPTIONS


class NotOurs(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.send_response(404)
        self.send_header("Content-Length", "9")
        self.end_headers()
        self.wfile.write(b"not found")

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def foreign_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotOurs)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _client(tmp_path: Path, url: str, wait: str) -> subprocess.CompletedProcess:
    agent = tmp_path / "agent.py"
    agent.write_text(WITH_OPTIONS, encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "harness", "client", "--server", url, "--wait", wait,
                           "--agent", str(agent)], capture_output=True, text=True, timeout=120)


def test_a_404_from_another_server_fails_at_once(tmp_path: Path, foreign_server: str) -> None:
    proc = _client(tmp_path, foreign_server, "3600")  # waiting would hit the subprocess timeout, not pass
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"harness client: error: cannot use {foreign_server}: GET /health answered 404: "
                                   "not a harness evaluation server")


def test_nothing_listening_shows_a_waiting_line(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    proc = _client(tmp_path, f"http://127.0.0.1:{port}", "0.3")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith(f"harness client: waiting up to 0.3 s for the evaluation server at http://127.0.0.1:{port}")
    assert lines[-1].startswith(f"harness client: error: cannot reach the evaluation server at http://127.0.0.1:{port}")
