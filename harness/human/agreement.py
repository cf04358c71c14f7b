"""Inter-rater agreement and system-level correlation for human judgments."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

__all__ = ["krippendorff_alpha_interval", "pearson", "spearman"]


def krippendorff_alpha_interval(ratings: Sequence[tuple[str, str, float]]) -> float | None:
    """Krippendorff's alpha with the interval metric, from (rater, item, value) triples.

    Items rated by fewer than two raters carry no pairable value and are left out; None when fewer than two
    pairable values remain or when every value is the same (no variation to agree on).
    """
    by_item: dict[str, list[float]] = defaultdict(list)
    for _, item, value in ratings:
        by_item[item].append(float(value))
    units = [vals for vals in by_item.values() if len(vals) >= 2]
    n = sum(len(vals) for vals in units)
    if n < 2:
        return None
    # observed disagreement: within-unit pairs, weighted by 1/(m_u - 1)
    d_o = 0.0
    for vals in units:
        m = len(vals)
        d_o += sum((a - b) ** 2 for i, a in enumerate(vals) for j, b in enumerate(vals) if i != j) / (m - 1)
    d_o /= n
    # expected disagreement: all pairs of pairable values
    pooled = [v for vals in units for v in vals]
    total = sum(pooled)
    sq = sum(v * v for v in pooled)
    d_e = (2 * n * sq - 2 * total * total) / (n * (n - 1))
    if d_e == 0:
        return None
    return 1.0 - d_o / d_e


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r; None for fewer than three points or no variation."""
    if len(xs) < 3:
        return None
    mx, my = math.fsum(xs) / len(xs), math.fsum(ys) / len(ys)
    sxy = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    syy = math.fsum((y - my) ** 2 for y in ys)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else None


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rho (Pearson's r of the ranks, ties averaged)."""
    return pearson(_ranks(xs), _ranks(ys)) if len(xs) >= 3 else None
