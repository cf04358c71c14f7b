"""One instance being decoded: the source cursor, the hypothesis, and the server-side clock.

Timing (all on `time.monotonic`): a step request arrives at `t_arrive` and its answer leaves at `t_depart`.
The client's time is the sum of the gaps between an answer leaving and the next request arriving, counted from
the first source segment served; the server's own processing (`t_depart - t_arrive`) is never counted. A write
is stamped with `delay` (source consumed before the write: words, or ms of audio) and the computation-aware
`elapsed` = delay + client time in ms (SimulEval's definition, minus the server's processing).

Served source is never un-served. A new attempt at an instance (a native step with `start`, or the 2020 `POST /`
reset) serves the source again from its beginning, but it inherits the old attempt's clocks and its high-water
mark of source served (`floor`): every write's delay is at least the source served so far for the instance,
across attempts. A write before any source of the instance was read ends it as `protocol_violation` (the write
is refused, nothing is kept). A hypothesis longer than the cap ends it as `protocol_violation` too, the text
truncated to the cap and the record flagged `"truncated": true`; re-translation revisions share a total budget
of `REVISION_BUDGET` times the cap, so the server keeps at most that much of a participant's output.
"""

from __future__ import annotations

import time
from typing import Any

from harness.protocol import ProtocolError, StepRequest, StepResponse
from harness.status import InstanceStatus
from harness.units import final_token_delays, join_units, split_units

OPEN, OK, TIMEOUT, ERROR = InstanceStatus.OPEN, InstanceStatus.OK, InstanceStatus.TIMEOUT, InstanceStatus.ERROR
VIOLATION = InstanceStatus.PROTOCOL_VIOLATION
MAX_PAST_END_READS = 10_000  # reads after the end of the source before the instance is ended as a violation
REVISION_BUDGET = 50  # all revisions of one instance together: at most this many times the hypothesis cap


class TextSource:
    """Serves the words of a sentence one at a time."""

    def __init__(self, words: list[str]) -> None:
        self.words = words
        self.position = 0

    @property
    def exhausted(self) -> bool:
        return self.position >= len(self.words)

    def read(self) -> str | None:
        if self.exhausted:
            return None
        word = self.words[self.position]
        self.position += 1
        return word

    def delay(self) -> float:
        return self.position

    @property
    def length(self) -> float:
        return len(self.words)

    def close(self) -> None:
        pass


class SpeechSource:
    """Serves `segment_ms` blocks of an `AudioStream` (streamed from disk)."""

    def __init__(self, stream: Any, segment_ms: float) -> None:
        self.stream = stream
        self.segment_ms = segment_ms
        self.sample_rate = stream.sample_rate

    @property
    def position(self) -> int:
        return self.stream.position

    @property
    def exhausted(self) -> bool:
        return self.stream.exhausted

    def read(self, pcm: bool, segment_ms: float | None = None) -> list[float] | bytes:
        block = self.stream.read(segment_ms or self.segment_ms, dtype="int16" if pcm else "float32")
        if pcm:
            return block.astype("<i2", copy=False).tobytes()
        return block.astype("float64").tolist()

    def delay(self) -> float:
        return self.stream.ms(self.stream.position)

    @property
    def length(self) -> float:
        return self.stream.ms(self.stream.total)

    def close(self) -> None:
        self.stream.close()


