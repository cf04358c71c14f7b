"""Target tokens for latency and stability: the one tokenizer of hypotheses and references.

`word`: whitespace-separated words. `char` (zh, ja): every non-whitespace character — SimulEval's `char` unit
drops spaces; we drop every whitespace character, so a tab or newline is never a token.
"""

from __future__ import annotations

UNITS = ("word", "char")


def split_units(text: str, unit: str) -> list[str]:
    """The target tokens of `text` in `unit` (`word` or `char`)."""
    if unit == "char":
        return [c for c in text if not c.isspace()]
    return text.split()


def join_units(tokens: list[str], unit: str) -> str:
    """Text of `tokens`: characters joined without spaces, words with one space."""
    return "".join(tokens) if unit == "char" else " ".join(tokens)
