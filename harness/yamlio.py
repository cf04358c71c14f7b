"""The one YAML loader of the harness's own files (task configs, submission.yaml): safe, with one-line errors
that name the file and, for a syntax error, the line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.errors import HarnessError

__all__ = ["read_yaml", "read_text", "parse_yaml"]


def parse_yaml(text: str, source: Path, error: type[HarnessError] = HarnessError, *, fast: bool = False) -> Any:
    """The data of YAML `text` read from `source`; a syntax error is `error("SOURCE: line N: invalid YAML: ...")`.

    `fast` parses with libyaml's safe loader where PyYAML has it (the same data, 10x faster: long segmentations)."""
    import yaml  # here, not at the top: `harness score` on a short-form log reads no YAML

    try:
        if fast:
            return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - safe loader
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}:" if mark is not None else ""
        raise error(f"{source}:{line} invalid YAML: {getattr(exc, 'problem', None) or exc}") from None


def read_text(path: Path, error: type[HarnessError] = HarnessError, *, missing: str = "file not found") -> str:
    """The text of `path` (UTF-8); a missing file is `error("PATH: <missing>")`, an unreadable one a one-line
    `error` naming the file."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{path}: {missing}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None


def read_yaml(path: Path, error: type[HarnessError] = HarnessError, *, missing: str = "file not found",
              fast: bool = False) -> Any:
    """The data of the YAML file `path`, with read_text's and parse_yaml's errors."""
    return parse_yaml(read_text(path, error, missing=missing), path, error, fast=fast)
