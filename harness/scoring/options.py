"""The scoring options a track implies, in one place: every stage that scores a track's run (joint mode, the
server, the results stage) passes the same ones."""

from __future__ import annotations

from typing import Any

from harness.config import Track
from harness.metric_registry import OPTIONAL_METRICS

__all__ = ["track_scoring_options"]


def track_scoring_options(track: Track) -> dict[str, Any]:
    """Keyword arguments of `harness.scoring.score_path` for a run of `track`."""
    return {"tokenizer": track.tokenizer, "computation_aware": track.computation_aware,
            "also": [m for m in track.quality if m in OPTIONAL_METRICS] + (["AA"] if track.anticipation else []),
            "target_lang": track.target_lang}
