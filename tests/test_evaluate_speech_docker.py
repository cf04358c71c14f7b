"""A speech submission through `harness evaluate`: real espeak-ng audio reaches the sandboxed client as PCM."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import soundfile

from tests.evaluate_data.support import leftovers, run_owned
from tests.speech_task import SENTENCES, counter_submission, make_task

pytestmark = [pytest.mark.docker, pytest.mark.espeak]

def test_speech_submission_receives_every_sample(tmp_path: Path) -> None:
    config = make_task(tmp_path)
    counter_submission(tmp_path / "subs")
    out = tmp_path / "results"
    proc, pid = run_owned([sys.executable, "-m", "harness", "evaluate", str(tmp_path / "subs"), "--config",
                           str(config), "--output", str(out), "--dataset", "dev"], timeout=600)
    assert proc.returncode == 0, proc.stderr
    run = json.loads((out / "summary.json").read_text())["runs"][0]
    assert run["status"] == "ok", run["reason"]
    records = [json.loads(line) for line in (out / "counter" / "dev" / "instances.log").read_text().splitlines()]
    assert len(records) == len(SENTENCES)
    for rec in records:
        info = soundfile.info(tmp_path / "audio" / f"{rec['index']}.wav")
        assert rec["prediction"] == f"{info.frames} {info.samplerate}"  # every sample arrived, none invented
        assert rec["source_length"] == pytest.approx(1000 * info.frames / info.samplerate)
        assert rec["delays"] == [rec["source_length"]] * 2
    scores = json.loads((out / "counter" / "dev" / "scores.json").read_text())
    assert scores["AL"]["unit"] == "ms" and scores["LAAL"]["score"] == pytest.approx(
        sum(r["source_length"] for r in records) / len(records))
    assert leftovers(f"harness.pid={pid}") == []  # nothing of the run is left behind
