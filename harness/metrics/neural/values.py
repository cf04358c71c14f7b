"""A neural metric's result for one system: sentence scores, system score, signature and bootstrap interval.

The signature is the model part (checkpoint path and hash, precision, batch size, device, see
`ScorerKey.signature_base`), the number of references, the bootstrap and the scoring package's version, e.g.
`model:/models/xcomet-xl|sha256:3f1c...|class:xcomet_metric|precision:fp16|batch:16|device:cpu|nrefs:1|bs:1000|
seed:12345|comet:2.2.7`. A metric's subclass names the package (`tool`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["NeuralValues", "metric_signature"]


def metric_signature(model_signature: str, tool: str, nrefs: int = 1, bootstrap: int | None = None,
                     seed: int | None = None) -> str:
    """The metric's signature: the model part, references, bootstrap and `tool` (`package:version`)."""
    bs = f"|bs:{bootstrap}|seed:{seed}" if bootstrap else ""
    return f"{model_signature}|nrefs:{nrefs}{bs}|{tool}"


@dataclass(frozen=True)
class NeuralValues:
    """One system's result: sentence scores in input order, the system score, the model's signature part."""

    values: list[float]
    score: float
    model_signature: str

    def tool(self) -> str:
        """`package:version` of what computed the values (the signature's last part)."""
        raise NotImplementedError

    @property
    def signature(self) -> str:
        return metric_signature(self.model_signature, self.tool())

    def record(self, counts: Any = None, seed: int = 12345) -> dict[str, Any]:
        """`{"score", "ci95", "signature"}`. The interval takes sacrebleu's percentile rule over the same resamples
        (`counts`) as every other metric, of the resampled mean sentence score."""
        import numpy as np

        from harness.metrics.quality import interval

        ci = None
        if counts is not None:
            means = (counts @ np.asarray(self.values, dtype=np.float64)) / len(self.values)
            ci = interval(means.tolist())
        bootstrap = counts.shape[0] if ci is not None else None
        return {"score": self.score, "ci95": ci,
                "signature": metric_signature(self.model_signature, self.tool(), 1, bootstrap, seed)}
