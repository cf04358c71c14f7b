"""Compiled helpers for sacrebleu's TER and chrF (ter_shift.c, chrf_ngrams.c), built with the system C compiler
on first use: TER edit counts and chrF character n-gram matches, both equal to sacrebleu's.

The library is compiled once per source version into the harness's cache folder (`$HARNESS_CACHE`, else
`~/.cache/harness`, as the wheelhouse; a per-user temporary folder where that is not writable) and loaded with
ctypes; no Python package is needed. Where no compiler is found, the build fails, or `HARNESS_NO_NATIVE=1` is set,
`library()` returns None and callers use the pure-Python path (`harness.metrics.ter_fast.translation_edit_rate`),
which gives the same numbers.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from itertools import chain, count
from pathlib import Path
from typing import Any

from harness.cache import cache_root
from harness.jsonio import atomic_path

__all__ = ["library", "EditCounts", "start_edit_counts", "edit_counts", "chrf_match_counts"]

SOURCES = [Path(__file__).with_name("ter_shift.c"), Path(__file__).with_name("chrf_ngrams.c")]
_STATE: dict[str, Any] = {}


def _cache_dirs() -> list[Path]:
    return [cache_root(), Path(tempfile.gettempdir()) / f"harness-{os.getuid() if hasattr(os, 'getuid') else 'user'}"]


def _build(target: Path) -> bool:
    """Compile SOURCES into `target` (atomically: a temporary file renamed into place); False if it cannot."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        return False
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(target) as partial:
            proc = subprocess.run([cc, "-O3", "-shared", "-fPIC", "-o", str(partial), *map(str, SOURCES)],
                                  capture_output=True)
            if proc.returncode != 0:
                raise OSError(proc.stderr.decode("utf-8", "replace")[-200:])
        return True
    except OSError:
        return False


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def library() -> Any:
    """The loaded C library (ctypes), or None where it cannot be built or `HARNESS_NO_NATIVE=1` is set."""
    if os.environ.get("HARNESS_NO_NATIVE") == "1":
        return None
    if "lib" in _STATE:
        return _STATE["lib"]
    lib = None
    try:
        digest = hashlib.sha256(b"".join(p.read_bytes() for p in SOURCES)).hexdigest()[:16]
        tag = f"{sys.implementation.cache_tag}-{sysconfig.get_platform()}".replace("/", "_")
        for folder in _cache_dirs():
            target = folder / f"harness-native-{digest}-{tag}.so"
            if target.is_file() or _build(target):
                lib = ctypes.CDLL(str(target))
                break
        if lib is not None:
            lib.ter_batch.restype = ctypes.c_int64
            lib.ter_batch.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int64, ctypes.c_void_p]
            lib.chrf_matches.restype = ctypes.c_int64
            lib.chrf_matches.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int64, ctypes.c_int, ctypes.c_void_p]
    except OSError:
        lib = None
    _STATE["lib"] = lib
    return lib


#: at most this many threads run TER's C code: the caller's and one background thread (CI machines have 2 cores)
MAX_THREADS = 2


class EditCounts:
    """TER edit counts being computed: a background thread works through chunks of the pairs while the caller
    does other work; `result()` joins in on the chunks left (so at most two threads, load-balanced)."""

    def __init__(self, lib: Any, arrays: tuple[Any, Any, Any, Any], total: int) -> None:
        import threading

        import numpy as np

        self._lib, self._arrays, self._total = lib, arrays, total
        self._out = np.zeros(total, dtype=np.int64)
        self._chunk = max(16, total // 64)
        self._next, self._rc = 0, 0
        self._lock = threading.Lock()
        self._thread = None
        if min(_cores(), MAX_THREADS) > 1 and total >= 2 * self._chunk:
            self._thread = threading.Thread(target=self._work, name="harness-ter", daemon=True)
            self._thread.start()

    def _claim(self) -> tuple[int, int] | None:
        with self._lock:
            a = self._next
            if a >= self._total or self._rc != 0:
                return None
            self._next = b = min(a + self._chunk, self._total)
            return a, b

    def _work(self) -> None:
        hyp, hoff, ref, roff = self._arrays
        ptr = ctypes.c_void_p
        while (span := self._claim()) is not None:
            a, b = span  # ctypes releases the GIL while the C code runs
            rc = int(self._lib.ter_batch(
                ptr(hyp.ctypes.data), ptr(hoff.ctypes.data + 8 * a), ptr(ref.ctypes.data),
                ptr(roff.ctypes.data + 8 * a), b - a, ptr(self._out.ctypes.data + 8 * a),
            ))
            if rc != 0:
                with self._lock:
                    self._rc = rc

    def result(self) -> list[int] | None:
        """The edit counts in pair order (waiting for them), or None if a sentence failed."""
        self._work()
        if self._thread is not None:
            self._thread.join()
        return None if self._rc != 0 else self._out.tolist()


def start_edit_counts(pairs: Sequence[tuple[list[str], list[str]]]) -> EditCounts | None:
    """Start counting the TER edits of (hypothesis words, reference words) pairs (see `edit_counts`); None when
    the library is unavailable."""
    import numpy as np

    lib = library()
    if lib is None:
        return None
    vocab: dict[str, int] = {}
    ids = vocab.setdefault  # with a running counter: equal words share the first id given, ids stay unique

    def flat(seqs: Any) -> tuple[Any, Any]:
        lens = np.fromiter(map(len, seqs), dtype=np.int64, count=len(seqs))
        off = np.zeros(len(seqs) + 1, dtype=np.int64)
        np.cumsum(lens, out=off[1:])
        words = np.fromiter(map(ids, chain.from_iterable(seqs), counter), dtype=np.int32, count=int(off[-1]))
        return words if len(words) else np.zeros(1, dtype=np.int32), off

    counter = count()
    hyp, hoff = flat([p[0] for p in pairs])
    ref, roff = flat([p[1] for p in pairs])
    return EditCounts(lib, (hyp, hoff, ref, roff), len(pairs))


def edit_counts(pairs: Sequence[tuple[list[str], list[str]]]) -> list[int] | None:
    """TER edits (shifts + beam edit distance) of each (hypothesis words, reference words) pair, as sacrebleu's
    `lib_ter.translation_edit_rate` counts them; None when the library is unavailable or a sentence failed."""
    if not pairs:
        return [] if library() is not None else None
    job = start_edit_counts(pairs)
    return None if job is None else job.result()


def chrf_match_counts(codes: Any, lens: Any, n: int, max_order: int) -> Any:
    """(n, max_order) character n-gram matches of each hypothesis against its reference, or None without the library.

    `codes` are the code points (uint32) of the n hypotheses then the n references, concatenated, `lens` their
    lengths; a match of order k is the hypothesis count of a k-gram clipped by its reference count.
    """
    import numpy as np

    lib = library()
    if lib is None:
        return None
    codes = np.ascontiguousarray(codes, dtype=np.uint32)
    if not len(codes):
        codes = np.zeros(1, dtype=np.uint32)
    off = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)
    out = np.zeros((n, max_order), dtype=np.int64)
    ptr = ctypes.c_void_p
    rc = lib.chrf_matches(ptr(codes.ctypes.data), ptr(off.ctypes.data), ptr(codes.ctypes.data),
                          ptr(off.ctypes.data + 8 * n), n, max_order, ptr(out.ctypes.data))
    return out if rc == 0 else None
