"""A dataset's files read as a run reads them, every problem collected (`harness check-config`).

The loaders (`harness.data.loader`) stop at the first problem, which is right for a run about to start; an
organizer checking a config wants them all, one line each: line counts of references and source text against the
source, every audio file of a speech list (there, readable, with a length and a sample rate), a speech `source:`
that is no list of audio files, and for long-form datasets the segmentation against the list (every `wav` a
listed recording, every recording with sentences, sentences inside their audio and not overlapping) and against
the references and transcripts. Each problem is `(field, message)`; the caller names the config and the dataset.
`require_dataset` is what a command that runs a dataset (`harness evaluate`, `harness validate`) checks before any
run: the same problems, the first one raised, so that an organizer's data error is never charged to a submission.
"""

from __future__ import annotations

from pathlib import Path

from harness.config import Dataset, TaskConfig, Track, require_dataset_files
from harness.data.longform import OVERLAP_SLACK_MS, match_recording, read_segmentation
from harness.data.media import container_duration_ms
from harness.data.text import read_lines
from harness.errors import ConfigError, HarnessError

__all__ = ["dataset_problems", "require_dataset"]

Problem = tuple[str, str]
#: at most this many lines about one list's entries (then one line counting the rest)
MAX_ENTRY_LINES = 10


def dataset_problems(track: Track, ds: Dataset) -> list[Problem]:
    """Every problem a run of `ds` would meet in its files, as `(field, message)`; none when it would start.

    Files that are missing or empty are the config reader's to report: they are skipped here."""
    if not _present(ds.source):
        return []
    out: list[Problem] = []
    if not track.is_speech:
        count = _lines(ds.source, "source", out)
    else:
        listed = _audio_list(ds.source, out)
        count = listed[1] if listed is not None else None
        if ds.segmentation is not None:  # long-form: counted against the segmentation, once every recording reads
            if listed is not None and len(listed[0]) == listed[1] and _present(ds.segmentation):
                out += _longform(ds, listed[0])
            return out
    if count is None:
        return out
    for name, path in ds.references.items():
        if _present(path):
            _count(path, f"references.{name}", count, f"the source {ds.source} has {count}", out)
    if ds.source_text is not None and _present(ds.source_text):
        _count(ds.source_text, "source_text", count, f"the source {ds.source} has {count} instances", out)
    return out


def require_dataset(config: TaskConfig, track: Track, name: str) -> None:
    """A ConfigError, one line naming the config's field and the file, for the first problem of dataset `name` of
    `track` that `harness check-config` reports: a missing or empty file (`require_dataset_files`), a file a run
    would stumble on (`dataset_problems`: line counts, audio, segmentation), or its domains (`require_domains`)."""
    from harness.data.domains import require_domains

    require_dataset_files(config, track, name)
    problems = dataset_problems(track, track.dataset(name))
    if problems:
        field, message = problems[0]
        raise ConfigError(f"{config.path}: tracks[{config.tracks.index(track)}].datasets.{name}.{field}: {message}")
    require_domains(config, track, name)


def _present(path: Path) -> bool:
    return path.is_file() and path.stat().st_size > 0


def _lines(path: Path, field: str, out: list[Problem]) -> int | None:
    """How many lines `path` has (None after noting why it cannot be read)."""
    try:
        return len(read_lines(path))
    except HarnessError as exc:
        out.append((field, str(exc)))
        return None


def _count(path: Path, field: str, expected: int, against: str, out: list[Problem]) -> None:
    """A problem when `path` has not `expected` lines (`against` says whose count that is)."""
    n = _lines(path, field, out)
    if n is not None and n != expected:
        out.append((field, f"{path} has {n} lines but {against}"))


