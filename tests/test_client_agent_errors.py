"""What a participant sees of their own agent: its options in --help, its own frames when __init__ fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent_sources import WITH_OPTIONS
from tests.text_task import make_task

INIT_FAILS = '''
from harness.client.agent import TextAgent, ReadAction

def load_model(name):
    raise FileNotFoundError(f"no model {name}")

class InitFails(TextAgent):
    def __init__(self, args):
        super().__init__(args)
        self.model = load_model("big.pt")

    def policy(self, states):
        return ReadAction()
'''


def _harness(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("command", ["run", "client"])
def test_help_with_agent_lists_the_agents_options(tmp_path: Path, command: str) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(WITH_OPTIONS, encoding="utf-8")
    proc = _harness(command, "--agent", str(agent), "--help")
    assert proc.returncode == 0, proc.stderr
    assert f"options of the agent WithOptions ({agent})" in proc.stdout
    assert "--beam-size BEAM_SIZE" in proc.stdout and "beams of the decoder" in proc.stdout
    assert "--agent FILE with --help" in _harness(command, "--help").stdout


def test_agent_init_failure_shows_the_agents_frames_only(tmp_path: Path) -> None:
    cfg = make_task(tmp_path)
    agent = tmp_path / "agent.py"
    agent.write_text(INIT_FAILS, encoding="utf-8")
    proc = _harness("run", "--config", str(cfg), "--dataset", "dev", "--output", str(tmp_path / "run"),
                    "--agent", str(agent))
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert lines[0] == (f"harness run: error: {agent}: creating the agent InitFails failed: "
                        "FileNotFoundError: no model big.pt")
    frames = [line for line in lines if line.lstrip().startswith("File ")]
    assert frames and all(str(agent) in f for f in frames), proc.stderr  # no harness internals
    assert [f.split(", in ")[-1] for f in frames] == ["__init__", "load_model"]
