"""Quality metrics through sacrebleu: BLEU, chrF and TER with signatures, bootstrap 95% intervals, Norm-Score.

Hypotheses and references are detokenized text. Several reference sets can be scored one by one or together
(multi-reference). Confidence intervals reuse sacrebleu's own resampling recipe: the same seeded
`numpy.random.default_rng(seed).choice` indices over sentence statistics and the metric's own
`_compute_score_from_stats`, with the resampled sums computed once as a matrix product (much faster than
sacrebleu's per-sample copies for 1000 resamples).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["QUALITY_METRICS", "make_metric", "resample_counts", "quality_score", "norm_score"]

QUALITY_METRICS: tuple[str, ...] = ("BLEU", "chrF", "TER")


def make_metric(name: str, tokenizer: str = "13a") -> Any:
    """A fresh sacrebleu metric object; `tokenizer` applies to BLEU and TER (TER: asian support for zh/ja/char)."""
    from sacrebleu.metrics import BLEU, CHRF, TER

    if name == "BLEU":
        return BLEU(tokenize=tokenizer)
    if name == "chrF":
        return CHRF()
    if name == "TER":
        return TER(asian_support=tokenizer in ("zh", "ja-mecab", "char", "ko-mecab"))
    raise ValueError(f"unknown quality metric {name!r}")


def resample_counts(n: int, bootstrap: int, seed: int) -> Any:
    """(bootstrap, n) matrix: how often each sentence occurs in each resample (sacrebleu's index draw)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    idxs = rng.choice(n, size=(bootstrap, n), replace=True)
    counts = np.zeros((bootstrap, n), dtype=np.float64)
    rows = np.repeat(np.arange(bootstrap), n)
    np.add.at(counts, (rows, idxs.ravel()), 1.0)
    return counts


def _ci95(values: Sequence[float]) -> list[float]:
    """sacrebleu's percentile rule: the n//40-th lowest and highest of the sorted resampled scores."""
    raw = sorted(values)
    lo = len(raw) // 40
    return [float(raw[lo]), float(raw[len(raw) - lo - 1])]


def quality_score(
    name: str,
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    tokenizer: str = "13a",
    counts: Any = None,
    seed: int = 12345,
) -> dict[str, Any]:
    """One corpus metric: `{"score", "ci95", "signature"}`. `references` is a list of reference streams.

    `counts` (from `resample_counts`) turns on the bootstrap interval; pass the same matrix to every metric so that
    all intervals come from the same resamples.
    """
    import numpy as np

    metric = make_metric(name, tokenizer)
    stats = metric._extract_corpus_statistics(list(hypotheses), [list(r) for r in references])
    score = metric._aggregate_and_compute(stats)
    ci = None
    if counts is not None and len(stats):
        sums = counts @ np.asarray(stats, dtype=np.float64)
        ci = _ci95([metric._compute_score_from_stats(list(row)).score for row in sums])
        metric.n_bootstrap = counts.shape[0]
        metric.seed = str(seed)
    return {"score": float(score.score), "ci95": ci, "signature": metric.get_signature().format()}


def norm_score(system_bleu: float, baseline_bleu: float) -> float | None:
    """Norm-Score (SiMuST-C): system BLEU over the offline baseline's BLEU on the same references."""
    return system_bleu / baseline_bleu if baseline_bleu else None
