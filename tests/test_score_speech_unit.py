"""Speech logs: latency scores are labelled in milliseconds of source audio, whatever the target token unit."""

from __future__ import annotations

import json

import pytest

from harness.metrics import latency as lat
from harness.scoring import score_path, score_records
from harness.scoring.options import ScoringOptions


def _speech_rec(i: int) -> dict:
    return {
        "index": i,
        "prediction": "una casa verde",
        "delays": [900.0, 1800.0, 2520.0],
        "elapsed": [950.0, 1900.0, 2700.0],
        "prediction_length": 3,
        "reference": "una casa muy verde",
        "source": [f"/data/audio/{i}.wav"],
        "source_length": 2520.0,
        "latency_unit": "ms",
    }


@pytest.mark.parametrize("target_unit", ["word", "char"])
def test_server_style_call_labels_ms(target_unit) -> None:
    """harness.server.app passes the track's target unit (word/char) with speech=True."""
    recs = [_speech_rec(i) for i in range(3)]
    scores = score_records(recs, ScoringOptions(bootstrap=1), latency_unit=target_unit, speech=True)
    for name in ["AL", "LAAL", "DAL", "ATD", "StartOffset", "EndOffset", "YAAL", "AL_CA", "ATD_CA"]:
        assert scores[name]["unit"] == "ms", name
    assert scores["AP"]["unit"] == "proportion" and scores["AP_CA"]["unit"] == "proportion"
    assert scores["info"]["latency_unit"] == "ms" and scores["info"]["target_unit"] == target_unit
    assert scores["info"]["modality"] == "speech"
    ref_len = lat.reference_length("una casa muy verde", target_unit)
    assert scores["AL"]["score"] == pytest.approx(lat.average_lagging([900.0, 1800.0, 2520.0], 2520.0, ref_len))


def test_speech_log_scored_from_disk_is_in_ms(tmp_path) -> None:
    log = tmp_path / "instances.log"
    log.write_text("".join(json.dumps(_speech_rec(i)) + "\n" for i in range(4)), encoding="utf-8")
    scores = score_path(log, ScoringOptions(bootstrap=1))
    assert scores["AL"]["unit"] == "ms" and scores["StartOffset"]["score"] == 900.0
    assert scores["info"]["latency_unit"] == "ms" and scores["info"]["target_unit"] == "word"


def test_text_log_keeps_its_token_unit() -> None:
    rec = {**_speech_rec(0), "source": "a b c", "delays": [1, 2, 3], "source_length": 3, "elapsed": [],
           "latency_unit": "char"}
    scores = score_records([rec], ScoringOptions(bootstrap=1), latency_unit="char", speech=False)
    assert scores["AL"]["unit"] == "char" and scores["info"]["latency_unit"] == "char"
