"""The rules the IWSLT 2026 mini-campaign needs beyond the log-submission tests: disjoint latency bands
(`min_latency`: low 0–2 s, high 2–4 s, as IWSLT 2026 ranks) and neural metrics that are `optional: true` (left out,
one line, where the checkpoint or the extra is missing), through the real commands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from harness.config import load_config
from harness.errors import ConfigError
from tests.harness_cli import NO_DOCKER
from tests.harness_cli import run_in_checkout as harness
from tests.log_submissions import log_submission, regime_config

BANDS = [{"name": "low", "max_latency": 2000}, {"name": "high", "min_latency": 2000, "max_latency": 4000}]


def banded_config(root: Path, regimes: list[dict] | None = None, **track_extra: object) -> Path:
    path = regime_config(root)
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["tracks"][0]["regimes"] = regimes if regimes is not None else BANDS
    doc["tracks"][0].update(track_extra)
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _section(html: str, heading: str) -> str:
    start = html.index(heading)
    end = html.find("<h3", start + 1)
    return html[start:end if end > 0 else len(html)]


@pytest.mark.slow
def test_disjoint_bands_rank_each_system_in_one_regime(tmp_path: Path) -> None:
    config = banded_config(tmp_path)
    subs = tmp_path / "subs"
    log_submission(subs / "fast", team="fastteam", lags={"dev": 300, "test": 300}, drop_every=5)
    log_submission(subs / "mid", team="midteam", lags={"dev": 2600, "test": 2600}, drop_every=6)
    log_submission(subs / "slow", team="slowteam", lags={"dev": 5000, "test": 5000}, drop_every=7)
    results, site = tmp_path / "results", tmp_path / "site"
    run = harness("evaluate", str(subs), "--config", str(config), "--output", str(results), "--dataset", "dev,test",
                  env=NO_DOCKER)
    assert run.returncode == 0, run.stdout + run.stderr
    board = harness("leaderboard", str(results), "--output", str(site), "--config", str(config))
    assert board.returncode == 0, board.stderr
    html = (site / "index.html").read_text(encoding="utf-8")
    assert "every regime whose bound" not in html  # the intro says what the regimes are: bands here
    html = html[html.index('id="longform-en-es-test"'):]
    html = html[:html.index("</section>")]
    assert ("The regimes are disjoint bands of LongYAAL: a submission competes only in the band its LongYAAL falls in "
            "(low: LongYAAL ≤ 2000; high: 2000 &lt; LongYAAL ≤ 4000).") in " ".join(html.split())
    low, high = _section(html, "Regime “low”"), _section(html, "Regime “high”")
    outside = _section(html, "Outside every regime")
    assert "LongYAAL ≤ 2000" in low and "2000 &lt; LongYAAL ≤ 4000" in high
    assert "fastteam" in low and "midteam" not in low
    assert "midteam" in high and "fastteam" not in high  # a band, not everything under its bound
    assert "slowteam" in outside and "above 4000" in outside
    plot = html[html.index("<svg"):html.index("</svg>")]
    assert "high 2000–4000" in plot and "low ≤ 2000" in plot


def test_a_band_whose_floor_is_not_below_its_ceiling_is_one_line(tmp_path: Path) -> None:
    config = banded_config(tmp_path, [{"name": "high", "min_latency": 4000, "max_latency": 2000}])
    with pytest.raises(ConfigError, match=r"tracks\[0\]\.regimes\[0\]\.min_latency: 4000 is not below "
                                          r"max_latency 2000"):
        load_config(config)


def _with_metrics(root: Path, metrics: dict, quality: list[str], primary: str = "chrF") -> Path:
    path = banded_config(root, quality=quality, primary={"quality": primary, "latency": "LongYAAL"})
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["metrics"] = metrics
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.slow
def test_an_optional_metric_without_its_checkpoint_is_left_out_with_one_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("HARNESS_TEST_XCOMET", raising=False)
    metrics = {"XCOMET": {"model": "${HARNESS_TEST_XCOMET}", "optional": True},
               "BLEURT": {"model": "no-such-bleurt", "optional": True}}
    config = _with_metrics(tmp_path, metrics, ["chrF", "XCOMET", "BLEURT"])
    loaded = load_config(config)
    assert loaded.tracks[0].quality == ("chrF",)
    assert loaded.notes == (f"{config.resolve()}: metrics.XCOMET: left out ($HARNESS_TEST_XCOMET is not set)",
                            f"{config.resolve()}: metrics.BLEURT: left out (no checkpoint at "
                            f"{(tmp_path / 'no-such-bleurt').resolve()})")
    # present: kept, its path expanded from the variable
    checkpoint = tmp_path / "xcomet"
    checkpoint.mkdir()
    monkeypatch.setenv("HARNESS_TEST_XCOMET", str(checkpoint))
    loaded = load_config(config)
    assert loaded.tracks[0].quality == ("chrF", "XCOMET")
    assert loaded.metrics["XCOMET"].model == checkpoint
    # the batch says what it left out, once, and scores the rest
    monkeypatch.delenv("HARNESS_TEST_XCOMET")
    subs = tmp_path / "subs"
    log_submission(subs / "fast", team="fastteam", lags={"dev": 300, "test": 300}, drop_every=5)
    run = harness("evaluate", str(subs), "--config", str(config), "--output", str(tmp_path / "results"),
                  "--dataset", "dev", env=NO_DOCKER)
    assert run.returncode == 0, run.stderr
    notes = [line for line in run.stderr.splitlines() if "left out" in line]
    assert notes == [f"harness evaluate: note: {config.resolve()}: metrics.XCOMET: left out "
                     "($HARNESS_TEST_XCOMET is not set)",
                     f"harness evaluate: note: {config.resolve()}: metrics.BLEURT: left out (no checkpoint at "
                     f"{(tmp_path / 'no-such-bleurt').resolve()})"]


def test_an_optional_metric_cannot_be_the_primary_one_when_left_out(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("HARNESS_TEST_XCOMET", raising=False)
    config = _with_metrics(tmp_path, {"XCOMET": {"model": "$HARNESS_TEST_XCOMET", "optional": True}},
                           ["XCOMET", "chrF"], primary="XCOMET")
    with pytest.raises(ConfigError, match=re.escape("tracks[0].primary.quality: XCOMET is optional and left out "
                                                    "here ($HARNESS_TEST_XCOMET is not set)")):
        load_config(config)


def test_optional_is_strict(tmp_path: Path) -> None:
    config = _with_metrics(tmp_path, {"XCOMET": {"model": "x", "optinal": True}}, ["chrF"])
    with pytest.raises(ConfigError, match=r"metrics\.XCOMET\.optinal: unknown field.*did you mean 'optional'"):
        load_config(config)
