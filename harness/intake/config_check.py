"""`harness check-config`: every problem of a task config at once, one line each (the organizer's check).

`load_config` stops at the first problem, which is right for a command about to run; an organizer writing a
config wants the whole list: every missing or empty source, reference and segmentation file of every dataset,
malformed tracks and datasets (each reported, the rest still read), duplicate track and regime names, language
fields that are no language code, and, when the submissions are named, a `baseline:` id that none of them has.
"""

from __future__ import annotations

from pathlib import Path

from harness.config import TaskConfig, load_config
from harness.errors import ConfigError, HarnessError


def config_problems(path: Path, submissions: list[str] | None = None) -> tuple[TaskConfig | None, list[str]]:
    """(the config as far as it could be read, or None; every problem found, one line each)."""
    problems: list[str] = []
    try:
        config = load_config(path, check_files=True, problems=problems)
    except ConfigError as exc:  # unreadable YAML or a top-level mistake: nothing below it can be read
        return None, [*problems, str(exc)]
    if submissions:
        problems += baseline_problems(config, submissions)
    return config, problems


def baseline_problems(config: TaskConfig, submissions: list[str]) -> list[str]:
    """A line for each track whose `baseline:` is the id of none of `submissions` (as `harness evaluate` names
    them: folder names, or ID=FOLDER)."""
    from harness.intake.discover import discover
    from harness.yamlio import read_yaml

    try:
        ids = [ref.id for ref in discover(submissions)]
    except HarnessError as exc:
        return [f"submissions: {exc}"]
    raw = read_yaml(config.path) or {}
    names = [t.get("name") if isinstance(t, dict) else None for t in raw.get("tracks") or []]
    out = []
    for track in config.tracks:
        if track.baseline is not None and track.baseline not in ids:
            where = f"tracks[{names.index(track.name)}].baseline"
            out.append(f"{config.path}: {where}: no submission has the id {track.baseline!r} "
                       f"(ids: {', '.join(ids) or 'none'})")
    return out
