"""Stability of re-translation systems: Normalized Erasure and the delay of each final token.

A re-translation system revises its full hypothesis as it reads more source. Normalized Erasure (Arivazhagan et
al., 2020) counts the tokens erased from the end of the previous output at each revision, over the length of the
final output. The delay of a final token is that of the first revision after which its prefix (the tokens up to and
including it) never changes again, so every latency metric also applies to re-translation systems.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from harness.units import split_units

__all__ = ["tokens", "normalized_erasure", "corpus_normalized_erasure", "final_token_delays"]


def tokens(text: str, unit: str = "word") -> list[str]:
    """Target tokens of `text` (`harness.units.split_units`)."""
    return split_units(text, unit)


def _common_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def normalized_erasure(revisions: Sequence[str], unit: str = "word") -> tuple[int, int]:
    """(tokens erased over all revisions, tokens of the final hypothesis) for one instance.

    Each revision is the full hypothesis text; going from one revision to the next erases every token of the
    previous one past their common prefix.
    """
    erased = 0
    prev: list[str] = []
    for text in revisions:
        cur = tokens(text, unit)
        erased += len(prev) - _common_prefix(prev, cur)
        prev = cur
    return erased, len(prev)


def corpus_normalized_erasure(instances: Iterable[Sequence[str]], unit: str = "word") -> float | None:
    """Corpus NE = total erased tokens / total final tokens (None when no instance has a final token)."""
    erased = final = 0
    for revisions in instances:
        e, f = normalized_erasure(revisions, unit)
        erased += e
        final += f
    return erased / final if final else None


def final_token_delays(revisions: Sequence[tuple[float, str]], unit: str = "word") -> list[float]:
    """Delay of each token of the final hypothesis.

    `revisions` are (delay, full hypothesis text) in order. Token j gets the delay of the first revision i such
    that every revision from i on starts with the final hypothesis' tokens 0..j. Works the same for elapsed times.
    """
    if not revisions:
        return []
    toks = [tokens(text, unit) for _, text in revisions]
    final = toks[-1]
    # stable[i] = min over revisions r >= i of the common prefix of r with the final hypothesis
    stable = [0] * len(toks)
    running = len(final)
    for i in range(len(toks) - 1, -1, -1):
        running = min(running, _common_prefix(toks[i], final))
        stable[i] = running
    out: list[float] = []
    i = 0
    for j in range(len(final)):
        while stable[i] < j + 1:  # stable is non-decreasing and stable[-1] == len(final): always terminates
            i += 1
        out.append(revisions[i][0])
    return out
