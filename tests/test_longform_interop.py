"""Long-form logs both ways: `harness score` reads SimulEval/OmniSTEval JSONL and SimulStream metrics logs (with the
segmentation given on the command line) and agrees with each peer on its own log; `harness export` writes a run in
each peer's format and the peer's own scorer agrees with ours."""

from __future__ import annotations

import argparse
import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from harness import interop
from harness.cli import main
from tests.longform_support import udhr_talks, write_peer_inputs

OMNI = {"LongYAAL": "LongYAAL (CU)", "LongAL": "LongAL (CU)", "LongLAAL": "LongLAAL (CU)", "LongAP": "LongAP (CU)",
        "LongDAL": "LongDAL (CU)", "LongYAAL_CA": "LongYAAL (CA)", "LongDAL_CA": "LongDAL (CA)", "BLEU": "BLEU",
        "chrF": "chrF"}


def _close(a: float, b: float, tol: float = 1e-9) -> bool:
    return math.isclose(a, b, rel_tol=tol, abs_tol=tol)


@pytest.fixture(scope="module")
def peer_files(tmp_path_factory) -> dict[str, Path]:
    return write_peer_inputs(udhr_talks(count=2, per_talk=12, seed=11), tmp_path_factory.mktemp("interop"))


def _score(capsys, *args: str) -> dict:
    assert main(["score", *args, "--format", "json", "--no-write", "--bootstrap", "1"]) == 0
    return json.loads(capsys.readouterr().out)


def _omnisteval_cli(hypothesis: Path, segmentation: Path, references: Path, out: Path) -> dict[str, float]:
    subprocess.run([sys.executable, "-m", "omnisteval.cli", "longform", "--speech_segmentation", str(segmentation),
                    "--ref_sentences_file", str(references), "--hypothesis_file", str(hypothesis),
                    "--output_folder", str(out), "--word_level"],
                   check=True, capture_output=True, text=True, timeout=300)
    rows = (out / "scores.tsv").read_text(encoding="utf-8").splitlines()[1:]
    return {name: float(value) for name, value in (r.split("\t") for r in rows) if value not in ("YES", "NO")}


def _stream_laal(log: Path, config: Path, segmentation: Path, references: Path) -> tuple[float, float]:
    from simulstream.config import yaml_config
    from simulstream.metrics.readers import LogReader, YamlReferenceReader
    from simulstream.metrics.scorers.latency import LatencyScoringSample
    from simulstream.metrics.scorers.latency.stream_laal import StreamLaal

    outputs = LogReader(yaml_config(str(config)), str(log)).final_outputs_and_latencies()
    refs = YamlReferenceReader(str(segmentation), str(references)).references
    s = StreamLaal(argparse.Namespace(latency_unit="word")).score(
        [LatencyScoringSample(a, outputs[a], refs[a]) for a in refs])
    return s.ideal_latency * 1000.0, s.computational_aware_latency * 1000.0


def test_score_reads_an_omnisteval_jsonl_and_agrees_with_omnisteval(peer_files, tmp_path, capsys) -> None:
    ours = _score(capsys, str(peer_files["jsonl"]), "--segmentation", str(peer_files["segmentation"]),
                  "--references", str(peer_files["references"]))
    theirs = _omnisteval_cli(peer_files["jsonl"], peer_files["segmentation"], peer_files["references"], tmp_path)
    for key, name in OMNI.items():  # scores.tsv has 4 decimals
        assert abs(ours[key]["score"] - theirs[name]) <= 6e-5, (key, ours[key]["score"], theirs[name])


def test_score_reads_a_simulstream_log_and_agrees_with_simulstream(peer_files, capsys) -> None:
    ours = _score(capsys, str(peer_files["simulstream_log"]), "--segmentation", str(peer_files["segmentation"]),
                  "--references", str(peer_files["references"]), "--simulstream-config",
                  str(peer_files["simulstream_config"]))
    ideal, aware = _stream_laal(peer_files["simulstream_log"], peer_files["simulstream_config"],
                                peer_files["segmentation"], peer_files["references"])
    assert _close(ours["StreamLAAL"]["score"], ideal) and _close(ours["StreamLAAL_CA"]["score"], aware)


