"""Tornado handlers: the native API (HTTP step + WebSocket stream), the 2020 compatibility API, health, OpenAPI.

Every handler is small: parse and validate the request, call the `Evaluation`, serialise. Bad requests get a
4xx with a one-line JSON reason (`{"error": ..., "status": ...}`); the session clock is stamped on arrival
(`prepare`, or once the streamed body of `PUT /hypo` is in) and on departure (`answer`, just before the answer is
handed to the socket). Refusals are `ProtocolError`s, which `write_error` turns into JSON with their status.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from importlib import resources
from typing import Any

import tornado.web
import tornado.websocket
from tornado import httputil

from harness import __version__
from harness.protocol import (
    EOS,
    JSON_TYPE,
    PCM_TYPE,
    ProtocolError,
    StepRequest,
    StepResponse,
    decode_json,
    error_body,
    parse_step,
)
from harness.server.evaluation import MAX_COMPAT_SEGMENT_MS, Evaluation
from harness.server.session import Session

_clock = time.monotonic
MAX_GATE_WAIT_S = 30.0
GATE_POLL_S = 0.005  # how often a held GET /gate looks for the gate file


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line[:limit]


class EvaluationMixin:
    """What every handler shares, plain HTTP and WebSocket alike: the evaluation, the body cap, no Server
    header, and `answer`, the one place that stamps a step's departure before its answer leaves."""

    evaluation: Evaluation
    max_body: int

    def initialize(self, evaluation: Evaluation, max_body: int) -> None:
        self.evaluation = evaluation
        self.max_body = max_body

    def set_default_headers(self) -> None:
        self.clear_header("Server")  # type: ignore[attr-defined]

    def answer(self, session: Session, payload: bytes | str, binary: bool = False) -> None:
        """Stamp the departure of `session`'s step, then hand `payload` to the socket."""
        self.evaluation.depart(session, _clock())
        self.send_payload(payload, binary)

    def send_payload(self, payload: bytes | str, binary: bool) -> None:
        raise NotImplementedError


class BaseHandler(EvaluationMixin, tornado.web.RequestHandler):
    """Plain HTTP: JSON answers, `ProtocolError`s as one-line JSON 4xx bodies with their own status, no ETag."""

    refusal = ""  # the one-line reason of a refused request (for the access log)
    participant_request = True  # a request of the participant (not a /health probe or the start gate)

    def compute_etag(self) -> None:
        return None

    def prepare(self) -> None:
        self.t_arrive = _clock()
        if self.participant_request:
            self.evaluation.saw_participant()
        if len(self.request.body) > self.max_body:
            raise ProtocolError(f"request body of {len(self.request.body)} bytes exceeds the cap of {self.max_body}",
                                413)

    def send_json(self, obj: Any, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", JSON_TYPE)
        self.finish(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))

    def send_payload(self, payload: bytes | str, binary: bool) -> None:
        if payload:
            self.set_header("Content-Type", PCM_TYPE if binary else JSON_TYPE)
        self.finish(payload)

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        """A refusal (`ProtocolError`) is an answer, not an uncaught exception: the access log shows it."""
        if not isinstance(value, ProtocolError):
            super().log_exception(typ, value, tb)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, ProtocolError):  # tornado sends what is not its HTTPError as 500: the refusal's own status
            status_code = exc.status
            self.set_status(status_code)
            message = str(exc)
        elif isinstance(exc, tornado.web.HTTPError) and exc.log_message:
            message = exc.log_message % exc.args if exc.args else exc.log_message
        else:
            message = httputil.responses.get(status_code, "error")
        self.refusal = _one_line(message, 120)
        self.set_header("Content-Type", JSON_TYPE)
        self.finish(json.dumps(error_body(_one_line(message), status_code)))

    def require_json(self) -> Any:
        ctype = self.request.headers.get("Content-Type", "")
        if ctype.split(";")[0].strip().lower() != JSON_TYPE:
            raise ProtocolError(f"Content-Type must be {JSON_TYPE}, got {ctype or 'none'!r}", 415)
        return decode_json(self.request.body)

    def query_int(self, name: str, required: bool = True) -> int | None:
        values = self.request.query_arguments.get(name)
        if not values or not values[-1].strip():
            if required:
                raise ProtocolError(f"missing query parameter {name!r}")
            return None
        raw = values[-1].decode("utf-8", "replace").strip()
        try:
            return int(raw)
        except ValueError:
            raise ProtocolError(f"query parameter {name!r} must be an integer, got {raw[:40]!r}") from None


class NotFoundHandler(BaseHandler):
    def prepare(self) -> None:
        raise ProtocolError(f"no such endpoint: {self.request.method} {self.request.path[:100]}", 404)


class HealthHandler(BaseHandler):
    participant_request = False  # the harness's readiness probe

    def get(self) -> None:
        ev = self.evaluation
        self.send_json({"status": "ok", "version": __version__, "track": ev.track.name,
                        "dataset": ev.dataset_name, "done": ev.is_done()})


class GateHandler(BaseHandler):
    """GET /gate[?wait=SECONDS]: whether the participant may start. Open unless the server runs with `--gate-file`,
    then closed (503) until the harness creates that file in the run folder (the swarm backend starts a participant
    on another node early, and its command waits here until the server is healthy and alone on the run's network).
    `wait` (at most 30) holds the answer until the gate opens or the time is up: one request instead of a poll."""

    participant_request = False  # the harness's gate in front of the participant's command

    async def get(self) -> None:
        path = self.evaluation.gate_file
        raw = self.get_query_argument("wait", "0")
        try:
            wait = min(max(float(raw), 0.0), MAX_GATE_WAIT_S)
        except ValueError:
            raise ProtocolError(f"query parameter 'wait' must be a number of seconds, got {raw[:40]!r}") from None
        end = _clock() + wait
        while path is not None and not os.path.exists(path):
            if _clock() >= end:
                self.send_json({"open": False}, 503)
                return
            await asyncio.sleep(GATE_POLL_S)
        self.send_json({"open": True})


