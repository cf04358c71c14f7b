"""The portal's tus uploads (harness/portal/uploads.py) and their client (harness/portal/upload_client.py), over
real HTTP: a tornado server on 127.0.0.1 runs in a thread of the test process, requests talks to it. Nothing
waits on time: the server thread signals when it listens and when it has stopped, an expiry is a clock the test
moves, and an upload is interrupted by the test's own progress callback."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import os
import shutil
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
import requests
import tornado.httpserver
import tornado.netutil
import tornado.web

from harness.errors import HarnessError
from harness.portal.upload_client import UploadProgress, upload
from harness.portal.uploads import TUS_VERSION, UploadHandler, UploadSettings, sweep_expired, upload_routes

TUS = {"Tus-Resumable": TUS_VERSION}
OCTETS = "application/offset+octet-stream"
KiB, MiB = 1 << 10, 1 << 20


def bearer_owner(handler: tornado.web.RequestHandler) -> str:
    """The test's notion of a caller: `Authorization: Bearer OWNER` (401 without one)."""
    kind, _, token = handler.request.headers.get("Authorization", "").partition(" ")
    if kind != "Bearer" or not token:
        raise tornado.web.HTTPError(401, "the request needs Authorization: Bearer TOKEN")
    return token


@dataclass
class Received:
    """The completion plug-in: each complete upload's file is moved to `folder` as OWNER-N, with its metadata."""

    folder: Path
    uploads: list[tuple[Path, dict[str, str], str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, path: Path, metadata: Mapping[str, str], owner: str) -> None:
        with self.lock:
            target = self.folder / f"{owner}-{len(self.uploads)}"
            self.folder.mkdir(parents=True, exist_ok=True)
            shutil.move(path, target)
            self.uploads.append((target, dict(metadata), owner))

    def only(self) -> tuple[Path, dict[str, str], str]:
        assert len(self.uploads) == 1, self.uploads
        return self.uploads[0]


class ServerThread:
    """A tornado server of one upload route on 127.0.0.1 (a free port) in its own thread and event loop."""

    def __init__(self, settings: UploadSettings, handler: type[UploadHandler] = UploadHandler) -> None:
        self.settings, self.handler = settings, handler
        self.port = 0
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=asyncio.run, args=(self._serve(),), daemon=True)

    async def _serve(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
        self.port = sockets[0].getsockname()[1]
        server = tornado.httpserver.HTTPServer(tornado.web.Application(upload_routes("/uploads", self.settings,
                                                                                          self.handler)))
        server.add_sockets(sockets)
        self._ready.set()
        await self._stop.wait()
        server.stop()
        await server.close_all_connections()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/uploads"

    def __enter__(self) -> ServerThread:
        self._thread.start()
        assert self._ready.wait(30), "the server did not start"
        return self

    def stop(self) -> None:
        """Stop listening, close every connection (a PATCH in flight sees its connection close), end the thread."""
        if self._thread.is_alive():
            assert self._loop is not None and self._stop is not None
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(30)
            assert not self._thread.is_alive(), "the server did not stop"

    def __exit__(self, *exc: object) -> None:
        self.stop()




@pytest.fixture
def received(tmp_path: Path) -> Received:
    return Received(tmp_path / "received")


@pytest.fixture
def settings(tmp_path: Path, received: Received) -> UploadSettings:
    return UploadSettings(staging=tmp_path / "staging", identify=bearer_owner, on_complete=received, disk_reserve=0)


#: `servers(settings, handler=UploadHandler)` starts a server (stopped at the end of the test)
Servers = Callable[..., ServerThread]


@pytest.fixture
def servers() -> Iterator[Servers]:
    """Start servers (each stopped at the end of the test, unless the test stopped it)."""
    with contextlib.ExitStack() as stack:
        started: list[ServerThread] = []

        def start(settings: UploadSettings, handler: type[UploadHandler] = UploadHandler) -> ServerThread:
            started.append(stack.enter_context(ServerThread(settings, handler)))
            return started[-1]

        yield start


@pytest.fixture
def server(servers: Servers, settings: UploadSettings) -> ServerThread:
    return servers(settings)


def metadata(**pairs: str) -> str:
    return ",".join(f"{k} {base64.b64encode(v.encode()).decode()}" for k, v in pairs.items())


def auth(owner: str = "team-a") -> dict[str, str]:
    return {**TUS, "Authorization": f"Bearer {owner}"}


def create(server: ServerThread, data: bytes, owner: str = "team-a", **pairs: str) -> str:
    """A new upload of `data` (its sha256 declared unless `pairs` says otherwise): its URL."""
    pairs = {"sha256": hashlib.sha256(data).hexdigest(), **pairs}
    created = requests.post(server.url, headers={**auth(owner), "Upload-Length": str(len(data)),
                                                 "Upload-Metadata": metadata(**pairs)}, timeout=30)
    assert created.status_code == 201, created.text
    return created.headers["Location"]


def patch(url: str, data: bytes, offset: int, owner: str = "team-a", checksum: bytes | None = None,
          headers: Mapping[str, str] | None = None) -> requests.Response:
    sent = {**auth(owner), "Content-Type": OCTETS, "Upload-Offset": str(offset), **(headers or {})}
    if checksum is not None:
        sent["Upload-Checksum"] = f"sha256 {base64.b64encode(checksum).decode()}"
    return requests.patch(url, data=data, headers=sent, timeout=60)


def offset_of(url: str, owner: str = "team-a") -> int:
    head = requests.head(url, headers=auth(owner), timeout=30)
    assert head.status_code == 200, head.status_code
    return int(head.headers["Upload-Offset"])


def error_of(answer: requests.Response) -> str:
    """The answer's one-line error (and its JSON body is exactly that)."""
    assert answer.headers["Tus-Resumable"] == TUS_VERSION
    assert answer.text.count("\n") == 1 and answer.text.endswith("\n"), answer.text
    body = answer.json()
    assert list(body) == ["error"]
    return str(body["error"])


def random_file(path: Path, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(os.urandom(size))
    return path


def test_options_says_what_the_server_supports(server: ServerThread) -> None:
    answer = requests.options(server.url, timeout=30)  # no Tus-Resumable needed here
    assert answer.status_code == 204
    assert answer.headers["Tus-Version"] == TUS_VERSION
    assert answer.headers["Tus-Extension"] == "creation,checksum,expiration"
    assert answer.headers["Tus-Max-Size"] == str(server.settings.max_size)
    assert answer.headers["Tus-Checksum-Algorithm"] == "sha256"


def test_a_complete_upload_reaches_the_application_byte_identical(server: ServerThread, received: Received,
                                                                   tmp_path: Path) -> None:
    source = random_file(tmp_path / "sub.tar.gz", 300 * KiB + 7)
    seen: list[UploadProgress] = []
    url = upload(server.url, source, "team-a", {"track": "en-de"}, progress=seen.append, chunk_size=64 * KiB)
    path, meta, owner = received.only()
    assert path.read_bytes() == source.read_bytes()
    assert meta == {"track": "en-de", "sha256": hashlib.sha256(source.read_bytes()).hexdigest()}
    assert owner == "team-a"
    assert [p.offset for p in seen] == [0, *range(64 * KiB, 300 * KiB, 64 * KiB), 300 * KiB + 7]
    assert {p.url for p in seen} == {url} and url.startswith(server.url + "/")
    assert offset_of(url) == 300 * KiB + 7  # the finished upload still answers HEAD until it expires
    assert sorted(p.name for p in server.settings.staging.iterdir()) == [url.rsplit("/", 1)[1] + ".json"]


class Interrupt(Exception):
    """The test's way of stopping a client between chunks."""


def stop_after(chunks: int, seen: list[UploadProgress]) -> Callable[[UploadProgress], None]:
    def progress(where: UploadProgress) -> None:
        seen.append(where)
        if len(seen) > chunks:
            raise Interrupt
    return progress


def test_an_interrupted_upload_resumes_from_the_servers_offset(server: ServerThread, received: Received,
                                                               tmp_path: Path) -> None:
    source = random_file(tmp_path / "sub.tar.gz", 500 * KiB)
    first: list[UploadProgress] = []
    with pytest.raises(Interrupt):
        upload(server.url, source, "team-a", progress=stop_after(3, first), chunk_size=64 * KiB)
    url = first[-1].url
    assert offset_of(url) == 3 * 64 * KiB and received.uploads == []
    second: list[UploadProgress] = []
    assert upload(server.url, source, "team-a", resume=url, progress=second.append, chunk_size=64 * KiB) == url
    assert second[0].offset == 3 * 64 * KiB
    path, meta, _ = received.only()
    assert path.read_bytes() == source.read_bytes()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == meta["sha256"]


def test_a_restarted_server_resumes_the_upload_from_its_staging_folder(
        servers: Servers, settings: UploadSettings, received: Received,
        tmp_path: Path) -> None:
    source = random_file(tmp_path / "sub.tar.gz", 500 * KiB)
    seen: list[UploadProgress] = []
    with ServerThread(settings) as old:
        with pytest.raises(Interrupt):
            upload(old.url, source, "team-a", progress=stop_after(2, seen), chunk_size=64 * KiB)
    new = servers(replace(settings))  # another server object, the same staging folder
    url = seen[-1].url.replace(old.url, new.url)
    assert offset_of(url) == 2 * 64 * KiB
    upload(new.url, source, "team-a", resume=url, chunk_size=64 * KiB)
    assert received.only()[0].read_bytes() == source.read_bytes()


class Watched(UploadHandler):
    """The upload handler with two signals for the test: `written` once a PATCH has written half a MiB of its body,
    `closed` once a PATCH whose client went away has committed what it wrote."""

    written = threading.Event()
    closed = threading.Event()

    def data_received(self, chunk: bytes) -> None:
        super().data_received(chunk)
        if self._received >= 512 * KiB:
            type(self).written.set()

    def on_connection_close(self) -> None:
        super().on_connection_close()
        type(self).closed.set()


def watched() -> type[Watched]:
    """A Watched handler class with its own events."""
    class Here(Watched):
        written = threading.Event()
        closed = threading.Event()
    return Here


@pytest.mark.parametrize("who", ["client", "server"])
def test_a_patch_cut_in_the_middle_keeps_what_was_written_and_the_upload_resumes(
        who: str, servers: Servers, settings: UploadSettings, received: Received,
        tmp_path: Path) -> None:
    """A PATCH without a checksum stops half-way, after the server has written at least half a MiB of it: the client
    goes away, or the server stops (and another starts on the same staging folder). The bytes written count, and
    the resumed upload is byte-identical."""
    handler = watched()
    source = random_file(tmp_path / "sub.tar.gz", 2 * MiB)
    data = source.read_bytes()
    released = threading.Event()
    outcome: list[object] = []

    def body() -> Iterator[bytes]:
        yield data[:MiB]
        assert handler.written.wait(60)
        if who == "client":
            raise Interrupt  # requests closes the connection
        released.wait(60)

    def send(url: str) -> None:
        try:
            outcome.append(requests.patch(url, data=body(), headers={**auth(), "Content-Type": OCTETS,
                                                                     "Upload-Offset": "0"}, timeout=60))
        except (Interrupt, requests.RequestException) as exc:
            outcome.append(exc)

    old = servers(replace(settings), handler)
    url = create(old, data)
    sender = threading.Thread(target=send, args=(url,))
    sender.start()
    assert handler.written.wait(60)
    if who == "client":
        sender.join(60)
        assert handler.closed.wait(60)
        new = old
    else:
        old.stop()
        released.set()
        sender.join(60)
        new = servers(replace(settings))  # another server object, the same staging folder
        url = url.replace(old.url, new.url)
    assert len(outcome) == 1 and not isinstance(outcome[0], requests.Response)
    committed = offset_of(url)
    print(f"cut by the {who}: {committed} of the {MiB} bytes sent were committed")
    assert 512 * KiB <= committed <= MiB
    upload(new.url, source, "team-a", resume=url, chunk_size=256 * KiB)
    assert received.only()[0].read_bytes() == data


def test_a_second_patch_while_one_is_writing_is_423(servers: Servers, settings: UploadSettings,
                                                    received: Received) -> None:
    handler = watched()
    server = servers(settings, handler)
    data = os.urandom(2 * MiB)
    url = create(server, data)
    released = threading.Event()
    outcome: list[requests.Response] = []

    def body() -> Iterator[bytes]:
        yield data[:MiB]
        released.wait(60)
        yield data[MiB:]

    sender = threading.Thread(target=lambda: outcome.append(requests.patch(
        url, data=body(), headers={**auth(), "Content-Type": OCTETS, "Upload-Offset": "0"}, timeout=60)))
    sender.start()
    assert handler.written.wait(60)
    answer = patch(url, data[:100], 0)
    released.set()
    sender.join(60)
    assert answer.status_code == 423
    assert error_of(answer) == f"another PATCH of upload {url.rsplit('/', 1)[1]} is in progress"
    assert [a.status_code for a in outcome] == [204]
    assert received.only()[0].read_bytes() == data


def test_a_failed_chunk_is_sent_again_a_bounded_number_of_times(servers: Servers,
                                                                settings: UploadSettings, received: Received,
                                                                tmp_path: Path) -> None:
    """A gatekeeper that answers 503 to the PATCHes it is told to: the client sends the chunk again from the
    server's offset, and gives up after `retries` failures in a row."""
    failing: set[int] = set()
    patches: list[int] = []

    def gatekeeper(handler: tornado.web.RequestHandler) -> str:
        if handler.request.method == "PATCH":
            patches.append(int(handler.request.headers["Upload-Offset"]))
            if len(patches) in failing or -1 in failing:
                raise tornado.web.HTTPError(503, "the gatekeeper says no")
        return bearer_owner(handler)

    server = servers(replace(settings, identify=gatekeeper))
    source = random_file(tmp_path / "sub.tar.gz", 200 * KiB)
    failing.update({2, 3})  # the second chunk fails twice, then goes through
    upload(server.url, source, "team-a", chunk_size=64 * KiB, retries=2, backoff=0)
    assert patches == [0, 64 * KiB, 64 * KiB, 64 * KiB, 128 * KiB, 192 * KiB]
    assert received.only()[0].read_bytes() == source.read_bytes()
    patches.clear()
    failing.add(-1)
    with pytest.raises(HarnessError, match=r"sub.tar.gz: the chunk at offset 0 failed 3 times, last: 503 the "
                                           r"gatekeeper says no; resume with the upload URL http"):
        upload(server.url, source, "team-a", chunk_size=64 * KiB, retries=2, backoff=0)
    assert patches == [0, 0, 0]


def test_bytes_past_the_committed_offset_are_cut_off_by_the_next_patch(server: ServerThread,
                                                                      received: Received) -> None:
    """What a server killed in the middle of a PATCH leaves: bytes in the staging file that its state file does
    not count. HEAD answers the committed offset and the next PATCH writes from there."""
    data = os.urandom(1000)
    url = create(server, data)
    assert patch(url, data[:300], 0).status_code == 204
    part = server.settings.staging / (url.rsplit("/", 1)[1] + ".part")
    with part.open("ab") as f:
        f.write(b"half of a lost PATCH")
    assert offset_of(url) == 300
    assert patch(url, data[300:], 300).status_code == 204
    assert received.only()[0].read_bytes() == data


def test_resuming_a_changed_file_starts_a_new_upload(server: ServerThread, received: Received,
                                                     tmp_path: Path) -> None:
    source = random_file(tmp_path / "sub.tar.gz", 200 * KiB)
    seen: list[UploadProgress] = []
    with pytest.raises(Interrupt):
        upload(server.url, source, "team-a", progress=stop_after(1, seen), chunk_size=64 * KiB)
    random_file(source, 200 * KiB)
    url = upload(server.url, source, "team-a", resume=seen[-1].url, chunk_size=64 * KiB)
    assert url != seen[-1].url
    assert received.only()[0].read_bytes() == source.read_bytes()


def test_an_empty_file_is_complete_at_creation(server: ServerThread, received: Received, tmp_path: Path) -> None:
    source = tmp_path / "empty.tar.gz"
    source.write_bytes(b"")
    url = upload(server.url, source, "team-a")
    assert received.only()[0].read_bytes() == b""
    assert offset_of(url) == 0


def test_the_application_refuses_a_complete_upload_with_one_line(
        servers: Servers, settings: UploadSettings, tmp_path: Path) -> None:
    """The completion plug-in (here a coroutine) raises a HarnessError: 422 with its line, the upload is gone."""
    seen: list[str] = []

    async def refuse(path: Path, meta: Mapping[str, str], owner: str) -> None:
        seen.append(path.read_text(encoding="utf-8"))
        raise HarnessError(f"{meta['name']}: not a submission archive")

    server = servers(replace(settings, on_complete=refuse))
    source = tmp_path / "notes.txt"
    source.write_text("hello", encoding="utf-8")
    with pytest.raises(HarnessError, match=r"^notes.txt: chunk at offset 0 refused \(422\): notes.txt: not a "
                                           r"submission archive$"):
        upload(server.url, source, "team-a", {"name": "notes.txt"})
    assert seen == ["hello"]
    assert list(server.settings.staging.iterdir()) == []


def test_an_offset_that_is_not_the_servers_is_409(server: ServerThread) -> None:
    url = create(server, b"0123456789")
    answer = patch(url, b"56789", offset=5)
    assert answer.status_code == 409
    assert answer.headers["Upload-Offset"] == "0"
    assert error_of(answer) == "Upload-Offset 5 is not the upload's offset, 0: resume from the offset that HEAD answers"
    assert patch(url, b"01234", offset=0).status_code == 204
    assert patch(url, b"01234", offset=0).status_code == 409
    assert offset_of(url) == 5


def test_a_wrong_content_type_is_415(server: ServerThread) -> None:
    url = create(server, b"0123456789")
    answer = patch(url, b"01234", offset=0, headers={"Content-Type": "application/octet-stream"})
    assert answer.status_code == 415
    assert error_of(answer) == "PATCH needs Content-Type: application/offset+octet-stream, not " \
                               "'application/octet-stream'"
    assert offset_of(url) == 0


def test_a_chunk_with_a_wrong_checksum_is_460_and_discarded(server: ServerThread, received: Received) -> None:
    data = b"0123456789"
    url = create(server, data)
    assert patch(url, data[:4], 0, checksum=hashlib.sha256(data[:4]).digest()).status_code == 204
    answer = patch(url, data[4:], 4, checksum=hashlib.sha256(b"something else").digest())
    assert answer.status_code == 460 and answer.reason == "Checksum Mismatch"
    assert error_of(answer) == "Upload-Checksum does not match the 6 bytes received at offset 4: the chunk is " \
                               "discarded, send it again"
    assert offset_of(url) == 4
    part = server.settings.staging / (url.rsplit("/", 1)[1] + ".part")
    assert part.read_bytes() == data[:4]
    assert patch(url, data[4:], 4, checksum=hashlib.sha256(data[4:]).digest()).status_code == 204
    assert received.only()[0].read_bytes() == data


def test_a_checksum_of_another_algorithm_is_400(server: ServerThread) -> None:
    url = create(server, b"0123456789")
    answer = patch(url, b"0123456789", 0, headers={"Upload-Checksum": "md5 eB5eJF1ptWaXm4bijSPyxw=="})
    assert answer.status_code == 400
    assert error_of(answer) == "Upload-Checksum: algorithm 'md5' is not supported (sha256 is)"


def test_a_whole_file_that_does_not_match_its_declared_sha256_is_refused(server: ServerThread,
                                                                         received: Received) -> None:
    url = create(server, b"0123456789", sha256=hashlib.sha256(b"another file").hexdigest())
    assert patch(url, b"01234", 0).status_code == 204
    answer = patch(url, b"56789", 5)
    assert answer.status_code == 422
    assert error_of(answer) == (f"the whole file's sha256 is {hashlib.sha256(b'0123456789').hexdigest()}, not the "
                                f"{hashlib.sha256(b'another file').hexdigest()} declared at creation: the upload is "
                                "discarded, start again")
    assert received.uploads == []
    assert requests.head(url, headers=auth(), timeout=30).status_code == 404
    assert list(server.settings.staging.iterdir()) == []


@pytest.mark.parametrize("method", ["POST", "HEAD", "PATCH"])
def test_a_request_without_tus_resumable_is_412(server: ServerThread, method: str) -> None:
    url = create(server, b"0123456789")
    headers = {"Authorization": "Bearer team-a", "Upload-Length": "10", "Content-Type": OCTETS, "Upload-Offset": "0"}
    answer = requests.request(method, server.url if method == "POST" else url, headers=headers,
                              data=b"0123456789" if method == "PATCH" else None, timeout=30)
    assert answer.status_code == 412
    assert answer.headers["Tus-Version"] == TUS_VERSION and answer.headers["Tus-Resumable"] == TUS_VERSION
    if method != "HEAD":
        assert error_of(answer) == "the request needs the header Tus-Resumable: 1.0.0"
    assert offset_of(url) == 0


def test_an_upload_above_the_maximum_is_413_and_a_patch_past_the_length_is_refused(
        servers: Servers, settings: UploadSettings) -> None:
    server = servers(replace(settings, max_size=1000))
    answer = requests.post(server.url, headers={**auth(), "Upload-Length": "1001"}, timeout=30)
    assert answer.status_code == 413
    assert error_of(answer) == "Upload-Length 1001 is above the largest upload, 1000 bytes"
    url = create(server, b"0123456789")
    answer = patch(url, b"0123456789ab", 0)
    assert answer.status_code == 413
    assert error_of(answer) == "12 bytes at offset 0 go past Upload-Length 10"
    answer = requests.patch(url, data=iter([b"01234", b"56789ab"]), headers={**auth(), "Content-Type": OCTETS,
                                                                             "Upload-Offset": "0"}, timeout=30)
    assert answer.status_code == 413  # a chunked body: refused when it gets there, and none of it kept
    assert error_of(answer) == "the body goes past Upload-Length 10: this PATCH is discarded"
    assert offset_of(url) == 0


def test_another_owners_upload_is_404_and_no_caller_is_401(server: ServerThread) -> None:
    url = create(server, b"0123456789", owner="team-a")
    for answer in (requests.head(url, headers=auth("team-b"), timeout=30), patch(url, b"01234", 0, owner="team-b")):
        assert answer.status_code == 404
    assert error_of(patch(url, b"01234", 0, owner="team-b")) == f"no upload {url.rsplit('/', 1)[1]!r}"
    answer = requests.head(url, headers=TUS, timeout=30)
    assert answer.status_code == 401
    answer = requests.post(server.url, headers={**TUS, "Upload-Length": "10"}, timeout=30)
    assert error_of(answer) == "the request needs Authorization: Bearer TOKEN"
    assert offset_of(url, "team-a") == 0


def test_an_expired_upload_is_410_and_swept(servers: Servers,
                                            settings: UploadSettings) -> None:
    now = [1_700_000_000.0]
    server = servers(replace(settings, expires_after=3600.0, clock=lambda: now[0]))
    created = requests.post(server.url, headers={**auth(), "Upload-Length": "10"}, timeout=30)
    assert created.headers["Upload-Expires"] == "Tue, 14 Nov 2023 23:13:20 GMT"  # 1_700_003_600
    url = created.headers["Location"]
    assert patch(url, b"01234", 0).status_code == 204
    kept = create(server, b"x")
    now[0] += 3599.0
    assert offset_of(url) == 5
    assert sweep_expired(server.settings.staging, now[0]) == [] and server.settings.sweep() == []
    now[0] += 1.0
    for answer in (requests.head(url, headers=auth(), timeout=30), patch(url, b"56789", 5)):
        assert answer.status_code == 410
    assert error_of(patch(url, b"56789", 5)) == f"upload {url.rsplit('/', 1)[1]} expired at Tue, 14 Nov 2023 " \
                                                "23:13:20 GMT"
    upload_id, kept_id = url.rsplit("/", 1)[1], kept.rsplit("/", 1)[1]
    assert server.settings.sweep() == sorted([upload_id, kept_id])
    assert list(server.settings.staging.iterdir()) == []
    assert requests.head(url, headers=auth(), timeout=30).status_code == 404


def test_no_room_on_disk_is_507_at_creation(servers: Servers,
                                            settings: UploadSettings) -> None:
    free = shutil.disk_usage(settings.staging.parent).free
    server = servers(replace(settings, disk_reserve=free + (1 << 40)))
    answer = requests.post(server.url, headers={**auth(), "Upload-Length": "10"}, timeout=30)
    assert answer.status_code == 507
    assert error_of(answer).startswith("not enough disk space for 10 bytes: ")
    assert error_of(answer).endswith(" kept in reserve; try again later")


def test_a_full_disk_while_writing_is_507_and_the_upload_resumes_once_there_is_room(
        server: ServerThread, received: Received) -> None:
    """The staging file is swapped for /dev/full (every write fails with ENOSPC) between two PATCHes."""
    data = os.urandom(10_000)
    url = create(server, data)
    assert patch(url, data[:4000], 0).status_code == 204
    part = server.settings.staging / (url.rsplit("/", 1)[1] + ".part")
    aside = part.rename(part.with_suffix(".aside"))
    part.symlink_to("/dev/full")
    answer = patch(url, data[4000:], 4000)
    assert answer.status_code == 507 and answer.headers["Upload-Offset"] == "4000"
    assert error_of(answer) == f"the disk is full while writing upload {url.rsplit('/', 1)[1]}: the bytes written " \
                               "so far are kept; resume later from the offset HEAD answers"
    answer = patch(url, data[4000:], 4000, checksum=hashlib.sha256(data[4000:]).digest())
    assert answer.status_code == 507 and "this chunk is discarded (its checksum cannot be checked)" in answer.text
    part.unlink()
    aside.rename(part)
    assert offset_of(url) == 4000
    assert patch(url, data[4000:], 4000).status_code == 204
    assert received.only()[0].read_bytes() == data


def test_twenty_owners_upload_at_once(server: ServerThread, received: Received, tmp_path: Path) -> None:
    owners = [f"team-{i:02d}" for i in range(20)]
    sources = {owner: random_file(tmp_path / "sources" / owner, 100 * KiB + 37 * i) for i, owner in enumerate(owners)}
    start = threading.Barrier(len(owners))
    failures: list[BaseException] = []

    def run(owner: str) -> None:
        try:
            start.wait(60)
            upload(server.url, sources[owner], owner, {"owner": owner}, chunk_size=16 * KiB)
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(owner,)) for owner in owners]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert failures == []
    assert sorted(owner for _, _, owner in received.uploads) == owners
    for path, meta, owner in received.uploads:
        assert meta["owner"] == owner and path.read_bytes() == sources[owner].read_bytes()


