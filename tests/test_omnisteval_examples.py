"""OmniSTEval 0.1.10's own examples (its repository's examples/, Apache-2.0; not committed here, see
tests/peer_support.py for where they are read from) through `harness score`: each value equals the example's
scores.tsv to the printed digits, and OmniSTEval 0.1.10 run here with the example's own flags (its score writer
wrapped to keep the full-precision values) to 1e-9.

- short-form SimulEval log with the degeneracy diagnostics;
- a real ACL 60/60 SimulEval long-form log, scored with `--fix_simuleval_emission_ca` (its computation-aware
  values need that flag; one delay lies past its recording's length: scored with a warning);
- long-form text with a `docid=…,segid=…` segmentation (OmniSTEval's `--text_segmentation`);
- a SimulStream log written with `detokenizer_type: hf` (SeamlessM4T pieces), read without the model's tokenizer.
  Its scores.tsv was written by OmniSTEval 0.1.7, whose LongYAAL of SimulStream logs 0.1.10 corrected ("fix LongYAAL
  latency evaluation issue for SimulStream logs"): LongYAAL equals 0.1.10, every other value the TSV.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from harness.cli import main
from tests.peer_support import EXAMPLES, omnisteval_scores, seamless_folder, spm_model

__all__ = ["seamless_folder", "spm_model"]  # fixtures
pytestmark = pytest.mark.omnisteval_examples

LONG = ("BLEU", "chrF", "LongYAAL", "LongAL", "LongLAAL", "LongAP", "LongDAL")
DIAGNOSTICS = {"SWF": "Simultaneous Words Fraction (%)", "EFSW": "Expected Simul. Words Fraction (%)",
               "DSPTV": "Degeneracy Test Value", "DegeneratePolicy": "Likely Degenerate Simultaneous Policy"}

def tsv_name(key: str) -> str:
    """The scores.tsv row of one of our metric names."""
    if key in ("BLEU", "chrF"):
        return key
    if key in DIAGNOSTICS:
        return DIAGNOSTICS[key]
    return f"{key.removesuffix('_CA')} ({'CA' if key.endswith('_CA') else 'CU'})"


def omni_key(key: str) -> str:
    """OmniSTEval's key of one of our metric names (`LongYAAL_CA` -> `ca_long_yaal`)."""
    plain = {"BLEU": "bleu", "chrF": "chrf", "SWF": "swf", "EFSW": "efsw", "DSPTV": "dsptv",
             "DegeneratePolicy": "degenerate_policy"}
    if key in plain:
        return plain[key]
    base = key.removesuffix("_CA")
    name = f"long_{base[4:].lower()}" if base.startswith("Long") else base.lower()
    return f"ca_{name}" if key.endswith("_CA") else name


def read_tsv(path: Path) -> dict[str, str]:
    rows = path.read_text(encoding="utf-8").splitlines()[1:]
    return dict(row.split("\t") for row in rows)


def printed(value: float, key: str) -> str:
    """A value as OmniSTEval's scores.tsv prints it."""
    if key == "DegeneratePolicy":
        return "YES" if value == 1.0 else "NO"
    return f"{value:.4f}"


def harness_scores(capsys, folder: Path, *args: str) -> tuple[dict, str]:
    assert main(["score", *args, "--format", "json", "--no-write", "--bootstrap", "1"]) == 0, folder
    out = capsys.readouterr()
    return json.loads(out.out), out.err


def assert_printed(ours: dict, tsv: dict[str, str], keys: list[str]) -> None:
    for key in keys:
        assert printed(ours[key]["score"], key) == tsv[tsv_name(key)], (key, ours[key]["score"], tsv[tsv_name(key)])


def assert_full(ours: dict, theirs: dict[str, float], keys: list[str]) -> None:
    for key in keys:
        a, b = ours[key]["score"], theirs[omni_key(key)]
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9), (key, a, b)


def _long(ca: bool = True) -> list[str]:
    return [*LONG, *[f"{k}_CA" for k in LONG[2:]]] if ca else list(LONG)


def _with(ours: dict, keys: list[str]) -> list[str]:
    return [k for k in keys if k in ours]


# --- short-form ---------------------------------------------------------------------------------------------------

SHORT = EXAMPLES / "short_form_degenerate_policy_example"
SHORT_KEYS = ["BLEU", "chrF", *[f"{m}{ca}" for ca in ("", "_CA") for m in ("YAAL", "AL", "LAAL", "AP", "DAL")],
              *DIAGNOSTICS]


