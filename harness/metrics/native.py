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

__all__ = ["library", "edit_counts", "chrf_match_counts"]

SOURCES = [Path(__file__).with_name("ter_shift.c"), Path(__file__).with_name("chrf_ngrams.c")]
_STATE: dict[str, Any] = {}


def _cache_dirs() -> list[Path]:
    explicit = os.environ.get("HARNESS_CACHE")
    first = Path(explicit) if explicit else Path.home() / ".cache" / "harness"
    return [first, Path(tempfile.gettempdir()) / f"harness-{os.getuid() if hasattr(os, 'getuid') else 'user'}"]


def _build(target: Path) -> bool:
    """Compile SOURCES into `target` (atomically: a temporary file renamed into place); False if it cannot."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        return False
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".so.tmp")
        os.close(fd)
        proc = subprocess.run([cc, "-O3", "-shared", "-fPIC", "-o", tmp, *map(str, SOURCES)], capture_output=True)
        if proc.returncode != 0:
            os.unlink(tmp)
            return False
        os.replace(tmp, target)
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


def edit_counts(pairs: Sequence[tuple[list[str], list[str]]]) -> list[int] | None:
    """TER edits (shifts + beam edit distance) of each (hypothesis words, reference words) pair, as sacrebleu's
    `lib_ter.translation_edit_rate` counts them; None when the library is unavailable or a sentence failed."""
    import numpy as np

    lib = library()
    if lib is None:
        return None
    if not pairs:
        return []
    vocab: dict[str, int] = {}
    ids = vocab.setdefault  # with a running counter: equal words share the first id given, ids stay unique

    def flat(seqs: Any) -> tuple[Any, Any]:
        lens = np.fromiter(map(len, seqs), dtype=np.int64, count=len(seqs))
        off = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)
        words = np.fromiter(map(ids, chain.from_iterable(seqs), counter), dtype=np.int64, count=int(off[-1]))
        return words.astype(np.int32) if len(words) else np.zeros(1, dtype=np.int32), off

    counter = count()
    hyp, hoff = flat([p[0] for p in pairs])
    ref, roff = flat([p[1] for p in pairs])
    out = np.zeros(len(pairs), dtype=np.int64)
    ptr = ctypes.c_void_p
    total = len(pairs)
    workers = max(1, min(_cores(), total // 64, 8))
    bounds = [total * i // workers for i in range(workers + 1)]

    def run(a: int, b: int) -> int:  # ctypes releases the GIL: the blocks run on as many cores
        return int(lib.ter_batch(
            ptr(hyp.ctypes.data), ptr(hoff.ctypes.data + 8 * a), ptr(ref.ctypes.data),
            ptr(roff.ctypes.data + 8 * a), b - a, ptr(out.ctypes.data + 8 * a),
        ))

    if workers == 1:
        rc = run(0, total)
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as pool:
            rc = next((r for r in pool.map(run, bounds[:-1], bounds[1:]) if r != 0), 0)
    if rc != 0:
        return None
    return out.tolist()


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
