"""instances.log writer: one JSON line per finished instance, appended, flushed and fsync'd.

On resume the existing log is read back: complete lines count as finished instances; a torn last line (no
trailing newline, or not JSON) is an interrupted write and is cut off, so that instance is decoded again.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from harness.errors import HarnessError

LOG_NAME = "instances.log"


def read_finished(path: Path) -> tuple[dict[int, dict[str, Any]], int]:
    """Records of a log by index, and the byte length of its valid part (a torn last line is excluded).

    The last line is torn when it has no trailing newline or is not a JSON record; any other bad line is an
    error naming the file and line.
    """
    records: dict[int, dict[str, Any]] = {}
    data = Path(path).read_bytes()
    lines = data.split(b"\n")  # the final element is b"" when the file ends with a newline
    good = 0
    for lineno, raw in enumerate(lines, 1):
        is_last = lineno >= len(lines) - 1 and not any(rest.strip() for rest in lines[lineno:])
        if lineno == len(lines):  # text after the final newline: a line without its newline
            break
        try:
            rec = json.loads(raw)
            if not isinstance(rec, dict) or not isinstance(rec.get("index"), int) or isinstance(rec["index"], bool):
                raise ValueError("not an instance record")
        except ValueError:
            if is_last:
                break
            raise HarnessError(f"{path}: line {lineno}: not a valid instance record; cannot resume") from None
        records[rec["index"]] = rec
        good += len(raw) + 1
    return records, good


class LogWriter:
    """Appends instance records durably; thread-safe."""

    def __init__(self, output: Path, resume: bool = False, overwrite: bool = False) -> None:
        self.output = Path(output)
        self.path = self.output / LOG_NAME
        self._lock = threading.Lock()
        self.records: dict[int, dict[str, Any]] = {}
        self.torn = False
        try:
            self.output.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise HarnessError(f"{self.output}: cannot create output folder: {exc.strerror}") from None
        exists = self.path.exists() and self.path.stat().st_size > 0
        if exists and resume:
            self.records, good = read_finished(self.path)
            if good != self.path.stat().st_size:
                self.torn = True
                with open(self.path, "r+b") as f:
                    f.truncate(good)
                    f.flush()
                    os.fsync(f.fileno())
        elif exists and not overwrite:
            raise HarnessError(f"{self.path} already exists; pass --resume to continue it or --overwrite")
        self._file = open(self.path, "ab" if resume else "wb")

    def finished(self) -> set[int]:
        return set(self.records)

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()
            os.fsync(self._file.fileno())
            self.records[record["index"]] = record

    def all_records(self) -> list[dict[str, Any]]:
        with self._lock:
            return [self.records[i] for i in sorted(self.records)]

    def close(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.close()
