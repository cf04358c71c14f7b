"""Campaign profiles without the original binary: the table, the 2025 tool's delay and CA arithmetic worked by hand,
the command line and the track config, the default's output unchanged, and one line where the binary is missing."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pytest
import soundfile

from harness.cli import main
from harness.errors import HarnessError
from harness.interop import fix_simuleval_emission_ca
from harness.metrics.stream_laal_fbk import FbkRecording, fbk_times
from harness.profiles import DEFAULT_PROFILE, PROFILES, get_profile
from harness.recordings import RefSentence
from harness.scoring.options import ScoringOptions
from tests.longform_support import udhr_talks, write_peer_inputs


def test_the_table_names_every_campaign_and_its_choices() -> None:
    assert DEFAULT_PROFILE == "iwslt2026" and {"iwslt2025", "iwslt2025-v1", "iwslt2026"} <= set(PROFILES)
    v2, v1, today = get_profile("iwslt2025"), get_profile("iwslt2025-v1"), get_profile(None)
    assert (v2.stream_segmenter, v2.case_sensitive, v2.cjk_tokens, v2.delay_cap) == ("mwerbinary", True, "chars", True)
    assert (v1.cjk_tokens, v1.delay_cap) == ("none", False)
    assert (today.stream_segmenter, today.delay_cap, today.simuleval_ca) == ("mweralign", False, "as-is")
    assert v2.tokenizer_for("zh") == "zh" and v2.tokenizer_for("ja") == "ja-mecab" and v2.tokenizer_for("de") == "13a"
    with pytest.raises(HarnessError, match="unknown scoring profile 'iwslt2024' \\(known: iwslt2026, iwslt2025"):
        get_profile("iwslt2024")
    with pytest.raises(HarnessError, match="unknown scoring profile"):
        ScoringOptions(profile="nope")


def _sentence(offset: float) -> RefSentence:
    return RefSentence("talk", offset, 2000.0, {"orig": "x"})


def test_delays_and_ca_times_as_the_2025_tool_hands_them_out() -> None:
    """Two sentences at 1000 and 5000 ms; units written before their sentence began; SimulEval's cumulative
    elapsed with two units of one write (equal elapsed)."""
    rec = FbkRecording(sentences=[_sentence(1000.0), _sentence(5000.0)], prediction="a b c d",
                       delays=[500.0, 1500.0, 4000.0, 4000.0], elapsed=[700.0, 1900.0, 4600.0, 4600.0])
    v2 = fbk_times(rec, ["a b", "c d"], "word", cap=True)
    # unit 0: first of the recording: its elapsed as it is; 700-1000 -> capped at 0; delay 500-1000 -> 0
    # unit 1: 1900-700+500 = 1700 -> 700 after the sentence start; delay 500
    assert v2[0] == ([0.0, 500.0], [0.0, 700.0])
    # unit 2: 4600-1900+1500 = 4200 -> -800 -> 0 (sentence 2 starts at 5000); delay -1000 -> 0
    # unit 3: equal elapsed: previous stream elapsed - previous stream delay + its delay = 0 - 0 + 4000 -> 0 (capped)
    assert v2[1] == ([0.0, 0.0], [0.0, 0.0])
    v1 = fbk_times(rec, ["a b", "c d"], "word", cap=False)
    assert v1[0] == ([-500.0, 500.0], [-300.0, 700.0])
    # unit 3 uncapped: (-800) - (-1000) + 4000 - 5000 = -800
    assert v1[1] == ([-1000.0, -1000.0], [-800.0, -800.0])
    # an empty piece takes no unit; a char piece counts its characters
    chars = FbkRecording(sentences=[_sentence(0.0), _sentence(100.0), _sentence(200.0)], prediction="啊啊啊",
                         delays=[10.0, 20.0, 300.0], elapsed=None)
    assert fbk_times(chars, ["啊啊", "", "啊"], "char", cap=True) == [([10.0, 20.0], None), ([], None),
                                                                     ([100.0], None)]
    # per-unit CA times (the harness's own logs, SimulStream's): only shifted to the sentence start and capped
    own = FbkRecording(sentences=rec.sentences, prediction=rec.prediction, delays=rec.delays,
                       elapsed=[600.0, 1600.0, 4100.0, 5200.0], cumulative_elapsed=False)
    assert fbk_times(own, ["a b", "c d"], "word", cap=True) == [([0.0, 500.0], [0.0, 600.0]),
                                                               ([0.0, 0.0], [0.0, 200.0])]


def test_a_simuleval_log_says_its_elapsed_times_are_cumulative(tmp_path) -> None:
    from harness.interop import read_jsonl_hypotheses

    log = tmp_path / "instances.log"
    log.write_text(json.dumps({"source": ["a.wav"], "prediction": "x y", "delays": [100.0, 300.0],
                               "elapsed": [150.0, 420.0], "source_length": 1000.0}) + "\n", encoding="utf-8")
    (plain,) = read_jsonl_hypotheses(log)
    assert plain["elapsed_kind"] == "simuleval" and plain["elapsed"] == [150.0, 420.0]
    (fixed,) = read_jsonl_hypotheses(log, fix_emission_ca=True)
    assert "elapsed_kind" not in fixed and fixed["elapsed"] == [150.0, 370.0]  # 420 - 150 + 100


def test_the_omnisteval_fix_of_simuleval_elapsed_times() -> None:
    omni = pytest.importorskip("omnisteval.data")
    from omnisteval.alignment import Word

    delays = [100.0, 100.0, 400.0, 900.0, 900.0]
    elapsed = [150.0, 230.0, 700.0, 1000.0, 1400.0]
    theirs = omni.fix_emission_ca([Word(str(i), emission_cu=d, emission_ca=e)
                                   for i, (d, e) in enumerate(zip(delays, elapsed, strict=True))])
    assert fix_simuleval_emission_ca(delays, elapsed) == [w.emission_ca for w in theirs]


def _score(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(["score", *argv])
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def peer_files(tmp_path_factory) -> dict[str, Path]:
    return write_peer_inputs(udhr_talks(count=2, per_talk=12), tmp_path_factory.mktemp("profiles"))


def test_the_default_profile_is_today_s_output(peer_files) -> None:
    args = [str(peer_files["jsonl"]), "--segmentation", str(peer_files["segmentation"]), "--references",
            str(peer_files["references"]), "--target-lang", "es", "--format", "json", "--no-write",
            "--bootstrap", "10"]
    rc, plain, _ = _score(*args)
    rc2, named, _ = _score(*args, "--profile", "iwslt2026")
    assert rc == rc2 == 0 and plain == named
    scores = json.loads(plain)
    assert scores["info"]["profile"] == "iwslt2026" and "LongYAAL" in scores and "StreamLAAL" in scores
    assert not any("profile:" in str(rec.get("signature", "")) for rec in scores.values() if isinstance(rec, dict))
    assert scores["BLEU"]["signature"].endswith("|reseg:softsegmenter+moses:es")


def test_a_missing_binary_is_one_line_before_any_work(peer_files, monkeypatch) -> None:
    monkeypatch.setenv("HARNESS_MWERSEGMENTER", "/nowhere/mwerSegmenter")
    rc, _, err = _score(str(peer_files["jsonl"]), "--segmentation", str(peer_files["segmentation"]),
                        "--references", str(peer_files["references"]), "--profile", "iwslt2025", "--no-write")
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert "HARNESS_MWERSEGMENTER=/nowhere/mwerSegmenter is not a file" in err and "Traceback" not in err


def test_an_unknown_profile_on_the_command_line_is_refused(peer_files) -> None:
    with pytest.raises(SystemExit) as exc, redirect_stderr(io.StringIO()) as err:
        main(["score", str(peer_files["jsonl"]), "--profile", "iwslt1999"])
    assert exc.value.code == 2 and "iwslt2025-v1" in err.getvalue()


def _track_config(tmp_path: Path, extra: str, segmentation: str = "longform", target: str = "es") -> Path:
    (tmp_path / "seg.yaml").write_text("- {wav: a.wav, offset: 0.0, duration: 1.0}\n", encoding="utf-8")
    (tmp_path / "ref.txt").write_text("hola\n", encoding="utf-8")
    (tmp_path / "a.wav").write_bytes(b"")
    cfg = tmp_path / "task.yaml"
    seg = "segmentation: seg.yaml, " if segmentation == "longform" else ""
    cfg.write_text(f"""task: t
