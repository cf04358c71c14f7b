"""The scoring steps that short- and long-form scoring share, in the order a run is scored: which metrics
(`wanted_metrics`), the bootstrap resamples (`resamples`), string and neural quality on the scored sentences
(`quality_and_neural`), each latency record (`latency_record`), NE on re-translation revisions (`ne_record`), the
instance counts (`instance_counts`) and the `info` block (`run_info`).

The two differ only in how sentences are made: a short-form run scores its instances as they are
(`harness.scoring.corpus`); a long-form run first resegments each recording's output onto its reference sentences
(`harness.scoring.longform`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from harness import __version__, metric_registry
from harness.errors import HarnessError
from harness.metric_registry import MODEL_METRICS, OPTIONAL_METRICS
from harness.metrics.quality import resample_counts
from harness.scoring.means import clip_interval
from harness.scoring.neural import model_metric_records
from harness.scoring.options import ScoringOptions
from harness.scoring.quality_step import QualityStep, quality_records, resampled_sums

__all__ = ["wanted_metrics", "resamples", "resampled", "quality_and_neural", "latency_record", "ne_record",
           "instance_counts", "run_info"]


def wanted_metrics(options: ScoringOptions, known: Iterable[str], *, defaults: Iterable[str] | None = None,
                   run: str = "") -> set[str]:
    """The metric names a run is scored on: `options.metrics` when given, else `defaults` (a profile's list) or
    every `known` metric but the optional and neural ones, plus the track's own (`also`) and the configured neural
    ones. A name not `known` is a HarnessError (`run` says which kind of run it is for)."""
    known = set(known)
    if options.metrics is not None:
        wanted = set(options.metrics)
    else:
        base = set(defaults) if defaults is not None else known - set(OPTIONAL_METRICS) - set(MODEL_METRICS)
        wanted = base | set(options.also) | set(options.model_metrics)
    unknown = wanted - known
    if unknown:
        raise HarnessError(f"unknown metric(s){run}: {', '.join(sorted(unknown))}")
    return wanted


def resamples(options: ScoringOptions, n: int) -> Any:
    """The bootstrap resamples of `n` sentences every interval of a run comes from (None: no intervals)."""
    return resample_counts(n, options.bootstrap, options.seed) if options.bootstrap > 1 else None


def resampled(quality: QualityStep, counts: Any, blocks: Sequence[Any] = ()) -> tuple[dict[Any, Any], Any]:
    """Every quality metric's resampled sums, and those of the further value `blocks` (latency), in one pass over
    the resamples: (by quality key, the sums of `blocks` or None)."""
    if counts is None:
        return {}, None
    every = quality.blocks() + list(blocks)
    slices, sums = resampled_sums(counts, every)
    by_key = dict(zip(quality.keys, slices, strict=False))
    n = len(quality.keys)
    rest = sums[:, sum(b.shape[1] for b in every[:n]):] if blocks and sums is not None else None
    return by_key, rest


def quality_and_neural(quality: QualityStep, counts: Any, by_key: dict[Any, Any], neural: Sequence[str],
                       sentences: Sequence[dict[str, Any]], refs_by_set: dict[str, list[str]],
                       options: ScoringOptions, source_texts: Sequence[str] | None
                       ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(scores.json records of the string and the `neural` quality metrics, the neural per-sentence values) of the
    scored `sentences`; `source_texts`: their sources for the neural metrics that read one."""
    out = quality_records(quality, counts, by_key, options.seed)
    records, values = model_metric_records(neural, sentences, refs_by_set, options.model_metrics,
                                           source_texts=source_texts, counts=counts, seed=options.seed)
    out.update(records)
    return out, values


def latency_record(name: str, score: float | None, ci: list[float] | None, *, reference_set: str, unit: str,
                   empty: str, segmenter: dict[str, Any] | None = None, after: dict[str, Any] | None = None
                   ) -> dict[str, Any]:
    """The scores.json record of latency metric `name` (in `unit`): score, interval (clipped at the metric's
    floor), reference set, whether it is computation-aware, the `segmenter` fields (long form), the registry's
    description, `after` and, when there is no score, `empty` as its note."""
    entry: dict[str, Any] = {"score": score, "ci95": clip_interval(name, score, ci), "reference_set": reference_set,
                             "computation_aware": name.endswith("_CA"), **(segmenter or {}),
                             **metric_registry.describe_key(name, unit), **(after or {})}
    if score is None:
        entry["note"] = empty
    return entry


def ne_record(records: Sequence[dict[str, Any]], unit: str) -> dict[str, Any] | None:
    """NE (normalized erasure) over the revisions of the re-translation records, in `unit`; None without any."""
    from harness.metrics.stability import corpus_normalized_erasure

    revised = [r["revisions"] for r in records if r.get("revisions")]
    if not revised:
        return None
    return {"score": corpus_normalized_erasure(([rv["text"] for rv in revs] for revs in revised), unit),
            "instances": len(revised), **metric_registry.describe_key("NE")}


def instance_counts(records: Sequence[dict[str, Any]]) -> dict[str, int]:
    """The `counts` every run reports: its instances, those with no output and those that failed."""
    return {
        "instances": len(records),
        "empty_instances": sum(1 for r in records if not r.get("delays")),
        "failed_instances": sum(1 for r in records if r.get("status", "ok") != "ok"),
    }


def run_info(options: ScoringOptions, *, latency_unit: str, target_unit: str, middle: dict[str, Any],
             source: str | None, sets: list[str], computation_aware: bool) -> dict[str, Any]:
    """The `info` block: harness version and units, what the run kind adds (`middle`), then the log, reference
    sets, tokenizer, bootstrap and whether computation-aware metrics were reported."""
    return {
        "harness_version": __version__,
        "latency_unit": latency_unit,
        "target_unit": target_unit,
        **middle,
        "source": source,
        "reference_sets": sets,
        "tokenizer": options.tokenizer,
        "bootstrap": options.bootstrap,
        "seed": options.seed,
        "computation_aware": computation_aware,
    }
