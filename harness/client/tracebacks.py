"""Tracebacks of a participant's agent without the harness's own frames (the agent's and its libraries' only)."""

from __future__ import annotations

import traceback
from pathlib import Path

_HARNESS_DIR = str(Path(__file__).resolve().parents[1])


def agent_traceback(exc: BaseException) -> str:
    """The traceback of `exc`, leaving out every frame in the harness package ("" header when none is left)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not str(Path(f.filename).resolve()).startswith(_HARNESS_DIR)]
    lines = ["Traceback (most recent call last):\n"] if frames else []
    lines += traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    return "".join(lines)
