"""BLEURT as a harness metric: sentence scores, system score (their mean), signature and bootstrap interval.

The signature names what the values depend on: the checkpoint's folder and content hash, precision, batch size,
device, the number of references, the bootstrap and bleurt-pytorch's version, e.g. `model:/models/BLEURT-20-D12|
sha256:3f1c...|precision:fp32|batch:16|device:cpu|nrefs:1|bs:1000|seed:12345|bleurt-pytorch:0.0.1`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.config import ModelMetric
from harness.metrics.bleurt.checkpoint import content_hash, locate
from harness.metrics.bleurt.scorer import EXTRA_MISSING, BleurtScorer, bleurt_cache, load_scorer, require_bleurt
from harness.metrics.neural.cache import ScoreCache
from harness.metrics.neural.checkpoint import remembered_hash
from harness.metrics.neural.runtime import package_version
from harness.metrics.neural.values import NeuralValues

__all__ = ["BleurtValues", "bleurt_values", "scorer_for"]


@dataclass(frozen=True)
class BleurtValues(NeuralValues):
    """One system's result: sentence scores in input order, their mean, the model's signature part."""

    def tool(self) -> str:
        return f"bleurt-pytorch:{package_version('bleurt-pytorch', EXTRA_MISSING)}"


def scorer_for(settings: ModelMetric, where: str, cache: ScoreCache | None = None) -> BleurtScorer:
    require_bleurt()
    folder = locate(settings.model, where)
    cache = cache if cache is not None else bleurt_cache()
    digest = remembered_hash(cache, lambda known: content_hash(folder, known))
    return load_scorer(folder, digest, settings.precision, settings.gpus, settings.batch_size, where, cache)


def bleurt_values(name: str, sources: Sequence[str] | None, hypotheses: Sequence[str], references: Sequence[str],
                  settings: ModelMetric, *, where: str | None = None) -> BleurtValues:
    """BLEURT of one system against one reference set (`sources` is not used: BLEURT reads no source)."""
    if len(hypotheses) != len(references) or not hypotheses:
        raise ValueError(f"{name}: needs as many hypotheses as references, at least one")
    scorer = scorer_for(settings, where or settings.where or f"metrics.{name}")
    values = scorer.score(references, hypotheses)
    return BleurtValues(values, sum(values) / len(values), scorer.signature_base)
