"""Runs SimulEval 1.1.4 agents (TextToTextAgent / SpeechToTextAgent subclasses) unmodified under the agent API.

SimulEval's evaluator loop is "push the next source segment, then pop once": every policy call follows exactly
one new segment (or, once the source is exhausted, an `EmptySegment(finished=True)`). The adapter reproduces
that loop on the harness protocol, so an agent takes the same decisions at the same source positions and gets
the same delays as under `simuleval`:

* before each `pop`, the segment that arrived since the last one is pushed as a `TextSegment` (one word) or a
  `SpeechSegment` (the samples of one READ); when the source is finished, SimulEval's empty final segment;
* a SimulEval `ReadAction` becomes a harness READ; a `WriteAction` (or a returned text `Segment`) becomes a
  harness WRITE, after which the next call READs again before asking the agent, as SimulEval does;
* reads after the end of the source are answered locally (SimulEval pushes an empty finished segment each time),
  bounded by `MAX_READS_AFTER_END`;
* on speech, SimulEval ends an instance right after the pop that follows the last segment; so does the adapter.

Stateless agents (`policy(self, states)`) get one SimulEval `AgentStates` per instance and may decode several
instances at once. Stateful agents (`policy(self)`, using `self.states` and maybe fields of their own) decode one
instance at a time whatever `--num-workers` says: an instance owns the agent from its first action to its last
(a worker whose instance ended without a last action, e.g. by a server timeout, loses it after `STALE_OWNER_S`).
"""

from __future__ import annotations

import argparse
import threading
import time
from inspect import signature
from typing import Any

from harness.client.agent import Action, Agent, AgentStates, ReadAction, WriteAction

MAX_READS_AFTER_END = 10_000
STALE_OWNER_S = 120.0


def _simuleval() -> Any:
    try:
        import simuleval.agents.actions as actions
        import simuleval.data.segments as segments
    except ImportError as exc:  # pragma: no cover - simuleval is part of the test set-up
        raise ImportError(f"SimulEval 1.1.4 is needed to run this agent (pip install --no-deps simuleval==1.1.4): "
                          f"{exc}") from None
    return actions, segments


class SimulEvalAgentAdapter(Agent):
    """A harness agent that drives one SimulEval `GenericAgent` object."""

    def __init__(self, inner: Any, args: argparse.Namespace | None = None) -> None:
        super().__init__(args)
        if getattr(inner, "target_type", "text") != "text":
            raise ValueError(f"{type(inner).__name__}: only text-output SimulEval agents are supported "
                             f"(target_type {inner.target_type!r})")
        self.inner = inner
        self.source_type = "speech" if inner.source_type == "speech" else "text"  # type: ignore[misc]
        self.stateless = len(signature(inner.policy).parameters) > 0
        self._lock = threading.RLock()
        self._owner_cond = threading.Condition()
        self._owner: AgentStates | None = None
        self._owner_seen = 0.0
        self._actions, self._segments = _simuleval()

    @classmethod
    def wrap(cls, agent_cls: Any, args: argparse.Namespace) -> SimulEvalAgentAdapter:
        """Build the SimulEval agent from its options (its own `from_args`) and wrap it."""
        return cls(agent_cls.from_args(args), args)

    def build_states(self) -> AgentStates:
        states = AgentStates()
        states.extra["simuleval"] = {"states": self.inner.build_states(), "pushed": 0, "after_end": 0,
                                     "reset": False}
        return states

    # -- the SimulEval loop, one harness action at a time ----------------------------------------------------
    def _segment(self, states: AgentStates, ex: dict[str, Any]) -> Any:
        """The SimulEval segment for what arrived since the last push (None if nothing arrived yet)."""
        seg = self._segments
        new = states.source[ex["pushed"]:]
        if not new:
            if not states.source_finished:
                return None
            return seg.EmptySegment(finished=True)
        ex["pushed"] = len(states.source)
        if self.source_type == "speech":
            rate = states.source_sample_rate or 16000
            return seg.SpeechSegment(index=int(ex["pushed"] * 1000 / rate), content=list(new),
                                     finished=states.source_finished, sample_rate=rate)
        return seg.TextSegment(index=ex["pushed"] - 1, content=" ".join(str(w) for w in new),
                               finished=states.source_finished)

    def _pushpop(self, segment: Any, se_states: Any) -> Any:
        if self.stateless:
            return self.inner.pushpop(segment, se_states)
        with self._lock:
            self.inner.states = se_states
            return self.inner.pushpop(segment)

    def _reset(self, se_states: Any) -> None:
        """SimulEval calls `agent.reset()` before each instance (agents may clear their own fields there)."""
        with self._lock:
            if self.stateless:
                se_states.reset()
            else:
                self.inner.states = se_states
                self.inner.reset()

    def _own(self, states: AgentStates) -> None:
        """Stateful agents: wait until no other instance owns the agent, then own it."""
        with self._owner_cond:
            while (self._owner is not None and self._owner is not states
                   and time.monotonic() - self._owner_seen < STALE_OWNER_S):
                self._owner_cond.wait(timeout=1.0)
            self._owner = states
            self._owner_seen = time.monotonic()

    def _release(self, states: AgentStates) -> None:
        with self._owner_cond:
            if self._owner is states:
                self._owner = None
                self._owner_cond.notify_all()

    def decide(self, states: AgentStates) -> Action:
        if self.stateless:
            return self._decide(states)
        self._own(states)
        try:
            action = self._decide(states)
        except BaseException:
            self._release(states)
            raise
        if getattr(action, "finished", False):
            self._release(states)
        return action

    def _decide(self, states: AgentStates) -> Action:
        ex = states.extra["simuleval"]
        se_states = ex["states"]
        if not ex["reset"]:
            self._reset(se_states)
            ex["reset"] = True
        while True:
            segment = self._segment(states, ex)
            if segment is None:  # every pop follows a fresh segment: read it first
                return ReadAction()
            if segment.is_empty:
                ex["after_end"] += 1
                if ex["after_end"] > MAX_READS_AFTER_END:
                    raise RuntimeError(f"{type(self.inner).__name__} kept reading after the end of the source")
            # SimulEval stops a speech instance right after the pop that follows its last segment
            speech_end = self.source_type == "speech" and bool(segment.finished)
            out = self._pushpop(segment, se_states)
            if out.is_empty and not out.finished:  # a READ
                if speech_end:
                    return WriteAction("", finished=True)
                continue
            if out.is_empty:  # the target was already finished
                return WriteAction("", finished=True)
            text = out.content if isinstance(out.content, str) else " ".join(map(str, out.content))
            return WriteAction(text, finished=bool(out.finished) or speech_end)

    def policy(self, states: AgentStates) -> Action:  # the harness calls decide(); kept for completeness
        return self.decide(states)
