"""`harness evaluate` with the real Docker engine, messages a person can act on (issue 9, items 5, 8 and 11):
a command that does not exist is the participant's crash saying so (with and without a shell in the image), every
failed run is printed with the last lines of its output, a misspelled FROM says "base image ... not found", a
results folder that holds results is refused without --resume, and a later --dataset run keeps the earlier ones in
summary.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.images.base import DEFAULT_TAG
from harness.layout import ResultsDir, SubmissionDir
from tests.evaluate_data.support import CONFIG, make_submission

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def evaluate(target: Path, out: Path, *extra: str, dataset: str = "dev") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", "evaluate", str(target), "--config", str(CONFIG),
                           "--output", str(out), "--dataset", dataset, *extra],
                          capture_output=True, text=True, timeout=600)


def runs_of(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    summary = json.loads(ResultsDir(out).summary.read_text(encoding="utf-8"))
    return {(r["submission"], r["dataset"]): r for r in summary["runs"]}


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("messages")
    subs = root / "subs"
    make_submission(subs, "good", "python3 /app/probe_agent.py copy")
    make_submission(subs, "nobin", ["nosuchbinary"])  # runs under the shell watchdog: exit 127
    make_submission(subs, "noshell", ["nosuchbinary"], base="scratch")  # no /bin/sh: the engine refuses to start
    make_submission(subs, "typo", "harnes --model m")
    make_submission(subs, "nomodule", "python3 -c 'import simuleval_missing_module'")
    make_submission(subs, "badfrom", "python3 /app/probe_agent.py copy", base="harness-bsae:latest")
    out = root / "results"
    first = evaluate(subs, out, "--workers", "2")
    runs = runs_of(out)
    summary_bytes = ResultsDir(out).summary.read_bytes()
    again = evaluate(subs, out)
    refused_summary = ResultsDir(out).summary.read_bytes()
    later = evaluate(subs / "good", out, "--resume", dataset="test")
    after_later = runs_of(out)
    redo = evaluate(subs / "nobin", out, "--overwrite")
    return {"out": out, "first": first, "runs": runs, "summary_bytes": summary_bytes, "again": again,
            "refused_summary": refused_summary, "later": later, "after_later": after_later, "redo": redo}


def test_missing_executable_is_the_participants_crash_never_retried(batch: dict[str, Any]) -> None:
    assert batch["first"].returncode == 0, batch["first"].stderr
    for name in ("nobin", "noshell"):
        rec = batch["runs"][(name, "dev")]
        assert rec["status"] == "crash", rec
        assert "executable file not found: nosuchbinary" in rec["reason"], rec
        entry = json.loads(SubmissionDir(batch["out"] / name).manifest.read_text())["runs"]["dev"]
        assert entry["attempts"] == 1 and "APIError" not in json.dumps(entry), entry


def test_every_failed_run_shows_the_end_of_its_output(batch: dict[str, Any]) -> None:
    stdout = batch["first"].stdout
    typo = batch["runs"][("typo", "dev")]
    assert typo["status"] == "crash" and "executable file not found: harnes" in typo["reason"], typo
    assert any("harnes: not found" in line for line in typo["client_log_tail"]), typo
    nomodule = batch["runs"][("nomodule", "dev")]
    assert any("No module named 'simuleval_missing_module'" in line for line in nomodule["client_log_tail"])
    assert "No module named 'simuleval_missing_module'" in stdout, stdout
    assert "harnes: not found" in stdout, stdout
    manifest = json.loads(SubmissionDir(batch["out"] / "nomodule").manifest.read_text())
    assert manifest["runs"]["dev"]["client_log_tail"] == nomodule["client_log_tail"]
    assert "client_log_tail" not in batch["runs"][("good", "dev")]
    assert "good (dev)" not in stdout


def test_misspelled_from_says_base_image_not_found(batch: dict[str, Any]) -> None:
    rec = batch["runs"][("badfrom", "dev")]
    assert rec["status"] == "build_error", rec
    assert "base image 'harness-bsae:latest' not found" in rec["reason"], rec
    assert DEFAULT_TAG in rec["reason"].split("images available here:")[1], rec
    assert "\n" not in rec["reason"]
    assert f"badfrom (dev): build_error: {rec['reason'].splitlines()[0]}" in batch["first"].stdout


def test_a_results_folder_with_results_is_refused_without_resume(batch: dict[str, Any]) -> None:
    again = batch["again"]
    assert again.returncode == 2, again.stdout + again.stderr
    assert "not empty" in again.stderr and "--resume" in again.stderr and again.stderr.count("\n") == 1
    assert batch["refused_summary"] == batch["summary_bytes"]


def test_a_later_dataset_keeps_the_earlier_runs_in_the_summary(batch: dict[str, Any]) -> None:
    later = batch["later"]
    assert later.returncode == 0, later.stderr
    after = batch["after_later"]
    assert after[("good", "test")]["status"] == "ok"
    assert {k: v for k, v in after.items() if k[1] == "dev"} == batch["runs"]
    assert "1 run(s), 0 failed" in later.stdout
    runs = json.loads(SubmissionDir(batch["out"] / "good").manifest.read_text())["runs"]
    assert runs["dev"]["status"] == runs["test"]["status"] == "ok"
    assert runs["dev"]["image_digest"] == runs["test"]["image_digest"]


def test_overwrite_redoes_the_runs_named_now_and_keeps_the_others(batch: dict[str, Any]) -> None:
    redo = batch["redo"]
    assert redo.returncode == 0, redo.stderr
    assert "executable file not found: nosuchbinary" in redo.stdout
    after = runs_of(batch["out"])
    assert after.keys() == batch["after_later"].keys()
    assert {k: v for k, v in after.items() if k[0] != "nobin"} == {
        k: v for k, v in batch["after_later"].items() if k[0] != "nobin"}
    entry = json.loads(SubmissionDir(batch["out"] / "nobin").manifest.read_text())["runs"]["dev"]
    assert not entry.get("resumed") and entry["status"] == "crash"
