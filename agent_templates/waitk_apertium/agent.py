"""Test-time wait-k with Apertium en→es: translate the source prefix read so far, write the next target word.

Policy (Ma et al. 2019, applied at test time to a full-sentence translator): read until the source is `k` words
ahead of the target; then translate the prefix with Apertium and write the word at position len(target) of that
translation (read on if the translation of the prefix is not that long yet). When the source ends, write the rest
of the full translation and finish. Apertium runs as one persistent process; identical prefixes are cached.
"""

from __future__ import annotations

import argparse

from harness.baselines.apertium import Apertium
from harness.client.agent import Action, AgentStates, ReadAction, TextAgent, WriteAction


class WaitkApertium(TextAgent):
    """Wait-k over prefix translations by Apertium."""

    def __init__(self, args: argparse.Namespace | None = None) -> None:
        super().__init__(args)
        self.k: int = getattr(self.args, "waitk", 3)
        if self.k < 1:
            raise ValueError("--waitk must be at least 1")
        self.mt = Apertium(getattr(self.args, "apertium_pair", "eng-spa"))

    @staticmethod
    def add_args(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--waitk", type=int, default=3, help="lag in source words (default 3)")
        parser.add_argument("--apertium-pair", default="eng-spa", help="Apertium direction (default eng-spa)")

    def policy(self, states: AgentStates) -> Action:
        if states.source_finished:
            full = self.mt.translate(" ".join(states.source)).split()
            return WriteAction(" ".join(full[len(states.target):]), finished=True)
        if len(states.source) - len(states.target) < self.k:
            return ReadAction()
        prefix = self.mt.translate(" ".join(states.source)).split()
        if len(prefix) <= len(states.target):
            return ReadAction()
        return WriteAction(prefix[len(states.target)])
