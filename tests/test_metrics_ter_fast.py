"""The faster TER edit distance gives exactly sacrebleu's TER: random word sequences, the bundled UDHR data."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import TER, lib_ter

from harness.metrics.quality import make_metric, quality_score, resample_counts
from harness.metrics.ter_fast import FastBeamEditDistance, translation_edit_rate

UDHR = Path(__file__).resolve().parents[1] / "data" / "udhr"
WORDS = st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=20)


@settings(max_examples=150, deadline=None)
@given(WORDS, WORDS)
def test_edit_rate_equals_sacrebleu_on_random_words(hyp, ref) -> None:
    assert translation_edit_rate(hyp, ref) == lib_ter.translation_edit_rate(hyp, ref)


def test_edit_distance_and_trace_equal_sacrebleu_beyond_the_beam() -> None:
    """Long, unequal lengths so the beam (and its widening for length ratios) cuts the matrix."""
    rng = random.Random(7)
    for _ in range(40):
        vocab = rng.choice([3, 30])
        ref = [str(rng.randrange(vocab)) for _ in range(rng.randrange(1, 90))]
        hyp = [str(rng.randrange(vocab)) for _ in range(rng.randrange(0, 40))]
        ours, theirs = FastBeamEditDistance(ref), lib_ter.BeamEditDistance(ref)
        for _ in range(3):  # the second and third calls go through the prefix caches
            assert ours(hyp) == theirs(hyp)
            if hyp:
                hyp = hyp[:-1] + [hyp[0]]
        if len(hyp) < 25:
            assert translation_edit_rate(hyp, ref) == lib_ter.translation_edit_rate(hyp, ref)


@pytest.mark.slow
def test_udhr_statistics_score_interval_and_signature_equal_sacrebleu() -> None:
    en = (UDHR / "dev.en").read_text(encoding="utf-8").splitlines()
    es = (UDHR / "dev.es").read_text(encoding="utf-8").splitlines()
    rng = random.Random(3)
    hyps = []  # the Spanish references with seeded word edits, and some English lines as poor translations
    for i, line in enumerate(es):
        words = line.split()
        for _ in range(rng.randint(0, 4)):
            j, k = rng.randrange(len(words)), rng.randrange(len(words))
            words[j], words[k] = words[k], words[j]
        hyps.append(" ".join(words) if i % 5 else en[i])
    assert make_metric("TER")._extract_corpus_statistics(hyps, [es]) == TER()._extract_corpus_statistics(hyps, [es])
    counts = resample_counts(len(hyps), 1000, 12345)
    ours = quality_score("TER", hyps, [es], counts=counts)
    metric = TER()
    theirs = metric.corpus_score(hyps, [es], n_bootstrap=1000)
    assert ours["score"] == theirs.score
    assert ours["signature"] == metric.get_signature().format()
    both = quality_score("TER", hyps, [es, en])
    assert both["score"] == TER().corpus_score(hyps, [es, en]).score
