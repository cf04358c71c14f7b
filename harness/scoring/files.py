"""Writers of the scoring stage's files in a run folder: scores.json and instance_scores.jsonl (atomic)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness import layout
from harness.scoring.options import ScoringOptions

__all__ = ["write_json", "write_scores", "write_instance_scores", "score_run"]


def _replace(target: Path, text: str) -> Path:
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, target)
    return target


def write_json(target: Path, obj: Any) -> Path:
    """Write `obj` as indented JSON to `target`, atomically (a reader never sees half a file)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    return _replace(target, json.dumps(obj, indent=1, ensure_ascii=False) + "\n")


def write_scores(path: str | Path, scores: dict[str, Any] | None = None, options: ScoringOptions | None = None,
                 **kwargs: Any) -> Path:
    """Write scores.json beside the instances.log at `path` (scoring it with `options` unless `scores` is given);
    its path."""
    from harness.runlog import resolve_log_path

    log_path = resolve_log_path(path)
    if scores is None:
        from harness.scoring.corpus import score_path

        scores = score_path(log_path, options, **kwargs)
    return write_json(layout.RunDir(log_path.parent).scores, scores)


def write_instance_scores(run_dir: str | Path, rows: Iterable[dict[str, Any]]) -> Path:
    """Write RUN/instance_scores.jsonl: one JSON line per instance (`index` and every latency metric)."""
    target = layout.run_dir(run_dir).instance_scores
    text = "".join(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n" for row in rows)
    return _replace(target, text)


def score_run(path: str | Path, **kwargs: Any) -> dict[str, Any]:
    """Score the run at `path` (folder or instances.log) and write its scores.json and instance_scores.jsonl.

    Keyword arguments go to `harness.scoring.score_log` (`tokenizer`, `computation_aware`, `allow_torn`, ...).
    """
    from harness.runlog import resolve_log_path
    from harness.scoring.corpus import score_log

    log_path = resolve_log_path(path)
    scores, rows = score_log(log_path, **kwargs)
    write_json(layout.RunDir(log_path.parent).scores, scores)
    write_instance_scores(log_path.parent, rows)
    return scores
