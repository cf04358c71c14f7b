"""Strict reader of an instances.log (for scoring): the harness's own, or SimulEval 1.1.4's (beside config.yaml).

Every problem is reported as one `LogFormatError` line naming the file and line: a missing file, a torn or
unreadable line, a missing field, delays that decrease or go beyond the source length, a line without
references. A torn last line (see `harness.runlog.torn`) is an error unless the caller allows it (partial runs).
"""

from __future__ import annotations

import json
import math
import operator
import re
from itertools import chain, repeat
from json.scanner import make_scanner
from operator import itemgetter, methodcaller
from pathlib import Path
from typing import Any, BinaryIO

from harness import layout
from harness.errors import LogFormatError
from harness.runlog.record import DELAY_TOLERANCE, LATENCY_UNITS, REQUIRED_FIELDS
from harness.runlog.torn import is_torn_tail

__all__ = ["RunLog", "read_instances", "resolve_log_path", "validate_record", "record_latency_unit"]

_FLAT_LINE = re.compile(r"^([A-Za-z_][\w-]*):\s+([A-Za-z_][\w-]*)\s*$")  # e.g. "source_type: text"


class RunLog:
    """The validated records of one instances.log and what was learnt about them (source_type: text | speech)."""

    def __init__(
        self, path: Path, records: list[dict[str, Any]], latency_unit: str, source_type: str, config: dict[str, Any]
    ) -> None:
        self.path, self.records, self.latency_unit, self.source_type = path, records, latency_unit, source_type
        self.config = config


def resolve_log_path(path: str | Path) -> Path:
    """The instances.log named by `path` (a run directory or the log itself)."""
    p = layout.log_path(path)
    if not p.is_file():
        raise LogFormatError(f"{p}: no such file")
    return p


