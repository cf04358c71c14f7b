"""Latency of long-form runs, computed on the resegmented sentences.

- `LongYAAL`, `LongAL`, `LongLAAL`, `LongAP`, `LongDAL` — OmniSTEval 0.1.10's long-form scorers on SoftSegmenter
  output: the short-form definitions on each sentence (delays from the sentence's offset, the sentence's duration as
  source length, the reference's length as target length), averaged over the sentences that received output.
  LongYAAL differs from YAAL in where it stops: not at the end of the sentence but at the end of the recording, so
  words a system writes late for a sentence still count. The recording ends where OmniSTEval ends it, at the end of
  its last reference sentence (words written during audio after it are left out and counted apart as
  `trailing_units`), or at the end of its audio when the track says `longform_end: audio`.
- `StreamLAAL` — simulstream 1.0.0's StreamLAAL on mwerSegmenter output: LAAL per sentence, averaged over the
  sentences that received output.

Each has a computation-aware twin (`NAME_CA`) from the elapsed times. Target length counts words split on single
spaces for the OmniSTEval family (as OmniSTEval does), and non-empty space-separated words for StreamLAAL (as
simulstream does); characters for `char` targets.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.metrics import latency as lat
from harness.metrics.resegment import SentenceOutput

__all__ = ["SOFT_METRICS", "STREAM_METRICS", "long_yaal", "sentence_values"]

SOFT_METRICS = ("LongYAAL", "LongAL", "LongLAAL", "LongAP", "LongDAL")
STREAM_METRICS = ("StreamLAAL",)


def long_yaal(delays: Sequence[float], source_length: float, target_length: int, recording_end: float
              ) -> float | None:
    """LongYAAL of one sentence: LAAL over the units written before the end of the recording."""
    return lat.yet_another_average_lagging(delays, source_length, target_length, until=recording_end)


def _omni_target_length(reference: str, char_level: bool) -> int:
    return len(reference.strip()) if char_level else len(reference.split(" "))


def _stream_target_length(reference: str, char_level: bool, rule: str = "simulstream") -> int:
    """StreamLAAL's reference length: simulstream's (non-empty words, every character) or SimulEval's
    (`rule="simuleval"`: words split on single spaces, characters of the stripped text), as the 2025 tool."""
    if rule == "simuleval":
        return len(reference.strip()) if char_level else len(reference.split(" "))
    return len(reference) if char_level else len([w for w in reference.split(" ") if w])


def _soft_values(times: Sequence[float], out: SentenceOutput, reference: str, char_level: bool
                 ) -> dict[str, float | None]:
    src = out.source_length
    if not times or src <= 0:
        return dict.fromkeys(SOFT_METRICS)
    tgt = _omni_target_length(reference, char_level)
    return {
        "LongYAAL": long_yaal(times, src, tgt, out.time_to_recording_end),
        "LongAL": lat.average_lagging(times, src, tgt),
        "LongLAAL": lat.length_adaptive_average_lagging(times, src, tgt),
        "LongAP": lat.average_proportion(times, src, tgt) if tgt > 0 else None,
        "LongDAL": lat.differentiable_average_lagging(times, src),
    }


def sentence_values(
    outputs: Sequence[SentenceOutput], reference_set: str, *, method: str, char_level: bool = False,
    target_length: str = "simulstream",
) -> list[dict[str, float | None]]:
    """Per sentence: one family of metrics (and their `_CA` twins when elapsed times exist).

    `method` names the resegmentation the outputs came from: `softsegmenter` outputs get OmniSTEval's Long*
    family, `mwersegmenter` outputs simulstream's StreamLAAL (each peer's pairing). None: no value (no unit in the
    sentence, or a zero-length sentence).
    """
    rows = []
    for out in outputs:
        ref = out.sentence.references[reference_set]
        if char_level and method == "softsegmenter":
            ref = ref.replace(" ", "")
        row: dict[str, float | None] = {}
        for suffix, times in (("", out.delays), ("_CA", out.elapsed)):
            if times is None:
                continue
            if method == "softsegmenter":
                values = _soft_values(times, out, ref, char_level)
            else:
                ok = bool(times) and out.source_length > 0
                values = {"StreamLAAL": lat.length_adaptive_average_lagging(
                    times, out.source_length, _stream_target_length(ref, char_level, target_length)) if ok else None}
            row.update({name + suffix: v for name, v in values.items()})
        rows.append(row)
    return rows
