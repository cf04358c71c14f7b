"""`harness check-config` reads every dataset's files as a run reads them and reports every problem at once, one
line each; an unknown field hides nothing else of its track; `harness check` lists every mistake of a
submission.yaml; a config that does not exist is a usage error (issue 32, item 3)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile

from harness.errors import EXIT_FAILED, EXIT_USAGE
from tests.harness_cli import run_in_checkout as harness

ROOT = Path(__file__).resolve().parent.parent


def _wav(path: Path, seconds: float) -> Path:
    t = np.arange(int(16000 * seconds)) / 16000.0
    soundfile.write(str(path), (0.2 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), 16000)
    return path


def _lines(path: Path, n: int, word: str = "line") -> Path:
    path.write_text("".join(f"{word} {i}\n" for i in range(n)), encoding="utf-8")
    return path


def _task(root: Path) -> Path:
    """Six tracks, each with one problem that `harness run` refuses, and a seventh with an unknown field."""
    _lines(root / "src8.en", 8)
    _lines(root / "ref10.es", 10)
    _lines(root / "ref1.es", 1)
    _lines(root / "ref10ok.es", 10)
    _lines(root / "ref2.es", 2)
    _wav(root / "talk.wav", 12.0)
    (root / "missing.list").write_text(f"{root / 'nowhere.wav'}\n", encoding="utf-8")
    (root / "notaudio.list").write_text("src8.en\n", encoding="utf-8")
    (root / "talk.list").write_text("talk.wav\n", encoding="utf-8")
    (root / "seg10.yaml").write_text("".join(f"- {{wav: talk.wav, offset: {0.5 + 1.1 * i:.1f}, duration: 1.0}}\n"
                                             for i in range(10)), encoding="utf-8")
    (root / "stranger.yaml").write_text("- {wav: talk.wav, offset: 0.5, duration: 1.0}\n"
                                        "- {wav: other.wav, offset: 2.0, duration: 1.0}\n", encoding="utf-8")
    _lines(root / "ref2ok.es", 2)
    speech = "modality: speech, source_lang: en, target_lang: es"
    lf = f"{speech}, segmentation: longform, latency: [LongYAAL], primary: {{latency: LongYAAL}}"
    cfg = root / "task.yaml"
    cfg.write_text(f"""task: t
tracks:
  - {{name: text, modality: text, source_lang: en, target_lang: es,
     datasets: {{dev: {{source: src8.en, references: {{orig: ref10.es}}}}}}}}
  - {{name: wav-missing, {speech}, datasets: {{dev: {{source: missing.list, references: {{orig: ref1.es}}}}}}}}
  - {{name: text-source, {speech}, datasets: {{dev: {{source: src8.en, references: {{orig: ref1.es}}}}}}}}
  - {{name: not-audio, {speech}, datasets: {{dev: {{source: notaudio.list, references: {{orig: ref1.es}}}}}}}}
  - {{name: lf-refs, {lf}, datasets: {{dev: {{source: talk.list, segmentation: seg10.yaml,
                                               references: {{orig: ref2.es}}}}}}}}
  - {{name: lf-stranger, {lf}, datasets: {{dev: {{source: talk.list, segmentation: stranger.yaml,
                                                  references: {{orig: ref2ok.es}}}}}}}}
  - {{name: typo, modality: text, source_lang: english, target_lang: es, latncy_unit: word,
     datasets: {{dev: {{source: src8.en, references: {{orig: ref10ok.es}}}}}}}}
""", encoding="utf-8")
    return cfg


def test_check_config_reads_the_data_as_the_run_does(tmp_path: Path) -> None:
    cfg = _task(tmp_path)
    done = harness("check-config", str(cfg))
    assert done.returncode == EXIT_FAILED, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    expected = [
        f"tracks[0].datasets.dev.references.orig: {tmp_path / 'ref10.es'} has 10 lines but the source "
        f"{tmp_path / 'src8.en'} has 8",
        f"tracks[1].datasets.dev.source: {tmp_path / 'missing.list'}: line 1: audio file not found: "
        f"{tmp_path / 'nowhere.wav'}",
        f"tracks[2].datasets.dev.source: {tmp_path / 'src8.en'}: none of its 8 lines names a file (a text file?",
        f"tracks[3].datasets.dev.source: {tmp_path / 'notaudio.list'}: line 1: {tmp_path / 'src8.en'}: not",
        f"tracks[4].datasets.dev.references.orig: {tmp_path / 'ref2.es'} has 2 lines but {tmp_path / 'seg10.yaml'} "
        "has 10 sentences",
        f"tracks[5].datasets.dev.segmentation: {tmp_path / 'stranger.yaml'}: entry 1: wav 'other.wav' is not in "
        f"{tmp_path / 'talk.list'}",
        "tracks[6].source_lang: 'english' is not a language code",
        "tracks[6].latncy_unit: unknown field; did you mean 'latency_unit'?",
        f"tracks[6].datasets.dev.references.orig: {tmp_path / 'ref10ok.es'} has 10 lines but the source",
    ]
    for text in expected:
        assert sum(text in line for line in lines) == 1, (text, done.stdout)
    assert lines[-1] == f"{cfg}: {len(expected)} problems" and len(lines) == len(expected) + 1, done.stdout
    assert all(line.startswith(f"{cfg}: ") for line in lines), done.stdout


def test_the_run_refuses_what_check_config_reports(tmp_path: Path) -> None:
    """The same data through `harness run`: each track the check flags is refused before it starts."""
    cfg = _task(tmp_path)
    agent = tmp_path / "agent.py"
    agent.write_text("from harness.client.agent import Agent, WriteAction\n\n\nclass A(Agent):\n"
                     "    def policy(self, states):\n        return WriteAction('x', finished=True)\n",
                     encoding="utf-8")
    for track in ("text", "wav-missing", "text-source", "not-audio", "lf-refs", "lf-stranger"):
        done = harness("run", "--config", str(cfg), "--track", track, "--dataset", "dev", "--agent", str(agent),
                       "--output", str(tmp_path / "runs" / track))
        assert done.returncode == EXIT_USAGE, (track, done.stdout, done.stderr)


def test_a_missing_config_is_a_usage_error(tmp_path: Path) -> None:
    done = harness("check-config", str(tmp_path / "nope.yaml"))
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    assert done.stdout == "" and done.stderr.strip().count("\n") == 0 and "nope.yaml" in done.stderr


def test_check_lists_every_mistake_of_a_submission(tmp_path: Path) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "submission.yaml").write_text("team: my team\nsystem: s\ntrack: text-en-es\nkind: primry\n"
                                         "build: {dockerfile: Dockerfile}\n", encoding="utf-8")
    done = harness("check", str(sub), "--no-docker")
    assert done.returncode == EXIT_FAILED, done.stdout + done.stderr
    yml = sub / "submission.yaml"
    expected = [f"error: {yml}: kind: 'primry' is not one of",
                f"error: {yml}: team: 'my team' must be letters, digits",
                f"error: {yml}: build.dockerfile: file not found",
                f"error: {yml}: command: missing required field"]
    lines = done.stdout.splitlines()
    for text in expected:
        assert sum(line.startswith(text) for line in lines) == 1, (text, done.stdout)
    assert lines[-1] == f"{sub}: 4 problems", done.stdout
