"""BLEURT sentence scores exactly as bleurt-pytorch's README computes them, batch by batch, through a cache.

bleurt-pytorch scores a list of (reference, candidate) pairs with `tokenizer(references, candidates,
padding='longest', return_tensors='pt')` then `model(**inputs).logits.flatten()`, the model in eval mode under
`torch.no_grad()`. This module does the same on batches of `batch_size` pairs in input order (truncated to the
model's longest input, which changes nothing for pairs that fit) and stores each batch's scores in the on-disk
cache (`$HARNESS_CACHE/bleurt/scores.sqlite3`) as soon as they are computed, keyed like COMET's by the model,
the batch's digest and the pair's digest: re-scoring or resuming a run recomputes nothing.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.cache import cache_root
from harness.errors import MetricSetupError
from harness.metrics.comet.cache import ScoreCache, batch_digest, item_digest

__all__ = ["EXTRA_MISSING", "require_bleurt", "bleurt_cache", "BleurtScorer", "load_scorer"]

EXTRA_MISSING = "BLEURT needs the optional extra: pip install 'harness[bleurt]' (bleurt-pytorch)"
_SCORERS: dict[tuple[str, str, str, int], BleurtScorer] = {}
_LOCK = threading.Lock()


def require_bleurt() -> None:
    """One line naming the extra when bleurt-pytorch or torch is not installed."""
    if importlib.util.find_spec("bleurt_pytorch") is None or importlib.util.find_spec("torch") is None:
        raise MetricSetupError(EXTRA_MISSING)


def bleurt_cache() -> ScoreCache:
    return ScoreCache(cache_root() / "bleurt" / "scores.sqlite3")


@dataclass
class BleurtScorer:
    """A loaded BLEURT model and tokenizer; `model_key` names the model and settings in the cache."""

    model: Any
    tokenizer: Any
    device: Any
    model_key: str
    batch_size: int
    where: str
    cache: ScoreCache | None
    signature_base: str
    lock: threading.Lock
    computed: int = 0  # sentences scored by the model (not taken from the cache), for tests

    def score(self, references: Sequence[str], candidates: Sequence[str]) -> list[float]:
        """Sentence scores of aligned (reference, candidate) pairs, in input order."""
        out: list[float] = []
        for a in range(0, len(references), self.batch_size):
            refs, cands = list(references[a:a + self.batch_size]), list(candidates[a:a + self.batch_size])
            items = [item_digest("", c, r) for r, c in zip(refs, cands, strict=True)]
            digest = batch_digest(items)
            cached = self.cache.get(self.model_key, digest) if self.cache is not None else {}
            if all(item in cached for item in items):
                out.extend(cached[item] for item in items)
                continue
            values = self._compute(refs, cands)
            self.computed += len(values)
            if self.cache is not None:
                self.cache.put(self.model_key, digest, zip(items, values, strict=True))
            out.extend(values)
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
                if "out of memory" in str(exc).lower() or isinstance(exc, MemoryError):
                    raise MetricSetupError(f"{self.where}: out of memory at batch_size {self.batch_size}; try "
                                           f"batch_size: {max(1, self.batch_size // 2)}") from None
                raise


def _device(gpus: int, where: str) -> Any:
    import torch

    if gpus == 0:
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise MetricSetupError(f"{where}: gpus: 1 asks for a GPU but torch sees none (CUDA unavailable); "
                               "use gpus: 0 for the CPU")
    return torch.device("cuda", 0)


def _load(folder: Path, precision: str, device: Any, where: str) -> tuple[Any, Any]:
    """(model in eval mode on `device`, tokenizer) of the checkpoint, offline; one line when it cannot load."""
    import logging
    import warnings

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", os.environ["HF_HUB_OFFLINE"])
    logging.getLogger("transformers").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from bleurt_pytorch import BleurtForSequenceClassification, BleurtTokenizer
        try:
            model = BleurtForSequenceClassification.from_pretrained(str(folder), local_files_only=True)
            tokenizer = BleurtTokenizer.from_pretrained(str(folder), local_files_only=True)
        except Exception as exc:  # noqa: BLE001 (anything torch or transformers raise on a bad checkpoint)
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise MetricSetupError(f"{where}: {folder} is not a loadable BLEURT checkpoint: {first}") from None
    model.eval()
    if precision == "fp16":
        model.half()
    return model.to(device), tokenizer


def load_scorer(folder: Path, digest: str, precision: str, gpus: int, batch_size: int, where: str,
                cache: ScoreCache | None) -> BleurtScorer:
    """The process's scorer of a checkpoint with these settings (loaded once)."""
    require_bleurt()
    device = _device(gpus, where)
    key = (digest, precision, str(device), batch_size)
    with _LOCK:
        if key not in _SCORERS:
            model, tokenizer = _load(folder, precision, device, where)
            base = (f"model:{folder}|sha256:{digest[:16]}|precision:{precision}|batch:{batch_size}"
                    f"|device:{device.type}")
            _SCORERS[key] = BleurtScorer(model, tokenizer, device, "|".join(map(str, key)), batch_size, where,
                                         cache, base, threading.Lock())
        return _SCORERS[key]
