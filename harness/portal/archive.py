"""The check of an uploaded submission archive (tar or tar.gz) before anything of it is extracted, and its
extraction into place in one rename.

Three reads of the archive, each through a cap on the decompressed bytes (a compression bomb stops at the cap):
the raw headers (member count, declared sizes, extended headers of bounded size, so that tarfile never reads a
huge one into memory), then tarfile's view of each member (its name and type), and only when both pass, the
extraction into a temporary folder beside the destination, renamed into place at the end. Every refusal is one
HarnessError line naming the archive, the member and why.
"""

from __future__ import annotations

import gzip
import os
import secrets
import shutil
import tarfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from harness.errors import HarnessError

__all__ = ["ArchiveLimits", "check_archive", "extract_checked"]

BLOCK = tarfile.BLOCKSIZE
GZIP_MAGIC = b"\x1f\x8b"
_META_TYPES = {tarfile.XHDTYPE: "pax header", tarfile.XGLTYPE: "pax global header",
               tarfile.GNUTYPE_LONGNAME: "GNU long name", tarfile.GNUTYPE_LONGLINK: "GNU long link"}
_REFUSED_TYPES = {tarfile.SYMTYPE: "a symbolic link", tarfile.LNKTYPE: "a hard link", tarfile.CHRTYPE: "a device",
                  tarfile.BLKTYPE: "a device", tarfile.FIFOTYPE: "a fifo", tarfile.GNUTYPE_SPARSE: "a sparse file"}


@dataclass(frozen=True)
class ArchiveLimits:
    """What an archive may hold: members, unpacked bytes (the sum of the members' sizes), the bytes of one
    extended header, and the bytes the archive may decompress to (by default the unpacked size plus room for
    every member's headers)."""

    max_members: int = 10_000
    max_unpacked: int = 4 << 30
    max_header: int = 64 << 10
    max_decompressed: int | None = None

    @property
    def decompressed_cap(self) -> int:
        """The bytes the tar stream may have once decompressed."""
        if self.max_decompressed is not None:
            return self.max_decompressed
        return self.max_unpacked + (self.max_members * 2 + 1) * (self.max_header + 2 * BLOCK) + 20 * BLOCK


class _Capped:
    """A read-only stream that refuses to deliver more than `cap` bytes in all (read in bounded pieces)."""

    def __init__(self, inner: BinaryIO, cap: int, archive: Path) -> None:
        self._inner, self._cap, self._archive, self.total = inner, cap, archive, 0

    def read(self, n: int = -1) -> bytes:
        n = 1 << 20 if n is None or n < 0 else n
        try:
            data = self._inner.read(min(n, self._cap - self.total + 1))
        except (OSError, EOFError, zlib.error) as exc:
            raise HarnessError(f"{self._archive.name}: cannot decompress: {exc}") from None
        self.total += len(data)
        if self.total > self._cap:
            raise HarnessError(f"{self._archive.name}: decompresses to more than {self._cap} bytes (a compression "
                               "bomb?): refused, reading stopped there")
        return data


@contextmanager
def _stream(archive: Path, limits: ArchiveLimits) -> Iterator[_Capped]:
    """The archive's tar bytes (gunzipped when it is gzip), capped."""
    try:
        raw = archive.open("rb")
    except OSError as exc:
        raise HarnessError(f"{archive}: cannot read the archive: {exc.strerror}") from None
    with raw:
        inner: BinaryIO = raw
        if raw.read(2) == GZIP_MAGIC:
            raw.seek(0)
            inner = gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[assignment]
        else:
            raw.seek(0)
        yield _Capped(inner, limits.decompressed_cap, archive)


def _read_exactly(stream: _Capped, size: int, archive: Path) -> bytes:
    parts, left = [], size
    while left:
        data = stream.read(min(left, 1 << 20))
        if not data:
            raise HarnessError(f"{archive.name}: the archive ends in the middle of a member (truncated)")
        parts.append(data)
        left -= len(data)
    return b"".join(parts)


def _skip(stream: _Capped, size: int, archive: Path) -> None:
    while size:
        data = stream.read(min(size, 1 << 20))
        if not data:
            raise HarnessError(f"{archive.name}: the archive ends in the middle of a member (truncated)")
        size -= len(data)


