"""Quality metrics against sacrebleu itself; intervals, multi-reference, tokenizers, Norm-Score."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import BLEU, CHRF, TER

from harness.metrics.quality import fast_bleu_stats, norm_score, quality_score, resample_counts

HYPS = ["the cat sat on the mat", "there is a house in new orleans", "they call the rising sun", "hello"]
REFS_A = ["the cat sat on a mat", "there is a house in New Orleans", "they call it the rising sun", "hello world"]
REFS_B = ["a cat was sitting on the mat", "a house stands in new orleans", "its name is the rising sun", "hi"]


@pytest.mark.parametrize("name,cls", [("BLEU", BLEU), ("chrF", CHRF), ("TER", TER)])
def test_equals_sacrebleu_with_signature(name, cls) -> None:
    ours = quality_score(name, HYPS, [REFS_A])
    theirs = cls().corpus_score(HYPS, [REFS_A])
    assert ours["score"] == pytest.approx(theirs.score, abs=1e-9)
    assert ours["signature"].startswith("nrefs:1|") and "version:" in ours["signature"]
    multi = quality_score(name, HYPS, [REFS_A, REFS_B])
    assert multi["score"] == pytest.approx(cls().corpus_score(HYPS, [REFS_A, REFS_B]).score, abs=1e-9)
    assert multi["signature"].startswith("nrefs:2|")


def test_bootstrap_interval_equals_sacrebleu() -> None:
    hyps, refs = HYPS * 10, REFS_A * 10
    ours = quality_score("BLEU", hyps, [refs], counts=resample_counts(len(hyps), 1000, 12345))
    theirs = BLEU().corpus_score(hyps, [refs], n_bootstrap=1000)  # SACREBLEU_SEED default 12345
    lo, hi = ours["ci95"]
    assert lo <= ours["score"] <= hi
    assert 0.5 * (hi - lo) == pytest.approx(theirs._ci, abs=1e-3)  # float32 vs float64 sums only
    assert "bs:1000" in ours["signature"]


def test_tokenizers() -> None:
    zh = quality_score("BLEU", ["我爱你们"], [["我爱你"]], tokenizer="zh")
    assert zh["score"] == pytest.approx(BLEU(tokenize="zh").corpus_score(["我爱你们"], [["我爱你"]]).score)
    assert "tok:zh" in zh["signature"]
    assert "tok:char" in quality_score("BLEU", ["ab c"], [["ab d"]], tokenizer="char")["signature"]


def test_norm_score() -> None:
    assert norm_score(20.0, 25.0) == pytest.approx(0.8)
    assert norm_score(20.0, 0.0) is None


def _sacrebleu_stats(hyps, refs, tok):
    import numpy as np

    return np.array(BLEU(tokenize=tok)._extract_corpus_statistics(hyps, refs), dtype=np.int64).reshape(-1, 10)


TEXT = st.lists(st.sampled_from(list("ab c.,-&;:1 2'\"!?()\t") + ["&quot;", "<skipped>", "é", "-\n", "\n", "\0"]),
                max_size=30).map("".join)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(TEXT, TEXT, TEXT), min_size=1, max_size=8), st.sampled_from(["13a", "none"]))
def test_fast_bleu_statistics_equal_sacrebleu(rows, tok) -> None:
    hyps, r1, r2 = (list(x) for x in zip(*rows, strict=True))
    for refs in ([r1], [r1, r2]):
        assert (fast_bleu_stats(hyps, refs, tok) == _sacrebleu_stats(hyps, refs, tok)).all()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(TEXT, TEXT, TEXT), min_size=1, max_size=8))
def test_fast_bleu_renumbered_ngram_ids_equal_sacrebleu(monkeypatch_rows) -> None:
    """With a tiny key limit every order renumbers its n-gram ids (the path of very large vocabularies)."""
    import harness.metrics.quality as quality

    hyps, r1, r2 = (list(x) for x in zip(*monkeypatch_rows, strict=True))
    saved = quality._KEY_LIMIT
    quality._KEY_LIMIT = 1
    try:
        for refs in ([r1], [r1, r2]):
            assert (fast_bleu_stats(hyps, refs, "13a") == _sacrebleu_stats(hyps, refs, "13a")).all()
    finally:
        quality._KEY_LIMIT = saved


CHRF_CHARS = list("aab c.,\t\n\u3000\u00a0é中文") + ["ab", "ba ", "😀"]
CHRF_TEXT = st.lists(st.sampled_from(CHRF_CHARS), max_size=25).map("".join)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(CHRF_TEXT, CHRF_TEXT), min_size=1, max_size=8))
def test_fast_chrf_statistics_equal_sacrebleu(rows) -> None:
    import numpy as np

    from harness.metrics.quality import fast_chrf_stats

    hyps, refs = (list(x) for x in zip(*rows, strict=True))
    theirs = np.array(CHRF()._extract_corpus_statistics(hyps, [refs]), dtype=np.int64).reshape(len(hyps), -1)
    assert (fast_chrf_stats(hyps, [refs]) == theirs).all()
    assert fast_chrf_stats(hyps, [refs, refs]) is None  # several references: sacrebleu's own best-F choice


def test_fast_chrf_on_real_log_score_and_signature() -> None:
    import json
    from pathlib import Path

    log = Path(__file__).resolve().parents[1] / "examples" / "runs" / "udhr-dev-waitk3" / "instances.log"
    recs = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    hyps, refs = [r["prediction"] for r in recs], [[r["reference"] for r in recs]]
    ours = quality_score("chrF", hyps, refs, counts=resample_counts(len(hyps), 1000, 12345))
    metric = CHRF()
    theirs = metric.corpus_score(hyps, refs, n_bootstrap=1000)  # SACREBLEU_SEED default 12345
    assert ours["score"] == theirs.score
    assert 0.5 * (ours["ci95"][1] - ours["ci95"][0]) == pytest.approx(theirs._ci, abs=1e-3)
    assert ours["signature"] == metric.get_signature().format()


def test_fast_bleu_on_real_log() -> None:
    import json
    from pathlib import Path

    log = Path(__file__).resolve().parents[1] / "examples" / "runs" / "udhr-dev-waitk3" / "instances.log"
    recs = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    hyps, refs = [r["prediction"] for r in recs], [[r["reference"] for r in recs]]
    assert (fast_bleu_stats(hyps, refs, "13a") == _sacrebleu_stats(hyps, refs, "13a")).all()
    assert fast_bleu_stats(hyps, refs, "zh") is None  # other tokenizers go through sacrebleu itself


def test_parallel_sentence_statistics_equal_sacrebleu() -> None:
    from harness.metrics.quality import PARALLEL_MIN_SENTENCES

    n = PARALLEL_MIN_SENTENCES + 10
    hyps, refs = (HYPS * n)[:n], (REFS_A * n)[:n]
    for name, cls in (("chrF", CHRF), ("TER", TER)):
        ours = quality_score(name, hyps, [refs])
        theirs = cls().corpus_score(hyps, [refs])
        assert ours["score"] == pytest.approx(theirs.score, abs=1e-9)
        assert ours["signature"].startswith("nrefs:1|")


def test_own_bleu_pieces_equal_sacrebleu() -> None:
    import random

    from sacrebleu.tokenizers.tokenizer_re import TokenizerRegexp

    from harness.metrics.quality import RULES_13A, bleu_from_stats, bleu_signature

    assert [(r.pattern, t) for r, t in TokenizerRegexp()._re] == list(RULES_13A)
    rng = random.Random(4)
    for _ in range(300):
        total = [rng.randint(0, 50) for _ in range(4)]
        stats = [rng.randint(0, 60), rng.randint(0, 60)] + [rng.randint(0, t) for t in total] + total
        assert bleu_from_stats(stats) == BLEU()._compute_score_from_stats(stats).score
    plain = BLEU()
    plain.corpus_score(HYPS, [REFS_A, REFS_B])
    assert bleu_signature(2, "13a") == plain.get_signature().format()
    boot = BLEU(tokenize="none")
    boot.corpus_score(HYPS * 3, [REFS_A * 3], n_bootstrap=50)
    assert bleu_signature(1, "none", 50, 12345) == boot.get_signature().format()
