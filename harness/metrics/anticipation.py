"""Average Anticipation (SiMuST-C, §2.2): how far ahead of the source a translation's words are.

With word alignment links (i, j) — source word i aligned with target word j — a target word whose source word
comes later (i > j) had to be anticipated:

    AA = (1/n) · Σ over the n links of max(i − j, 0)

computed per sentence pair (None when a pair has no link) and averaged over the pairs that have one.

The paper aligned with SimAlign, whose multilingual encoder cannot be fetched offline; the aligner here is eflomal
(a statistical aligner on PyPI, no model download), the intersection of its forward and reverse links over
lower-cased 13a tokens. It is a replaceable part (`Aligner`). eflomal samples, so two runs can differ slightly:
alignments are cached on disk by a hash of the aligner and the data, and every later scoring reads the same links.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from harness.errors import HarnessError
from harness.jsonio import write_text_atomic

__all__ = ["Aligner", "EflomalAligner", "average_anticipation", "corpus_anticipation", "aligned",
           "DEFINITION"]

Links = list[tuple[int, int]]
DEFINITION = ("Average Anticipation (SiMuST-C): over word-alignment links (source i, target j), the mean of "
              "max(i − j, 0) — how far ahead of the source the target words are (0: monotonic).")


class Aligner(Protocol):
    """Word alignment of sentence pairs: one list of (source index, target index) links per pair."""

    name: str

    def align(self, sources: Sequence[str], targets: Sequence[str]) -> list[Links]: ...


def _tokens(lines: Sequence[str]) -> list[str]:
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    tok = Tokenizer13a()
    return [tok(line.strip()).lower() or "." for line in lines]  # eflomal needs a token on every line


def _links(line: str) -> set[tuple[int, int]]:
    out = set()
    for pair in line.split():
        i, _, j = pair.partition("-")
        out.add((int(i), int(j)))
    return out


class EflomalAligner:
    """eflomal's forward and reverse alignments, intersected (the links both directions agree on)."""

    def __init__(self) -> None:
        try:
            import eflomal
        except ImportError:
            raise HarnessError("Average Anticipation needs eflomal: pip install 'harness[anticipation]'") from None
        from importlib.metadata import version

        self.name = f"eflomal-{version('eflomal')}-intersect-13a-lc"
        self._eflomal = eflomal

    def align(self, sources: Sequence[str], targets: Sequence[str]) -> list[Links]:
        if len(sources) != len(targets):
            raise HarnessError(f"alignment needs as many targets as sources ({len(targets)} vs {len(sources)})")
        if not sources:
            return []
        with tempfile.TemporaryDirectory() as tmp:
            fwd, rev = os.path.join(tmp, "fwd"), os.path.join(tmp, "rev")
            self._eflomal.Aligner().align(_tokens(sources), _tokens(targets), links_filename_fwd=fwd,
                                          links_filename_rev=rev, quiet=True)
            forward = Path(fwd).read_text().splitlines()
            reverse = Path(rev).read_text().splitlines()
        return [sorted(_links(f) & _links(r)) for f, r in zip(forward, reverse, strict=True)]


def average_anticipation(links: Sequence[tuple[int, int]]) -> float | None:
    """AA of one sentence pair; None without links."""
    if not links:
        return None
    return math.fsum(max(i - j, 0) for i, j in links) / len(links)


def corpus_anticipation(per_pair: Sequence[float | None]) -> float | None:
    """The mean AA of the pairs that have one."""
    values = [v for v in per_pair if v is not None]
    return math.fsum(values) / len(values) if values else None


def _cache_dir() -> Path:
    from harness.cache import cache_dir

    return cache_dir() / "alignments"


def aligned(aligner: Aligner, sources: Sequence[str], targets: Sequence[str]) -> list[Links]:
    """The aligner's links for these pairs, from the cache when the same aligner saw the same data."""
    h = hashlib.sha256(aligner.name.encode())
    for side in (sources, targets):
        h.update(b"\0" + "\n".join(side).encode("utf-8"))
    path = _cache_dir() / f"{h.hexdigest()}.json"
    if path.is_file():
        try:
            return [[(i, j) for i, j in pairs] for pairs in json.loads(path.read_text(encoding="utf-8"))]
        except (OSError, ValueError, TypeError):
            pass  # a damaged cache entry is recomputed
    links = aligner.align(sources, targets)
    write_text_atomic(path, json.dumps(links), mkdir=True)
    return links
