"""Resegmentation: one recording's output stream → one output per reference sentence, every unit keeping its times.

Two methods, named in the track config (`resegmentation:`) and in every score's signature:

- `softsegmenter` — OmniSTEval's SoftSegmenter (`harness.metrics.softsegmenter`); a unit goes to the sentence
  its word aligns to, so a sentence's units need not be contiguous in the stream;
- `mwersegmenter` — mwerSegmenter (Matusov et al., 2005) through the `mweralign` package, as simulstream's
  StreamLAAL does: the stream is cut into contiguous pieces that minimise the word error rate against the
  sentences. Words are compared as whitespace tokens (or characters for `char` targets, mweralign's CJ mode); the
  subword mode of the mweralign command line would download a model, which an offline scorer must not do.

Delays are relative to the sentence's offset in the recording (negative: the unit was written before the sentence
began), as both peers compute them.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from harness.metrics.softsegmenter import align_stream
from harness.recordings import RefSentence

__all__ = ["METHODS", "SentenceOutput", "resegment"]

METHODS = ("softsegmenter", "mwersegmenter")


@dataclass(frozen=True)
class SentenceOutput:
    """The units of an output stream that resegmentation gave to one reference sentence."""

    sentence: RefSentence
    units: list[str]
    delays: list[float]  # ms from the sentence's offset
    elapsed: list[float] | None  # computation-aware, ms from the sentence's offset
    time_to_recording_end: float  # ms from the sentence's offset to the recording's end (its last sentence's, default)

    @property
    def source_length(self) -> float:
        return self.sentence.duration_ms


_QUIET = threading.Lock()


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """mweralign's C++ core writes two lines to the process's stderr (std::cerr) per call; keep them off ours."""
    with _QUIET:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            with open(os.devnull, "wb") as null:
                os.dup2(null.fileno(), 2)
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _mwer_pieces(references: Sequence[str], units: Sequence[str], char_level: bool) -> list[list[int]]:
    """Unit indices of each sentence's contiguous piece, by mwerSegmenter (mweralign), as simulstream calls it.

    An empty reference sentence gets no unit (mweralign gives it no line): the others are aligned without it."""
    kept = [i for i, r in enumerate(references) if r.strip()]
    if len(kept) < len(references):
        pieces: list[list[int]] = [[] for _ in references]
        if kept:
            for i, piece in zip(kept, _mwer_pieces([references[i] for i in kept], units, char_level), strict=True):
                pieces[i] = piece
        return pieces
    from mweralign import mweralign

    if char_level:
        from mweralign.segmenter import CJSegmenter

        seg = CJSegmenter()
        hyp = " ".join(seg.encode("".join(units)))
        refs = "\n".join(" ".join(seg.encode(r)) for r in references)
        with _quiet_stderr():
            aligned = mweralign.align_texts(refs, hyp)
        lines = [line.replace(" ", "").replace("_", " ") for line in aligned.split("\n")]
        lengths = [len(line) for line in lines]
    else:
        with _quiet_stderr():
            lines = mweralign.align_texts("\n".join(references), " ".join(units)).split("\n")
        lengths = [len([w for w in line.split(" ") if w]) for line in lines]
    if len(lines) != len(references) or sum(lengths) != len(units):
        raise ValueError(f"mweralign returned {len(lines)} lines of {sum(lengths)} units for "
                         f"{len(references)} sentences of {len(units)} units")
    pieces, start = [], 0
    for n in lengths:
        pieces.append(list(range(start, start + n)))
        start += n
    return pieces


def _soft_pieces(references: Sequence[str], units: Sequence[str], char_level: bool, lang: str | None
                 ) -> list[list[int]]:
    owner = align_stream(references, units, char_level=char_level, lang=lang)
    pieces: list[list[int]] = [[] for _ in references]
    for u, s in enumerate(owner):
        if s is not None:
            pieces[s].append(u)
    return pieces


def resegment(
    sentences: Sequence[RefSentence],
    units: Sequence[str],
    delays: Sequence[float],
    elapsed: Sequence[float] | None,
    *,
    reference_set: str,
    method: str = "softsegmenter",
    char_level: bool = False,
    lang: str | None = None,
    recording_end: float | None = None,
) -> list[SentenceOutput]:
    """One `SentenceOutput` per reference sentence of one recording (in order), by `method`.

    `units`, `delays` and `elapsed` are the recording's final output stream with its times in ms from the start of
    the recording; `reference_set` names the reference texts aligned against. `recording_end` (ms) is where the
    recording ends for LongYAAL: by default the end of its last reference sentence, as OmniSTEval cuts it.
    """
    if method not in METHODS:
        raise ValueError(f"unknown resegmentation method {method!r} (choose from {', '.join(METHODS)})")
    references = [s.references[reference_set] for s in sentences]
    if char_level:
        references = [r.replace(" ", "") for r in references] if method == "softsegmenter" else references
    if not units:
        pieces: list[list[int]] = [[] for _ in sentences]
    elif method == "softsegmenter":
        pieces = _soft_pieces(references, units, char_level, lang)
    else:
        pieces = _mwer_pieces(references, units, char_level)
    if recording_end is None:
        recording_end = max((s.end_ms for s in sentences), default=0.0)
    out = []
    for sentence, piece in zip(sentences, pieces, strict=True):
        off = sentence.offset_ms
        out.append(SentenceOutput(
            sentence=sentence,
            units=[units[u] for u in piece],
            delays=[delays[u] - off for u in piece],
            elapsed=None if elapsed is None else [elapsed[u] - off for u in piece],
            time_to_recording_end=recording_end - off,
        ))
    return out
