"""One instance being decoded: the source cursor, the hypothesis, and the server-side clock.

Timing (all on `time.monotonic`): a step request arrives at `t_arrive` and its answer leaves at `t_depart`.
The client's time is the sum of the gaps between an answer leaving and the next request arriving, counted from
the first source segment served; the server's own processing (`t_depart - t_arrive`) is never counted. A write
is stamped with `delay` (source consumed before the write: words, or ms of audio) and the computation-aware
`elapsed` = delay + client time in ms (SimulEval's definition, minus the server's processing).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from harness.protocol import ProtocolError, StepRequest, StepResponse
from harness.units import join_units, split_units

OPEN, OK, TIMEOUT, ERROR, VIOLATION = "open", "ok", "timeout", "error", "protocol_violation"
MAX_PAST_END_READS = 10_000  # reads after the end of the source before the instance is ended as a violation


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
        return block.astype(np.float64).tolist()

    def delay(self) -> float:
        return self.stream.ms(self.stream.position)

    @property
    def length(self) -> float:
        return self.stream.ms(self.stream.total)

    def close(self) -> None:
        self.stream.close()


class Session:
    """Server-side state of one instance. Not thread-safe by itself: the `Evaluation` serialises calls."""

    def __init__(self, index: int, source: TextSource | SpeechSource, target_unit: str, now: float) -> None:
        self.index = index
        self.source = source
        self.target_unit = target_unit
        self.status = OPEN
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

    # -- actions --------------------------------------------------------------------------------------------
    def write(self, text: str, revise: bool) -> None:
        delay = self.source.delay()
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
        end = self.ended if self.ended is not None else time.monotonic()
        rec.update(
            status=self.status,
            error=self.error,
            latency_unit=latency_unit,
            timing={"wall_s": round(end - self.created, 6), "server_s": round(self.server_s, 6)},
        )
        return rec


def final_delays(revisions: list[dict[str, Any]], unit: str) -> tuple[list[float], list[float]]:
    """Delays and elapsed times of the tokens of the final revision (harness.metrics.stability)."""
    from harness.metrics.stability import final_token_delays

    delays = final_token_delays([(r["delay"], r["text"]) for r in revisions], unit)
    elapsed = final_token_delays([(r["elapsed"], r["text"]) for r in revisions], unit)
    return delays, elapsed
