"""The compiled TER and chrF helpers (ter_shift.c, chrf_ngrams.c through ctypes) equal sacrebleu; pure paths remain.

Equality with `sacrebleu.metrics.lib_ter.translation_edit_rate` on hypothesis-generated word lists (small
vocabularies make many equal words, so many shift candidates and ties), on the shift search's edge cases (empty
sides, the 10-word shift limit, the 50-position distance limit, the 1,000-candidate limit, lengths unequal enough to
widen the beam) and on real Apertium output against the UDHR references.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import TER, lib_ter

from harness.metrics import native
from harness.metrics.bootstrap import Resamples
from harness.metrics.quality import fast_bleu_stats, fast_chrf_stats, make_metric

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "runs" / "udhr-dev-waitk3" / "instances.log"
WORDS = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f"]), max_size=45)

pytestmark = pytest.mark.skipif(native.library() is None, reason="no C compiler: the pure path is used")


def _sacrebleu(pairs: list[tuple[list[str], list[str]]]) -> list[int]:
    return [lib_ter.translation_edit_rate(h, r)[0] for h, r in pairs]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(WORDS, WORDS), min_size=1, max_size=4))
def test_edits_equal_sacrebleu_on_generated_words(pairs) -> None:
    assert native.edit_counts(pairs) == _sacrebleu(pairs)


def _edge_cases() -> list[tuple[list[str], list[str]]]:
    rng = random.Random(11)
    block = [f"w{i}" for i in range(12)]  # a 12-word block: longer than the 10-word shift limit
    filler = [f"f{i}" for i in range(60)]
    cases = [
        ([], ["a", "b"]),  # empty hypothesis
        (["a", "b"], []),  # empty reference: the hypothesis length
        ([], []),
        (["x"], ["x"]),
        (block + filler[:5], filler[:5] + block),  # a block that must move, longer than a shift can be
        (filler[:55] + ["z", "y"], ["z", "y"] + filler[:55]),  # words that would move farther than 50 positions
        (["a"] * 3, ["a"] * 90),  # length ratio 30: the beam widens
        (["a", "b"] * 40, ["b", "a"] * 5),
        (["c", "a", "b"] * 20, ["a", "b", "c"] * 20),  # many equal pairs: the 1,000-candidate limit
    ]
    for _ in range(8):  # long sequences over tiny vocabularies hit the candidate limit mid-search
        v = rng.choice([2, 3, 4])
        cases.append(([str(rng.randrange(v)) for _ in range(rng.randint(30, 70))],
                      [str(rng.randrange(v)) for _ in range(rng.randint(30, 70))]))
    return cases


@pytest.mark.slow
def test_edits_equal_sacrebleu_on_shift_edge_cases() -> None:
    cases = _edge_cases()
    assert native.edit_counts(cases) == _sacrebleu(cases)


@pytest.mark.slow
def test_real_apertium_output_scores_signatures_and_statistics_equal_sacrebleu() -> None:
    recs = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    hyps, refs = [r["prediction"] for r in recs], [r["reference"] for r in recs]
    ours, theirs = make_metric("TER"), TER()
    assert ours._extract_corpus_statistics(hyps, [refs]) == theirs._extract_corpus_statistics(hyps, [refs])
    assert ours.corpus_score(hyps, [refs]).score == TER().corpus_score(hyps, [refs]).score
    assert ours.get_signature().format() == theirs.get_signature().format()
    two = [refs, [r["source"] for r in recs]]  # several references: the fewest edits, the mean length
    assert make_metric("TER")._extract_corpus_statistics(hyps, two) == TER()._extract_corpus_statistics(hyps, two)


def test_pure_path_is_used_without_the_library(monkeypatch) -> None:
    recs = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()][:8]
    hyps, refs = [r["prediction"] for r in recs], [r["reference"] for r in recs]
    compiled = make_metric("TER")._extract_corpus_statistics(hyps, [refs])
    monkeypatch.setenv("HARNESS_NO_NATIVE", "1")
    assert native.library() is None and native.edit_counts([(["a"], ["a"])]) is None
    assert make_metric("TER")._extract_corpus_statistics(hyps, [refs]) == compiled


def test_library_is_rebuilt_where_the_cache_is_empty(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    monkeypatch.setattr(native, "_STATE", {})
    assert native.edit_counts([(["a", "b"], ["b", "a"])]) == [1]  # one shift
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".so"]


@pytest.mark.parametrize(("n", "bootstrap"), [(7, 130), (20001, 70), (1, 3)])
def test_resamples_are_sacrebleus_draw_in_blocks(n: int, bootstrap: int) -> None:
    import numpy as np

    idxs = np.random.default_rng(12345).choice(n, size=(bootstrap, n), replace=True)  # sacrebleu's draw
    full = np.zeros((bootstrap, n))
    np.add.at(full, (np.repeat(np.arange(bootstrap), n), idxs.ravel()), 1.0)
    values = np.random.default_rng(1).integers(0, 90, size=(n, 3)).astype(np.float64)
    ours = Resamples(n, bootstrap, 12345)
    assert (ours @ values == full @ values).all() and ours.shape == (bootstrap, n)


def test_block_statistics_equal_one_pass(monkeypatch) -> None:
    from harness.metrics import quality

    recs = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    hyps, refs = [r["prediction"] for r in recs], [r["reference"] for r in recs]
    whole_bleu, whole_chrf = fast_bleu_stats(hyps, [refs], "13a"), fast_chrf_stats(hyps, [refs])
    monkeypatch.setattr(quality, "BLOCK_CHARS", 900)  # a few sentences per block
    assert len(quality._blocks(hyps, [refs])) > 10
    assert (fast_bleu_stats(hyps, [refs], "13a") == whole_bleu).all()
    assert (fast_chrf_stats(hyps, [refs]) == whole_chrf).all()


def test_chrf_matches_equal_the_numpy_path_and_sacrebleu(monkeypatch) -> None:
    import numpy as np
    from sacrebleu.metrics import CHRF

    from harness.metrics import quality

    recs = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    hyps, refs = [r["prediction"] for r in recs], [r["reference"] for r in recs]
    rng = random.Random(5)  # tiny alphabets repeat n-grams; empty sides; characters beyond the BMP
    for _ in range(80):
        hyps.append("".join(rng.choice("ab c") for _ in range(rng.randint(0, 30))))
        refs.append("".join(rng.choice("ab c") for _ in range(rng.randint(0, 30))))
    hyps += ["ñandú 🙂 x", "", "a"]
    refs += ["ñandú 🙂 y", "abc", ""]
    compiled = quality.fast_chrf_stats(hyps, [refs])
    assert (compiled == np.array(CHRF()._extract_corpus_statistics(hyps, [refs]))).all()
    monkeypatch.setenv("HARNESS_NO_NATIVE", "1")
    assert native.chrf_match_counts(np.zeros(1, dtype=np.uint32), [0, 0], 1, 6) is None
    assert (quality.fast_chrf_stats(hyps, [refs]) == compiled).all()


def test_bleu_matches_compiled_equal_the_numpy_path_and_sacrebleu(monkeypatch) -> None:
    """One reference: BLEU's clipped n-gram matches come from chrF's compiled matcher over token ids."""
    import numpy as np
    from sacrebleu.metrics import BLEU

    recs = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    hyps, refs = [r["prediction"] for r in recs], [r["reference"] for r in recs]
    rng = random.Random(7)  # tiny vocabularies repeat n-grams; empty sides; punctuation 13a splits
    for _ in range(80):
        hyps.append(" ".join(rng.choice(["a", "b", "a.", "c,d", "&amp;"]) for _ in range(rng.randint(0, 12))))
        refs.append(" ".join(rng.choice(["a", "b", "b.", "c", "d"]) for _ in range(rng.randint(0, 12))))
    hyps += ["", "a", "ñandú 🙂 x"]
    refs += ["a b", "", "ñandú 🙂 y"]
    for tok in ("13a", "none"):
        compiled = fast_bleu_stats(hyps, [refs], tok)
        theirs = np.array(BLEU(tokenize=tok)._extract_corpus_statistics(hyps, [refs]), dtype=np.int64)
        assert (compiled == theirs).all()
        with monkeypatch.context() as m:
            m.setenv("HARNESS_NO_NATIVE", "1")
            assert (fast_bleu_stats(hyps, [refs], tok) == compiled).all()
