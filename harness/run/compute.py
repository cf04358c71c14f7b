"""The participant's start-up time and real-time factor, from what the run recorded.

Start-up: seconds from the participant's start (its container's `State.StartedAt` as the engine records it, a
local process's launch, or for `harness run` the process's own start) to the first request the evaluation
server saw from it (`run.json`'s `first_request`, written by the server on its own clock: the first request of
the participant, or for an agent server the driver's first successful probe). Both clocks are the host's.

Compute: the time the participant held the turn, summed over the logged instances (each record's
`timing.client_s`: from each answer of the server to the participant's next request). The real-time factor
divides it by the source: seconds of audio for speech (RTF < 1 is faster than real time); for text, the source
words the server served (the records' `source_length`), i.e. compute seconds per source word.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any


def started_at(iso: str | None) -> float | None:
    """The engine's RFC 3339 `State.StartedAt` as epoch seconds (None when unset or unreadable)."""
    if not iso or iso.startswith("0001-"):
        return None
    try:
        return datetime.fromisoformat(iso).timestamp()
    except ValueError:
        return None


def process_started_at(pid: str = "self") -> float | None:
    """When a process started, epoch seconds (to a clock tick): now minus its age, from /proc (its start in
    ticks since boot, and the uptime); None where there is no /proc."""
    import os

    try:
        uptime = float(Path("/proc/uptime").read_text(encoding="utf-8").split()[0])
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
        ticks = int(stat.rsplit(")", 1)[1].split()[19])
        return time.time() - (uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


def startup(participant_started: float | None, first_request: Any) -> dict[str, Any] | None:
    """The start-up record of a run ({seconds, started_at, first_request_at, by}), None when either end is
    unknown (no request came, or the backend cannot say when the participant started)."""
    if participant_started is None or not isinstance(first_request, dict):
        return None
    at = first_request.get("at")
    if not isinstance(at, (int, float)):
        return None
    return {"seconds": round(max(0.0, float(at) - participant_started), 3), "started_at": round(participant_started, 3),
            "first_request_at": round(float(at), 3), "by": str(first_request.get("by") or "request")}


def compute(records: Iterable[dict[str, Any]], speech: bool) -> dict[str, Any] | None:
    """{participant_s, source, source_unit, rtf, instances} over the records that carry `timing.client_s`;
    None when none does (a log from elsewhere). `source` is seconds of audio (speech) or source words (text);
    `rtf` = participant_s / source."""
    total, source, n = 0.0, 0.0, 0
    for rec in records:
        timing = rec.get("timing")
        client = timing.get("client_s") if isinstance(timing, dict) else None
        length = rec.get("source_length")
        if not isinstance(client, (int, float)) or not isinstance(length, (int, float)):
            continue
        total += float(client)
        source += float(length) / 1000.0 if speech else float(length)
        n += 1
    if n == 0:
        return None
    return {"participant_s": round(total, 6), "source": round(source, 6), "source_unit": "s" if speech else "word",
            "rtf": round(total / source, 6) if source > 0 else None, "instances": n}
