"""A neural checkpoint's content hash, remembered in the score cache's database (no torch here).

The content hash goes into the metric's signature and the score cache's keys. Hashing a 14 GB XCOMET-XL checkpoint
takes about a minute, so the hash is remembered by (path, size, modification time) — what each metric takes as
its files' key — and recomputed only when the files change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

from harness.metrics.neural.cache import ScoreCache

__all__ = ["CHUNK", "HashKey", "hash_files", "remembered_hash"]

CHUNK = 1 << 24
#: what a hash is remembered by: (path, size, modification time in ns), as each metric sums them up
HashKey = tuple[str, int, int]


def hash_files(files: Sequence[Path], key: HashKey, remember: dict[HashKey, str] | None = None, *,
               names: bool = False) -> str:
    """sha256 (hex) of `files` in order (each file's name and a NUL first, with `names`); `remember` maps known
    hashes by `key` and learns a new one."""
    if remember is not None and key in remember:
        return remember[key]
    h = hashlib.sha256()
    for f in files:
        if names:
            h.update(f.name.encode("utf-8") + b"\0")
        with open(f, "rb") as fh:
            while block := fh.read(CHUNK):
                h.update(block)
    digest = h.hexdigest()
    if remember is not None:
        remember[key] = digest
    return digest


def remembered_hash(cache: ScoreCache, content_hash: Callable[[dict[HashKey, str]], str]) -> str:
    """`content_hash(known)` of a checkpoint, the hashes `cache` remembers as `known`; the result is remembered."""
    known = cache.hashes()
    digest = content_hash(known)
    for key, value in known.items():
        if value == digest:
            cache.remember_hash(key, value)
    return digest
