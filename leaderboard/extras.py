"""The index page's per-board additions, gathered in one place for the renderer: per-domain tables and plots
(`leaderboard.domains`)."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from leaderboard.domains import domain_plots, domain_tables
from leaderboard.model import Board

__all__ = ["board_extras"]


def board_extras(boards: list[Board]) -> dict[str, Any]:
    """Template context keyed by board slug: `domain_tables`, `domain_plots` ((domain, optional, SVG) each; every
    text in an SVG is escaped by leaderboard.svg)."""
    return {
        "domain_tables": {b.slug: domain_tables(b) for b in boards},
        "domain_plots": {b.slug: [(d, opt, Markup(svg) if svg else None) for d, opt, svg in domain_plots(b)]
                         for b in boards},
    }
