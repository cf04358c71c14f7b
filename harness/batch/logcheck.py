"""A log submission's log checked when it arrives, before it is scored: every problem at once, one line each naming
the log, the line and the recording (or instance).

What a run's server guarantees by construction a log must show: delays that never decrease and lie inside their
recording (or source sentence), as many delays as output units (words, or characters for `latency_unit: char`),
and computation-aware times not below the non-computation-aware ones (speech: both are milliseconds; a text log's
elapsed times are milliseconds against delays in words, so they are not compared). A line the log's own reader
would refuse (not JSON, a field missing or of the wrong type) is left to that reader, which names it; so is a log of
other recordings or instances (`harness.batch.logsub` says which). `harness check` prints every problem; `harness
evaluate` marks the run `invalid_submission` with the first (and how many more).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.config import Dataset, Track
from harness.errors import HarnessError
from harness.interop import is_simulstream_log
from harness.jsonio import iter_jsonl
from harness.units import split_units

__all__ = ["LogProblems", "log_problems", "same_source"]

#: how far past the end of its audio a delay may lie (ms): rounding of seconds written with 3 decimals, resampling
AUDIO_SLACK_MS = 10.0
#: at most this many lines about one log (then one line counting the rest)
MAX_LINES = 20


class LogProblems(HarnessError):
    """A log with problems: the message is the first (and how many more), `problems` every one, one line each."""

    def __init__(self, problems: Sequence[str], hint: str = "") -> None:
        more = f" (and {len(problems) - 1} more{hint})" if len(problems) > 1 else ""
        super().__init__(f"{problems[0]}{more}")
        self.problems = tuple(problems)


def same_source(given: Any, expected: Any) -> bool:
    """The log's `source` names the dataset's: the same text (whitespace aside), or audio of the same file name."""
    if isinstance(expected, list):
        names = given if isinstance(given, list) else [given]
        return bool(names) and isinstance(names[0], str) and Path(names[0]).name == Path(expected[0]).name
    return isinstance(given, str) and given.split() == str(expected).split()


def log_problems(log: Path, track: Track, ds: Dataset, wanted: Sequence[str] = ()) -> list[str]:
    """Every problem of `log` as a log of dataset `ds`, one line each (`LOG: line N: recording R: problem`);
    `wanted`: the recordings a long-form log must name, each once (its segmentation's)."""
    lines = _json_lines(log)
    if lines is None:
        return []
    if track.is_longform:
        lengths = _recording_lengths(ds)
        simulstream = is_simulstream_log(log)
        found = _names(lines, wanted, simulstream, ds.name) if wanted else []
        found += _simulstream(lines, lengths) if simulstream else _jsonl(lines, lengths, track.latency_unit)
    else:
        found = _shortform(lines, track, ds)
    out = [f"{log}: {line}" for line in found[:MAX_LINES]]
    if len(found) > MAX_LINES:
        out.append(f"{log}: and {len(found) - MAX_LINES} more problems")
    return out


def _names(lines: list[tuple[int, dict[str, Any]]], wanted: Sequence[str], simulstream: bool, dataset: str
           ) -> list[str]:
    """A line for each recording the log names that its dataset has not (or names twice), and for each of the
    dataset's recordings that it never names (matched by file stem, as the reader matches them)."""
    out, seen = [], set()
    stems = {Path(w).stem for w in wanted}
    for n, obj in lines:
        if simulstream:
            meta = obj.get("metadata")
            name = meta.get("wav_name") if isinstance(meta, dict) else None
        else:
            source = obj.get("source")
            name = source[0] if isinstance(source, list) and source else source
        if not isinstance(name, str):
            continue
        stem = Path(name).stem
        if stem not in stems:
            out.append(f"line {n}: recording {name}: not a recording of dataset {dataset!r} (its segmentation has: "
                       f"{', '.join(wanted)[:200]})")
        elif stem in seen:
            out.append(f"line {n}: recording {name}: named a second time")
        seen.add(stem)
    out += [f"recording {w} of dataset {dataset!r}: no line of the log names it" for w in wanted
            if Path(w).stem not in seen]
    return out


def _json_lines(log: Path) -> list[tuple[int, dict[str, Any]]] | None:
    """(line number, object) of every non-blank line; None when a line is no JSON object (its reader says so)."""
    try:
        return list(iter_jsonl(log))
    except HarnessError:
        return None


def _recording_lengths(ds: Dataset) -> dict[str, float]:
    """{recording stem: audio length ms} of a speech dataset's list (what cannot be read is left out)."""
    from harness.data.speech import audio_duration_ms, read_audio_list

    try:
        audio = read_audio_list(ds.source)
    except HarnessError:
        return {}
    out = {}
    for path in audio:
        try:
            out[path.stem] = audio_duration_ms(path)
        except HarnessError:
            continue
    return out


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == x


def _simulstream(lines: list[tuple[int, dict[str, Any]]], lengths: dict[str, float]) -> list[str]:
    """A SimulStream metrics log: per chunk line, its audio position (the delay of the words it writes) never below
    the one before for its recording nor past the recording's end; its computation time never negative."""
    names: dict[Any, str] = {}
    last: dict[Any, tuple[float, int]] = {}
    out = []
    for n, obj in lines:
        if isinstance(obj.get("metadata"), dict) and isinstance(obj["metadata"].get("wav_name"), str):
            names[obj.get("id")] = obj["metadata"]["wav_name"]
            continue
        wav = names.get(obj.get("id"))
        raw_at, raw_ct = obj.get("total_audio_processed"), obj.get("computation_time", 0.0)
        if wav is None or "generated_tokens" not in obj or not _number(raw_at) or not _number(raw_ct):
            continue  # the reader names these
        at, ct = float(obj["total_audio_processed"]), float(raw_ct)
        where = f"line {n}: recording {wav}"
        if at < 0:
            out.append(f"{where}: total_audio_processed {at:g} s is negative")
        before = last.get(obj.get("id"))
        if before is not None and at < before[0]:
            out.append(f"{where}: total_audio_processed {at:g} s is below {before[0]:g} s of line {before[1]} "
                       "(delays never decrease)")
        else:
            last[obj.get("id")] = (at, n)
        end = lengths.get(Path(wav).stem)
        if end is not None and at * 1000.0 > end + AUDIO_SLACK_MS:
            out.append(f"{where}: total_audio_processed {at:g} s is past the end of its audio ({end / 1000:g} s)")
        if ct < 0:
            out.append(f"{where}: computation_time {ct:g} s is negative: its computation-aware time would be below "
                       "the non-computation-aware one")
    return out


def _jsonl(lines: list[tuple[int, dict[str, Any]]], lengths: dict[str, float], unit: str) -> list[str]:
    """A SimulEval/OmniSTEval long-form log: one line per recording, delays and elapsed times in ms."""
    out = []
    for n, obj in lines:
        source = obj.get("source")
        name = source[0] if isinstance(source, list) and source else source
        if not isinstance(name, str) or not isinstance(obj.get("prediction"), str):
            continue
        out += [f"line {n}: recording {name}: {p}" for p in
                _delay_problems(obj, len(split_units(obj["prediction"], unit)), lengths.get(Path(name).stem),
                                ms=True)]
    return out


def _shortform(lines: list[tuple[int, dict[str, Any]]], track: Track, ds: Dataset) -> list[str]:
    """A SimulEval instances.log of the dataset's instances (a log of others is the reader's to name)."""
    from harness.data.loader import load_dataset
    from harness.data.speech import audio_duration_ms

    try:
        data = load_dataset(track.modality, ds.source, ds.references)
    except HarnessError:
        return []
    indices = [obj.get("index", k) for k, (_, obj) in enumerate(lines)]
    if sorted(i for i in indices if isinstance(i, int) and not isinstance(i, bool)) != list(range(len(data))):
        return []
    if any("source" in obj and not same_source(obj["source"], data.source_info(i)) for (_, obj), i in
           zip(lines, indices, strict=True)):
        return []
    out = []
    for (n, obj), i in zip(lines, indices, strict=True):
        if not isinstance(obj.get("prediction"), str):
            continue
        if track.is_speech:
            audio = Path(data.source_info(i)[0])
            where, length = f"line {n}: recording {audio.name}", audio_duration_ms(audio)
        else:
            where, length = f"line {n}: instance {i}", float(len(str(data.source_info(i)).split()))
        units = len(split_units(obj["prediction"], track.latency_unit))
        out += [f"{where}: {p}" for p in _delay_problems(obj, units, length, ms=track.is_speech)]
    return out


def _delay_problems(obj: dict[str, Any], units: int, length: float | None, ms: bool) -> list[str]:
    """What is wrong with one record's delays (and, in ms, its elapsed times): none when they could be a run's."""
    delays, elapsed = obj.get("delays"), obj.get("elapsed")
    if not isinstance(delays, list) or not all(_number(d) for d in delays):
        return []  # the reader names a malformed field
    out = []
    if len(delays) != units:
        out.append(f"{len(delays)} delays for {units} output {'unit' if units == 1 else 'units'} (one delay each)")
    out += _order_problems([float(d) for d in delays], length, ms)
    if ms and isinstance(elapsed, list) and elapsed and all(_number(e) for e in elapsed):
        out += _elapsed_problems(delays, elapsed)
    return out


def _order_problems(delays: list[float], length: float | None, ms: bool) -> list[str]:
    """Delays from 0, never decreasing, within the source (`length`: ms of audio, or words)."""
    out = []
    if delays and min(delays) < 0:
        out.append(f"delay {delays.index(min(delays))} is negative ({min(delays):g})")
    drop = next((k for k in range(1, len(delays)) if delays[k] < delays[k - 1]), None)
    if drop is not None:
        out.append(f"delays decrease at position {drop} ({delays[drop - 1]:g} -> {delays[drop]:g})")
    slack = AUDIO_SLACK_MS if ms else 1e-6
    if length is not None and delays and max(delays) > length + slack:
        k = next(k for k, d in enumerate(delays) if d > length + slack)
        out.append(f"delay {k} ({delays[k]:g}) is past the end of its {'audio' if ms else 'source'} "
                   f"({length:g} {'ms' if ms else 'words'})")
    return out


def _elapsed_problems(delays: Sequence[float], elapsed: Sequence[float]) -> list[str]:
    if len(elapsed) != len(delays):
        return [f"{len(elapsed)} computation-aware times for {len(delays)} delays"]
    below = next((k for k, (d, e) in enumerate(zip(delays, elapsed, strict=True)) if e < d - 1e-6), None)
    if below is None:
        return []
    return [f"computation-aware time {below} ({elapsed[below]:g} ms) is below its delay ({delays[below]:g} ms)"]
