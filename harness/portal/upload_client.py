"""The client side of the portal's tus uploads (harness/portal/uploads.py), for `harness submit`: pack a submission
folder into a deterministic tar.gz, then upload it in checked chunks, resuming where the server stands.

    url = upload("https://portal.example/uploads", pack_folder(folder, tmp / "sub.tar.gz"), token,
                 {"track": "en-de"}, progress=print)

Each chunk is read twice from the file (once to hash it, once to send it), never held whole in memory.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import os
import stat
import tarfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urljoin

import requests

from harness.errors import HarnessError

__all__ = ["CHUNK_SIZE", "UploadProgress", "upload", "pack_folder", "sha256_file", "SKIPPED"]

TUS_VERSION = "1.0.0"  # the same as harness.portal.uploads.TUS_VERSION (this side does not import the server's)
CHUNK_SIZE = 8 << 20
SKIPPED = frozenset({"__pycache__"})  # folder names pack_folder leaves out
#: Answers after which a chunk is sent again from the server's offset (a chunk that went wrong on the way).
_RETRIABLE = frozenset({408, 409, 423, 429, 460, 500, 502, 503, 504})


@dataclass(frozen=True)
class UploadProgress:
    """Where an upload stands: its URL (to resume it later), the bytes the server holds, the file's size."""

    url: str
    offset: int
    length: int


def sha256_file(path: Path, start: int = 0, size: int | None = None) -> bytes:
    """The sha256 digest of `size` bytes of `path` from `start` (to its end without `size`), read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        f.seek(start)
        left = size
        while left is None or left > 0:
            block = f.read(1 << 20 if left is None else min(1 << 20, left))
            if not block:
                break
            digest.update(block)
            if left is not None:
                left -= len(block)
    return digest.digest()


class _Window:
    """`size` bytes of an open file from `start`, as a file object with a length (requests streams it)."""

    def __init__(self, f: BinaryIO, start: int, size: int) -> None:
        self._f, self._left, self._size = f, size, size
        f.seek(start)

    def __len__(self) -> int:
        return self._size

    def read(self, n: int = -1) -> bytes:
        n = self._left if n is None or n < 0 else min(n, self._left)
        data = self._f.read(n)
        self._left -= len(data)
        return data


def _error_line(answer: requests.Response) -> str:
    try:
        return str(answer.json()["error"])
    except (ValueError, KeyError, TypeError):
        return answer.reason or f"HTTP {answer.status_code}"


def _encode_metadata(metadata: Mapping[str, str]) -> str:
    return ",".join(f"{k} {base64.b64encode(v.encode('utf-8')).decode('ascii')}" for k, v in metadata.items())


def _declared_sha256(answer: requests.Response) -> str | None:
    for pair in answer.headers.get("Upload-Metadata", "").split(","):
        key, _, value = pair.strip().partition(" ")
        if key == "sha256":
            try:
                return base64.b64decode(value).decode("ascii")
            except ValueError:
                return None
    return None


def upload(url: str, path: Path, token: str, metadata: Mapping[str, str] | None = None, *,
           resume: str | None = None, progress: Callable[[UploadProgress], object] | None = None,
           chunk_size: int = CHUNK_SIZE, retries: int = 3, backoff: float = 1.0,
           session: requests.Session | None = None, timeout: float = 120.0) -> str:
    """Upload the file `path` to the tus endpoint `url` and return the upload's URL once the server has it all.

    `metadata` goes with the creation, with the file's `sha256` (hex) added, which the server checks at the end.
    With `resume` (an upload URL from an earlier call, e.g. from its `progress`), the upload continues from the
    offset the server holds, if the server still has it for this same file; otherwise a new upload starts.
    `progress` is called after the creation (or resumption) and after each chunk. A chunk that fails on the way
    (connection lost, checksum mismatch, 5xx) is sent again from the server's offset, at most `retries` times in a
    row, waiting `backoff` seconds times the attempt number; any other refusal is a HarnessError with the
    server's line."""
    sender = _Upload(Path(path), token, session or requests.Session(), timeout, progress)
    location, offset = sender.resumed(resume) if resume is not None else (None, 0)
    if location is None:
        location = sender.create(url, metadata)
        if sender.length == 0:
            sender.tell(location, 0)
            return location
    sender.tell(location, offset)
    return sender.send(location, offset, chunk_size, retries, backoff)


