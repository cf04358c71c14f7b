"""SimulStream 1.0.0's HTTP speech-processor server (`simulstream/server/speech_processors/remote/
http_speech_processor_server.py`), driven as its `HttpProxySpeechProcessor` drives it, one session id per recording:
`GET /speech_chunk_size`, `PUT /source_language`, `PUT /target_language`, then `POST /process_chunk` (base64 float32
waveform at 16 kHz) per chunk of `speech_chunk_size` seconds, `POST /end_of_stream`, `POST /clear`. Every request
carries `{"session_id": ...}` as its JSON body, GET included. Requests are sent exactly as that client sends them
(urllib's headers, one connection each, `uuid4().hex` session ids, the same JSON): nothing tells a participant's
server that the harness, not SimulStream, is asking, nor which instance it is.

The readiness probe asks `GET /speech_chunk_size` for one session of its own and always `POST /clear`s it, so
however often it is repeated it holds at most one of the server's processors, and none once the probe is over.

Answers are incremental outputs (`new_tokens`, `deleted_tokens`, with their strings). The driver keeps the tokens as
SimulStream's own log reader does (deleted tokens come off the end, new ones are appended). Its text grows by an
output's `new_string` when that string starts with a space (or the text is empty) and nothing was deleted; otherwise
the driver asks the participant for the text of all its tokens (`GET /tokens_to_string`), since a SentencePiece
detokenizer strips the space before a new word from the string of one output. That answer is the text recorded, so
its time is the participant's: the output is stamped when the last answer that shapes it is in (the chunk's, or the
detokenizer's after it), and a server cannot answer `process_chunk` at once with placeholder tokens and do its
work uncharged in `tokens_to_string`. When the new text only extends the
old one by whole words, the words are written; otherwise the whole text is written as a revision (the
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


def _tokens(answer: Any, key: str, endpoint: str) -> list[str]:
    value = answer.get(key, [])
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise ParticipantError(f"{endpoint}: {key} must be a list of strings")
    return value


def _increment(answer: Any, endpoint: str) -> tuple[list[str], list[str]]:
    """(deleted_tokens, new_tokens) of an incremental output."""
    if not isinstance(answer, dict):
        raise ParticipantError(f"{endpoint}: expected an incremental output object")
    return _tokens(answer, "deleted_tokens", endpoint), _tokens(answer, "new_tokens", endpoint)


class Hypothesis:
    """The participant's output as SimulStream's own log reader rebuilds it (tokens deleted from the end, then
    tokens appended), and its text as the participant detokenizes those tokens (`GET /tokens_to_string`): the strings
    of an incremental output may drop the space between two of them (a SentencePiece detokenizer strips it)."""

    def __init__(self, unit: str) -> None:
        self.tokens: list[str] = []
        self.text = ""
        self.unit = unit

    def apply(self, deleted: list[str], new: list[str], endpoint: str) -> bool:
        """Apply one incremental output to the tokens; whether they changed."""
        if deleted:
            if len(deleted) > len(self.tokens) or self.tokens[-len(deleted):] != deleted:
                raise ParticipantError(f"{endpoint}: deleted_tokens {deleted[:5]!r} are not the end of the output")
            self.tokens = self.tokens[: len(self.tokens) - len(deleted)]
        self.tokens += new
        return bool(deleted or new)

    def update(self, text: str) -> tuple[str, bool] | None:
        """(text, revise) to write now that the output reads `text`, or None when its units did not change: the
        new words when it only grew by whole words, else the whole text as a revision."""
        old, self.text = self.text, text
        before, after = split_units(old, self.unit), split_units(text, self.unit)
        if after == before:
            return None
        whole_words = not old.strip() or text[len(old):][:1].isspace() or self.unit != "word"
        if text.startswith(old) and after[: len(before)] == before and whole_words:
            added = after[len(before):]
            return " ".join(added) if self.unit == "word" else "".join(added), False
        return text, True


class SimulStreamHttp(AgentServerDriver):
    interface = "simulstream-http"

    urllib_headers = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.probe_session = {"session_id": uuid.uuid4().hex}  # one for every try of the probe

    def probe(self, deadline: float) -> None:
        try:
            _chunk_seconds(self.http.request("GET", "/speech_chunk_size", self.probe_session, deadline))
        finally:
            self._clear(self.probe_session)

    def _clear(self, session: dict[str, str]) -> None:
        """Release the session's processor (best effort: a failure here is not the instance's verdict)."""
        try:
            self.http.request("POST", "/clear", session, time.monotonic() + 5.0, expect_json=False)
        except ParticipantError:
            pass

    def _write(self, rounds: Rounds, t: float, hyp: Hypothesis, answer: Any, endpoint: str, *, finished: bool,
               session: dict[str, str], deadline: float) -> StepResponse:
        """Record the answer that arrived at `t`, at `t` or, when the text of the tokens had to be asked for, when
        that answer arrived: every request whose answer shapes the output is the participant's time."""
        deleted, new = _increment(answer, endpoint)
        change = None
        if hyp.apply(deleted, new, endpoint):
            appended = answer.get("new_string")
            if not deleted and isinstance(appended, str) and (not hyp.text or appended[:1].isspace()):
                change = hyp.update(hyp.text + appended)  # words appended with their separator: no need to ask
            else:
                change = hyp.update(self._detokenize(session, hyp.tokens, deadline))
                t = self.evaluation.clock()  # the text recorded is this answer: its time is charged
        text, revise = change if change is not None else ("", False)
        return rounds.answered(t, text, revise=revise, finished=finished)

    def _detokenize(self, session: dict[str, str], tokens: list[str], deadline: float) -> str:
        answer = self.http.request("GET", "/tokens_to_string", {**session, "tokens": tokens}, deadline)
        text = answer.get("tokens_as_string") if isinstance(answer, dict) else None
        if not isinstance(text, str):
            raise ParticipantError("GET /tokens_to_string: expected {\"tokens_as_string\": a string}")
        return text

    def run_instance(self, index: int, deadline: float) -> None:
        ev = self.evaluation
        if not ev.speech:
            raise ParticipantError("simulstream-http serves speech tracks only")
        session = {"session_id": uuid.uuid4().hex}  # as SimulStream's HttpProxySpeechProcessor: nothing else
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
                    resp = self._write(rounds, ev.clock(), hyp, answer, "POST /end_of_stream", finished=True,
                                       session=session, deadline=deadline)
                    break
                if resp.sample_rate != SAMPLE_RATE:
                    raise ParticipantError(f"simulstream-http needs {SAMPLE_RATE} Hz audio; the dataset has "
                                           f"{resp.sample_rate} Hz")
                wave = base64.b64encode(np.asarray(resp.segment, dtype=np.float32).tobytes()).decode("ascii")
                body = {**session, "waveform": wave}
                rounds.handed()
                answer = self.http.request("POST", "/process_chunk", body, deadline)
                resp = self._write(rounds, ev.clock(), hyp, answer, "POST /process_chunk", finished=False,
                                   session=session, deadline=deadline)
                if time.monotonic() > deadline and not resp.finished:
                    ev.expire(index, f"instance took longer than {ev.limits.instance_timeout_s:g} s")
                    return
        finally:
            self._clear(session)
