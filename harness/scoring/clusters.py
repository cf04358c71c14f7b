"""Which runs of a board are neighbours in its ranking, so that the scoring stage tests each pair for significance
and the leaderboard can put runs whose difference is not significant in one rank cluster (as WMT reports them).

The board's tables are those the leaderboard shows: one per regime (a run is in every regime whose band holds the
latency that places it: its `regime_from` run's primary latency, else its own), one of the runs no regime holds,
or one table of every run without regimes; each ranked by primary quality, complete runs first (the order of
`harness.scoring.results.best_run`). A pair is adjacent when it is next to each other in some table.
"""

from __future__ import annotations

from typing import Any

from harness.config import Track
from harness.metric_registry import REGISTRY

__all__ = ["adjacent_pairs", "regime_latencies", "SIGNIFICANCE_LEVEL"]

#: two runs whose paired test's p-value is below this differ significantly (a new rank cluster starts)
SIGNIFICANCE_LEVEL = 0.05


def _number(run: dict[str, Any], key: str) -> float | None:
    rec = (run.get("scores") or {}).get(key)
    value = rec.get("score") if isinstance(rec, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def regime_latencies(track: Track, board: list[dict[str, Any]], runs: list[dict[str, Any]]) -> dict[str, float]:
    """{submission: the latency that places it in a regime} for the board's runs: its complete run's primary
    latency on the track's `regime_from` dataset, else its own run's."""
    if track.regime_from is None:
        return {r["submission"]: v for r in board if (v := _number(r, track.primary_latency)) is not None}
    out: dict[str, float] = {}
    for r in runs:
        if (r.get("track") == track.name and r.get("dataset") == track.regime_from and r.get("status") == "ok"
                and not r.get("partial") and _number(r, track.primary_quality) is not None
                and (v := _number(r, track.primary_latency)) is not None):
            out[str(r.get("submission"))] = v
    return out


def _ranked(track: Track, runs: list[dict[str, Any]]) -> list[str]:
    up = REGISTRY[track.primary_quality].higher_is_better if track.primary_quality in REGISTRY else True

    def key(r: dict[str, Any]) -> tuple[bool, float, str]:
        q = _number(r, track.primary_quality) or 0.0
        return (r.get("status") != "ok" or bool(r.get("partial")), -q if up else q, str(r["submission"]))

    return [r["submission"] for r in sorted(runs, key=key)]


def _tables(track: Track, scored: list[dict[str, Any]], latency: dict[str, float]) -> list[list[str]]:
    if not track.regimes:
        return [_ranked(track, scored)]
    tables: list[list[str]] = []
    placed: set[str] = set()
    for regime in sorted(track.regimes, key=lambda g: g.max_latency):
        inside = [r for r in scored if (v := latency.get(r["submission"])) is not None and regime.holds(v)]
        placed.update(r["submission"] for r in inside)
        tables.append(_ranked(track, inside))
    tables.append(_ranked(track, [r for r in scored if r["submission"] not in placed]))
    return tables


def adjacent_pairs(track: Track, scored: list[dict[str, Any]], runs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(better, next) submission ids of every pair adjacent in one of the board's tables, each pair once.

    `scored`: the board's runs that are ranked (scored, open models, regime decided); `runs`: every run of the
    batch (for `regime_from`)."""
    latency = regime_latencies(track, scored, runs)
    pairs: list[tuple[str, str]] = []
    for table in _tables(track, scored, latency):
        for pair in zip(table, table[1:], strict=False):
            if pair not in pairs:
                pairs.append(pair)
    return pairs
