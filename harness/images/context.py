"""A submission's build context: what `docker build` receives, checked, and streamed as a tar.

Which paths are in follows the docker SDK's own `.dockerignore` rules (`docker.utils.build.exclude_paths`) and the
tar is the SDK's (`docker.utils.build.create_archive`); what is ours is the guard on top: Python's bytecode caches
(`__pycache__/`) are never sent, no link may point out of the folder, only regular files, directories and links are
accepted, and the size after `.dockerignore` is capped (`$HARNESS_MAX_CONTEXT_BYTES`, default 4 GiB; the same cap
applies to `image.tar`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from harness.digest import sha256_file
from harness.errors import SubmissionError

#: Largest build context (bytes after .dockerignore) and largest image.tar accepted; `$HARNESS_MAX_CONTEXT_BYTES`.
DEFAULT_MAX_CONTEXT_BYTES = 4 * 1024**3
DOCKERIGNORE = ".dockerignore"
#: Left out of every context before the folder's own `.dockerignore` (which may bring them back with `!`): Python
#: writes these caches whenever the folder's code runs on the host, so they would change the image, and the resume key
#: with it, between two evaluations of the same sources, and one being written during the scan could vanish under it.
#: Loose `.pyc` files (a bytecode-only submission) stay in.
ALWAYS_LEFT_OUT = ("**/__pycache__",)


@dataclass(frozen=True)
class ContextScan:
    """What `docker build` would receive: paths (relative, in tar order) and their total size in bytes."""

    root: Path
    paths: tuple[str, ...]
    size: int


def max_context_bytes() -> int:
    env = os.environ.get("HARNESS_MAX_CONTEXT_BYTES")
    return int(env) if env and env.isdigit() else DEFAULT_MAX_CONTEXT_BYTES


def human_size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def dockerignore_patterns(root: Path) -> list[str]:
    """The lines of `root/.dockerignore` that are patterns (the docker SDK's reading: blank lines and `#` out)."""
    path = root / DOCKERIGNORE
    if not path.is_file():
        return []
    lines = (line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def scan_context(root: Path, max_bytes: int | None = None, always: tuple[str, ...] = ()) -> ContextScan:
    """The build context of `root` after ALWAYS_LEFT_OUT and `.dockerignore` (`always` and `.dockerignore` itself
    stay in), without following links. SubmissionError if a link escapes the folder, an entry is neither a regular
    file, directory nor link, or the size exceeds `max_bytes`."""
    from docker.utils.build import exclude_paths  # the docker SDK loads requests: only when a folder is scanned

    root = root.resolve()
    max_bytes = max_context_bytes() if max_bytes is None else max_bytes
    patterns = [*ALWAYS_LEFT_OUT, *dockerignore_patterns(root), *(f"!{p}" for p in (*always, DOCKERIGNORE))]
    paths = sorted(exclude_paths(str(root), patterns, dockerfile=always[0] if always else DOCKERIGNORE))
    total = 0
    for rel in paths:
        full = root / rel
        st = full.lstat()
        if stat.S_ISLNK(st.st_mode):
            if not Path(os.path.realpath(full)).is_relative_to(root):
                raise SubmissionError(f"{full}: symbolic link to {os.readlink(full)!r} escapes the submission folder")
        elif stat.S_ISREG(st.st_mode):
            total += st.st_size
            if total > max_bytes:
                raise SubmissionError(f"{root}: build context exceeds the cap of {human_size(max_bytes)} "
                                      f"(list big files in .dockerignore)")
        elif not stat.S_ISDIR(st.st_mode):
            raise SubmissionError(f"{full}: not a regular file, directory or link; remove it")
    return ContextScan(root=root, paths=tuple(paths), size=total)


def _plain_top_entry() -> bytes:
    """A plain ustar header for "." (no PAX extension): the docker CLI sniffs the first 512 bytes of stdin to tell
    an archive from a Dockerfile, and the SDK's first header carries a PAX record (sub-second mtimes)."""
    top = tarfile.TarInfo(".")
    top.type, top.mode, top.mtime = tarfile.DIRTYPE, 0o755, int(time.time())
    return top.tobuf(format=tarfile.USTAR_FORMAT)


def write_context(scan: ContextScan, stream: IO[bytes]) -> None:
    """Write the scanned context to `stream` as the tar `docker build -` reads: a plain "." entry, then the SDK's
    archive of the scanned paths (spooled to a temporary file, as its tar writer needs a seekable file)."""
    from docker.utils.build import create_archive

    with tempfile.TemporaryFile(prefix="harness-context-") as tmp:
        create_archive(str(scan.root), files=list(scan.paths), fileobj=tmp)
        stream.write(_plain_top_entry())
        shutil.copyfileobj(tmp, stream, 1 << 20)


def context_digest(scan: ContextScan) -> str:
    """SHA-256 of what the context holds: each path in tar order with its kind, permission bits and content (a
    link: its target). Times and owners are left out, as docker's build cache leaves them out: a fresh clone of the
    same folder has the same digest."""
    h = hashlib.sha256()
    for rel in scan.paths:
        full = scan.root / rel
        st = full.lstat()
        kind = "l" if stat.S_ISLNK(st.st_mode) else "d" if stat.S_ISDIR(st.st_mode) else "f"
        h.update(f"{kind} {stat.S_IMODE(st.st_mode):o} {rel}\0".encode())
        if kind == "l":
            h.update(os.readlink(full).encode() + b"\0")
        elif kind == "f":
            h.update(sha256_file(full).encode())
    return h.hexdigest()
