"""A BLEURT checkpoint on disk (the Hugging Face layout bleurt-pytorch saves): where it is and its content hash.

A checkpoint is a folder with `config.json` (`model_type: bleurt`), the weights (`model.safetensors` or
`pytorch_model.bin`) and the tokenizer's files. The content hash (sha256 of every file in the folder, by name)
goes into the signature and the score cache's keys; it is remembered by (path, size, modification time) in the
cache's database, like a COMET checkpoint's.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.errors import MetricSetupError
from harness.metrics.neural.checkpoint import HashKey, hash_files

__all__ = ["locate", "content_hash", "WEIGHTS"]

WEIGHTS = ("model.safetensors", "pytorch_model.bin")


def locate(path: str | Path, where: str = "model") -> Path:
    """The checkpoint folder at `path`, or a one-line MetricSetupError naming `where` and the path."""
    p = Path(path).expanduser().resolve()
    if not p.exists():
        raise MetricSetupError(f"{where}: no such BLEURT checkpoint folder: {p}")
    if not p.is_dir():
        raise MetricSetupError(f"{where}: {p} is not a BLEURT checkpoint (expected a folder with config.json)")
    config = p / "config.json"
    try:
        meta = json.loads(config.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MetricSetupError(f"{where}: {p} is not a BLEURT checkpoint (no config.json in it)") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise MetricSetupError(f"{where}: {config} cannot be read as JSON: {exc}") from None
    if not isinstance(meta, dict) or meta.get("model_type") != "bleurt":
        kind = meta.get("model_type") if isinstance(meta, dict) else None
        raise MetricSetupError(f"{where}: {p} is not a BLEURT checkpoint (config.json model_type is {kind!r}, "
                               "not 'bleurt')")
    if not any((p / w).is_file() for w in WEIGHTS):
        raise MetricSetupError(f"{where}: {p} is not a BLEURT checkpoint (no {' or '.join(WEIGHTS)} in it)")
    return p


def content_hash(folder: Path, remember: dict[HashKey, str] | None = None) -> str:
    """sha256 (hex) of the folder's files (name, then bytes, in name order); `remember` maps known hashes."""
    files = sorted(f for f in folder.iterdir() if f.is_file())
    stats = [f.stat() for f in files]
    key = (str(folder), sum(s.st_size for s in stats), max((s.st_mtime_ns for s in stats), default=0))
    return hash_files(files, key, remember, names=True)
