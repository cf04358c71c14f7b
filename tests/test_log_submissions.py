"""Log submissions, regimes decided on the dev set and closed-model systems, through `harness evaluate` and
`harness leaderboard` (issue 24, deliverables 1, 2 and 5).

The batch runs with DOCKER_HOST pointing nowhere: a batch of log submissions builds and starts nothing."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import SubmissionError
from harness.intake.submission import load_submission
from tests.log_submissions import ROOT, log_submission, regime_config, simuleval_log, simulstream_log

NO_DOCKER = {"DOCKER_HOST": "unix:///nonexistent/docker.sock"}


def harness(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, env=full,
                          timeout=900, cwd=ROOT)


def runs_of(results: Path) -> dict[tuple[str, str], dict]:
    summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    return {(r["submission"], r["dataset"]): r for r in summary["runs"]}


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> dict[str, Path]:
    """One batch: log submissions with dev and test logs, one without a dev log, a closed-model one, a log of the
    wrong recordings and a misspelt dataset; then a second batch adding a submission to the same folder."""
    root = tmp_path_factory.mktemp("campaign")
    config = regime_config(root)
    subs = root / "subs"
    # low on dev, high on test: its regime is the dev set's
    log_submission(subs / "fast", team="fastteam", lags={"dev": 200, "test": 2000}, drop_every=5)
    log_submission(subs / "slow", team="slowteam", lags={"dev": 2000, "test": 200}, drop_every=7,
                   hardware="2x H100 80GB")
    log_submission(subs / "nodev", team="nodevteam", lags={"test": 800}, drop_every=6)
    log_submission(subs / "closed", team="closedteam", lags={"dev": 800, "test": 800}, extra="models: closed\n")
    wrong = log_submission(subs / "wrongrec", team="wrongteam", lags={"test": 800})
    simulstream_log("dev", wrong / "test.jsonl", 800)  # the dev talk, handed in as the test log
    log_submission(subs / "typo", team="typoteam", lags={"test": 800}, logs={"tset": "test.jsonl"})
    results = root / "results"
    first = harness("evaluate", str(subs), "--config", str(config), "--output", str(results), "--dataset",
                    "dev,test", env=NO_DOCKER)
    assert first.returncode == 0, first.stdout + first.stderr
    before = {p: p.read_bytes() for p in sorted(results.rglob("*")) if p.is_file() and p.name != "summary.json"
              and "significance" not in p.parts}
    later = root / "later"
    log_submission(later / "late", team="lateteam", lags={"dev": 1500, "test": 1500}, drop_every=4)
    second = harness("evaluate", str(later / "late"), "--config", str(config), "--output", str(results),
                     "--dataset", "dev,test", "--resume", env=NO_DOCKER)
    assert second.returncode == 0, second.stdout + second.stderr
    site = root / "site"
    shown = harness("leaderboard", str(results), "--config", str(config), "--output", str(site))
    assert shown.returncode == 0, shown.stdout + shown.stderr
    return {"root": root, "config": config, "results": results, "site": site, "first": first,  # type: ignore[dict-item]
            "before": before}  # type: ignore[dict-item]


@pytest.mark.slow
def test_log_submissions_are_scored_like_runs_without_docker(campaign) -> None:
    runs = runs_of(campaign["results"])
    fast = runs[("fast", "test")]
    assert fast["status"] == "ok" and fast["log"] is True and fast["hardware"] == "1x A100 80GB, 64 GB RAM"
    assert {"BLEU", "LongYAAL", "LongYAAL_CA", "StreamLAAL"} <= set(fast["scores"])
    assert 2500 < fast["scores"]["LongYAAL"]["score"] < 4000 and fast["scores"]["BLEU"]["score"] < 100
    run = campaign["results"] / "fast" / "test"
    first = json.loads((run / "instances.log").read_text(encoding="utf-8").splitlines()[0])
    assert first["status"] == "ok" and first["longform"]["recording"] == "udhr-long"
    manifest = json.loads((campaign["results"] / "fast" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["kind"] == "log" and manifest["hardware"] == {"declared": "1x A100 80GB, 64 GB RAM"}
    entry = manifest["runs"]["test"]
    assert entry["kind"] == "log" and entry["log"]["format"] == "simulstream" and entry["log"]["file"] == "test.jsonl"
    assert json.loads((run / "scores.json").read_text(encoding="utf-8"))["BLEU"] == fast["scores"]["BLEU"]
    # the same scorer as `harness score` on the converted log
    again = harness("score", str(run), "--format", "json", "--no-write", "--target-lang", "es")
    assert json.loads(again.stdout)["LongYAAL"]["score"] == pytest.approx(fast["scores"]["LongYAAL"]["score"])


def test_a_log_of_the_wrong_recordings_and_a_misspelt_dataset_are_one_line(campaign) -> None:
    runs = runs_of(campaign["results"])
    wrong = runs[("wrongrec", "test")]
    assert wrong["status"] == "invalid_submission"
    assert wrong["reason"].endswith("/wrongrec/submission.yaml: logs.test: " + str(
        campaign["root"] / "subs" / "wrongrec" / "test.jsonl") + ": its recordings (udhr-talk.wav) are not dataset "
        "'test''s (udhr-long.wav): a log of other recordings?"), wrong["reason"]
    assert "\n" not in wrong["reason"]
    typo = runs[("typo", "test")]
    assert typo["status"] == "invalid_submission"
    assert typo["reason"].endswith("logs.tset: track 'longform-en-es' has no dataset 'tset'; did you mean 'test'?")
    out = campaign["first"].stdout
    assert "wrongrec (test): invalid_submission: " in out and "typo (test): invalid_submission: " in out


def test_nothing_in_the_results_folder_is_lost_when_a_submission_is_added(campaign) -> None:
    runs = runs_of(campaign["results"])
    assert {("fast", "dev"), ("fast", "test"), ("slow", "test"), ("nodev", "test"), ("late", "dev"),
            ("late", "test")} <= set(runs)
    for path, content in campaign["before"].items():
        assert path.read_bytes() == content, f"{path} changed"


def test_a_submission_without_a_dev_result_is_one_line_and_not_ranked(campaign) -> None:
    note = ("no dev result: not ranked (track 'longform-en-es' decides regimes by the LongYAAL of the dev run)")
    runs = runs_of(campaign["results"])
    assert runs[("nodev", "test")]["not_ranked"] == note and runs[("nodev", "test")]["status"] == "ok"
    assert "not_ranked" not in runs[("fast", "test")] and "not_ranked" not in runs[("late", "test")]
    assert f"nodev (test): {note}\n" in campaign["first"].stdout


def test_closed_models_are_out_of_significance(campaign) -> None:
    sig = json.loads((campaign["results"] / "significance" / "longform-en-es" / "test.json").read_text())
    runs = runs_of(campaign["results"])
    closed = runs[("closed", "test")]
    assert closed["models"] == "closed" and closed["scores"]["BLEU"]["score"] == pytest.approx(100)
    assert sig["best"] != "closed" and "closed" not in sig["runs"] and "nodev" not in sig["runs"]
    assert "models" not in runs[("fast", "test")]


def _section(html: str, heading: str) -> str:
    """The HTML from `heading` to the next <h3> (one table of a board)."""
    start = html.index(heading)
    end = html.find("<h3>", start + len(heading))
    return html[start:] if end < 0 else html[start:end]


def test_the_leaderboard_ranks_regimes_on_dev_and_shows_logs_and_closed_models_apart(campaign) -> None:
    html = (campaign["site"] / "index.html").read_text(encoding="utf-8")
    board = html[html.index('id="longform-en-es-test"'):]
    board = board[:board.index("</section>")]
    low, high = _section(board, "Regime “low”"), _section(board, "Regime “high”")
    # fast: test LongYAAL in 2000-4000 (high), dev under 2000: ranked in low; slow the other way round
    runs = runs_of(campaign["results"])
    lat = {key: run["scores"]["LongYAAL"]["score"] for key, run in runs.items() if run["status"] == "ok"}
    assert lat[("fast", "dev")] < 2000 < lat[("fast", "test")] and lat[("slow", "test")] < 2000 < lat[("slow", "dev")]
    assert "fastteam" in low and "slowteam" not in low
    assert "slowteam" in high  # (a regime holds every run under its bound: fast competes in high as well)
    assert "LongYAAL <span class=\"muted\">(dev)</span>" in low  # dev and test latency side by side
    not_ranked = _section(board, "<h3>Not ranked</h3>")
    assert "nodevteam" in not_ranked and "no dev result: not ranked" in not_ranked
    assert "wrongteam" in not_ranked and "typoteam" in not_ranked
    closed = _section(board, "<h3>Closed-model systems")
    assert "closedteam" in closed and "closed models</span>" in closed
    assert "closedteam" not in low + high + not_ranked
    # log badge and declared hardware; CA latency shown with its note, left out of sorting
    assert 'class="badge b-log"' in low and "hardware: 1x A100 80GB, 64 GB RAM" in low
    assert "hardware: 2x H100 80GB" in high
    assert re.search(r'<td class="num log-ca" data-value="" title="Computation-aware latency from the '
                     r"participant's own log", low)
    plot = board[board.index("<svg"):board.index("</svg>")]
    assert "closedteam" not in plot and "fastteam" in plot
    assert "its dev-set latency, so its point may lie outside its regime's band" in board
    assert "Closed-model systems are not plotted." in board
    with (campaign["site"] / "downloads" / "longform-en-es" / "summary.csv").open(encoding="utf-8") as fh:
        rows = {(r["submission"], r["dataset"]): r for r in csv.DictReader(fh)}
    assert rows[("closed", "test")]["models"] == "closed" and rows[("fast", "test")]["models"] == "open"
    assert rows[("slow", "test")]["log"] == "True" and rows[("slow", "test")]["hardware"] == "2x H100 80GB"
    page = (campaign["site"] / "runs" / "slow-test" / "index.html").read_text(encoding="utf-8")
    assert 'class="badge b-log"' in page and "hardware: 2x H100 80GB" in page


def test_submission_yaml_fields_are_strict(tmp_path) -> None:
    sub = log_submission(tmp_path / "s", lags={"test": 800})
    text = (sub / "submission.yaml").read_text()

    def fails(new: str) -> str:
        (sub / "submission.yaml").write_text(new)
        with pytest.raises(SubmissionError) as info:
            load_submission(sub)
        message = str(info.value)
        assert message.startswith(f"{sub.resolve() / 'submission.yaml'}: ") and "\n" not in message
        return message

    assert load_submission(sub).is_log and load_submission(sub).models == "open"
    assert fails(text + "models: closd\n").endswith("models: 'closd' is not one of open, closed; did you mean "
                                                    "'closed'?")
    assert fails(text + "model: closed\n").endswith("model: unknown field; did you mean 'models'?")
    assert fails(re.sub(r"hardware: .*\n", "", text)).endswith("hardware: missing required field for a log "
                                                               'submission (e.g. "1x A100 80GB, 64 GB RAM")')
    assert "build: a log submission (logs:) has no image" in fails(text + "build: {dockerfile: Dockerfile}\n")
    assert fails(text.replace("test.jsonl", "nothere.jsonl")).endswith(f"logs.test: file not found: "
                                                                       f"{sub.resolve() / 'nothere.jsonl'}")
    assert "points outside the submission folder" in fails(text.replace("test.jsonl", "../x.jsonl"))
    image = "team: t\nsystem: s\ntrack: x\ncommand: run\nbuild: {dockerfile: Dockerfile}\nhardware: A100\n"
    (sub / "Dockerfile").write_text("FROM scratch\n")
    assert fails(image).endswith("hardware: only log submissions (logs:) declare their hardware; the harness "
                                 "records its own")
    (sub / "submission.yaml").write_text(image.replace("hardware: A100\n", "models: closed\n"))
    assert load_submission(sub).models == "closed" and not load_submission(sub).is_log


def test_regime_from_is_strict(tmp_path) -> None:
    config = regime_config(tmp_path, regime_from="dve")
    done = harness("check-config", str(config))
    assert done.returncode != 0
    assert "tracks[0].regime_from: 'dve' is not one of dev, test; did you mean 'dev'?" in done.stdout + done.stderr


def test_a_short_form_simuleval_log_is_scored_against_the_dataset(tmp_path) -> None:
    udhr = ROOT / "data" / "udhr"
    subs = tmp_path / "subs"
    for name, source, refs in (("good", "dev", "dev"), ("others", "test", "test")):
        folder = subs / name
        folder.mkdir(parents=True)
        simuleval_log(udhr / f"{source}.en", udhr / f"{refs}.es", folder / "instances.log")
        (folder / "submission.yaml").write_text(f"team: {name}\nsystem: waitk\ntrack: text-en-es\n"
                                                "logs: {dev: instances.log}\nhardware: 1 CPU core\n")
    shuffled = subs / "shuffled"
    shutil.copytree(subs / "good", shuffled)
    lines = (shuffled / "instances.log").read_text(encoding="utf-8").splitlines()
    swapped = [json.loads(lines[1]) | {"index": 0}, json.loads(lines[0]) | {"index": 1}]
    (shuffled / "instances.log").write_text("\n".join([json.dumps(x) for x in swapped] + lines[2:]) + "\n")
    done = harness("evaluate", str(subs), "--config", str(ROOT / "configs" / "demo.yaml"), "--output",
                   str(tmp_path / "results"), "--dataset", "dev", env=NO_DOCKER)
    assert done.returncode == 0, done.stdout + done.stderr
    runs = runs_of(tmp_path / "results")
    good = runs[("good", "dev")]
    assert good["status"] == "ok" and good["log"] is True
    assert good["scores"]["BLEU"]["score"] == pytest.approx(100)  # the dataset's references, not the log's
    assert "LAAL" in good["scores"] and not any(k.endswith("_CA") for k in good["scores"])  # text: no CA
    others = runs[("others", "dev")]
    assert others["status"] == "invalid_submission"
    assert others["reason"] == (f"{(subs / 'others').resolve() / 'submission.yaml'}: logs.dev: "
                                f"{(subs / 'others').resolve() / 'instances.log'}: 20 instances, but dataset 'dev' "
                                f"has 40 ({udhr.resolve() / 'dev.en'})")
    assert re.search(r"instances\.log: instance 0: source 'Whereas .*' is not dataset 'dev''s 'Whereas .*' \(a log "
                     r"of other instances\?\)$", runs[("shuffled", "dev")]["reason"])


@pytest.mark.slow
def test_harness_check_reads_the_logs_against_the_datasets(tmp_path) -> None:
    config = regime_config(tmp_path)
    sub = log_submission(tmp_path / "s", lags={"dev": 500, "test": 500})
    done = harness("check", str(sub), "--config", str(config), env=NO_DOCKER)
    assert done.returncode == 0, done.stdout
    assert "logs.test: simulstream log, 1 recording(s) of dataset 'test'" in done.stdout
    assert "image" not in done.stdout.replace("no image", "")  # nothing to build, no Docker asked
    simulstream_log("dev", sub / "test.jsonl", 500)
    done = harness("check", str(sub), "--config", str(config), env=NO_DOCKER)
    assert done.returncode == 1
    assert (f"error: {sub.resolve() / 'submission.yaml'}: logs.test: {sub.resolve() / 'test.jsonl'}: its recordings "
            "(udhr-talk.wav) are not dataset 'test''s (udhr-long.wav): a log of other recordings?") in done.stdout


@pytest.mark.slow
def test_a_log_submission_resumes_by_the_content_of_its_log(tmp_path) -> None:
    udhr = ROOT / "data" / "udhr"
    sub = tmp_path / "subs" / "waitk"
    sub.mkdir(parents=True)
    simuleval_log(udhr / "dev.en", udhr / "dev.es", sub / "dev.log", k=3)
    (sub / "submission.yaml").write_text("team: t\nsystem: s\ntrack: text-en-es\nlogs: {dev: dev.log}\n"
                                         "hardware: 1 CPU core\n")
    args = ["evaluate", str(sub), "--config", str(ROOT / "configs" / "demo.yaml"), "--output",
            str(tmp_path / "results"), "--dataset", "dev"]
    manifest = tmp_path / "results" / "waitk" / "manifest.json"
    assert harness(*args, env=NO_DOCKER).returncode == 0
    first = runs_of(tmp_path / "results")[("waitk", "dev")]["scores"]["LAAL"]["score"]
    assert harness(*args, "--resume", env=NO_DOCKER).returncode == 0
    assert json.loads(manifest.read_text())["runs"]["dev"].get("resumed") is True
    simuleval_log(udhr / "dev.en", udhr / "dev.es", sub / "dev.log", k=5)  # a new log: scored again
    assert harness(*args, "--resume", env=NO_DOCKER).returncode == 0
    assert "resumed" not in json.loads(manifest.read_text())["runs"]["dev"]
    assert runs_of(tmp_path / "results")[("waitk", "dev")]["scores"]["LAAL"]["score"] > first


def test_only_timed_runs_sort_by_computation_aware_latency(campaign, tmp_path) -> None:
    """A run the harness timed keeps its CA value for sorting; a log submission's CA cell is shown, not sortable."""
    results = tmp_path / "results"
    shutil.copytree(campaign["results"], results)
    summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    for run in summary["runs"]:
        if run["submission"] == "late":  # as if the harness had run it from an image
            run.pop("log"), run.pop("hardware")
    (results / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    done = harness("leaderboard", str(results), "--config", str(campaign["config"]), "--output",
                   str(tmp_path / "site"))
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    high = _section(html[html.index('id="longform-en-es-test"'):], "Regime “high”")  # holds fast and late
    rows = {m.group(1): m.group(2) for m in re.finditer(r'class="team">(\w+)</a>(.*?)</tr>', high, re.S)}
    late = summary_score(summary, "late", "LongYAAL_CA")
    assert f'<td class="num" data-value="{late}">' in rows["lateteam"] and "log-ca" not in rows["lateteam"]
    assert '<td class="num log-ca" data-value=""' in rows["fastteam"]


def summary_score(summary: dict, submission: str, key: str) -> float:
    return next(r["scores"][key]["score"] for r in summary["runs"] if (r["submission"], r["dataset"]) ==
                (submission, "test"))


@pytest.mark.parametrize("text, problem", [
    ("", "names no recording"),
    ("hello\n", "line 1: log is not valid JSON: Expecting value"),
    ('{"id": 0, "metadata": {"wav_name": "udhr-talk.wav"}}\n{"id": 0, "computation_time": 0.1, '
     '"generated_tokens": ["a"], "deleted_tokens": []}\n', "a line lacks the field 'total_audio_processed'"),
    ('{"id": 0, "metadata": {"wav_name": "udhr-talk.wav"}}\n{"id": 0, "total_audio_processed": "x", '
     '"computation_time": 0.1, "generated_tokens": ["a"], "deleted_tokens": []}\n',
     "a field of the wrong type (could not convert string to float: 'x')"),
    ('{"source": ["udhr-talk.wav"], "prediction": "a b", "delays": [5000, 1000]}\n',
     "line 1: recording udhr-talk.wav: delays decrease at position 1 (5000 -> 1000)"),
])
def test_a_malformed_log_is_one_line_naming_it(tmp_path, text, problem) -> None:
    from harness.batch.logsub import log_records
    from harness.config import load_config
    from harness.errors import HarnessError

    track = load_config(regime_config(tmp_path)).track("longform-en-es")
    log = tmp_path / "dev.jsonl"
    log.write_text(text, encoding="utf-8")
    with pytest.raises(HarnessError) as info:
        log_records(log, track, track.dataset("dev"), "sub/submission.yaml: logs.dev")
    assert str(info.value) == f"sub/submission.yaml: logs.dev: {log}: {problem}"


def _as_pieces(log: Path) -> None:
    """The log rewritten as a SentencePiece model's pieces (`▁` starts a word; longer words in two pieces), as a
    SimulStream server with `detokenizer_type: hf` logs them."""
    lines = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()]
    for obj in lines:
        if "generated_tokens" in obj:
            obj["generated_tokens"] = [p for w in obj["generated_tokens"]
                                       for p in ([f"\u2581{w[:3]}", w[3:]] if len(w) > 4 else [f"\u2581{w}"])]
    log.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in lines), encoding="utf-8")


