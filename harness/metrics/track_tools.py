"""Whether the tools a track's scoring needs can run on this machine: its BLEU tokenizer, and the original
mwerSegmenter binary where its campaign profile runs it. One line each, before anything is evaluated."""

from __future__ import annotations

from harness.config import Track
from harness.errors import HarnessError
from harness.profiles import PROFILES

__all__ = ["track_tool_problems"]


def track_tool_problems(track: Track) -> list[str]:
    """Each tool `track` needs that cannot run here, as `tokenizer: …` or `profile: …` (empty when all can)."""
    from harness.metrics.quality import tokenizer_problem

    problems = []
    if problem := tokenizer_problem(track.tokenizer):
        problems.append(f"tokenizer: {problem}")
    if track.is_longform and PROFILES[track.profile].stream_segmenter == "mwerbinary":
        from harness.metrics.mwerbinary import check_binary

        try:
            check_binary()
        except HarnessError as exc:
            problems.append(f"profile: {track.profile} runs the original mwerSegmenter: {exc}")
    return problems
