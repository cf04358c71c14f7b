"""Docs that match the code (issue 26, item 14): the bundled example's scores.json is what `harness score` writes,
docs/formats.md names every kind and direction scores.json carries, and the participant guide and the templates' README
count and list every template."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "runs" / "udhr-dev-waitk3"
NUMBERS = {"three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}


def test_the_committed_example_scores_are_what_harness_score_writes(tmp_path: Path) -> None:
    run = tmp_path / EXAMPLE.relative_to(REPO)  # the same relative path, which scores.json records
    shutil.copytree(EXAMPLE, run)
    proc = subprocess.run([sys.executable, "-m", "harness", "score", str(EXAMPLE.relative_to(REPO))],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((run / "scores.json").read_text(encoding="utf-8")) == json.loads(
        (EXAMPLE / "scores.json").read_text(encoding="utf-8")), "rerun `harness score` on the example and commit it"


def test_formats_names_every_kind_and_direction_that_scores_carry() -> None:
    proc = subprocess.run([sys.executable, "-m", "harness", "score", str(EXAMPLE), "--no-write", "--format", "json",
                           "--bootstrap", "1"], capture_output=True, text=True, timeout=300)
    scores = json.loads(proc.stdout)
    records = [r for r in scores.values() if isinstance(r, dict) and "kind" in r]
    text = (REPO / "docs" / "formats.md").read_text(encoding="utf-8")
    for value in {r["kind"] for r in records} | {r["direction"] for r in records}:
        assert f"`{value}`" in text, value


def test_the_guide_and_the_templates_readme_count_and_list_every_template() -> None:
    templates = sorted(p.parent.name for p in (REPO / "agent_templates").glob("*/submission.yaml"))
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "(docs/participant.md)" in readme and "(agent_templates/README.md)" in readme  # where a newcomer finds them
    guide = (REPO / "docs" / "participant.md").read_text(encoding="utf-8")
    said = re.search(r"(\w+) working baselines are in\s+`agent_templates/`", guide)
    assert said and NUMBERS.get(said.group(1).lower()) == len(templates), (said and said.group(0), templates)
    table = (REPO / "agent_templates" / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| (\w+) \|", table, re.M)) - {"template"}
    assert listed == set(templates), (listed, templates)
