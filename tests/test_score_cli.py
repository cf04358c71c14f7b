"""`harness score`: output, scores.json, reference sets, counts, and one-line errors naming file and line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.scoring import score_path, score_records
from harness.scoring.options import ScoringOptions

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "runs" / "udhr-dev-waitk3"
LATENCY = ["AL", "LAAL", "AP", "DAL", "ATD", "StartOffset", "EndOffset", "YAAL"]
DIAGNOSTIC = ["SWF", "EFSW", "DSPTV", "DegeneratePolicy"]


def _rec(i: int, **kw) -> dict:
    rec = {
        "index": i,
        "prediction": "una casa verde",
        "delays": [1, 2, 3],
        "elapsed": [1.5, 2.5, 3.5],
        "prediction_length": 3,
        "reference": "una casa verde",
        "references": {"orig": "una casa verde", "mono": "la casa es verde"},
        "source": "a green house",
        "source_length": 3,
        "status": "ok",
        "latency_unit": "word",
    }
    rec.update(kw)
    return rec


def _write(tmp_path: Path, lines: list[str], end: str = "\n") -> Path:
    log = tmp_path / "instances.log"
    log.write_text("\n".join(lines) + end, encoding="utf-8")
    return log


def test_example_run_table_and_scores_json(tmp_path, capsys) -> None:
    run = tmp_path / "run"
    shutil.copytree(EXAMPLE, run)
    assert main(["score", str(run)]) == 0
    out = capsys.readouterr().out
    assert "LAAL" in out and "instances: 40" in out and "nrefs:1" in out
    scores = json.loads((run / "scores.json").read_text())
    assert scores["counts"] == {"instances": 40, "empty_instances": 0, "failed_instances": 0}
    for name in ["BLEU", "chrF", "TER", *LATENCY]:
        low, high = scores[name]["ci95"]
        assert low <= scores[name]["score"] <= high, name
    # the figures SimulEval printed for this very run (scores.tsv, 3 decimals; its text ATD is not comparable)
    header, values = (EXAMPLE / "scores.tsv").read_text(encoding="utf-8").splitlines()[:2]
    for name, value in zip(header.split("\t"), values.split("\t"), strict=True):
        if name != "ATD":
            assert scores[name]["score"] == pytest.approx(float(value), abs=5e-4), name
    assert scores["AL"]["unit"] == "word" and scores["AL"]["computation_aware"] is False
    assert "AL_CA" not in scores  # SimulEval text runs carry no elapsed times (all zeros)
    assert "signature" in scores["BLEU"] and scores["BLEU"]["reference_set"] == "orig"


def test_format_json_keys(tmp_path, capsys) -> None:
    log = _write(tmp_path, [json.dumps(_rec(0)), json.dumps(_rec(1, status="timeout", delays=[], elapsed=[],
                                                                    prediction="", prediction_length=0))])
    assert main(["score", str(log), "--format", "json", "--bootstrap", "100"]) == 0
    scores = json.loads(capsys.readouterr().out)
    expected = {"BLEU", "chrF", "TER", *LATENCY, *DIAGNOSTIC, "counts", "info"}  # a text track: no _CA metrics
    expected |= {f"{q}@{s}" for q in ("BLEU", "chrF", "TER") for s in ("mono", "multi")}
    assert set(scores) == expected
    assert scores["counts"] == {"instances": 2, "empty_instances": 1, "failed_instances": 1}
    assert scores["BLEU@multi"]["signature"].startswith("nrefs:2")
    assert scores["BLEU@mono"]["reference_set"] == "mono"
    assert scores["AL"]["score"] == pytest.approx(1.0)  # the empty instance is left out of the mean
    assert scores["AL"]["computation_aware"] is False
    assert (tmp_path / "scores.json").is_file()


def test_all_empty_corpus_gives_clear_result() -> None:
    recs = [_rec(i, prediction="", delays=[], elapsed=[], prediction_length=0) for i in range(3)]
    scores = score_records(recs, ScoringOptions(bootstrap=50), latency_unit="word")
    assert scores["BLEU"]["score"] == 0.0
    assert scores["AL"]["score"] is None and "no instance" in scores["AL"]["note"]
    assert scores["counts"]["empty_instances"] == 3


def test_retranslation_log_has_ne() -> None:
    revs = [{"delay": 1, "elapsed": 1.2, "text": "una"}, {"delay": 2, "elapsed": 2.2, "text": "la casa"},
            {"delay": 3, "elapsed": 3.3, "text": "la casa verde"}]
    scores = score_records([_rec(0, revisions=revs, prediction="la casa verde")], ScoringOptions(bootstrap=1),
                           latency_unit="word")
    ne = {k: scores["NE"][k] for k in ("score", "unit", "instances", "direction")}
    assert ne == {"score": pytest.approx(1 / 3), "unit": "token", "instances": 1, "direction": "lower"}


def test_char_unit_keeps_spaces_for_bleu() -> None:
    text = "我 爱 你 们 的 家"
    rec = _rec(0, prediction=text, reference=text, references=None, delays=[1, 2, 3, 3, 3, 3],
               elapsed=None, prediction_length=6, latency_unit="char")
    scores = score_records([rec], ScoringOptions(bootstrap=1), latency_unit="char")
    assert scores["BLEU"]["score"] == pytest.approx(100.0)  # SimulEval would score "我爱你们的家"


@pytest.mark.parametrize(
    "lines,end,message",
    [
        (["{\"index\": 0"], "\n", ":1: not a JSON line"),
        ([json.dumps(_rec(0)), json.dumps(_rec(1))[:-5]], "", ":2: torn last line"),
        ([json.dumps(_rec(0)), json.dumps(_rec(1))], "", ":2: torn last line (interrupted write)"),
        ([json.dumps(_rec(0, delays=[2, 1, 3]))], "\n", ":1: delays decrease at position 1"),
        ([json.dumps(_rec(0, delays=[1, 2, 9]))], "\n", ":1: delay 2 (9) is beyond the source length (3)"),
        ([json.dumps(_rec(0)), json.dumps(_rec(1, reference=None, references=None))], "\n", ":2: no reference"),
        ([json.dumps(_rec(0, elapsed=[1]))], "\n", ":1: 'elapsed' has 1 values but 'delays' has 3"),
        ([json.dumps(_rec(0)), json.dumps(_rec(0))], "\n", ":2: index 0 already on line 1"),
        ([json.dumps({k: v for k, v in _rec(0).items() if k != "source_length"})], "\n", "missing field"),
    ],
)
def test_bad_input_one_line(tmp_path, capsys, lines, end, message) -> None:
    log = _write(tmp_path, lines, end)
    assert main(["score", str(log)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(log) in err and message in err, err


def test_missing_file_and_console_script_has_no_traceback(tmp_path) -> None:
    missing = tmp_path / "nope"
    proc = subprocess.run([sys.executable, "-m", "harness", "score", str(missing)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"harness score: error: {missing}/instances.log: no such file" or (
        "no such file" in proc.stderr and str(missing) in proc.stderr
    )
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


def test_score_path_matches_records(tmp_path) -> None:
    log = _write(tmp_path, [json.dumps(_rec(i)) for i in range(3)])
    assert score_path(log, ScoringOptions(bootstrap=1))["LAAL"]["score"] == pytest.approx(1.0)


def test_partial_runs_can_drop_a_half_written_last_line(tmp_path) -> None:
    log = _write(tmp_path, [json.dumps(_rec(0)), json.dumps(_rec(1))[:-7]], "")
    scores = score_path(log, ScoringOptions(bootstrap=1), allow_torn=True)
    assert scores["counts"]["instances"] == 1


def test_score_writes_per_instance_metrics(tmp_path) -> None:
    from harness.scoring import instance_metrics

    run = tmp_path / "run"
    shutil.copytree(EXAMPLE, run)
    assert main(["score", str(run)]) == 0
    rows = [json.loads(x) for x in (run / "instance_scores.jsonl").read_text(encoding="utf-8").splitlines()]
    records = [json.loads(x) for x in (run / "instances.log").read_text(encoding="utf-8").splitlines()]
    assert [r["index"] for r in rows] == sorted(r["index"] for r in records) and len(rows) == 40
    by_index = {r["index"]: r for r in records}
    for row in rows:
        expected = instance_metrics(by_index[row["index"]], "word")
        assert set(row) == {"index", *LATENCY}
        for name in LATENCY:
            assert row[name] == pytest.approx(expected[name]), (row["index"], name)


def test_all_zero_elapsed_in_a_harness_log_is_a_value() -> None:
    """A harness client that wrote a whole sentence at once has elapsed [0, 0, 0]: scored, never dropped."""
    speech = {"source": ["a.wav"], "latency_unit": "ms"}  # computation-aware metrics are speech-only
    honest = _rec(0, elapsed=[3.0, 4.0, 5.0], delays=[3, 3, 3], **speech)
    cheat = _rec(1, elapsed=[0, 0, 0], delays=[0, 0, 0], **speech)
    scores = score_records([honest, cheat], ScoringOptions(bootstrap=1), latency_unit="ms")
    alone = score_records([honest], ScoringOptions(bootstrap=1), latency_unit="ms")
    assert scores["counts"]["instances"] == 2
    assert scores["StartOffset_CA"]["score"] == pytest.approx((3.0 + 0.0) / 2)  # both instances count
    assert alone["StartOffset_CA"]["score"] == pytest.approx(3.0)
    # a SimulEval log (no `status`, no `latency_unit`) writes zeros for "not measured": no _CA metrics
    simuleval = [{k: v for k, v in _rec(i, elapsed=[0, 0, 0], **speech).items() if k not in ("status", "latency_unit")}
                 for i in range(2)]
    assert "AL_CA" not in score_records(simuleval, ScoringOptions(bootstrap=1), latency_unit="ms")
