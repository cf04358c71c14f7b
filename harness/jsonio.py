"""One reader and one writer of the harness's JSON files, and one reader of its JSON-lines files (every one but
instances.log, whose readers in `harness.runlog` add the torn-line rule and the record checks); every file is
written atomically.

A writer puts the whole text into a temporary file beside the target and renames it over the target, so a
reader (the live viewer, a resumed run, another thread) never sees half a file.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.errors import HarnessError

__all__ = ["atomic_path", "write_text_atomic", "write_json", "read_json", "read_json_or_none", "iter_jsonl",
           "read_jsonl"]


def _temporary(target: Path) -> Path:
    """A hidden name beside `target`, unique per process and thread."""
    return target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")


@contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """A temporary path to write in full; on leaving the block it replaces `target` (removed on an error)."""
    tmp = _temporary(target)
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(target: Path, text: str, *, mkdir: bool = False) -> Path:
    """Write `text` (UTF-8) to `target` atomically; with `mkdir`, create its folder first. Returns `target`."""
    if mkdir:
        target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return target


def write_json(target: Path, obj: Any, *, indent: int | None = 1, sort_keys: bool = False,
               ensure_ascii: bool = True, default: Callable[[Any], Any] | None = None,
               mkdir: bool = False) -> Path:
    """Write `obj` as JSON and a newline to `target`, atomically (the keywords are json.dumps's). Returns it."""
    text = json.dumps(obj, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii, default=default)
    return write_text_atomic(target, text + "\n", mkdir=mkdir)


def read_json(path: Path, what: str = "file") -> Any:
    """Parse a JSON file; a missing, unreadable or broken one is a one-line HarnessError naming the file."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise HarnessError(f"{path}: {what} not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise HarnessError(f"{path}: cannot read {what}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise HarnessError(f"{path}: line {exc.lineno}: {what} is not valid JSON: {exc.msg}") from None


def read_json_or_none(path: Path) -> Any | None:
    """The parsed content of a JSON file, or None when it is missing, unreadable or broken."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def iter_jsonl(path: Path, what: str = "file") -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of every non-blank line of the JSON-lines file `path`, read as a stream. A missing or
    unreadable file, or a line that is not a JSON object, is a one-line HarnessError naming the file and line."""
    try:
        with open(path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if line.strip():
                    yield number, _json_object(line, path, number, what)
    except FileNotFoundError:
        raise HarnessError(f"{path}: {what} not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise HarnessError(f"{path}: cannot read {what}: {exc}") from None


def _json_object(line: str, path: Path, number: int, what: str) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise HarnessError(f"{path}: line {number}: {what} is not valid JSON: {exc.msg}") from None
    if not isinstance(obj, dict):
        raise HarnessError(f"{path}: line {number}: {what} is not a JSON object")
    return obj


def read_jsonl(path: Path, what: str = "file", *, missing_ok: bool = False) -> list[dict[str, Any]]:
    """The objects of the JSON-lines file `path`, blank lines left out (errors as `iter_jsonl`); with `missing_ok`,
    [] when there is no such file."""
    if missing_ok and not path.is_file():
        return []
    return [obj for _, obj in iter_jsonl(path, what)]
