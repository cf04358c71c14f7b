"""The long-form data model shared by the data side (datasets, server, run log) and the scoring side.

A long-form dataset is a list of recordings; each recording has one output stream (what a system wrote while the
whole talk streamed in) and a reference segmentation: the sentences of the talk with their place in the audio.
Scoring resegments the stream onto those sentences; every unit keeps its delay through the resegmentation.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class RefSentence:
    """One reference sentence of a recording: where it lies in the audio (ms) and its text(s).

    `references` maps a reference set name (e.g. "orig", "mono") to the target text; `source` is the source
    transcript of the sentence when the dataset has one (COMET and the ASR track use it).
    """

    recording: str
    offset_ms: float
    duration_ms: float
    references: dict[str, str]
    source: str | None = None

    @property
    def end_ms(self) -> float:
        return self.offset_ms + self.duration_ms


@dataclass(frozen=True)
class Recording:
    """One recording of a long-form dataset: its audio file, its length and its reference sentences in order."""

    name: str
    wav: str
    duration_ms: float
    sentences: tuple[RefSentence, ...]


@dataclass(frozen=True)
class OutputStream:
    """What a system emitted for one recording: units (words, or characters for char-level targets) with the
    source time (ms) at which each was written and, when the run was timed, its computation-aware time (ms)."""

    recording: str
    units: list[str]
    delays_ms: list[float]
    elapsed_ms: list[float] | None
    source_length_ms: float
    status: str = "ok"
    extra: dict[str, object] = field(default_factory=dict)
