"""`harness evaluate` end to end with the real Docker engine: results layout, failure classes, manifest,
summary, progress lines, leftovers, and a real SIGKILL of the harness followed by `--resume`."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.images.base import DEFAULT_TAG
from harness.layout import ResultsDir
from harness.runlog import read_statuses
from tests.evaluate_data.support import CONFIG, frozen_base, leftovers, make_submission, patient_config

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def evaluate_cmd(subs: Path, out: Path, *extra: str, config: Path = CONFIG) -> list[str]:
    return [sys.executable, "-m", "harness", "evaluate", str(subs), "--config", str(config), "--output", str(out),
            "--dataset", "dev", *extra]


def by_name(summary: dict) -> dict[str, dict]:
    return {r["submission"]: r for r in summary["runs"]}


def plain_scores(scores: dict) -> dict:
    """Metrics that do not depend on wall-clock time (everything but the computation-aware ones)."""
    return {k: v for k, v in scores.items() if k not in ("info",) and not k.endswith("_CA")}


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess, int]:
    root = tmp_path_factory.mktemp("batch")
    subs = root / "subs"
    make_submission(subs, "good", "python3 /app/probe_agent.py copy")
    make_submission(subs, "crashy", "python3 /app/probe_agent.py crash-after-1")
    bad = make_submission(subs, "bad-yaml", "python3 /app/probe_agent.py copy")
    (bad / "submission.yaml").write_text("team: tests\nsystem: bad yaml\ncommand: [unclosed\n", encoding="utf-8")
    broken = make_submission(subs, "no-build", "python3 /app/probe_agent.py copy")
    (broken / "Dockerfile").write_text(f"FROM {DEFAULT_TAG}\nRUN exit 7\n", encoding="utf-8")
    out = root / "results"
    proc = subprocess.Popen(evaluate_cmd(subs, out, "--workers", "2"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    stdout, stderr = proc.communicate(timeout=600)
    return out, subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr), proc.pid


def test_batch_statuses(batch):
    out, proc, pid = batch
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["task"] == "evaluate-tests" and summary["config_sha256"]
    runs = by_name(summary)
    assert {n: r["status"] for n, r in runs.items()} == {
        "good": "ok", "crashy": "crash", "bad-yaml": "invalid_submission", "no-build": "build_error"}
    good, crashy = runs["good"], runs["crashy"]
    assert good["team"] == "tests" and good["track"] == "text-en-es" and good["dataset"] == "dev"
    assert good["partial"] is False and good["scores"]["BLEU"]["score"] > 0
    assert crashy["partial"] is True and "exit code 3" in crashy["reason"]
    assert crashy["scores"]["counts"]["instances"] == 1 and crashy["scores"]["info"]["partial"] is True
    assert "submission.yaml" in runs["bad-yaml"]["reason"] and runs["bad-yaml"]["scores"] == {}
    assert "docker build failed" in runs["no-build"]["reason"]
    assert leftovers(f"harness.pid={pid}") == []


def test_results_layout_and_manifest(batch):
    out, _, _ = batch
    for name in ("good", "crashy"):
        for f in ("instances.log", "scores.json", "client.log", "server.log"):
            assert (out / name / "dev" / f).is_file(), f"{name}/dev/{f}"
        assert (out / name / "build.log").is_file()
    # the batch scores every run once, on this host: the server in its container left it to the caller
    assert "all 3 instances logged (scored by the caller)" in (out / "good" / "dev" / "server.log").read_text()
    man = json.loads((out / "good" / "manifest.json").read_text())
    assert man["image"]["digest"].startswith("sha256:") and man["image"]["architecture"]
    assert man["harness_version"] and man["config_sha256"] == json.loads((out / "summary.json").read_text())[
        "config_sha256"]
    root = Path(__file__).resolve().parents[1]
    head = shutil.which("git") and subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                                                  text=True).stdout.strip()
    assert man["harness_commit"] in ((head, f"{head}-dirty") if head else (None,))  # this checkout's commit
    assert man["hardware"]["cpu_count"] == os.cpu_count() and "gpus" in man["hardware"]
    assert 0 < man["timings"]["build_s"] < 600  # seconds, within the batch (which `communicate` gives 600 s)
    run = man["runs"]["dev"]
    assert set(run["dataset_sha256"]) == {str(CONFIG.parent / "dev.en"), str(CONFIG.parent / "dev.es")}
    assert run["sacrebleu_signature"].startswith("nrefs:1|") and run["content_key"]
    assert run["isolation"]["cap_drop"] == ["ALL"] and run["isolation"]["read_only_rootfs"]
    assert run["isolation"]["pids_limit"] == 64 and run["isolation"]["network_internal"]
    assert run["instances"] == {"done": 3, "expected": 3, "by_status": {"ok": 3}}
    for t in ("startup_s", "run_s", "teardown_s"):
        assert run["timings"][t] > 0
    bad = json.loads((out / "bad-yaml" / "manifest.json").read_text())
    assert bad["runs"]["dev"]["status"] == "invalid_submission"


def test_progress_lines(batch):
    _, proc, _ = batch
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("good ")]
    assert any("running" in ln or "ok" in ln for ln in lines), proc.stderr
    assert any(" 3/3 " in ln for ln in lines), proc.stderr
    assert "4 run(s), 3 failed" in proc.stdout


def _wait_for_instances(out: Path, n: int, proc: subprocess.Popen, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        assert proc.poll() is None, "harness ended before it could be killed"
        for sub in out.iterdir() if out.is_dir() else ():
            if len(read_statuses(ResultsDir(out).run(sub.name, "dev").instances_log)) >= n:
                return
        time.sleep(0.05)
    raise AssertionError("no instance was logged in time")


def test_sigkill_then_resume_gives_identical_scores(tmp_path):
    subs = tmp_path / "subs"
    base = frozen_base()  # the digests must not change with edits of the harness source during the test
    make_submission(subs, "slow-a", "python3 /app/probe_agent.py slow", base=base)
    make_submission(subs, "slow-b", "python3 /app/probe_agent.py slow", base=base)
    reference = tmp_path / "reference"
    subprocess.run(evaluate_cmd(subs, reference), check=True, capture_output=True, timeout=600)

    out = tmp_path / "results"
    proc = subprocess.Popen(evaluate_cmd(subs, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait_for_instances(out, 1, proc)
    proc.send_signal(signal.SIGSTOP)  # frozen, its pid alive: no harness that another test starts removes its run
    assert leftovers(f"harness.pid={proc.pid}"), "the run's resources should be up"
    os.kill(proc.pid, signal.SIGKILL)  # killed mid-run, it leaves them behind for the next start to remove
    proc.wait(10)

    resumed = subprocess.run(evaluate_cmd(subs, out, "--resume"), capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert leftovers(f"harness.pid={proc.pid}") == [], "leftovers of the killed harness must be removed"
    ref_runs = by_name(json.loads((reference / "summary.json").read_text()))
    got_runs = by_name(json.loads((out / "summary.json").read_text()))
    for name in ("slow-a", "slow-b"):
        assert got_runs[name]["status"] == ref_runs[name]["status"] == "ok"
        assert plain_scores(got_runs[name]["scores"]) == plain_scores(ref_runs[name]["scores"])

    # Resume is keyed by content: unchanged submissions are skipped, a changed image is run again.
    before = (out / "slow-a" / "dev" / "scores.json").read_bytes()
    with open(subs / "slow-b" / "probe_agent.py", "a", encoding="utf-8") as f:
        f.write("# changed\n")
    again = subprocess.run(evaluate_cmd(subs, out, "--resume"), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    man_a = json.loads((out / "slow-a" / "manifest.json").read_text())
    man_b = json.loads((out / "slow-b" / "manifest.json").read_text())
    assert man_a["runs"]["dev"].get("resumed") is True
    assert not man_b["runs"]["dev"].get("resumed")
    assert (out / "slow-a" / "dev" / "scores.json").read_bytes() == before


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_tears_everything_down(tmp_path, sig):
    """The agent blocks after its first sentence and the timeouts are hours long, so the run is still up when the
    signal lands, however slowly this machine goes."""
    subs = tmp_path / "subs"
    make_submission(subs, "blocked", "python3 /app/probe_agent.py block-after-1")
    out = tmp_path / "results"
    proc = subprocess.Popen(evaluate_cmd(subs, out, config=patient_config(tmp_path)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    _wait_for_instances(out, 1, proc)
    assert leftovers(f"harness.pid={proc.pid}"), "the run should be up"
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=300)  # a hang guard, not a race
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr
    assert leftovers(f"harness.pid={proc.pid}") == []


def test_infra_error_is_retried_once(tmp_path):
    """A server image that cannot start is the harness's fault: infra_error, run twice, nothing left behind."""
    empty = subprocess.run(["docker", "import", "-", "harness-test-empty:latest"], input=b"\0" * 1024,
                           capture_output=True, check=True)
    assert empty.returncode == 0
    subs = tmp_path / "subs"
    make_submission(subs, "victim", "python3 /app/probe_agent.py copy", base=frozen_base())
    out = tmp_path / "results"
    proc = subprocess.Popen(evaluate_cmd(subs, out, "--server-image", "harness-test-empty:latest"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    run = by_name(json.loads((out / "summary.json").read_text()))["victim"]
    assert run["status"] == "infra_error" and run["reason"]
    assert json.loads((out / "victim" / "manifest.json").read_text())["runs"]["dev"]["attempts"] == 2
    assert leftovers(f"harness.pid={proc.pid}") == []


def test_leaderboard_renders_the_evaluate_results(batch, tmp_path):
    """The organizer's two commands in a row: the site shows every run of the real batch with its status."""
    out, _, _ = batch
    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "harness", "leaderboard", str(out), "--output", str(site)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    index = (site / "index.html").read_text(encoding="utf-8")
    for name in ("good", "crashy", "bad-yaml", "no-build"):
        assert name in index, name
    for status in ("partial", "invalid_submission", "build_error"):
        assert status in index.replace(" ", "_") or status in index, status
    good = (site / "runs" / "good-dev" / "index.html").read_text(encoding="utf-8")
    summary = json.loads((out / "summary.json").read_text())
    bleu = by_name(summary)["good"]["scores"]["BLEU"]["score"]
    assert f"{bleu:.2f}" in good
    assert "cap_drop" in good or "ALL" in good
    table = index[index.index('<table class="ranking'):]
    assert table.index("runs/good-dev/") < table.index("runs/crashy-dev/"), "a partial run ranks below complete ones"
