"""A participant's name that the resolver answers only after a moment (EAI_AGAIN, as Docker's embedded DNS does under
a busy engine) is looked up again, a bounded number of times within the deadline; the participant is not declared
gone. A name that does not exist is final at once. The server is a real HTTP server on loopback; only the
resolver's answers for the made-up name are scripted."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator

import pytest

from harness.drivers import http as driver_http
from harness.drivers.http import ParticipantGone, ParticipantHttp

NAME = "participant-under-test"


class _Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[int]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def _resolver(monkeypatch: pytest.MonkeyPatch, failures: list[int]) -> list[str]:
    """socket.getaddrinfo that fails for NAME with the errors in `failures` (in order), then answers loopback;
    returns the list of lookups made."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def lookup(host, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if host != NAME:
            return real(host, *args, **kwargs)
        asked.append(host)
        if failures:
            code = failures.pop(0)
            raise socket.gaierror(code, "Temporary failure in name resolution" if code == socket.EAI_AGAIN
                                  else "Name or service not known")
        return real("127.0.0.1", *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    return asked


def test_a_temporary_lookup_failure_is_asked_again(server: int, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _resolver(monkeypatch, [socket.EAI_AGAIN, socket.EAI_AGAIN])
    client = ParticipantHttp(NAME, server)
    try:
        assert client.request("GET", "/info") == {"ok": True}
    finally:
        client.close()
    assert len(asked) == 3


def test_a_lookup_that_keeps_failing_is_gone_after_a_bounded_number_of_tries(
        server: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver_http, "LOOKUP_RETRY_S", 0.0)
    asked = _resolver(monkeypatch, [socket.EAI_AGAIN] * 100)
    with pytest.raises(ParticipantGone, match="no connection \\(Temporary failure in name resolution; the "
                                              "participant's server is gone\\)"):
        ParticipantHttp(NAME, server).request("GET", "/info")
    assert len(asked) == driver_http.LOOKUP_RETRIES + 1


def test_a_name_that_does_not_exist_is_final_at_once(server: int, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _resolver(monkeypatch, [socket.EAI_NONAME] * 100)
    with pytest.raises(ParticipantGone, match="Name or service not known"):
        ParticipantHttp(NAME, server).request("GET", "/info")
    assert len(asked) == 1
