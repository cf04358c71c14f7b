"""Latency metrics: hand-worked vectors and hypothesis properties (wait-k, offline, scaling)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.metrics import latency as lat


def _all(delays, x, y, speech=False, elapsed=None):
    return lat.instance_latency(delays, x, y, speech, elapsed)


def test_hand_worked_wait2_text() -> None:
    # |X| = 4, reference of 4 words, wait-2 with the last two tokens after the source ends
    m = _all([2, 3, 4, 4], 4, 4)
    assert m["AL"] == pytest.approx(2.0)  # (2-0 + 3-1 + 4-2) / 3, cut at the first delay reaching |X|
    assert m["LAAL"] == pytest.approx(2.0)
    assert m["AP"] == pytest.approx(13 / 16)
    assert m["DAL"] == pytest.approx(2.0)  # g' = 2, 3, 4, 5 ; (2 + 2 + 2 + 2) / 4
    assert m["ATD"] == pytest.approx(2.0)  # every token ends 2 word-times after its aligned source token
    assert m["StartOffset"] == 2 and m["EndOffset"] == 0
    assert m["YAAL"] == pytest.approx(2.0)  # (2-0 + 3-1) / 2 over the tokens before the end
    assert "AL_CA" not in m


def test_hand_worked_over_generation() -> None:
    # |X| = 2, reference of 2 words, 4 hypothesis tokens: LAAL punishes over-generation, AL does not
    m = _all([1, 2, 2, 2], 2, 2)
    assert m["AL"] == pytest.approx(1.0)  # gamma = 1: (1 + 1) / 2
    assert m["LAAL"] == pytest.approx(1.25)  # gamma = 2: (1 + 1.5) / 2
    assert m["AP"] == pytest.approx(7 / 4)
    assert m["DAL"] == pytest.approx(1.375)  # g' = 1, 2, 2.5, 3 ; (1 + 1.5 + 1.5 + 1.5) / 4
    assert m["YAAL"] == pytest.approx(1.0)


def test_first_delay_beyond_source_rule_and_yaal_none() -> None:
    assert lat.average_lagging([5, 6], 3, 2) == 5
    assert lat.length_adaptive_average_lagging([5, 6], 3, 2) == 5
    assert lat.yet_another_average_lagging([3, 3], 3, 2) is None  # nothing emitted before the end


def test_hand_worked_speech_atd() -> None:
    # 1000 ms of source, 300 ms source tokens: 0-300-600-900-1000; text tokens have no length
    # tokens at 600, 600, 1000 align to source tokens 1, 2, 3: (600-300 + 600-600 + 1000-900) / 3
    assert lat.average_token_delay([600, 600, 1000], speech=True) == pytest.approx(400 / 3)


def test_computation_aware_variants_leave_plain_ones_alone() -> None:
    plain = _all([2, 3, 4, 4], 4, 4)
    ca = _all([2, 3, 4, 4], 4, 4, elapsed=[2.5, 3.5, 4.5, 5.0])
    for name in lat.LATENCY_METRICS:
        assert ca[name] == plain[name]
    assert ca["AL_CA"] == pytest.approx((2.5 + 2.5 + 2.5) / 3)  # cut at 4.5, the first elapsed reaching |X| = 4
    assert ca["StartOffset_CA"] == 2.5 and ca["EndOffset_CA"] == pytest.approx(1.0)
    # elapsed - delay = 0.5, 0.5, 0.5, 1.0 -> compute times 0.5, 0, 0, 0.5; token end times 3.5, 4.5, 5.5, 7.0
    assert ca["ATD_CA"] == pytest.approx(((3.5 - 1) + (4.5 - 2) + (5.5 - 3) + (7.0 - 4)) / 4)


def test_reference_length_units() -> None:
    assert lat.reference_length("a b  c") == 4  # SimulEval splits on single spaces
    assert lat.reference_length(" 你好世界 ", "char") == 4


@st.composite
def wait_k(draw):
    x = draw(st.integers(1, 60))
    k = draw(st.integers(1, x))
    return x, k, [min(k + i, x) for i in range(x)]


@settings(max_examples=200, deadline=None)
@given(wait_k())
def test_wait_k_with_equal_lengths_gives_k(case) -> None:
    x, k, delays = case
    assert lat.average_lagging(delays, x, x) == pytest.approx(k)
    assert lat.length_adaptive_average_lagging(delays, x, x) == pytest.approx(k)
    assert lat.differentiable_average_lagging(delays, x) == pytest.approx(k)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 80), st.integers(1, 80), st.integers(1, 80))
def test_offline_gives_source_length(x: int, hyp_len: int, ref_len: int) -> None:
    delays = [x] * hyp_len
    assert lat.average_lagging(delays, x, ref_len) == x
    assert lat.length_adaptive_average_lagging(delays, x, ref_len) == x


@st.composite
def instance(draw):
    x = draw(st.integers(1, 50))
    delays = sorted(draw(st.lists(st.integers(0, x), min_size=1, max_size=60)))
    y = draw(st.integers(1, 60))
    return x, y, delays


@settings(max_examples=300, deadline=None)
@given(instance(), st.floats(0.01, 1000))
def test_scaling_delays_and_source(case, c: float) -> None:
    x, y, delays = case
    scaled = [d * c for d in delays]
    for f in (lat.average_lagging, lat.length_adaptive_average_lagging):
        assert f(scaled, x * c, y) == pytest.approx(c * f(delays, x, y), rel=1e-9, abs=1e-9)
    assert lat.differentiable_average_lagging(scaled, x * c) == pytest.approx(
        c * lat.differentiable_average_lagging(delays, x), rel=1e-9, abs=1e-9
    )
    assert lat.start_offset(scaled) == pytest.approx(c * lat.start_offset(delays))
    assert lat.end_offset(scaled, x * c) == pytest.approx(c * lat.end_offset(delays, x), rel=1e-9, abs=1e-9)
    assert lat.average_proportion(scaled, x * c, y) == pytest.approx(lat.average_proportion(delays, x, y))


@settings(max_examples=200, deadline=None)
@given(instance())
def test_bounds(case) -> None:
    x, y, delays = case
    assert 0 <= lat.average_proportion(delays, x, y) * y / len(delays) <= 1  # mean delay / |X| in [0, 1]
    # a text token lasts one word-time and cannot end before the source it was written after: every term is at
    # least 1; and the i-th token ends by max(delays) + i + 1, its aligned source not before time 0
    assert 1 <= lat.average_token_delay(delays, speech=False) <= max(delays) + len(delays)
    yaal = lat.yet_another_average_lagging(delays, x, y)
    assert (yaal is None) == (delays[0] >= x)


@st.composite
def corpus(draw):
    speech = draw(st.booleans())
    rows = []
    for _ in range(draw(st.integers(1, 12))):
        if speech:
            x = draw(st.integers(1000, 20000)) * 1000 / 16000
            seg = draw(st.sampled_from([40, 160, 320, 500]))
            steps = [min(k * seg, x) for k in range(1, int(x // seg) + 2)]
            delays = sorted(draw(st.lists(st.sampled_from(steps), min_size=1, max_size=30)))
        else:
            x = draw(st.integers(1, 30))
            delays = sorted(draw(st.lists(st.integers(0, x), min_size=1, max_size=30)))
        gaps = draw(st.lists(st.floats(0, 500), min_size=len(delays), max_size=len(delays)))
        elapsed = [d + sum(gaps[: i + 1]) for i, d in enumerate(delays)]
        if draw(st.booleans()) and len(delays) > 1:
            elapsed[1] = elapsed[0] - 1  # elapsed times need not be monotonic
        rows.append((delays, x, draw(st.integers(1, 40)), elapsed if draw(st.integers(0, 4)) else None))
    return speech, rows


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(corpus())
def test_corpus_latency_equals_instance_latency(case) -> None:
    """The vectorized corpus computation equals the per-instance one (itself checked against SimulEval)."""
    import math

    speech, rows = case
    out = lat.corpus_latency([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], speech,
                             [r[3] for r in rows])
    for i, (delays, x, y, elapsed) in enumerate(rows):
        ref = lat.instance_latency(delays, x, y, speech, elapsed)
        for name, values in out.items():
            if ref.get(name) is None:
                assert math.isnan(values[i]), name
            else:
                assert values[i] == pytest.approx(ref[name], rel=1e-12, abs=1e-9), name
