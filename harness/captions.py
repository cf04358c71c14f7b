"""Timed captions of a speech run's output (WebVTT, SRT): what a system wrote and when, for any video player.

A recording's output units are grouped into captions: one per reference sentence, by the same resegmentation as
scoring (the record's `longform.resegmentation`, SoftSegmenter by default, against its first reference set), or,
for output with no reference sentences (a short-form instance, a log read without a segmentation), one per fixed
window of `cue_ms` of the clock. A caption grows as it was written: a cue starts at each moment one of its units
was written and shows its units written by then, so a player shows each word from the moment it was written. The
last cue of a caption lasts until the next caption's first word, at most `hold_ms` after its own last word.

Two clocks, two files: non-computation-aware (each unit at its delay, ms of audio read) and computation-aware
(each unit at its elapsed time: audio read plus computing time). Times are rounded up to the millisecond, so no
word shows before it was written. A re-translating system's units show from the moment they became final (the
delays the metrics use).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.units import join_units, split_units

__all__ = ["FORMATS", "Cue", "growing_cues", "recording_captions", "write_captions", "webvtt", "srt"]

FORMATS = {"webvtt": ".vtt", "srt": ".srt"}
HOLD_MS = 5000.0
CUE_MS = 5000.0

Group = tuple[list[str], list[float]]  # a caption's units and their times (ms from the recording's start)


@dataclass(frozen=True)
class Cue:
    """One cue: shown from `start_ms` to `end_ms` (whole ms)."""

    start_ms: int
    end_ms: int
    text: str


def _caption_cues(units: list[str], times: list[int], end_ms: int, joiner_unit: str) -> list[Cue]:
    """The growing cues of one caption: from each distinct time, its units written by then, until the next."""
    events = sorted(set(times))
    cues = []
    for k, at in enumerate(events):
        upto = sum(1 for t in times if t <= at)
        until = events[k + 1] if k + 1 < len(events) else end_ms
        cues.append(Cue(at, until, join_units(units[:upto], joiner_unit)))
    return cues


def growing_cues(groups: Sequence[Group], unit: str = "word", hold_ms: float = HOLD_MS) -> list[Cue]:
    """The cues of captions `groups` (in order), each growing unit by unit; empty captions have none. A caption
    lasts until the next caption's first unit written after its own last one, at most `hold_ms` after it."""
    rounded = [[math.ceil(t - 1e-9) for t in times] for _, times in groups]
    starts = [min(times) for times in rounded if times]
    cues: list[Cue] = []
    for (units, _), times in zip(groups, rounded, strict=True):
        if not units:
            continue
        last = max(times)
        later = [s for s in starts if s > last]
        end = min([last + max(1, math.ceil(hold_ms))] + later[:1])
        cues.extend(_caption_cues(units, times, end, unit))
    cues.sort(key=lambda c: (c.start_ms, c.end_ms))
    return cues


def _sentence_groups(record: dict[str, Any], clock: str, unit: str) -> list[Group] | None:
    """The units of each reference sentence of a long-form record (by its resegmentation) at their times on
    `clock` (`delays` or `elapsed`); None when the record has no such times."""
    from harness.scoring.longform import resegment_run

    info = record["longform"]
    sets = list(info.get("sentences") or {})
    if not sets:
        raise HarnessError(f"instance {record.get('index')}: a long-form record without reference sentences")
    outputs = resegment_run([record], str(info.get("resegmentation") or "softsegmenter"), sets[0], unit,
                            lang=info.get("target_lang"))[0]
    groups: list[Group] = []
    for out in outputs:
        times = out.delays if clock == "delays" else out.elapsed
        if times is None:
            return None
        groups.append((list(out.units), [t + out.sentence.offset_ms for t in times]))
    return groups


