"""A participant who only writes an agent needs no torch, no browser and no Docker: `pip install -e .` into a clean
virtual environment (the README's and the participant guide's light path) gives a `harness` whose `run` and
`validate --no-docker` work on the demo task. Run from a clean environment, as a newcomer's shell would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clean_env import SYSTEM_PATH, clean_environment
from tests.peer_support import ROOT

pytestmark = [pytest.mark.apertium, pytest.mark.slow]
HEAVY = ("torch", "selenium", "comet", "faster_whisper", "av", "pytest")


def _clean_env(venv: Path) -> dict[str, str]:
    return clean_environment(f"{venv}/bin:{SYSTEM_PATH}")


def test_the_light_path_runs_and_validates_an_agent(tmp_path: Path) -> None:
    venv = tmp_path / "light"
    python = getattr(sys, "_base_executable", None) or "/usr/bin/python3"
    subprocess.run([python, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    env = _clean_env(venv)
    pip = subprocess.run(["python3", "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", str(ROOT)],
                         env=env, capture_output=True, text=True, timeout=1200)
    assert pip.returncode == 0, pip.stderr[-3000:]
    probe = ("import importlib.util, json, sys; "
             "print(json.dumps([m for m in sys.argv[1:] if importlib.util.find_spec(m)]))")
    found = subprocess.run(["python3", "-c", probe, *HEAVY], env=env, capture_output=True, text=True, check=True)
    assert json.loads(found.stdout) == []  # nothing heavy came along

    run = subprocess.run(["harness", "run", "--config", "configs/demo.yaml", "--track", "text-en-es", "--dataset",
                          "dev", "--agent", "agent_templates/waitk_apertium/agent.py", "--output",
                          str(tmp_path / "runs" / "waitk"), "--waitk", "3"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    scores = json.loads((tmp_path / "runs" / "waitk" / "scores.json").read_text(encoding="utf-8"))
    assert scores["BLEU"]["score"] > 0
    validate = subprocess.run(["harness", "validate", "agent_templates/waitk_apertium", "--config",
                               "configs/demo.yaml", "--no-docker"],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert validate.returncode == 0, validate.stdout[-2000:] + validate.stderr[-2000:]
