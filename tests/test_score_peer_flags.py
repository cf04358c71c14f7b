"""Flags of the peers that change a number, through `harness score` against OmniSTEval 0.1.10 run the same way:

- `--offset-delays` (OmniSTEval's `--offset_delays`; FBK's stream_laal and simulstream have no such flag): the log's
  times start at each recording's first sentence, so each recording's sentences move earlier by its first offset;
- the target unit: an explicit `--latency-unit word|char` wins over the unit `--target-lang` implies (zh/ja: char),
  as OmniSTEval's `--word_level` / `--char_level` are independent of its `--lang`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from harness.cli import main
from tests.longform_support import ROOT, edited_talk, write_talk_log
from tests.peer_support import omnisteval_scores

LONG = ("LongYAAL", "LongAL", "LongLAAL", "LongAP", "LongDAL")
OMNI = {"LongYAAL": "long_yaal", "LongAL": "long_al", "LongLAAL": "long_laal", "LongAP": "long_ap",
        "LongDAL": "long_dal"}


def _sentences() -> list[str]:
    text = (ROOT / "data" / "udhr" / "dev.es").read_text(encoding="utf-8")
    return [x.strip() for x in text.splitlines() if x.strip()][:40]


def _score(capsys, paths: dict[str, Path], *flags: str) -> dict:
    assert main(["score", str(paths["jsonl"]), "--segmentation", str(paths["segmentation"]), "--references",
                 str(paths["references"]), "--format", "json", "--no-write", "--bootstrap", "1",
                 "--metrics", "BLEU,LongYAAL,LongAL,LongLAAL,LongAP,LongDAL", *flags]) == 0
    return json.loads(capsys.readouterr().out)


def _omni(paths: dict[str, Path], out: Path, *flags: str) -> dict[str, float]:
    return omnisteval_scores(paths["jsonl"].parent, out, "longform", "--speech_segmentation",
                             str(paths["segmentation"]), "--ref_sentences_file", str(paths["references"]),
                             "--hypothesis_file", str(paths["jsonl"]), "--hypothesis_format", "jsonl",
                             "--bleu_tokenizer", "13a", *flags)


def _equal(ours: dict, theirs: dict[str, float]) -> None:
    for key in LONG:
        for name, peer in ((key, OMNI[key]), (f"{key}_CA", f"ca_{OMNI[key]}")):
            assert math.isclose(ours[name]["score"], theirs[peer], rel_tol=1e-9, abs_tol=1e-9), \
                (name, ours[name]["score"], theirs[peer])


@pytest.fixture(scope="module")
def talk(tmp_path_factory) -> dict[str, Path]:
    return write_talk_log([edited_talk("talk-es", _sentences(), seed=21)], tmp_path_factory.mktemp("talk"))


@pytest.mark.slow
def test_offset_delays_equals_omnisteval(talk, tmp_path, capsys) -> None:
    """The segmentation places the talk 30 s into a longer recording; the log's times start at its first sentence
    (a system given the audio cut there). With the flag each side moves the sentences back; without it the talk's
    latency is 30 s smaller (negative): the flag changes every value."""
    seg = yaml.safe_load(talk["segmentation"].read_text(encoding="utf-8"))
    first = seg[0]["offset"]
    moved = tmp_path / "moved.yaml"
    moved.write_text(yaml.safe_dump([{**s, "offset": round(s["offset"] - first + 30.0, 6)} for s in seg]),
                     encoding="utf-8")
    paths = {**talk, "segmentation": moved}
    ours = _score(capsys, paths, "--target-lang", "es", "--offset-delays")
    _equal(ours, _omni(paths, tmp_path / "omni", "--word_level", "--lang", "es", "--offset_delays"))
    plain = _score(capsys, paths, "--target-lang", "es")
    assert plain["LongYAAL"]["score"] < ours["LongYAAL"]["score"] - 20000
    assert ours["BLEU"]["score"] == plain["BLEU"]["score"]  # the sentences' words do not depend on their times


def test_offset_delays_needs_a_foreign_log(tmp_path, capsys) -> None:
    assert main(["score", str(tmp_path), "--offset-delays", "--no-write"]) == 2
    err = capsys.readouterr().err
    assert "--offset-delays moves the sentences of --segmentation" in err and err.count("\n") == 1


@pytest.mark.slow
def test_an_explicit_latency_unit_wins_over_the_target_language(talk, tmp_path, capsys) -> None:
    """A word-segmented output scored with `--target-lang zh --latency-unit word`: words, as OmniSTEval's
    `--word_level --lang zh` (zh: no Moses tokens); before, zh forced characters and the log was refused."""
    ours = _score(capsys, talk, "--target-lang", "zh", "--latency-unit", "word")
    assert ours["info"]["target_unit"] == "word" and ours["info"]["softsegmenter_tokens"] == "words"
    _equal(ours, _omni(talk, tmp_path / "omni", "--word_level", "--lang", "zh"))
    # without the explicit unit zh means characters: this log (a delay per word) then has too few delays
    assert main(["score", str(talk["jsonl"]), "--segmentation", str(talk["segmentation"]), "--references",
                 str(talk["references"]), "--target-lang", "zh", "--no-write"]) == 2
    assert "output units but" in capsys.readouterr().err
