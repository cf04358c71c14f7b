"""Average Anticipation (SiMuST-C): the formula, eflomal alignments (monotonic pairs score near 0, reordered ones
high), the cache by data hash, and a text track with `anticipation: true` through scoring and the leaderboard."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.config import load_config
from harness.metrics import anticipation as ant
from tests.text_task import make_text_task

ROOT = Path(__file__).resolve().parent.parent
DEV_EN = (ROOT / "data" / "udhr" / "dev.en").read_text(encoding="utf-8").splitlines()


def test_the_formula_counts_only_target_words_ahead_of_their_source() -> None:
    assert ant.average_anticipation([(0, 0), (1, 1), (2, 2)]) == 0.0
    assert ant.average_anticipation([(0, 0), (2, 1), (1, 2)]) == pytest.approx(1 / 3)  # only (2, 1) anticipates
    assert ant.average_anticipation([(5, 0)]) == 5.0
    assert ant.average_anticipation([]) is None
    assert ant.corpus_anticipation([1.0, None, 0.0]) == 0.5


@pytest.mark.slow
def test_monotonic_pairs_score_low_and_reversed_ones_high(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(ant, "_cache_dir", lambda: tmp_path / "cache")
    aligner = ant.EflomalAligner()
    same = ant.aligned(aligner, DEV_EN, DEV_EN)
    reversed_ = ant.aligned(aligner, DEV_EN, [" ".join(reversed(s.split())) for s in DEV_EN])
    aa_same = ant.corpus_anticipation([ant.average_anticipation(x) for x in same])
    aa_rev = ant.corpus_anticipation([ant.average_anticipation(x) for x in reversed_])
    assert aa_same is not None and aa_rev is not None
    assert aa_same < 0.5 < 5 < aa_rev  # a copy is monotonic; reversing a 28-word sentence anticipates a lot
    # cached by data hash: the same links again, without aligning
    files = list((tmp_path / "cache").glob("*.json"))
    assert len(files) == 2
    monkeypatch.setattr(aligner, "align", lambda *a: pytest.fail("aligned again instead of reading the cache"))
    assert ant.aligned(aligner, DEV_EN, DEV_EN) == same


@pytest.mark.slow
@pytest.mark.apertium
def test_a_text_track_with_anticipation_reports_it_everywhere(tmp_path: Path, monkeypatch) -> None:
    from harness.scoring.results import score_results
    from leaderboard.render import render_site

    monkeypatch.setattr(ant, "_cache_dir", lambda: tmp_path / "cache")
    sources = DEV_EN[:12]
    cfg = make_text_task(tmp_path, sources)
    cfg.write_text(cfg.read_text().replace("    modality: text\n", "    modality: text\n    anticipation: true\n"),
                   encoding="utf-8")
    config = load_config(cfg)
    assert config.tracks[0].anticipation
    results = tmp_path / "results"
    run = results / "waitk" / "dev"
    assert main(["run", "--config", str(cfg), "--dataset", "dev", "--agent",
                 str(ROOT / "agent_templates" / "waitk_apertium" / "agent.py"), "--output", str(run)]) == 0
    scores = json.loads((run / "scores.json").read_text())
    assert scores["AA"]["kind"] == "diagnostic" and scores["AA"]["aligner"].startswith("eflomal")
    assert 0 <= scores["AA"]["score"] < 10 and scores["AA"]["ci95"]
    runs = [{"submission": "waitk", "team": "t", "system": "waitk", "track": "text-en-es", "dataset": "dev",
             "status": "ok", "scores": scores}]
    (results / "summary.json").write_text(json.dumps({"config_sha256": None, "runs": runs}), encoding="utf-8")
    score_results(config, results, runs)
    dataset = json.loads((results / "anticipation" / "text-en-es" / "dev.json").read_text())
    assert set(dataset["reference_sets"]) == {"orig", "mono"}
    assert len(dataset["reference_sets"]["orig"]["instances"]) == 12
    rows = [json.loads(x) for x in (run / "instance_scores.jsonl").read_text().splitlines()]
    assert all("AA" in r for r in rows)
    render_site(results, tmp_path / "site", config)
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "Average Anticipation of the references" in index
    page = (tmp_path / "site" / "runs" / "waitk-dev" / "index.html").read_text(encoding="utf-8")
    assert "Average Anticipation (SiMuST-C)" in page


def test_anticipation_is_for_text_tracks(tmp_path: Path) -> None:
    from harness.errors import ConfigError

    cfg = make_text_task(tmp_path)
    cfg.write_text(cfg.read_text().replace("    modality: text\n", "    modality: speech\n    anticipation: true\n"),
                   encoding="utf-8")
    with pytest.raises(ConfigError, match=r"tracks\[0\]\.anticipation: needs source words: text tracks only"):
        load_config(cfg, check_files=False)
