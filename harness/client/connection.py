"""Connections from the client runner to an evaluation: WebSocket stream, HTTP keep-alive, or in-process.

Each connection belongs to one worker thread (none of them is shared). Errors are one-line `HarnessError`s:
`ServerUnreachable` when nothing answers at the URL, `ServerRefused` (with the HTTP status) for a 4xx.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from harness.errors import HarnessError
from harness.protocol import JSON_TYPE, ProtocolError, StepRequest, StepResponse


class ServerUnreachable(HarnessError):
    """No evaluation server answers at the URL (or the connection broke)."""


class ServerRefused(HarnessError):
    """The server answered a request with a 4xx; `status` is the HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"server refused the request ({status}): {message}")
        self.status = status
        self.reason = message


class Connection:
    """One worker's link to the evaluation."""

    def info(self) -> dict[str, Any]:
        raise NotImplementedError

    def step(self, index: int, req: StepRequest) -> StepResponse:
        raise NotImplementedError

    def close(self) -> None:
        pass


class InProcessConnection(Connection):
    """Calls the `Evaluation` directly (joint mode, no HTTP); timed by the same server code."""

    def __init__(self, evaluation: Any) -> None:
        self.evaluation = evaluation

    def info(self) -> dict[str, Any]:
        self.evaluation.saw_participant()
        return self.evaluation.info()

    def step(self, index: int, req: StepRequest) -> StepResponse:
        try:
            return self.evaluation.step(index, req)
        except ProtocolError as exc:
            raise ServerRefused(exc.status, str(exc)) from None


def _split(url: str) -> tuple[str, int, str]:
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.scheme not in ("http", "ws"):
        raise HarnessError(f"server URL {url!r}: only http:// URLs are supported")
    if not parts.hostname:
        raise HarnessError(f"server URL {url!r} has no host")
    return parts.hostname, parts.port or 80, parts.path.rstrip("/")


class HTTPConnection(Connection):
    """Native REST: `POST /v1/instances/{i}/step` over one keep-alive connection (`http.client`)."""

    def __init__(self, url: str, timeout: float = 600.0) -> None:
        self.url = url
        self.host, self.port, self.prefix = _split(url)
        self._conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        self._headers = {"Content-Type": JSON_TYPE}

    def _request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, str, bytes]:
        for attempt in (0, 1):
            try:
                self._conn.request(method, self.prefix + path, body=body, headers=self._headers)
                resp = self._conn.getresponse()
                data = resp.read()
                return resp.status, resp.getheader("Content-Type", ""), data
            except (ConnectionRefusedError, socket.gaierror) as exc:
                raise ServerUnreachable(f"cannot reach the evaluation server at {self.url}: {exc}") from None
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                self._conn.close()  # a keep-alive connection closed by the server: reconnect once
                if attempt:
                    raise ServerUnreachable(f"lost the connection to {self.url}: {exc}") from None
            except OSError as exc:
                raise ServerUnreachable(f"cannot reach the evaluation server at {self.url}: {exc}") from None
        raise AssertionError("unreachable")

    @staticmethod
    def _check(status: int, data: bytes) -> None:
        if status >= 400:
            try:
                message = json.loads(data)["error"]
            except (ValueError, KeyError, TypeError):
                message = data[:200].decode("utf-8", "replace")
            raise ServerRefused(status, message)

    def info(self) -> dict[str, Any]:
        status, _, data = self._request("GET", "/v1/info")
        self._check(status, data)
        return json.loads(data)

    def step(self, index: int, req: StepRequest) -> StepResponse:
        body = json.dumps(req.to_json(), ensure_ascii=False).encode("utf-8")
        status, ctype, data = self._request("POST", f"/v1/instances/{index}/step", body)
        self._check(status, data)
        if ctype.startswith("application/octet-stream"):
            return StepResponse.from_pcm_frame(data)
        return StepResponse.from_json(json.loads(data))

    def close(self) -> None:
        self._conn.close()


