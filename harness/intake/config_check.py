"""`harness check-config`: every problem of a task config at once, one line each (the organizer's check).

`load_config` stops at the first problem, which is right for a command about to run; an organizer writing a
config wants the whole list: every missing or empty source, reference and segmentation file of every dataset,
every dataset's files read as a run reads them (line counts, audio, segmentation: `harness.data.dataset_check`),
malformed tracks and datasets (each reported, the rest still read), duplicate track and regime names, language
fields that are no language code, every dataset's domains (`harness.data.domains`), and, when the submissions
are named, a `baseline:` id that none of them has and a `replaces:` that names no earlier submission of the same
team and track.
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
    problems += data_problems(config)
    if submissions:
        problems += submission_problems(config, submissions)
    return config, problems


def submission_problems(config: TaskConfig, submissions: list[str]) -> list[str]:
    """The problems only the set of submissions shows (as `harness evaluate` names them: folder names, or
    ID=FOLDER): a `baseline:` id that none of them has, a `replaces:` that names no earlier submission of its team
    and track (`harness.intake.replaces`)."""
    from harness.intake.discover import discover
    from harness.intake.replaces import replaces_problems

    try:
        refs = discover(submissions)
    except HarnessError as exc:
        return [f"submissions: {exc}"]
    return baseline_problems(config, [ref.id for ref in refs]) + replaces_problems(refs)


def _track_indices(config: TaskConfig) -> dict[str, int]:
    """{track name: its index in the config file} (a track left out while collecting shifts the loaded ones)."""
    from harness.yamlio import read_yaml

    raw = read_yaml(config.path) or {}
    names = [t.get("name") if isinstance(t, dict) else None for t in raw.get("tracks") or []]
    return {t.name: names.index(t.name) for t in config.tracks if t.name in names}


def data_problems(config: TaskConfig) -> list[str]:
    """A line for each problem a run would meet in the files of every dataset (`harness.data.dataset_check`)."""
    from harness.data.dataset_check import dataset_problems
    from harness.data.domains import domain_problems

    indices = _track_indices(config)
    out = []
    for track in config.tracks:
        for name, ds in track.datasets.items():
            where = f"{config.path}: tracks[{indices.get(track.name, '?')}].datasets.{name}"
            out += [f"{where}.{field}: {message}" for field, message in dataset_problems(track, ds)]
            if ds.domains is not None and _readable(ds.source) and (ds.domains.file is None
                                                                     or _readable(ds.domains.file)):
                out += [f"{where}.domains: {message}" for message in domain_problems(track, ds)]
    return out


def _readable(path: Path) -> bool:
    """A file that is there and not empty (the config reader reports the others)."""
    return path.is_file() and path.stat().st_size > 0


def baseline_problems(config: TaskConfig, ids: list[str]) -> list[str]:
    """A line for each track whose `baseline:` is none of the submission `ids`."""
    indices = _track_indices(config)
    out = []
    for track in config.tracks:
        if track.baseline is not None and track.baseline not in ids:
            where = f"tracks[{indices[track.name]}].baseline"
            out.append(f"{config.path}: {where}: no submission has the id {track.baseline!r} "
                       f"(ids: {', '.join(ids) or 'none'})")
    return out
