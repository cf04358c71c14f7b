"""Degenerate-policy diagnostics of short-form runs (OmniSTEval 0.1.10's `ShortformDegeneracyScorer`).

A simultaneous policy is degenerate when it games the segment-level latency metrics: e.g. it writes nothing until
the end of each segment except a few early words, so that YAAL looks low while almost nothing is simultaneous.

- SWF (simultaneous words fraction): percent of all output words written before their segment's source ended;
- EFSW (expected fraction of simultaneous words): percent of the source that lies before each instance's YAAL,
  `100 · Σ max(0, |X| − YAAL) / Σ |X|` over instances that have a YAAL;
- DSPTV (degenerate simultaneous policy test value): EFSW − SWF;
- DegeneratePolicy: 1 when |DSPTV| > 20 points, else 0.

All four are corpus-level (micro-averaged) and have no bootstrap interval.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from itertools import repeat

__all__ = ["DEGENERACY_METRICS", "THRESHOLD", "degeneracy"]

DEGENERACY_METRICS = ("SWF", "EFSW", "DSPTV", "DegeneratePolicy")
THRESHOLD = 20.0


def degeneracy(
    delays: Sequence[Sequence[float]], source_lengths: Sequence[float], yaal: Sequence[float | None]
) -> dict[str, float | None]:
    """The four diagnostics of a run's instances; None everywhere when no instance wrote anything."""
    simultaneous = words = 0
    efsw_num = efsw_den = 0.0
    for ds, src, y in zip(delays, source_lengths, yaal, strict=True):
        simultaneous += sum(map(operator.lt, ds, repeat(src)))  # how many d < src
        words += len(ds)
        if y is not None and not math.isnan(y):
            efsw_num += max(0.0, src - y)
            efsw_den += src
    if words == 0:
        return dict.fromkeys(DEGENERACY_METRICS)
    swf = 100.0 * simultaneous / words
    efsw = 100.0 * efsw_num / efsw_den if efsw_den > 0 else None
    dsptv = efsw - swf if efsw is not None else None
    flag = None if dsptv is None else float(abs(dsptv) > THRESHOLD)
    return {"SWF": swf, "EFSW": efsw, "DSPTV": dsptv, "DegeneratePolicy": flag}