def test_a_log_of_model_pieces_is_read_with_the_config_and_tokenizer_the_submission_names(tmp_path) -> None:
    from harness.batch.logsub import log_records
    from harness.config import load_config
    from tests.peer_support import whisper_tokenizer_json

    config = load_config(regime_config(tmp_path), check_files=False)
    track = config.track("longform-en-es")
    words = log_submission(tmp_path / "words", lags={"test": 700})
    plain = log_records(words / "test.jsonl", track, track.dataset("test"), "plain")
    sub = log_submission(tmp_path / "pieces", lags={"test": 700},
                         logs={"test": "{file: test.jsonl, config: eval.yaml, tokenizer: tok/tokenizer.json}"})
    _as_pieces(sub / "test.jsonl")
    (sub / "eval.yaml").write_text("detokenizer_type: hf\nhf_model_name: org/model\n", encoding="utf-8")
    (sub / "tok").mkdir()
    shutil.copy(whisper_tokenizer_json(), sub / "tok" / "tokenizer.json")  # a real tokenizer.json (any will do:
    # a Metaspace decoder is what joins SentencePiece pieces; Whisper's ByteLevel one keeps `▁` as it is)
    loaded = load_submission(sub)
    assert loaded.log_configs == {"test": (sub / "eval.yaml").resolve()}
    assert loaded.log_tokenizers == {"test": (sub / "tok" / "tokenizer.json").resolve()}
    fixed = log_records(loaded.logs["test"], track, track.dataset("test"), "pieces",
                        config=loaded.log_configs["test"])
    assert [r["prediction"] for r in fixed] == [r["prediction"] for r in plain]
    assert [r["delays"] for r in fixed] == [r["delays"] for r in plain]
    with_tokenizer = log_records(loaded.logs["test"], track, track.dataset("test"), "pieces",
                                 config=loaded.log_configs["test"], tokenizer=loaded.log_tokenizers["test"])
    assert "\u2581" in with_tokenizer[0]["prediction"]  # the tokenizer named is the one used, as given
    text = (sub / "submission.yaml").read_text(encoding="utf-8")
    for old, new, problem in (("eval.yaml", "absent.yaml", "logs.test.config: file not found"),
                              ("tokenizer:", "tokeniser:", "logs.test.tokeniser: unknown field; did you mean "
                                                           "'tokenizer'?")):
        (sub / "submission.yaml").write_text(text.replace(old, new), encoding="utf-8")
        with pytest.raises(SubmissionError, match=problem):
            load_submission(sub)
