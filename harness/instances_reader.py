"""Read and validate an instances.log: the harness's own, or one written by SimulEval 1.1.4 (beside config.yaml).

Every problem is reported as one `LogFormatError` line naming the file and line: a missing file, a half-written
or unreadable line, a missing field, delays that decrease or go beyond the source length, a line without
references.
"""

from __future__ import annotations

import json
import math
import operator
import re
from pathlib import Path
from typing import Any

from harness.errors import LogFormatError

__all__ = ["RunLog", "read_instances", "resolve_log_path", "validate_record", "record_latency_unit"]

LATENCY_UNITS = ("word", "char", "ms")
DELAY_TOLERANCE = 1e-6  # relative slack for delays at the very end of the source (float ms)
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
    p = Path(path)
    if p.is_dir():
        p = p / "instances.log"
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
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise LogFormatError(f"{cfg}: unreadable YAML ({str(exc).splitlines()[0]})") from None
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
    for key in ("index", "prediction", "delays", "source_length"):
        if key not in rec:
            return f"missing field {key!r}"
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
    src_len = rec["source_length"]
    if not _is_number(src_len) or src_len <= 0:
        return "field 'source_length' must be a positive number"
    delays = rec["delays"]
    if not isinstance(delays, list) or not _numbers(delays):
        return "field 'delays' must be a list of numbers"
    if delays:
        if delays[0] < 0:
            return f"delay 0 is negative ({delays[0]})"
        if any(map(operator.gt, delays, delays[1:])):
            i = next(i for i in range(1, len(delays)) if delays[i] < delays[i - 1])
            return f"delays decrease at position {i} ({delays[i - 1]} -> {delays[i]})"
        if delays[-1] > src_len * (1 + DELAY_TOLERANCE):
            i = next(i for i, d in enumerate(delays) if d > src_len * (1 + DELAY_TOLERANCE))
            return f"delay {i} ({delays[i]}) is beyond the source length ({src_len})"
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
    if revisions is not None:
        if not isinstance(revisions, list) or not all(
            isinstance(r, dict) and isinstance(r.get("text"), str) and _is_number(r.get("delay")) for r in revisions
        ):
            return "field 'revisions' must be a list of {delay, elapsed, text} objects"
    unit = rec.get("latency_unit")
    if unit is not None and unit not in LATENCY_UNITS:
        return f"field 'latency_unit' must be one of {', '.join(LATENCY_UNITS)}"
    return None


def read_instances(path: str | Path, latency_unit: str | None = None, drop_half_written: bool = False) -> RunLog:
    """Read and validate every line of the instances.log at `path` (a run directory or a file).

    `latency_unit` overrides what the log and its config.yaml say (SimulEval logs do not record it: `word` for
    text sources, `ms` for speech; pass `char` for SimulEval runs evaluated with `--eval-latency-unit char`).
    """
    log_path = resolve_log_path(path)
    config = _read_config(log_path)
    try:
        raw = log_path.read_bytes()
    except OSError as exc:
        raise LogFormatError(f"{log_path}: cannot read ({exc.strerror})") from None
    lines = raw.split(b"\n")
    records: list[dict[str, Any]] = []
    seen: dict[int, int] = {}
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{log_path}:{lineno}"
        half_written = lineno == len(lines)  # the file does not end with a newline
        if half_written and drop_half_written:
            break
        try:
            rec = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            if half_written:
                raise LogFormatError(f"{where}: half-written last line (interrupted write), rerun or resume") from None
            raise LogFormatError(f"{where}: not a JSON line") from None
        if half_written:  # docs/formats.md: a last line without its newline is an interrupted write
            raise LogFormatError(f"{where}: half-written last line (no trailing newline), rerun or resume")
        reason = validate_record(rec, where)
        if reason:
            raise LogFormatError(f"{where}: {reason}")
        if rec["index"] in seen:
            raise LogFormatError(f"{where}: index {rec['index']} already on line {seen[rec['index']]}")
        seen[rec["index"]] = lineno
        records.append(rec)
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
