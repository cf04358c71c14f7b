"""`harness score` on real SimulEval 1.1.4 run directories agrees with SimulEval.

SimulEval runs in-process (its remote mode is broken) with small real agents on real text (the UDHR sentences of
the bundled example run) and on real speech (espeak-ng reading them). AL, LAAL, AP, DAL, StartOffset and
EndOffset must equal SimulEval's `--score-only` values on the run directory, and ATD must equal SimulEval's ATD
on the in-memory instances of that same run (its reloaded-log ATD is wrong for text).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main

pytest.importorskip("simuleval")

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "runs"
SHARED = ("AL", "LAAL", "AP", "DAL", "StartOffset", "EndOffset")

SPEECH_AGENT = '''
from simuleval.agents import SpeechToTextAgent
from simuleval.agents.actions import ReadAction, WriteAction
from simuleval.utils import entrypoint


@entrypoint
class EveryThirdSegment(SpeechToTextAgent):
    """Writes one word after every third source segment, and a last one when the source ends."""

    def __init__(self, args):
        super().__init__(args)
        self.calls = 0

    def reset(self):
        super().reset()
        self.calls = 0

    def policy(self, states=None):
        states = states or self.states
        self.calls += 1
        if states.source_finished:
            return WriteAction("fin .", finished=True)
        if self.calls % 3 == 0:
            return WriteAction("palabra", finished=False)
        return ReadAction()
'''


def _udhr(n: int) -> tuple[list[str], list[str]]:
    recs = [json.loads(x) for x in (EXAMPLE / "udhr-dev-waitk3" / "instances.log").read_text().splitlines()]
    return [r["source"] for r in recs[:n]], [r["reference"].strip() for r in recs[:n]]


def _run_simuleval(monkeypatch, argv: list[str]) -> dict:
    """Run SimulEval in-process; return its in-memory instances (before it reloads the log)."""
    from simuleval.evaluator import build_evaluator
    from simuleval.utils.agent import EVALUATION_SYSTEM_LIST, build_system_args

    EVALUATION_SYSTEM_LIST.clear()  # @entrypoint registers agents globally
    monkeypatch.setattr(sys, "argv", ["simuleval", *argv])
    system, args = build_system_args()
    evaluator = build_evaluator(args)
    in_memory = dict(evaluator.instances)
    evaluator(system)
    return in_memory


def _simuleval_score_only(monkeypatch, out: Path, ca: bool) -> dict:
    from simuleval import options
    from simuleval.evaluator.evaluator import SentenceLevelEvaluator

    argv = ["simuleval", "--score-only", "--output", str(out), "--latency-metrics", *SHARED]
    monkeypatch.setattr(sys, "argv", argv + (["--computation-aware"] if ca else []))
    parser = options.general_parser()
    options.add_evaluator_args(parser)
    options.add_scorer_args(parser)
    options.add_dataloader_args(parser)
    evaluator = SentenceLevelEvaluator.from_args(parser.parse_args())
    return {**evaluator.quality, **evaluator.latency}


def _harness_json(out: Path, capsys) -> dict:
    capsys.readouterr()
    assert main(["score", str(out), "--format", "json", "--bootstrap", "1", "--no-write"]) == 0
    return json.loads(capsys.readouterr().out)


def test_text_run_agrees_with_simuleval(tmp_path, monkeypatch, capsys) -> None:
    from simuleval.evaluator.scorers.latency_scorer import ATDScorer

    src, ref = _udhr(12)
    (tmp_path / "src.en").write_text("\n".join(src) + "\n")
    (tmp_path / "ref.es").write_text("\n".join(ref) + "\n")
    (tmp_path / "lexicon.json").write_text("{}")  # empty lexicon: the wait-k agent copies source words
    out = tmp_path / "run"
    agent = EXAMPLE / "waitk_agent.py"
    memory = _run_simuleval(monkeypatch, [
        "--agent", str(agent), "--lexicon", str(tmp_path / "lexicon.json"), "--waitk", "2",
        "--source", str(tmp_path / "src.en"), "--target", str(tmp_path / "ref.es"), "--output", str(out),
        "--no-progress-bar", "--quality-metrics", "BLEU", "--latency-metrics", *SHARED,
    ])
    assert (out / "config.yaml").is_file() and len((out / "instances.log").read_text().splitlines()) == 12
    ours = _harness_json(out, capsys)
    theirs = _simuleval_score_only(monkeypatch, out, ca=False)
    for name in SHARED:
        assert ours[name]["score"] == pytest.approx(theirs[name], abs=1e-9), name
    assert ours["ATD"]["score"] == pytest.approx(ATDScorer()(memory), abs=1e-9)
    assert ours["BLEU"]["score"] == pytest.approx(theirs["BLEU"], abs=1e-9)
    assert ours["counts"]["instances"] == 12


@pytest.mark.espeak
def test_speech_run_agrees_with_simuleval(tmp_path, monkeypatch, capsys) -> None:
    from simuleval.evaluator.scorers.latency_scorer import ATDScorer

    src, ref = _udhr(4)
    wavs = []
    for i, text in enumerate(src):
        wav = tmp_path / f"{i}.wav"
        subprocess.run(["espeak-ng", "-v", "en", "-w", str(wav), text], check=True, capture_output=True)
        wavs.append(str(wav))
    (tmp_path / "src.list").write_text("\n".join(wavs) + "\n")
    (tmp_path / "ref.es").write_text("\n".join(ref) + "\n")
    (tmp_path / "agent.py").write_text(SPEECH_AGENT)
    out = tmp_path / "run"
    memory = _run_simuleval(monkeypatch, [
        "--agent", str(tmp_path / "agent.py"), "--source", str(tmp_path / "src.list"),
        "--target", str(tmp_path / "ref.es"), "--output", str(out), "--source-segment-size", "320",
        "--no-progress-bar", "--quality-metrics", "BLEU", "--latency-metrics", *SHARED,
    ])
    ours = _harness_json(out, capsys)
    assert ours["info"]["modality"] == "speech" and ours["AL"]["unit"] == "ms"
    plain = _simuleval_score_only(monkeypatch, out, ca=False)
    ca = _simuleval_score_only(monkeypatch, out, ca=True)  # SimulEval's CA run: only its _CA columns are right
    for name in SHARED:
        assert ours[name]["score"] == pytest.approx(plain[name], abs=1e-9), name
        assert ours[f"{name}_CA"]["score"] == pytest.approx(ca[f"{name}_CA"], abs=1e-9), name
    assert ours["ATD"]["score"] == pytest.approx(ATDScorer()(memory), abs=1e-9)
    assert ours["ATD_CA"]["score"] == pytest.approx(ATDScorer(computation_aware=True)(memory), abs=1e-9)
