"""The last lines of a log: a participant's output (client.log), as shown with every failed run, and the server's
(server.log) in a reason when it died or never answered. For client.log: the cause of a crash
(`/bin/sh: 1: harnes: not found`, `No module named 'simuleval'`) is usually there and nowhere else."""

from __future__ import annotations

from pathlib import Path

from harness.text import printable

#: Lines of client.log shown with a failed run, and the most characters of each.
TAIL_LINES = 5
TAIL_WIDTH = 200
_READ_BYTES = 64 * 1024


def last_lines(path: Path, n: int = TAIL_LINES, width: int = TAIL_WIDTH) -> list[str]:
    """The last `n` non-blank lines of a log, each `printable` and at most `width` characters ([] when the file
    is missing or empty). Reads only the end of the file."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - _READ_BYTES))
            data = f.read()
    except OSError:
        return []
    lines = [ln.rstrip() for ln in data.decode("utf-8", errors="replace").splitlines() if ln.strip()]
    if size > _READ_BYTES and lines:
        lines = lines[1:]  # the first line read may be the end of a longer one
    return [_cap(printable(ln), width) for ln in lines[-n:]]


def log_tail(path: Path, n: int = 300) -> str:
    """The end of a log as one line of at most `n` characters, for a reason ("" when it cannot be read)."""
    text = " ".join(" ".join(line.split()) for line in last_lines(path, TAIL_LINES, n))
    return text[-n:]


def _cap(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
