"""Conformance: every latency metric shared with SimulEval 1.1.4 equals its scorer functions to 1e-9.

Randomized text and speech logs are scored by `harness.scoring` and by SimulEval's own scorer classes
(`simuleval/evaluator/scorers/latency_scorer.py`). AL, LAAL, AP, DAL, StartOffset, EndOffset and their `_CA`
variants are compared on SimulEval's reloaded `LogInstance`s; ATD on in-memory instances (TextToTextInstance /
SpeechToTextInstance), because SimulEval's ATD on a reloaded log wrongly treats every log as speech. The
non-CA metrics are computed with `computation_aware=False` scorers: SimulEval's `--computation-aware` flag
would make the plain columns computation-aware too (a bug not copied). `_CA` variants are compared for speech
only: the harness reports no computation-aware metrics for text (SimulEval's text `elapsed` is words plus
milliseconds), and checks here that a text log gets none.
"""

from __future__ import annotations

import json
import random

import pytest

from harness.scoring import instance_metrics, score_records
from harness.scoring.options import ScoringOptions

ls = pytest.importorskip("simuleval.evaluator.scorers.latency_scorer")
inst = pytest.importorskip("simuleval.evaluator.instance")

SHARED = ("AL", "LAAL", "AP", "DAL", "StartOffset", "EndOffset")
SCORERS = {
    "AL": ls.ALScorer,
    "LAAL": ls.LAALScorer,
    "AP": ls.APScorer,
    "DAL": ls.DALScorer,
    "StartOffset": ls.StartOffsetScorer,
    "EndOffset": ls.EndOffsetScorer,
}
WORDS = "the a of house green sun river cold bright small we they run see write".split()


def _text_record(rng: random.Random, index: int, unit: str) -> dict:
    n = rng.randint(1, 30)
    m = rng.randint(0, 35)  # hypothesis tokens; 0 = empty hypothesis
    delays = sorted(rng.randint(0 if rng.random() < 0.1 else 1, n) for _ in range(m))
    if m and rng.random() < 0.5:
        delays[-1] = n  # the usual finish: last tokens after the whole source
    elapsed, clock = [], 0.0
    for d in delays:
        clock += rng.random() * 3
        elapsed.append(d + clock)
    if unit == "char":
        ref = "".join(rng.choice("漢字仮名文書") for _ in range(rng.randint(1, 40)))
        hyp = "".join(rng.choice("漢字仮名文書") for _ in range(m))
    else:
        ref = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 40)))
        hyp = " ".join(rng.choice(WORDS) for _ in range(m))
    return {
        "index": index,
        "prediction": hyp,
        "delays": delays,
        "elapsed": elapsed,
        "prediction_length": m,
        "reference": ref,
        "source": " ".join(rng.choice(WORDS) for _ in range(n)),
        "source_length": n,
        "latency_unit": unit,
    }


def _speech_record(rng: random.Random, index: int) -> dict:
    samples = rng.randint(8000, 16000 * 12)
    src_ms = samples * 1000 / 16000
    seg = rng.choice((40, 160, 320, 500))
    steps = [min(k * seg, src_ms) for k in range(1, int(src_ms // seg) + 2)]
    m = rng.randint(0, 40)
    delays = sorted(rng.choice(steps) for _ in range(m))
    elapsed, clock = [], 0.0
    for d in delays:
        clock += rng.random() * 400
        elapsed.append(d + clock)
    return {
        "index": index,
        "prediction": " ".join(rng.choice(WORDS) for _ in range(m)),
        "delays": delays,
        "elapsed": elapsed,
        "prediction_length": m,
        "reference": " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 40))),
        "source": [f"wav/{index}.wav"],
        "source_length": src_ms,
        "latency_unit": "ms",
    }


def _log_instances(records: list[dict], unit: str) -> dict:
    return {r["index"]: inst.LogInstance(json.dumps(r), "char" if unit == "char" else "word") for r in records}


def _memory_instances(records: list[dict], speech: bool) -> dict:
    cls = inst.SpeechToTextInstance if speech else inst.TextToTextInstance
    out = {}
    for r in records:
        ins = object.__new__(cls)
        ins.index, ins.delays, ins.elapsed, ins.metrics = r["index"], list(r["delays"]), list(r["elapsed"]), {}
        out[r["index"]] = ins
    return out


def _check(records: list[dict], unit: str, speech: bool) -> None:
    ours = score_records(records, ScoringOptions(bootstrap=1, metrics=[*SHARED, "ATD"]), latency_unit=unit)
    logs = _log_instances(records, unit)
    variants = (False, True) if speech else (False,)  # text: no _CA metrics (words plus ms have no unit)
    if not speech:
        assert not [k for k in ours if k.endswith("_CA")]
    for name in SHARED:
        for ca in variants:
            key = f"{name}_CA" if ca else name
            theirs = SCORERS[name](computation_aware=ca, use_ref_len=True)(logs)
            assert ours[key]["score"] == pytest.approx(theirs, abs=1e-9, rel=1e-12), key
            for r in records:  # per instance too (SimulEval stores them in ins.metrics)
                if r["delays"]:
                    mine = instance_metrics(r, unit)[key]
                    assert mine == pytest.approx(logs[r["index"]].metrics[SCORERS[name](ca).metric_name], abs=1e-9)
    for ca in variants:
        theirs = ls.ATDScorer(computation_aware=ca)(_memory_instances(records, speech))
        key = "ATD_CA" if ca else "ATD"
        assert ours[key]["score"] == pytest.approx(theirs, abs=1e-9, rel=1e-12), key
    assert ours["counts"]["empty_instances"] == sum(1 for r in records if not r["delays"])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_text_word_logs_match_simuleval(seed: int) -> None:
    rng = random.Random(seed)
    _check([_text_record(rng, i, "word") for i in range(120)], "word", speech=False)


def test_text_char_log_matches_simuleval() -> None:
    rng = random.Random(7)
    _check([_text_record(rng, i, "char") for i in range(120)], "char", speech=False)


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_speech_logs_match_simuleval(seed: int) -> None:
    rng = random.Random(seed)
    _check([_speech_record(rng, i) for i in range(120)], "ms", speech=True)


def test_atd_same_from_memory_and_reloaded_log(tmp_path) -> None:
    """Our ATD on a text log is SimulEval's in-memory ATD, not its reloaded-log (speech) value."""
    from harness.scoring import score_path

    rng = random.Random(5)
    records = [_text_record(rng, i, "word") for i in range(40)]
    records = [r for r in records if r["delays"]]
    (tmp_path / "instances.log").write_text("".join(json.dumps(r) + "\n" for r in records))
    memory = ls.ATDScorer()(_memory_instances(records, speech=False))
    reloaded_simuleval = ls.ATDScorer()(_log_instances(records, "word"))
    ours = score_path(tmp_path, ScoringOptions(bootstrap=1, metrics=["ATD"]))["ATD"]["score"]
    assert ours == pytest.approx(memory, abs=1e-9)
    assert abs(reloaded_simuleval - memory) > 1e-6  # the SimulEval bug this test guards against is real
