"""SimulEval 1.1.4 agents run unmodified under the harness and score as under SimulEval itself.

SimulEval runs in a subprocess (in-process, its remote mode being broken) on the same data; the harness runs the
same agent file through harness/client/simuleval_adapter.py. Predictions and delays must be identical, and so
must BLEU, AL and LAAL as SimulEval computes them and as `harness score` does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.templates_util import ROOT, TEMPLATES, comparable_scores, joint_run, records

pytest.importorskip("simuleval")

SIMULEVAL = '''
import json, sys
from simuleval.evaluator import build_evaluator
from simuleval.utils.agent import build_system_args
sys.argv = ["simuleval", *json.loads(sys.argv[1])]
system, args = build_system_args()
evaluator = build_evaluator(args)
evaluator(system)
print(json.dumps({**evaluator.quality, **evaluator.latency}))
'''

STATEFUL_TEXT = '''
from simuleval.agents import TextToTextAgent
from simuleval.agents.actions import ReadAction, WriteAction
from simuleval.utils import entrypoint


@entrypoint
class UpperWaitTwo(TextToTextAgent):
    """Stateful (policy without states): copies source words upper-cased with a lag of 2; counts its calls."""

    def __init__(self, args):
        super().__init__(args)
        self.calls = 0

    def reset(self):
        super().reset()
        self.calls = 0

    def policy(self):
        self.calls += 1
        s = self.states
        if s.source_finished:
            rest = [w.upper() for w in s.source[len(s.target):]]
            return WriteAction(" ".join(rest + [str(self.calls)]), finished=True)
        if len(s.source) - len(s.target) >= 2:
            return WriteAction(s.source[len(s.target)].upper(), finished=False)
        return ReadAction()
'''

SPEECH = '''
from simuleval.agents import SpeechToTextAgent
from simuleval.agents.actions import ReadAction, WriteAction
from simuleval.utils import entrypoint


@entrypoint
class EnergyWords(SpeechToTextAgent):
    """Writes a word naming the rounded energy of the input after every fourth segment; one more at the end."""

    def policy(self, states=None):
        states = states or self.states
        n = len(states.source)
        energy = sum(x * x for x in states.source[-4000:]) if n else 0.0
        if states.source_finished:
            return WriteAction(f"fin{round(energy, 3)}", finished=True)
        if n and (n // 5120) % 4 == 0 and n // 5120 > len(states.target) * 4:
            return WriteAction(f"e{round(energy, 3)}", finished=False)
        return ReadAction()
'''


def _simuleval(argv: list[str], cwd: Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", SIMULEVAL, json.dumps(argv)], capture_output=True, text=True,
                          timeout=600, cwd=cwd)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _text_task(tmp_path: Path, n: int) -> tuple[Path, Path, Path]:
    src = (ROOT / "data/udhr/dev.en").read_text().splitlines()[:n]
    ref = (ROOT / "data/udhr/dev.es").read_text().splitlines()[:n]
    (tmp_path / "src.en").write_text("\n".join(src) + "\n")
    (tmp_path / "ref.es").write_text("\n".join(ref) + "\n")
    cfg = tmp_path / "task.yaml"
    cfg.write_text("task: t\ntracks:\n  - {name: text, modality: text, source_lang: en, target_lang: es, "
                   "datasets: {dev: {source: src.en, references: {orig: ref.es}}}}\n")
    return cfg, tmp_path / "src.en", tmp_path / "ref.es"


def _simuleval_records(out: Path) -> dict[int, tuple]:
    return {r["index"]: (r["prediction"], r["delays"])
            for r in map(json.loads, (out / "instances.log").read_text().splitlines())}


def _assert_same(theirs_dir: Path, theirs: dict, ours_dir: Path) -> None:
    ours = {i: (p, d) for i, (p, d, status, _) in records(ours_dir).items()}
    assert ours == _simuleval_records(theirs_dir)
    scores = comparable_scores(ours_dir)
    for name in ("BLEU", "AL", "LAAL"):
        assert scores[name]["score"] == pytest.approx(theirs[name], abs=1e-9), name


@pytest.mark.slow
@pytest.mark.apertium
def test_simuleval_waitk_template_scores_the_same_as_under_simuleval(tmp_path: Path) -> None:
    cfg, src, ref = _text_task(tmp_path, 40)
    agent = TEMPLATES / "simuleval_waitk" / "agent.py"
    theirs = _simuleval(["--agent", str(agent), "--source", str(src), "--target", str(ref), "--output",
                         str(tmp_path / "se"), "--no-progress-bar", "--quality-metrics", "BLEU",
                         "--latency-metrics", "AL", "LAAL", "--waitk", "3"], tmp_path)
    joint_run(cfg, "text", agent, tmp_path / "ours", "--waitk", "3")
    _assert_same(tmp_path / "se", theirs, tmp_path / "ours")
    assert theirs["BLEU"] > 10


@pytest.mark.slow
def test_stateful_agent_with_reset_matches_simuleval_with_several_workers(tmp_path: Path) -> None:
    cfg, src, ref = _text_task(tmp_path, 8)
    agent = tmp_path / "stateful.py"
    agent.write_text(STATEFUL_TEXT)
    theirs = _simuleval(["--agent", str(agent), "--source", str(src), "--target", str(ref), "--output",
                         str(tmp_path / "se"), "--no-progress-bar", "--quality-metrics", "BLEU",
                         "--latency-metrics", "AL", "LAAL"], tmp_path)
    joint_run(cfg, "text", agent, tmp_path / "ours", "--num-workers", "3")
    _assert_same(tmp_path / "se", theirs, tmp_path / "ours")
    first = records(tmp_path / "ours")[0][0].split()
    assert first[-1].isdigit() and first[0] == first[0].upper()  # calls counted per instance: reset() ran


@pytest.mark.slow
def test_speech_agent_matches_simuleval(tmp_path: Path) -> None:
    wavs = sorted((ROOT / "data/speech/dev").glob("*.wav"))[:3]
    if len(wavs) < 3:
        pytest.skip("data/speech not prepared (python3 -m harness.data.prepare)")
    ref = (ROOT / "data/udhr/dev.es").read_text().splitlines()[:3]
    (tmp_path / "src.list").write_text("".join(f"{w}\n" for w in wavs))
    (tmp_path / "ref.es").write_text("\n".join(ref) + "\n")
    cfg = tmp_path / "task.yaml"
    cfg.write_text("task: t\ntracks:\n  - {name: speech, modality: speech, source_lang: en, target_lang: es, "
                   "segment_size: 320, datasets: {dev: {source: src.list, references: {orig: ref.es}}}}\n")
    agent = tmp_path / "speech.py"
    agent.write_text(SPEECH)
    theirs = _simuleval(["--agent", str(agent), "--source", str(tmp_path / "src.list"), "--target",
                         str(tmp_path / "ref.es"), "--output", str(tmp_path / "se"), "--source-segment-size", "320",
                         "--no-progress-bar", "--quality-metrics", "BLEU", "--latency-metrics", "AL", "LAAL"],
                        tmp_path)
    joint_run(cfg, "speech", agent, tmp_path / "ours")
    _assert_same(tmp_path / "se", theirs, tmp_path / "ours")
    assert all(len(p.split()) > 2 for p, _ in _simuleval_records(tmp_path / "se").values())