def _audio_list(list_file: Path, out: list[Problem]) -> tuple[list[tuple[Path, float]], int] | None:
    """([(recording, length ms)] of the readable ones, how many the list names) of a speech source list, each
    checked as the run reads it; None when the list itself is no list of audio files (after noting why)."""
    import soundfile

    try:
        soundfile.info(str(list_file))
    except (RuntimeError, soundfile.LibsndfileError):
        pass
    else:
        out.append(("source", f"{list_file} is an audio file; a speech source is a list of audio files, one path a "
                              "line"))
        return None
    try:
        lines = read_lines(list_file)
    except HarnessError as exc:
        out.append(("source", str(exc)))
        return None
    named = [(n, Path(line.strip())) for n, line in enumerate(lines, 1) if line.strip()]
    paths = [(n, p if p.is_absolute() else (list_file.parent / p).resolve()) for n, p in named]
    if paths and not any(p.is_file() or _path_like(p.name) for _, p in paths):
        out.append(("source", f"{list_file}: none of its {len(paths)} lines names a file (a text file? a speech "
                              "source is a list of audio files, one path a line)"))
        return None
    problems: list[str] = [f"{list_file}: line {n}: empty line (expected an audio file path)"
                           for n, line in enumerate(lines, 1) if not line.strip()]
    audio = []
    for n, path in paths:
        length, why = _audio_length(path)
        if why is not None:
            problems.append(f"{list_file}: line {n}: {why}")
        else:
            audio.append((path, length))
    if not paths:
        problems.append(f"{list_file}: the list of audio files is empty")
    _entries(problems, out)
    return audio, len(paths)


def _path_like(name: str) -> bool:
    """Whether a list line's file name looks like a file's (one word with a suffix), not like a sentence."""
    return not any(c.isspace() for c in name) and bool(Path(name).suffix)


def _audio_length(path: Path) -> tuple[float, str | None]:
    """(length ms, None) of a readable audio file with samples and a sample rate; else (0, why not)."""
    import soundfile

    if not path.is_file():
        return 0.0, f"audio file not found: {path}"
    try:
        info = soundfile.info(str(path))
    except (RuntimeError, soundfile.LibsndfileError):
        try:
            length = container_duration_ms(path)
        except HarnessError as exc:
            return 0.0, str(exc)
        return (length, None) if length > 0 else (0.0, f"{path}: no audio in it (length 0)")
    if info.samplerate <= 0 or info.frames <= 0:
        return 0.0, f"{path}: no audio in it ({info.frames} samples at {info.samplerate} Hz)"
    return info.frames * 1000.0 / info.samplerate, None


def _entries(problems: list[str], out: list[Problem], field: str = "source") -> None:
    """The first `MAX_ENTRY_LINES` problems of one file, then a line counting the rest."""
    out += [(field, p) for p in problems[:MAX_ENTRY_LINES]]
    if len(problems) > MAX_ENTRY_LINES:
        out.append((field, f"and {len(problems) - MAX_ENTRY_LINES} more problems of the same file"))


def _longform(ds: Dataset, audio: list[tuple[Path, float]]) -> list[Problem]:
    """The segmentation against the recordings, the references and the transcripts."""
    assert ds.segmentation is not None
    try:
        entries = read_segmentation(ds.segmentation)
    except HarnessError as exc:
        return [("segmentation", str(exc))]
    out: list[Problem] = []
    against = f"{ds.segmentation} has {len(entries)} sentences"
    for name, path in ds.references.items():
        if _present(path):
            _count(path, f"references.{name}", len(entries), against, out)
    if ds.transcripts is not None and _present(ds.transcripts):
        _count(ds.transcripts, "transcripts", len(entries), against, out)
    recordings = tuple(p for p, _ in audio)
    ends: dict[int, float] = {}
    problems = []
    strangers: dict[str, list[int]] = {}  # wav → its entries, for a wav that is no recording of the list
    for n, (wav, offset, duration) in enumerate(entries):
        k = match_recording(wav, recordings)
        if k is None:
            strangers.setdefault(wav, []).append(n)
            continue
        if k in ends and offset + OVERLAP_SLACK_MS < ends[k]:
            problems.append(f"{ds.segmentation}: entry {n}: sentence at {offset / 1000:g} s overlaps the one before "
                            f"it in {wav} (ends at {ends[k] / 1000:g} s)")
        if offset + duration > audio[k][1] + OVERLAP_SLACK_MS:
            problems.append(f"{ds.segmentation}: entry {n}: sentence ends at {(offset + duration) / 1000:g} s, past "
                            f"the end of {recordings[k]} ({audio[k][1] / 1000:g} s)")
        ends[k] = offset + duration
    problems += [f"{ds.segmentation}: entry {ns[0]}: wav {wav!r} is not in {ds.source}"
                 + (f" ({len(ns)} entries name it)" if len(ns) > 1 else "") for wav, ns in strangers.items()]
    problems += [f"{ds.segmentation}: no sentence for recording {p}" for k, p in enumerate(recordings) if k not in ends]
    _entries(problems, out, "segmentation")
    return out
