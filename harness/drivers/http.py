"""The driver's HTTP client for a participant's server: every request has a deadline and every answer a size cap.

Answers are read with `http.client` on one keep-alive connection (re-opened, before a request is sent, when the
participant has closed it, e.g. after SimulStream's close-delimited HTTP/1.0 bodies). A request is never sent twice:
`GET /output` runs the agent's policy and `POST /process_chunk` feeds it audio, so a repeat would change what it
does. The deadline holds for the whole exchange: a socket timeout bounds each read and a watchdog thread shuts the
socket down at the deadline, so an answer trickled in a byte at a time cannot outlast it. A request that does not
finish before its deadline raises `ParticipantTimeout`; a refused connection `ParticipantGone`; a reset or cut
connection (`ParticipantCut`), an error status (`ParticipantStatus`), a body over the cap or an answer that is not
JSON within `harness.boundedjson`'s bounds raises a `ParticipantError` naming the endpoint (`PUT /input answered
500`): whatever a participant sends is at worst its own protocol violation, never an exception of the driver.

`urllib_headers` sends each request exactly as `urllib.request.urlopen` does (SimulStream's own client): the same
headers in the same order, `Connection: close`, a new connection per request.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import select
import socket
import threading
import time
import urllib.request
from typing import Any

from harness import boundedjson

__all__ = ["ParticipantError", "ParticipantTimeout", "ParticipantGone", "ParticipantCut", "ParticipantStatus",
           "ProbeViolation", "ParticipantHttp", "MAX_ANSWER_BYTES", "wait_listening"]

MAX_ANSWER_BYTES = 1_000_000  # a segment of output text is a few hundred bytes; a 10 MB answer is a violation
#: a temporary name lookup failure (EAI_AGAIN) is retried this many times, this far apart, within the deadline
LOOKUP_RETRIES = 10
LOOKUP_RETRY_S = 0.2


class ParticipantError(Exception):
    """The participant answered something the interface does not allow (the endpoint is in the message)."""


class ParticipantTimeout(ParticipantError):
    """The participant did not answer before the deadline."""


class ParticipantGone(ParticipantError):
    """Nothing listens any more (connection refused): the participant's server died."""


class ParticipantCut(ParticipantError):
    """The connection was reset or closed before a complete answer."""


