"""The swarm's build engine (`swarm.build_engine`, `harness evaluate --build-engine`): strict config and command
line, no engine needed (the move of an image between engines is tests/test_build_engine_docker.py's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.config import load_config
from harness.errors import ConfigError
from tests.evaluate_data.support import CONFIG, make_submission

TASK = """
task: t
tracks:
  - name: text-en-es
    modality: text
    source_lang: en
    target_lang: es
    primary: {quality: BLEU, latency: LAAL}
    datasets:
      dev: {source: dev.en, references: {orig: dev.es}}
backend: swarm
"""


def task(tmp_path: Path, swarm: str) -> Path:
    (tmp_path / "dev.en").write_text("a b c\n")
    (tmp_path / "dev.es").write_text("x y z\n")
    path = tmp_path / "task.yaml"
    path.write_text(TASK + swarm, encoding="utf-8")
    return path


@pytest.mark.parametrize("engine", ["local", "unix:///var/run/docker.sock", "tcp://10.0.0.2:2375",
                                    "ssh://builder@build-host"])
def test_the_config_names_a_build_engine(tmp_path: Path, engine: str) -> None:
    assert load_config(task(tmp_path, f"swarm: {{build_engine: '{engine}'}}\n")).swarm.build_engine == engine
    assert load_config(task(tmp_path, "swarm: {registry: 'r:5000'}\n")).swarm.build_engine is None


@pytest.mark.parametrize("swarm,message", [
    ("swarm: {build_engin: local}", "swarm.build_engin: unknown field; did you mean 'build_engine'?"),
    ("swarm: {build_engine: here}", "swarm.build_engine: expected local or a Docker host URL "
     "(unix:///var/run/docker.sock, tcp://HOST:PORT, ssh://USER@HOST), got 'here'"),
    ("swarm: {build_engine: 3}", "swarm.build_engine: expected str, got int 3"),
])
def test_a_bad_build_engine_in_the_config_is_one_line(tmp_path: Path, swarm: str, message: str) -> None:
    path = task(tmp_path, swarm + "\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == f"{path}: {message}"


def evaluate(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    subs = tmp_path / "subs"
    make_submission(subs, "good", "python3 /app/probe_agent.py copy")
    return subprocess.run([sys.executable, "-m", "harness", "evaluate", str(subs), "--config", str(CONFIG),
                           "--output", str(tmp_path / "out"), "--dataset", "dev", *extra],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("extra,message", [
    (("--build-engine", "local"), "--build-engine is for --backend swarm"),
    (("--backend", "local", "--build-engine", "local"), "--build-engine is for --backend swarm"),
    (("--backend", "swarm", "--build-engine", "docker.sock"),
     "--build-engine: expected local or a Docker host URL (unix:///var/run/docker.sock, tcp://HOST:PORT, "
     "ssh://USER@HOST), got 'docker.sock'"),
])
def test_a_misplaced_or_bad_build_engine_flag_is_one_line(tmp_path: Path, extra: tuple[str, ...],
                                                         message: str) -> None:
    """Checked before anything is built or run (so no Docker engine is needed to see it)."""
    proc = evaluate(tmp_path, *extra)
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines() == [f"harness evaluate: error: {message}"]
    assert not (tmp_path / "out" / "good").exists()
