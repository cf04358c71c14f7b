"""A BLEURT checkpoint on disk (the Hugging Face layout bleurt-pytorch saves): where it is and its content hash.

A checkpoint is a folder with `config.json` (`model_type: bleurt`), the weights (`model.safetensors` or
`pytorch_model.bin`) and the tokenizer's files. The content hash (sha256 of every file in the folder, by name)
goes into the signature and the score cache's keys; it is remembered by (path, size, modification time) in the
cache's database, like a COMET checkpoint's.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from harness.errors import MetricSetupError

__all__ = ["locate", "content_hash", "WEIGHTS"]

WEIGHTS = ("model.safetensors", "pytorch_model.bin")
CHUNK = 1 << 24


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


def content_hash(folder: Path, remember: dict[tuple[str, int, int], str] | None = None) -> str:
    """sha256 (hex) of the folder's files (name, then bytes, in name order); `remember` maps known hashes."""
    files = sorted(f for f in folder.iterdir() if f.is_file())
    stats = [f.stat() for f in files]
    key = (str(folder), sum(s.st_size for s in stats), max((s.st_mtime_ns for s in stats), default=0))
    if remember is not None and key in remember:
        return remember[key]
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode("utf-8") + b"\0")
        with open(f, "rb") as fh:
            while block := fh.read(CHUNK):
                h.update(block)
    digest = h.hexdigest()
    if remember is not None:
        remember[key] = digest
    return digest
