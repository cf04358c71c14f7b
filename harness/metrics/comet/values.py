"""COMET and XCOMET as harness metrics: sentence scores, system score, signature and bootstrap interval.

`comet_values` is the registry's function for both names: the name only decides which checkpoint the settings
name (a COMET estimator, or an XCOMET model). The signature names everything the values depend on: the
checkpoint's path and content hash, its model class, precision, batch size, device, the number of references,
the bootstrap and comet's version, e.g. `model:/models/xcomet-xl|sha256:3f1c...|class:xcomet_metric|
precision:fp16|batch:16|device:cpu|nrefs:1|bs:1000|seed:12345|comet:2.2.7`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.config import ModelMetric
from harness.metrics.comet.checkpoint import content_hash, locate
from harness.metrics.comet.runtime import comet_version, load_model, require_comet
from harness.metrics.comet.scorer import CometScorer, system_score
from harness.metrics.neural.cache import ScoreCache
from harness.metrics.neural.checkpoint import remembered_hash
from harness.metrics.neural.runtime import ScorerKey, ScorerMemo
from harness.metrics.neural.values import NeuralValues

__all__ = ["CometValues", "comet_values", "scorer_for"]

_SCORERS: ScorerMemo[CometScorer] = ScorerMemo()


@dataclass(frozen=True)
class CometValues(NeuralValues):
    """One system's result: sentence scores in input order, comet-score's system score, the model's signature part."""

    def tool(self) -> str:
        return f"comet:{comet_version()}"


def scorer_for(settings: ModelMetric, where: str, cache: ScoreCache | None = None) -> CometScorer:
    """The process's scorer of these settings (one per checkpoint hash, precision, device and batch size)."""
    require_comet()
    ckpt = locate(settings.model, where)
    cache = cache if cache is not None else ScoreCache()
    digest = remembered_hash(cache, lambda known: content_hash(ckpt, known))
    loaded = load_model(ckpt, digest, settings.precision, settings.gpus, where)
    key = ScorerKey(digest, settings.precision, loaded.device, settings.batch_size)
    return _SCORERS.get(key, lambda: CometScorer(loaded, key.model_key, settings.batch_size, where, cache,
                                                 key.signature_base(ckpt.folder, ckpt.class_identifier)))


def comet_values(name: str, sources: Sequence[str], hypotheses: Sequence[str], references: Sequence[str],
                 settings: ModelMetric, *, where: str | None = None) -> CometValues:
    """`name` (COMET or XCOMET) of one system: aligned sources, hypotheses and references of one reference set."""
    if not (len(sources) == len(hypotheses) == len(references)) or not sources:
        raise ValueError(f"{name}: needs as many sources as hypotheses and references, at least one")
    scorer = scorer_for(settings, where or settings.where or f"metrics.{name}")
    values = scorer.score(sources, hypotheses, references)
    return CometValues(values, system_score(values, [s.strip() for s in sources]), scorer.signature_base)