def _revising_log(path: Path, seed: int) -> None:
    """A SimulStream log of a re-translating system: chunks that delete the last tokens and write new ones."""
    rng = random.Random(seed)
    words = "el derecho de toda persona a la vida la libertad y la seguridad de su persona".split()
    with path.open("w", encoding="utf-8") as f:
        for cid in range(2):
            f.write(json.dumps({"id": cid, "metadata": {"wav_name": f"/data/talk{cid}.wav"}}) + "\n")
            tokens: list[str] = []
            t = 0.0
            for _ in range(40):
                t += 0.32
                deleted = tokens[-rng.randint(1, min(3, len(tokens))):] if tokens and rng.random() < 0.3 else []
                if deleted:
                    tokens = tokens[:-len(deleted)]
                new = [rng.choice(words) for _ in range(rng.randint(0, 3))]
                tokens += new
                f.write(json.dumps({"id": cid, "total_audio_processed": round(t, 2),
                                    "computation_time": round(rng.uniform(0.01, 0.2), 4),
                                    "generated_tokens": new, "deleted_tokens": deleted}) + "\n")


def test_simulstream_reader_equals_simulstream_on_revising_logs(tmp_path) -> None:
    from simulstream.config import yaml_config
    from simulstream.metrics.readers import LogReader

    config = tmp_path / "eval.yaml"
    config.write_text("detokenizer_type: simuleval\nlatency_unit: word\n", encoding="utf-8")
    for seed in range(5):
        log = tmp_path / f"m{seed}.jsonl"
        _revising_log(log, seed)
        theirs = LogReader(yaml_config(str(config)), str(log)).final_outputs_and_latencies()
        ours = interop.read_simulstream_log(log, config)
        assert [Path(r["source"][0]).stem for r in ours] == list(theirs)
        for rec, out in zip(ours, theirs.values(), strict=True):
            assert rec["prediction"] == " ".join(out.final_text.split())
            assert rec["delays"] == pytest.approx([d * 1000 for d in out.ideal_delays], abs=1e-9)
            assert rec["elapsed"] == pytest.approx([d * 1000 for d in out.computational_aware_delays], abs=1e-9)
            assert rec["revisions"]  # deletions make it a re-translation log (NE applies)


def test_export_to_both_peers_and_their_scorers_agree(peer_files, tmp_path, capsys) -> None:
    run = tmp_path / "run"
    run.mkdir()
    records = interop.attach_segmentation(interop.read_jsonl_hypotheses(peer_files["jsonl"]),
                                          peer_files["segmentation"], {"orig": peer_files["references"]})
    (run / "instances.log").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    ours = _score(capsys, str(run))
    assert main(["export", str(run), "--to", "simulstream", "--output", str(tmp_path / "ss")]) == 0
    capsys.readouterr()
    ss = tmp_path / "ss"
    ideal, aware = _stream_laal(ss / "metrics.jsonl", ss / "eval.yaml", ss / "segmentation.yaml",
                                ss / "references.orig.txt")
    assert _close(ours["StreamLAAL"]["score"], ideal) and _close(ours["StreamLAAL_CA"]["score"], aware)
    assert main(["export", str(run), "--to", "omnisteval", "--output", str(tmp_path / "om")]) == 0
    om = tmp_path / "om"
    theirs = _omnisteval_cli(om / "hypotheses.jsonl", om / "segmentation.yaml", om / "references.orig.txt",
                             tmp_path / "om-out")
    for key, name in OMNI.items():
        assert abs(ours[key]["score"] - theirs[name]) <= 6e-5, key


