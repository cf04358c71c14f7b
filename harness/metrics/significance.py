"""Paired bootstrap significance test between two systems on the same instances (sacrebleu's `paired_bs`).

Works for the quality metrics (BLEU, chrF, TER, on corpus statistics) and for every latency metric (on the
per-instance values, corpus value = mean over instances that have one).
"""

from __future__ import annotations

from typing import Any

from harness.errors import HarnessError

__all__ = ["paired_bootstrap"]


def _p_value(sample_diffs: Any, real_diff: float) -> float:
    import numpy as np

    if real_diff == 0:  # identical scores: sacrebleu's formula would give 1/(n+1), we say "no evidence"
        return 1.0
    stats = sample_diffs - sample_diffs.mean()
    c = int(np.sum(stats > real_diff))
    return (c + 1) / (len(stats) + 1)


def paired_bootstrap(
    records_a: list[dict[str, Any]],
    records_b: list[dict[str, Any]],
    metric: str = "BLEU",
    *,
    bootstrap: int = 1000,
    seed: int = 12345,
    tokenizer: str = "13a",
    latency_unit: str = "word",
    reference_set: str | None = None,
) -> dict[str, Any]:
    """Is the difference between systems A and B on `metric` due to chance? Returns scores and the p-value.

    The records of both systems are matched by `index` and must cover the same instances. The p-value follows
    sacrebleu: resampled absolute differences, centred, compared with the real absolute difference.
    """
    import numpy as np

    from harness.metrics.quality import QUALITY_METRICS, make_metric, resample_counts
    from harness.scoring import instance_metrics, reference_sets_of

    a = {r["index"]: r for r in records_a}
    b = {r["index"]: r for r in records_b}
    if set(a) != set(b):
        raise HarnessError(f"paired test needs the same instances: {len(set(a) ^ set(b))} indices differ")
    if not a:
        raise HarnessError("paired test needs at least one instance")
    order = sorted(a)
    counts = resample_counts(len(order), bootstrap, seed)
    first = reference_sets_of(a[order[0]])
    ref_set = reference_set or next(iter(first))
    base = metric.split("@")[0]
    if base in QUALITY_METRICS:
        refs = [[reference_sets_of(a[i])[ref_set] for i in order]]
        scores, samples = [], []
        for recs in (a, b):
            m = make_metric(base, tokenizer)
            stats = m._extract_corpus_statistics([recs[i]["prediction"] for i in order], refs)
            scores.append(float(m._aggregate_and_compute(stats).score))
            sums = counts @ np.asarray(stats, dtype=np.float64)
            samples.append(np.array([m._compute_score_from_stats(list(row)).score for row in sums]))
    else:
        scores, samples = [], []
        for recs in (a, b):
            vals = [instance_metrics(recs[i], latency_unit, reference_set=ref_set).get(metric) for i in order]
            if all(v is None for v in vals):
                raise HarnessError(f"metric {metric!r} has no value for any instance")
            valid = np.array([v is not None for v in vals])
            v = np.array([x if x is not None else 0.0 for x in vals], dtype=np.float64)
            scores.append(float(v[valid].mean()))
            w = counts[:, valid]
            with np.errstate(invalid="ignore", divide="ignore"):
                samples.append((w @ v[valid]) / w.sum(axis=1))
    diffs = np.abs(samples[1] - samples[0])
    diffs = diffs[np.isfinite(diffs)]
    return {
        "metric": metric,
        "reference_set": ref_set,
        "score_a": scores[0],
        "score_b": scores[1],
        "difference": scores[1] - scores[0],
        "p_value": _p_value(diffs, abs(scores[1] - scores[0])),
        "bootstrap": bootstrap,
        "seed": seed,
    }
