"""Writers of the scoring stage's files in a run folder: scores.json and instance_scores.jsonl (atomic)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness import layout
from harness.jsonio import write_json, write_text_atomic
from harness.scoring.options import ScoringOptions

__all__ = ["write_scores", "write_instance_scores"]


def write_scores(path: str | Path, scores: dict[str, Any] | None = None, options: ScoringOptions | None = None,
                 **kwargs: Any) -> Path:
    """Write scores.json beside the instances.log at `path` (scoring it with `options` unless `scores` is given);
    its path."""
    from harness.runlog import resolve_log_path

    log_path = resolve_log_path(path)
    if scores is None:
        from harness.scoring.corpus import score_path

        scores = score_path(log_path, options, **kwargs)
    return write_json(layout.RunDir(log_path.parent).scores, scores, ensure_ascii=False, mkdir=True)


def write_instance_scores(run_dir: str | Path, rows: Iterable[dict[str, Any]]) -> Path:
    """Write RUN/instance_scores.jsonl: one JSON line per instance (`index` and every latency metric)."""
    target = layout.run_dir(run_dir).instance_scores
    text = "".join(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n" for row in rows)
    return write_text_atomic(target, text)
