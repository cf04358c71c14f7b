"""A long-form run killed between recordings resumes at recording granularity: the finished recording's line is
kept byte for byte, only the unfinished recording is decoded again, and the scores equal an uninterrupted run's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "longform"

pytestmark = [pytest.mark.espeak, pytest.mark.slow]

AGENT = '''
import os
import time
from harness.client.agent import ReadAction, SpeechAgent, WriteAction


class Metronome(SpeechAgent):
    """Writes one word per 3 s of audio; on its second recording it waits until the gate file exists."""

    started = 0

    def build_states(self):
        Metronome.started += 1
        return super().build_states()

    def policy(self, states):
        ex = states.extra
        if Metronome.started >= 2 and not os.path.exists(os.environ["GATE"]):
            time.sleep(0.02)  # the test kills the process here, then opens the gate and resumes
            return ReadAction()
        rate = states.source_sample_rate or 16000
        ex["seen"] = ex.get("seen", 0) + len(states.source)
        states.source.clear()
        due = int(ex["seen"] / rate // 3)
        if due > ex.get("written", 0):
            words = " ".join(f"palabra{k}" for k in range(ex.get("written", 0), due))
            ex["written"] = due
            return WriteAction(words)
        return WriteAction("", finished=True) if states.source_finished else ReadAction()
'''


def _task(root: Path) -> Path:
    """Two recordings (the 7-minute talk and the LibriVox one) in one long-form dataset."""
    listing = root / "talks.list"
    listing.write_text(f"{DATA / 'talks' / 'udhr-talk.wav'}\n{DATA / 'talks' / 'librivox.wav'}\n", encoding="utf-8")
    seg = yaml.safe_load((DATA / "dev.yaml").read_text()) + yaml.safe_load((DATA / "asr.yaml").read_text())
    (root / "seg.yaml").write_text(yaml.safe_dump(seg), encoding="utf-8")
    refs = (DATA / "dev.es").read_text(encoding="utf-8") + (DATA / "asr.en").read_text(encoding="utf-8")
    (root / "ref.txt").write_text(refs, encoding="utf-8")
    cfg = root / "task.yaml"
    cfg.write_text("task: t\ntracks:\n  - {name: lf, modality: speech, segmentation: longform, source_lang: en, "
                   "target_lang: es, latency: [LongYAAL, StreamLAAL], primary: {latency: LongYAAL}, datasets: "
                   "{dev: {source: talks.list, segmentation: seg.yaml, references: {orig: ref.txt}}}}\n",
                   encoding="utf-8")
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    return cfg


def _cmd(cfg: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "harness", "run", "--config", str(cfg), "--dataset", "dev", "--agent",
            str(cfg.parent / "agent.py"), "--output", str(out), *extra]


def _comparable(path: Path) -> dict:
    scores = json.loads(path.read_text())
    return {k: v["score"] for k, v in scores.items() if isinstance(v, dict) and "score" in v and "_CA" not in k}


def test_killed_long_form_run_resumes_at_the_next_recording(tmp_path: Path) -> None:
    cfg = _task(tmp_path)
    gate = tmp_path / "gate"
    env = {**os.environ, "GATE": str(gate)}
    gate.touch()
    subprocess.run(_cmd(cfg, tmp_path / "whole"), env=env, check=True, capture_output=True, timeout=300)
    gate.unlink()

    out = tmp_path / "killed"
    proc = subprocess.Popen(_cmd(cfg, out), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    log = out / "instances.log"
    try:
        deadline = time.monotonic() + 240
        while not (log.exists() and log.read_text().count("\n") >= 1):
            assert proc.poll() is None, "the run ended before the second recording"
            assert time.monotonic() < deadline, "the first recording never finished"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    first = log.read_text()
    assert first.count("\n") == 1 and json.loads(first)["index"] == 0

    gate.touch()
    subprocess.run(_cmd(cfg, out, "--resume"), env=env, check=True, capture_output=True, timeout=300)
    lines = log.read_text().splitlines(keepends=True)
    assert len(lines) == 2 and lines[0] == first  # the finished recording is kept byte for byte
    assert json.loads(lines[1])["index"] == 1
    assert _comparable(out / "scores.json") == _comparable(tmp_path / "whole" / "scores.json")
