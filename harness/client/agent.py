"""Agent API, after the SimulEval paper's Listing 1.

An agent decides, one policy action at a time, whether to READ more source or to WRITE target text.
Two styles work, and may be mixed:

* the seed's style: `policy(states)` returns `READ` or `WRITE`; on `WRITE` the runner calls
  `predict(states)` for the text to write (return `EOS`/`None`-free text; set `states.target_finished`
  or return `WriteAction(..., finished=True)` to end);
* the action style (SimulEval 1.1): `policy(states)` returns `ReadAction()`, `WriteAction(text, finished)`
  or, for re-translation systems, `ReviseAction(full_hypothesis, finished)`.

`preprocess` is applied to every source segment as it arrives, `postprocess` to every text written.
States are per instance; a fresh `AgentStates` is made by `build_states()` for each instance, so one agent
object can decode several instances concurrently (one states object each).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any, ClassVar

READ = "READ"
WRITE = "WRITE"


class Action:
    """A policy decision."""

    def is_read(self) -> bool:
        return False


@dataclass(frozen=True)
class ReadAction(Action):
    """Read the next source segment (a word for text, `segment_size` ms of audio for speech)."""

    def is_read(self) -> bool:
        return True


@dataclass(frozen=True)
class WriteAction(Action):
    """Append `content` (detokenized text; may be empty) to the hypothesis; `finished` ends the instance."""

    content: str
    finished: bool = False


@dataclass(frozen=True)
class ReviseAction(Action):
    """Replace the whole hypothesis by `content` (re-translation systems); `finished` ends the instance."""

    content: str
    finished: bool = False


@dataclass
class AgentStates:
    """Decoding progress of one instance, as the agent sees it.

    `source` holds words (text) or float samples in [-1, 1] (speech); `target` the words written so far
    (for re-translation, the words of the current revision).
    """

    source: list[Any] = field(default_factory=list)
    target: list[str] = field(default_factory=list)
    source_finished: bool = False
    target_finished: bool = False
    source_sample_rate: int = 0
    instance_id: int = -1
    extra: dict[str, Any] = field(default_factory=dict)

    def finish_read(self) -> bool:
        """The seed's name for `source_finished`."""
        return self.source_finished

    def target_text(self) -> str:
        """The hypothesis so far, space-joined."""
        return " ".join(self.target)


class Agent:
    """Base class of every agent. Subclass `TextAgent` or `SpeechAgent`."""

    source_type: ClassVar[str] = "text"
    target_type: ClassVar[str] = "text"
    #: the dataset's context documents (extra context: paths the agent can read), set by `set_context`
    context: tuple[str, ...] = ()

    def __init__(self, args: argparse.Namespace | None = None) -> None:
        self.args = args if args is not None else argparse.Namespace()

    @staticmethod
    def add_args(parser: argparse.ArgumentParser) -> None:
        """Add the agent's own command-line options."""

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Agent:
        return cls(args)

    def set_context(self, documents: list[str]) -> None:
        """Called once before decoding with the paths of the dataset's context documents (the server's
        `info["context"]`; empty when the track names none). Override to load them; call this to keep them."""
        self.context = tuple(documents)

    def build_states(self) -> AgentStates:
        """A fresh per-instance state; override to return a subclass with model state."""
        return AgentStates()

    def preprocess(self, segment: Any) -> Any:
        """Applied to each incoming source segment (a word, or a list of samples) before it is stored."""
        return segment

    def postprocess(self, text: str) -> str:
        """Applied to each text the agent writes, before it is sent."""
        return text

    def policy(self, states: AgentStates) -> Action | str:
        """Decide the next action; return an `Action` or `READ`/`WRITE`."""
        raise NotImplementedError(f"{type(self).__name__} must implement policy()")

    def predict(self, states: AgentStates) -> str | WriteAction | ReviseAction:
        """Text to write after `policy` returned `WRITE`."""
        raise NotImplementedError(f"{type(self).__name__} returned WRITE but has no predict()")

    def decide(self, states: AgentStates) -> Action:
        """One policy step as an `Action` object, whichever style the agent is written in."""
        decision = self.policy(states)
        if isinstance(decision, Action):
            return decision
        if decision == READ:
            return ReadAction()
        if decision == WRITE:
            out = self.predict(states)
            if isinstance(out, (WriteAction, ReviseAction)):
                return out
            return WriteAction(str(out), finished=states.target_finished)
        raise TypeError(f"{type(self).__name__}.policy returned {decision!r}; expected an Action, READ or WRITE")


class TextAgent(Agent):
    """An agent whose source is text, read one word per READ."""

    source_type = "text"


class SpeechAgent(Agent):
    """An agent whose source is speech, read `segment_size` ms of samples per READ."""

    source_type = "speech"