class InfoHandler(BaseHandler):
    def get(self) -> None:
        self.send_json(self.evaluation.info())


class OpenAPIHandler(BaseHandler):
    def get(self) -> None:
        text = resources.files("harness").joinpath("openapi.json").read_text(encoding="utf-8")
        self.set_header("Content-Type", JSON_TYPE)
        self.finish(text)


def _parse_index(raw: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise ProtocolError(f"unknown instance {raw[:40]!r} (not an integer)", 404) from None


def encode_response(response: StepResponse, req: StepRequest) -> tuple[bytes | str, bool]:
    """The answer as (payload, binary?) — a PCM frame when asked for and the segment is audio."""
    if req.audio == "pcm16" and response.sample_rate:
        return response.to_pcm_frame(), True
    return json.dumps(response.to_json(), ensure_ascii=False, separators=(",", ":")), False


class StepHandler(BaseHandler):
    """`POST /v1/instances/{index}/step`: one policy action."""

    def post(self, raw_index: str) -> None:
        _, req = parse_step(self.require_json())
        ev = self.evaluation
        session = ev.begin(_parse_index(raw_index), req, self.t_arrive)
        self.answer(session, *encode_response(ev.apply(session, req), req))


class StreamHandler(EvaluationMixin, tornado.websocket.WebSocketHandler):
    """`GET /v1/stream`: a persistent WebSocket; each text message is a step with an `index`."""

    def send_payload(self, payload: bytes | str, binary: bool) -> None:
        self.write_message(payload, binary=binary)

    def open(self, *args: str, **kwargs: str) -> None:
        self.evaluation.saw_participant()

    def on_message(self, message: str | bytes) -> None:
        t_arrive = _clock()
        ev = self.evaluation
        try:
            if isinstance(message, bytes):
                raise ProtocolError("stream messages must be JSON text, not binary")
            if len(message) > self.max_body:
                raise ProtocolError(f"message of {len(message)} characters exceeds the cap of {self.max_body}", 413)
            index, req = parse_step(decode_json(message), with_index=True)
            assert index is not None  # with_index: parse_step raises without one
            session = ev.begin(index, req, t_arrive)
            response = ev.apply(session, req)
        except ProtocolError as exc:
            self.write_message(json.dumps(error_body(_one_line(str(exc)), exc.status)))
            return
        self.answer(session, *encode_response(response, req))


# -- 2020 compatibility API ---------------------------------------------------------------------------------

class CompatRootHandler(BaseHandler):
    """`GET /`: corpus information; `POST /`: reset (a new attempt at each unfinished sentence; served stays served)."""

    def get(self) -> None:
        self.send_json({"num_sentences": len(self.evaluation.dataset)})

    def post(self) -> None:
        self.evaluation.reset_unfinished()
        self.send_json({"reset": True})


class CompatSourceHandler(BaseHandler):
    """`GET /src?sent_id=&segment_size=`: the next segment of a sentence, `</s>` after its end."""

    def get(self) -> None:
        ev = self.evaluation
        sent_id = self.query_int("sent_id")
        seg_ms = self.query_int("segment_size", required=False)
        if seg_ms is not None and not 1 <= seg_ms <= MAX_COMPAT_SEGMENT_MS:
            raise ProtocolError(f"segment_size must be 1..{MAX_COMPAT_SEGMENT_MS} ms, got {seg_ms}")
        req = StepRequest(read=True)
        session = ev.begin(ev.check_index(sent_id), req, self.t_arrive)
        before = session.source.delay()
        response = ev.apply(session, req, seg_ms if ev.speech else None)
        segment = EOS if response.segment is None or response.segment == [] else response.segment
        body = {"sent_id": sent_id, "segment_id": int(before), "segment": segment}
        self.answer(session, json.dumps(body, ensure_ascii=False, separators=(",", ":")))


@tornado.web.stream_request_body
class CompatHypoHandler(BaseHandler):
    """`PUT /hypo?sent_id=`: detokenized words appended to the hypothesis; `</s>` ends the sentence.

    The body is text whatever its Content-Type: it is streamed in raw (capped at `max_body`), so tornado never
    parses a form body into arguments.
    """

    def prepare(self) -> None:
        self.body = bytearray()

    def data_received(self, chunk: bytes) -> None:
        if len(self.body) <= self.max_body:
            self.body += chunk[: self.max_body + 1 - len(self.body)]

    def put(self) -> None:
        t_arrive = _clock()
        if len(self.body) > self.max_body:
            raise ProtocolError(f"request body exceeds the cap of {self.max_body} bytes", 413)
        ev = self.evaluation
        sent_id = self.query_int("sent_id")
        try:
            text = self.body.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError("body is not UTF-8") from None
        tokens = text.split()
        finished = EOS in tokens
        if finished:
            tokens = tokens[: tokens.index(EOS)]
        req = StepRequest(write=" ".join(tokens), finished=finished)
        session = ev.begin(ev.check_index(sent_id), req, t_arrive)
        ev.apply(session, req)
        self.answer(session, b"")


class CompatResultHandler(BaseHandler):
    """`GET /result`: the scores of the log (every instance must be finished; scored by the injected scorer)."""

    def get(self) -> None:
        ev = self.evaluation
        pending = ev.pending()
        if pending:
            raise ProtocolError(f"{len(pending)} instance(s) not finished yet (first: {pending[0]})", 409)
        self.send_json(ev.scores())
