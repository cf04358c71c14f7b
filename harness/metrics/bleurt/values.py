"""BLEURT as a harness metric: sentence scores, system score (their mean), signature and bootstrap interval.

The signature names what the values depend on: the checkpoint's folder and content hash, precision, batch size,
device, the number of references, the bootstrap and bleurt-pytorch's version, e.g. `model:/models/BLEURT-20-D12|
sha256:3f1c...|precision:fp32|batch:16|device:cpu|nrefs:1|bs:1000|seed:12345|bleurt-pytorch:0.0.1`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.config import ModelMetric
from harness.errors import MetricSetupError
from harness.metrics.bleurt.checkpoint import content_hash, locate
from harness.metrics.bleurt.scorer import EXTRA_MISSING, BleurtScorer, bleurt_cache, load_scorer, require_bleurt
from harness.metrics.comet.cache import ScoreCache

__all__ = ["BleurtValues", "bleurt_values", "scorer_for", "signature"]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bleurt-pytorch")
    except PackageNotFoundError:
        raise MetricSetupError(EXTRA_MISSING) from None


def signature(model_signature: str, nrefs: int = 1, bootstrap: int | None = None, seed: int | None = None) -> str:
    bs = f"|bs:{bootstrap}|seed:{seed}" if bootstrap else ""
    return f"{model_signature}|nrefs:{nrefs}{bs}|bleurt-pytorch:{_version()}"


@dataclass(frozen=True)
class BleurtValues:
    """One system's result: sentence scores in input order, their mean, the model's signature part."""

    values: list[float]
    score: float
    model_signature: str

    def record(self, counts: Any = None, seed: int = 12345) -> dict[str, Any]:
        """`{"score", "ci95", "signature"}`; the interval is sacrebleu's percentile rule over the same resamples
        (`counts`) as every other metric, of the resampled mean sentence score."""
        import numpy as np

        from harness.metrics.quality import interval

        ci = None
        if counts is not None:
            ci = interval(((counts @ np.asarray(self.values, dtype=np.float64)) / len(self.values)).tolist())
        bootstrap = counts.shape[0] if ci is not None else None
        return {"score": self.score, "ci95": ci, "signature": signature(self.model_signature, 1, bootstrap, seed)}


def scorer_for(settings: ModelMetric, where: str, cache: ScoreCache | None = None) -> BleurtScorer:
    require_bleurt()
    folder = locate(settings.model, where)
    cache = cache if cache is not None else bleurt_cache()
    known = cache.hashes()
    digest = content_hash(folder, known)
    for key, value in known.items():
        if value == digest:
            cache.remember_hash(key, value)
    return load_scorer(folder, digest, settings.precision, settings.gpus, settings.batch_size, where, cache)


def bleurt_values(name: str, sources: Sequence[str] | None, hypotheses: Sequence[str], references: Sequence[str],
                  settings: ModelMetric, *, where: str | None = None) -> BleurtValues:
    """BLEURT of one system against one reference set (`sources` is not used: BLEURT reads no source)."""
    if len(hypotheses) != len(references) or not hypotheses:
        raise ValueError(f"{name}: needs as many hypotheses as references, at least one")
    scorer = scorer_for(settings, where or settings.where or f"metrics.{name}")
    values = scorer.score(references, hypotheses)
    return BleurtValues(values, sum(values) / len(values), scorer.signature_base)
