"""The on-disk cache of neural sentence scores (SQLite, one database a metric family: `$HARNESS_CACHE/comet/`,
`$HARNESS_CACHE/bleurt/`; default `~/.cache/harness`).

A sentence score is stored under the model key (content hash, precision, device, batch size), the digest of its
(src, mt, ref) (BLEURT's: ("", candidate, reference)) and the digest of the batch it was scored in. The batch is
part of the key because comet-score's values depend on it in the last bits (the padding of a batch changes the
floating-point work: batch 8 instead of 16 changes 2 of 40 fp16 scores by 3e-5), and the harness promises
comet-score's values, not merely close ones. A run's batches are fixed by its inputs, so resuming, re-scoring or
rendering a run never recomputes a sentence. Each batch is committed as soon as it is scored: interrupted scoring
loses at most the batch in flight. The database also remembers checkpoint content hashes. `CachedScorer` is the
step every neural scorer shares: a batch's scores from the cache, or computed and stored at once.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path

from harness.cache import cache_root

__all__ = ["ScoreCache", "cache_path", "item_digest", "batch_digest", "CachedScorer"]

_LOCK = threading.Lock()
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS scores (model TEXT NOT NULL, batch TEXT NOT NULL, item TEXT NOT NULL,"
    " score REAL NOT NULL, PRIMARY KEY (model, batch, item))",
    "CREATE TABLE IF NOT EXISTS hashes (path TEXT NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL,"
    " sha256 TEXT NOT NULL, PRIMARY KEY (path, size, mtime))",
)


def cache_path(family: str = "comet") -> Path:
    """`$HARNESS_CACHE/FAMILY/scores.sqlite3` (default `~/.cache/harness/comet/scores.sqlite3`)."""
    return cache_root() / family / "scores.sqlite3"


def item_digest(src: str, mt: str, ref: str) -> str:
    """Digest of one (src, mt, ref) triple."""
    return hashlib.sha256("\0".join((src, mt, ref)).encode("utf-8")).hexdigest()


def batch_digest(items: Sequence[str]) -> str:
    """Digest of a batch: its items' digests in batch order."""
    return hashlib.sha256("".join(items).encode("ascii")).hexdigest()


class ScoreCache:
    """Sentence scores by (model key, batch digest, item digest); thread-safe, one short transaction a call."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            for statement in _SCHEMA:
                db.execute(statement)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """One connection for one transaction (committed on success), closed afterwards."""
        with closing(sqlite3.connect(self.path, timeout=120)) as db, db:
            db.execute("PRAGMA journal_mode=WAL")
            yield db

    def get(self, model: str, batch: str) -> dict[str, float]:
        """{item digest: score} stored for one batch."""
        with _LOCK, self._connect() as db:
            rows = db.execute("SELECT item, score FROM scores WHERE model = ? AND batch = ?", (model, batch))
            return {item: float(score) for item, score in rows}

    def put(self, model: str, batch: str, scores: Iterable[tuple[str, float]]) -> None:
        """Store one batch's (item digest, score) pairs and commit."""
        with _LOCK, self._connect() as db:
            db.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?)",
                           [(model, batch, item, float(score)) for item, score in scores])

    def hashes(self) -> dict[tuple[str, int, int], str]:
        """Every remembered checkpoint hash by (path, size, mtime_ns)."""
        with _LOCK, self._connect() as db:
            return {(p, s, m): h for p, s, m, h in db.execute("SELECT path, size, mtime, sha256 FROM hashes")}

    def remember_hash(self, key: tuple[str, int, int], digest: str) -> None:
        with _LOCK, self._connect() as db:
            db.execute("INSERT OR REPLACE INTO hashes VALUES (?, ?, ?, ?)", (*key, digest))


class CachedScorer:
    """Sentence scores of one loaded model through the score cache; `model_key` names the model and settings there.

    A subclass computes a batch; `cached_batch` takes it from the cache when every item is there, else computes,
    counts (`computed`: sentences scored by the model, for tests and the bench) and stores it at once.
    """

    def __init__(self, model_key: str, batch_size: int, where: str, cache: ScoreCache | None,
                 signature_base: str = "") -> None:
        self.model_key, self.batch_size, self.where, self.cache = model_key, batch_size, where, cache
        self.signature_base = signature_base  # the model part of the metric's signature
        self.computed = 0

    def cached_batch(self, items: Sequence[str], compute: Callable[..., list[float]], *texts: list[str]) -> list[float]:
        """The scores of one batch of item digests: cached, or `compute(*texts)` and stored."""
        digest = batch_digest(items)
        cached = self.cache.get(self.model_key, digest) if self.cache is not None else {}
        if all(item in cached for item in items):
            return [cached[item] for item in items]
        values = compute(*texts)
        self.computed += len(items)
        if self.cache is not None:
            self.cache.put(self.model_key, digest, zip(items, values, strict=True))
        return values
