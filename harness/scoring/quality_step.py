"""The string-quality step that short- and long-form scoring share: BLEU, chrF, TER (sacrebleu) and METEOR on
hypotheses against each reference set alone (the first unqualified, the others `NAME@SET`) and all sets together
(`NAME@multi`), with bootstrap intervals from the shared resamples.

It runs in two halves so that TER's C code works in a background thread while the caller computes latency:
`start_quality`, then `quality_records` once the resampled sums are known."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness import metric_registry
from harness.metric_registry import QUALITY_METRICS
from harness.metrics.quality import QualityStats, interval, quality_stats

__all__ = ["QualityStep", "start_quality", "quality_records"]


@dataclass(frozen=True)
class QualityStep:
    """Quality statistics being computed: per (metric, `@SET` suffix), over the groups of reference streams."""

    groups: list[tuple[str, str, list[list[str]]]]  # (suffix, set name(s), reference streams)
    metrics: list[str]
    started: dict[tuple[str, str], QualityStats]

    @property
    def keys(self) -> list[tuple[str, str]]:
        """(metric, suffix) in the order their records are written: by group, then by registry order."""
        return [(metric, suffix) for suffix, _, _ in self.groups for metric in self.metrics]

    def blocks(self) -> list[Any]:
        """The sufficient-statistics block of each key (rows: instances), for the one-pass resampled sums."""
        return [self.started[key].stats() for key in self.keys]


def start_quality(hypotheses: list[str], refs_by_set: dict[str, list[str]], wanted: set[str], *, tokenizer: str,
                  target_lang: str) -> QualityStep:
    """Start every wanted quality metric on every reference group (TER first: it runs in the background)."""
    sets = list(refs_by_set)
    groups: list[tuple[str, str, list[list[str]]]] = []
    for i, name in enumerate(sets):
        groups.append(("" if i == 0 else f"@{name}", name, [refs_by_set[name]]))
    if len(sets) > 1:
        groups.append(("@multi", "+".join(sets), [refs_by_set[n] for n in sets]))
    metrics = [m for m in QUALITY_METRICS if m in wanted]
    order = sorted(metrics, key=lambda m: m != "TER")
    started = {(metric, suffix): quality_stats(metric, hypotheses, streams, tokenizer=tokenizer,
                                               target_lang=target_lang)
               for metric in order for suffix, _, streams in groups}
    return QualityStep(groups, metrics, started)


def quality_records(step: QualityStep, counts: Any, resampled: dict[tuple[str, str], Any], seed: int
                    ) -> dict[str, Any]:
    """The scores.json records of every started metric; `resampled[key]` holds its resampled sums (with
    `counts`, or None without intervals)."""
    out: dict[str, Any] = {}
    for suffix, set_name, _ in step.groups:
        for metric in step.metrics:
            q = step.started[(metric, suffix)]
            ci = None
            if counts is not None and len(q.stats()) > 0:
                ci = interval([q.score(row) for row in resampled[(metric, suffix)].tolist()])
            rec = {"score": q.value(), "ci95": ci,
                   "signature": q.signature(counts.shape[0] if ci is not None else None, seed),
                   "reference_set": set_name}
            rec.update(metric_registry.describe_key(metric + suffix))
            out[metric + suffix] = rec
    return out


def resampled_sums(counts: Any, blocks: Sequence[Any]) -> tuple[list[Any], Any]:
    """`counts @ hstack(blocks)` cut back into one slice per block (the one pass over the resamples)."""
    import numpy as np

    widths = [b.shape[1] for b in blocks]
    sums = counts @ np.hstack(blocks) if blocks else None
    edges = np.cumsum([0, *widths]).tolist()
    return [sums[:, edges[i]:edges[i + 1]] if sums is not None else None for i in range(len(blocks))], sums