class Generated:
    """`size` bytes made one 1 MiB block at a time (each block its number, then the same random bytes), with a
    length: requests sends it with a Content-Length, block by block. Sampling VmRSS as blocks are made gives the
    peak memory of the process (server thread included) during the upload."""

    def __init__(self, size: int, base: bytes) -> None:
        self.size, self.base, self.peak_rss = size, base, 0

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[bytes]:
        for number, start in enumerate(range(0, self.size, MiB)):
            if number % 8 == 0:
                self.peak_rss = max(self.peak_rss, rss())
            yield (number.to_bytes(8, "big") + self.base[8:])[:self.size - start]


def rss(field_name: str = "VmRSS") -> int:
    """This process's resident memory (or its peak, VmHWM) in bytes, from /proc/self/status."""
    for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1]) * KiB
    raise AssertionError(f"no {field_name} in /proc/self/status")


@pytest.mark.slow
def test_a_256_mib_upload_is_streamed_without_the_server_growing(server: ServerThread, received: Received) -> None:
    size = 256 * MiB
    body = Generated(size, os.urandom(MiB))
    whole = hashlib.sha256()
    for block in body:
        whole.update(block)
    created = requests.post(server.url, headers={**auth(), "Upload-Length": str(size),
                                                 "Upload-Metadata": metadata(sha256=whole.hexdigest())}, timeout=30)
    assert created.status_code == 201
    url = created.headers["Location"]
    assert patch(url, b"", 0).status_code == 204  # the first request on the path: its allocations are made
    before = rss()
    try:
        Path("/proc/self/clear_refs").write_text("5", encoding="ascii")  # VmHWM starts again from VmRSS
        peak_known = True
    except OSError:
        peak_known = False  # the samples taken while the body is made are the measure
    answer = requests.patch(url, data=body, headers={**auth(), "Content-Type": OCTETS, "Upload-Offset": "0"},
                            timeout=600)
    assert answer.status_code == 204, answer.text
    peak = max(body.peak_rss, rss("VmHWM") if peak_known else 0, rss())
    growth = peak - before
    print(f"VmRSS before {before / MiB:.1f} MiB, peak during the upload {peak / MiB:.1f} MiB: "
          f"+{growth / MiB:.1f} MiB for a {size // MiB} MiB upload")
    assert growth < 64 * MiB
    path, meta, _ = received.only()
    assert path.stat().st_size == size and meta["sha256"] == whole.hexdigest()
