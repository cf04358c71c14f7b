"""CW, Continuous Wait length (Gu et al., 2017): hand-computed vectors, per instance and for the corpus, for text
(source words) and speech (milliseconds of audio) runs, through `harness score --metrics CW`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.metric_registry import REGISTRY, describe_key
from harness.metrics.latency import continuous_wait


@pytest.mark.parametrize(("delays", "expected"), [
    ([3, 3, 4, 5, 7, 7], 7 / 4),  # waits 3, 1, 1, 2 (the two words at 3 and at 7 are one write each)
    ([1, 2, 3, 4], 1.0),  # wait-1: one word read before each write
    ([0, 0, 5], 5.0),  # written before reading anything: no wait; then one wait of 5
    ([640, 640, 1280, 2560, 2560, 3200], 3200 / 4),  # speech: waits of 640, 640, 1280, 640 ms
    ([0, 0], None),  # never waited
    ([], None),  # no output
])
def test_continuous_wait_by_hand(delays, expected) -> None:
    got = continuous_wait(delays)
    assert got == (pytest.approx(expected) if expected is not None else None)


def test_cw_is_in_the_registry_as_an_optional_latency_metric() -> None:
    spec = REGISTRY["CW"]
    assert spec.kind == "latency" and spec.optional and not spec.computation_aware
    assert describe_key("CW", "ms")["unit"] == "ms" and "Gu et al., 2017" in spec.definition


def _log(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "instances.log"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _score(capsys, log: Path, *extra: str) -> dict:
    assert main(["score", str(log), "--metrics", "CW", "AL", "--format", "json", "--bootstrap", "1", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_corpus_cw_of_a_text_run_is_the_mean_over_instances_with_output(tmp_path, capsys) -> None:
    rows = [
        {"index": 0, "prediction": "a b c d e f", "delays": [3, 3, 4, 5, 7, 7], "elapsed": [0] * 6,
         "source_length": 8, "reference": "a b c d e f", "source": "s " * 8},
        {"index": 1, "prediction": "x y z", "delays": [2, 4, 6], "elapsed": [0] * 3, "source_length": 6,
         "reference": "x y z", "source": "s " * 6},
        {"index": 2, "prediction": "", "delays": [], "elapsed": [], "source_length": 5, "reference": "q",
         "source": "s " * 5},
    ]
    scores = _score(capsys, _log(tmp_path, rows))
    assert scores["CW"]["score"] == pytest.approx((7 / 4 + 2.0) / 2)
    assert scores["CW"]["unit"] == "word" and "CW_CA" not in scores
    per = [json.loads(x) for x in (tmp_path / "instance_scores.jsonl").read_text().splitlines()]
    assert [r["CW"] for r in per] == [pytest.approx(1.75), pytest.approx(2.0), None]


def test_corpus_cw_of_a_speech_run_is_in_milliseconds(tmp_path, capsys) -> None:
    rows = [
        {"index": 0, "prediction": "uno dos tres", "delays": [640, 1280, 3200], "elapsed": [700, 1400, 3500],
         "source_length": 3500, "reference": "uno dos tres", "source": ["a.wav"], "latency_unit": "ms",
         "status": "ok"},
        {"index": 1, "prediction": "cuatro cinco", "delays": [1000, 1000], "elapsed": [1100, 1200],
         "source_length": 2000, "reference": "cuatro cinco", "source": ["b.wav"], "latency_unit": "ms",
         "status": "ok"},
    ]
    scores = _score(capsys, _log(tmp_path, rows))
    # instance 0: waits 640, 640, 1920 -> 1066.67 ms; instance 1: one wait of 1000 ms
    assert scores["CW"]["score"] == pytest.approx((3200 / 3 + 1000.0) / 2)
    assert scores["CW"]["unit"] == "ms"
    assert "AL_CA" in scores and "CW_CA" not in scores  # CW counts source read, not time spent computing
