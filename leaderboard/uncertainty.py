"""Where a board's ranking is uncertain, from what the scoring stage wrote (nothing is computed here):

- rank clusters: inside each ranked table, runs next to each other whose primary-quality difference is not
  significant (the paired bootstrap of the significance file's `adjacent` tests, p ≥ 0.05) share a cluster, shown
  as WMT shows them: a rank range (`1–2`) for every run of the cluster;
- regime flags: a run whose regime-deciding primary latency (its `regime_from` run's, e.g. dev, else its own) has a
  95% interval that crosses a regime bound may belong to the neighbouring regime.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from leaderboard.model import Board, RegimeTable, Run, as_float

__all__ = ["ClusterRank", "table_clusters", "regime_flag", "adjacent_p_values", "cluster_level", "rank_chars"]

#: the level below which two runs differ significantly, when a significance file does not say
DEFAULT_LEVEL = 0.05
#: the widest rank (in characters) the stylesheet sizes a rank column for: `rank-ch2` to `rank-ch7` (`100–120`)
RANK_CH_MAX = 7


@dataclass(frozen=True)
class ClusterRank:
    """A run's place in its table: its cluster (1-based), the rank range the cluster spans, whether it shares the
    cluster with another run, and the p-value of its paired test with the run above it (None: first, or untested)."""

    cluster: int
    label: str
    shared: bool
    p_above: float | None


def adjacent_p_values(board: Board) -> dict[frozenset[str], float]:
    """{frozenset of two submission ids: p-value of their primary-quality paired test} from the significance file."""
    out: dict[frozenset[str], float] = {}
    tests = board.significance_file.get("adjacent")
    for entry in tests if isinstance(tests, list) else []:
        pair = entry.get("runs") if isinstance(entry, dict) else None
        test = entry.get(board.primary_quality) if isinstance(entry, dict) else None
        if (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
                and isinstance(test, dict) and (p := as_float(test.get("p_value"))) is not None):
            out[frozenset(pair)] = p
    return out


def cluster_level(board: Board) -> float:
    """The significance level of the board's rank clusters, as the scoring stage wrote it."""
    given = as_float(board.significance_file.get("cluster_level"))
    return given if given is not None and 0 < given < 1 else DEFAULT_LEVEL


def table_clusters(table: RegimeTable, p_values: dict[frozenset[str], float],
                   level: float = DEFAULT_LEVEL) -> list[ClusterRank]:
    """Each run of `table` (in its order) with its rank cluster: a new cluster starts below a run whose paired
    test with the next one is significant (p < `level`), or where no test was written."""
    clusters: list[list[int]] = []
    p_above: list[float | None] = []
    for i, run in enumerate(table.runs):
        p = p_values.get(frozenset((table.runs[i - 1].key, run.key))) if i else None
        p_above.append(p)
        if i == 0 or p is None or p < level:
            clusters.append([i])
        else:
            clusters[-1].append(i)
    out: list[ClusterRank | None] = [None] * len(table.runs)
    for n, members in enumerate(clusters, 1):
        first, last = members[0] + 1, members[-1] + 1
        label = f"{first}–{last}" if last > first else str(first)
        for i in members:
            out[i] = ClusterRank(n, label, len(members) > 1, p_above[i])
    return [c for c in out if c is not None]


def rank_chars(ranks: list[ClusterRank], runs: int) -> int:
    """The characters of a ranking table's widest rank (a cluster's `1–2`, else a plain rank up to `runs`), from 2
    to RANK_CH_MAX: the table's class `rank-chN` makes its rank column that wide, so a rank is one line and the
    submission column sticks right beside it."""
    widest = max([len(str(runs)), *(len(r.label) for r in ranks)])
    return max(2, min(widest, RANK_CH_MAX))


def _deciding_run(board: Board, run: Run, runs: list[Run]) -> Run | None:
    """The run whose primary latency places `run` in a regime: its `regime_from` run (same submission and track),
    else itself."""
    if board.regime_from is None:
        return run
    return next((r for r in runs if r.key == run.key and r.track == board.track and r.dataset == board.regime_from
                 and r.status == "ok" and not r.partial), None)


def _neighbour(board: Board, value: float) -> str:
    """The name of the regime that holds `value` ("no regime" when none does)."""
    track = board.config
    regime = track.regime_for(value) if track is not None else None
    return f"“{regime.name}”" if regime is not None else "outside every regime"


def regime_flag(board: Board, run: Run, runs: list[Run]) -> dict[str, Any] | None:
    """Why `run` may belong to another regime (its deciding latency's interval crosses a bound), else None."""
    if board.config is None or not board.config.regimes:
        return None
    decider = _deciding_run(board, run, runs)
    latency = board.primary_latency
    ci = decider.ci(latency) if decider is not None else None
    value = decider.score(latency) if decider is not None else None
    if ci is None or value is None:
        return None
    bounds = sorted({b for g in board.config.regimes for b in (g.min_latency, g.max_latency) if b is not None})
    for bound in bounds:
        if ci[0] < bound < ci[1]:
            where = "next" if bound >= value else "previous"
            # just above the bound for the next regime, the bound itself for the previous one (bands hold their max)
            other = _neighbour(board, bound + 1e-9 * max(1.0, abs(bound)) if where == "next" else bound)
            dataset = decider.dataset if decider is not None else run.dataset
            return {"bound": bound, "ci": ci, "dataset": dataset, "regime": other, "where": where,
                    "text": f"may belong to the {where} regime ({other}): its {dataset}-set {latency} 95% interval "
                            f"[{ci[0]:.4g}, {ci[1]:.4g}] crosses the bound {bound:g}"}
    return None
