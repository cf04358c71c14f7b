"""BLEURT sentence scores exactly as bleurt-pytorch's README computes them, batch by batch, through a cache.

bleurt-pytorch scores a list of (reference, candidate) pairs with `tokenizer(references, candidates,
padding='longest', return_tensors='pt')` then `model(**inputs).logits.flatten()`, the model in eval mode under
`torch.no_grad()`. This module does the same on batches of `batch_size` pairs in input order (truncated to the
model's longest input, which changes nothing for pairs that fit) and stores each batch's scores in the on-disk
cache (`$HARNESS_CACHE/bleurt/scores.sqlite3`, `harness.metrics.neural.cache`) as soon as they are computed,
keyed like COMET's by the model, the batch's digest and the pair's digest: re-scoring or resuming a run recomputes
nothing. Device choice, offline loading, error lines and the scorer memo are every neural metric's
(`harness.metrics.neural.runtime`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.errors import MetricSetupError
from harness.metrics.neural.cache import CachedScorer, ScoreCache, cache_path, item_digest
from harness.metrics.neural.runtime import (
    ScorerKey,
    ScorerMemo,
    device,
    first_line,
    offline,
    out_of_memory,
    quiet,
    require_extra,
)

__all__ = ["EXTRA_MISSING", "require_bleurt", "bleurt_cache", "BleurtScorer", "load_scorer"]

EXTRA_MISSING = "BLEURT needs the optional extra: pip install 'harness[bleurt]' (bleurt-pytorch)"


def require_bleurt() -> None:
    """One line naming the extra when bleurt-pytorch or torch is not installed."""
    require_extra(("bleurt_pytorch", "torch"), EXTRA_MISSING)


def bleurt_cache() -> ScoreCache:
    return ScoreCache(cache_path("bleurt"))


class BleurtScorer(CachedScorer):
    """A loaded BLEURT model and tokenizer; `model_key` names the model and settings in the cache."""

    def __init__(self, model: Any, tokenizer: Any, on: Any, model_key: str, batch_size: int, where: str,
                 cache: ScoreCache | None, signature_base: str) -> None:
        super().__init__(model_key, batch_size, where, cache, signature_base)
        self.model, self.tokenizer, self.device = model, tokenizer, on
        self.lock = threading.Lock()

    def score(self, references: Sequence[str], candidates: Sequence[str]) -> list[float]:
        """Sentence scores of aligned (reference, candidate) pairs, in input order."""
        out: list[float] = []
        for a in range(0, len(references), self.batch_size):
            refs, cands = list(references[a:a + self.batch_size]), list(candidates[a:a + self.batch_size])
            items = [item_digest("", c, r) for r, c in zip(refs, cands, strict=True)]
            out.extend(self.cached_batch(items, self._compute, refs, cands))
        return out

    def _compute(self, refs: list[str], cands: list[str]) -> list[float]:
        import torch

        limit = self.model.config.max_position_embeddings
        with self.lock, torch.no_grad():
            inputs = self.tokenizer(refs, cands, padding="longest", truncation=True, max_length=limit,
                                    return_tensors="pt").to(self.device)
            try:
                return [float(v) for v in self.model(**inputs).logits.flatten().tolist()]
            except (RuntimeError, MemoryError) as exc:
                err = out_of_memory(exc, self.where, self.batch_size)
                if err is None:
                    raise
                raise err from None


def _load(folder: Path, precision: str, on: Any, where: str) -> tuple[Any, Any]:
    """(model in eval mode on `on`, tokenizer) of the checkpoint, offline; one line when it cannot load."""
    offline()
    with quiet(("transformers",)):
        from bleurt_pytorch import BleurtForSequenceClassification, BleurtTokenizer
        try:
            model = BleurtForSequenceClassification.from_pretrained(str(folder), local_files_only=True)
            tokenizer = BleurtTokenizer.from_pretrained(str(folder), local_files_only=True)
        except Exception as exc:  # noqa: BLE001 (anything torch or transformers raise on a bad checkpoint)
            raise MetricSetupError(
                f"{where}: {folder} is not a loadable BLEURT checkpoint: {first_line(exc)}") from None
    model.eval()
    if precision == "fp16":
        model.half()
    return model.to(on), tokenizer


_SCORERS: ScorerMemo[BleurtScorer] = ScorerMemo()


def load_scorer(folder: Path, digest: str, precision: str, gpus: int, batch_size: int, where: str,
                cache: ScoreCache | None) -> BleurtScorer:
    """The process's scorer of a checkpoint with these settings (loaded once)."""
    require_bleurt()
    key = ScorerKey(digest, precision, device(gpus, where), batch_size)

    def make() -> BleurtScorer:
        model, tokenizer = _load(folder, precision, key.device, where)
        return BleurtScorer(model, tokenizer, key.device, key.model_key, batch_size, where, cache,
                            key.signature_base(folder))

    return _SCORERS.get(key, make)
