"""A wait-k word-for-word SimulEval 1.1.4 agent (en→es) used to produce the bundled example run.

Policy: read k source words ahead, then translate one source word per step with a lexicon that apertium eng-spa
built beforehand (one call for every distinct source word); after the source ends, flush the rest.
"""

from __future__ import annotations

import json
from argparse import ArgumentParser

from simuleval.agents import TextToTextAgent
from simuleval.agents.actions import ReadAction, WriteAction
from simuleval.utils import entrypoint


@entrypoint
class WaitKLexiconAgent(TextToTextAgent):
    """Wait-k policy with word-for-word apertium translations."""

    def __init__(self, args):
        super().__init__(args)
        self.k = args.waitk
        with open(args.lexicon, encoding="utf-8") as f:
            self.lexicon = json.load(f)
        self.pos = 0

    @staticmethod
    def add_args(parser: ArgumentParser):
        parser.add_argument("--waitk", type=int, default=3)
        parser.add_argument("--lexicon", type=str, required=True)

    def reset(self):
        super().reset()
        self.pos = 0

    def policy(self, states=None):
        states = states or self.states
        if self.pos >= len(states.source):
            return ReadAction() if not states.source_finished else WriteAction("", finished=True)
        if len(states.source) - self.pos < self.k and not states.source_finished:
            return ReadAction()
        word = states.source[self.pos]
        self.pos += 1
        done = states.source_finished and self.pos >= len(states.source)
        return WriteAction(self.lexicon.get(word, word), finished=done)
