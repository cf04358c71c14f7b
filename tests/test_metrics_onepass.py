"""Scoring every metric at once (TER in a background thread, one pass over the bootstrap resamples) gives
exactly sacrebleu's scores, signatures and the per-metric intervals."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from sacrebleu.metrics import BLEU, CHRF, TER, lib_ter

from harness.metrics.native import library, start_edit_counts
from harness.metrics.quality import make_metric, quality_score, resample_counts
from harness.scoring.corpus import corpus_instance_metrics, score_records
from harness.scoring.means import mean_records

UDHR = Path(__file__).resolve().parents[1] / "data" / "udhr"


def _udhr_pairs() -> tuple[list[str], list[str], list[str]]:
    """(hypotheses, Spanish references, English lines): references with seeded word swaps and drops."""
    en = (UDHR / "dev.en").read_text(encoding="utf-8").splitlines()
    es = (UDHR / "dev.es").read_text(encoding="utf-8").splitlines()
    rng = random.Random(11)
    hyps = []
    for i, line in enumerate(es):
        words = line.split()
        for _ in range(rng.randint(0, 5)):
            j, k = rng.randrange(len(words)), rng.randrange(len(words))
            words[j], words[k] = words[k], words[j]
        if len(words) > 3 and i % 3 == 0:
            del words[rng.randrange(len(words))]
        hyps.append(" ".join(words) if i % 7 else en[i])
    return hyps, es, en


@pytest.mark.slow
@pytest.mark.skipif(library() is None, reason="no C compiler (or HARNESS_NO_NATIVE=1)")
def test_background_edit_counts_equal_sacrebleu_chunk_by_chunk() -> None:
    hyps, es, _ = _udhr_pairs()
    pairs = [(h.lower().split(), r.lower().split()) for h, r in zip(hyps * 8, es * 8, strict=True)]
    job = start_edit_counts(pairs)  # hundreds of pairs: many chunks, shared by a background thread and us
    assert job is not None
    assert job.result() == [lib_ter.translation_edit_rate(h, r)[0] for h, r in pairs]


def test_ter_with_missing_references_equals_sacrebleu() -> None:
    hyps, es, en = _udhr_pairs()
    second = [None if i % 4 == 0 else line for i, line in enumerate(en)]  # a variable number of references
    ours, theirs = make_metric("TER"), TER()
    assert ours.corpus_score(hyps, [es, second]).score == theirs.corpus_score(hyps, [es, second]).score
    assert ours.get_signature().format() == theirs.get_signature().format()
    assert "nrefs:var" in ours.get_signature().format()


@pytest.mark.slow
def test_all_metrics_in_one_pass_equal_sacrebleu_and_the_per_metric_intervals() -> None:
    hyps, es, en = _udhr_pairs()
    records = [
        {"index": i, "prediction": h, "references": {"es": r, "en": e}, "source": e,
         "source_length": len(e.split()), "delays": list(range(1, len(h.split()) + 1)) if i % 9 else []}
        for i, (h, r, e) in enumerate(zip(hyps, es, en, strict=True))
    ]
    scores = score_records(records, latency_unit="word")
    counts = resample_counts(len(records), 1000, 12345)
    for name, cls in (("BLEU", BLEU), ("chrF", CHRF), ("TER", TER)):
        for key, streams in ((name, [es]), (f"{name}@en", [en]), (f"{name}@multi", [es, en])):
            if name == "chrF" and len(streams) > 1:
                continue
            metric = cls()
            assert scores[key]["score"] == metric.corpus_score(hyps, streams).score, key
            metric.n_bootstrap, metric.seed = 1000, "12345"
            assert scores[key]["signature"] == metric.get_signature().format(), key
            alone = quality_score(name, hyps, streams, counts=counts)  # its own pass over the resamples
            assert scores[key]["ci95"] == alone["ci95"], key
    assert scores["chrF@multi"]["score"] == CHRF().corpus_score(hyps, [es, en]).score
    # latency: the shared pass gives each metric's interval from its own pass over the same resamples (quality
    # statistics are integers, so their sums above are exact and equal whatever the matrix layout)
    per_instance = corpus_instance_metrics(records, "word", "es", False, True)
    for name in ("AL", "LAAL", "DAL", "YAAL"):
        score, ci = mean_records([per_instance[name]], counts)[0]
        assert scores[name]["score"] == score, name
        # float sums of non-integer values: BLAS may add them in another order for another matrix width
        assert scores[name]["ci95"] == pytest.approx(ci, rel=1e-12, abs=0), name
