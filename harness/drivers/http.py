"""The driver's HTTP client for a participant's server: every request has a deadline and every answer a size cap.

Answers are read with `http.client` on one keep-alive connection (re-opened, before a request is sent, when the
participant has closed it, e.g. after SimulStream's close-delimited HTTP/1.0 bodies). A request is never sent twice:
`GET /output` runs the agent's policy and `POST /process_chunk` feeds it audio, so a repeat would change what it
does. The deadline holds for the whole exchange: a socket timeout bounds each read and a watchdog thread shuts the
socket down at the deadline, so an answer trickled in a byte at a time cannot outlast it. A request that does not
finish before its deadline raises `ParticipantTimeout`; a refused connection `ParticipantGone`; a reset or cut
connection, a 5xx, a body over the cap or an answer that is not the JSON the interface defines raises
`ParticipantError` naming the endpoint (`PUT /input answered 500`).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import select
import socket
import threading
import time
from typing import Any

__all__ = ["ParticipantError", "ParticipantTimeout", "ParticipantGone", "ParticipantHttp", "MAX_ANSWER_BYTES"]

MAX_ANSWER_BYTES = 1_000_000  # a segment of output text is a few hundred bytes; a 10 MB answer is a violation


class ParticipantError(Exception):
    """The participant answered something the interface does not allow (the endpoint is in the message)."""


class ParticipantTimeout(ParticipantError):
    """The participant did not answer before the deadline."""


class ParticipantGone(ParticipantError):
    """Nothing listens any more (connection refused): the participant's server died."""


class ParticipantHttp:
    """HTTP/1.1 requests to `host:port`, each bounded by a deadline (monotonic seconds) and `max_bytes`."""

    def __init__(self, host: str, port: int, max_bytes: int = MAX_ANSWER_BYTES, idle_s: float | None = None) -> None:
        self.host, self.port, self.max_bytes = host, port, max_bytes
        self.idle_s = idle_s  # no single answer may take longer (limits.idle_timeout_s), whatever the deadline
        self.conn: http.client.HTTPConnection | None = None
        self.watchdog = _Watchdog()

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def request(self, method: str, path: str, body: Any = None, deadline: float | None = None,
                expect_json: bool = True) -> Any:
        """The decoded JSON answer (or None for an empty body / `expect_json=False`) of one request."""
        endpoint = f"{method} {path}"
        data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        late = f"{endpoint}: no answer before the instance's time limit"
        if self.idle_s is not None and (deadline is None or time.monotonic() + self.idle_s < deadline):
            deadline, late = time.monotonic() + self.idle_s, f"{endpoint}: no answer within {self.idle_s:g} s"
        try:
            status, raw = self._exchange(method, path, data, deadline)
        except TimeoutError:
            self.close()
            raise ParticipantTimeout(late) from None
        except ConnectionRefusedError:
            self.close()
            raise ParticipantGone(f"{endpoint}: connection refused (the participant's server is gone)") from None
        except _CutShort as exc:
            self.close()
            raise ParticipantError(f"{endpoint}: the connection was closed before a complete answer{exc}") from None
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            self.close()
            raise ParticipantError(f"{endpoint}: the connection was closed before a complete answer") from None
        except (http.client.HTTPException, OSError) as exc:
            self.close()
            raise ParticipantError(f"{endpoint}: {type(exc).__name__}: {exc}".splitlines()[0][:300]) from None
        if len(raw) > self.max_bytes:
            raise ParticipantError(f"{endpoint}: answer larger than {self.max_bytes} bytes")
        if status >= 400:
            raise ParticipantError(f"{endpoint} answered {status}")
        if not expect_json or not raw.strip():
            return None
        try:
            return json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise ParticipantError(f"{endpoint}: the answer is not JSON ({raw[:80]!r})") from None

    def _exchange(self, method: str, path: str, data: bytes, deadline: float | None) -> tuple[int, bytes]:
        """Send one request and read its answer (status, at most max_bytes + 1 bytes of body) before `deadline`:
        a socket timeout bounds each read, the watchdog the whole exchange (an answer trickled in byte by byte
        included); TimeoutError when the deadline passes. Never sent twice: a request the participant may have
        acted on is not repeated."""
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise TimeoutError
        if self.conn is not None and _closed_by_peer(self.conn):
            self.close()  # the participant closed the kept-alive connection meanwhile: a new one, before sending
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=left)
        else:
            self.conn.timeout = left
            if self.conn.sock is not None:
                self.conn.sock.settimeout(left)
        if self.conn.sock is None:
            self.conn.connect()
        if deadline is not None:
            self.watchdog.arm(self.conn.sock, deadline)
        try:
            headers = {"Content-Type": "application/json", "Content-Length": str(len(data))}
            self.conn.request(method, path, body=data, headers=headers)
            resp = self.conn.getresponse()
            raw = resp.read(self.max_bytes + 1)
            declared = resp.getheader("Content-Length")
            if resp.will_close or len(raw) > self.max_bytes:
                self.close()
        except Exception:
            if self.watchdog.disarm():
                raise TimeoutError from None  # the watchdog cut it at the deadline, whatever the socket said
            raise
        if self.watchdog.disarm():
            raise TimeoutError
        if declared and declared.isdigit() and len(raw) < min(int(declared), self.max_bytes + 1):
            raise _CutShort(f" ({len(raw)} of {declared} bytes)")
        return resp.status, raw


class _CutShort(Exception):
    """The body ended before its Content-Length (the message says how much came)."""


class _Watchdog:
    """Shuts a request's socket down at its deadline, so that no answer outlasts it however it trickles in.

    One thread per client, started on first use; `arm` and `disarm` cost a lock and a notify per request."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.sock: socket.socket | None = None
        self.deadline = 0.0
        self.fired = False
        self.thread: threading.Thread | None = None

    def arm(self, sock: socket.socket | None, deadline: float) -> None:
        with self.cond:
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="harness-driver-watchdog", daemon=True)
                self.thread.start()
            self.sock, self.deadline, self.fired = sock, deadline, False
            self.cond.notify()

    def disarm(self) -> bool:
        """Stop watching; whether it fired (the socket was shut down at the deadline)."""
        with self.cond:
            self.sock = None
            return self.fired

    def _run(self) -> None:
        with self.cond:
            while True:
                if self.sock is None:
                    self.cond.wait()
                    continue
                left = self.deadline - time.monotonic()
                if left > 0:
                    self.cond.wait(left)
                    continue
                with contextlib.suppress(OSError):
                    self.sock.shutdown(socket.SHUT_RDWR)
                self.fired, self.sock = True, None


def _closed_by_peer(conn: http.client.HTTPConnection) -> bool:
    """Whether the peer closed this kept-alive connection (it is readable at its end of file)."""
    sock = conn.sock
    if sock is None:
        return False
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


def wait_listening(host: str, port: int, deadline: float, probe: Any = None) -> None:
    """Return once `host:port` accepts a connection (and `probe()` succeeds, if given); `ParticipantTimeout`
    when `deadline` passes first."""
    last = "nothing listened"
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=1.0):
                pass
            if probe is None:
                return
            probe()
            return
        except ParticipantError as exc:
            last = str(exc)
        except OSError as exc:
            last = f"{type(exc).__name__}"
        time.sleep(0.1)
    raise ParticipantTimeout(f"the participant never answered on port {port} ({last})")
