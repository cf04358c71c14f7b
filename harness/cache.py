"""The harness's one cache folder on this host: `$HARNESS_CACHE`, else `~/.cache/harness`.

Everything the harness keeps between runs lives below it: the wheelhouse, the base image's root filesystem,
WordNet for METEOR, word alignments, the compiled scorer library.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_root", "cache_dir"]


def cache_root() -> Path:
    """The cache folder's path (not created): `$HARNESS_CACHE`, else `~/.cache/harness`."""
    return Path(os.environ.get("HARNESS_CACHE") or Path.home() / ".cache" / "harness")


def cache_dir() -> Path:
    """The cache folder, created if needed."""
    d = cache_root()
    d.mkdir(parents=True, exist_ok=True)
    return d
