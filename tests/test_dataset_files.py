"""The files of a dataset have one owner (`harness.config.data_files`): the resume key, the run's identity and the
server's mounts all read it, so a change to any file a run reads (segmentation, transcripts, source text, context
list and documents, domain file, the audio list and its recordings, the references) makes `harness evaluate
--resume` run it again (issue 32, item 1). Through the real command, on a long-form log submission: nothing is
built, no Docker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile

ROOT = Path(__file__).resolve().parent.parent
NO_DOCKER = {"DOCKER_HOST": "unix:///nonexistent/docker.sock"}
SENTENCES = [("the first sentence of the talk", "la primera frase de la charla"),
             ("and here is the second one", "y aquí está la segunda"),
             ("a third sentence ends it", "una tercera frase lo termina")]


def _wav(path: Path, seconds: float, hz: float) -> None:
    t = np.arange(int(16000 * seconds)) / 16000.0
    soundfile.write(str(path), (0.2 * np.sin(2 * np.pi * hz * t)).astype(np.float32), 16000)


def _segmentation(path: Path, shift: float = 0.0) -> None:
    rows = [f"- {{wav: talk.wav, offset: {1.0 + 3.0 * i + shift:.2f}, duration: 2.5}}" for i in range(3)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def _task(root: Path) -> Path:
    """A long-form track of one 12 s recording with every kind of dataset file, and a log submission for it."""
    data = root / "data"
    (data / "audio").mkdir(parents=True)
    _wav(data / "audio" / "talk.wav", 12.0, 220.0)
    (data / "dev.list").write_text(f"{data / 'audio' / 'talk.wav'}\n", encoding="utf-8")
    _segmentation(data / "dev.yaml")
    (data / "dev.es").write_text("".join(es + "\n" for _, es in SENTENCES), encoding="utf-8")
    (data / "dev.src.en").write_text("".join(en + "\n" for en, _ in SENTENCES), encoding="utf-8")
    (data / "dev.text.en").write_text("".join(en + "\n" for en, _ in SENTENCES), encoding="utf-8")
    (data / "paper.txt").write_text("A paper about the talk.\n", encoding="utf-8")
    (data / "dev.context").write_text("paper.txt\n", encoding="utf-8")
    (data / "dev.domains").write_text("talk.wav\ttalks\n", encoding="utf-8")
    cfg = root / "task.yaml"
    cfg.write_text("task: t\ntracks:\n  - {name: lf, modality: speech, segmentation: longform, source_lang: en, "
                   "target_lang: es, quality: [BLEU], latency: [LongYAAL], primary: {latency: LongYAAL}, datasets: "
                   "{dev: {source: data/dev.list, segmentation: data/dev.yaml, references: {orig: data/dev.es}, "
                   "transcripts: data/dev.src.en, source_text: data/dev.text.en, context: data/dev.context, "
                   "domains: {file: data/dev.domains}}}}\n",
                   encoding="utf-8")
    sub = root / "subs" / "logsys"
    sub.mkdir(parents=True)
    lines = [{"id": 0, "metadata": {"wav_name": "talk.wav"}}]
    for i, (_, es) in enumerate(SENTENCES):
        words = es.split()
        for k, word in enumerate(words):
            at = 1.0 + 3.0 * i + 2.5 * (k + 1) / len(words) + 0.5
            lines.append({"id": 0, "total_audio_processed": round(at, 3), "computation_time": 0.05,
                          "generated_tokens": [word], "deleted_tokens": []})
    (sub / "dev.jsonl").write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    (sub / "submission.yaml").write_text("team: t\nsystem: s\ntrack: lf\nlogs: {dev: dev.jsonl}\n"
                                         "hardware: 1 CPU core\n", encoding="utf-8")
    return cfg


def _evaluate(cfg: Path, results: Path) -> dict:
    """`harness evaluate --resume` of the log submission; its manifest entry for dev."""
    done = subprocess.run([sys.executable, "-m", "harness", "evaluate", str(cfg.parent / "subs"), "--config", str(cfg),
                           "--output", str(results), "--dataset", "dev", "--resume"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **NO_DOCKER}, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((results / "logsys" / "manifest.json").read_text(encoding="utf-8"))["runs"]["dev"]


def _longyaal(results: Path) -> float:
    return json.loads((results / "logsys" / "dev" / "scores.json").read_text(encoding="utf-8"))["LongYAAL"]["score"]


def test_every_file_of_a_dataset_is_one_list(tmp_path: Path) -> None:
    """The owner names each field and what the lists name; the server mounts all of it (the text source too)."""
    from harness.config import data_files, load_config
    from harness.run.sandbox import data_paths

    cfg = _task(tmp_path)
    ds = load_config(cfg).track("lf").dataset("dev")
    files = {f.label: f.path for f in data_files(ds, speech=True)}
    data = (tmp_path / "data").resolve()
    assert files == {"source": data / "dev.list", "reference orig": data / "dev.es", "segmentation": data / "dev.yaml",
                     "transcripts": data / "dev.src.en", "source text": data / "dev.text.en",
                     "context list": data / "dev.context", "context document paper.txt": data / "paper.txt",
                     "domain file": data / "dev.domains",
                     f"recording {data / 'audio' / 'talk.wav'}": data / "audio" / "talk.wav"}
    mounted = data_paths(load_config(cfg))
    assert data / "audio" in mounted and data / "dev.text.en" in mounted and data / "paper.txt" in mounted
    assert data / "dev.domains" in mounted


@pytest.mark.slow
def test_resume_runs_again_when_any_file_of_the_dataset_changes(tmp_path: Path) -> None:
    cfg = _task(tmp_path)
    results = tmp_path / "results"
    data = tmp_path / "data"
    assert "resumed" not in _evaluate(cfg, results)
    assert _evaluate(cfg, results).get("resumed") is True
    before = _longyaal(results)
    _segmentation(data / "dev.yaml", shift=0.5)  # every offset moved: another latency
    assert "resumed" not in _evaluate(cfg, results), "a moved segmentation kept the stale result"
    assert _longyaal(results) != before
    changes = {
        "transcripts": lambda: (data / "dev.src.en").write_text("one\ntwo\nthree\n", encoding="utf-8"),
        "source_text": lambda: (data / "dev.text.en").write_text("uno\ndos\ntres\n", encoding="utf-8"),
        "context list": lambda: (data / "dev.context").write_text(f"{data / 'paper.txt'}\n", encoding="utf-8"),
        "context document": lambda: (data / "paper.txt").write_text("Another paper.\n", encoding="utf-8"),
        "domain file": lambda: (data / "dev.domains").write_text("talk.wav\tlectures\n", encoding="utf-8"),
        "audio": lambda: _wav(data / "audio" / "talk.wav", 12.0, 330.0),
        "source list": lambda: (data / "dev.list").write_text("audio/talk.wav\n", encoding="utf-8"),
        "references": lambda: (data / "dev.es").write_text(
            "".join(es.upper() + "\n" for _, es in SENTENCES), encoding="utf-8"),
    }
    for what, change in changes.items():
        change()
        assert "resumed" not in _evaluate(cfg, results), f"a changed {what} kept the stale result"
        assert _evaluate(cfg, results).get("resumed") is True, f"unchanged after the {what}: not resumed"
