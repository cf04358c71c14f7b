"""A log submission's system log → the harness's instance records for one dataset (then scored like any run).

Long-form tracks read a SimulStream metrics log (preferred) or a SimulEval/OmniSTEval long-form JSONL
(`harness.interop`), with the dataset's reference segmentation attached: a log for other recordings, or that
lacks one of the dataset's, is refused. Short-form tracks read a SimulEval instances.log: one line per instance
of the dataset, in its order, each naming the dataset's source (text) or audio file (speech); the references
scored against are the dataset's, never the log's. Every problem is one line naming the log; the delays and times
of a log of the dataset's recordings are checked first, every problem at once (`harness.batch.logcheck`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.batch.logcheck import LogProblems, log_problems, same_source
from harness.config import Dataset, Track
from harness.errors import HarnessError
from harness.runlog import LogWriter, read_instances, validate_record

__all__ = ["log_format", "log_records", "unknown_dataset", "write_records"]


def unknown_dataset(name: str, track: Track) -> str | None:
    """Why `logs.NAME` names no dataset of `track` (with a suggestion), or None when it names one."""
    from harness.fields import suggest

    if name in track.datasets:
        return None
    guess = suggest(name, track.datasets)
    hint = f"; did you mean {guess!r}?" if guess else f" (has: {', '.join(track.datasets)})"
    return f"track {track.name!r} has no dataset {name!r}{hint}"


def log_format(log: Path, track: Track) -> str:
    """`simulstream` or `simuleval` (the format `log_records` reads `log` as)."""
    from harness.interop import is_simulstream_log

    return "simulstream" if track.is_longform and is_simulstream_log(log) else "simuleval"


def log_records(log: Path, track: Track, ds: Dataset, where: str, *, config: Path | None = None,
                tokenizer: Path | None = None) -> list[dict[str, Any]]:
    """The harness records of `log` on dataset `ds`; a HarnessError `WHERE: LOG: problem` otherwise. `config` and
    `tokenizer`: the SimulStream eval config a long-form log was written with and the model's tokenizer (the
    submission's `logs.DATASET.config`, `.tokenizer`)."""
    try:
        records = _longform(log, track, ds, config, tokenizer) if track.is_longform else _shortform(log, track, ds)
    except LogProblems as exc:
        lines = [f"{where}: {log}: {line.removeprefix(f'{log}: ')}" for line in exc.problems]
        raise LogProblems(lines, hint="; `harness check SUBMISSION --config CONFIG` lists them") from None
    except HarnessError as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise HarnessError(f"{where}: {log}: {message.removeprefix(f'{log}: ')}") from None
    except KeyError as exc:  # a line of the foreign reader's format without a field it needs
        raise HarnessError(f"{where}: {log}: a line lacks the field {exc}") from None
    except (TypeError, ValueError) as exc:
        raise HarnessError(f"{where}: {log}: a field of the wrong type ({str(exc).splitlines()[0][:200]})") from None
    return records


def _longform(log: Path, track: Track, ds: Dataset, config: Path | None, tokenizer: Path | None
              ) -> list[dict[str, Any]]:
    from harness.data.longform import read_segmentation
    from harness.interop import attach_segmentation, is_simulstream_log, read_jsonl_hypotheses, read_simulstream_log

    assert ds.segmentation is not None  # a long-form dataset has one (harness.config)
    records = read_simulstream_log(log, config, tokenizer) if is_simulstream_log(log) else read_jsonl_hypotheses(log)
    given = sorted({Path(r["source"][0]).name for r in records})
    if not given:
        raise HarnessError("names no recording")
    wanted = sorted({Path(wav).name for wav, _, _ in read_segmentation(ds.segmentation)})
    other = f"its recordings ({', '.join(given)[:200]}) are not dataset {ds.name!r}'s ({', '.join(wanted)[:200]})"
    if not {Path(n).stem for n in given} & {Path(n).stem for n in wanted}:
        raise HarnessError(f"{other}: a log of other recordings?")
    problems = log_problems(log, track, ds, wanted=wanted)
    if problems:
        raise LogProblems(problems)
    if sorted({Path(n).stem for n in given}) != sorted({Path(n).stem for n in wanted}):
        raise HarnessError(other)
    return attach_segmentation(records, ds.segmentation, ds.references, ds.transcripts, track.resegmentation,
                               target_lang=track.target_lang)


def _shortform(log: Path, track: Track, ds: Dataset) -> list[dict[str, Any]]:
    from harness.data.loader import load_dataset

    problems = log_problems(log, track, ds)
    if problems:
        raise LogProblems(problems)
    data = load_dataset(track.modality, ds.source, ds.references)
    got = read_instances(log, latency_unit="ms" if track.is_speech else track.latency_unit).records
    if len(got) != len(data):
        raise HarnessError(f"{len(got)} instances, but dataset {ds.name!r} has {len(data)} ({ds.source})")
    out = []
    for rec in sorted(got, key=lambda r: r["index"]):
        i = rec["index"]
        if i >= len(data):
            raise HarnessError(f"instance index {i} is beyond dataset {ds.name!r} ({len(data)} instances)")
        expected = data.source_info(i)
        if "source" in rec and not same_source(rec["source"], expected):
            raise HarnessError(f"instance {i}: source {str(rec['source'])[:80]!r} is not dataset {ds.name!r}'s "
                               f"{str(expected)[:80]!r} (a log of other instances?)")
        new = {k: v for k, v in rec.items() if k not in ("reference", "references")}
        new.update(source=expected, references=data.reference_texts(i), status="ok",
                   latency_unit="ms" if track.is_speech else track.latency_unit)
        problem = validate_record(new, "")
        if problem is not None:
            raise HarnessError(f"instance {i}: {problem}")
        out.append(new)
    return out


def write_records(run_dir: Path, records: list[dict[str, Any]]) -> None:
    """Write `records` as the run's instances.log (harness format), replacing any earlier one."""
    writer = LogWriter(run_dir, overwrite=True)
    try:
        for rec in records:
            writer.write(rec)
    finally:
        writer.close()
