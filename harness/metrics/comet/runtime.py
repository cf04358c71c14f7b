"""Loading a COMET checkpoint for scoring: the optional extra, offline loading, device, precision, errors.

Offline by default: `HF_HUB_OFFLINE=1` is set (unless the environment says otherwise) before comet, transformers
or huggingface_hub are imported, and the checkpoint is loaded with `local_files_only`, so nothing is downloaded at
run time. The model is put in eval mode and, for `precision: fp16`, in half precision — what `comet-score` does
(it always halves). `gpus: 1` puts it on the GPU given to scoring (CUDA device 0 of what the process sees).
A loaded model is kept for the life of the process (one per checkpoint, precision and device), with a lock so
that the worker threads of `harness evaluate` take turns on it.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import HarnessError, MetricSetupError
from harness.metrics.comet.checkpoint import Checkpoint

__all__ = ["EXTRA_MISSING", "require_comet", "LoadedModel", "load_model", "comet_version", "out_of_memory"]

EXTRA_MISSING = "COMET metrics need the optional extra: pip install 'harness[comet]'"
_MODELS: dict[tuple[str, str, str], LoadedModel] = {}
_MODELS_LOCK = threading.Lock()


def require_comet() -> None:
    """One line naming the extra when unbabel-comet or torch is not installed."""
    if importlib.util.find_spec("comet") is None or importlib.util.find_spec("torch") is None:
        raise MetricSetupError(EXTRA_MISSING)


def comet_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("unbabel-comet")
    except PackageNotFoundError:
        raise MetricSetupError(EXTRA_MISSING) from None


@dataclass
class LoadedModel:
    """A COMET model ready for inference, the device it is on, and the lock its users take turns with."""

    model: Any
    device: Any
    precision: str
    lock: threading.Lock


def _device(gpus: int, where: str) -> Any:
    import torch

    if gpus == 0:
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise MetricSetupError(f"{where}: gpus: 1 asks for a GPU but torch sees none (CUDA unavailable); "
                           "use gpus: 0 for the CPU")
    return torch.device("cuda", 0)


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", os.environ["HF_HUB_OFFLINE"])


def _load(ckpt: Checkpoint, where: str) -> Any:
    import logging
    import warnings

    for name in ("pytorch_lightning", "lightning", "lightning_fabric", "comet", "transformers"):
        logging.getLogger(name).setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from comet import load_from_checkpoint
    try:
        return load_from_checkpoint(str(ckpt.ckpt), local_files_only=True)
    except Exception as exc:  # noqa: BLE001 (anything torch, transformers or comet raise on a bad checkpoint)
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        encoder = _missing_encoder(ckpt)
        if encoder is not None:
            raise MetricSetupError(
                f"{where}: {ckpt.folder}: its encoder {encoder!r} (hparams.yaml pretrained_model) is not on this "
                "machine and nothing is downloaded at run time (HF_HUB_OFFLINE); fetch it once, see the README "
                f"({type(exc).__name__}: {first})") from None
        raise MetricSetupError(f"{where}: {ckpt.ckpt} is not a loadable COMET checkpoint: {first}") from None


def _missing_encoder(ckpt: Checkpoint) -> str | None:
    """The encoder the checkpoint names (`pretrained_model`) when it is neither a folder nor in the hub cache."""
    from huggingface_hub import try_to_load_from_cache

    from harness.yamlio import read_yaml

    try:
        encoder = (read_yaml(ckpt.hparams) or {}).get("pretrained_model")
    except HarnessError:
        return None
    if not isinstance(encoder, str) or Path(encoder).is_dir():
        return None
    try:
        cached = try_to_load_from_cache(encoder, "config.json")
    except Exception:  # noqa: BLE001 (a name that is not a repository id)
        cached = None
    return None if isinstance(cached, str) else encoder


def load_model(ckpt: Checkpoint, digest: str, precision: str, gpus: int, where: str) -> LoadedModel:
    """The model of `ckpt` in `precision` on the CPU (`gpus: 0`) or the GPU (`gpus: 1`), loaded once a process."""
    require_comet()
    _offline()
    import torch

    torch.set_float32_matmul_precision("high")  # what comet-score sets when it is imported
    device = _device(gpus, where)
    key = (digest, precision, str(device))
    with _MODELS_LOCK:
        if key not in _MODELS:
            model = _load(ckpt, where)
            model.eval()
            if precision == "fp16":
                model.half()
            try:
                model.to(device)
            except RuntimeError as exc:
                raise out_of_memory(exc, where, None) or exc from None
            _MODELS[key] = LoadedModel(model, device, precision, threading.Lock())
        return _MODELS[key]


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
