"""The results folder of `harness evaluate` / `harness validate`: usable, and never silently reused.

One rule with `harness run` and `harness server`: a folder that already holds results is refused unless the
command says what to do with it: `--resume` (finished runs with the same key are kept, the rest run) or
`--overwrite` (the runs named now are redone). Either way the runs not named now, and their lines of
summary.json, are kept (`merge_runs`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.errors import HarnessError


def writable_folder(path: Path, option: str = "--output") -> None:
    """Make `path` a folder this process can write; one-line HarnessError naming it otherwise."""
    if path.exists() and not path.is_dir():
        raise HarnessError(f"{path}: {option} is a file, not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HarnessError(f"{path}: cannot create the {option} folder: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise HarnessError(f"{path}: {option} folder is not writable")


def check_results_folder(path: Path, resume: bool, overwrite: bool, option: str = "--output",
                         can_resume: bool = True) -> None:
    """Refuse a non-empty results folder without `--resume` or `--overwrite` (one line naming it, suggesting only
    the flags the command has: `can_resume=False` for `harness validate`); make it writable otherwise."""
    if resume and overwrite:
        raise HarnessError("--resume and --overwrite exclude each other")
    if path.is_dir() and not (resume or overwrite) and any(path.iterdir()):
        if not can_resume:
            raise HarnessError(f"{path}: results folder is not empty; pass --overwrite to redo the run validated "
                               f"now (other runs in it are kept), or choose another {option}")
        raise HarnessError(f"{path}: results folder is not empty; pass --resume to continue it (finished runs are "
                           f"kept) or --overwrite to redo the runs named now, or choose another {option}")
    writable_folder(path, option)


def merge_runs(previous: Iterable[dict[str, Any]], now: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """summary.json's runs: every previous record whose (submission, dataset) was not recorded now, then the
    records of now; sorted by submission and dataset."""
    now = list(now)
    fresh = {(r.get("submission"), r.get("dataset")) for r in now}
    kept = [r for r in previous if isinstance(r, dict) and (r.get("submission"), r.get("dataset")) not in fresh]
    return sorted(kept + now, key=lambda r: (str(r.get("submission")), str(r.get("dataset"))))
