"""Long-form runs end to end without Docker (`harness run`, joint mode): a whole bundled talk streamed as one
instance, its output stream resegmented and scored; the log is read by OmniSTEval as it is; bad datasets fail with one
line naming the file."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest
import yaml

from harness.cli import main
from harness.config import load_config
from harness.data.loader import load_dataset
from harness.errors import HarnessError

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "longform.yaml"
DATA = ROOT / "data" / "longform"
ORACLE = ROOT / "tests" / "agents" / "longform_oracle.py"

pytestmark = pytest.mark.espeak  # the bundled talks are assembled from the espeak-ng reading of the dev set


def _run(out: Path, *extra: str, dataset: str = "dev", lag: str = "500") -> dict:
    code = main(["run", "--config", str(CONFIG), "--track", "longform-en-es", "--dataset", dataset,
                 "--agent", str(ORACLE), "--output", str(out), "--overwrite",
                 "--segmentation", str(DATA / f"{dataset}.yaml"), "--references", str(DATA / f"{dataset}.es"),
                 "--lag-ms", lag, *extra])
    assert code == 0
    return json.loads((out / "scores.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("longform") / "run"
    return out, _run(out)


def test_a_whole_talk_is_one_instance_with_one_output_stream(oracle_run) -> None:
    out, scores = oracle_run
    records = [json.loads(line) for line in (out / "instances.log").read_text(encoding="utf-8").splitlines()]
    assert len(records) == 1
    rec = records[0]
    assert rec["status"] == "ok" and rec["source_length"] > 7 * 60 * 1000  # the 7-minute talk
    assert len(rec["delays"]) == len(rec["prediction"].split()) == len(rec["elapsed"])
    assert rec["delays"] == sorted(rec["delays"]) and rec["delays"][-1] <= rec["source_length"]
    info = rec["longform"]
    assert info["resegmentation"] == "softsegmenter" and len(info["segments"]) == 40
    assert len(info["sentences"]["orig"]) == len(info["transcripts"]) == 40
    assert scores["counts"]["sentences"] == 40 and scores["counts"]["empty_sentences"] == 0


def test_oracle_output_resegments_exactly_onto_the_references(oracle_run) -> None:
    _, scores = oracle_run
    assert scores["BLEU"]["score"] == pytest.approx(100.0)
    assert scores["BLEU"]["signature"].endswith("|reseg:softsegmenter+moses:es")
    assert scores["StreamLAAL"]["resegmentation"] == "mwersegmenter"
    assert scores["LongYAAL"]["resegmentation"] == "softsegmenter"
    # a sentence is written at the first 320-ms segment boundary 500 ms past its end; its first word's delay is
    # then past the sentence's end, so LAAL per sentence is that delay from the sentence's offset
    seg = yaml.safe_load((DATA / "dev.yaml").read_text())
    lags = [math.ceil(((s["offset"] + s["duration"]) * 1000 + 500) / 320) * 320 - s["offset"] * 1000 for s in seg]
    assert scores["LongLAAL"]["score"] == pytest.approx(sum(lags) / len(lags), abs=1e-6)
    assert scores["StreamLAAL"]["score"] == pytest.approx(scores["LongLAAL"]["score"], abs=1e-6)
    assert scores["LongYAAL_CA"]["score"] >= scores["LongYAAL"]["score"]


@pytest.mark.slow
def test_omnisteval_reads_our_log_as_it_is_and_agrees(oracle_run) -> None:
    from omnisteval.io import load_resegmentation_inputs
    from omnisteval.resegment import resegment
    from omnisteval.scoring import evaluate_instances

    out, scores = oracle_run
    ref_words, hyp_words, seg, refs = load_resegmentation_inputs(
        str(DATA / "dev.yaml"), None, str(DATA / "dev.es"), str(out / "instances.log"))
    instances, _ = resegment(ref_words, hyp_words, seg, refs)
    peer, _, _ = evaluate_instances(instances, is_longform=True)
    assert math.isclose(peer["bleu"], scores["BLEU"]["score"], rel_tol=1e-9)
    for ours, theirs in (("LongYAAL", "long_yaal"), ("LongAL", "long_al"), ("LongDAL", "long_dal"),
                         ("LongYAAL_CA", "ca_long_yaal"), ("LongAP_CA", "ca_long_ap")):
        assert math.isclose(scores[ours]["score"], peer[theirs], rel_tol=1e-9, abs_tol=1e-9), ours


@pytest.mark.slow
def test_an_empty_output_stream_is_scored_and_counted(tmp_path: Path) -> None:
    scores = _run(tmp_path / "run", lag="1e9")  # every sentence "due" after the end: written at the very end
    assert scores["BLEU"]["score"] == pytest.approx(100.0)
    silent = tmp_path / "silent.py"
    silent.write_text(
        "from harness.client.agent import ReadAction, SpeechAgent, WriteAction\n\n\n"
        "class Silent(SpeechAgent):\n    def policy(self, states):\n        states.source.clear()\n"
        "        return WriteAction('', finished=True) if states.source_finished else ReadAction()\n",
        encoding="utf-8")
    out = tmp_path / "silent"
    assert main(["run", "--config", str(CONFIG), "--track", "longform-en-es", "--dataset", "dev",
                 "--agent", str(silent), "--output", str(out)]) == 0
    s = json.loads((out / "scores.json").read_text(encoding="utf-8"))
    assert s["counts"]["empty_instances"] == 1 and s["counts"]["empty_sentences"] == 40
    assert s["BLEU"]["score"] == 0.0
    assert s["LongYAAL"]["score"] is None and "no sentence" in s["LongYAAL"]["note"]


def _copy_dataset(tmp_path: Path) -> tuple[Path, Path, Path]:
    shutil.copy(DATA / "talks" / "librivox.wav", tmp_path / "talk.wav")
    (tmp_path / "talks.list").write_text("talk.wav\n", encoding="utf-8")
    seg = yaml.safe_load((DATA / "asr.yaml").read_text(encoding="utf-8"))
    for s in seg:
        s["wav"] = "talk.wav"
    (tmp_path / "seg.yaml").write_text(yaml.safe_dump(seg), encoding="utf-8")
    shutil.copy(DATA / "asr.en", tmp_path / "ref.en")
    return tmp_path / "talks.list", tmp_path / "seg.yaml", tmp_path / "ref.en"


def _load(listing: Path, seg: Path, ref: Path):
    return load_dataset("speech", listing, {"orig": ref}, seg)


def test_bad_long_form_datasets_fail_with_one_line_naming_the_file(tmp_path: Path) -> None:
    listing, seg, ref = _copy_dataset(tmp_path)
    assert len(_load(listing, seg, ref).recordings[0].sentences) == len(ref.read_text().splitlines())
    entries = yaml.safe_load(seg.read_text())

    def fails(mutate, pattern: str, target: Path = seg) -> None:
        data = [dict(e) for e in entries]
        mutate(data)
        seg.write_text(yaml.safe_dump(data), encoding="utf-8")
        with pytest.raises(HarnessError, match=pattern) as err:
            _load(listing, seg, ref)
        assert "\n" not in str(err.value) and str(target) in str(err.value)
        seg.write_text(yaml.safe_dump(entries), encoding="utf-8")

    fails(lambda d: d[0].update(wav="other.wav"), r"wav 'other.wav' is not in .*talks.list")
    fails(lambda d: d[1].update(offset=d[0]["offset"] + d[0]["duration"] / 2), "overlaps the one before it")
    fails(lambda d: d[-1].update(duration=d[-1]["duration"] + 60), "past the end of")
    fails(lambda d: d[0].update(offset=-1), "offset must be a non-negative number")
    fails(lambda d: d.append(dict(d[-1], offset=d[-1]["offset"] + 100)), "lines but .* sentences", target=ref)
    seg.write_text("- [not, a, mapping]\n", encoding="utf-8")
    with pytest.raises(HarnessError, match="expected a mapping with wav, offset and duration"):
        _load(listing, seg, ref)


def test_config_refuses_long_form_fields_on_short_form_tracks_and_vice_versa(tmp_path: Path) -> None:
    from harness.errors import ConfigError

    text = CONFIG.read_text(encoding="utf-8").replace("../data", str(DATA.parent))
    bad = tmp_path / "c.yaml"
    short = re.sub(r"    segmentation: longform\n    resegmentation: .*\n", "", text, count=1)
    bad.write_text(short, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"tracks\[0\]\.latency\[0\]: 'LongYAAL' is not one of AL"):
        load_config(bad)
    short = short.replace("latency: [LongYAAL, StreamLAAL, LongAL, LongLAAL, LongAP, LongDAL]\n    primary: "
                          "{quality: BLEU, latency: LongYAAL}", "latency: [LAAL]\n    primary: {quality: BLEU}", 1)
    bad.write_text(short, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"tracks\[0\]\.datasets\.dev\.segmentation: only long-form tracks"):
        load_config(bad)
    bad.write_text(text.replace("[LongYAAL, StreamLAAL", "[LAAL, StreamLAAL", 1), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"tracks\[0\]\.latency\[0\]: 'LAAL' is not one of LongYAAL"):
        load_config(bad)
    bad.write_text(text.replace("resegmentation: softsegmenter", "resegmentation: mwer", 1), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"tracks\[0\]\.resegmentation: 'mwer' is not one of"):
        load_config(bad)


def test_recording_page_pages_the_timeline_and_links_every_sentence(oracle_run, tmp_path: Path) -> None:
    """The leaderboard's page of a 7-minute recording: 40 sentence rows, 4 timeline windows of 2 minutes, every
    sentence linked to its window and every window to its sentences."""
    from harness.scoring.results import score_results
    from leaderboard.render import render_site

    out, scores = oracle_run
    results = tmp_path / "results"
    run_dir = results / "oracle" / "dev"
    run_dir.mkdir(parents=True)
    shutil.copy(out / "instances.log", run_dir / "instances.log")
    config = load_config(CONFIG)
    runs = [{"submission": "oracle", "team": "tests", "system": "oracle", "track": "longform-en-es",
             "dataset": "dev", "status": "ok", "scores": scores}]
    (results / "summary.json").write_text(json.dumps({"config_sha256": None, "runs": runs}), encoding="utf-8")
    score_results(config, results, runs)
    render_site(results, tmp_path / "site", config)
    page = (tmp_path / "site" / "runs" / "oracle-dev" / "instances" / "0.html").read_text(encoding="utf-8")
    assert page.count('class="sentence"') == 40
    windows = re.findall(r'<section class="window" id="w(\d+)"', page)
    assert windows == ["0", "1", "2", "3"]  # 7.3 minutes in 2-minute windows
    for n in range(40):
        assert f'id="s{n}"' in page and f'href="#s{n}"' in page
    assert all(f'href="#w{w}"' in page for w in windows)
    assert "https://" not in page and "http://" not in page
    significance = json.loads((results / "significance" / "longform-en-es" / "dev.json").read_text())
    assert significance["metrics"] == ["BLEU", "LongYAAL"]


@pytest.mark.slow
def test_the_run_records_its_language_and_scoring_uses_it(oracle_run, capsys) -> None:
    """`harness score RUN` needs no --target-lang: the run recorded es, so SoftSegmenter splits with Moses (es)
    and METEOR uses the es modules, as the track says."""
    out, scores = oracle_run
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["target_lang"] == "es"
    assert scores["info"]["target_lang"] == "es" and scores["info"]["softsegmenter_tokens"] == "moses:es"
    assert main(["score", str(out), "--metrics", "METEOR", "LongYAAL", "--format", "json", "--no-write",
                 "--bootstrap", "1"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert "lang:es" in again["METEOR"]["signature"] and again["METEOR"]["signature"].endswith("+moses:es")
    assert again["LongYAAL"]["score"] == scores["LongYAAL"]["score"]
    assert main(["score", str(out), "--metrics", "METEOR", "--target-lang", "en", "--format", "json", "--no-write",
                 "--bootstrap", "1"]) == 0
    assert "lang:en" in json.loads(capsys.readouterr().out)["METEOR"]["signature"]  # the command line wins


def test_harness_run_warns_of_words_after_the_last_sentence(tmp_path: Path, capsys) -> None:
    """The oracle lags 4 s: its last sentence's words come after that sentence ended, and `harness run` says so."""
    _run(tmp_path / "late-run", lag="4000")
    err = capsys.readouterr().err
    assert "harness run: warning: " in err and "were written after the last reference sentence ended" in err