class _Upload:
    """One file's upload: its creation or resumption, then its chunks."""

    def __init__(self, path: Path, token: str, http: requests.Session, timeout: float,
                 progress: Callable[[UploadProgress], object] | None) -> None:
        self.path, self.http, self.timeout, self.progress = path, http, timeout, progress
        self.auth = {"Authorization": f"Bearer {token}", "Tus-Resumable": TUS_VERSION}
        self.length = path.stat().st_size
        self.whole = sha256_file(path).hex()

    def refused(self, what: str, answer: requests.Response) -> HarnessError:
        return HarnessError(f"{self.path.name}: {what} refused ({answer.status_code}): {_error_line(answer)}")

    def tell(self, location: str, offset: int) -> None:
        if self.progress is not None:
            self.progress(UploadProgress(location, offset, self.length))

    def resumed(self, resume: str) -> tuple[str | None, int]:
        """The earlier upload and its offset, if the server still holds it for this same file."""
        try:
            answer = self.http.head(resume, headers=self.auth, timeout=self.timeout)
        except requests.RequestException:  # that server is gone: start anew where asked
            return None, 0
        if answer.status_code == 200 and answer.headers.get("Upload-Length") == str(self.length) and \
                _declared_sha256(answer) == self.whole:
            return resume, int(answer.headers["Upload-Offset"])
        if answer.status_code not in (200, 404, 410):
            raise self.refused("resumption", answer)
        return None, 0

    def create(self, url: str, metadata: Mapping[str, str] | None) -> str:
        """A new upload's URL."""
        answer = self.http.post(url, headers={
            **self.auth, "Upload-Length": str(self.length),
            "Upload-Metadata": _encode_metadata({**(metadata or {}), "sha256": self.whole})}, timeout=self.timeout)
        if answer.status_code != 201:
            raise self.refused("creation", answer)
        return urljoin(url, answer.headers["Location"])

    def server_offset(self, location: str) -> int:
        answer = self.http.head(location, headers=self.auth, timeout=self.timeout)
        if answer.status_code != 200:
            raise self.refused("upload", answer)
        return int(answer.headers["Upload-Offset"])

    def send(self, location: str, offset: int, chunk_size: int, retries: int, backoff: float) -> str:
        """Every chunk from `offset`, each retried from the server's offset after a failure on the way."""
        failures = 0
        with self.path.open("rb") as f:
            while True:
                size = min(chunk_size, self.length - offset)
                answer, problem = self.chunk(f, location, offset, size)
                if answer is not None:
                    offset, failures = int(answer.headers["Upload-Offset"]), 0
                    self.tell(location, offset)
                    if offset >= self.length:
                        return location
                    continue
                failures += 1
                if failures > retries:
                    raise HarnessError(f"{self.path.name}: the chunk at offset {offset} failed {failures} times, "
                                       f"last: {problem}; resume with the upload URL {location}")
                if backoff > 0:
                    time.sleep(backoff * failures)
                offset = self.server_offset(location)

    def chunk(self, f: BinaryIO, location: str, offset: int, size: int) -> tuple[requests.Response | None, str]:
        """One PATCH: (its answer, "") when the server took it, (None, the problem) when it may be sent again."""
        digest = base64.b64encode(sha256_file(self.path, offset, size)).decode("ascii")
        headers = {**self.auth, "Content-Type": "application/offset+octet-stream", "Upload-Offset": str(offset),
                   "Upload-Checksum": f"sha256 {digest}", "Content-Length": str(size)}
        try:
            answer = self.http.patch(location, data=_Window(f, offset, size), headers=headers, timeout=self.timeout)
        except (requests.ConnectionError, requests.Timeout) as exc:
            return None, f"{type(exc).__name__}: {exc}"
        if answer.status_code == 204:
            return answer, ""
        if answer.status_code not in _RETRIABLE:
            raise self.refused(f"chunk at offset {offset}", answer)
        return None, f"{answer.status_code} {_error_line(answer)}"


def pack_folder(folder: Path, dest_tar: Path) -> Path:
    """Write the submission folder `folder` as a tar.gz at `dest_tar` that depends on the files only: members
    sorted by name, relative to the folder, no owners, times or permissions beyond executable or not, and no
    `__pycache__` folder. A symbolic link or a special file is a HarnessError (the portal refuses them).
    Returns `dest_tar`."""
    folder = Path(folder)
    if not folder.is_dir():
        raise HarnessError(f"{folder}: not a folder")

    def entry(path: Path, name: str) -> tarfile.TarInfo:
        info = tarfile.TarInfo(name)
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mtime = 0
        mode = path.lstat().st_mode
        if stat.S_ISDIR(mode):
            info.type, info.mode = tarfile.DIRTYPE, 0o755
        else:
            info.size, info.mode = path.lstat().st_size, 0o755 if mode & 0o111 else 0o644
        return info

    members: list[tuple[str, Path]] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        here = Path(root)
        for name in sorted(dirs) + sorted(files):
            path = here / name
            mode = path.lstat().st_mode
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise HarnessError(f"{path}: a symbolic link or special file cannot go into a submission")
            members.append((path.relative_to(folder).as_posix(), path))
    members.sort()
    dest_tar.parent.mkdir(parents=True, exist_ok=True)
    with dest_tar.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, path in members:
            info = entry(path, name)
            if info.isdir():
                tar.addfile(info)
            else:
                with path.open("rb") as f:
                    tar.addfile(info, f)
    return dest_tar
