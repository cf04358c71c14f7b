"""Extra-context long-form cascade (IWSLT 2026 sub-track): the whisper_longform template's agent
(`whisper_longform.py`, byte-equal), biased to the talk's paper.

- `prepare.py` (the submission's `prepare:`, run once with the network off) reads the terms of every paper of
  `$HARNESS_CONTEXT_LIST` with pypdf into `$HARNESS_PREPARED_DIR/terms.txt`; the agent reads that glossary (under
  `harness run`, with no prepare step, it reads the PDFs the harness hands it directly).
- Whisper's prompt starts with the paper's terms (names, acronyms), the usual way to bias Whisper to a glossary.
- Every written word that the paper spells otherwise is written in the paper's spelling (`roosevelt` → `Roosevelt`).
"""

from __future__ import annotations

import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from terms import pdf_terms, read_terms  # noqa: E402
from whisper_longform import Stream, WhisperLongform  # noqa: E402

from harness.client.agent import Action, AgentStates, WriteAction  # noqa: E402

MAX_PROMPT_TERMS = 40


class ContextWhisperLongform(WhisperLongform):
    """WhisperLongform whose ASR prompt and output spelling follow the terms of the talk's paper."""

    def __init__(self, args: Any = None) -> None:
        super().__init__(args)
        self.terms: dict[str, str] = {}

    def set_context(self, documents: list[str]) -> None:
        super().set_context(documents)
        prepared = os.environ.get("HARNESS_PREPARED_DIR")
        self.terms = read_terms(prepared) if prepared else (pdf_terms(documents) if documents else {})

    def _prompt(self, s: Stream) -> str | None:
        glossary = ", ".join(sorted(set(self.terms.values()))[:MAX_PROMPT_TERMS])
        recent = super()._prompt(s)
        return " ".join(p for p in (f"{glossary}." if glossary else "", recent or "") if p) or None

    def policy(self, states: AgentStates) -> Action:
        action = super().policy(states)
        if isinstance(action, WriteAction) and self.terms and action.content:
            words = [self.terms.get(w.lower(), w) for w in str(action.content).split()]
            return WriteAction(" ".join(words), finished=action.finished)
        return action
