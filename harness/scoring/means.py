"""Means of per-instance (or per-sentence) values with bootstrap intervals: the latency step that short- and
long-form scoring share. Every interval comes from the same resamples (`counts`, sacrebleu's seeded draw)."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["clip_interval", "mean_records", "value_blocks"]


def value_blocks(columns: list[Any]) -> tuple[Any, Any]:
    """(values with NaN as 0, validity as 0/1), both (n, k) float64, of per-instance value columns: what the
    resample counts multiply to get every resample's sums and denominators."""
    import numpy as np

    values = np.stack(columns, axis=1)
    valid = ~np.isnan(values)
    return np.where(valid, values, 0.0), valid.astype(np.float64)


def mean_records(columns: list[Any], counts: Any, resampled: Any = None
                 ) -> list[tuple[float | None, list[float] | None]]:
    """Per column of per-instance values: the mean over its non-NaN values and its bootstrap 95% interval.

    `resampled` is `counts @ hstack(value_blocks(columns))` when the caller computed it with other metrics' sums
    in one pass; else it is computed here.
    """
    import numpy as np

    out: list[tuple[float | None, list[float] | None]] = []
    if not columns:
        return out
    values = np.stack(columns, axis=1)
    valid = ~np.isnan(values)
    k_all = values.shape[1]
    sums = denoms = None
    if counts is not None:
        if resampled is None:
            resampled = counts @ np.hstack(value_blocks(columns))
        sums, denoms = resampled[:, :k_all], resampled[:, k_all:]
    for k in range(k_all):
        ok_rows = valid[:, k]
        if not ok_rows.any():
            out.append((None, None))
            continue
        score = math.fsum(values[ok_rows, k]) / int(ok_rows.sum())
        if sums is None or denoms is None:
            out.append((score, None))
            continue
        ok = denoms[:, k] > 0
        means = np.sort(sums[ok, k] / denoms[ok, k])
        lo = len(means) // 40
        out.append((score, [float(means[lo]), float(means[len(means) - lo - 1])]))
    return out


def clip_interval(key: str, score: float | None, ci: list[float] | None) -> list[float] | None:
    """`ci` of metric `key` with its bounds raised to the metric's floor (`metric_registry.interval_floor`: 0 for an
    unsigned latency) when the score itself is not below it; a score below the floor keeps its interval as is."""
    from harness.metric_registry import interval_floor

    floor = interval_floor(key)
    if ci is None or score is None or floor is None or score < floor:
        return ci
    return [max(ci[0], floor), max(ci[1], floor)]
