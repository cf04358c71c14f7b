"""What the audio-synchronised replay of a speech instance or long-form recording shows (`static/replay.js`).

The replay plays the source audio (or, when the site holds no audio, a silent clock) and shows the output as it
was written: a lane per clock, the non-computation-aware one (a word appears when its delay, ms of audio read, is
reached) and the computation-aware one (when its elapsed time is). Each lane is a list of spans
`[text, shown_ms, erased_ms or None]` in the order they were written: an incremental system's words are never
erased; a re-translating system's revisions erase the words they replace (struck through from that moment on) and
add theirs after them, so at any time the spans shown and not struck are exactly the revision current then.
"""

from __future__ import annotations

import math
from typing import Any

from harness.text import printable
from harness.units import common_prefix, split_units
from leaderboard.safe import PAGE_TEXT_MAX, cap

WORD_MAX = 100  # characters of one word on the page
RECORDING_TEXT_MAX = 400_000  # characters of a long-form recording's lane (an instance page's: PAGE_TEXT_MAX)

Span = list[Any]  # [text, shown ms, erased ms or None]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    f = float(value)
    return f if math.isfinite(f) else None


def _word(text: str) -> str:
    return cap(printable(text), WORD_MAX)


class _Spans(list[Span]):
    """A lane's spans, up to `limit` characters of text (`cut`: some were left out)."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.left = limit
        self.cut = False

    def add(self, word: str, t: float) -> bool:
        """Append a span shown at `t`; False (and `cut`) once the lane is full."""
        text = _word(word)
        if len(text) + 1 > self.left:
            self.cut = True
            return False
        self.left -= len(text) + 1
        self.append([text, t, None])
        return True


def incremental_spans(words: list[str], times: list[Any], limit: int = PAGE_TEXT_MAX) -> _Spans | None:
    """One span per written word at its time; None when the times are missing or not one number per word."""
    nums = [_number(t) for t in times]
    if len(nums) != len(words) or any(t is None for t in nums):
        return None
    spans = _Spans(limit)
    for w, t in zip(words, nums, strict=True):
        if t is None or not spans.add(w, t):
            break
    return spans


def revision_spans(revisions: list[Any], key: str, unit: str, limit: int = PAGE_TEXT_MAX) -> _Spans | None:
    """The spans of a re-translation: each revision (its time under `key`: `delay` or `elapsed`) erases the words
    of the one before that it does not keep (their common prefix stays) and adds its own. None when a revision
    has no such time."""
    spans = _Spans(limit)
    live: list[int] = []  # the spans of the current revision, in order
    prev: list[str] = []
    for rev in revisions:
        t = _number(rev.get(key)) if isinstance(rev, dict) else None
        if t is None:
            return None
        cur = split_units(str(rev.get("text") or "")[:limit], unit)
        keep = common_prefix(prev, cur)
        for i in live[keep:]:
            spans[i][2] = t
        live = live[:keep]
        for word in cur[keep:]:
            live.append(len(spans))
            if not spans.add(word, t):
                return spans
        prev = cur
    return spans


def _lanes(record: dict[str, Any], unit: str, limit: int) -> list[dict[str, Any]]:
    revisions = record.get("revisions")
    lanes = []
    for lane, key, label in (("nca", "delays", "Not computation-aware: each word when its audio had been read"),
                             ("ca", "elapsed", "Computation-aware: each word when it was written (audio read plus "
                                               "computing time)")):
        if isinstance(revisions, list) and revisions:
            spans = revision_spans(revisions, "delay" if key == "delays" else "elapsed", unit, limit)
        else:
            words = split_units(str(record.get("prediction") or ""), unit)
            spans = incremental_spans(words, list(record.get(key) or []), limit)
        lanes.append({"id": lane, "label": label, "spans": list(spans or []), "missing": spans is None,
                      "cut": bool(spans is not None and spans.cut)})
    return lanes


def replay_data(record: dict[str, Any], audio: str | None, unit: str = "word",
                sentences: list[dict[str, Any]] | None = None, limit: int = PAGE_TEXT_MAX) -> dict[str, Any]:
    """The JSON of one replay: the recording's length, the audio's address relative to the page (None: a silent
    clock), the two lanes of target units (`unit`: `word` or `char`, the track's; at most `limit` characters of
    text each, so a page stays bounded), the joiner of those units, and (long-form) the reference sentences by
    time."""
    unit = "char" if unit == "char" else "word"
    lanes = _lanes(record, unit, limit)
    length = _number(record.get("source_length")) or 0.0
    times = [s[1] for lane in lanes for s in lane["spans"]] + [s[2] for lane in lanes for s in lane["spans"]
                                                                if s[2] is not None]
    return {
        "lengthMs": length,
        "endMs": max([length, 1.0] + times),
        "audio": audio,
        "joiner": "" if unit == "char" else " ",
        "revised": bool(record.get("revisions")),
        "lanes": lanes,
        "sentences": [[s["start_ms"], s["end_ms"], s["n"], s["reference"]] for s in sentences or []],
    }
