"""Message shapes of the native protocol, shared by the server and the client.

One round trip per policy action. The client sends a `StepRequest` (what the agent writes, whether it reads
next, whether it is finished); the server answers a `StepResponse` (the next source segment if it read, and
whether the source is finished). Over HTTP a step is `POST /v1/instances/{index}/step` with a JSON body; over
the persistent WebSocket stream (`/v1/stream`) it is one text message carrying the same JSON plus `"index"`.

Speech segments travel as JSON lists of floats, or, when the request says `"audio": "pcm16"`, as one binary
frame: a 16-byte little-endian header (`PCM_HEADER`: index, samples read so far, sample rate, flags) followed
by signed 16-bit little-endian mono samples.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Any

from harness import boundedjson

PROTOCOL_VERSION = 1
EOS = "</s>"  # end of stream in both directions of the 2020 compatibility API
AUDIO_FORMATS = ("json", "pcm16")
PCM_HEADER = struct.Struct("<iIII")  # index, samples read so far, sample rate, flags
FLAG_SOURCE_FINISHED = 1
FLAG_FINISHED = 2
JSON_TYPE = "application/json"
PCM_TYPE = "application/octet-stream"
#: how the server's output begins once it listens and answers (what a run waits for before the participant starts)
LISTENING_LINE = "harness server: listening on "


class ProtocolError(ValueError):
    """A message breaks the protocol; the text is one line that is sent back to the client with HTTP `status`.

    Plain Python, so the client side never loads the server's web framework: the server's handlers answer it
    with its status (`harness.server.handlers.BaseHandler.write_error`); `str()` is the message.
    """

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class StepRequest:
    """One policy action of the agent.

    `write` is appended to the hypothesis, or replaces it when `revise` is true (re-translation). `read` asks
    for the next source segment after the write. `finished` ends the instance (no read). `start` opens the
    instance afresh, discarding the hypothesis of an unfinished earlier attempt (what that attempt was served
    stays served: later writes are delayed by at least as much). `error` ends the instance with
    status `error` (the agent failed on this instance). `audio` picks the encoding of speech segments.
    """

    write: str = ""
    revise: bool = False
    read: bool = False
    finished: bool = False
    start: bool = False
    audio: str = "json"
    error: str | None = None

    def to_json(self, index: int | None = None) -> dict[str, Any]:
        """The JSON object of this request (with `index` for the WebSocket stream); defaults are left out."""
        out: dict[str, Any] = {} if index is None else {"index": index}
        if self.write or self.revise:
            out["write"] = self.write
        if self.revise:
            out["revise"] = True
        if self.read:
            out["read"] = True
        if self.finished:
            out["finished"] = True
        if self.start:
            out["start"] = True
        if self.audio != "json":
            out["audio"] = self.audio
        if self.error is not None:
            out["error"] = self.error
        return out


_BOOL_FIELDS = ("revise", "read", "finished", "start")
_FIELDS = {"index", "write", "audio", "error", *_BOOL_FIELDS}


def parse_step(obj: Any, with_index: bool = False) -> tuple[int | None, StepRequest]:
    """Validate a decoded JSON step request; returns (index or None, request). Raises ProtocolError."""
    if not isinstance(obj, dict):
        raise ProtocolError(f"step request must be a JSON object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - _FIELDS)
    if unknown:
        raise ProtocolError(f"unknown field(s) in step request: {', '.join(map(str, unknown))[:200]}")
    index = None
    if with_index:
        index = obj.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise ProtocolError("step message needs an integer 'index'")
    elif "index" in obj:
        raise ProtocolError("'index' belongs in the URL of an HTTP step, not in its body")
    write = obj.get("write", "")
    if not isinstance(write, str):
        raise ProtocolError(f"'write' must be a string, got {type(write).__name__}")
    flags = {}
    for name in _BOOL_FIELDS:
        value = obj.get(name, False)
        if not isinstance(value, bool):
            raise ProtocolError(f"'{name}' must be true or false, got {json.dumps(value)[:40]}")
        flags[name] = value
    audio = obj.get("audio", "json")
    if audio not in AUDIO_FORMATS:
        raise ProtocolError(f"'audio' must be one of {', '.join(AUDIO_FORMATS)}, got {json.dumps(audio)[:40]}")
    error = obj.get("error")
    if error is not None and not isinstance(error, str):
        raise ProtocolError("'error' must be a string")
    if flags["finished"] and flags["read"]:
        raise ProtocolError("a step cannot both finish and read")
    return index, StepRequest(write=write, audio=audio, error=error, **flags)


def decode_json(body: bytes | str) -> Any:
    """JSON from a request body (nested at most `boundedjson.MAX_DEPTH` deep), or a ProtocolError naming the problem
    in one line."""
    try:
        return boundedjson.loads(body)
    except boundedjson.JsonRejected as exc:
        raise ProtocolError(f"body is {exc}" if str(exc) == "not UTF-8" else str(exc)) from None


@dataclass(slots=True)
class StepResponse:
    """The server's answer to a step.

    `segment` is a word (text), a list of float samples or int16 PCM bytes (speech), or None when nothing
    was read or the source is exhausted. `position` is the source consumed so far (words, or samples for
    speech), `source_finished` says that no source is left, `finished` that the instance is closed.
    """

    index: int
    segment: str | list[float] | bytes | None
    position: int
    source_finished: bool
    finished: bool
    sample_rate: int = 0
    status: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "segment": self.segment,
            "position": self.position,
            "source_finished": self.source_finished,
            "finished": self.finished,
        }
        if self.sample_rate:
            out["sample_rate"] = self.sample_rate
        if self.status is not None:
            out["status"] = self.status
        return out

    def to_pcm_frame(self) -> bytes:
        """The binary frame (header + int16 samples) of a speech response."""
        flags = (FLAG_SOURCE_FINISHED if self.source_finished else 0) | (FLAG_FINISHED if self.finished else 0)
        payload = self.segment if isinstance(self.segment, (bytes, bytearray, memoryview)) else b""
        return PCM_HEADER.pack(self.index, self.position, self.sample_rate, flags) + bytes(payload)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> StepResponse:
        return cls(
            index=obj["index"],
            segment=obj.get("segment"),
            position=obj.get("position", 0),
            source_finished=obj.get("source_finished", False),
            finished=obj.get("finished", False),
            sample_rate=obj.get("sample_rate", 0),
            status=obj.get("status"),
        )

    @classmethod
    def from_pcm_frame(cls, frame: bytes) -> StepResponse:
        if len(frame) < PCM_HEADER.size:
            raise ProtocolError("binary frame shorter than its header")
        index, position, rate, flags = PCM_HEADER.unpack_from(frame)
        return cls(
            index=index,
            segment=bytes(frame[PCM_HEADER.size:]),
            position=position,
            source_finished=bool(flags & FLAG_SOURCE_FINISHED),
            finished=bool(flags & FLAG_FINISHED),
            sample_rate=rate,
        )


def pcm16_to_floats(data: bytes) -> list[float]:
    """int16 little-endian PCM → floats in [-1, 1) (what agents receive as samples)."""
    import numpy as np

    return (np.frombuffer(data, dtype="<i2").astype(np.float32) / 32768.0).tolist()


def error_body(message: str, status: int) -> dict[str, Any]:
    """The JSON body of every 4xx answer."""
    return {"error": message, "status": status}