def _window_groups(units: list[str], times: list[float], cue_ms: float) -> list[Group]:
    """The units written in each window of `cue_ms` of the clock (in stream order)."""
    groups: dict[int, Group] = {}
    for u, t in zip(units, times, strict=True):
        words, at = groups.setdefault(int(t // cue_ms), ([], []))
        words.append(u)
        at.append(t)
    return [groups[k] for k in sorted(groups)]


def recording_captions(record: dict[str, Any], clock: str, unit: str = "word", *, cue_ms: float | None = None,
                       hold_ms: float = HOLD_MS) -> list[Cue] | None:
    """The cues of one record on `clock` (`delays`: not computation-aware; `elapsed`: computation-aware): by its
    reference sentences when it is long-form and `cue_ms` is None, else by fixed windows of `cue_ms` (default
    `CUE_MS`). None when the record has no times on that clock (no elapsed times in the log)."""
    units = split_units(str(record.get("prediction") or ""), unit)
    times = [float(t) for t in (record.get(clock) or [])]
    if len(times) != len(units):
        if clock == "elapsed" and not times:
            return None
        raise HarnessError(f"instance {record.get('index')}: {len(units)} output units but {len(times)} {clock}")
    if isinstance(record.get("longform"), dict) and cue_ms is None:
        groups = _sentence_groups(record, clock, unit)
        if groups is None:
            return None
    else:
        groups = _window_groups(units, times, cue_ms or CUE_MS)
    return growing_cues(groups, unit, hold_ms)


def _stamp(ms: int, sep: str) -> str:
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, milli = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}{milli:03d}"


def webvtt(cues: Sequence[Cue]) -> str:
    """A WebVTT file of `cues` (cue text escaped: `&`, `<`, `>`)."""
    out = ["WEBVTT", ""]
    for n, c in enumerate(cues, 1):
        text = c.text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        out += [str(n), f"{_stamp(c.start_ms, '.')} --> {_stamp(c.end_ms, '.')}", text, ""]
    return "\n".join(out)


def srt(cues: Sequence[Cue]) -> str:
    """A SubRip file of `cues` (an arrow `-->` inside a cue's text gets a zero-width space, so no reader takes it
    for a timing line)."""
    out = []
    for n, c in enumerate(cues, 1):
        out += [str(n), f"{_stamp(c.start_ms, ',')} --> {_stamp(c.end_ms, ',')}", c.text.replace("-->", "--\u200b>"),
                ""]
    return "\n".join(out)


def _name(record: dict[str, Any], taken: set[str]) -> str:
    """A file name for a record's captions: its recording's name (long-form) or its audio's, else its index."""
    info = record["longform"] if isinstance(record.get("longform"), dict) else {}
    source = record.get("source")
    name = str(info.get("recording") or "") or (Path(str(source[0])).stem if isinstance(source, list) and source
                                                 else "")
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip(".") or str(record.get("index"))
    if name in taken:
        name = f"{name}-{record.get('index')}"
    taken.add(name)
    return name


def write_captions(records: Sequence[dict[str, Any]], folder: Path, fmt: str, unit: str = "word", *,
                   cue_ms: float | None = None, hold_ms: float = HOLD_MS) -> dict[str, Path]:
    """Per record, `NAME.vtt` (not computation-aware) and `NAME.ca.vtt` (computation-aware; left out when the log
    has no elapsed times), or `.srt`; returns {label: path}. Text records (no audio clock) are refused."""
    if any(not isinstance(r.get("source"), list) for r in records):
        raise HarnessError("captions need a speech run (times in ms of audio): this log's sources are text")
    folder.mkdir(parents=True, exist_ok=True)
    write = webvtt if fmt == "webvtt" else srt
    paths: dict[str, Path] = {}
    taken: set[str] = set()
    for rec in records:
        name = _name(rec, taken)
        for clock, suffix in (("delays", ""), ("elapsed", ".ca")):
            cues = recording_captions(rec, clock, unit, cue_ms=cue_ms, hold_ms=hold_ms)
            if cues is None:
                continue
            path = folder / f"{name}{suffix}{FORMATS[fmt]}"
            path.write_text(write(cues), encoding="utf-8")
            paths[f"{name}{' (computation-aware)' if suffix else ''}"] = path
    return paths