def test_foreign_logs_with_bad_inputs_fail_in_one_line(peer_files, tmp_path, capsys) -> None:
    assert main(["score", str(peer_files["jsonl"]), "--segmentation", str(peer_files["segmentation"])]) == 2
    assert "needs --references" in capsys.readouterr().err
    config = tmp_path / "hf.yaml"
    config.write_text("detokenizer_type: hf\nhf_model_name: x\n", encoding="utf-8")
    assert main(["score", str(peer_files["simulstream_log"]), "--segmentation", str(peer_files["segmentation"]),
                 "--references", str(peer_files["references"]), "--simulstream-config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "cannot be joined without the model's tokenizer" in err and err.count("\n") == 1  # its pieces are words
    assert main(["export", str(tmp_path), "--to", "omnisteval", "--output", str(tmp_path / "x")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_export_of_a_run_with_a_silent_recording_is_read_by_simulstream(peer_files, tmp_path, capsys) -> None:
    """A recording with no output at all: simulstream's own scorer reads our export (one chunk generating nothing)
    and gives the StreamLAAL we give."""
    lines = peer_files["jsonl"].read_text(encoding="utf-8").splitlines()
    silent = json.loads(lines[1])
    silent.update(prediction="", delays=[], elapsed=[])
    log = tmp_path / "hyp.jsonl"
    log.write_text(lines[0] + "\n" + json.dumps(silent) + "\n", encoding="utf-8")
    run = tmp_path / "run"
    run.mkdir()
    records = interop.attach_segmentation(interop.read_jsonl_hypotheses(log), peer_files["segmentation"],
                                          {"orig": peer_files["references"]})
    (run / "instances.log").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    ours = _score(capsys, str(run))
    assert main(["export", str(run), "--to", "simulstream", "--output", str(tmp_path / "ss")]) == 0
    ss = tmp_path / "ss"
    ideal, aware = _stream_laal(ss / "metrics.jsonl", ss / "eval.yaml", ss / "segmentation.yaml",
                                ss / "references.orig.txt")
    assert _close(ours["StreamLAAL"]["score"], ideal) and _close(ours["StreamLAAL_CA"]["score"], aware)


def test_export_takes_a_foreign_log_with_its_segmentation(peer_files, tmp_path, capsys) -> None:
    out = tmp_path / "om"
    assert main(["export", str(peer_files["simulstream_log"]), "--to", "omnisteval", "--output", str(out),
                 "--segmentation", str(peer_files["segmentation"]), "--references", str(peer_files["references"]),
                 "--simulstream-config", str(peer_files["simulstream_config"])]) == 0
    capsys.readouterr()
    exported = [json.loads(x) for x in (out / "hypotheses.jsonl").read_text(encoding="utf-8").splitlines()]
    theirs = [json.loads(x) for x in peer_files["jsonl"].read_text(encoding="utf-8").splitlines()]
    assert [e["prediction"] for e in exported] == [t["prediction"] for t in theirs]
    for e, t in zip(exported, theirs, strict=True):  # seconds in the log, milliseconds here: equal up to rounding
        assert len(e["delays"]) == len(t["delays"])
        assert all(_close(a, b, 1e-6) for a, b in zip(e["delays"], t["delays"], strict=True))
    assert (out / "references.orig.txt").read_text(encoding="utf-8") == \
        peer_files["references"].read_text(encoding="utf-8")
    # without the segmentation a foreign log is refused in one line that names the way out
    assert main(["export", str(peer_files["jsonl"]), "--to", "omnisteval", "--output", str(tmp_path / "x")]) == 2
    assert "--segmentation" in capsys.readouterr().err


def test_a_jsonl_without_a_line_for_a_recording_scores_it_as_empty_with_a_warning(peer_files, tmp_path,
                                                                                   capsys) -> None:
    lines = peer_files["jsonl"].read_text(encoding="utf-8").splitlines()
    log = tmp_path / "one.jsonl"
    log.write_text(lines[0] + "\n", encoding="utf-8")
    assert main(["score", str(log), "--segmentation", str(peer_files["segmentation"]), "--references",
                 str(peer_files["references"]), "--format", "json", "--no-write", "--bootstrap", "1"]) == 0
    captured = capsys.readouterr()
    ours, err = json.loads(captured.out), captured.err
    assert "no line for 1 of the 2 recordings" in err and "wavs/talk1.wav (12 sentences)" in err
    assert "scored as empty output" in err and err.count("recordings of") == 1  # one line, not one per recording
    assert ours["counts"]["instances"] == 2 and ours["counts"]["empty_instances"] == 1
    assert ours["counts"]["sentences"] == 24 and ours["counts"]["empty_sentences"] >= 12
    # --strict refuses such a log in one line that counts what is missing
    assert main(["score", str(log), "--segmentation", str(peer_files["segmentation"]), "--references",
                 str(peer_files["references"]), "--format", "json", "--no-write", "--strict"]) == 2
    err = capsys.readouterr().err
    assert "no line for 1 of the 2 recordings" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
