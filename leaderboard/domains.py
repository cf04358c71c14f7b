"""Per-domain results of a board, as the scoring stage wrote them (`domains` in each run's scores.json).

The index shows, under a board, a table of each ranked run's primary quality and latency per domain (the main
domains, then the optional ones in a table apart; closed-model runs, ranked apart, are not in it) and lets its plot
switch to one domain. Nothing is ranked here:
the rows keep the board's order, and optional domains never change it (the scoring stage leaves them out of the
top-level scores every board ranks by).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from leaderboard.model import Board, Run, slugify
from leaderboard.plots import quality_latency_svg
from leaderboard.safe import cap

__all__ = ["DomainTable", "domain_tables", "domain_plots", "run_domains"]

#: domains the plot can switch to (leaderboard/static/style.css shows the switch's first 12 plots: main + 11)
MAX_PLOTS = 11


def run_domains(run: Run) -> dict[str, dict[str, Any]]:
    """{domain: its scores object} of a run ({} when its scores have no domains)."""
    given = run.scores.get("domains")
    if not isinstance(given, dict):
        return {}
    return {cap(str(name)): rec for name, rec in given.items() if isinstance(rec, dict)}


@dataclass
class DomainTable:
    """The board's runs (in its order) by domain: `cells[slug][domain]` is the run in that domain (its scores)."""

    optional: bool
    domains: list[str]
    runs: list[Run]
    counts: dict[str, int]

    def cell(self, run: Run, domain: str) -> Run | None:
        """`run` as its scores in `domain` say (None when it has none there)."""
        scores = run_domains(run).get(domain)
        return replace(run, scores=scores) if scores else None


def _domains_of(runs: list[Run]) -> dict[str, tuple[bool, int]]:
    """{domain: (optional, instances)} over `runs`, in the order they first appear."""
    out: dict[str, tuple[bool, int]] = {}
    for run in runs:
        for name, rec in run_domains(run).items():
            counts = given if isinstance(given := rec.get("counts"), dict) else {}
            n = given if isinstance(given := counts.get("instances"), int) else 0
            out.setdefault(name, (rec.get("optional") is True, n))
    return out


def domain_tables(board: Board) -> list[DomainTable]:
    """The main domains' table and the optional domains' table of `board` (each only when it has a domain)."""
    runs: list[Run] = []
    for r in [r for table in board.regimes for r in table.runs]:
        if not any(r is seen for seen in runs):  # a run of nested regimes is in several tables
            runs.append(r)
    found = _domains_of(runs)
    tables = []
    for optional in (False, True):
        names = [d for d, (opt, _) in found.items() if opt is optional]
        if names:
            tables.append(DomainTable(optional, names, runs, {d: found[d][1] for d in names}))
    return tables


def _domain_board(board: Board, domain: str) -> Board:
    """`board` with every run's scores replaced by its scores in `domain` (for the plot)."""
    runs = [replace(r, scores=run_domains(r).get(domain) or {}) for r in board.runs]
    by_key = {r.key: r for r in runs}
    regimes = [replace(t, runs=[by_key[r.key] for r in t.runs]) for t in board.regimes]
    return replace(board, runs=runs, regimes=regimes)


def domain_plots(board: Board) -> list[tuple[str, bool, Any]]:
    """(domain, optional, its plot's SVG or None) for the first `MAX_PLOTS` domains of the board's runs, main
    domains first (the page's switch has room for as many; the tables show every domain)."""
    out: list[tuple[str, bool, Any]] = []
    for table in domain_tables(board):
        for domain in table.domains[:MAX_PLOTS - len(out)]:
            svg = quality_latency_svg(_domain_board(board, domain), uid=f"plot-{board.slug}--{slugify(domain)}")
            out.append((domain, table.optional, svg))
    return out
