"""Re-translation with Apertium en→es: after every source word, revise the whole hypothesis.

Each READ is followed by a fresh translation of the full prefix, sent as a `ReviseAction` when it differs
from the current hypothesis (Niehues et al. 2018; Arivazhagan et al. 2020). The server keeps every revision,
so the scorer reports normalized erasure (NE) beside quality and latency of the final hypothesis.
"""

from __future__ import annotations

import argparse

from harness.baselines.apertium import Apertium
from harness.client.agent import Action, AgentStates, ReadAction, ReviseAction, TextAgent


class Retranslation(TextAgent):
    """Re-translates the prefix after every new source word."""

    def __init__(self, args: argparse.Namespace | None = None) -> None:
        super().__init__(args)
        self.mt = Apertium(getattr(self.args, "apertium_pair", "eng-spa"))

    @staticmethod
    def add_args(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--apertium-pair", default="eng-spa", help="Apertium direction (default eng-spa)")

    def policy(self, states: AgentStates) -> Action:
        if states.extra.get("translated") == len(states.source) and not states.source_finished:
            return ReadAction()
        states.extra["translated"] = len(states.source)
        hypothesis = self.mt.translate(" ".join(states.source))
        if states.source_finished:
            return ReviseAction(hypothesis, finished=True)
        if hypothesis == states.target_text():
            return ReadAction()
        return ReviseAction(hypothesis)
