"""Resegmentation as the IWSLT 2025 organizers' StreamLAAL tool does it (FBK's `stream_laal.py`, 1.0.0 and 2.0).

Our own implementation of that tool's semantics, step by step, for the `iwslt2025` and `iwslt2025-v1` profiles:

1. The recording's prediction text is cut by the original mwerSegmenter binary, case-sensitive (`-usecase 1`).
   With the `char` unit (2.0 only) every character of the prediction and of the references is its own token (Latin
   letters included; spaces are dropped), and the spaces between tokens are taken out of the lines again.
2. Each sentence's piece counts `len(piece.split(" "))` words (or `len(piece)` characters); the recording's delays
   and elapsed times are handed out in that order, piece after piece (an empty piece takes none).
3. Each delay becomes relative to its sentence's start; 2.0 caps it at 0 (a unit written before its sentence began
   counts as written at its start), 1.0.0 keeps it negative.
4. SimulEval's `elapsed` is cumulative over a whole recording; the computation-aware time of unit i becomes
   `e_i - e_(i-1) + d_(i-1)` (or, where `e_i == e_(i-1)`, the previous unit's compute time plus `d_i`), then
   relative to the sentence's start, capped at 0 in 2.0.

StreamLAAL is then SimulEval's LAAL on each sentence with the reference length in words split on single spaces
(or characters), and BLEU is sacrebleu's on the pieces: the scoring stage does both.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from harness.metrics import mwerbinary
from harness.metrics.resegment import SentenceOutput
from harness.recordings import RefSentence

__all__ = ["FbkRecording", "fbk_pieces", "fbk_times", "resegment_fbk"]

_SPACE_AFTER_CHAR = re.compile(r"(.)\s")


@dataclass(frozen=True)
class FbkRecording:
    """One recording as the 2025 tool reads it: the log's prediction text and times, and its sentences."""

    sentences: Sequence[RefSentence]
    prediction: str
    delays: Sequence[float]
    elapsed: Sequence[float] | None
    cumulative_elapsed: bool = True  # SimulEval's elapsed (step 4); False: per-unit times, only shifted and capped


def _binary_inputs(recording: FbkRecording, reference_set: str, char_split: bool) -> tuple[list[str], str]:
    refs = [s.references[reference_set].strip() for s in recording.sentences]
    if char_split:
        return [" ".join(r) for r in refs], " ".join(recording.prediction)
    return refs, recording.prediction


def _clean(line: str, char_split: bool) -> str:
    if char_split:
        line = _SPACE_AFTER_CHAR.sub(r"\1", line)
    return line.strip()


def fbk_pieces(recordings: Sequence[FbkRecording], reference_set: str, *, char_split: bool,
               case_sensitive: bool = True) -> list[list[str]]:
    """Per recording, each sentence's piece of the prediction as the binary cuts it (the binary runs once per
    recording, several at once)."""
    jobs = [_binary_inputs(r, reference_set, char_split) for r in recordings]
    lines = mwerbinary.segment_many(jobs, case_sensitive=case_sensitive)
    out = []
    for rec, got in zip(recordings, lines, strict=True):
        if len(got) != len(rec.sentences):
            raise ValueError(f"mwerSegmenter gave {len(got)} lines for {len(rec.sentences)} sentences")
        out.append([_clean(line, char_split) for line in got])
    return out


def _length(piece: str, unit: str) -> int:
    return len(piece.strip()) if unit == "char" else len(piece.split(" "))


class _Times:
    """The 2025 tool's per-recording state: where the next piece's units start, and the previous unit's times."""

    def __init__(self, delays: Sequence[float], elapsed: Sequence[float] | None, cap: bool, cumulative: bool
                 ) -> None:
        self.delays, self.elapsed, self.cap, self.cumulative = delays, elapsed, cap, cumulative
        self.at = 0
        self.prev: tuple[float, float, float, float] | None = None  # delay, elapsed, stream delay, stream elapsed

    def _shift(self, value: float, start: float) -> float:
        return max(0.0, value - start) if self.cap else value - start

    def take(self, n: int, start: float) -> tuple[list[float], list[float] | None]:
        delays = list(self.delays[self.at:self.at + n])
        if self.elapsed is None:
            self.at += n
            return [self._shift(d, start) for d in delays], None
        elapsed = list(self.elapsed[self.at:self.at + n])
        self.at += n
        out_d, out_e = [], []
        for d, e in zip(delays, elapsed, strict=False):
            if self.prev is None or not self.cumulative:
                stream_e = e
            elif e == self.prev[1]:
                stream_e = self.prev[3] - self.prev[2] + d
            else:
                stream_e = e - self.prev[1] + self.prev[0]
            sd, se = self._shift(d, start), self._shift(stream_e, start)
            out_d.append(sd)
            out_e.append(se)
            self.prev = (d, e, sd, se)
        return out_d, out_e


def fbk_times(recording: FbkRecording, pieces: Sequence[str], unit: str, *, cap: bool
              ) -> list[tuple[list[float], list[float] | None]]:
    """(delays, elapsed) of each sentence's piece, in ms from the sentence's start, as the 2025 tool hands them out."""
    state = _Times(recording.delays, recording.elapsed, cap, recording.cumulative_elapsed)
    out: list[tuple[list[float], list[float] | None]] = []
    for sentence, piece in zip(recording.sentences, pieces, strict=True):
        if not piece.strip():
            out.append(([], None if recording.elapsed is None else []))
            continue
        out.append(state.take(_length(piece, unit), sentence.offset_ms))
    return out


def _units(piece: str, unit: str) -> list[str]:
    if not piece:
        return []
    return list(piece) if unit == "char" else piece.split(" ")


def resegment_fbk(recordings: Sequence[FbkRecording], reference_set: str, *, unit: str, char_split: bool,
                  cap: bool, case_sensitive: bool = True) -> list[list[SentenceOutput]]:
    """Per recording, one `SentenceOutput` per sentence with the 2025 tool's pieces and times. A piece's units joined
    (`""` for char, `" "` for word) give back the tool's prediction text."""
    all_pieces = fbk_pieces(recordings, reference_set, char_split=char_split, case_sensitive=case_sensitive)
    out = []
    for rec, pieces in zip(recordings, all_pieces, strict=True):
        end = max((s.end_ms for s in rec.sentences), default=0.0)
        times = fbk_times(rec, pieces, unit, cap=cap)
        out.append([SentenceOutput(sentence=s, units=_units(p, unit), delays=d, elapsed=e,
                                   time_to_recording_end=end - s.offset_ms)
                    for s, p, (d, e) in zip(rec.sentences, pieces, times, strict=True)])
    return out
