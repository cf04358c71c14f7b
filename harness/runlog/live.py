"""Tolerant reader of an instances.log that may still be written: live status, resume, instance pages.

It reads the log as a stream (one line at a time, bounded memory besides what the caller keeps) and applies the
one torn-line rule (`harness.runlog.torn`): a torn last line is left out; any other line that is not an instance
record is a `LogFormatError` naming the line, never skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import LogFormatError
from harness.runlog.torn import is_torn_tail


@dataclass
class LogScan:
    """What a scan found: records (or just statuses) by index, the byte length of the valid part, a torn tail."""

    statuses: dict[int, str] = field(default_factory=dict)
    errors: dict[int, str] = field(default_factory=dict)  # the server's reason for each instance that is not ok
    records: dict[int, dict[str, Any]] = field(default_factory=dict)
    valid_bytes: int = 0
    torn: bool = False


def scan(path: str | Path, keep_records: bool = False) -> LogScan:
    """Scan the complete lines of `path` (a missing file is an empty log)."""
    path = Path(path)
    out = LogScan()
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return out
    except OSError as exc:
        raise LogFormatError(f"{path}: cannot read ({exc.strerror})") from None
    with f:
        for lineno, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                if is_torn_tail(raw):
                    out.torn = True
                    break
                if not raw.strip():
                    out.valid_bytes += len(raw)
                    break
            if raw.strip():
                rec = _record(raw, path, lineno)
                status = out.statuses[rec["index"]] = str(rec.get("status") or "ok")
                if status != "ok":
                    out.errors[rec["index"]] = str(rec.get("error") or "")[:500]
                if keep_records:
                    out.records[rec["index"]] = rec
            out.valid_bytes += len(raw)
    return out


def _record(raw: bytes, path: Path, lineno: int) -> dict[str, Any]:
    try:
        rec = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise LogFormatError(f"{path}:{lineno}: not a JSON line") from None
    if not isinstance(rec, dict) or not isinstance(rec.get("index"), int) or isinstance(rec["index"], bool):
        raise LogFormatError(f"{path}:{lineno}: not an instance record (no integer 'index')")
    return rec


def read_statuses(path: str | Path) -> dict[int, str]:
    """index → status of every complete record (a torn last line is left out)."""
    return scan(path).statuses


def read_failures(path: str | Path) -> dict[int, tuple[str, str]]:
    """index → (status, the server's reason) of every complete record that is not ok."""
    found = scan(path)
    return {i: (found.statuses[i], found.errors[i]) for i in sorted(found.errors)}


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Every complete record, sorted by index (a torn last line is left out)."""
    found = scan(path, keep_records=True).records
    return [found[i] for i in sorted(found)]