class WebSocketConnection(Connection):
    """Native stream: one persistent WebSocket (`/v1/stream`), one message each way per action."""

    def __init__(self, url: str, timeout: float = 600.0) -> None:
        try:
            import websocket
        except ImportError:
            raise HarnessError("the WebSocket transport needs the websocket-client package; "
                               "install it or use --transport http") from None
        self.url = url
        host, port, prefix = _split(url)
        self._http = HTTPConnection(url, timeout)
        try:
            self._ws = websocket.create_connection(f"ws://{host}:{port}{prefix}/v1/stream", timeout=timeout,
                                                   enable_multithread=False, skip_utf8_validation=True)
        except (ConnectionRefusedError, socket.gaierror, OSError) as exc:
            raise ServerUnreachable(f"cannot reach the evaluation server at {url}: {exc}") from None
        except websocket.WebSocketException as exc:
            raise ServerUnreachable(f"{url} does not offer the WebSocket stream: {exc}") from None
        assert self._ws.sock is not None  # connected just above
        self._ws.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def info(self) -> dict[str, Any]:
        return self._http.info()

    def step(self, index: int, req: StepRequest) -> StepResponse:
        import websocket

        try:
            self._ws.send(json.dumps(req.to_json(index), ensure_ascii=False))
            opcode, data = self._ws.recv_data()
        except (websocket.WebSocketException, OSError) as exc:
            raise ServerUnreachable(f"lost the stream to {self.url}: {exc}") from None
        if opcode == websocket.ABNF.OPCODE_BINARY:
            return StepResponse.from_pcm_frame(data)
        if opcode != websocket.ABNF.OPCODE_TEXT:
            raise ServerUnreachable(f"the server closed the stream ({data[2:].decode('utf-8', 'replace')[:120]})")
        obj = json.loads(data)
        if "error" in obj:
            raise ServerRefused(int(obj.get("status", 400)), str(obj["error"]))
        return StepResponse.from_json(obj)

    def close(self) -> None:
        self._http.close()
        try:
            self._ws.close()
        except Exception:  # closing a broken socket must not hide the real error
            pass


def connect(url: str, transport: str = "auto") -> Connection:
    """A connection of the given transport (`auto`: WebSocket when websocket-client is installed)."""
    if transport == "auto":
        try:
            import websocket  # noqa: F401

            transport = "ws"
        except ImportError:
            transport = "http"
    if transport == "ws":
        return WebSocketConnection(url)
    if transport == "http":
        return HTTPConnection(url)
    raise HarnessError(f"unknown transport {transport!r} (ws, http)")


def _health_verdict(status: int, data: bytes) -> dict[str, Any] | None:
    """The answer of a harness server to `GET /health`, or None; a ServerUnreachable when something else answered."""
    try:
        obj = json.loads(data) if status == 200 else None
    except ValueError:
        obj = None
    if isinstance(obj, dict) and obj.get("status") == "ok" and "track" in obj:
        return obj
    what = f"answered {status}" if status != 200 else "answered 200 without a harness health report"
    raise ServerUnreachable(f"GET /health {what}: not a harness evaluation server")


def wait_for_server(url: str, timeout_s: float, on_wait: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Poll `GET /health` until the server answers (at most `timeout_s`); its answer, or ServerUnreachable.

    Only "nothing answers yet" (refused, reset, unresolved) is waited for, with `on_wait(reason)` called once;
    a definite answer from something that is not a harness server fails at once.
    """
    host, port, prefix = _split(url)
    deadline = time.monotonic() + max(0.0, timeout_s)
    last = ""
    waiting = False
    while True:
        conn = http.client.HTTPConnection(host, port, timeout=5)
        try:
            conn.request("GET", prefix + "/health")
            resp = conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException) as exc:
            last = str(exc) or type(exc).__name__
        else:
            try:
                found = _health_verdict(resp.status, data)
            except ServerUnreachable as exc:
                raise ServerUnreachable(f"cannot use {url}: {exc}") from None
            if found is not None:
                return found
        finally:
            conn.close()
        if time.monotonic() >= deadline:
            raise ServerUnreachable(f"cannot reach the evaluation server at {url}: {last}")
        if not waiting and on_wait is not None:
            on_wait(last)
        waiting = True
        time.sleep(0.2)