def _padded(size: int) -> int:
    return -(-size // BLOCK) * BLOCK


def _scan_headers(archive: Path, limits: ArchiveLimits) -> None:
    """The first read: each raw 512-byte header, its type and declared size, every member's data skipped (read
    through the cap). Counts the members and their sizes, and bounds each extended header before tarfile reads
    it whole."""
    members = unpacked = 0
    with _stream(archive, limits) as stream:
        while True:
            block = stream.read(BLOCK)
            if len(block) < BLOCK:
                if not block and members == 0:
                    raise HarnessError(f"{archive.name}: empty file, not a tar archive")
                raise HarnessError(f"{archive.name}: the archive ends without its end marker (truncated)")
            if block.count(0) == BLOCK:
                return  # the end marker
            try:
                header = tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
            except tarfile.HeaderError as exc:
                where = "not a tar archive" if members == 0 else f"a broken header after {members} members"
                raise HarnessError(f"{archive.name}: {where} ({exc})") from None
            name = header.name[:200]
            if header.type in _META_TYPES:
                if header.size > limits.max_header:
                    raise HarnessError(f"{archive.name}: a {_META_TYPES[header.type]} of {header.size} bytes (at "
                                       f"most {limits.max_header}) before member {name!r}")
            else:
                members += 1
                if members > limits.max_members:
                    raise HarnessError(f"{archive.name}: more than {limits.max_members} members (member {name!r})")
                if header.isreg() or header.type == tarfile.GNUTYPE_SPARSE:
                    unpacked += header.size
                if unpacked > limits.max_unpacked:
                    raise HarnessError(f"{archive.name}: member {name!r} brings the unpacked size to {unpacked} "
                                       f"bytes, more than {limits.max_unpacked}")
            if header.type in _META_TYPES or header.isreg() or header.type not in tarfile.SUPPORTED_TYPES:
                _skip(stream, _padded(header.size), archive)  # the data that tarfile reads or skips too


def _member_path(member: tarfile.TarInfo, archive: Path) -> PurePosixPath | None:
    """The member's relative path, checked (None for the archive's root folder `.`)."""
    name = member.name
    where = f"{archive.name}: member {name[:200]!r}"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise HarnessError(f"{where}: its name is not UTF-8") from None
    if "\0" in name or "\\" in name:
        raise HarnessError(f"{where}: its name holds a NUL or a backslash")
    if name.startswith("/"):
        raise HarnessError(f"{where}: an absolute path")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise HarnessError(f"{where}: a path with '..' (it would land outside the folder)")
    if member.type in _REFUSED_TYPES:
        raise HarnessError(f"{where}: {_REFUSED_TYPES[member.type]} (only files and folders are allowed)")
    if not (member.isreg() or member.isdir()):
        raise HarnessError(f"{where}: a member of type {member.type!r} (only files and folders are allowed)")
    if not parts:
        if member.isdir():
            return None
        raise HarnessError(f"{where}: a file without a name")
    return PurePosixPath(*parts)


def _walk(archive: Path, limits: ArchiveLimits, dest: Path | None) -> int:
    """The second and third reads: tarfile's members, checked; with `dest`, each one is written under it.
    Returns the number of members."""
    files: set[PurePosixPath] = set()
    folders: set[PurePosixPath] = set()
    count = unpacked = 0
    with _stream(archive, limits) as stream:
        try:
            tar = tarfile.open(fileobj=stream, mode="r|", encoding="utf-8",  # type: ignore[call-overload]
                               errors="surrogateescape")
        except tarfile.TarError as exc:
            raise HarnessError(f"{archive.name}: not a tar archive ({exc})") from None
        with tar:
            for member in _members(tar, archive):
                count += 1
                if count > limits.max_members:  # as the first read found (a pax header may change a size)
                    raise HarnessError(f"{archive.name}: more than {limits.max_members} members")
                unpacked += member.size if member.isreg() else 0
                if unpacked > limits.max_unpacked:
                    raise HarnessError(f"{archive.name}: member {member.name[:200]!r} brings the unpacked size to "
                                       f"{unpacked} bytes, more than {limits.max_unpacked}")
                path = _member_path(member, archive)
                if path is None:
                    continue
                where = f"{archive.name}: member {member.name[:200]!r}"
                if path in files or (member.isreg() and path in folders):
                    raise HarnessError(f"{where}: {path} is in the archive twice")
                for parent in path.parents:
                    if parent in files:
                        raise HarnessError(f"{where}: its folder {parent} is a file of the archive")
                (folders if member.isdir() else files).add(path)
                folders.update(p for p in path.parents if p != PurePosixPath("."))
                if dest is not None:
                    _write(tar, member, dest / path, where)
    return count


def _members(tar: tarfile.TarFile, archive: Path) -> Iterator[tarfile.TarInfo]:
    while True:
        try:
            member = tar.next()
        except tarfile.TarError as exc:
            raise HarnessError(f"{archive.name}: a broken member ({exc})") from None
        if member is None:
            return
        yield member


def _write(tar: tarfile.TarFile, member: tarfile.TarInfo, target: Path, where: str) -> None:
    """One member written at `target` (its folders made), never following a link."""
    try:
        if member.isdir():
            target.mkdir(mode=0o755, parents=True, exist_ok=True)
            return
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        source = tar.extractfile(member)
        assert source is not None
        mode = 0o755 if member.mode & 0o111 else 0o644
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(source, out, 1 << 20)
    except OSError as exc:
        raise HarnessError(f"{where}: cannot extract it: {exc.strerror}") from None


def check_archive(archive: Path, limits: ArchiveLimits = ArchiveLimits()) -> int:
    """Check the whole archive without extracting anything; returns its number of members. A HarnessError names
    the first member at fault: an absolute path, `..`, a link, a device or fifo, too many members, too many
    unpacked bytes, an archive that decompresses past the cap."""
    archive = Path(archive)
    _scan_headers(archive, limits)
    return _walk(archive, limits, None)


def extract_checked(archive: Path, dest: Path, limits: ArchiveLimits = ArchiveLimits()) -> Path:
    """Check the archive (`check_archive`), then extract it into a temporary folder beside `dest` and rename that
    into place: `dest` (which must not exist yet) appears whole or not at all. Returns `dest`."""
    archive, dest = Path(archive), Path(dest)
    if dest.exists() or dest.is_symlink():
        raise HarnessError(f"{dest}: already exists; an archive is extracted into a new folder")
    check_archive(archive, limits)
    dest.parent.mkdir(parents=True, exist_ok=True)
    temporary = dest.parent / f".{dest.name}.{secrets.token_hex(6)}.extracting"
    temporary.mkdir(mode=0o755)
    try:
        _walk(archive, limits, temporary)
        try:
            os.rename(temporary, dest)
        except OSError as exc:
            raise HarnessError(f"{dest}: cannot move the extracted archive into place: {exc.strerror}") from None
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    return dest
