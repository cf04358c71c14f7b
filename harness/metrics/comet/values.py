"""COMET and XCOMET as harness metrics: sentence scores, system score, signature and bootstrap interval.

`comet_values` is the registry's function for both names: the name only decides which checkpoint the settings
name (a COMET estimator, or an XCOMET model). The signature names everything the values depend on: the
checkpoint's path and content hash, its model class, precision, batch size, device, the number of references,
the bootstrap and comet's version, e.g. `model:/models/xcomet-xl|sha256:3f1c...|class:xcomet_metric|
precision:fp16|batch:16|device:cpu|nrefs:1|bs:1000|seed:12345|comet:2.2.7`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.config import ModelMetric
from harness.metrics.comet.cache import ScoreCache
from harness.metrics.comet.checkpoint import content_hash, locate
from harness.metrics.comet.runtime import comet_version, load_model, require_comet
from harness.metrics.comet.scorer import CometScorer, system_score

__all__ = ["CometValues", "comet_values", "scorer_for", "comet_record", "signature"]

_SCORERS: dict[tuple[str, str, str, int], CometScorer] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class CometValues:
    """One system's result: sentence scores in input order, comet-score's system score, the model's signature part."""

    values: list[float]
    score: float
    model_signature: str

    @property
    def signature(self) -> str:
        return signature(self.model_signature)

    def record(self, counts: Any = None, seed: int = 12345) -> dict[str, Any]:
        return comet_record(self, counts, seed)


def scorer_for(settings: ModelMetric, where: str, cache: ScoreCache | None = None) -> CometScorer:
    """The process's scorer of these settings (one per checkpoint hash, precision, device and batch size)."""
    require_comet()
    ckpt = locate(settings.model, where)
    cache = cache if cache is not None else ScoreCache()
    known = cache.hashes()
    digest = content_hash(ckpt, known)
    for key, value in known.items():
        if value == digest:
            cache.remember_hash(key, value)
    loaded = load_model(ckpt, digest, settings.precision, settings.gpus, where)
    scorer_key = (digest, settings.precision, str(loaded.device), settings.batch_size)
    with _LOCK:
        if scorer_key not in _SCORERS:
            base = (f"model:{ckpt.folder}|sha256:{digest[:16]}|class:{ckpt.class_identifier}"
                    f"|precision:{settings.precision}|batch:{settings.batch_size}|device:{loaded.device.type}")
            _SCORERS[scorer_key] = CometScorer(loaded, "|".join(map(str, scorer_key)), settings.batch_size, where,
                                               cache, base)
        return _SCORERS[scorer_key]


def signature(model_signature: str, nrefs: int = 1, bootstrap: int | None = None, seed: int | None = None) -> str:
    """The metric's signature: the model part, references, bootstrap and comet's version."""
    bs = f"|bs:{bootstrap}|seed:{seed}" if bootstrap else ""
    return f"{model_signature}|nrefs:{nrefs}{bs}|comet:{comet_version()}"


def comet_values(name: str, sources: Sequence[str], hypotheses: Sequence[str], references: Sequence[str],
                 settings: ModelMetric, *, where: str | None = None) -> CometValues:
    """`name` (COMET or XCOMET) of one system: aligned sources, hypotheses and references of one reference set."""
    if not (len(sources) == len(hypotheses) == len(references)) or not sources:
        raise ValueError(f"{name}: needs as many sources as hypotheses and references, at least one")
    scorer = scorer_for(settings, where or settings.where or f"metrics.{name}")
    values = scorer.score(sources, hypotheses, references)
    return CometValues(values, system_score(values, [s.strip() for s in sources]), scorer.signature_base)


def comet_record(result: CometValues, counts: Any = None, seed: int = 12345) -> dict[str, Any]:
    """`{"score", "ci95", "signature"}`. The interval takes sacrebleu's percentile rule over the same resamples
    (`counts`) as every other metric, of the resampled mean sentence score."""
    import numpy as np

    from harness.metrics.quality import interval

    ci = None
    if counts is not None:
        means = (counts @ np.asarray(result.values, dtype=np.float64)) / len(result.values)
        ci = interval(means.tolist())
    bootstrap = counts.shape[0] if ci is not None else None
    return {"score": result.score, "ci95": ci, "signature": signature(result.model_signature, 1, bootstrap, seed)}
