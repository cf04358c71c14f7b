"""COMET sentence scores exactly as `comet-score` computes them, faster across systems.

comet-score (unbabel-comet 2.2.7) sorts a system's samples by source length (`numpy.argsort` of the character
counts), cuts the sorted list into batches of `batch_size`, and for each batch tokenizes src, mt and ref with
padding to the batch's longest, then runs the model. This module makes the same batches and runs the same model
code on them (`prepare_sample` then `predict_step`, in inference mode on the model's device), so every sentence
score is the same float. The system score is comet-score's: the plain sum of the scores in batch order over n.

Faster across systems: the batches depend on the sources alone, so for COMET's regression models (the estimator
over separate src, mt and ref sentence embeddings, e.g. wmt22-comet-da) the src and ref embeddings of a batch
are computed once per process and reused for every run on the same dataset; only the hypotheses are encoded per
system. XCOMET encodes mt, src and ref together, so it shares nothing but the score cache. Every batch's scores
go to the on-disk cache (`harness.metrics.neural.cache`) as soon as they are computed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from harness.metrics.comet.runtime import LoadedModel
from harness.metrics.neural.cache import CachedScorer, ScoreCache, item_digest
from harness.metrics.neural.runtime import out_of_memory

__all__ = ["batch_order", "batches", "system_score", "CometScorer"]

#: src/ref batch embeddings kept per process (a batch of 16 wmt22 embeddings in fp16 is 32 KiB)
EMBEDDING_MEMO_BATCHES = 1 << 16


def batch_order(sources: Sequence[str]) -> list[int]:
    """comet-score's order of the samples: `numpy.argsort` of the source lengths in characters."""
    import numpy as np

    return np.argsort([len(s) for s in sources]).tolist()


def batches(sources: Sequence[str], batch_size: int) -> list[list[int]]:
    """comet-score's batches: sample indices, `batch_size` at a time in `batch_order`."""
    order = batch_order(sources)
    return [order[a : a + batch_size] for a in range(0, len(order), batch_size)]


def system_score(values: Sequence[float], sources: Sequence[str]) -> float:
    """comet-score's system score: the sum of the sentence scores in batch order, over their number."""
    return sum(values[i] for i in batch_order(sources)) / len(values)


class CometScorer(CachedScorer):
    """Scores (src, mt, ref) triples with one loaded model; `model_key` names the model and settings in the cache."""

    def __init__(self, loaded: LoadedModel, model_key: str, batch_size: int, where: str,
                 cache: ScoreCache | None, signature_base: str = "") -> None:
        super().__init__(model_key, batch_size, where, cache, signature_base)
        self.loaded = loaded
        self._memo: dict[str, Any] = {}

    @property
    def shares_embeddings(self) -> bool:
        """Whether src and ref embeddings are reused across systems (COMET's regression estimator)."""
        from comet.models import RegressionMetric

        model = self.loaded.model
        return type(model) is RegressionMetric and not getattr(model, "use_context", False)

    def score(self, sources: Sequence[str], hypotheses: Sequence[str], references: Sequence[str]) -> list[float]:
        """Sentence scores of aligned triples, in input order (stripped as comet-score strips its input lines)."""
        src = [s.strip() for s in sources]
        mt = [s.strip() for s in hypotheses]
        ref = [s.strip() for s in references]
        out: list[float] = [0.0] * len(src)
        for idx in batches(src, self.batch_size):
            items = [item_digest(src[i], mt[i], ref[i]) for i in idx]
            values = self.cached_batch(items, self._compute, [src[i] for i in idx], [mt[i] for i in idx],
                                       [ref[i] for i in idx])
            for i, v in zip(idx, values, strict=True):
                out[i] = v
        return out

    def _compute(self, src: list[str], mt: list[str], ref: list[str]) -> list[float]:
        import torch

        try:
            with self.loaded.lock, torch.inference_mode():
                if self.shares_embeddings:
                    return self._regression(src, mt, ref)
                return self._generic(src, mt, ref)
        except (RuntimeError, MemoryError) as exc:
            err = out_of_memory(exc, self.where, self.batch_size)
            if err is None:
                raise
            raise err from None

    def _generic(self, src: list[str], mt: list[str], ref: list[str]) -> list[float]:
        """What Lightning's predict loop does for one batch: prepare, move to the device, `predict_step`."""
        from pytorch_lightning.utilities import move_data_to_device

        model = self.loaded.model
        model.on_predict_start()
        samples = [{"src": s, "mt": m, "ref": r} for s, m, r in zip(src, mt, ref, strict=True)]
        batch = move_data_to_device(model.prepare_for_inference(samples), self.loaded.device)
        return model.predict_step(batch).scores.tolist()

    def _embed(self, texts: list[str], shared: bool) -> Any:
        """Sentence embeddings of one batch of texts, as RegressionMetric.forward computes them."""
        key = hashlib.sha256("\0".join(texts).encode("utf-8")).hexdigest() if shared else ""
        if shared and key in self._memo:
            return self._memo[key]
        model = self.loaded.model
        inputs = model.encoder.prepare_sample(texts)
        emb = model.get_sentence_embedding(inputs["input_ids"].to(self.loaded.device),
                                           inputs["attention_mask"].to(self.loaded.device))
        if shared:
            if len(self._memo) >= EMBEDDING_MEMO_BATCHES:
                self._memo.clear()
            self._memo[key] = emb
        return emb

    def _regression(self, src: list[str], mt: list[str], ref: list[str]) -> list[float]:
        model = self.loaded.model
        model.on_predict_start()
        src_emb, ref_emb = self._embed(src, True), self._embed(ref, True)
        return model.estimate(src_emb, self._embed(mt, False), ref_emb).score.view(-1).tolist()