class Session:
    """Server-side state of one instance. Not thread-safe by itself: the `Evaluation` serialises calls."""

    def __init__(self, index: int, source: TextSource | SpeechSource, target_unit: str, now: float,
                 max_chars: int = 20_000) -> None:
        self.index = index
        self.max_chars = max_chars
        self.floor = 0.0  # source served by earlier attempts at this instance
        self.hypothesis_chars = 0
        self.written_chars = 0
        self.truncated = False
        self.source = source
        self.target_unit = target_unit
        self.status: str = OPEN
        self.finished = False
        self.error: str | None = None
        self.created = now
        self.ended: float | None = None
        self.last_depart = now
        self.clock_started = False
        self.client_ms = 0.0
        self.server_s = 0.0
        self.busy_since: float | None = None
        self.past_end_reads = 0
        self.tokens: list[str] = []
        self.delays: list[float] = []
        self.elapsed: list[float] = []
        self.writes: list[tuple[float, float, str, bool]] = []  # (delay, elapsed, text, revise)
        self.revised = False

    # -- timing ---------------------------------------------------------------------------------------------
    def arrive(self, t: float) -> None:
        """A request for this instance arrived at `t` (monotonic seconds)."""
        if self.clock_started:
            self.client_ms += max(0.0, t - self.last_depart) * 1000.0
        self.busy_since = t

    def depart(self, t: float) -> None:
        """The answer left at `t`; the client's clock runs again from here."""
        if self.busy_since is not None:
            self.server_s += max(0.0, t - self.busy_since)
        self.busy_since = None
        self.last_depart = t

    def inherit(self, old: Session) -> None:
        """Continue after an earlier attempt `old`: its served source, its clocks and its age carry over."""
        self.floor = old.served()
        self.clock_started = old.clock_started
        self.client_ms = old.client_ms
        self.server_s = old.server_s
        self.created = old.created
        self.last_depart = old.last_depart

    def served(self) -> float:
        """Source served so far for this instance, across attempts (words, or ms of audio)."""
        return max(self.floor, self.source.delay())

    def retire(self) -> None:
        """Drop this attempt (a reset): remember what it served, free its source and its hypothesis."""
        self.floor = self.served()
        self.source.close()
        self.tokens, self.delays, self.elapsed, self.writes = [], [], [], []

    # -- actions --------------------------------------------------------------------------------------------
    def _fit(self, text: str, revise: bool) -> str:
        """`text` cut to what the caps leave (flags the session as truncated when it had to cut)."""
        room = min(self.max_chars - (0 if revise else self.hypothesis_chars),
                   self.max_chars * REVISION_BUDGET - self.written_chars)
        if len(text) > room:
            self.truncated = True
            text = text[: max(0, room)]
        self.written_chars += len(text)
        self.hypothesis_chars = len(text) if revise else self.hypothesis_chars + len(text)
        return text

    def write(self, text: str, revise: bool) -> None:
        if not self.clock_started and text.strip():
            self.end(VIOLATION, "wrote before reading any source")
            raise ProtocolError(f"instance {self.index}: write before any source was read "
                                f"(an instance is started by a read); ended as {VIOLATION}", 409)
        text = self._fit(text, revise)
        delay = self.served()
        elapsed = delay + self.client_ms
        if revise:
            self.revised = True
            self.writes.append((delay, elapsed, text, True))
            self.tokens = split_units(text, self.target_unit)
            return
        new = split_units(text, self.target_unit)
        if not new:
            return
        self.writes.append((delay, elapsed, text, False))
        self.tokens.extend(new)
        self.delays.extend([delay] * len(new))
        self.elapsed.extend([elapsed] * len(new))

    def step(self, req: StepRequest, segment_ms: float | None = None) -> StepResponse:
        """Apply one action; the caller has called `arrive` and will call `depart`."""
        if self.finished:
            raise ProtocolError(f"instance {self.index} already finished (status {self.status})", 409)
        if req.write or req.revise:
            self.write(req.write, req.revise)
            if self.truncated:
                self.end(VIOLATION, f"hypothesis longer than {self.max_chars} characters (truncated)")
                return self._response(None)
        if req.error is not None:
            self.end(ERROR, req.error.splitlines()[0][:500] if req.error.strip() else "agent error")
            return self._response(None)
        if req.finished:
            self.end(OK)
            return self._response(None)
        if not req.read:
            return self._response(None)
        if self.source.exhausted:
            self.past_end_reads += 1
            if self.past_end_reads > MAX_PAST_END_READS:
                self.end(VIOLATION, f"more than {MAX_PAST_END_READS} reads after the end of the source")
            return self._response(None)
        if isinstance(self.source, SpeechSource):
            segment: Any = self.source.read(req.audio == "pcm16", segment_ms)
        else:
            segment = self.source.read()
        self.clock_started = True
        return self._response(segment)

    def _response(self, segment: Any) -> StepResponse:
        rate = getattr(self.source, "sample_rate", 0)
        return StepResponse(
            index=self.index,
            segment=segment,
            position=int(self.source.position),
            source_finished=self.source.exhausted,
            finished=self.finished,
            sample_rate=rate,
            status=self.status if self.finished else None,
        )

    def end(self, status: str, error: str | None = None) -> None:
        if self.finished:
            return
        self.status = status
        self.finished = True
        self.error = error
        self.ended = time.monotonic()
        self.source.close()

    # -- result ---------------------------------------------------------------------------------------------
    def revisions(self) -> list[dict[str, Any]]:
        """Every state of the hypothesis, in order (re-translation)."""
        out: list[dict[str, Any]] = []
        current: list[str] = []
        for delay, elapsed, text, revise in self.writes:
            current = split_units(text, self.target_unit) if revise else current + split_units(text, self.target_unit)
            out.append({"delay": delay, "elapsed": elapsed, "text": join_units(current, self.target_unit)})
        return out

    def record(self, source_info: Any, references: dict[str, str], latency_unit: str) -> dict[str, Any]:
        """The instances.log line of this finished instance (SimulEval keys + harness keys)."""
        rec: dict[str, Any] = {"index": self.index}
        delays, elapsed = self.delays, self.elapsed
        revisions = None
        if self.revised:
            revisions = self.revisions()
            delays, elapsed = final_delays(revisions, self.target_unit)
        rec.update(
            prediction=join_units(self.tokens, self.target_unit),
            delays=delays,
            elapsed=[round(e, 3) for e in elapsed],
            prediction_length=len(self.tokens),
            reference=next(iter(references.values()), ""),
            source=source_info,
            source_length=self.source.length,
            references=references,
        )
        if revisions is not None:
            rec["revisions"] = revisions
        if self.truncated:
            rec["truncated"] = True
        end = self.ended if self.ended is not None else time.monotonic()
        rec.update(
            status=self.status,
            error=self.error,
            latency_unit=latency_unit,
            timing={"wall_s": round(end - self.created, 6), "server_s": round(self.server_s, 6),
                    "client_s": round(self.client_ms / 1000.0, 6)},
        )
        return rec


def final_delays(revisions: list[dict[str, Any]], unit: str) -> tuple[list[float], list[float]]:
    """Delays and elapsed times of the tokens of the final revision (`harness.units.final_token_delays`)."""
    delays = final_token_delays([(r["delay"], r["text"]) for r in revisions], unit)
    elapsed = final_token_delays([(r["elapsed"], r["text"]) for r in revisions], unit)
    return delays, elapsed