class ParticipantStatus(ParticipantError):
    """The participant answered with an error status (`status`)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class ProbeViolation(ParticipantError):
    """An answer at start-up that proves the participant speaks the interface wrongly (the reason names it)."""


class ParticipantHttp:
    """HTTP/1.1 requests to `host:port`, each bounded by a deadline (monotonic seconds) and `max_bytes`."""

    def __init__(self, host: str, port: int, max_bytes: int = MAX_ANSWER_BYTES, idle_s: float | None = None,
                 urllib_headers: bool = False) -> None:
        self.host, self.port, self.max_bytes = host, port, max_bytes
        self.urllib_headers = urllib_headers
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
        except _NoConnection as exc:
            self.close()
            raise ParticipantGone(f"{endpoint}: no connection ({exc}; the participant's server is gone)") from None
        except _CutShort as exc:
            self.close()
            raise ParticipantCut(f"{endpoint}: the connection was closed before a complete answer{exc}") from None
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            self.close()
            raise ParticipantCut(f"{endpoint}: the connection was closed before a complete answer") from None
        except (http.client.HTTPException, OSError) as exc:
            self.close()
            raise ParticipantError(f"{endpoint}: {type(exc).__name__}: {exc}".splitlines()[0][:300]) from None
        if len(raw) > self.max_bytes:
            raise ParticipantError(f"{endpoint}: answer larger than {self.max_bytes} bytes")
        if status >= 400:
            raise ParticipantStatus(f"{endpoint} answered {status}", status)
        if not expect_json or not raw.strip():
            return None
        try:
            return boundedjson.loads(raw)
        except boundedjson.JsonRejected as exc:
            raise ParticipantError(f"{endpoint}: the answer is not JSON within bounds ({exc}; {raw[:60]!r})") from None

    def _exchange(self, method: str, path: str, data: bytes, deadline: float | None) -> tuple[int, bytes]:
        """Send one request and read its answer (status, at most max_bytes + 1 bytes of body) before `deadline`:
        a socket timeout bounds each read, the watchdog the whole exchange (an answer trickled in byte by byte
        included); TimeoutError when the deadline passes. Never sent twice: a request the participant may have
        acted on is not repeated."""
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise TimeoutError
        self._connected(left)
        assert self.conn is not None
        if deadline is not None:
            self.watchdog.arm(self.conn.sock, deadline)
        try:
            self._send(method, path, data)
            resp = self.conn.getresponse()
            raw = resp.read(self.max_bytes + 1)
            declared = resp.getheader("Content-Length")
            if resp.will_close or len(raw) > self.max_bytes or self.urllib_headers:
                self.close()  # urllib's `Connection: close`: one connection per request, whatever the answer said
        except Exception:
            if self.watchdog.disarm():
                raise TimeoutError from None  # the watchdog cut it at the deadline, whatever the socket said
            raise
        if self.watchdog.disarm():
            raise TimeoutError
        if declared and declared.isdigit() and len(raw) < min(int(declared), self.max_bytes + 1):
            raise _CutShort(f" ({len(raw)} of {declared} bytes)")
        return resp.status, raw

    def _connected(self, left: float | None) -> None:
        """A connection whose reads time out after `left` seconds: the kept-alive one, or a new one when there is
        none or the participant closed it meanwhile."""
        if self.conn is not None and _closed_by_peer(self.conn):
            self.close()  # the participant closed the kept-alive connection meanwhile: a new one, before sending
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=left)
        else:
            self.conn.timeout = left
            if self.conn.sock is not None:
                self.conn.sock.settimeout(left)
        if self.conn.sock is None:
            self._connect(None if left is None else time.monotonic() + left)

    def _connect(self, deadline: float | None) -> None:
        """Open the connection. A name lookup that fails *temporarily* (EAI_AGAIN: Docker's embedded DNS under a
        busy engine) is asked again, a bounded number of times and never past `deadline`: the participant is not
        gone because the resolver was slow. Any other failure to connect is final."""
        assert self.conn is not None
        for attempt in range(LOOKUP_RETRIES + 1):
            try:
                self.conn.connect()
                return
            except (TimeoutError, ConnectionRefusedError):
                raise
            except socket.gaierror as exc:
                out_of_time = deadline is not None and time.monotonic() + LOOKUP_RETRY_S >= deadline
                if exc.errno != socket.EAI_AGAIN or attempt == LOOKUP_RETRIES or out_of_time:
                    raise _NoConnection(exc.strerror or type(exc).__name__) from None
                time.sleep(LOOKUP_RETRY_S)
            except OSError as exc:  # no route, no such name (yet): nothing listens there
                raise _NoConnection(exc.strerror or type(exc).__name__) from None

    def _send(self, method: str, path: str, data: bytes) -> None:
        """Send the request line, headers and body (as urllib sends them, with `urllib_headers`)."""
        assert self.conn is not None
        if not self.urllib_headers:
            headers = {"Content-Type": "application/json", "Content-Length": str(len(data))}
            self.conn.request(method, path, body=data, headers=headers)
            return
        self.conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in (("Accept-Encoding", "identity"), ("Content-Length", str(len(data))),
                            ("Host", f"{self.host}:{self.port}"),
                            ("User-Agent", f"Python-urllib/{urllib.request.__version__}"),  # type: ignore[attr-defined]
                            ("Content-Type", "application/json"), ("Connection", "close")):
            self.conn.putheader(name, value)
        self.conn.endheaders(data)


class _NoConnection(Exception):
    """The connection could not be made (the message says why)."""


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


#: Start-up answers that are not yet an answer: cut connections are tried this many times in a row before they
#: count as the participant's answer (a server restarting cuts a few; one that cuts every request is broken).
MAX_CUTS = 3
#: The status a server gives while it is still loading: polled on until the start-up limit.
NOT_YET = 503
#: How long one probe may wait for its answer (a probe started before the start-up limit may end after it).
PROBE_S = 10.0


def wait_listening(host: str, port: int, deadline: float, probe: Any = None) -> None:
    """Return once `host:port` accepts a connection and `probe(deadline)` (if given) gets a well-formed answer
    (each probe has `PROBE_S`; no probe starts after `deadline`).

    A refused connection, a probe without an answer before its own deadline and a 503 mean "not yet": polled on
    until `deadline`, then `ParticipantTimeout`. Any other answer that is not well-formed (an error status, garbage,
    an oversized body) proves the server speaks the interface wrongly: `ProbeViolation` at once, its reason
    named; so do `MAX_CUTS` connections in a row closed without a complete answer."""
    last, cuts = "nothing listened", 0
    while time.monotonic() < deadline:
        try:
            if probe is None:
                with socket.create_connection((host, port), timeout=max(0.1, min(1.0, deadline - time.monotonic()))):
                    return
            probe(time.monotonic() + PROBE_S)  # refused: ParticipantGone; no bare connection first
            return
        except ParticipantCut as exc:
            cuts += 1
            last = str(exc)
            if cuts >= MAX_CUTS:
                raise ProbeViolation(f"{exc} ({cuts} times in a row)") from None
        except ParticipantStatus as exc:
            if exc.status != NOT_YET:
                raise ProbeViolation(str(exc)) from None
            last, cuts = str(exc), 0
        except (ParticipantTimeout, ParticipantGone) as exc:
            last, cuts = str(exc), 0
        except ParticipantError as exc:
            raise ProbeViolation(str(exc)) from None
        except OSError as exc:
            last, cuts = f"{type(exc).__name__}", 0
        time.sleep(0.1)
    raise ParticipantTimeout(f"the participant never answered on port {port} ({last})")
