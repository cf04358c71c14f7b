"""Target tokens for latency and stability: the one tokenizer of hypotheses and references, and the delay of each
token of a revised hypothesis (what the server logs for a re-translation system).

`word`: whitespace-separated words. `char` (zh, ja): every non-whitespace character — SimulEval's `char` unit
drops spaces; we drop every whitespace character, so a tab or newline is never a token.
"""

from __future__ import annotations

from collections.abc import Sequence

UNITS = ("word", "char")


def split_units(text: str, unit: str) -> list[str]:
    """The target tokens of `text` in `unit` (`word` or `char`)."""
    if unit == "char":
        return [c for c in text if not c.isspace()]
    return text.split()


def join_units(tokens: list[str], unit: str) -> str:
    """Text of `tokens`: characters joined without spaces, words with one space."""
    return "".join(tokens) if unit == "char" else " ".join(tokens)


def common_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    """How many leading tokens `a` and `b` share."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def final_token_delays(revisions: Sequence[tuple[float, str]], unit: str = "word") -> list[float]:
    """Delay of each token of the final hypothesis.

    `revisions` are (delay, full hypothesis text) in order. Token j gets the delay of the first revision i such
    that every revision from i on starts with the final hypothesis' tokens 0..j. Works the same for elapsed times.
    """
    if not revisions:
        return []
    toks = [split_units(text, unit) for _, text in revisions]
    final = toks[-1]
    # stable[i] = min over revisions r >= i of the common prefix of r with the final hypothesis
    stable = [0] * len(toks)
    running = len(final)
    for i in range(len(toks) - 1, -1, -1):
        running = min(running, common_prefix(toks[i], final))
        stable[i] = running
    out: list[float] = []
    i = 0
    for j in range(len(final)):
        while stable[i] < j + 1:  # stable is non-decreasing and stable[-1] == len(final): always terminates
            i += 1
        out.append(revisions[i][0])
    return out
