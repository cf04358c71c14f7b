"""Rankings that say when they are uncertain (issue 35, deliverable 4), through `harness evaluate` and
`harness leaderboard` on the bundled UDHR text (log submissions, no Docker engine).

Regimes: low AL ≤ 3 and high 3 < AL ≤ 6 words. Two low-latency systems whose outputs miss words on different
lines (their BLEU difference is not significant) must share a rank cluster; the high-latency ones differ clearly.
A system whose AL interval crosses the bound 3 is flagged; with `regime_from: dev`, by its dev run's interval."""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness.scoring.clusters import SIGNIFICANCE_LEVEL
from tests.board_support import harness, text_config, text_submission

pytestmark = pytest.mark.slow
BOUNDS = (3.0, 6.0)


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("uncertainty")
    config = text_config(root)
    subs = root / "subs"
    text_submission(subs / "top", team="topteam", k=1, jitter=3)  # perfect, AL about 3.5 with a wide interval
    text_submission(subs / "x", team="xteam", k=1, drop_every=4, drop_lines=(1, 10))
    text_submission(subs / "y", team="yteam", k=1, drop_every=4, drop_lines=(11, 20))
    text_submission(subs / "far", team="farteam", k=4, drop_every=3)
    text_submission(subs / "far2", team="far2team", k=4, drop_every=4)
    results, site = root / "results", root / "site"
    run = harness("evaluate", str(subs), "--config", str(config), "--output", str(results), "--dataset", "test")
    assert run.returncode == 0, run.stdout + run.stderr
    made = harness("leaderboard", str(results), "--config", str(config), "--output", str(site))
    assert made.returncode == 0, made.stderr
    sig = json.loads((results / "significance" / "text-en-es" / "test.json").read_text(encoding="utf-8"))
    scores = {s: json.loads((results / s / "test" / "scores.json").read_text(encoding="utf-8"))
              for s in ("top", "x", "y", "far", "far2")}
    return {"sig": sig, "scores": scores, "html": (site / "index.html").read_text(encoding="utf-8")}


def tables(html: str) -> dict[str, list[tuple[str, str, str]]]:
    """{regime: [(rank cell text, team, the row's badges html)]} of the index's ranked tables."""
    out = {}
    for name, body in re.findall(r"Regime “(\w+)”.*?<tbody>(.*?)</tbody>", html, re.S):
        rows = re.findall(r'<td class="num rank[^"]*" data-value="\d+"[^>]*>([^<]+)</td>\s*'
                          r'<td data-value="[^"]*"><a [^>]*class="team">([^<]+)</a>(.*?)</td>', body, re.S)
        out[name] = [(rank.strip(), team, rest) for rank, team, rest in rows]
    return out


def test_adjacent_runs_are_tested_pairwise_at_the_scoring_stage(board: dict[str, Any]) -> None:
    pairs = [tuple(t["runs"]) for t in board["sig"]["adjacent"]]
    shown = tables(board["html"])
    by_team = {"topteam": "top", "xteam": "x", "yteam": "y", "farteam": "far", "far2team": "far2"}
    expected = [(by_team[a[1]], by_team[b[1]]) for rows in shown.values()
                for a, b in zip(rows, rows[1:], strict=False)]
    assert sorted(pairs) == sorted(expected) and len(pairs) == 3
    # the same paired bootstrap as the tests against the best: one pair is both, with the same p-value
    best = board["sig"]["best"]
    for test in board["sig"]["adjacent"]:
        if best in test["runs"]:
            other = next(r for r in test["runs"] if r != best)
            assert test["BLEU"]["p_value"] == board["sig"]["runs"][other]["BLEU"]["p_value"]


def test_runs_whose_difference_is_not_significant_share_a_rank_cluster(board: dict[str, Any]) -> None:
    p = {frozenset(t["runs"]): t["BLEU"]["p_value"] for t in board["sig"]["adjacent"]}
    assert board["sig"]["cluster_level"] == SIGNIFICANCE_LEVEL
    assert p[frozenset(("x", "y"))] >= SIGNIFICANCE_LEVEL > p[frozenset(("far", "far2"))]  # both cases are here
    shown = tables(board["html"])
    assert [r[:2] for r in shown["low"]] == [("1–2", "xteam"), ("1–2", "yteam")]
    assert [r[:2] for r in shown["high"]] == [("1", "topteam"), ("2", "far2team"), ("3", "farteam")]
    assert 'title="Rank cluster 1 (ranks 1–2): the primary quality of these runs differs not significantly' in board[
        "html"]


def test_a_run_whose_latency_interval_crosses_a_bound_is_flagged(board: dict[str, Any]) -> None:
    shown = tables(board["html"])
    flagged = {team for rows in shown.values() for _, team, rest in rows if "b-regime-flag" in rest}
    crossing = {f"{s}team" for s, sc in board["scores"].items()
                if any(sc["AL"]["ci95"][0] < b < sc["AL"]["ci95"][1] for b in BOUNDS)}
    assert flagged == crossing and "topteam" in flagged and "farteam" not in flagged
    top = next(rest for _, team, rest in shown["high"] if team == "topteam")
    lo, hi = board["scores"]["top"]["AL"]["ci95"]
    title = html_lib.unescape(re.search(r'class="badge b-regime-flag" title="([^"]+)"', top).group(1))
    assert title == (f"may belong to the previous regime (“low”): its test-set AL 95% interval [{lo:.4g}, {hi:.4g}] "
                     "crosses the bound 3")
    assert ">may belong to the previous regime<" in top


def test_with_regime_from_the_dev_runs_interval_decides_the_flag(tmp_path: Path) -> None:
    config = text_config(tmp_path, regime_from="dev")
    subs = tmp_path / "subs"
    # a wide dev interval around 3; high on test (AL about 5): its test latency must not matter
    text_submission(subs / "edge", team="edgeteam", k=4, dev_k=1, jitter=3, datasets=("dev", "test"))
    text_submission(subs / "calm", team="calmteam", k=1, dev_k=1, datasets=("dev", "test"))
    results, site = tmp_path / "results", tmp_path / "site"
    run = harness("evaluate", str(subs), "--config", str(config), "--output", str(results), "--dataset", "dev,test")
    assert run.returncode == 0, run.stdout + run.stderr
    assert harness("leaderboard", str(results), "--config", str(config), "--output", str(site)).returncode == 0
    al = json.loads((results / "edge" / "dev" / "scores.json").read_text(encoding="utf-8"))["AL"]
    dev = al["ci95"]
    assert dev[0] < 3 < dev[1]
    where, other = ("next", "high") if al["score"] <= 3 else ("previous", "low")
    test_board = (site / "index.html").read_text(encoding="utf-8").split('id="text-en-es-test"', 1)[1]
    test_board = test_board.split('<section class="board"', 1)[0]
    rows = {team: rest for table in tables(test_board).values() for _, team, rest in table}
    assert set(rows) == {"edgeteam", "calmteam"}
    title = html_lib.unescape(re.search(r'class="badge b-regime-flag" title="([^"]+)"', rows["edgeteam"]).group(1))
    assert title == (f"may belong to the {where} regime (“{other}”): its dev-set AL 95% interval [{dev[0]:.4g}, "
                     f"{dev[1]:.4g}] crosses the bound 3")
    assert "b-regime-flag" not in rows["calmteam"]
