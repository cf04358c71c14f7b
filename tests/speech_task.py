"""A tiny speech task (two espeak-ng sentences) and an agent that reports the samples it received, for the Docker
speech tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

import soundfile

__all__ = ["AGENT", "SENTENCES", "counter_submission", "make_task"]

AGENT = '''
from harness.client.agent import ReadAction, SpeechAgent, WriteAction


class CountSamples(SpeechAgent):
    """Reads the whole talk, then writes how many samples (and at which rate) it received."""

    def policy(self, states):
        if not states.source_finished:
            return ReadAction()
        return WriteAction(f"{len(states.source)} {states.source_sample_rate}", finished=True)
'''

SENTENCES = ["Everyone has the right to life.", "No one shall be held in slavery."]


def make_task(root: Path) -> Path:
    audio = root / "audio"
    audio.mkdir(parents=True)
    for i, text in enumerate(SENTENCES):
        subprocess.run(["espeak-ng", "-w", str(audio / f"{i}.raw.wav"), text], check=True, capture_output=True)
        data, rate = soundfile.read(audio / f"{i}.raw.wav", dtype="int16")
        soundfile.write(audio / f"{i}.wav", data, rate, subtype="PCM_16")
    (audio / "dev.list").write_text("".join(f"{i}.wav\n" for i in range(len(SENTENCES))), encoding="utf-8")
    (audio / "dev.en").write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    config = root / "speech.yaml"
    config.write_text(
        "task: speech-tests\ntracks:\n  - {name: speech-en-en, modality: speech, source_lang: en, target_lang: en,"
        " segment_size: 320, quality: [BLEU], latency: [AL, LAAL], primary: {quality: BLEU, latency: LAAL},"
        " datasets: {dev: {source: audio/dev.list, references: {orig: audio/dev.en}}}}\n"
        "limits: {cpus: 1, memory: 512m, pids: 64, instance_timeout_s: 30, idle_timeout_s: 10, total_timeout_s: 120}\n",
        encoding="utf-8")
    return config


def counter_submission(subs: Path) -> Path:
    """`subs/counter`: AGENT in an image FROM this checkout's base, run by `harness client` on pcm16 audio."""
    from harness.images.base import DEFAULT_TAG

    sub = subs / "counter"
    sub.mkdir(parents=True)
    (sub / "agent.py").write_text(AGENT, encoding="utf-8")
    (sub / "Dockerfile").write_text(f"FROM {DEFAULT_TAG}\nCOPY agent.py /app/agent.py\n", encoding="utf-8")
    (sub / "submission.yaml").write_text(
        "team: tests\nsystem: counter\ncontact: t@example.org\ntrack: speech-en-en\nkind: primary\n"
        "description: counts samples\nbuild: {dockerfile: Dockerfile}\n"
        "command: harness client --server \"$HARNESS_SERVER_URL\" --audio pcm16 --agent agent.py\n", encoding="utf-8")
    return sub
