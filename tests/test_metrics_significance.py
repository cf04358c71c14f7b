"""Paired bootstrap test between two systems (quality and latency metrics)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.scoring.significance import paired_bootstrap

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "runs" / "udhr-dev-waitk3" / "instances.log"


def _records() -> list[dict]:
    return [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]


def test_same_system_is_not_significant() -> None:
    recs = _records()
    res = paired_bootstrap(recs, recs, "BLEU", bootstrap=200)
    assert res["difference"] == 0 and res["p_value"] > 0.5


def test_worse_system_is_significant() -> None:
    a = _records()
    b = [dict(r, prediction=" ".join(r["prediction"].split()[: len(r["prediction"].split()) // 2])) for r in a]
    res = paired_bootstrap(a, b, "BLEU", bootstrap=300)
    assert res["score_b"] < res["score_a"] and res["p_value"] < 0.05
    late = [dict(r, delays=[r["source_length"]] * len(r["delays"])) for r in a]  # offline: far higher lag
    lat = paired_bootstrap(a, late, "AL", bootstrap=300)
    assert lat["difference"] > 0 and lat["p_value"] < 0.05


def test_needs_same_instances() -> None:
    recs = _records()
    with pytest.raises(HarnessError):
        paired_bootstrap(recs, recs[:-1])
