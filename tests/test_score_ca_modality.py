"""Computation-aware (`NAME_CA`) metrics are speech-only: text delays are words, text elapsed adds milliseconds."""

from __future__ import annotations

import json
from pathlib import Path

from harness import metric_registry as reg
from harness.scoring import instance_metrics, score_records
from harness.scoring.corpus import corpus_instance_metrics
from harness.scoring.options import ScoringOptions
from leaderboard.model import load_results

LATENCY = ["AL", "LAAL", "AP", "DAL", "ATD", "StartOffset", "EndOffset", "YAAL"]


def _text(i: int) -> dict:
    """A harness text record whose elapsed times were measured (words + ms, as SimulEval logs text)."""
    return {"index": i, "prediction": "una casa verde", "delays": [1, 2, 3], "elapsed": [350.2, 702.9, 980.4],
            "reference": "una casa verde", "source": "a green house", "source_length": 3, "status": "ok",
            "latency_unit": "word"}


def _speech(i: int) -> dict:
    return {"index": i, "prediction": "una casa verde", "delays": [900.0, 1800.0, 2520.0],
            "elapsed": [1100.0, 2100.0, 2900.0], "reference": "una casa verde", "source": [f"{i}.wav"],
            "source_length": 2520.0, "status": "ok", "latency_unit": "ms"}


def test_text_runs_get_no_computation_aware_metrics() -> None:
    recs = [_text(0), _text(1)]
    scores = score_records(recs, ScoringOptions(bootstrap=10), latency_unit="word")
    assert [k for k in scores if k.endswith("_CA")] == []
    assert all(scores[n]["unit"] == "word" for n in LATENCY if n != "AP")
    assert not [k for k in instance_metrics(recs[0], "word") if k.endswith("_CA")]
    per = corpus_instance_metrics(recs, "word", "orig", False, True)  # what instance_scores.jsonl holds
    assert set(per) == set(LATENCY)


def test_speech_runs_keep_computation_aware_metrics_in_ms() -> None:
    scores = score_records([_speech(0), _speech(1)], ScoringOptions(bootstrap=10), latency_unit="ms")
    for name in LATENCY:
        assert scores[f"{name}_CA"]["score"] is not None, name
    assert scores["AL_CA"]["unit"] == "ms" and scores["AP_CA"]["unit"] == "proportion"
    assert scores["AL_CA"]["score"] > scores["AL"]["score"]  # computation time is paid for
    assert "speech only" in scores["AL_CA"]["definition"]


def test_registry_says_ca_is_speech_only() -> None:
    assert reg.computation_aware_applies(True) and not reg.computation_aware_applies(False)


def test_leaderboard_hides_text_ca_of_an_older_scores_file(tmp_path: Path) -> None:
    """An older scorer wrote LAAL_CA = 19.85 "word" for a text run: the site does not show it."""
    scores = {
        "BLEU": {"score": 20.0, "kind": "quality", "direction": "higher", "unit": "points", "definition": "BLEU"},
        "LAAL": {"score": 3.1, "kind": "latency", "direction": "lower", "unit": "word", "definition": "LAAL"},
        "LAAL_CA": {"score": 19.85, "kind": "latency", "direction": "lower", "unit": "word", "definition": "LAAL"},
        "info": {"latency_unit": "word", "modality": "text"},
    }
    run = {"submission": "team-a", "dataset": "dev", "status": "ok", "track": "t", "scores": scores}
    (tmp_path / "summary.json").write_text(json.dumps({"runs": [run]}))
    results = load_results(tmp_path)
    board = results.boards[0]
    assert "LAAL_CA" not in board.columns and "LAAL_CA" not in board.runs[0].scores
    speech = dict(scores, info={"latency_unit": "ms", "modality": "speech"})
    (tmp_path / "summary.json").write_text(json.dumps({"runs": [dict(run, scores=speech)]}))
    assert "LAAL_CA" in load_results(tmp_path).boards[0].columns
