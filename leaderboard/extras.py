"""The index page's per-board additions, gathered in one place for the renderer: per-domain tables and plots
(`leaderboard.domains`), rank clusters and regime flags (`leaderboard.uncertainty`)."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from leaderboard.domains import domain_plots, domain_tables
from leaderboard.model import Board, Results
from leaderboard.uncertainty import adjacent_p_values, cluster_level, regime_flag, table_clusters

__all__ = ["board_extras"]


def _clusters(board: Board) -> list[Any]:
    """The ClusterRank of each run of each regime table (in `board.regimes` order)."""
    p_values = adjacent_p_values(board)
    return [table_clusters(table, p_values, cluster_level(board)) for table in board.regimes]


def board_extras(results: Results) -> dict[str, Any]:
    """Template context keyed by board slug: `domain_tables`, `domain_plots` ((domain, optional, SVG) each; every
    text in an SVG is escaped by leaderboard.svg), `clusters` (per regime table, its runs' ranks) and `regime_flags`
    ({submission id: flag} of the ranked runs that may belong to another regime)."""
    boards = results.boards
    return {
        "clusters": {b.slug: _clusters(b) for b in boards},
        "regime_flags": {b.slug: {r.key: flag for r in b.scored if (flag := regime_flag(b, r, results.runs))}
                         for b in boards},
        "domain_tables": {b.slug: domain_tables(b) for b in boards},
        "domain_plots": {b.slug: [(d, opt, Markup(svg) if svg else None) for d, opt, svg in domain_plots(b)]
                         for b in boards},
    }