def test_words_after_the_last_sentence_are_counted_warned_and_shown(oracle_run, tmp_path: Path, capsys) -> None:
    from harness.scoring.results import score_results
    from leaderboard.render import render_site

    out, _ = oracle_run
    rec = json.loads((out / "instances.log").read_text(encoding="utf-8").splitlines()[0])
    last_end = max(off + dur for off, dur in rec["longform"]["segments"])
    assert rec["source_length"] > last_end  # the talk's audio goes on after its last sentence: say 5 s of it
    base = max(last_end, rec["delays"][-1])
    rec["source_length"] = base + 5000.0
    late = [base + 200.0, base + 500.0, rec["source_length"] - 10.0]
    rec["prediction"] += " y nada más"
    rec["delays"] += late
    rec["elapsed"] += [t + 50.0 for t in late]
    rec["prediction_length"] = len(rec["delays"])
    results = tmp_path / "results"
    run_dir = results / "late" / "dev"
    run_dir.mkdir(parents=True)
    (run_dir / "instances.log").write_text(json.dumps(rec) + "\n", encoding="utf-8")
    assert main(["score", str(run_dir), "--target-lang", "es", "--bootstrap", "1"]) == 0
    err = capsys.readouterr().err
    trailing = sum(1 for d in rec["delays"] if d >= last_end)  # the oracle's own last words, and the three
    assert trailing >= 3
    assert f"{trailing} output units of 1 recording(s) were written after the last reference sentence ended" in err
    scores = json.loads((run_dir / "scores.json").read_text(encoding="utf-8"))
    assert scores["counts"]["trailing_units"] == trailing and scores["info"]["recording_end"] == "reference"
    config = load_config(CONFIG)
    runs = [{"submission": "late", "team": "tests", "system": "late", "track": "longform-en-es",
             "dataset": "dev", "status": "ok", "scores": scores}]
    (results / "summary.json").write_text(json.dumps({"config_sha256": None, "runs": runs}), encoding="utf-8")
    score_results(config, results, runs)
    render_site(results, tmp_path / "site", config)
    run_page = (tmp_path / "site" / "runs" / "late-dev" / "index.html").read_text(encoding="utf-8")
    assert f"{trailing} output words of 1 recording(s) were written after the last reference sentence" in run_page
    page = (tmp_path / "site" / "runs" / "late-dev" / "instances" / "0.html").read_text(encoding="utf-8")
    assert f"{trailing} words were written after the last reference sentence ended" in page
    assert main(["score", str(run_dir), "--target-lang", "es", "--bootstrap", "1", "--longform-end", "audio",
                 "--format", "json", "--no-write"]) == 0
    audio = json.loads(capsys.readouterr().out)
    assert audio["LongYAAL"]["score"] != scores["LongYAAL"]["score"]  # the late words now count
