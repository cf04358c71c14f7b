"""The tus 1.0 resumable-upload protocol (core, creation, checksum and expiration extensions) on tornado.

One handler class, `UploadHandler`, serves the whole protocol; the application plugs it in with one
`UploadSettings` in the route's kwargs, which says who the caller is (`identify`), what happens when an upload is
complete (`on_complete`), where the staging files live and the limits:

    settings = UploadSettings(staging=Path("/srv/portal/staging"), identify=team_of, on_complete=accept)
    app = tornado.web.Application(upload_routes("/uploads", settings))

Each upload is two files of the staging folder: `ID.part` (the bytes received) and `ID.json` (its length,
metadata, owner, expiry and the committed offset). The offset is written to disk after every PATCH, so a
restarted server resumes where the old one stopped; bytes of the `.part` file past the committed offset (a
server killed in the middle of a PATCH) are cut off by the next PATCH. A request body is streamed to the
`.part` file as it arrives (`@tornado.web.stream_request_body`), never held whole in memory.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import email.utils
import errno
import hashlib
import inspect
import json
import os
import re
import secrets
import shutil
import threading
import time
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tornado.web

from harness.errors import HarnessError
from harness.jsonio import write_json

__all__ = ["TUS_VERSION", "UploadSettings", "UploadHandler", "UploadInfo", "upload_routes", "sweep_expired",
           "parse_metadata", "Identify", "OnComplete"]

TUS_VERSION = "1.0.0"
EXTENSIONS = "creation,checksum,expiration"
OCTET_STREAM = "application/offset+octet-stream"
GiB = 1 << 30
_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")
_METADATA_KEY = re.compile(r"[!#-+\--~]+")  # printable ASCII without space and comma
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
_MAX_METADATA = 4096  # characters of an Upload-Metadata header
DRAIN_LIMIT = 16 << 20  # a refused PATCH body up to this size is read (and dropped) before the answer

#: Who the caller is: the owner id of the request, or an HTTPError 401/403 raised (it may be a coroutine function).
Identify = Callable[[tornado.web.RequestHandler], "str | Awaitable[str]"]
#: What happens when an upload is complete: (staging file, metadata, owner). The callback owns the file: it moves
#: or copies it; whatever is left at the path when it returns is removed. A HarnessError refuses the upload (422,
#: its one line); it may be a coroutine function.
OnComplete = Callable[[Path, Mapping[str, str], str], "Awaitable[None] | None"]


@dataclass(frozen=True)
class UploadSettings:
    """The staging folder, the limits and the two plug-ins of an upload route (one object per server)."""

    staging: Path
    identify: Identify
    on_complete: OnComplete | None = None
    max_size: int = 4 * GiB  # the largest Upload-Length accepted (413 above)
    expires_after: float = 24 * 3600.0  # seconds from creation until an unfinished upload expires (410)
    disk_reserve: int = 1 * GiB  # free bytes the staging file system keeps after the whole upload (507 below)
    clock: Callable[[], float] = time.time  # seconds since the epoch (a test may pass its own)
    _active: set[str] = field(default_factory=set, init=False, repr=False, compare=False)  # ids with a PATCH going
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def sweep(self) -> list[str]:
        """`sweep_expired` of this staging folder at this clock's time, sparing the uploads a PATCH is writing
        (call it from the server's IOLoop, e.g. a tornado.ioloop.PeriodicCallback)."""
        with self._lock:
            busy = set(self._active)
        return sweep_expired(self.staging, self.clock(), busy=busy)


@dataclass
class UploadInfo:
    """What `ID.json` holds: one upload's state (the bytes themselves are in `ID.part`)."""

    id: str
    owner: str
    length: int
    metadata: dict[str, str]
    created: float
    expires: float
    offset: int = 0
    completed: bool = False

    @classmethod
    def load(cls, staging: Path, upload_id: str) -> UploadInfo | None:
        """The state of `upload_id`, or None when there is no such upload (or its file is unreadable)."""
        if not _ID.fullmatch(upload_id):
            return None
        try:
            raw = json.loads((staging / f"{upload_id}.json").read_text(encoding="utf-8"))
            return cls(id=upload_id, owner=str(raw["owner"]), length=int(raw["length"]),
                       metadata={str(k): str(v) for k, v in raw["metadata"].items()},
                       created=float(raw["created"]), expires=float(raw["expires"]), offset=int(raw["offset"]),
                       completed=bool(raw["completed"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def save(self, staging: Path) -> None:
        """Write the state atomically (a reader never sees half of it)."""
        write_json(staging / f"{self.id}.json", {
            "owner": self.owner, "length": self.length, "metadata": self.metadata, "created": self.created,
            "expires": self.expires, "offset": self.offset, "completed": self.completed})

    def part(self, staging: Path) -> Path:
        """The staging file of the bytes received."""
        return staging / f"{self.id}.part"


class UploadError(tornado.web.HTTPError):
    """An answer other than success: its status and one line naming what is wrong (the JSON body's `error`)."""

    def __init__(self, status: int, message: str, reason: str | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(status, reason=reason)
        self.message = message
        self.headers = dict(headers or {})


def http_date(when: float) -> str:
    """`when` (seconds since the epoch) as an RFC 7231 date: `Sun, 06 Nov 1994 08:49:37 GMT`."""
    return email.utils.formatdate(when, usegmt=True)


def parse_metadata(header: str) -> dict[str, str]:
    """Upload-Metadata (`key base64value,key2,...`) as a dict; a bad pair raises UploadError 400."""
    if len(header) > _MAX_METADATA:
        raise UploadError(400, f"Upload-Metadata is longer than {_MAX_METADATA} characters")
    found: dict[str, str] = {}
    for pair in (p.strip() for p in header.split(",")):
        if not pair:
            continue
        key, _, value = pair.partition(" ")
        if not _METADATA_KEY.fullmatch(key):
            raise UploadError(400, f"Upload-Metadata: {key[:40]!r} is not a valid key")
        if key in found:
            raise UploadError(400, f"Upload-Metadata: key {key!r} is given twice")
        try:
            found[key] = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            raise UploadError(400, f"Upload-Metadata: the value of {key!r} is not base64 of UTF-8 text") from None
    return found


def sweep_expired(staging: Path, now: float | None = None, *, busy: Collection[str] = ()) -> list[str]:
    """Remove the files of every upload of `staging` whose expiry has passed (unfinished or complete), and the
    leftovers of one whose state file is gone or unreadable, except the uploads in `busy` (a PATCH is writing
    them: `UploadSettings.sweep` passes its own). Returns the ids removed, sorted."""
    now = time.time() if now is None else now
    removed: set[str] = set()
    if not staging.is_dir():
        return []
    for path in staging.iterdir():
        upload_id, _, suffix = path.name.rpartition(".")
        if suffix not in ("json", "part") or not _ID.fullmatch(upload_id) or upload_id in busy:
            continue
        info = UploadInfo.load(staging, upload_id)
        if info is None or info.expires <= now:
            path.unlink(missing_ok=True)
            removed.add(upload_id)
    return sorted(removed)


@tornado.web.stream_request_body
class UploadHandler(tornado.web.RequestHandler):
    """The tus endpoints: `OPTIONS` and `POST` on the collection, `HEAD` and `PATCH` on `/ID`."""

    SUPPORTED_METHODS = ("OPTIONS", "POST", "HEAD", "PATCH")

    def initialize(self, settings: UploadSettings) -> None:
        """Tornado passes the route's kwargs here."""
        self.upload = settings
        self.owner = ""
        self.info: UploadInfo | None = None
        self._file: int | None = None  # the .part file's descriptor while a PATCH body streams in
        self._received = 0  # body bytes of this PATCH written so far
        self._chunk_hash: Any = None  # the hash of this PATCH's body when Upload-Checksum names one
        self._chunk_digest = b""
        self._failure: tornado.web.HTTPError | None = None  # what stopped the body (the answer once it has ended)
        self._locked = False  # this request holds the upload's PATCH lock

    # -- answers ------------------------------------------------------------------------------------------------

    def set_default_headers(self) -> None:
        """Every answer (errors too) says which tus version it speaks."""
        self.set_header("Tus-Resumable", TUS_VERSION)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """One JSON line `{"error": "..."}` naming what is wrong."""
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, UploadError):
            message = exc.message
            for name, value in exc.headers.items():
                self.set_header(name, value)
        elif isinstance(exc, tornado.web.HTTPError) and exc.log_message:
            message = exc.log_message % exc.args if exc.args else exc.log_message
        else:
            message = self._reason
        self.set_header("Content-Type", "application/json")
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps({"error": " ".join(str(message).split())}) + "\n")

    # -- every request ------------------------------------------------------------------------------------------

    async def prepare(self) -> None:
        """Checks of every request (Tus-Resumable, the caller, the upload); a PATCH also opens its staging file
        here, before the body arrives, so that each piece of the body is written as it comes.

        A PATCH refused here with a body of at most `DRAIN_LIMIT` bytes is answered once its body is read:
        answering first would make tornado close the connection with the body unread, and the client may then
        see the connection reset instead of the answer."""
        try:
            await self._check()
        except tornado.web.HTTPError as exc:
            length = self.request.headers.get("Content-Length", "")
            if self.request.method != "PATCH" or not length.isdigit() or int(length) > DRAIN_LIMIT:
                raise
            self._failure = exc
            self._close_file(keep=False)
            self._release()
            self.request.connection.set_max_body_size(DRAIN_LIMIT)  # type: ignore[union-attr]

    async def _check(self) -> None:
        if self.request.method == "OPTIONS":
            return
        if self.request.headers.get("Tus-Resumable") != TUS_VERSION:
            raise UploadError(412, f"the request needs the header Tus-Resumable: {TUS_VERSION}",
                              headers={"Tus-Version": TUS_VERSION})
        owner = self.upload.identify(self)
        self.owner = await owner if inspect.isawaitable(owner) else owner
        if self.request.method == "POST":
            if self.path_args and self.path_args[0]:
                raise UploadError(405, "POST creates an upload on the collection, not on an upload's URL")
            if self.request.headers.get("Content-Length", "0") not in ("", "0") or \
                    "Transfer-Encoding" in self.request.headers:
                raise UploadError(400, "creation with upload is not supported: send the bytes with PATCH")
            return
        if not self.path_args or not self.path_args[0]:
            raise UploadError(405, f"{self.request.method} needs an upload's URL")
        self.info = self._load(self.path_args[0])
        if self.request.method == "PATCH":
            self._start_patch(self.info)

    def _load(self, upload_id: str) -> UploadInfo:
        """The caller's upload `upload_id`: 404 when there is none or another owner's, 410 when expired."""
        info = UploadInfo.load(self.upload.staging, upload_id)
        if info is None or not secrets.compare_digest(info.owner.encode(), self.owner.encode()):
            raise UploadError(404, f"no upload {upload_id[:64]!r}")
        if info.expires <= self.upload.clock():
            raise UploadError(410, f"upload {upload_id} expired at {http_date(info.expires)}")
        return info

    # -- OPTIONS, POST, HEAD ------------------------------------------------------------------------------------

    def options(self, upload_id: str | None = None) -> None:
        """What the server supports."""
        self.set_header("Tus-Version", TUS_VERSION)
        self.set_header("Tus-Extension", EXTENSIONS)
        self.set_header("Tus-Max-Size", str(self.upload.max_size))
        self.set_header("Tus-Checksum-Algorithm", "sha256")
        self.set_status(204)

    async def post(self, upload_id: str | None = None) -> None:
        """Create an upload: Upload-Length (required), Upload-Metadata (optional; `sha256` is the whole file's
        hex digest, checked when the upload is complete). 201 with its Location."""
        headers = self.request.headers
        if "Upload-Defer-Length" in headers:
            raise UploadError(400, "Upload-Defer-Length is not supported: give Upload-Length")
        length = _non_negative(headers.get("Upload-Length"), "Upload-Length")
        if length > self.upload.max_size:
            raise UploadError(413, f"Upload-Length {length} is above the largest upload, {self.upload.max_size} "
                                   "bytes", headers={"Tus-Max-Size": str(self.upload.max_size)})
        metadata = parse_metadata(headers.get("Upload-Metadata", ""))
        declared = metadata.get("sha256")
        if declared is not None and not _SHA256_HEX.fullmatch(declared):
            raise UploadError(400, "Upload-Metadata: sha256 must be the whole file's digest as 64 lowercase hex "
                                   "digits")
        staging = self.upload.staging
        staging.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(staging).free
        if free - self.upload.disk_reserve < length:
            raise UploadError(507, f"not enough disk space for {length} bytes: {free} free, "
                                   f"{self.upload.disk_reserve} kept in reserve; try again later")
        now = self.upload.clock()
        info = UploadInfo(id=secrets.token_urlsafe(24), owner=self.owner, length=length, metadata=metadata,
                          created=now, expires=now + self.upload.expires_after)
        info.part(staging).touch(exist_ok=False)
        info.save(staging)
        self.info = info
        self.set_status(201)
        base = self.request.path.rstrip("/")
        self.set_header("Location", f"{self.request.protocol}://{self.request.host}{base}/{info.id}")
        self.set_header("Upload-Expires", http_date(info.expires))
        if length == 0:
            await self._complete(info)

    def head(self, upload_id: str) -> None:
        """Where the upload stands: Upload-Offset and Upload-Length (never cached)."""
        info = self.info
        assert info is not None
        self._offset_headers(info)
        if info.metadata:
            self.set_header("Upload-Metadata", ",".join(
                f"{k} {base64.b64encode(v.encode()).decode()}" for k, v in info.metadata.items()))
        self.set_status(200)

    def _offset_headers(self, info: UploadInfo) -> None:
        self.set_header("Upload-Offset", str(info.offset))
        self.set_header("Upload-Length", str(info.length))
        self.set_header("Cache-Control", "no-store")
        if not info.completed:
            self.set_header("Upload-Expires", http_date(info.expires))

    # -- PATCH --------------------------------------------------------------------------------------------------

    def _start_patch(self, info: UploadInfo) -> None:
        """The checks of a PATCH before its body: content type, offset, size, checksum header; then the staging
        file is opened at the committed offset (bytes past it, of a PATCH that never finished, are cut off)."""
        headers = self.request.headers
        content_type = headers.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type != OCTET_STREAM:
            raise UploadError(415, f"PATCH needs Content-Type: {OCTET_STREAM}, not {content_type or 'none'!r}")
        offset = _non_negative(headers.get("Upload-Offset"), "Upload-Offset")
        if info.completed:
            if offset == info.length and headers.get("Content-Length") == "0":
                return  # the client asks again whether its last PATCH completed the upload: it did (204)
            raise UploadError(409, f"upload {info.id} is complete: nothing more to send",
                              headers={"Upload-Offset": str(info.offset)})
        if offset != info.offset:
            raise UploadError(409, f"Upload-Offset {offset} is not the upload's offset, {info.offset}: resume "
                                   "from the offset that HEAD answers", headers={"Upload-Offset": str(info.offset)})
        declared = headers.get("Content-Length")
        if declared is not None:
            size = _non_negative(declared, "Content-Length")
            if offset + size > info.length:
                raise UploadError(413, f"{size} bytes at offset {offset} go past Upload-Length {info.length}")
        # a chunked body a little past the length reaches data_received (413); far past it, tornado cuts it off
        self.request.connection.set_max_body_size(info.length - offset + 65536)  # type: ignore[union-attr]
        checksum = headers.get("Upload-Checksum")
        if checksum is not None:
            algorithm, _, value = checksum.strip().partition(" ")
            if algorithm != "sha256":
                raise UploadError(400, f"Upload-Checksum: algorithm {algorithm!r} is not supported (sha256 is)")
            try:
                self._chunk_digest = base64.b64decode(value.strip(), validate=True)
            except binascii.Error:
                raise UploadError(400, "Upload-Checksum: the digest is not base64") from None
            if len(self._chunk_digest) != hashlib.sha256().digest_size:
                raise UploadError(400, "Upload-Checksum: a sha256 digest is 32 bytes")
            self._chunk_hash = hashlib.sha256()
        with self.upload._lock:
            if info.id in self.upload._active:
                raise UploadError(423, f"another PATCH of upload {info.id} is in progress",
                                  reason="Locked")
            self.upload._active.add(info.id)
            self._locked = True
        part = info.part(self.upload.staging)
        try:
            fd = os.open(part, os.O_WRONLY)
            if os.fstat(fd).st_size > offset:
                os.ftruncate(fd, offset)
            os.lseek(fd, offset, os.SEEK_SET)
        except OSError as exc:
            self._release()
            raise UploadError(500, f"cannot open the staging file of upload {info.id}: {exc.strerror}") from None
        self._file = fd

    def data_received(self, chunk: bytes) -> None:
        """A piece of the PATCH body: written to the staging file at once (and hashed when a checksum is due)."""
        if self._file is None or self._failure is not None:
            return  # the answer is decided: the rest of the body is read and dropped
        assert self.info is not None
        if self.info.offset + self._received + len(chunk) > self.info.length:
            self._failure = UploadError(413, f"the body goes past Upload-Length {self.info.length}: this PATCH "
                                             "is discarded")
            return
        view = memoryview(chunk)
        while view:
            try:
                written = os.write(self._file, view)
            except OSError as exc:
                self._failure = _write_failure(exc, self.info, checked=self._chunk_hash is not None)
                return
            if self._chunk_hash is not None:
                self._chunk_hash.update(view[:written])
            self._received += written
            view = view[written:]

    async def patch(self, upload_id: str) -> None:
        """The body has arrived: verify the chunk, commit the new offset, and complete the upload at its end."""
        failure, info = self._failure, self.info
        if failure is None and self._chunk_hash is not None and \
                not secrets.compare_digest(self._chunk_hash.digest(), self._chunk_digest):
            failure = UploadError(460, f"Upload-Checksum does not match the {self._received} bytes received at "
                                       f"offset {info.offset if info else 0}: the chunk is discarded, send it again",
                                  reason="Checksum Mismatch")
        # a disk that filled up keeps the bytes written, unless they were to be checked as one chunk
        keep = failure is None or (failure.status_code == 507 and self._chunk_hash is None)
        try:
            self._close_file(keep=keep)
        finally:
            self._release()
        if failure is not None:
            if isinstance(failure, UploadError) and info is not None:
                failure.headers["Upload-Offset"] = str(info.offset)
            raise failure
        assert info is not None
        if info.offset == info.length and not info.completed:
            await self._complete(info)
        self._offset_headers(info)
        self.set_status(204)

    def _close_file(self, keep: bool) -> None:
        """Close the staging file; with `keep`, the bytes of this PATCH count (synced to disk, then the new
        offset saved); without, they are cut off."""
        fd, self._file = self._file, None
        if fd is None or self.info is None:
            return
        try:
            if keep and self._received:
                os.fsync(fd)
                self.info.offset += self._received
                self.info.save(self.upload.staging)
            elif os.fstat(fd).st_size > self.info.offset:
                os.ftruncate(fd, self.info.offset)
        finally:
            os.close(fd)
            self._received = 0

    def _release(self) -> None:
        """Let the next PATCH of this upload in."""
        if self._locked and self.info is not None:
            with self.upload._lock:
                self.upload._active.discard(self.info.id)
            self._locked = False

    def on_connection_close(self) -> None:
        """The client went away in the middle of a PATCH: the bytes written count, unless a checksum was due."""
        try:
            self._close_file(keep=self._chunk_hash is None and self._failure is None)
        except OSError:
            pass
        finally:
            self._release()

    def on_finish(self) -> None:
        """An answer sent before the body ended (a refusal in prepare) still closes the file and the lock."""
        self.on_connection_close()

    # -- completion ---------------------------------------------------------------------------------------------

    async def _complete(self, info: UploadInfo) -> None:
        """All bytes are in: check the declared sha256, hand the file to the application, mark it complete."""
        staging = self.upload.staging
        part = info.part(staging)
        declared = info.metadata.get("sha256")
        if declared is not None:
            actual = await asyncio.get_running_loop().run_in_executor(None, _sha256_file, part)  # off the loop
            if actual != declared:
                _remove(staging, info.id)
                raise UploadError(422, f"the whole file's sha256 is {actual}, not the {declared} declared at "
                                       "creation: the upload is discarded, start again")
        if self.upload.on_complete is not None:
            try:
                result = self.upload.on_complete(part, dict(info.metadata), info.owner)
                if inspect.isawaitable(result):
                    await result
            except HarnessError as exc:
                _remove(staging, info.id)
                raise UploadError(422, str(exc)) from None
        part.unlink(missing_ok=True)
        info.completed = True
        info.save(staging)


Route = tuple[str, type["UploadHandler"], dict[str, UploadSettings]]


def upload_routes(prefix: str, settings: UploadSettings, handler: type[UploadHandler] | None = None) -> list[Route]:
    """The two routes of an upload endpoint at `prefix` (e.g. `/uploads`): the collection and one upload, served
    by `handler` (UploadHandler, or a subclass of it that adds, say, CORS headers)."""
    base = re.escape(prefix.rstrip("/"))
    kwargs = {"settings": settings}
    cls = handler or UploadHandler
    return [(rf"{base}/?()", cls, kwargs), (rf"{base}/([^/]+)", cls, kwargs)]


def _non_negative(value: str | None, name: str) -> int:
    if value is None:
        raise UploadError(400, f"the request needs the header {name}")
    if not value.isascii() or not value.isdigit() or len(value) > 20:
        raise UploadError(400, f"{name} must be a non-negative integer, not {value[:40]!r}")
    return int(value)


def _write_failure(exc: OSError, info: UploadInfo, checked: bool) -> UploadError:
    """The answer to a failed write of the staging file (507 when the disk is full)."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        kept = "this chunk is discarded (its checksum cannot be checked)" if checked else \
            "the bytes written so far are kept"
        return UploadError(507, f"the disk is full while writing upload {info.id}: {kept}; resume later from the "
                                "offset HEAD answers")
    return UploadError(500, f"cannot write upload {info.id}: {exc.strerror}")


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _remove(staging: Path, upload_id: str) -> None:
    for suffix in ("part", "json"):
        (staging / f"{upload_id}.{suffix}").unlink(missing_ok=True)
