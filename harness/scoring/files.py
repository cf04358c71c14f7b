"""Writers of the scoring stage's files in a run folder: scores.json and instance_scores.jsonl (atomic)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness import layout
from harness.jsonio import write_json, write_text_atomic
from harness.scoring.options import ScoringOptions

__all__ = ["result_files", "write_scores", "write_instance_scores"]


def write_scores(path: str | Path, scores: dict[str, Any] | None = None, options: ScoringOptions | None = None
                 ) -> Path:
    """Write scores.json beside the instances.log at `path` (scoring it with `options` unless `scores` is given);
    its path."""
    from harness.runlog import resolve_log_path

    log_path = resolve_log_path(path)
    if scores is None:
        from harness.scoring.corpus import score_path

        scores = score_path(log_path, options)
    return write_json(layout.RunDir(log_path.parent).scores, scores, ensure_ascii=False, mkdir=True)


def write_instance_scores(run_dir: str | Path, rows: Iterable[dict[str, Any]], target: Path | None = None) -> Path:
    """Write RUN/instance_scores.jsonl (or `target`): one JSON line per instance (`index` and every latency
    metric)."""
    target = target or layout.run_dir(run_dir).instance_scores
    text = "".join(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n" for row in rows)
    return write_text_atomic(target, text)


def result_files(log: Path, shared: bool = False) -> tuple[Path, Path]:
    """(scores file, instance scores file) of the log `log`, so that scoring one log never replaces what another
    log's scoring wrote.

    The folder's own `scores.json` and `instance_scores.jsonl` when they are this log's: it is the folder's
    instances.log, or another tool's log scored alone there (no scores.json yet, or one scored from a log of this
    name). Otherwise (another log's scores are there, the folder holds a run's instances.log, or `shared`: several
    logs of one command lie in this folder) files named after the log: `A.scores.json` and
    `A.instance_scores.jsonl` for `A.jsonl`."""
    run = layout.RunDir(log.parent)
    if log.name == layout.INSTANCES_LOG or not (shared or run.instances_log.exists() or _scored_from_other(run, log)):
        return run.scores, run.instance_scores
    stem = log.name[: -len(log.suffix)] if log.suffix else log.name
    return log.parent / f"{stem}.{layout.SCORES}", log.parent / f"{stem}.{layout.INSTANCE_SCORES}"


def _scored_from_other(run: layout.RunDir, log: Path) -> bool:
    """Whether the folder's scores.json exists and was not scored from a log named like `log` (unknown: other)."""
    if not run.scores.exists():
        return False
    try:
        source = json.loads(run.scores.read_text(encoding="utf-8")).get("info", {}).get("source")
    except (OSError, ValueError, AttributeError):
        return True
    return not isinstance(source, str) or Path(source).name != log.name
