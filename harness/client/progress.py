"""Progress of a decode run on stderr: one line redrawn in place on a terminal, a start line elsewhere.

On a TTY the line is rewritten with `\\r` at most ten times a second, cut to the terminal's width (so it never
wraps); elsewhere (a log file, a container) only a start line is written and the caller prints the end line.
Costs one call per finished instance, nothing per action.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

REDRAW_S = 0.1


def _width(stream: TextIO) -> int:
    try:
        return int(os.environ.get("COLUMNS") or os.get_terminal_size(stream.fileno()).columns)
    except (OSError, ValueError, AttributeError):
        return 80


class DecodeProgress:
    """`label: done/total instances (errors), elapsed` on one line."""

    def __init__(self, label: str, total: int, stream: TextIO | None = None) -> None:
        self.label, self.total = label, total
        self.stream = stream if stream is not None else sys.stderr
        try:
            self.tty = self.stream.isatty()
        except (AttributeError, ValueError):
            self.tty = False
        self.width = _width(self.stream) if self.tty else 0
        self.t0 = self._last = time.monotonic()
        self.drawn = False

    def start(self) -> None:
        if self.tty:
            self._draw(0, 0)
        else:
            print(f"{self.label}: decoding {self.total} instance(s)", file=self.stream, flush=True)

    def update(self, done: int, errors: int) -> None:
        """One more instance finished; redraws on a TTY when the last redraw is old enough (or at the end)."""
        if not self.tty:
            return
        now = time.monotonic()
        if now - self._last >= REDRAW_S or done >= self.total:
            self._last = now
            self._draw(done, errors)

    def _draw(self, done: int, errors: int) -> None:
        text = f"{self.label}: {done}/{self.total} instances"
        if errors:
            text += f" ({errors} failed)"
        text += f", {time.monotonic() - self.t0:.0f} s"
        text = text[: max(1, self.width - 1)]
        self.stream.write("\r" + text + "\x1b[K")
        self.stream.flush()
        self.drawn = True

    def finish(self) -> None:
        """End the redrawn line so that the next output starts on a line of its own."""
        if self.tty and self.drawn:
            self.stream.write("\n")
            self.stream.flush()