def _read_config(log_path: Path) -> dict[str, Any]:
    """SimulEval's config.yaml beside the log ({} if absent); flat `key: value` files skip the YAML import."""
    cfg = log_path.parent / "config.yaml"
    if not cfg.is_file():
        return {}
    try:
        text = cfg.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LogFormatError(f"{cfg}: unreadable ({exc})") from None
    flat = [_FLAT_LINE.match(line) for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if all(flat):
        return {m.group(1): m.group(2) for m in flat if m}
    from harness.yamlio import parse_yaml

    data = parse_yaml(text, cfg, LogFormatError)
    return data if isinstance(data, dict) else {}


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


_NUMBER_TYPES = frozenset((int, float))


def _numbers(xs: list[Any]) -> bool:
    """Every item is a finite int or float (not a bool)."""
    return _NUMBER_TYPES.issuperset(map(type, xs)) and math.isfinite(sum(xs))


def record_latency_unit(record: dict[str, Any], default: str) -> str:
    """The record's own `latency_unit`, else `default`."""
    unit = record.get("latency_unit")
    return unit if isinstance(unit, str) else default


def validate_record(rec: Any, where: str) -> str | None:
    """None if `rec` is a valid instance record, else the reason (one line); `where` is only for messages."""
    if not isinstance(rec, dict):
        return "not a JSON object"
    for key in REQUIRED_FIELDS:
        if key not in rec:
            return f"missing field {key!r}"
    for check in (_check_texts, _check_delays, _check_extras):
        problem = check(rec)
        if problem is not None:
            return problem
    return None


def _check_texts(rec: dict[str, Any]) -> str | None:
    """index, prediction and the reference(s)."""
    if not isinstance(rec["index"], int) or isinstance(rec["index"], bool) or rec["index"] < 0:
        return "field 'index' must be a non-negative integer"
    if not isinstance(rec["prediction"], str):
        return "field 'prediction' must be a string (speech output is not supported)"
    refs = rec.get("references")
    if refs is not None:
        if not isinstance(refs, dict) or not refs or not all(isinstance(v, str) for v in refs.values()):
            return "field 'references' must be a non-empty object of reference texts"
    elif not isinstance(rec.get("reference"), str):
        return "no reference: the log needs 'reference' or 'references' to be scored"
    return None


def _check_delays(rec: dict[str, Any]) -> str | None:
    """source_length, then delays: numbers, from 0, non-decreasing, within the source (with its tolerance)."""
    src_len = rec["source_length"]
    if not _is_number(src_len) or src_len <= 0:
        return "field 'source_length' must be a positive number"
    delays = rec["delays"]
    if not isinstance(delays, list) or not _numbers(delays):
        return "field 'delays' must be a list of numbers"
    if not delays:
        return None
    if delays[0] < 0:
        return f"delay 0 is negative ({delays[0]})"
    if any(map(operator.gt, delays, delays[1:])):
        i = next(i for i in range(1, len(delays)) if delays[i] < delays[i - 1])
        return f"delays decrease at position {i} ({delays[i - 1]} -> {delays[i]})"
    if delays[-1] > src_len * (1 + DELAY_TOLERANCE):
        i = next(i for i, d in enumerate(delays) if d > src_len * (1 + DELAY_TOLERANCE))
        return f"delay {i} ({delays[i]}) is beyond the source length ({src_len})"
    return None


def _check_extras(rec: dict[str, Any]) -> str | None:
    """The optional fields: elapsed (one per delay), prediction_length, revisions, latency_unit."""
    delays = rec["delays"]
    elapsed = rec.get("elapsed")
    if elapsed is not None and elapsed != []:
        if not isinstance(elapsed, list) or not _numbers(elapsed):
            return "field 'elapsed' must be a list of numbers"
        if len(elapsed) != len(delays):
            return f"'elapsed' has {len(elapsed)} values but 'delays' has {len(delays)}"
    plen = rec.get("prediction_length")
    if plen is not None and _is_number(plen) and plen != len(delays):
        return f"'prediction_length' is {plen} but there are {len(delays)} delays"
    revisions = rec.get("revisions")
    if revisions is not None and (not isinstance(revisions, list) or not all(
            isinstance(r, dict) and isinstance(r.get("text"), str) and _is_number(r.get("delay")) for r in revisions)):
        return "field 'revisions' must be a list of {delay, elapsed, text} objects"
    unit = rec.get("latency_unit")
    if unit is not None and unit not in LATENCY_UNITS:
        return f"field 'latency_unit' must be one of {', '.join(LATENCY_UNITS)}"
    return None


def _parse_fast(raw: bytes, allow_torn: bool) -> list[Any] | None:
    """Every non-blank line parsed as exactly `json.loads` would, in C; None if any line needs the careful path."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.split("\n")
    if lines[-1].strip():  # a last line without its newline
        if not (allow_torn and is_torn_tail(lines[-1])):
            return None
        lines.pop()
    lines = [s for s in (line.strip(" \t\r") for line in lines) if s]
    scan = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # typeshed types the C scanner as its own argument
    try:
        parsed = list(map(scan, lines, repeat(0, len(lines))))
    except (StopIteration, ValueError, RecursionError):
        return None
    if list(map(itemgetter(1), parsed)) != list(map(len, lines)):  # trailing data after a value
        return None
    return list(map(itemgetter(0), parsed))


def _all_valid(recs: list[Any]) -> bool:
    """True only if `validate_record` accepts every record and indices are distinct (checked a column at a time).

    A sufficient test for the usual log; False sends the caller to the per-record check that names the line.
    """
    if not recs or set(map(type, recs)) != {dict}:
        return False
    try:
        columns = {key: list(map(itemgetter(key), recs)) for key in REQUIRED_FIELDS}
    except KeyError:
        return False
    return (_texts_valid(recs, columns) and _delays_valid(columns["delays"], columns["source_length"])
            and _extras_valid(recs, list(map(len, columns["delays"]))))


def _texts_valid(recs: list[dict[str, Any]], columns: dict[str, list[Any]]) -> bool:
    index, preds, delays = columns["index"], columns["prediction"], columns["delays"]
    if set(map(type, index)) != {int} or min(index) < 0 or len(set(index)) != len(index):
        return False
    if set(map(type, preds)) != {str} or set(map(type, delays)) != {list}:
        return False
    refs = list(map(methodcaller("get", "references"), recs))
    with_refs = [r for r in refs if r is not None]
    if with_refs and (
        set(map(type, with_refs)) != {dict}
        or not all(with_refs)
        or set(map(type, chain.from_iterable(map(dict.values, with_refs)))) != {str}
    ):
        return False
    if len(with_refs) < len(recs):
        single = [rec.get("reference") for rec, r in zip(recs, refs, strict=True) if r is None]
        if set(map(type, single)) != {str}:
            return False
    return True


def _delays_valid(delays: list[list[Any]], src: list[Any]) -> bool:
    if not _NUMBER_TYPES.issuperset(map(type, src)) or min(src) <= 0 or not math.isfinite(sum(src)):
        return False
    flat = list(chain.from_iterable(delays))
    if flat and (not _NUMBER_TYPES.issuperset(map(type, flat)) or not math.isfinite(sum(flat)) or min(flat) < 0):
        return False
    if list(map(sorted, delays)) != delays:  # non-decreasing
        return False
    ends = [(d[-1], x * (1 + DELAY_TOLERANCE)) for d, x in zip(delays, src, strict=True) if d]
    return not ends or all(map(operator.le, *zip(*ends, strict=True)))


def _extras_valid(recs: list[dict[str, Any]], lens: list[int]) -> bool:
    elapsed = list(map(methodcaller("get", "elapsed"), recs))
    if set(map(type, elapsed)) - {list, type(None)}:
        return False
    given = [(e, n) for e, n in zip(elapsed, lens, strict=True) if e]  # None and [] are both "no elapsed times"
    if given:
        flat_e = list(chain.from_iterable(e for e, _ in given))
        if not _NUMBER_TYPES.issuperset(map(type, flat_e)) or not math.isfinite(sum(flat_e)):
            return False
        if any(len(e) != n for e, n in given):
            return False
    plen = list(map(methodcaller("get", "prediction_length"), recs))
    if set(map(type, plen)) <= {int}:
        if plen != lens:
            return False
    elif plen.count(None) != len(plen):
        return False
    if list(map(methodcaller("get", "revisions"), recs)).count(None) != len(recs):
        return False
    units = list(map(methodcaller("get", "latency_unit"), recs))
    return set(map(type, units)) <= {str, type(None)} and set(units) <= {None, *LATENCY_UNITS}


CHUNK_BYTES = 16 << 20  # the fast path reads the log this much at a time
HEAD_BYTES = 4096  # what the careful path reads of a line before deciding it is garbage
MAX_LINE_BYTES = 64 << 20  # no record comes near it; past it a line is garbage, reported without reading on


def _garbage_start(line: bytes) -> bool:
    """True if `line` (or its beginning) cannot be a record: its first non-blank byte is not `{`."""
    stripped = line.lstrip(b" \t\r")
    return bool(stripped) and stripped[:1] != b"{"


def _read_careful(log_path: Path, f: BinaryIO, allow_torn: bool) -> list[dict[str, Any]]:
    """Parse and validate line by line from the start of `f`, raising a `LogFormatError` naming the first bad line.

    Reads at most `MAX_LINE_BYTES` of one line: memory stays bounded whatever the file holds.
    """
    f.seek(0)
    records: list[dict[str, Any]] = []
    seen: dict[int, int] = {}
    lineno = 0
    while True:
        line = f.readline(HEAD_BYTES)
        if not line:
            return records
        lineno += 1
        where = f"{log_path}:{lineno}"
        if len(line) == HEAD_BYTES and not line.endswith(b"\n"):  # a long line: judge its start before reading on
            if _garbage_start(line):
                raise LogFormatError(f"{where}: not a JSON line")
            line += f.readline(MAX_LINE_BYTES + 1 - HEAD_BYTES)
        if len(line) > MAX_LINE_BYTES:
            if _garbage_start(line[:4096]):
                raise LogFormatError(f"{where}: not a JSON line")
            raise LogFormatError(f"{where}: line longer than {MAX_LINE_BYTES >> 20} MiB; not a record")
        if not line.strip():
            continue
        last = not line.endswith(b"\n")
        if last and is_torn_tail(line):  # the file does not end with a newline
            if allow_torn:
                return records
            raise LogFormatError(f"{where}: torn last line (interrupted write); rerun or resume")
        try:
            rec = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise LogFormatError(f"{where}: not a JSON line") from None
        if last:
            raise LogFormatError(f"{where}: last line has no newline")
        reason = validate_record(rec, where)
        if reason:
            raise LogFormatError(f"{where}: {reason}")
        if rec["index"] in seen:
            raise LogFormatError(f"{where}: index {rec['index']} already on line {seen[rec['index']]}")
        seen[rec["index"]] = lineno
        records.append(rec)


def _read_fast(f: BinaryIO, allow_torn: bool) -> list[Any] | None:
    """Every record of `f`, read `CHUNK_BYTES` at a time and checked a column at a time; None if any part of the
    file needs the careful path (which then names the line). Memory: the records plus two chunks."""
    records: list[Any] = []
    rest = b""
    while True:
        block = f.read(CHUNK_BYTES)
        if not block:
            break
        data = rest + block if rest else block
        cut = data.rfind(b"\n")
        if cut < 0:
            rest = data
        else:
            complete, rest = data[: cut + 1], data[cut + 1 :]
            recs = _parse_fast(complete, allow_torn)
            if recs is None:
                return None
            if recs:
                try:
                    if not _all_valid(recs):
                        return None
                except TypeError:  # e.g. an unhashable value where a string belongs
                    return None
                records.extend(recs)
        if _garbage_start(rest[:4096]) or len(rest) > MAX_LINE_BYTES:
            return None
    if rest.strip():
        if not (allow_torn and is_torn_tail(rest)):
            return None
    if len({rec["index"] for rec in records}) != len(records):  # distinct across chunks too
        return None
    return records


def read_instances(path: str | Path, latency_unit: str | None = None, allow_torn: bool = False) -> RunLog:
    """Read and validate every line of the instances.log at `path` (a run directory or a file).

    `latency_unit` overrides what the log and its config.yaml say (SimulEval logs do not record it: `word` for
    text sources, `ms` for speech; pass `char` for SimulEval runs evaluated with `--eval-latency-unit char`).
    `allow_torn` leaves out a torn last line (scoring a partial run) instead of reporting it.
    """
    log_path = resolve_log_path(path)
    config = _read_config(log_path)
    try:
        with open(log_path, "rb") as f:
            records = _read_fast(f, allow_torn)
            if records is None:
                records = _read_careful(log_path, f, allow_torn)
    except OSError as exc:
        raise LogFormatError(f"{log_path}: cannot read ({exc.strerror})") from None
    if not records:
        raise LogFormatError(f"{log_path}: no instances")
    source_type = config.get("source_type")
    if source_type not in ("text", "speech"):
        first = records[0]
        speech = first.get("latency_unit") == "ms" or isinstance(first.get("source"), list)
        source_type = "speech" if speech else "text"
    unit = latency_unit or records[0].get("latency_unit") or ("ms" if source_type == "speech" else "word")
    if unit not in LATENCY_UNITS:
        raise LogFormatError(f"{log_path}: unknown latency unit {unit!r}")
    return RunLog(path=log_path, records=records, latency_unit=unit, source_type=source_type, config=config)
