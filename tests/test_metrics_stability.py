"""Normalized Erasure and final-token delays of re-translation systems."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.metrics.stability import corpus_normalized_erasure, final_token_delays, normalized_erasure


def test_hand_worked_erasure() -> None:
    revs = ["the", "the house", "a house is", "a house is green"]
    # "the" -> "the house": 0 erased; -> "a house is": 2 erased (the, house); -> "...green": 0
    assert normalized_erasure(revs) == (2, 4)
    assert corpus_normalized_erasure([revs, ["x y"]]) == 2 / 6


def test_hand_worked_final_delays() -> None:
    revs = [(1, "the"), (2, "the house"), (3, "a house is"), (5, "a house is green")]
    # "a", "house", "is" first appear at 3 and never change after; "green" at 5
    assert final_token_delays(revs) == [3, 3, 3, 5]
    # a token whose prefix is revised later takes the later delay even if it was output earlier
    assert final_token_delays([(1, "a b"), (2, "a c"), (3, "a b d")]) == [1, 3, 3]


def test_char_unit_and_empty() -> None:
    assert normalized_erasure(["你好", "你们好"], unit="char") == (1, 3)
    assert final_token_delays([]) == []
    assert corpus_normalized_erasure([[""]]) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="abc ", max_size=12), min_size=1, max_size=8), st.integers(0, 5))
def test_properties(texts, start) -> None:
    revs = [(start + i, t) for i, t in enumerate(texts)]
    delays = final_token_delays(revs)
    erased, final = normalized_erasure(texts)
    assert final == len(texts[-1].split()) == len(delays)
    assert delays == sorted(delays)  # prefixes stabilise in order
    assert all(start <= d <= start + len(texts) - 1 for d in delays)
    words = [t.split() for t in texts]
    pairs = list(pairwise(words))
    # nothing is erased exactly when every revision extends the one before; a revision erases at least the tokens
    # it is shorter by, and never more than the previous revision showed
    assert (erased == 0) == all(b[: len(a)] == a for a, b in pairs)
    assert sum(max(0, len(a) - len(b)) for a, b in pairs) <= erased <= sum(len(a) for a, _ in pairs)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c"]), max_size=20))
def test_append_only_has_no_erasure(words) -> None:
    revs = [" ".join(words[: i + 1]) for i in range(len(words))]
    assert normalized_erasure(revs) == (0, len(words))
    assert final_token_delays([(i, r) for i, r in enumerate(revs)]) == list(range(len(words)))
