"""instances.log writer: one JSON line per finished instance, appended, flushed and fsync'd.

One background thread writes each record (one write call per line), flushes and fsyncs, so the decode loop
never waits on the disk; records that arrive during an fsync share the next one. A record still queued when
the process is killed is simply missing from the log, and resume decodes that instance again.

On resume the existing log is read back (`harness.runlog.live.scan`): complete lines count as finished instances;
a torn last line is an interrupted write and is cut off, so that instance is decoded again.
"""

from __future__ import annotations

import atexit
import json
import os
import threading
from pathlib import Path
from typing import Any

from harness import layout
from harness.errors import HarnessError, LogFormatError
from harness.runlog.live import scan


class LogWriter:
    """Appends instance records durably; thread-safe. Records are written by one background thread."""

    def __init__(self, output: Path, resume: bool = False, overwrite: bool = False) -> None:
        self.output = Path(output)
        self.path = layout.RunDir(self.output).instances_log
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self.records: dict[int, dict[str, Any]] = {}
        self.torn = False
        try:
            self.output.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise HarnessError(f"{self.output}: cannot create output folder: {exc.strerror}") from None
        exists = self.path.exists() and self.path.stat().st_size > 0
        if exists and resume:
            try:
                found = scan(self.path, keep_records=True)
            except LogFormatError as exc:
                raise HarnessError(f"{exc}; cannot resume") from None
            self.records, good = found.records, found.valid_bytes
            if good != self.path.stat().st_size:
                self.torn = True
                with open(self.path, "r+b") as f:
                    f.truncate(good)
                    f.flush()
                    os.fsync(f.fileno())
        elif exists and not overwrite:
            raise HarnessError(f"{self.path} already exists; pass --resume to continue it or --overwrite")
        self._file = open(self.path, "ab" if resume else "wb")
        self._queue: list[bytes] = []
        self._busy = False
        self._closing = False
        self.error: str | None = None
        self._thread = threading.Thread(target=self._loop, name="harness-log-writer", daemon=True)
        self._thread.start()
        atexit.register(self.close)  # a normal exit drains the queue: nothing the server answered is lost

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                if not self._queue and self._closing:
                    return
                lines, self._queue = self._queue, []
                self._busy = True
            try:
                for line in lines:  # one write per record: a crash tears at most the last line
                    self._file.write(line)
                self._file.flush()
                os.fsync(self._file.fileno())
            except OSError as exc:
                self.error = f"{self.path}: cannot write: {exc.strerror}"
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def finished(self) -> set[int]:
        return set(self.records)

    def write(self, record: dict[str, Any]) -> None:
        """Queue one record; it is on disk (written, flushed, fsync'd) within the time of one fsync."""
        line = json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n"
        with self._cond:
            if self._closing:
                raise HarnessError(f"{self.path}: log already closed")
            self.records[record["index"]] = record
            self._queue.append(line)
            self._cond.notify_all()

    def sync(self) -> None:
        """Wait until every queued record is written and fsync'd."""
        with self._cond:
            while self._queue or self._busy:
                self._cond.wait()

    def all_records(self) -> list[dict[str, Any]]:
        with self._lock:
            return [self.records[i] for i in sorted(self.records)]

    def close(self) -> None:
        with self._cond:
            if self._closing:
                return
            self._closing = True
            self._cond.notify_all()
        self._thread.join()
        self._file.close()
        atexit.unregister(self.close)
