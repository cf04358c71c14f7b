"""The long-form data model shared by the data side (datasets, server, run log) and the scoring side.

A long-form dataset is a list of recordings; each recording has one output stream (what a system wrote while the
whole talk streamed in) and a reference segmentation: the sentences of the talk with their place in the audio.
Scoring resegments the stream onto those sentences; every unit keeps its delay through the resegmentation.
A long-form record of instances.log carries its recording's sentences in its `longform` field (`LongformInfo`),
built by `longform_info` wherever such a record is made (the server, a converted log, another tool's log).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict


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


class LongformInfo(TypedDict, total=False):
    """The `longform` field of a long-form record (`harness.runlog.InstanceRecord`): what scoring resegments the
    recording's output onto."""

    recording: str  # the recording's name (its audio file's stem)
    segments: list[list[float]]  # [offset_ms, duration_ms] of each reference sentence, in order
    timed: bool  # False: long-form text, no times (quality only); absent: timed
    sentences: dict[str, list[str]]  # reference set name -> one text per segment
    transcripts: list[str]  # the source transcript, one per segment (when the dataset has one)
    resegmentation: str  # the quality resegmentation of the track (`softsegmenter`, `mwersegmenter`)
    target_lang: str  # the track's target language (when known)


def longform_info(recording: str, segments: list[list[float]], sentences: dict[str, list[str]], *,
                  transcripts: list[str] | None = None, resegmentation: str | None = None,
                  target_lang: str | None = None, timed: bool = True) -> LongformInfo:
    """The `longform` field of a record of `recording` (fields left out where not given; `timed` only when
    False), in the one order every writer writes it."""
    info: LongformInfo = {"recording": recording, "segments": segments}
    if not timed:
        info["timed"] = False
    info["sentences"] = sentences
    if transcripts is not None:
        info["transcripts"] = transcripts
    if resegmentation is not None:
        info["resegmentation"] = resegmentation
    if target_lang is not None:
        info["target_lang"] = target_lang
    return info
