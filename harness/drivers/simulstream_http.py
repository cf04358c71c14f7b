"""SimulStream 1.0.0's HTTP speech-processor server (`simulstream/server/speech_processors/remote/
http_speech_processor_server.py`), driven as its `HttpProxySpeechProcessor` drives it, one session id per recording:
`GET /speech_chunk_size`, `PUT /source_language`, `PUT /target_language`, then `POST /process_chunk` (base64 float32
waveform at 16 kHz) per chunk of `speech_chunk_size` seconds, `POST /end_of_stream`, `POST /clear`. Every request
carries `{"session_id": ...}` as its JSON body, GET included.

Answers are incremental outputs (`new_string`, `deleted_string`, with their tokens). The driver keeps the output
text: a deletion removes `deleted_string` from its end, then `new_string` is appended. When the new text only
extends the old one by whole words, the words are written; otherwise the whole text is written as a revision (the
re-translation rules and NE apply), so nothing is lost of what the system erased.
"""

from __future__ import annotations

import base64
import time
import uuid
from typing import Any

import numpy as np

from harness.drivers.base import AgentServerDriver, Rounds
from harness.drivers.http import ParticipantError
from harness.protocol import StepResponse
from harness.units import split_units

SAMPLE_RATE = 16000


def _chunk_seconds(answer: Any) -> float:
    size = answer.get("speech_chunk_size") if isinstance(answer, dict) else None
    if isinstance(size, bool) or not isinstance(size, (int, float)) or not 0 < size <= 60:
        raise ParticipantError(f"GET /speech_chunk_size: expected a number of seconds in (0, 60], got {size!r}")
    return float(size)


def _increment(answer: Any, endpoint: str) -> tuple[str, str]:
    """(deleted_string, new_string) of an incremental output."""
    if not isinstance(answer, dict):
        raise ParticipantError(f"{endpoint}: expected an incremental output object")
    new, deleted = answer.get("new_string", ""), answer.get("deleted_string", "")
    if not isinstance(new, str) or not isinstance(deleted, str):
        raise ParticipantError(f"{endpoint}: new_string and deleted_string must be strings")
    return deleted, new


class Hypothesis:
    """The participant's output text, updated by incremental outputs; says what to write to the evaluation."""

    def __init__(self, unit: str) -> None:
        self.text = ""
        self.unit = unit

    def update(self, deleted: str, new: str, endpoint: str) -> tuple[str, bool] | None:
        """(text, revise) to write for this update, or None when nothing changed."""
        before = split_units(self.text, self.unit)
        if deleted:
            if not self.text.endswith(deleted):
                raise ParticipantError(f"{endpoint}: deleted_string {deleted[:40]!r} is not the end of the output")
            self.text = self.text[: len(self.text) - len(deleted)]
        self.text += new
        after = split_units(self.text, self.unit)
        if after == before:
            return None
        growing = after[: len(before)] == before
        if growing and not deleted and (not before or self._word_boundary(new)):
            return " ".join(after[len(before):]) if self.unit == "word" else "".join(after[len(before):]), False
        return self.text, True

    @staticmethod
    def _word_boundary(new: str) -> bool:
        """The appended string starts a new word (so earlier words are final)."""
        return not new or new[0].isspace()


class SimulStreamHttp(AgentServerDriver):
    interface = "simulstream-http"

    def probe(self, deadline: float) -> None:
        session = f"harness-probe-{uuid.uuid4().hex[:8]}"
        _chunk_seconds(self.http.request("GET", "/speech_chunk_size", {"session_id": session}, deadline))
        self.http.request("POST", "/clear", {"session_id": session}, deadline, expect_json=False)

    def _write(self, rounds: Rounds, t: float, hyp: Hypothesis, answer: Any, endpoint: str, *, finished: bool
               ) -> StepResponse:
        deleted, new = _increment(answer, endpoint)
        change = hyp.update(deleted, new, endpoint)
        text, revise = change if change is not None else ("", False)
        return rounds.answered(t, text, revise=revise, finished=finished)

    def run_instance(self, index: int, deadline: float) -> None:
        ev = self.evaluation
        if not ev.speech:
            raise ParticipantError("simulstream-http serves speech tracks only")
        session = {"session_id": f"harness-{index}-{uuid.uuid4().hex[:8]}"}
        chunk_s = _chunk_seconds(self.http.request("GET", "/speech_chunk_size", session, deadline))
        self.http.request("PUT", "/source_language", {**session, "language": ev.track.source_lang}, deadline,
                          expect_json=False)
        self.http.request("PUT", "/target_language", {**session, "language": ev.track.target_lang}, deadline,
                          expect_json=False)
        hyp = Hypothesis("char" if ev.track.latency_unit == "char" else "word")
        rounds = Rounds(ev, index)
        resp = rounds.start_with(chunk_s * 1000.0)
        try:
            while not resp.finished:
                if resp.segment is None:  # the source is exhausted: the end of the stream is the last step
                    rounds.handed()
                    answer = self.http.request("POST", "/end_of_stream", session, deadline)
                    resp = self._write(rounds, ev.clock(), hyp, answer, "POST /end_of_stream", finished=True)
                    break
                if resp.sample_rate != SAMPLE_RATE:
                    raise ParticipantError(f"simulstream-http needs {SAMPLE_RATE} Hz audio; the dataset has "
                                           f"{resp.sample_rate} Hz")
                wave = base64.b64encode(np.asarray(resp.segment, dtype=np.float32).tobytes()).decode("ascii")
                body = {**session, "waveform": wave}
                rounds.handed()
                answer = self.http.request("POST", "/process_chunk", body, deadline)
                resp = self._write(rounds, ev.clock(), hyp, answer, "POST /process_chunk", finished=False)
                if time.monotonic() > deadline and not resp.finished:
                    ev.expire(index, f"instance took longer than {ev.limits.instance_timeout_s:g} s")
                    return
        finally:
            try:
                self.http.request("POST", "/clear", session, time.monotonic() + 5.0, expect_json=False)
            except ParticipantError:
                pass
