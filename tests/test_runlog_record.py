"""The instance record has one schema (harness.runlog.record): the strict reader's two validators agree on it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.runlog.reader import _all_valid, validate_record
from harness.runlog.record import LATENCY_UNITS, REQUIRED_FIELDS, InstanceRecord

numbers = st.one_of(st.integers(-2, 12), st.floats(-1, 12, allow_nan=False), st.just(float("inf")))
values = st.one_of(st.none(), st.booleans(), st.text(max_size=3), numbers, st.lists(numbers, max_size=3))


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    """Mostly valid records, with now and then one field missing or of a wrong kind."""
    n = draw(st.integers(0, 4))
    delays = sorted(draw(st.lists(st.integers(0, 10), min_size=n, max_size=n)))
    rec: dict[str, Any] = {"index": draw(st.integers(0, 5)), "prediction": " ".join("w" * n),
                           "delays": delays, "source_length": draw(st.integers(1, 12))}
    if draw(st.booleans()):
        rec["references"] = {"orig": "a b"}
    else:
        rec["reference"] = "a b"
    if draw(st.booleans()):
        rec["elapsed"] = [float(d) for d in delays]
    if draw(st.booleans()):
        rec["prediction_length"] = n
    if draw(st.booleans()):
        rec["latency_unit"] = draw(st.sampled_from([*LATENCY_UNITS, "sec"]))
    if draw(st.integers(0, 3)) == 0:  # break one field
        key = draw(st.sampled_from(sorted(InstanceRecord.__annotations__)))
        if draw(st.booleans()):
            rec.pop(key, None)
        else:
            rec[key] = draw(values)
    return rec


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.lists(records(), min_size=1, max_size=4))
def test_the_fast_validator_never_accepts_what_the_strict_one_rejects(recs: list[dict[str, Any]]) -> None:
    strict = all(validate_record(r, "") is None for r in recs) and len({r.get("index") for r in recs}) == len(recs)
    if _all_valid(recs):
        assert strict, [validate_record(r, "") for r in recs]


def test_the_schema_names_the_required_fields_in_report_order() -> None:
    assert REQUIRED_FIELDS == ("index", "prediction", "delays", "source_length")
    assert validate_record({"prediction": "", "delays": [], "source_length": 1}, "") == "missing field 'index'"
