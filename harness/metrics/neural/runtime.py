"""Running a neural checkpoint: the optional extra, offline loading, device choice, errors, the scorer memo.

Offline by default: `HF_HUB_OFFLINE=1` is set (unless the environment says otherwise) before the model's library,
transformers or huggingface_hub are imported, so nothing is downloaded at run time. `gpus: 0` is the CPU,
`gpus: 1` the GPU given to scoring (CUDA device 0 of what the process sees). A scorer is kept for the life of the
process, one per checkpoint hash, precision, device and batch size (`ScorerMemo`, keyed by a `ScorerKey`).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from harness.errors import MetricSetupError

__all__ = ["require_extra", "package_version", "offline", "quiet", "device", "first_line", "out_of_memory",
           "ScorerKey", "ScorerMemo"]

S = TypeVar("S")


def require_extra(modules: Iterable[str], message: str) -> None:
    """`message` (one line naming the extra) when any of `modules` is not installed."""
    if any(importlib.util.find_spec(m) is None for m in modules):
        raise MetricSetupError(message)


def package_version(distribution: str, message: str) -> str:
    """The installed version of `distribution`, or `message` (the missing extra) when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        raise MetricSetupError(message) from None


def offline() -> None:
    """Nothing is downloaded at run time unless the environment says otherwise."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", os.environ["HF_HUB_OFFLINE"])


@contextmanager
def quiet(loggers: Iterable[str]) -> Iterator[None]:
    """`loggers` at ERROR from now on, and no warnings inside the block (the model libraries' import chatter)."""
    for name in loggers:
        logging.getLogger(name).setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def device(gpus: int, where: str) -> Any:
    """The torch device of `gpus: 0` (CPU) or `gpus: 1` (CUDA device 0); one line when there is no GPU."""
    import torch

    if gpus == 0:
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise MetricSetupError(f"{where}: gpus: 1 asks for a GPU but torch sees none (CUDA unavailable); "
                               "use gpus: 0 for the CPU")
    return torch.device("cuda", 0)


def first_line(exc: BaseException) -> str:
    """The first line of `exc`'s message, or its type's name when it has none."""
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def out_of_memory(exc: BaseException, where: str, batch_size: int | None) -> MetricSetupError | None:
    """A one-line error for an out-of-memory `exc` (suggesting a smaller batch size), else None."""
    text = str(exc).lower()
    if not (isinstance(exc, MemoryError) or "out of memory" in text or "can't allocate memory" in text
            or type(exc).__name__ == "OutOfMemoryError"):
        return None
    if batch_size is None:
        return MetricSetupError(f"{where}: out of memory loading the model; score on a larger device or with gpus: 0")
    smaller = max(1, batch_size // 2)
    return MetricSetupError(f"{where}: out of memory at batch_size {batch_size}; try batch_size: {smaller}")


@dataclass(frozen=True)
class ScorerKey:
    """What a loaded scorer's values depend on besides the texts: checkpoint hash, precision, device, batch size."""

    digest: str
    precision: str
    device: Any
    batch_size: int

    @property
    def memo(self) -> tuple[str, str, str, int]:
        return (self.digest, self.precision, str(self.device), self.batch_size)

    @property
    def model_key(self) -> str:
        """The model part of the score cache's keys, e.g. `3f1c...|fp16|cpu|16`."""
        return "|".join(map(str, self.memo))

    def signature_base(self, folder: Path, model_class: str | None = None) -> str:
        """The model part of the metric's signature: `model:PATH|sha256:…|[class:…|]precision:…|batch:…|device:…`."""
        kind = f"|class:{model_class}" if model_class is not None else ""
        return (f"model:{folder}|sha256:{self.digest[:16]}{kind}|precision:{self.precision}"
                f"|batch:{self.batch_size}|device:{self.device.type}")


class ScorerMemo(Generic[S]):
    """The process's scorers by `ScorerKey`, each made once (under a lock: worker threads share them)."""

    def __init__(self) -> None:
        self._scorers: dict[tuple[str, str, str, int], S] = {}
        self._lock = threading.Lock()

    def get(self, key: ScorerKey, make: Callable[[], S]) -> S:
        with self._lock:
            if key.memo not in self._scorers:
                self._scorers[key.memo] = make()
            return self._scorers[key.memo]