tracks:
  - name: s
    modality: speech
    source_lang: en
    target_lang: {target}
    segmentation: {segmentation}
{extra}    datasets:
      dev: {{source: a.wav, {seg}references: {{orig: ref.txt}}}}
""", encoding="utf-8")
    return cfg


def test_a_track_names_its_profile(tmp_path) -> None:
    from harness.config import ConfigError, load_config
    from harness.scoring.options import track_scoring_options

    track = load_config(_track_config(tmp_path, "    profile: iwslt2025\n"), check_files=False).tracks[0]
    assert track.profile == "iwslt2025" and track_scoring_options(track).profile == "iwslt2025"
    assert track.resegmentation == "mwersegmenter"  # the 2025 tool's BLEU is on the binary's sentences
    assert track.tokenizer == "13a"  # es: the profile's default
    zh = load_config(_track_config(tmp_path, "    profile: iwslt2025\n", target="zh"), check_files=False).tracks[0]
    assert zh.tokenizer == "zh"  # as the 2025 eval.sh; iwslt2026 keeps 13a unless the track names one
    assert load_config(_track_config(tmp_path, "", target="zh"), check_files=False).tracks[0].tokenizer == "13a"
    assert load_config(_track_config(tmp_path, ""), check_files=False).tracks[0].profile == "iwslt2026"
    with pytest.raises(ConfigError, match="profile"):
        load_config(_track_config(tmp_path, "    profile: iwslt1999\n"), check_files=False)
    with pytest.raises(ConfigError, match="only long-form tracks"):
        load_config(_track_config(tmp_path, "    profile: iwslt2025\n", "shortform"), check_files=False)


def test_check_config_and_evaluate_name_a_2025_track_whose_binary_cannot_run(tmp_path, monkeypatch, capsys) -> None:
    """A track scored under iwslt2025 needs the original binary: where it is missing, check-config says so for that
    track, and evaluate stops in one line before any submission is looked at."""
    monkeypatch.setenv("HARNESS_MWERSEGMENTER", "/nowhere/mwerSegmenter")
    cfg = _track_config(tmp_path, "    profile: iwslt2025\n")
    assert main(["check-config", str(cfg)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert (f"{cfg}: track 's': profile: iwslt2025 runs the original mwerSegmenter: mwerSegmenter: "
            "HARNESS_MWERSEGMENTER=/nowhere/mwerSegmenter is not a file") in lines
    (tmp_path / "dev.list").write_text("a.wav\n", encoding="utf-8")
    soundfile.write(tmp_path / "a.wav", np.zeros(16000, dtype=np.int16), 16000, subtype="PCM_16")
    cfg.write_text(cfg.read_text(encoding="utf-8").replace("source: a.wav", "source: dev.list"), encoding="utf-8")
    with redirect_stderr(io.StringIO()) as err:
        rc = main(["evaluate", str(tmp_path / "no-such-submission"), "--config", str(cfg), "--output",
                   str(tmp_path / "results"), "--dataset", "dev"])
    assert rc == 2 and "profile: iwslt2025 runs the original mwerSegmenter" in err.getvalue()
    assert len(err.getvalue().strip().splitlines()) == 1 and not (tmp_path / "results").exists()
    monkeypatch.delenv("HARNESS_MWERSEGMENTER")
    plain = _track_config(tmp_path, "")  # the 2026 profile needs no binary
    main(["check-config", str(plain)])
    assert "mwerSegmenter" not in capsys.readouterr().out
