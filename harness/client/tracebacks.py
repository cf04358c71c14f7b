"""Tracebacks of a participant's agent without the harness's own frames (the agent's and its libraries' only)."""

from __future__ import annotations

import traceback
from pathlib import Path

_HARNESS_DIR = str(Path(__file__).resolve().parents[1])


def _agent_frames(exc: BaseException) -> list[traceback.FrameSummary]:
    """The frames of `exc`'s traceback outside the harness package and Python's import machinery."""
    return [f for f in traceback.extract_tb(exc.__traceback__)
            if not f.filename.startswith("<frozen ") and not str(Path(f.filename).resolve()).startswith(_HARNESS_DIR)]


def agent_traceback(exc: BaseException) -> str:
    """The traceback of `exc`, leaving out every frame in the harness package and of importlib ("" header when
    none is left)."""
    frames = _agent_frames(exc)
    lines = ["Traceback (most recent call last):\n"] if frames else []
    lines += traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    return "".join(lines)


def raised_at(exc: BaseException) -> str:
    """Where the agent raised `exc`: `agent.py, line 7, in policy` (its innermost frame outside the harness), or ""
    when no frame of the agent is in the traceback (the harness raised it about what the agent returned)."""
    frames = _agent_frames(exc)
    if not frames:
        return ""
    f = frames[-1]
    return f"{Path(f.filename).name}, line {f.lineno}, in {f.name}"


def syntax_error_line(path: Path, exc: SyntaxError) -> str:
    """`agent.py:2: SyntaxError: invalid syntax` (the file, the line and what is wrong: one line)."""
    where = f"{exc.filename or path}:{exc.lineno}" if exc.lineno else str(exc.filename or path)
    return f"{where}: {type(exc).__name__}: {exc.msg}"