def test_short_form_example_equals_its_scores_tsv(capsys) -> None:
    ours, _ = harness_scores(capsys, SHORT, str(SHORT / "instances.log"))
    tsv = read_tsv(SHORT / "evaluation_output" / "scores.tsv")
    assert_printed(ours, tsv, SHORT_KEYS)
    assert len(tsv) == len(SHORT_KEYS)


@pytest.mark.slow
def test_short_form_example_equals_omnisteval_at_full_precision(capsys, tmp_path) -> None:
    ours, _ = harness_scores(capsys, SHORT, str(SHORT / "instances.log"))
    theirs = omnisteval_scores(SHORT, tmp_path, "shortform", "--ref_sentences_file", "references.txt",
                               "--hypothesis_file", "instances.log", "--bleu_tokenizer", "13a", "--word_level")
    assert_full(ours, theirs, SHORT_KEYS)


# --- speech resegmentation (a SimulEval long-form log) ------------------------------------------------------------

SPEECH = EXAMPLES / "speech_resegmentation_example"


def _speech_args(log: Path) -> list[str]:
    return [str(log), "--segmentation", str(SPEECH / "ref_segments.yaml"), "--references",
            str(SPEECH / "references.txt"), "--target-lang", "de", "--metrics", ",".join(LONG)]


def fixed_log(tmp_path: Path) -> Path:
    """The example's log with its `elapsed` rewritten by OmniSTEval's own `fix_emission_ca` (what its
    `--fix_simuleval_emission_ca` does to each recording's words)."""
    from omnisteval.alignment import Word
    from omnisteval.data import fix_emission_ca

    out = tmp_path / "instances.fixed.log"
    with out.open("w", encoding="utf-8") as f:
        for line in (SPEECH / "instances.log").read_text(encoding="utf-8").splitlines():
            obj = json.loads(line)
            words = [Word(w, emission_cu=d, emission_ca=e)
                     for w, d, e in zip(obj["prediction"].split(), obj["delays"], obj["elapsed"], strict=True)]
            obj["elapsed"] = [w.emission_ca for w in fix_emission_ca(words)]
            f.write(json.dumps(obj) + "\n")
    return out


@pytest.mark.slow
def test_speech_example_equals_its_scores_tsv_with_a_warning_for_the_late_delay(capsys, tmp_path) -> None:
    tsv = read_tsv(SPEECH / "segmentation_output" / "scores.tsv")
    ours, err = harness_scores(capsys, SPEECH, *_speech_args(SPEECH / "instances.log"))
    assert_printed(ours, tsv, _long(ca=False))  # without the fix only the computation-unaware values are its
    assert "2022.acl-long.268.wav: 7 delay(s) up to 732000 ms lie past its source_length (731757 ms)" in err
    fixed, _ = harness_scores(capsys, SPEECH, *_speech_args(fixed_log(tmp_path)))
    assert_printed(fixed, tsv, _long())
    assert len(tsv) == len(_long())


def _has_fix_flag() -> bool:
    import argparse

    from harness.commands import score

    parser = argparse.ArgumentParser()
    score.add_arguments(parser)
    return any("--fix-simuleval-emission-ca" in a.option_strings for a in parser._actions)


@pytest.mark.skipif(not _has_fix_flag(),
                    reason="--fix-simuleval-emission-ca comes with the profiles work (branch i31-profiles)")
def test_speech_example_with_the_fix_flag_equals_its_scores_tsv(capsys) -> None:
    ours, _ = harness_scores(capsys, SPEECH, *_speech_args(SPEECH / "instances.log"), "--fix-simuleval-emission-ca")
    assert_printed(ours, read_tsv(SPEECH / "segmentation_output" / "scores.tsv"), _long())


@pytest.mark.slow
def test_speech_example_equals_omnisteval_at_full_precision(capsys, tmp_path) -> None:
    ours, _ = harness_scores(capsys, SPEECH, *_speech_args(fixed_log(tmp_path)))
    theirs = omnisteval_scores(SPEECH, tmp_path / "omni", "longform", "--speech_segmentation", "ref_segments.yaml",
                               "--ref_sentences_file", "references.txt", "--hypothesis_file", "instances.log",
                               "--hypothesis_format", "jsonl", "--lang", "de", "--bleu_tokenizer", "13a",
                               "--word_level", "--fix_simuleval_emission_ca")
    assert_full(ours, theirs, _long())


# --- text resegmentation ------------------------------------------------------------------------------------------

TEXT = EXAMPLES / "text_resegmentation_example"
TEXT_ARGS = [str(TEXT / "hypotheses.txt"), "--text-segmentation", str(TEXT / "text_segmentation.txt"),
             "--references", str(TEXT / "references.txt"), "--target-lang", "en"]


