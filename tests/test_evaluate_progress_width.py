"""The live `harness evaluate` table on a real 80-column terminal (a pty): every line fits, so the redraw, which
moves the cursor up by the number of lines, lands on the table's own rows (issue 9, item 12)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import termios
from collections.abc import Iterator

import pytest

from harness.batch.progress import Progress, cells, clip

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, object]]:
    """(master fd, the slave side as a text stream) of a pty set to 80 columns × 24 rows."""
    monkeypatch.delenv("COLUMNS", raising=False)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.OPOST  # what the program writes is what the master reads (no \n → \r\n)
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    stream = os.fdopen(slave, "w", encoding="utf-8")
    yield master, stream
    stream.close()
    os.close(master)


def read_all(master: int) -> str:
    os.set_blocking(master, False)
    data = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        data += chunk
    return data.decode("utf-8")


def test_every_line_fits_an_80_column_terminal(terminal: tuple[int, object]) -> None:
    master, stream = terminal
    p = Progress(stream=stream)
    assert p.tty
    p.add("team-with-a-rather-long-submission-name", "test")
    p.add("短い名前のチーム", "test")
    p.update("team-with-a-rather-long-submission-name", state="crash",
             note="exit code 127 after 0/40 instances: " + "x" * 150)
    p.update("短い名前のチーム", state="running", note="翻訳" * 60, done=3, total=40)
    p.render()
    p.render()
    out = read_all(master)
    rows = [ANSI.sub("", row) for row in out.split("\n") if row]
    assert len(rows) == 4, rows  # two draws of two lines, none wrapped onto a second row
    assert all(sum(cells(c) for c in row) < 80 for row in rows), [sum(cells(c) for c in r) for r in rows]
    assert out.count("\x1b[2F") == 1  # the second draw moves up exactly the two rows of the first
    assert rows[2].endswith("…") and "3/40" in rows[3]


def test_clip_counts_terminal_cells() -> None:
    assert clip("abc", 10) == "abc"
    assert clip("a" * 20, 10) == "a" * 9 + "…"
    wide = clip("翻" * 20, 10)
    assert wide == "翻" * 4 + "…" and sum(cells(c) for c in wide) <= 10
    assert clip("e\u0301" * 12, 12) == "e\u0301" * 12  # combining accents take no cell
