"""Kill a run mid-way (a real process kill), resume it, and get the scores of an uninterrupted run."""

from __future__ import annotations

import json
import operator
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.templates_util import listening_url
from tests.text_task import make_text_task

SLOW_AGENT = '''
import time
from harness.client.agent import TextAgent, ReadAction, WriteAction


class SlowWaitK(TextAgent):
    """Wait-2 echo that thinks 15 ms per action, so that a kill lands mid-run."""

    def policy(self, states):
        time.sleep(0.015)
        if not states.source_finished and len(states.source) - len(states.target) < 2:
            return ReadAction()
        if len(states.target) < len(states.source):
            return WriteAction(states.source[len(states.target)])
        return WriteAction("", finished=True)
'''
QUALITY = ("BLEU", "chrF", "TER")
SOURCES = [" ".join(f"s{i}w{j}" for j in range(4 + i % 4)) for i in range(16)]


def _harness(*args: str) -> list[str]:
    return [sys.executable, "-m", "harness", *args]


def _wait_lines(log: Path, n: int, proc: subprocess.Popen, limit_s: float = 60) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if log.exists() and log.read_text().count("\n") >= n:
            return
        assert proc.poll() is None, "the run ended before it could be killed"
        time.sleep(0.01)
    raise AssertionError("timed out waiting for the log")


def _comparable(scores: dict) -> dict:
    """Every metric that does not depend on wall-clock time."""
    return {k: v for k, v in scores.items() if isinstance(v, dict) and "score" in v and not k.endswith("_CA")}


def _per_instance(out: Path) -> dict:
    return {r["index"]: (r["prediction"], r["delays"], r["status"])
            for r in map(json.loads, (out / "instances.log").read_text().splitlines())}


@pytest.fixture
def task(tmp_path: Path) -> tuple[Path, Path]:
    agent = tmp_path / "agent.py"
    agent.write_text(SLOW_AGENT)
    return make_text_task(tmp_path, SOURCES), agent


@pytest.fixture
def reference_run(task, tmp_path: Path) -> Path:
    cfg, agent = task
    out = tmp_path / "uninterrupted"
    subprocess.run(_harness("run", "--config", str(cfg), "--dataset", "dev", "--agent", str(agent),
                            "--output", str(out)), check=True, capture_output=True, timeout=120)
    return out


@pytest.mark.slow
def test_killed_joint_run_resumes_to_identical_scores(task, reference_run: Path, tmp_path: Path) -> None:
    cfg, agent = task
    out = tmp_path / "killed"
    args = ["run", "--config", str(cfg), "--dataset", "dev", "--agent", str(agent), "--output", str(out)]
    proc = subprocess.Popen(_harness(*args), stderr=subprocess.PIPE)
    _wait_lines(out / "instances.log", 4, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    done_before = (out / "instances.log").read_text().count("\n")
    assert done_before < len(SOURCES) and not (out / "scores.json").exists()
    subprocess.run(_harness(*args, "--resume"), check=True, capture_output=True, timeout=120)
    assert _per_instance(out) == _per_instance(reference_run)
    ref = json.loads((reference_run / "scores.json").read_text())
    got = json.loads((out / "scores.json").read_text())
    assert _comparable(got) == _comparable(ref) and len(_comparable(got)) >= 10


@pytest.mark.slow
def test_killed_client_resumes_against_the_running_server(task, reference_run: Path, tmp_path: Path) -> None:
    cfg, agent = task
    out = tmp_path / "server-run"
    server = subprocess.Popen(_harness("server", "--config", str(cfg), "--dataset", "dev", "--port", "0",
                                       "--output", str(out), "--exit-when-done"), stderr=subprocess.PIPE, text=True)
    try:
        url = listening_url(server.stderr.readline())
        client_args = ["client", "--server", url, "--agent", str(agent), "--num-workers", "2"]
        client = subprocess.Popen(_harness(*client_args), stderr=subprocess.DEVNULL)
        _wait_lines(out / "instances.log", 5, client)
        os.kill(client.pid, signal.SIGKILL)  # mid-instance: the server holds half-decoded sessions
        client.wait(10)
        assert (out / "instances.log").read_text().count("\n") < len(SOURCES)
        subprocess.run(_harness(*client_args), check=True, capture_output=True, timeout=120)
        server.wait(30)  # --exit-when-done: scores.json is written and the server stops
        assert server.returncode == 0
    finally:
        if server.poll() is None:
            server.kill()
    # Instances the killed client had started are decoded afresh, but what was served stays served: the same
    # text, each delay at least the uninterrupted one (the source it had read before the kill counts).
    got_i, ref_i = _per_instance(out), _per_instance(reference_run)
    assert got_i.keys() == ref_i.keys()
    for i, (text, delays, status) in got_i.items():
        assert (text, status) == (ref_i[i][0], ref_i[i][2])
        assert len(delays) == len(ref_i[i][1]) and all(map(operator.ge, delays, ref_i[i][1])), i
    ref = json.loads((reference_run / "scores.json").read_text())
    got = json.loads((out / "scores.json").read_text())
    assert {k: got[k] for k in QUALITY} == {k: ref[k] for k in QUALITY}
