"""The out-of-box client: agents from .py files, workers, agent failures, clear errors from the CLI."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from harness.client.connection import InProcessConnection
from harness.client.loader import load_agent_class
from harness.client.options import select_instances
from harness.client.runner import run_instances
from harness.errors import HarnessError
from harness.run.joint import joint_run, loopback_server
from harness.server.evaluation import open_evaluation
from tests.text_task import make_text_task

WAITK = '''
from harness.client.agent import TextAgent, ReadAction, WriteAction, READ, WRITE


class EchoWaitK(TextAgent):
    """Wait-k that echoes source words: a zero-compute agent."""

    @staticmethod
    def add_args(parser):
        parser.add_argument("--wait-k", type=int, default=2)
        parser.add_argument("--fail-on", type=int, default=-1)

    def policy(self, states):
        if states.instance_id == self.args.fail_on and len(states.source) == 2:
            raise RuntimeError("model exploded")
        lag = len(states.source) - len(states.target)
        if not states.source_finished and lag < self.args.wait_k:
            return ReadAction()
        if len(states.target) < len(states.source):
            return WriteAction(states.source[len(states.target)])
        return WriteAction("", finished=True)


class SeedStyle(TextAgent):
    """The seed's policy/predict style: READ/WRITE strings and predict()."""

    def policy(self, states):
        if not states.source_finished and len(states.source) <= len(states.target):
            return READ
        return WRITE

    def predict(self, states):
        if len(states.target) < len(states.source):
            return states.source[len(states.target)].upper()
        return "</s>"
'''


@pytest.fixture
def agent_file(tmp_path: Path) -> Path:
    p = tmp_path / "agent.py"
    p.write_text(WAITK)
    return p


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _records(out: Path) -> dict[int, dict]:
    return {r["index"]: r for r in map(json.loads, (out / "instances.log").read_text().splitlines())}


def _agent(agent_file: Path, cls: str, **options):
    import argparse

    klass = load_agent_class(agent_file, cls)
    return klass(argparse.Namespace(wait_k=2, fail_on=-1, **options))


def test_loader_needs_a_choice_between_several_agents(agent_file: Path) -> None:
    with pytest.raises(HarnessError, match="several agent classes"):
        load_agent_class(agent_file)
    with pytest.raises(HarnessError, match="not found"):
        load_agent_class(agent_file.parent / "missing.py")
    assert load_agent_class(agent_file, "SeedStyle").__name__ == "SeedStyle"


def test_workers_decode_concurrently_with_the_same_results(tmp_path: Path, agent_file: Path) -> None:
    sources = [" ".join(f"w{i}_{j}" for j in range(3 + i % 5)) for i in range(24)]
    cfg = make_text_task(tmp_path, sources)
    results = {}
    for workers, transport in ((1, "inprocess"), (4, "inprocess"), (4, "ws"), (3, "http")):
        out = tmp_path / f"out{workers}{transport}"
        summary, _ = joint_run(cfg, "dev", out, _agent(agent_file, "EchoWaitK"), transport=transport,
                               num_workers=workers)
        assert summary.decoded == 24 and summary.errors == 0
        recs = _records(out)
        results[(workers, transport)] = {i: (r["prediction"], r["delays"]) for i, r in recs.items()}
    first = results[(1, "inprocess")]
    assert all(r == first for r in results.values())
    n = len(sources[7].split())
    assert first[7] == (sources[7], [min(j + 2, n) for j in range(n)])


def test_agent_failure_ends_that_instance_as_error_and_the_run_goes_on(tmp_path: Path, agent_file: Path) -> None:
    cfg = make_text_task(tmp_path)
    ev = open_evaluation(cfg, "dev", tmp_path / "out")
    agent = _agent(agent_file, "EchoWaitK")
    agent.args.fail_on = 0
    summary = run_instances(lambda: InProcessConnection(ev), agent, ev.pending())
    ev.close()
    recs = _records(tmp_path / "out")
    assert summary.decoded == 3 and summary.errors == 1
    assert recs[0]["status"] == "error" and "model exploded" in recs[0]["error"]
    assert recs[1]["status"] == recs[2]["status"] == "ok"


def test_seed_style_agent_and_eos(tmp_path: Path, agent_file: Path) -> None:
    cfg = make_text_task(tmp_path)
    joint_run(cfg, "dev", tmp_path / "out", _agent(agent_file, "SeedStyle"))
    assert _records(tmp_path / "out")[1]["prediction"] == "HELLO WORLD"


def test_select_instances() -> None:
    assert select_instances("0-2,7", [1, 2, 3, 7, 9]) == [1, 2, 7]
    with pytest.raises(HarnessError):
        select_instances("a-b", [1])


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=timeout)


def test_cli_unreachable_server_is_one_clear_line(agent_file: Path) -> None:
    port = _free_port()
    out = _cli("client", "--server", f"http://127.0.0.1:{port}", "--agent", str(agent_file), "--agent-class",
               "EchoWaitK", "--wait", "0.5")
    assert out.returncode == 2
    waiting, error = out.stderr.strip().splitlines()  # a waiting line, then one clear error line
    assert waiting.startswith("harness client: waiting up to 0.5 s") and "cannot reach the evaluation server" in error
    assert "Traceback" not in out.stderr


def test_cli_client_against_server_with_agent_options_and_4xx(tmp_path: Path, agent_file: Path) -> None:
    cfg = make_text_task(tmp_path)
    ev = open_evaluation(cfg, "dev", tmp_path / "out")
    with loopback_server(ev) as url:
        out = _cli("client", "--server", url, "--agent", str(agent_file), "--agent-class", "EchoWaitK",
                   "--wait-k", "1", "--num-workers", "2")
        assert out.returncode == 0, out.stderr
        ev.writer.sync()
        recs = _records(tmp_path / "out")
        assert recs[0]["delays"] == [1, 2, 3, 4, 5, 6]  # --wait-k 1 reached the agent
        again = _cli("client", "--server", url, "--agent", str(agent_file), "--agent-class", "EchoWaitK",
                     "--instances", "0")
        assert again.returncode == 0 and "0 instance(s) decoded" in again.stderr  # nothing pending
        bad = _cli("client", "--server", url, "--agent", str(agent_file), "--agent-class", "EchoWaitK", "--bogus", "1")
        assert bad.returncode == 2 and "unknown option(s) for EchoWaitK: --bogus 1" in bad.stderr
    ev.close()
