"""Local agreement with Apertium en→es: commit the longest common prefix of two consecutive prefix translations.

After every `--chunk` new source words the prefix read so far is translated; the words on which this translation
and the previous one agree (their longest common prefix), beyond what is already written, are written
(Liu et al. 2020, "LA-2"). When the source ends, the rest of the full translation is written.
"""

from __future__ import annotations

import argparse

from harness.baselines.apertium import Apertium
from harness.client.agent import Action, AgentStates, ReadAction, TextAgent, WriteAction


def common_prefix(a: list[str], b: list[str]) -> list[str]:
    """The longest common prefix of two word lists."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]


class LocalAgreement(TextAgent):
    """Commits what two consecutive prefix translations agree on."""

    def __init__(self, args: argparse.Namespace | None = None) -> None:
        super().__init__(args)
        self.chunk: int = getattr(self.args, "chunk", 1)
        if self.chunk < 1:
            raise ValueError("--chunk must be at least 1")
        self.mt = Apertium(getattr(self.args, "apertium_pair", "eng-spa"))

    @staticmethod
    def add_args(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--chunk", type=int, default=1, help="source words between translations (default 1)")
        parser.add_argument("--apertium-pair", default="eng-spa", help="Apertium direction (default eng-spa)")

    def policy(self, states: AgentStates) -> Action:
        if states.source_finished:
            full = self.mt.translate(" ".join(states.source)).split()
            return WriteAction(" ".join(full[len(states.target):]), finished=True)
        done = states.extra.get("translated", 0)
        if len(states.source) < done + self.chunk:
            return ReadAction()
        states.extra["translated"] = len(states.source)
        current = self.mt.translate(" ".join(states.source)).split()
        previous = states.extra.get("previous")
        states.extra["previous"] = current
        if previous is None:
            return ReadAction()
        agreed = common_prefix(previous, current)
        if len(agreed) <= len(states.target):
            return ReadAction()
        return WriteAction(" ".join(agreed[len(states.target):]))
