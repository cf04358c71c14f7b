"""Long-form scores through the real commands, as IWSLT runs them: `omnisteval longform --lang es` (a Latin-script
target, Moses sub-tokens) and `--char_level` (a Chinese target) against `harness score --target-lang`, on talks of
50+ sentences whose output differs from the references as a real system's does (function words inserted, words
dropped, punctuation attached and detached, words written during the audio after the last sentence).

Every Long* value, computation-aware or not, must agree to 1e-9 and every resegmented sentence must be identical.
OmniSTEval prints its scores with four decimals; the test reads them at full precision by capturing the dict its
command line hands to its own writer (the command otherwise runs unchanged)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from tests.longform_support import ROOT, edited_talk, write_talk_log
from tests.peer_support import OMNISTEVAL

OMNI_KEYS = {"LongYAAL": "long_yaal", "LongAL": "long_al", "LongLAAL": "long_laal", "LongAP": "long_ap",
             "LongDAL": "long_dal"}


def _spanish_sentences() -> list[str]:
    lines = []
    for name in ("dev.es", "test.es"):
        lines += [x.strip() for x in (ROOT / "data" / "udhr" / name).read_text(encoding="utf-8").splitlines()
                  if x.strip()]
    return lines


def _chinese_sentences() -> list[str]:
    path = ROOT / "tests" / "evaluate_data" / "udhr.zh"
    return [x.strip() for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _omnisteval(paths: dict[str, Path], out: Path, *flags: str) -> tuple[dict[str, float], list[dict]]:
    cmd = [sys.executable, "-c", OMNISTEVAL, "longform", "--speech_segmentation", str(paths["segmentation"]),
           "--ref_sentences_file", str(paths["references"]), "--hypothesis_file", str(paths["jsonl"]),
           "--hypothesis_format", "jsonl", "--bleu_tokenizer", "13a", "--output_folder", str(out), *flags]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    scores = json.loads((out / "scores.full.json").read_text(encoding="utf-8"))
    lines = [json.loads(x) for x in (out / "instances.resegmented.jsonl").read_text(encoding="utf-8").splitlines()]
    return scores, lines


def _harness(paths: dict[str, Path], *flags: str) -> tuple[dict, list[dict], str]:
    cmd = [sys.executable, "-m", "harness", "score", str(paths["jsonl"]), "--segmentation",
           str(paths["segmentation"]), "--references", str(paths["references"]), "--format", "json",
           "--bootstrap", "1", *flags]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(x) for x in (paths["jsonl"].parent / "instance_scores.jsonl").read_text().splitlines()]
    return json.loads(proc.stdout), rows, proc.stderr


def _compare(ours: dict, peer: dict) -> int:
    compared = 0
    for name, key in OMNI_KEYS.items():
        for suffix, prefix in (("", ""), ("_CA", "ca_")):
            mine, theirs = ours[name + suffix]["score"], peer[prefix + key]
            assert math.isclose(mine, theirs, rel_tol=1e-9, abs_tol=1e-9), (name + suffix, mine, theirs)
            compared += 1
    return compared


@pytest.fixture(scope="module")
def spanish(tmp_path_factory) -> dict:
    sentences = _spanish_sentences()
    assert len(sentences) >= 50
    talks = [edited_talk("talk-es", sentences, seed=11)]
    paths = write_talk_log(talks, tmp_path_factory.mktemp("es"))
    peer, peer_lines = _omnisteval(paths, paths["jsonl"].parent / "omni", "--word_level", "--lang", "es")
    ours, rows, stderr = _harness(paths, "--target-lang", "es")
    return {"talks": talks, "paths": paths, "peer": peer, "peer_lines": peer_lines, "ours": ours, "rows": rows,
            "stderr": stderr}


@pytest.mark.slow
def test_spanish_talk_is_realistic(spanish) -> None:
    talk = spanish["talks"][0]
    refs = [w for s in talk.sentences for w in s.references["orig"].split()]
    assert len(talk.sentences) >= 50
    assert talk.units != refs and abs(len(talk.units) - len(refs)) < 0.2 * len(refs)
    assert sum(1 for u in talk.units if u in (",", ".")) > 0  # punctuation detached
    assert any(s.references["orig"].split()[-1] != o for s, o in zip(talk.sentences, talk.units, strict=False))


def test_long_metrics_equal_omnisteval_with_lang(spanish) -> None:
    assert _compare(spanish["ours"], spanish["peer"]) == 10
    # quality on the resegmented sentences too (sacrebleu 13a, as --bleu_tokenizer 13a)
    assert math.isclose(spanish["ours"]["BLEU"]["score"], spanish["peer"]["bleu"], rel_tol=1e-12)
    assert math.isclose(spanish["ours"]["chrF"]["score"], spanish["peer"]["chrf"], rel_tol=1e-12)
    assert spanish["ours"]["info"]["target_lang"] == "es"
    assert spanish["ours"]["info"]["softsegmenter_tokens"] == "moses:es"
    assert spanish["ours"]["BLEU"]["signature"].endswith("|reseg:softsegmenter+moses:es")
    assert spanish["ours"]["LongYAAL"]["segmenter"] == "softsegmenter+moses:es"


def test_every_resegmented_sentence_is_omnisteval_s(spanish) -> None:
    ours = [s for row in spanish["rows"] for s in row["sentences"]]
    assert len(ours) == len(spanish["peer_lines"]) >= 50
    for n, (mine, theirs) in enumerate(zip(ours, spanish["peer_lines"], strict=True)):
        assert mine["prediction"] == theirs["prediction"], n
        assert mine["delays"] == theirs.get("emission_cu", []), n


@pytest.mark.slow
def test_without_the_language_the_sentences_differ(spanish) -> None:
    """The defect this guards against: SoftSegmenter without Moses sub-tokens puts words elsewhere."""
    ours, rows, stderr = _harness(spanish["paths"])
    differ = sum(1 for mine, theirs in zip([s for r in rows for s in r["sentences"]], spanish["peer_lines"],
                                           strict=True) if mine["prediction"] != theirs["prediction"])
    assert differ > 0
    assert ours["info"]["softsegmenter_tokens"] == "words"
    assert "no target language known" in stderr
    _harness(spanish["paths"], "--target-lang", "es")  # leave the folder as the fixture wrote it


@pytest.mark.slow
def test_trailing_words_are_counted_and_the_audio_end_is_an_option(spanish) -> None:
    ours = spanish["ours"]
    talk = spanish["talks"][0]
    last_end = talk.sentences[-1].end_ms
    expected = sum(1 for d in talk.delays if d >= last_end)
    assert expected > 0
    assert ours["counts"]["trailing_units"] == expected
    assert spanish["rows"][0]["trailing_units"] == expected
    assert f"{expected} output units of 1 recording(s) were written after the last reference sentence" \
        in spanish["stderr"]
    audio, _, _ = _harness(spanish["paths"], "--target-lang", "es", "--longform-end", "audio")
    assert audio["LongYAAL"]["recording_end"] == "audio" and ours["LongYAAL"]["recording_end"] == "reference"
    assert audio["LongYAAL"]["score"] != ours["LongYAAL"]["score"]  # the late words now count
    assert audio["LongAL"]["score"] == ours["LongAL"]["score"]  # only LongYAAL has a recording end
    _harness(spanish["paths"], "--target-lang", "es")


@pytest.mark.slow
def test_chinese_talk_equals_omnisteval_char_level(tmp_path) -> None:
    sentences = _chinese_sentences()
    assert len(sentences) >= 50
    talks = [edited_talk("talk-zh", sentences, seed=5, char_level=True)]
    paths = write_talk_log(talks, tmp_path, char_level=True)
    peer, peer_lines = _omnisteval(paths, tmp_path / "omni", "--char_level")
    ours, rows, _ = _harness(paths, "--target-lang", "zh")
    assert ours["info"]["target_unit"] == "char" and ours["info"]["softsegmenter_tokens"] == "chars"
    assert _compare(ours, peer) == 10
    mine = [s for r in rows for s in r["sentences"]]
    assert len(mine) == len(peer_lines) >= 50
    assert [s["prediction"] for s in mine] == [x["prediction"] for x in peer_lines]
    assert sum(1 for s in mine if s["prediction"] != s["references"]["orig"]) > 40


@pytest.mark.slow
def test_an_empty_reference_sentence_is_scored_like_omnisteval(tmp_path) -> None:
    sentences = _spanish_sentences()[:14]
    talks = [edited_talk("talk-empty", sentences, seed=3)]
    paths = write_talk_log(talks, tmp_path)
    lines = paths["references"].read_text(encoding="utf-8").splitlines()
    lines[5] = ""  # one sentence of the talk has no reference text
    paths["references"].write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    peer, peer_lines = _omnisteval(paths, tmp_path / "omni", "--word_level", "--lang", "es")
    ours, rows, stderr = _harness(paths, "--target-lang", "es")
    assert _compare(ours, peer) == 10
    assert [s["prediction"] for r in rows for s in r["sentences"]] == [x["prediction"] for x in peer_lines]
    assert "StreamLAAL" in ours and "Traceback" not in stderr and "INFO" not in stderr
    mwer, rows, _ = _harness(paths, "--target-lang", "es", "--resegmentation", "mwersegmenter")
    assert [s["prediction"] for r in rows for s in r["sentences"]][5] == ""
    assert mwer["BLEU"]["signature"].endswith("|reseg:mwersegmenter+words")


def test_fix_simuleval_emission_ca_equals_omnisteval_s_flag(spanish, tmp_path) -> None:
    """`--fix-simuleval-emission-ca` reads SimulEval's cumulative elapsed times as OmniSTEval's flag does: every
    _CA value equal with both flags on, and different from the values without them."""
    peer, _ = _omnisteval(spanish["paths"], tmp_path / "omni", "--word_level", "--lang", "es",
                          "--fix_simuleval_emission_ca")
    ours, _, _ = _harness(spanish["paths"], "--target-lang", "es", "--fix-simuleval-emission-ca")
    assert _compare(ours, peer) == 10
    assert ours["LongYAAL_CA"]["score"] != spanish["ours"]["LongYAAL_CA"]["score"]
    assert ours["LongYAAL"]["score"] == spanish["ours"]["LongYAAL"]["score"]
    _harness(spanish["paths"], "--target-lang", "es")  # leave the folder as the fixture wrote it
