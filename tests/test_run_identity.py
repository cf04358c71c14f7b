"""A run folder records what it is (run.json "identity") and refuses to be resumed as something else."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness import layout
from harness.client.agent import ReadAction, TextAgent, WriteAction
from harness.errors import HarnessError
from harness.run.joint import joint_run
from tests.text_task import TWO_SPLIT_SOURCES as SOURCES
from tests.text_task import make_task


class Echo(TextAgent):
    def policy(self, states):
        if not states.source_finished:
            return ReadAction()
        return WriteAction(" ".join(states.source), finished=True)


def test_dev_run_cannot_be_resumed_as_test(tmp_path: Path) -> None:
    cfg, out = make_task(tmp_path), tmp_path / "run"
    joint_run(cfg, "dev", out, Echo())
    scores_before = layout.RunDir(out).scores.read_bytes()
    with pytest.raises(HarnessError, match=r"cannot resume .*run: it holds a run of text-en-es/dev, not .*/test"):
        joint_run(cfg, "test", out, Echo(), resume=True)
    assert layout.RunDir(out).scores.read_bytes() == scores_before  # nothing rewritten
    joint_run(cfg, "dev", out, Echo(), resume=True)  # the same run resumes


def test_changed_data_or_config_refused_and_other_keys_kept(tmp_path: Path) -> None:
    cfg, out = make_task(tmp_path), tmp_path / "run"
    run = layout.RunDir(out)
    joint_run(cfg, "dev", out, Echo())
    meta = json.loads(run.run_meta.read_text())
    meta.update(content_key="abc", finished=False)  # what the orchestrator's batch keeps there
    run.run_meta.write_text(json.dumps(meta))
    (tmp_path / "dev.es").write_text("otra cosa\n" * 3, encoding="utf-8")
    with pytest.raises(HarnessError, match="the reference orig file of dev changed"):
        joint_run(cfg, "dev", out, Echo(), resume=True)
    (tmp_path / "dev.es").write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    cfg.write_text(cfg.read_text() + "limits: {idle_timeout_s: 30}\n", encoding="utf-8")
    with pytest.raises(HarnessError, match="the task config changed"):
        joint_run(cfg, "dev", out, Echo(), resume=True)
    joint_run(cfg, "dev", out, Echo(), overwrite=True)
    meta = json.loads(run.run_meta.read_text())
    assert meta["content_key"] == "abc" and meta["identity"]["dataset"] == "dev"


def test_harness_server_refuses_one_line(tmp_path: Path) -> None:
    cfg, out = make_task(tmp_path), tmp_path / "run"
    joint_run(cfg, "dev", out, Echo())
    proc = subprocess.run([sys.executable, "-m", "harness", "server", "--config", str(cfg), "--dataset", "test",
                           "--output", str(out), "--resume", "--port", "0", "--exit-when-done"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"harness server: error: cannot resume {out}: it holds a run of text-en-es/dev, not text-en-es/test; "
        "use another --output, or --overwrite to start over"]
