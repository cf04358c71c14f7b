"""Paired bootstrap significance test between two systems on the same instances (sacrebleu's `paired_bs`).

Pure functions over aligned inputs: hypotheses and references for the quality metrics (BLEU, chrF, TER, on
corpus statistics), per-instance values for the latency metrics (corpus value = mean over the instances that have
one). Matching two runs' instances is the scoring stage's job (`harness.scoring.significance`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.errors import HarnessError

__all__ = ["paired_quality", "paired_values"]


def _p_value(sample_diffs: Any, real_diff: float) -> float:
    import numpy as np

    if real_diff == 0:  # identical scores: sacrebleu's formula would give 1/(n+1), we say "no evidence"
        return 1.0
    stats = sample_diffs - sample_diffs.mean()
    c = int(np.sum(stats > real_diff))
    return (c + 1) / (len(stats) + 1)


def _result(metric: str, scores: list[float], samples: list[Any], bootstrap: int, seed: int) -> dict[str, Any]:
    import numpy as np

    diffs = np.abs(samples[1] - samples[0])
    diffs = diffs[np.isfinite(diffs)]
    return {
        "metric": metric,
        "score_a": scores[0],
        "score_b": scores[1],
        "difference": scores[1] - scores[0],
        "p_value": _p_value(diffs, abs(scores[1] - scores[0])),
        "bootstrap": bootstrap,
        "seed": seed,
    }


def paired_quality(
    hypotheses_a: Sequence[str],
    hypotheses_b: Sequence[str],
    references: Sequence[str],
    metric: str = "BLEU",
    *,
    bootstrap: int = 1000,
    seed: int = 12345,
    tokenizer: str = "13a",
) -> dict[str, Any]:
    """Is the `metric` difference between hypotheses A and B (same references, same order) due to chance?

    The p-value follows sacrebleu: resampled absolute differences, centred, compared with the real one.
    """
    import numpy as np

    from harness.metrics.quality import make_metric, resample_counts

    if not (len(hypotheses_a) == len(hypotheses_b) == len(references)):
        raise HarnessError("paired test needs as many hypotheses of each system as references")
    if not references:
        raise HarnessError("paired test needs at least one instance")
    counts = resample_counts(len(references), bootstrap, seed)
    scores, samples = [], []
    for hyps in (hypotheses_a, hypotheses_b):
        m = make_metric(metric, tokenizer)
        stats = m._extract_corpus_statistics(list(hyps), [list(references)])
        scores.append(float(m._aggregate_and_compute(stats).score))
        sums = counts @ np.asarray(stats, dtype=np.float64)
        samples.append(np.array([m._compute_score_from_stats(list(row)).score for row in sums]))
    return _result(metric, scores, samples, bootstrap, seed)


def paired_values(
    values_a: Sequence[float | None],
    values_b: Sequence[float | None],
    metric: str,
    *,
    bootstrap: int = 1000,
    seed: int = 12345,
) -> dict[str, Any]:
    """Paired test on per-instance values (None: no value, left out of that system's mean), same order."""
    import numpy as np

    from harness.metrics.quality import resample_counts

    if len(values_a) != len(values_b):
        raise HarnessError("paired test needs the same instances for both systems")
    if not values_a:
        raise HarnessError("paired test needs at least one instance")
    counts = resample_counts(len(values_a), bootstrap, seed)
    scores, samples = [], []
    for vals in (values_a, values_b):
        valid = np.array([v is not None for v in vals])
        if not valid.any():
            raise HarnessError(f"metric {metric!r} has no value for any instance")
        v = np.array([x if x is not None else 0.0 for x in vals], dtype=np.float64)
        scores.append(float(v[valid].mean()))
        with np.errstate(invalid="ignore", divide="ignore"):
            samples.append((counts @ np.where(valid, v, 0.0)) / (counts @ valid.astype(np.float64)))
    return _result(metric, scores, samples, bootstrap, seed)
