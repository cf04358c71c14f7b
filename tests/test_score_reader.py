"""instances.log reading: the column-at-a-time fast path accepts only what the per-line validation accepts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import LogFormatError
from harness.runlog.reader import _all_valid, _read_careful, read_instances, validate_record

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "runs" / "udhr-dev-waitk3" / "instances.log"

ODD = st.sampled_from(
    [None, True, -1, 0, 2.5, float("nan"), float("inf"), "x", "", [], [1, 0], [0.5, "a"], [9], {}, {"a": 1}, {"o": "a"}]
)
KEYS = st.sampled_from(
    ["index", "prediction", "delays", "source_length", "reference", "references", "elapsed", "prediction_length",
     "revisions", "latency_unit"]
)


def _base(i: int) -> dict:
    return {"index": i, "prediction": "a b c", "delays": [1, 2, 3], "elapsed": [1.5, 2.5, 3.5],
            "prediction_length": 3, "reference": "a b c", "source_length": 3, "latency_unit": "word"}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(KEYS, ODD | st.just("<del>")), max_size=3), st.integers(0, 3), st.integers(1, 4))
def test_fast_validation_never_accepts_an_invalid_log(edits, target, n) -> None:
    recs = [_base(i) for i in range(n)]
    for key, value in edits:
        rec = recs[target % n]
        if value == "<del>":
            rec.pop(key, None)
        else:
            rec[key] = value
    try:
        fast = _all_valid(recs)
    except TypeError:
        fast = False
    careful = all(validate_record(r, "x") is None for r in recs) and len({r.get("index") for r in recs}) == n
    if fast:
        assert careful


def test_fast_path_same_records_as_careful_path(tmp_path) -> None:
    log = read_instances(EXAMPLE)
    with open(EXAMPLE, "rb") as f:
        assert log.records == _read_careful(EXAMPLE, f, False)
    assert _all_valid(log.records)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"index": 0, "prediction": "a", "delays": [1], "source_length": 1, "reference": "a"} {}'], "not a JSON"),
        (['{"index": 0, "prediction": "a", "delays": [2, 1], "source_length": 2, "reference": "a b"}'], "decrease"),
        (['{"index": 0, "prediction": "a", "delays": [1], "source_length": 1, "reference": "a"}'] * 2, "already on"),
        (['{"index": 0, "prediction": "a", "delays": [true], "source_length": 1, "reference": "a"}'], "numbers"),
        (['{"index": 0, "prediction": "a", "delays": [1], "source_length": 1, "references": {"o": 1}}'], "references"),
    ],
)
def test_bad_lines_named_by_the_careful_path(tmp_path, lines, message) -> None:
    good = json.dumps({"index": 9, "prediction": "a", "delays": [1], "source_length": 1, "reference": "a"})
    log = tmp_path / "instances.log"
    log.write_text("\n".join([good, *lines]) + "\n", encoding="utf-8")
    with pytest.raises(LogFormatError, match=message) as exc:
        read_instances(log)
    assert f"{log}:{len(lines) + 1}" in str(exc.value) or f"{log}:2" in str(exc.value)


def test_split_json_value_is_not_glued_back(tmp_path) -> None:
    """Two lines that only form a record together are an error, as in the per-line reading."""
    log = tmp_path / "instances.log"
    log.write_text('{"index": 0, "prediction": "a", "delays": [1],\n "source_length": 1, "reference": "a"}\n')
    with pytest.raises(LogFormatError, match=":1: not a JSON line"):
        read_instances(log)
