"""The organizer's data through the real Docker commands. Per-domain results from a domain file: `harness evaluate`
and a participant's `harness validate` mount the dataset's domain file in the server's container (it is one of the
dataset's files, `harness.config.data_files`), so the server scores the run per domain instead of refusing to start
("domains.file: file not found"). A data error of the organizer's (a reference shorter than its source) stops
`harness evaluate` and `harness validate` before any run, as `check-config` reports it (exit 2, one line naming the
file), instead of charging the submission with it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.layout import ResultsDir
from tests.evaluate_data.support import generous_config, make_submission

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _task_with_domains(root: Path) -> Path:
    """The tests' task in `root`, its dev set's sentences 1-2 `news` and 3 `talks` (a domain file beside it)."""
    root.mkdir(parents=True)
    config = generous_config(root)
    (root / "dev.domains").write_text("1-2\tnews\n3\ttalks\n", encoding="utf-8")
    doc = yaml.safe_load(config.read_text(encoding="utf-8"))
    doc["tracks"][0]["datasets"]["dev"]["domains"] = {"file": "dev.domains"}
    config.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return config


def _harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=900)


def test_evaluate_and_validate_score_a_dataset_per_domain_from_its_file(tmp_path: Path) -> None:
    config = _task_with_domains(tmp_path / "task")
    sub = make_submission(tmp_path / "subs", "copier", "python3 /app/probe_agent.py copy")
    out = tmp_path / "results"
    done = _harness("evaluate", str(sub), "--config", str(config), "--output", str(out), "--dataset", "dev")
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(ResultsDir(out).summary.read_text(encoding="utf-8"))
    statuses = {r["submission"]: (r["status"], r.get("reason")) for r in summary["runs"]}
    assert statuses == {"copier": ("ok", None)}, statuses
    scores = json.loads(ResultsDir(out).run("copier", "dev").scores.read_text(encoding="utf-8"))
    assert set(scores["domains"]) == {"news", "talks"}

    checked = _harness("validate", str(sub), "--config", str(config), "--output", str(tmp_path / "validated"))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "domains.file" not in checked.stdout + checked.stderr


def test_a_reference_shorter_than_its_source_stops_evaluate_before_any_run(tmp_path: Path) -> None:
    config = generous_config(tmp_path)
    reference = tmp_path / "dev.es"
    reference.write_text("".join(reference.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]),
                         encoding="utf-8")
    sub = make_submission(tmp_path / "subs", "copier", "python3 /app/probe_agent.py copy")
    out = tmp_path / "results"
    done = _harness("evaluate", str(sub), "--config", str(config), "--output", str(out), "--dataset", "dev")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(reference) in lines[0] and "datasets.dev.references.orig" in lines[0], lines
    assert not out.exists(), "a run began"
    checked = _harness("validate", str(sub), "--config", str(config), "--output", str(out))
    assert checked.returncode == 2 and checked.stderr.strip() == lines[0].replace("evaluate", "validate"), checked
    assert not out.exists(), "a run began"
