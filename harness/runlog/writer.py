"""instances.log writer: one JSON line per finished instance, appended, then fsync'd in the background.

`write` appends the record's line (one write call, to the page cache) before it returns, so the server answers the
request that ended an instance only once its record can be read by anyone opening the file: a client that exits
right after its last answer never leaves the harness reading a log without that instance. The fsync runs on one
background thread, so the decode loop never waits on the disk; records written during an fsync share the next one.
A record not yet fsync'd when the machine goes down may be missing, and resume decodes that instance again.

On resume the existing log is read back (`harness.runlog.live.scan`): complete lines count as finished instances;
a torn last line is an interrupted write and is cut off, so that instance is decoded again.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from harness import layout
from harness.errors import HarnessError, LogFormatError
from harness.runlog.live import scan


class LogWriter:
    """Appends instance records durably; thread-safe. Lines are written by `write`, fsync'd by one background
    thread."""

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
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (0 if resume else os.O_TRUNC)
        self._fd = os.open(self.path, flags, 0o644)
        self._written = 0  # lines written so far
        self._synced = 0  # lines written before the last fsync began
        self._closing = False
        self.error: str | None = None
        self._thread = threading.Thread(target=self._loop, name="harness-log-writer", daemon=True)
        self._thread.start()
        atexit.register(self.close)  # a normal exit fsyncs what is written

    def _loop(self) -> None:
        while True:
            with self._cond:
                while self._synced == self._written and not self._closing:
                    self._cond.wait()
                if self._synced == self._written and self._closing:
                    return
                target = self._written
            try:
                os.fsync(self._fd)
            except OSError as exc:
                self._fail(exc)
            with self._cond:
                self._synced = target
                self._cond.notify_all()

    def _fail(self, exc: OSError) -> None:
        if self.error is None:
            self.error = f"{self.path}: cannot write: {exc.strerror}"
            print(f"harness: {self.error}", file=sys.stderr, flush=True)

    def finished(self) -> set[int]:
        return set(self.records)

    def write(self, record: dict[str, Any]) -> None:
        """Append one record's line (readable by others when this returns); it is fsync'd within one fsync."""
        line = json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n"
        with self._cond:
            if self._closing:
                raise HarnessError(f"{self.path}: log already closed")
            self.records[record["index"]] = record
            try:
                view = memoryview(line)
                while view:  # one call for a regular file; the loop only guards a short write
                    view = view[os.write(self._fd, view):]
            except OSError as exc:
                self._fail(exc)
            self._written += 1
            self._cond.notify_all()

    def sync(self) -> None:
        """Wait until every line written so far is fsync'd."""
        with self._cond:
            target = self._written
            while self._synced < target:
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
        os.close(self._fd)
        atexit.unregister(self.close)
