"""A COMET checkpoint on disk: where its files are, what class it is, and its content hash (no torch here).

A checkpoint is named by its folder (the Hugging Face layout: `checkpoints/model.ckpt` beside `hparams.yaml`) or
by the `.ckpt` file. The content hash (sha256 of `model.ckpt` and `hparams.yaml`) goes into the metric's signature
and the score cache's keys; it is remembered in the score cache's database by (path, size, modification time) of
the two files (`harness.metrics.neural.checkpoint`) and recomputed only when they change.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError, MetricSetupError
from harness.metrics.neural.checkpoint import HashKey, hash_files

__all__ = ["Checkpoint", "locate", "content_hash"]


@dataclass(frozen=True)
class Checkpoint:
    """A located COMET checkpoint: the `.ckpt` file, its `hparams.yaml` and the model class it names."""

    ckpt: Path
    hparams: Path
    class_identifier: str

    @property
    def folder(self) -> Path:
        return self.hparams.parent


def locate(path: str | Path, where: str = "model") -> Checkpoint:
    """The checkpoint at `path` (folder or `.ckpt`), or a one-line MetricSetupError naming `where` and the path."""
    from harness.yamlio import read_yaml

    p = Path(path).expanduser().resolve()
    if not p.exists():
        raise MetricSetupError(f"{where}: no such COMET checkpoint folder or file: {p}")
    ckpt = p / "checkpoints" / "model.ckpt" if p.is_dir() else p
    if not ckpt.is_file():
        raise MetricSetupError(f"{where}: {p} is not a COMET checkpoint (no checkpoints/model.ckpt in it)")
    hparams = ckpt.parents[1] / "hparams.yaml"  # where comet.load_from_checkpoint looks for it
    if not hparams.is_file():
        raise MetricSetupError(f"{where}: {p} is not a COMET checkpoint (no hparams.yaml beside checkpoints/)")
    try:
        meta = read_yaml(hparams)
    except HarnessError as exc:
        raise MetricSetupError(f"{where}: {exc}") from None
    ident = meta.get("class_identifier") if isinstance(meta, dict) else None
    if not isinstance(ident, str):
        raise MetricSetupError(f"{where}: {hparams} is not a COMET hparams.yaml (no class_identifier)")
    return Checkpoint(ckpt, hparams, ident)


def content_hash(ckpt: Checkpoint, remember: dict[HashKey, str] | None = None) -> str:
    """sha256 (hex) of `model.ckpt` then `hparams.yaml`; `remember` maps (path, size, mtime_ns) to known hashes."""
    st, hs = ckpt.ckpt.stat(), ckpt.hparams.stat()
    key = (f"{ckpt.ckpt}|{ckpt.hparams}", st.st_size + hs.st_size, st.st_mtime_ns + hs.st_mtime_ns)
    return hash_files((ckpt.ckpt, ckpt.hparams), key, remember)
