"""Context-terms baseline (IWSLT 2026 extra context): wait-k copy of the source, with every word that the talk's
paper spells otherwise (`simulstream` -> `SimulStream`) written in the paper's spelling.

Its terms come from `prepare.py`'s $HARNESS_PREPARED_DIR/terms.txt in a container, else (`harness run`) straight
from the context documents the harness hands the agent (`set_context`). Without context it is a plain copy.
"""

from __future__ import annotations

import os
import sys

from harness.client.agent import ReadAction, TextAgent, WriteAction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from terms import pdf_terms, read_terms  # noqa: E402


class ContextTermsAgent(TextAgent):
    """Wait-k (k = `--waitk`) word copy, biased to the terms of the context documents."""

    def __init__(self, args=None) -> None:  # noqa: ANN001
        super().__init__(args)
        self.k = int(getattr(self.args, "waitk", 2) or 2)
        self.terms: dict[str, str] = {}

    @staticmethod
    def add_args(parser) -> None:  # noqa: ANN001
        parser.add_argument("--waitk", type=int, default=2)

    def set_context(self, documents: list[str]) -> None:
        super().set_context(documents)
        prepared = os.environ.get("HARNESS_PREPARED_DIR")
        self.terms = read_terms(prepared) if prepared else (pdf_terms(documents) if documents else {})

    def policy(self, states):  # noqa: ANN001, ANN201
        written = len(states.target)
        if written >= len(states.source) and states.source_finished:
            return WriteAction("", finished=True)
        if not states.source_finished and len(states.source) - written < self.k:
            return ReadAction()
        word = states.source[written]
        return WriteAction(self.terms.get(word.lower(), word), finished=states.source_finished
                           and written + 1 == len(states.source))
