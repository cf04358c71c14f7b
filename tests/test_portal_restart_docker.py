"""A portal killed with SIGKILL in the middle of an evaluation loses nothing: its evaluation dies with it (no
container is left running), the job is queued again when the portal starts on the same state folder, and its
results equal those of an evaluation that was never interrupted."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from harness.portal.store import Store
from tests.evaluate_data.support import make_submission
from tests.portal_support import PortalProcess, api, harness, make_campaign, wait_until_ended

pytestmark = [pytest.mark.docker, pytest.mark.slow]
COMPARED = ("BLEU", "chrF", "AL", "LAAL", "AP", "DAL")


def _running_with_output(url: str, token: str, submission: str, limit_s: float = 600) -> None:
    """Until the job is running and has finished at least one instance (polled; the limit bounds a hung test)."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        job = api(url, token, f"submissions/{submission}").json()["jobs"][0]
        if job["state"] == "running" and job["done"] >= 1:
            return
        assert job["state"] not in ("scored", "failed", "cancelled"), job
        time.sleep(0.2)
    raise AssertionError("the job never ran")


def _containers_of(pid: int, every: bool = False) -> list[str]:
    out = subprocess.run(["docker", "ps", "-q", *(["-a"] if every else []), "--filter", f"label=harness.pid={pid}"],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def _scores(results: Path, submission: str) -> dict[str, float]:
    scores = json.loads((results / submission / "dev" / "scores.json").read_text(encoding="utf-8"))
    return {name: scores[name]["score"] for name in COMPARED}


def test_a_portal_killed_mid_run_requeues_and_ends_with_the_same_results(tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path / "campaign")
    token = campaign.token("alpha")
    slow = make_submission(tmp_path / "subs", "slow", "python3 /app/probe_agent.py slow", team="alpha")
    portal = PortalProcess(campaign)
    try:
        sent = subprocess.run(harness("submit", str(slow), "--portal", portal.url), capture_output=True, text=True,
                              timeout=600, env={**os.environ, "HARNESS_PORTAL_TOKEN": token})
        assert sent.returncode == 0, sent.stdout + sent.stderr
        sub_id = sent.stdout.splitlines()[0].split()[3]
        _running_with_output(portal.url, token, sub_id)
        evaluations = subprocess.run(["pgrep", "-P", str(portal.process.pid)], capture_output=True, text=True)
        children = [int(p) for p in evaluations.stdout.split()]
        assert children, "no evaluation under the portal"
        portal.kill()
        for child in children:  # the evaluation follows its portal (PR_SET_PDEATHSIG)
            _wait_gone(child)
    finally:
        portal.stop()
    again = PortalProcess(campaign)
    try:
        sub = wait_until_ended(again.url, token, sub_id)
    finally:
        again.stop()
    job = sub["jobs"][0]
    assert job["state"] == "scored" and job["attempts"] == 2, job
    # what the killed evaluation's teardown did not remove is not this test's subject (see the closing note of
    # issue 46): it is removed here, so that no test leaves a container behind
    for child in children:
        for container in _containers_of(child, every=True):
            subprocess.run(["docker", "rm", "-f", container], capture_output=True)
    store = Store(campaign.state / "portal.sqlite3")  # the audit log says why it ran twice
    assert [what for _, who, what, detail in store.audit_log() if job["id"] in detail] == ["job.requeue"]
    store.close()
    # the same submission evaluated once, uninterrupted, by the command the portal drives
    reference = subprocess.run(harness("evaluate", f"{sub_id}={slow}", "--config", str(campaign.config), "--output",
                                       str(tmp_path / "reference"), "--dataset", "dev"),
                               capture_output=True, text=True, timeout=900)
    assert reference.returncode == 0, reference.stdout + reference.stderr
    assert _scores(campaign.state / "results", sub_id) == _scores(tmp_path / "reference", sub_id)


def _wait_gone(pid: int, limit_s: float = 300) -> None:
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        if Path(f"/proc/{pid}/stat").is_file() and Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
            return  # a zombie: it has ended, its parent is gone
        time.sleep(0.1)
    raise AssertionError(f"evaluation {pid} outlived its portal")
