"""Long-form datasets: whole recordings streamed as one instance each, with the reference segmentation.

A long-form dataset is
- `source`: a list file of recordings (one audio path a line, as for short-form speech);
- `segmentation`: the reference segmentation in the YAML form MuST-C and IWSLT ship — a list of
  `{wav, offset, duration}` entries in seconds, one per reference sentence, grouped by recording;
- `references`: named reference sets, one sentence a line, line-aligned with the segmentation entries;
- `transcripts` (optional): the source-language sentences, line-aligned likewise (for ASR tracks and COMET).

Every problem is one line naming the file: a `wav` that is not in the list, sentences of a recording that overlap or
run past the end of its audio, a reference file whose line count differs from the segmentation's entry count.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.data.speech import SpeechDataset, audio_duration_ms, read_audio_list
from harness.data.text import read_lines
from harness.errors import HarnessError
from harness.recordings import LongformInfo, Recording, RefSentence, longform_info
from harness.yamlio import read_yaml

__all__ = ["LongformDataset", "read_segmentation", "match_recording"]

OVERLAP_SLACK_MS = 1.0  # rounding of offsets written with 2-3 decimals of a second


def _seconds(entry: dict[str, Any], key: str, where: str) -> float:
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0:
        raise HarnessError(f"{where}: {key} must be a non-negative number of seconds, got {value!r}")
    return float(value)


def read_segmentation(path: Path) -> list[tuple[str, float, float]]:
    """The (wav, offset ms, duration ms) entries of a segmentation YAML, in file order."""
    raw = read_yaml(Path(path), missing="segmentation file not found", fast=True)
    if not isinstance(raw, list) or not raw:
        raise HarnessError(f"{path}: expected a non-empty list of {{wav, offset, duration}} entries")
    out = []
    for n, entry in enumerate(raw):
        where = f"{path}: entry {n}"
        if not isinstance(entry, dict) or not isinstance(entry.get("wav"), str) or not entry["wav"]:
            raise HarnessError(f"{where}: expected a mapping with wav, offset and duration")
        out.append((entry["wav"], _seconds(entry, "offset", where) * 1000.0,
                    _seconds(entry, "duration", where) * 1000.0))
    return out


def match_recording(wav: str, audio: tuple[Path, ...]) -> int | None:
    """Index of the recording `wav` names: same path, same file name, or same stem (OmniSTEval's rules)."""
    for rule in (lambda p: str(p), lambda p: p.name, lambda p: p.stem):
        key = rule(Path(wav))
        hits = [i for i, p in enumerate(audio) if rule(p) == key]
        if len(hits) == 1:
            return hits[0]
    return None


def _aligned_lines(references: dict[str, Path], transcripts: Path | None, segmentation: Path, count: int
                   ) -> tuple[dict[str, list[str]], list[str] | None]:
    """(every reference set's lines, the transcript's lines), each checked to have one line per segmentation entry."""
    sets = {name: read_lines(p) for name, p in references.items()}
    sources = read_lines(transcripts) if transcripts is not None else None
    if sources is not None and len(sources) != count:
        raise HarnessError(f"{transcripts}: {len(sources)} lines but {segmentation} has {count} sentences")
    for name, lines in sets.items():
        if len(lines) != count:
            raise HarnessError(f"{references[name]}: {len(lines)} lines but {segmentation} has {count} "
                               f"sentences (reference set {name!r})")
    return sets, sources


def _check_place(segmentation: Path, n: int, before: list[RefSentence], offset: float, duration: float, wav: str,
                 audio: Path, audio_ms: float) -> None:
    """A sentence must start after the previous one of its recording ends and end within the recording's audio."""
    if before and offset + OVERLAP_SLACK_MS < before[-1].end_ms:
        raise HarnessError(f"{segmentation}: entry {n}: sentence at {offset / 1000:g} s overlaps the one "
                           f"before it in {wav} (ends at {before[-1].end_ms / 1000:g} s)")
    if offset + duration > audio_ms + OVERLAP_SLACK_MS:
        raise HarnessError(f"{segmentation}: entry {n}: sentence ends at {(offset + duration) / 1000:g} s, "
                           f"past the end of {audio} ({audio_ms / 1000:g} s)")


@dataclass(frozen=True)
class LongformDataset(SpeechDataset):
    """Recordings (the instances) with their reference sentences; audio is streamed from disk like short-form."""

    recordings: tuple[Recording, ...] = ()
    segmentation_path: Path | None = None

    @classmethod
    def load_longform(cls, list_file: Path, segmentation: Path, references: dict[str, Path],
                      transcripts: Path | None = None) -> LongformDataset:
        audio = read_audio_list(list_file)
        entries = read_segmentation(segmentation)
        sets, sources = _aligned_lines(references, transcripts, segmentation, len(entries))
        durations = [audio_duration_ms(p) for p in audio]
        per_recording: list[list[RefSentence]] = [[] for _ in audio]
        for n, (wav, offset, duration) in enumerate(entries):
            k = match_recording(wav, audio)
            if k is None:
                raise HarnessError(f"{segmentation}: entry {n}: wav {wav!r} is not in {list_file}")
            _check_place(segmentation, n, per_recording[k], offset, duration, wav, audio[k], durations[k])
            per_recording[k].append(RefSentence(
                recording=audio[k].stem, offset_ms=offset, duration_ms=duration,
                references={name: lines[n].strip() for name, lines in sets.items()},
                source=sources[n].strip() if sources is not None else None))
        for k, sentences in enumerate(per_recording):
            if not sentences:
                raise HarnessError(f"{segmentation}: no sentence for recording {audio[k]}")
        recordings = tuple(Recording(p.stem, str(p), durations[k], tuple(per_recording[k]))
                           for k, p in enumerate(audio))
        joined = {name: tuple(" ".join(s.references[name] for s in r.sentences) for r in recordings) for name in sets}
        return cls(list_path=Path(list_file), audio=audio, references=joined, recordings=recordings,
                   segmentation_path=Path(segmentation))

    def longform_info(self, index: int, *, resegmentation: str, target_lang: str) -> LongformInfo:
        """What instances.log records about recording `index` for scoring (its `longform` field): its sentences,
        their references and transcripts, and the track's resegmentation and target language."""
        rec = self.recordings[index]
        return longform_info(rec.name, [[s.offset_ms, s.duration_ms] for s in rec.sentences],
                             {name: [s.references[name] for s in rec.sentences] for name in self.references},
                             transcripts=[s.source or "" for s in rec.sentences]
                             if all(s.source is not None for s in rec.sentences) else None,
                             resegmentation=resegmentation, target_lang=target_lang)