def test_text_example_equals_its_scores_tsv(capsys) -> None:
    ours, err = harness_scores(capsys, TEXT, *TEXT_ARGS)
    tsv = read_tsv(TEXT / "segmentation_output" / "scores.tsv")
    assert_printed(ours, tsv, ["BLEU", "chrF"])
    assert not any(k.startswith("Long") or k.startswith("Stream") for k in ours)  # no times, no latency
    assert ours["counts"]["sentences"] == 468 and err == ""


@pytest.mark.slow
def test_text_example_equals_omnisteval_at_full_precision(capsys, tmp_path) -> None:
    ours, _ = harness_scores(capsys, TEXT, *TEXT_ARGS)
    theirs = omnisteval_scores(TEXT, tmp_path, "longform", "--text_segmentation", "text_segmentation.txt",
                               "--ref_sentences_file", "references.txt", "--hypothesis_file", "hypotheses.txt",
                               "--hypothesis_format", "text", "--lang", "en", "--bleu_tokenizer", "13a",
                               "--word_level")
    assert_full(ours, theirs, ["BLEU", "chrF"])


def test_text_segmentation_problems_are_one_line(tmp_path, capsys) -> None:
    seg = tmp_path / "seg.txt"
    seg.write_text("docid=0,segid=0\ndocid=1,segid=0\n", encoding="utf-8")
    refs = tmp_path / "refs.txt"
    refs.write_text("a b\nc d\n", encoding="utf-8")
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("a b c d\n", encoding="utf-8")
    base = [str(hyp), "--text-segmentation", str(seg), "--references", str(refs), "--no-write"]
    cases = [([], "1 lines but"), (["--metrics", "BLEU,LongYAAL"], "no times, so no LongYAAL")]
    for extra, expected in cases:
        assert main(["score", *base, *extra]) == 2
        err = capsys.readouterr().err
        assert expected in err and err.count("\n") == 1, err
    seg.write_text("docid=0;segid=0\ndocid=1,segid=0\n", encoding="utf-8")
    assert main(["score", *base]) == 2
    assert "line 1: expected docid=DOC,segid=SEG" in capsys.readouterr().err


# --- SimulStream log with hf pieces -------------------------------------------------------------------------------

SIMULSTREAM = EXAMPLES / "simulstream_example"
SIMULSTREAM_ARGS = [str(SIMULSTREAM / "simulstream_log.jsonl"),
                    "--segmentation", str(SIMULSTREAM / "ref_segments.yaml"),
                    "--references", str(SIMULSTREAM / "references.txt"),
                    "--simulstream-config", str(SIMULSTREAM / "cfg.yaml"),
                    "--target-lang", "de", "--metrics", ",".join(LONG)]
CORRECTED_IN_0_1_10 = ("LongYAAL", "LongYAAL_CA")


@pytest.mark.slow
def test_simulstream_hf_example_equals_its_scores_tsv_and_omnisteval_0_1_10(capsys, tmp_path,
                                                                            seamless_folder) -> None:
    ours, _ = harness_scores(capsys, SIMULSTREAM, *SIMULSTREAM_ARGS)
    tsv = read_tsv(SIMULSTREAM / "segmentation_output" / "scores.tsv")
    assert_printed(ours, tsv, [k for k in _long() if k not in CORRECTED_IN_0_1_10])
    # OmniSTEval 0.1.10 itself, its hf detokenizer loading a SeamlessM4T processor from disk (decoding pieces needs
    # only the tokenizer's SentencePiece decoder, not its vocabulary)
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text((SIMULSTREAM / "cfg.yaml").read_text(encoding="utf-8").replace(
        '"facebook/hf-seamless-m4t-medium"', f'"{seamless_folder}"'), encoding="utf-8")
    theirs = omnisteval_scores(SIMULSTREAM, tmp_path / "omni", "longform", "--speech_segmentation",
                               "ref_segments.yaml", "--ref_sentences_file", "references.txt", "--hypothesis_file",
                               "simulstream_log.jsonl", "--simulstream_config_file", str(cfg), "--hypothesis_format",
                               "simulstream", "--lang", "de", "--bleu_tokenizer", "13a", "--word_level")
    assert_full(ours, theirs, _long())
    assert all(printed(ours[k]["score"], k) != tsv[tsv_name(k)] for k in CORRECTED_IN_0_1_10)
    with_tokenizer, _ = harness_scores(capsys, SIMULSTREAM, *SIMULSTREAM_ARGS, "--simulstream-tokenizer",
                                       str(seamless_folder))
    assert_full(with_tokenizer, theirs, _long())
