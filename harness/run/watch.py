"""The parts of a run every backend shares: the capped log pump (which also tells when the server listens), and the
watchdog that waits for the participant while enforcing the total and idle timeouts, and stops it once the server
is gone."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO, Protocol

from harness.config import Limits
from harness.run.spec import RunInterrupted
from harness.runlog import read_statuses

POLL_S = 0.25
#: how long a server may take to start listening (its output's first line says it listens)
SERVER_READY_TIMEOUT_S = 60.0


class LogPump(threading.Thread):
    """Copies a byte stream (a container's logs, a process's stdout) into a file, up to `max_bytes`, then notes
    the cut; past it, the rest is drained unread (`drain`, so a pipe never blocks its writer) or the stream is
    closed. `last_activity` is when the last chunk arrived; `ended` is set once the stream ended (its writer
    exited or went away; not when the log was cut without draining). With `watch_for`, `wait_for_line` waits until
    a line of the stream begins with it (the server's "listening" line)."""

    def __init__(self, open_stream: Callable[[], Iterable[bytes]], path: Path, max_bytes: int,
                 drain: bool = False, watch_for: str | None = None) -> None:
        super().__init__(daemon=True)
        self.open_stream, self.path, self.max_bytes, self.drain = open_stream, path, max_bytes, drain
        self.truncated = False
        self.ended = False
        self.last_activity = time.monotonic()
        self.watch_for = watch_for.encode() if watch_for else None
        self.seen = False  # a line began with `watch_for`
        self._line = b""  # the start of the line being read, while `watch_for` is not seen
        self._news = threading.Event()  # `watch_for` seen, or the stream ended

    def wait_for_line(self, timeout: float) -> bool:
        """True once a line of the stream begins with `watch_for`; False if the stream ends first, or after
        `timeout` seconds."""
        self._news.wait(timeout)
        return self.seen

    def _look(self, chunk: bytes) -> None:
        """Note a line beginning with `watch_for` (lines may be cut anywhere between chunks)."""
        assert self.watch_for is not None
        text = self._line + chunk
        lines = text.split(b"\n")
        if any(line.startswith(self.watch_for) for line in lines):
            self.seen = True
            self._news.set()
        self._line = lines[-1][:len(self.watch_for)]

    def run(self) -> None:
        written = 0
        cut = False  # cut without draining: the stream is closed, and has not ended
        try:
            stream = self.open_stream()
            with open(self.path, "wb") as f:
                for chunk in stream:
                    self.last_activity = time.monotonic()
                    if not self.truncated:
                        written = self._write(f, chunk, written)
                    if self.watch_for is not None and not self.seen:
                        self._look(chunk)
                    if self.truncated and not self.drain:
                        close = getattr(stream, "close", None)
                        if close:
                            close()
                        cut = True
                        break
        except Exception:  # noqa: BLE001 - the stream went away; what was written stays
            pass
        self.ended = not cut
        self._news.set()

    def _write(self, f: BinaryIO, chunk: bytes, written: int) -> int:
        """Write what fits of `chunk` (and the note of the cut when it does not all fit); bytes written so far."""
        room = self.max_bytes - written
        f.write(chunk[:room])
        written += min(len(chunk), room)
        if len(chunk) > room:
            self.truncated = True
            f.write(f"\n[harness: log truncated at {self.max_bytes} bytes]\n".encode())
        f.flush()
        return written


class ServerOutput(Protocol):
    """The server's output stream as the watchdog sees it (a `LogPump`)."""

    last_activity: float
    ended: bool


class Participant(Protocol):
    """The running submission as the watchdog sees it."""

    def wait(self, seconds: float) -> int | None:
        """The exit code if it ends within `seconds`, else None."""

    def kill(self) -> None:
        """Kill it (it may have exited meanwhile)."""


class _Idle:
    """The idle clock of a run: it starts when the participant is ready (`ready()`, for an agent server the driver's
    first good probe: its start-up is bounded by `limits.startup_timeout_s`, not by the idle window), and is reset
    by every instance logged and every line of the server's output."""

    def __init__(self, limit: float, ready: Callable[[], bool] | None, now: float) -> None:
        self.limit, self.ready, self.since = limit, ready, now

    def progress(self, now: float) -> None:
        self.since = now

    def exceeded(self, now: float, server: ServerOutput) -> bool:
        if self.ready is not None:
            if not self.ready():
                return False
            self.ready, self.since = None, now  # ready now: the window starts here
        return now - max(self.since, server.last_activity) > self.limit


def watch(participant: Participant, log_path: Path, limits: Limits, stop: threading.Event, t_run: float,
          expected: int, on_progress: Callable[[int, int], None] | None,
          server: ServerOutput, *, ready: Callable[[], bool] | None = None,
          before_kill: Callable[[str], None] | None = None) -> tuple[int | None, str | None, float | None]:
    """Wait for the participant to exit, enforcing the total and idle timeouts; `RunInterrupted` when `stop` is
    set; once the server's output ended (it exited) the participant is killed, since nothing it does from then on
    counts. The idle window opens once `ready()` says the participant has started (default: at once);
    `before_kill(reason)` is told which timeout fired before the participant is killed for it. Returns (exit code,
    which timeout fired or None, seconds until the first instance was logged or None)."""
    last_size = -1
    # The server ends an instance after instance_timeout_s, or idle_timeout_s without a request, and logs it; so a
    # working client finishes an instance at least every instance_timeout_s + idle_timeout_s.
    idle_limit = limits.instance_timeout_s + limits.idle_timeout_s
    idle = _Idle(idle_limit, ready, time.monotonic())
    first_seen: float | None = None
    while True:
        code = participant.wait(POLL_S)
        if code is not None:
            return code, None, first_seen
        if stop.is_set():
            raise RunInterrupted()
        now = time.monotonic()
        size = log_path.stat().st_size if log_path.exists() else 0
        if size and first_seen is None:
            first_seen = now - t_run
        if size != last_size:
            last_size = size
            idle.progress(now)
            if on_progress:
                on_progress(len(read_statuses(log_path)), expected)
        if server.ended:
            participant.kill()
            return participant.wait(10), None, first_seen
        timed_out = None
        if now - t_run > limits.total_timeout_s:
            timed_out = f"total timeout ({limits.total_timeout_s:g} s)"
        elif idle.exceeded(now, server):
            timed_out = f"idle timeout (no instance finished for {idle_limit:g} s)"
        if timed_out:
            if before_kill is not None:
                before_kill(timed_out)
            participant.kill()
            return participant.wait(10), timed_out, first_seen
