"""The terminal display of a batch: one status line per submission (redrawn in place on a terminal); folder
names, states and reasons are the participants' and are printed with control characters escaped.

On a terminal every line is clipped to the terminal's width (read at each redraw, so a resize is followed): a
line that wrapped would take two rows, and the redraw, which moves the cursor up by the number of lines, would
then overwrite the wrong rows.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from harness.run import failures
from harness.text import printable

#: Longest status line written off a terminal (a log file).
LOG_LINE_MAX = 300
#: Seconds between redraws of a terminal's table while a run goes (`harness evaluate` waits as long between them).
TICK_S = 0.5
#: Widest submission-name column, in terminal cells (longer names are clipped with "…").
NAME_MAX = 32


def cells(ch: str) -> int:
    """Terminal cells one character takes: 0 for combining marks, 2 for wide (East Asian) characters, else 1."""
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def width_of(text: str) -> int:
    """Terminal cells `text` takes."""
    return sum(cells(c) for c in text)


def pad(text: str, width: int) -> str:
    """`text` followed by spaces up to `width` terminal cells."""
    return text + " " * max(0, width - width_of(text))


def clip(text: str, width: int) -> str:
    """`text` cut to at most `width` terminal cells, with "…" when cut."""
    if len(text) <= width and all(cells(c) == 1 for c in text):
        return text
    used, out = 0, []
    if width_of(text) <= width:
        return text
    for ch in text:
        w = cells(ch)
        if used + w > width - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + "…"


class Progress:
    """One status line per submission: dataset, state, instance counter, elapsed time, reason.

    On a terminal the block of lines is redrawn in place; otherwise a line is printed whenever a submission's
    state changes (so logs stay readable). Thread-safe: workers call `update`, the main thread `render`.
    """

    def __init__(self, stream: Any = None, tty: bool | None = None) -> None:
        import sys

        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.lines: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.drawn = 0
        self.width = 20

    def add(self, sub: str, dataset: str) -> None:
        with self.lock:
            self.lines[sub] = {"dataset": dataset, "state": "queued", "done": 0, "total": 0, "note": None,
                               "t0": time.monotonic(), "printed": None}
            wide = max(self.width, width_of(printable(sub)))
            self.width = min(NAME_MAX, wide) if self.tty else wide  # a log keeps whole names

    def update(self, sub: str, **changes: Any) -> None:
        with self.lock:
            line = self.lines.setdefault(sub, {"dataset": "", "state": "", "done": 0, "total": 0, "note": None,
                                               "t0": time.monotonic(), "printed": None})
            if changes.get("state") in ("checking", "building") and line["state"] == "queued":
                line["t0"] = time.monotonic()
            line.update({k: v for k, v in changes.items() if v is not None or k == "note"})
            final = str(line["state"]).split(" ")[0] in failures.STATUSES
            line["t_end"] = line.get("t_end") or time.monotonic() if final else None
            if not self.tty and line["printed"] != (line["dataset"], line["state"]):
                line["printed"] = (line["dataset"], line["state"])
                self.stream.write(self.format(sub, line) + "\n")
                self.stream.flush()

    def format(self, sub: str, line: dict[str, Any]) -> str:
        counter = f"{line['done']}/{line['total']}" if line["total"] else "-"
        text = (f"{pad(clip(printable(sub), self.width), self.width)}  {pad(printable(line['dataset']), 6)} "
                f"{pad(printable(line['state']), 18)} "
                f"{counter:>9}  {(line.get('t_end') or time.monotonic()) - line['t0']:6.1f}s")
        if line.get("note"):
            text += f"  {printable(line['note'])}"
        return text[:LOG_LINE_MAX]

    def columns(self) -> int:
        """The terminal's width: `COLUMNS` when set, else the width of the stream's terminal, else 80."""
        env = os.environ.get("COLUMNS", "")
        if env.isdigit() and int(env) > 0:
            return int(env)
        try:
            return os.get_terminal_size(self.stream.fileno()).columns or 80
        except (AttributeError, OSError, ValueError):
            return shutil.get_terminal_size((80, 24)).columns

    def render(self) -> None:
        if not self.tty:
            return
        with self.lock:
            # one cell short of the width: a line that fills the last column makes some terminals wrap
            width = max(10, self.columns() - 1)
            out = "".join(f"\x1b[{self.drawn}F" if self.drawn else "")
            out += "".join(f"\x1b[2K{clip(self.format(s, ln), width)}\n" for s, ln in self.lines.items())
            self.drawn = len(self.lines)
            self.stream.write(out)
            self.stream.flush()

    def close(self) -> None:
        self.render()

    @contextmanager
    def ticking(self, interval: float = TICK_S) -> Iterator[None]:
        """Redraw every `interval` seconds while the block runs (a terminal's elapsed times move between instance
        ends, as `harness evaluate`'s main loop redraws them); nothing off a terminal."""
        if not self.tty:
            yield
            return
        stop = threading.Event()

        def tick() -> None:
            while not stop.wait(interval):
                self.render()

        thread = threading.Thread(target=tick, name="harness-progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
