"""A harness `SpeechAgent` served as a SimulStream 1.0.0 `SpeechProcessor` (an IWSLT 2026 style image).

SimulStream's HTTP speech-processor server (`simulstream.server.speech_processors.remote.
http_speech_processor_server`) loads the class named by `type:` in its speech-processor YAML; with
`type: harness.client.simulstream_processor.AgentSpeechProcessor` it serves the agent given there:

    type: harness.client.simulstream_processor.AgentSpeechProcessor
    speech_chunk_size: 2.0          # seconds of audio per process_chunk (SimulStream's own field)
    agent: /app/agent.py            # a harness SpeechAgent (or a SimulEval 1.1.4 speech agent)
    agent_args: ["--chunk-ms", "2000"]
    agent_class: null               # when the file defines several agents

Each `process_chunk` adds the chunk's samples to the agent's source and runs the agent until it reads again;
`end_of_stream` marks the source finished and runs it until it finishes. What the agent wrote is answered as an
incremental output of words: appended words are `new_tokens`; a revision (`ReviseAction`) deletes the words after
the prefix it keeps and adds its own. The agent sees what it would see under `harness client` (the same states,
`preprocess`/`postprocess`, `</s>` ending an instance), so where its decisions fall on chunk boundaries (a policy
that acts every `speech_chunk_size` of audio) it writes the same words at the same source positions as through
the harness's own interface. SimulStream itself must be installed (`pip install --no-deps simulstream==1.0.0`; its
HTTP server needs only numpy and PyYAML).
"""

from __future__ import annotations

import argparse
from types import SimpleNamespace

import numpy as np
from simulstream.server.speech_processors import SAMPLE_RATE, SpeechProcessor
from simulstream.server.speech_processors.incremental_output import IncrementalOutput

from harness.client.agent import Agent, AgentStates, ReviseAction, WriteAction
from harness.protocol import EOS

#: reads after the end of the source before the agent is taken as finished (it has nothing more to say)
MAX_READS_AFTER_END = 100


def load_agent(config: SimpleNamespace) -> Agent:
    """The agent named by a speech-processor config (`agent`, `agent_args`, `agent_class`)."""
    from harness.client.options import parse_agent

    args = argparse.Namespace(agent=config.agent, agent_class=getattr(config, "agent_class", None),
                              agent_args=[str(a) for a in getattr(config, "agent_args", None) or []], num_workers=1)
    return parse_agent(args)


def increment(before: list[str], after: list[str]) -> IncrementalOutput:
    """The incremental output that turns the words `before` into `after` (deleting after their common prefix)."""
    keep = 0
    for a, b in zip(before, after, strict=False):
        if a != b:
            break
        keep += 1
    deleted, new = before[keep:], after[keep:]
    lead = " " if keep else ""
    return IncrementalOutput(new_tokens=new, new_string=lead + " ".join(new) if new else "",
                             deleted_tokens=deleted, deleted_string=lead + " ".join(deleted) if deleted else "")


class AgentSpeechProcessor(SpeechProcessor):
    """One agent and one instance's states (SimulStream gives each session its own processor from a pool)."""

    @classmethod
    def load_model(cls, config: SimpleNamespace) -> None:
        """Nothing shared: each processor of the pool builds its own agent."""

    def __init__(self, config: SimpleNamespace) -> None:
        super().__init__(config)
        self.agent = load_agent(config)
        self.source_language: str | None = None
        self.target_language: str | None = None
        self.clear()

    def clear(self) -> None:
        self.states: AgentStates = self.agent.build_states()
        self.states.source_sample_rate = SAMPLE_RATE
        self.reads_after_end = 0

    def set_source_language(self, language: str) -> None:
        self.source_language = language

    def set_target_language(self, language: str) -> None:
        self.target_language = language

    def tokens_to_string(self, tokens: list[str]) -> str:
        return " ".join(tokens)

    def process_chunk(self, waveform: np.ndarray) -> IncrementalOutput:
        samples = self.agent.preprocess(np.asarray(waveform, dtype=np.float32).astype(np.float64).tolist())
        if isinstance(samples, list):
            self.states.source.extend(samples)
        else:
            self.states.source.append(samples)
        return self._run()

    def end_of_stream(self) -> IncrementalOutput:
        self.states.source_finished = True
        return self._run()

    def _run(self) -> IncrementalOutput:
        """Let the agent act until it reads (or finishes); what it wrote, as an incremental output."""
        states = self.states
        before = list(states.target)
        while not states.target_finished:
            action = self.agent.decide(states)
            if action.is_read():
                if not states.source_finished:
                    break
                self.reads_after_end += 1
                if self.reads_after_end > MAX_READS_AFTER_END:
                    states.target_finished = True
                continue
            if not isinstance(action, (WriteAction, ReviseAction)):
                raise TypeError(f"{type(self.agent).__name__} returned {action!r}, not a READ/WRITE action")
            text = self.agent.postprocess(action.content) if action.content else ""
            words = text.split()
            finished = action.finished or states.target_finished
            if EOS in words:
                words, finished = words[: words.index(EOS)], True
            if isinstance(action, ReviseAction):
                states.target = words
            else:
                states.target.extend(words)
            states.target_finished = finished
        return increment(before, list(states.target))

