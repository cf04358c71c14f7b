"""ScoringOptions is built once, complete: a track's (with the task's neural metrics and the dataset's source
transcript), or the command line's; no stage adds an option later. The shared steps pick the metrics of both
short- and long-form runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config import load_config
from harness.errors import HarnessError
from harness.scoring.options import ScoringOptions, track_scoring_options
from harness.scoring.steps import wanted_metrics


def _config(tmp_path: Path, source_text: bool) -> Path:
    (tmp_path / "dev.wav.list").write_text("a.wav\n", encoding="utf-8")
    (tmp_path / "dev.es").write_text("hola\n", encoding="utf-8")
    (tmp_path / "dev.en.txt").write_text("hello\nworld\n", encoding="utf-8")
    text = ", source_text: dev.en.txt" if source_text else ""
    cfg = tmp_path / "task.yaml"
    cfg.write_text(
        "task: t\ntracks:\n  - {name: sx, modality: speech, source_lang: en, target_lang: es, quality: [BLEU, COMET],\n"
        "     latency: [LAAL], primary: {quality: BLEU, latency: LAAL},\n"
        f"     datasets: {{dev: {{source: dev.wav.list, references: {{orig: dev.es}}{text}}}}}}}\n"
        f"metrics: {{COMET: {{model: {tmp_path / 'ckpt'}}}}}\n", encoding="utf-8")
    return cfg


def test_a_tracks_options_carry_everything_its_scoring_needs(tmp_path: Path) -> None:
    config = load_config(_config(tmp_path, source_text=True), check_files=False)
    track = config.track("sx")
    plain = track_scoring_options(track)
    assert plain.resegmentation == track.resegmentation == "softsegmenter"
    assert plain.model_metrics == {} and plain.source_texts is None and plain.bootstrap == 1000
    batch = track_scoring_options(track, config=config, dataset=track.dataset("dev"))
    assert set(batch.model_metrics) == {"COMET"} and batch.model_metrics["COMET"] is config.metrics["COMET"]
    assert batch.source_texts == ("hello", "world")
    assert (batch.tokenizer, batch.target_lang, batch.profile) == (plain.tokenizer, plain.target_lang, plain.profile)
    look = track_scoring_options(track, metrics=["LAAL"], bootstrap=0)  # `harness check`'s quick look
    assert look.metrics == ("LAAL",) and look.bootstrap == 0
    no_text = load_config(_config(tmp_path, source_text=False), check_files=False)
    assert track_scoring_options(no_text.track("sx"), config=no_text,
                                 dataset=no_text.track("sx").dataset("dev")).source_texts is None


def test_options_are_complete_when_built() -> None:
    options = ScoringOptions(metrics=["BLEU"], also=["METEOR"], reference_sets=["orig"])
    assert (options.metrics, options.also, options.reference_sets) == (("BLEU",), ("METEOR",), ("orig",))
    assert not hasattr(options, "but") and not hasattr(ScoringOptions, "of")
    with pytest.raises(TypeError):
        ScoringOptions(bootstrapp=10)  # type: ignore[call-arg]  # a misspelt option is never dropped
    assert options.with_recorded_language("de").target_lang == "de"  # a run knows its language
    assert ScoringOptions(target_lang="es").with_recorded_language("de").target_lang == "es"  # the options win
    assert options.with_recorded_language(None) is options


def test_short_and_long_form_pick_their_metrics_by_one_rule() -> None:
    known = ("BLEU", "chrF", "METEOR", "LAAL", "COMET")
    assert wanted_metrics(ScoringOptions(), known) == {"BLEU", "chrF", "LAAL"}  # no optional, no neural ones
    assert wanted_metrics(ScoringOptions(also=("METEOR",)), known) == {"BLEU", "chrF", "LAAL", "METEOR"}
    assert wanted_metrics(ScoringOptions(), known, defaults=("BLEU",)) == {"BLEU"}  # a profile's own list
    assert wanted_metrics(ScoringOptions(metrics=("chrF",)), known, defaults=("BLEU",)) == {"chrF"}
    with pytest.raises(HarnessError, match=r"^unknown metric\(s\) for a long-form run: AL$"):
        wanted_metrics(ScoringOptions(metrics=("AL",)), known, run=" for a long-form run")
