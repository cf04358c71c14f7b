"""Paired significance between two runs' instance records: match them by index, then test (harness.metrics)."""

from __future__ import annotations

from typing import Any

from harness.errors import HarnessError
from harness.metric_registry import QUALITY_METRICS
from harness.metrics.significance import paired_quality, paired_values
from harness.scoring.corpus import instance_metrics
from harness.scoring.references import reference_sets_of

__all__ = ["paired_bootstrap"]


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

    The records of both systems are matched by `index` and must cover the same instances.
    """
    a = {r["index"]: r for r in records_a}
    b = {r["index"]: r for r in records_b}
    if set(a) != set(b):
        raise HarnessError(f"paired test needs the same instances: {len(set(a) ^ set(b))} indices differ")
    if not a:
        raise HarnessError("paired test needs at least one instance")
    order = sorted(a)
    ref_set = reference_set or next(iter(reference_sets_of(a[order[0]])))
    base = metric.split("@")[0]
    if base in QUALITY_METRICS:
        refs = [reference_sets_of(a[i])[ref_set] for i in order]
        res = paired_quality([a[i]["prediction"] for i in order], [b[i]["prediction"] for i in order], refs, base,
                             bootstrap=bootstrap, seed=seed, tokenizer=tokenizer)
    else:
        values = [[instance_metrics(recs[i], latency_unit, reference_set=ref_set).get(metric) for i in order]
                  for recs in (a, b)]
        res = paired_values(values[0], values[1], metric, bootstrap=bootstrap, seed=seed)
    res["metric"] = metric
    return {"metric": metric, "reference_set": ref_set, **{k: v for k, v in res.items() if k != "metric"}}
