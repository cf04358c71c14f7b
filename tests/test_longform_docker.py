"""A long-form speech track under `harness evaluate` in Docker on the bundled 22-minute talk: the recording streams
from disk as one instance to a sandboxed client, the run log holds one output stream with its sentences, scoring
resegments it, and the leaderboard renders the run with a page per recording."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.images.base import DEFAULT_TAG
from tests.evaluate_data.support import leftovers, run_owned

pytestmark = [pytest.mark.docker, pytest.mark.espeak, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "longform"


def _submission(root: Path) -> Path:
    """The oracle agent (it knows the talk's sentences) as a complete submission."""
    sub = root / "subs" / "oracle"
    sub.mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "agents" / "longform_oracle.py", sub / "agent.py")
    shutil.copy(DATA / "test.yaml", sub / "talk.yaml")
    shutil.copy(DATA / "test.es", sub / "talk.es")
    (sub / "Dockerfile").write_text(f"FROM {DEFAULT_TAG}\nCOPY agent.py talk.yaml talk.es /app/\n", encoding="utf-8")
    (sub / "submission.yaml").write_text(
        "team: tests\nsystem: oracle\ncontact: t@example.org\ntrack: longform-en-es\nkind: primary\n"
        "description: writes each reference sentence 700 ms after it ends\nbuild: {dockerfile: Dockerfile}\n"
        "command: harness client --server \"$HARNESS_SERVER_URL\" --audio pcm16 --agent agent.py "
        "--segmentation talk.yaml --references talk.es --lag-ms 700\n", encoding="utf-8")
    return sub


def test_long_talk_end_to_end_in_docker(tmp_path: Path) -> None:
    _submission(tmp_path)
    out = tmp_path / "results"
    proc, pid = run_owned([sys.executable, "-m", "harness", "evaluate", str(tmp_path / "subs"), "--config",
                           str(ROOT / "configs" / "longform.yaml"), "--output", str(out), "--dataset", "test"],
                          timeout=900)
    assert proc.returncode == 0, proc.stderr
    run = json.loads((out / "summary.json").read_text())["runs"][0]
    assert run["status"] == "ok", run.get("reason")
    records = [json.loads(line) for line in (out / "oracle" / "test" / "instances.log").read_text().splitlines()]
    assert len(records) == 1
    rec = records[0]
    assert rec["source_length"] > 20 * 60 * 1000  # the 22-minute talk, streamed whole
    assert len(rec["longform"]["segments"]) == 120 and len(rec["delays"]) == len(rec["prediction"].split())
    scores = json.loads((out / "oracle" / "test" / "scores.json").read_text())
    assert scores["BLEU"]["score"] == pytest.approx(100.0)
    assert scores["counts"]["sentences"] == 120 and scores["counts"]["empty_sentences"] == 0
    assert 700 < scores["LongYAAL"]["score"] < scores["StreamLAAL"]["score"]
    assert scores["StreamLAAL_CA"]["score"] >= scores["StreamLAAL"]["score"]
    rows = [json.loads(line) for line in (out / "oracle" / "test" / "instance_scores.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and len(rows[0]["sentences"]) == 120
    assert leftovers(f"harness.pid={pid}") == []  # nothing of this run is left behind

    site = tmp_path / "site"
    assert subprocess.run([sys.executable, "-m", "harness", "leaderboard", str(out), "--output", str(site)],
                          capture_output=True, text=True, timeout=300).returncode == 0
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "LongYAAL" in index and "StreamLAAL" in index
    page = (site / "runs" / "oracle-test" / "instances" / "0.html").read_text(encoding="utf-8")
    assert page.count('class="sentence"') == 120
