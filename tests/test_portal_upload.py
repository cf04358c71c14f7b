"""The portal's tus uploads (harness/portal/uploads.py) and their client (harness/portal/upload_client.py), over
real HTTP: a tornado server on 127.0.0.1 runs in a thread of the test process, requests talks to it."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
import tornado.httpserver
import tornado.netutil
import tornado.web

from harness.portal.uploads import TUS_VERSION, UploadSettings, upload_routes

TUS = {"Tus-Resumable": TUS_VERSION}


def bearer_owner(handler: tornado.web.RequestHandler) -> str:
    """The test's notion of a caller: `Authorization: Bearer OWNER` (401 without one)."""
    kind, _, token = handler.request.headers.get("Authorization", "").partition(" ")
    if kind != "Bearer" or not token:
        raise tornado.web.HTTPError(401, "the request needs Authorization: Bearer TOKEN")
    return token


class ServerThread:
    """A tornado server of one upload route on 127.0.0.1 (a free port) in its own thread and event loop."""

    def __init__(self, settings: UploadSettings) -> None:
        self.settings = settings
        self.port = 0
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=asyncio.run, args=(self._serve(),), daemon=True)

    async def _serve(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
        self.port = sockets[0].getsockname()[1]
        server = tornado.httpserver.HTTPServer(tornado.web.Application(upload_routes("/uploads", self.settings)))
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

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)
        assert not self._thread.is_alive(), "the server did not stop"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerThread]:
    settings = UploadSettings(staging=tmp_path / "staging", identify=bearer_owner, disk_reserve=0)
    with ServerThread(settings) as running:
        yield running


def metadata(**pairs: str) -> str:
    return ",".join(f"{k} {base64.b64encode(v.encode()).decode()}" for k, v in pairs.items())


def test_creation_answers_201_with_a_location_and_head_answers_offset_zero(server: ServerThread) -> None:
    auth = {"Authorization": "Bearer team-a"}
    data = b"hello portal"
    created = requests.post(server.url, headers={**TUS, **auth, "Upload-Length": str(len(data)),
                                                 "Upload-Metadata": metadata(
                                                     name="sub.tar.gz", sha256=hashlib.sha256(data).hexdigest())},
                            timeout=30)
    assert created.status_code == 201, created.text
    assert created.headers["Tus-Resumable"] == TUS_VERSION
    location = created.headers["Location"]
    assert location.startswith(server.url + "/")
    head = requests.head(location, headers={**TUS, **auth}, timeout=30)
    assert head.status_code == 200
    assert (head.headers["Upload-Offset"], head.headers["Upload-Length"]) == ("0", str(len(data)))
    assert head.headers["Cache-Control"] == "no-store"
