"""Loading a COMET checkpoint for scoring: the optional extra, offline loading, device, precision, errors.

Offline by default: `HF_HUB_OFFLINE=1` is set (unless the environment says otherwise) before comet, transformers
or huggingface_hub are imported, and the checkpoint is loaded with `local_files_only`, so nothing is downloaded at
run time. The model is put in eval mode and, for `precision: fp16`, in half precision — what `comet-score` does
(it always halves). The device choice, offline settings and error lines are every neural metric's
(`harness.metrics.neural.runtime`). A loaded model is kept for the life of the process (one per checkpoint,
precision and device), with a lock so that the worker threads of `harness evaluate` take turns on it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import HarnessError, MetricSetupError
from harness.metrics.comet.checkpoint import Checkpoint
from harness.metrics.neural.runtime import (
    device,
    first_line,
    offline,
    out_of_memory,
    package_version,
    quiet,
    require_extra,
)

__all__ = ["EXTRA_MISSING", "require_comet", "LoadedModel", "load_model", "comet_version", "out_of_memory"]

EXTRA_MISSING = "COMET metrics need the optional extra: pip install 'harness[comet]'"
_MODELS: dict[tuple[str, str, str], LoadedModel] = {}
_MODELS_LOCK = threading.Lock()


def require_comet() -> None:
    """One line naming the extra when unbabel-comet or torch is not installed."""
    require_extra(("comet", "torch"), EXTRA_MISSING)


def comet_version() -> str:
    return package_version("unbabel-comet", EXTRA_MISSING)


@dataclass
class LoadedModel:
    """A COMET model ready for inference, the device it is on, and the lock its users take turns with."""

    model: Any
    device: Any
    precision: str
    lock: threading.Lock


def _load(ckpt: Checkpoint, where: str) -> Any:
    with quiet(("pytorch_lightning", "lightning", "lightning_fabric", "comet", "transformers")):
        from comet import load_from_checkpoint
    try:
        return load_from_checkpoint(str(ckpt.ckpt), local_files_only=True)
    except Exception as exc:  # noqa: BLE001 (anything torch, transformers or comet raise on a bad checkpoint)
        first = first_line(exc)
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
    offline()
    import torch

    torch.set_float32_matmul_precision("high")  # what comet-score sets when it is imported
    on = device(gpus, where)
    key = (digest, precision, str(on))
    with _MODELS_LOCK:
        if key not in _MODELS:
            model = _load(ckpt, where)
            model.eval()
            if precision == "fp16":
                model.half()
            try:
                model.to(on)
            except RuntimeError as exc:
                raise out_of_memory(exc, where, None) or exc from None
            _MODELS[key] = LoadedModel(model, on, precision, threading.Lock())
        return _MODELS[key]
