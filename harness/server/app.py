"""The tornado application (a routing table) and the server's life cycle: bind, listen, time out, stop.

The server records; it does not score. Whoever builds the `Evaluation` decides what happens when it is done
(`Evaluation.on_done`) and how `GET /result` scores (`Evaluation.scorer`).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Callable
from typing import Any

import tornado.httpserver
import tornado.ioloop
import tornado.netutil
import tornado.web

from harness.errors import HarnessError
from harness.protocol import LISTENING_LINE
from harness.server.evaluation import Evaluation
from harness.server.handlers import (
    CompatHypoHandler,
    CompatResultHandler,
    CompatRootHandler,
    CompatSourceHandler,
    GateHandler,
    HealthHandler,
    InfoHandler,
    NotFoundHandler,
    OpenAPIHandler,
    StepHandler,
    StreamHandler,
)

log = logging.getLogger("harness.server")


def _log_request(handler: tornado.web.RequestHandler) -> None:
    """Access log: only refused requests, one line each (a line per action would cost more than the action)."""
    status = handler.get_status()
    if status >= 400 and not isinstance(handler, GateHandler):  # a closed gate is an answer, not a refusal
        log.warning("%d %s %s: %s", status, handler.request.method, handler.request.uri[:120],
                    getattr(handler, "refusal", ""))


def make_app(evaluation: Evaluation) -> tornado.web.Application:
    """Routes of the native API, the 2020 compatibility API, health and the OpenAPI document."""
    cap = evaluation.limits.max_body_bytes
    kw = {"evaluation": evaluation, "max_body": cap}
    routes: list[Any] = [
        (r"/health", HealthHandler, kw),
        (r"/gate", GateHandler, kw),
        (r"/openapi\.json", OpenAPIHandler, kw),
        (r"/v1/info", InfoHandler, kw),
        (r"/v1/instances/([^/]+)/step", StepHandler, kw),
        (r"/v1/stream", StreamHandler, kw),
        (r"/", CompatRootHandler, kw),
        (r"/src", CompatSourceHandler, kw),
        (r"/hypo", CompatHypoHandler, kw),
        (r"/result", CompatResultHandler, kw),
    ]
    return tornado.web.Application(
        routes,
        default_handler_class=NotFoundHandler,
        default_handler_args=kw,
        log_function=_log_request,
        websocket_max_message_size=cap,
        compress_response=False,
    )


def listen(evaluation: Evaluation, host: str, port: int) -> tuple[tornado.httpserver.HTTPServer, int]:
    """Build the HTTP server of `evaluation` and bind it to `host:port` (0: a free port); (server, bound port).

    Call it inside a running event loop. The one server set-up, used by `harness server` and by joint mode's
    loopback server alike.
    """
    cap = evaluation.limits.max_body_bytes
    server = tornado.httpserver.HTTPServer(make_app(evaluation), max_body_size=cap + 1_048_576,
                                           idle_connection_timeout=3600)
    try:
        sockets = tornado.netutil.bind_sockets(port, address=host or None)
    except OSError as exc:
        raise HarnessError(f"cannot listen on {host or '*'}:{port}: {exc.strerror}") from None
    server.add_sockets(sockets)
    return server, sockets[0].getsockname()[1]


async def run_server(evaluation: Evaluation, host: str, port: int, stop: asyncio.Event,
                     on_listening: Any = None) -> None:
    """Serve until `stop` is set, ending idle or overlong instances on the way; `on_listening(port)` once bound."""
    server, bound = listen(evaluation, host, port)
    period = max(100, int(1000 * min(1.0, evaluation.limits.idle_timeout_s / 4)))
    checker = tornado.ioloop.PeriodicCallback(evaluation.check_timeouts, period)
    checker.start()
    if on_listening is not None:
        on_listening(bound)
    try:
        await stop.wait()
    finally:
        checker.stop()
        server.stop()


def serve(evaluation: Evaluation, host: str, port: int, exit_when_done: bool = False,
          companion: Callable[[Callable[[], None]], None] | None = None) -> int:
    """Run the server until interrupted (or until every instance is logged, with `exit_when_done`).

    `companion(stop)` runs in a thread once the server listens (a driver playing the client); calling `stop`
    ends the server."""
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        if exit_when_done:
            def done() -> None:
                loop.call_soon_threadsafe(stop.set)

            evaluation.on_done.append(done)
            if evaluation.is_done():
                stop.set()

        def listening(bound: int) -> None:
            print(f"{LISTENING_LINE}http://{host or '0.0.0.0'}:{bound} "
                  f"({evaluation.track.name}/{evaluation.dataset_name}, {len(evaluation.pending())} pending)",
                  file=sys.stderr, flush=True)
            if companion is not None:
                def stop_server() -> None:
                    try:
                        loop.call_soon_threadsafe(stop.set)
                    except RuntimeError:  # the loop already ended
                        pass

                def run_companion() -> None:
                    try:
                        companion(stop_server)
                    finally:
                        stop_server()

                threading.Thread(target=run_companion, name="harness-driver", daemon=True).start()

        await run_server(evaluation, host, port, stop, listening)

    try:
        asyncio.run(main())
    finally:
        evaluation.close()
    return 0
