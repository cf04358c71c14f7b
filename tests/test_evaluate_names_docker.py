"""What `harness evaluate` names on the engine: a submission's image is tagged by its submission id (the id the
results show), not by its folder's name, so two evaluations of same-named folders under different ids keep their
own images; an id with control characters gives a safe tag and a safe results folder."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from harness.layout import ResultsDir
from tests.evaluate_data.support import generous_config, make_submission

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _evaluate(entry: str, config: Path, out: Path) -> dict:
    """`harness evaluate ENTRY` on dev; the manifest's image entry of its one submission."""
    done = subprocess.run([sys.executable, "-m", "harness", "evaluate", entry, "--config", str(config), "--output",
                           str(out), "--dataset", "dev"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = json.loads(ResultsDir(out).summary.read_text(encoding="utf-8"))["runs"]
    assert run["status"] == "ok", run
    sub_id = run["submission"]
    return {"id": sub_id, **json.loads(ResultsDir(out).submission(sub_id).manifest.read_text(encoding="utf-8"))}


def _image_of(tag: str) -> str:
    return subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", tag], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_same_named_folders_under_two_ids_keep_their_own_tags(tmp_path: Path) -> None:
    (tmp_path / "task").mkdir()
    config = generous_config(tmp_path / "task")
    mark = uuid.uuid4().hex[:8]
    first = make_submission(tmp_path / "a", "system", "python3 /app/probe_agent.py copy")
    second = make_submission(tmp_path / "b", "system", "python3 /app/probe_agent.py copy")
    (second / "marker.txt").write_text(f"{mark}\n", encoding="utf-8")  # another image than the first's
    with (second / "Dockerfile").open("a", encoding="utf-8") as f:
        f.write("COPY marker.txt /app/marker.txt\n")
    one = _evaluate(f"one-{mark}={first}", config, tmp_path / "results-one")
    two = _evaluate(f"Two\x1b[1m\x07{mark}={second}", config, tmp_path / "results-two")
    tags = [one["image"]["tag"], two["image"]["tag"]]
    try:
        assert tags[0] == f"harness-submission/one-{mark}:latest"
        assert one["image"]["id"] != two["image"]["id"] and tags[0] != tags[1], tags
        assert [_image_of(t) for t in tags] == [one["image"]["id"], two["image"]["id"]], "a tag was taken over"
        assert re.fullmatch(r"harness-submission/[a-z0-9._-]+:latest", tags[1]) and mark in tags[1], tags[1]
        assert two["id"] == f"Two_[1m_{mark}" and (tmp_path / "results-two" / two["id"]).is_dir()
    finally:
        subprocess.run(["docker", "image", "rm", *tags], capture_output=True, check=False)  # untag: ids stay
