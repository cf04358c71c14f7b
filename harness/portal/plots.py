"""A team's own plots on its page: primary quality against primary latency of its submissions on each track and
dataset whose results the team may see, drawn by the leaderboard's own plot (`leaderboard.plots`) from
STATE/results, with no other team's run on them. The results are read again only when summary.json changes."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness import layout
from harness.config import TaskConfig
from leaderboard.model import Results, load_results
from leaderboard.plots import quality_latency_svg

STYLE = Path(__file__).resolve().parents[2] / "leaderboard" / "static" / "style.css"


@dataclass
class ResultsForPlots:
    """STATE/results loaded for plotting, per set of datasets, loaded again when summary.json changes."""

    results: Path
    config: TaskConfig
    loaded: dict[frozenset[str], tuple[tuple[int, int], Results]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, datasets: frozenset[str]) -> Results | None:
        try:
            info = layout.ResultsDir(self.results).summary.stat()
        except OSError:
            return None
        key = (info.st_mtime_ns, info.st_size)
        with self.lock:
            cached = self.loaded.get(datasets)
            if cached is None or cached[0] != key:
                self.loaded[datasets] = (key, load_results(self.results, self.config, datasets))
            return self.loaded[datasets][1]


def team_plots(cache: ResultsForPlots, submissions: set[str], datasets: frozenset[str]) -> list[str]:
    """One inline SVG per board (track × dataset of `datasets`) holding any of `submissions`, with only those."""
    results = cache.get(datasets) if submissions and datasets else None
    if results is None:
        return []
    plots = []
    for board in results.boards:
        own = [r for r in board.runs if r.submission in submissions]
        svg = quality_latency_svg(replace(board, runs=own), uid=f"team-plot-{board.slug}") if own else None
        if svg:  # its points link to the board's run pages, which the portal does not serve: plain points
            plots.append(re.sub(r"</?a\b[^>]*>", "", svg))
    return plots


def plot_style() -> str:
    """The leaderboard's rules for its plots (`svg ...`, `.plot...`), to put in a page that shows one."""
    text = re.sub(r"/\*.*?\*/", "", STYLE.read_text(encoding="utf-8"), flags=re.S)
    rules = re.findall(r"([^{}]+)\{([^{}]*)\}", text)
    return "\n".join(f"{sel.strip()} {{{body.strip()}}}" for sel, body in rules
                     if sel.strip().startswith(("svg", ".plot")) and "timeline" not in sel and "replay" not in sel)
