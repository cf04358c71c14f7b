"""The tornado application (a routing table) and the server's life cycle: listen, time out, score, stop."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import tornado.web

from harness.server.evaluation import Evaluation
from harness.server.handlers import (
    CompatHypoHandler,
    CompatResultHandler,
    CompatRootHandler,
    CompatSourceHandler,
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
    if status >= 400:
        log.warning("%d %s %s: %s", status, handler.request.method, handler.request.uri[:120], handler._reason)


def make_app(evaluation: Evaluation) -> tornado.web.Application:
    """Routes of the native API, the 2020 compatibility API, health and the OpenAPI document."""
    cap = evaluation.limits.max_body_bytes
    kw = {"evaluation": evaluation, "max_body": cap}
    routes: list[Any] = [
        (r"/health", HealthHandler, kw),
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


def score_evaluation(evaluation: Evaluation) -> dict[str, Any]:
    """Scores of the logged instances (harness.scoring)."""
    from harness.scoring import score_records

    track = evaluation.track
    return score_records(evaluation.records(), latency_unit=track.latency_unit, tokenizer=track.tokenizer,
                         computation_aware=track.computation_aware, speech=evaluation.speech,
                         source=str(evaluation.writer.path))


def write_scores(evaluation: Evaluation) -> Path:
    """Score the log and write scores.json beside it."""
    from harness.scoring import write_scores as write

    return write(evaluation.writer.path, scores=score_evaluation(evaluation))


def serve(evaluation: Evaluation, host: str, port: int, output: Path, exit_when_done: bool = False,
          quiet: bool = False) -> int:
    """Run the server until interrupted (or until every instance is logged, with `exit_when_done`)."""
    import asyncio

    import tornado.httpserver
    import tornado.ioloop
    import tornado.netutil

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)

    async def main() -> None:
        app = make_app(evaluation)
        cap = evaluation.limits.max_body_bytes
        server = tornado.httpserver.HTTPServer(app, max_body_size=cap + 1_048_576, idle_connection_timeout=3600)
        try:
            sockets = tornado.netutil.bind_sockets(port, address=host or None)
        except OSError as exc:
            from harness.errors import HarnessError

            raise HarnessError(f"cannot listen on {host or '*'}:{port}: {exc.strerror}") from None
        server.add_sockets(sockets)
        bound = sockets[0].getsockname()[1]
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def finished() -> None:
            try:
                path = write_scores(evaluation)
                print(f"harness server: all {len(evaluation.dataset)} instances logged; scores in {path}",
                      file=sys.stderr, flush=True)
            except Exception as exc:  # scoring is not the server's job to survive; report it and go on
                print(f"harness server: scoring failed: {exc}", file=sys.stderr, flush=True)
            if exit_when_done:
                loop.call_soon_threadsafe(stop.set)

        evaluation.on_done.append(finished)
        period = max(100, int(1000 * min(1.0, evaluation.limits.idle_timeout_s / 4)))
        checker = tornado.ioloop.PeriodicCallback(evaluation.check_timeouts, period)
        checker.start()
        if not quiet:
            print(f"harness server: listening on http://{host or '0.0.0.0'}:{bound} "
                  f"({evaluation.track.name}/{evaluation.dataset_name}, {len(evaluation.pending())} pending)",
                  file=sys.stderr, flush=True)
        if evaluation.is_done() and exit_when_done:
            stop.set()
        await stop.wait()
        checker.stop()
        server.stop()

    try:
        asyncio.run(main())
    finally:
        evaluation.close()
    return 0
