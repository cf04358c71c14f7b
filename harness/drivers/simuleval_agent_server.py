"""SimulEval 1.1.4's agent service (`simuleval --standalone --remote-port 2023 --agent ...`), driven as SimulEval's
own `--remote-eval` loop drives it: per instance `POST /reset`, then rounds of `PUT /input` (the next source
segment, or an empty finished segment once the source is exhausted) and `GET /output` (one policy step's output
segment), until an output segment says `finished` — on speech, or until the step that follows the last source
segment, where SimulEval's own evaluator (`SentenceLevelEvaluator`, which `--remote-eval` cannot run in 1.1.4) and
the harness client's SimulEval adapter end a speech instance.

Segments are SimulEval's JSON (`simuleval/data/segments.py`): text segments carry one source word, speech segments
`segment_size` ms of float samples with their `sample_rate`. The service answers `GET /` with its agent's name
(`{"info": "..."}`), which is the readiness probe: only a JSON object counts as listening.
"""

from __future__ import annotations

import json
import time
from typing import Any

from harness.drivers.base import AgentServerDriver, Rounds
from harness.drivers.http import ParticipantError
from harness.protocol import StepResponse


def source_segment(resp: StepResponse, speech: bool, tgt_lang: str) -> dict[str, Any]:
    """SimulEval's JSON of the segment the evaluation just served (an empty finished one past the end)."""
    if resp.segment is None:
        return {"index": resp.position, "content": [], "finished": True, "is_empty": True, "data_type": None,
                "tgt_lang": tgt_lang, "config": {}}
    if speech:
        index_ms = resp.position * 1000.0 / resp.sample_rate if resp.sample_rate else resp.position
        return {"index": index_ms, "content": resp.segment, "finished": resp.source_finished, "is_empty": False,
                "data_type": "speech", "sample_rate": resp.sample_rate, "tgt_lang": tgt_lang, "config": {}}
    return {"index": resp.position - 1, "content": resp.segment, "finished": resp.source_finished,
            "is_empty": False, "data_type": "text", "tgt_lang": tgt_lang, "config": {}}


def output_text(answer: Any) -> tuple[str, bool]:
    """(text written, finished) of a `GET /output` answer; `ParticipantError` if it is not a text segment."""
    where = "GET /output"
    if not isinstance(answer, dict):
        raise ParticipantError(f"{where}: expected a segment object, got {type(answer).__name__}")
    finished = answer.get("finished", False)
    if not isinstance(finished, bool):
        raise ParticipantError(f"{where}: 'finished' must be true or false")
    if answer.get("is_empty"):
        return "", finished
    content = answer.get("content", "")
    if answer.get("data_type") not in ("text", None) or not isinstance(content, str):
        raise ParticipantError(f"{where}: only text output segments are scored (got data_type "
                               f"{answer.get('data_type')!r})")
    return content, finished


class SimulEvalAgentServer(AgentServerDriver):
    interface = "simuleval-agent-server"

    def probe(self, deadline: float) -> None:
        answer = self.http.request("GET", "/", deadline=deadline)
        if not isinstance(answer, dict):
            raise ParticipantError(f"GET /: expected the agent's information (a JSON object such as "
                                   f"{{\"info\": \"...\"}}), got {type(answer).__name__}")

    def run_instance(self, index: int, deadline: float) -> None:
        ev = self.evaluation
        speech = ev.speech
        tgt_lang = ev.track.target_lang
        self.http.request("POST", "/reset", deadline=deadline, expect_json=False)
        rounds = Rounds(ev, index)
        resp = rounds.start()
        while not resp.finished:
            segment = source_segment(resp, speech, tgt_lang)
            body = json.dumps(segment).encode()
            rounds.handed()
            self.http.request("PUT", "/input", body, deadline=deadline, expect_json=False)
            answer = self.http.request("GET", "/output", deadline=deadline)
            t_answer = ev.clock()
            text, finished = output_text(answer)
            # SimulEval's evaluator ends a speech instance with the step that follows its last segment
            resp = rounds.answered(t_answer, text, finished=finished or (speech and segment["finished"]))
            if time.monotonic() > deadline and not resp.finished:
                ev.expire(index, f"instance took longer than {ev.limits.instance_timeout_s:g} s")
                return
