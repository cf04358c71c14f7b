"""Stability of re-translation systems: Normalized Erasure and the delay of each final token.

A re-translation system revises its full hypothesis as it reads more source. Normalized Erasure (Arivazhagan et
al., 2020) counts the tokens erased from the end of the previous output at each revision, over the length of the
final output. The delay of a final token is that of the first revision after which its prefix (the tokens up to and
including it) never changes again, so every latency metric also applies to re-translation systems.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from harness.units import common_prefix as _common_prefix
from harness.units import final_token_delays, split_units

__all__ = ["tokens", "normalized_erasure", "corpus_normalized_erasure", "final_token_delays"]


def tokens(text: str, unit: str = "word") -> list[str]:
    """Target tokens of `text` (`harness.units.split_units`)."""
    return split_units(text, unit)


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
