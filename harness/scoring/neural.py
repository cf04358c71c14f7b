"""The neural quality metrics of one run (COMET, XCOMET, BLEURT): which texts they score, and their scores.json
records.

Each instance is scored as (source text, hypothesis, reference) on each reference set alone (`COMET`,
`COMET@SET`; a COMET model takes one reference); BLEURT reads no source, so it needs no transcript. The source
text is the record's `source` for text runs; for speech runs it is the transcript the dataset names (`source_text`
in the task config, `--source-text` of `harness score`), line i for instance i. Long-form runs pass the
resegmented sentences as the records and the transcript sentences (`RefSentence.source`) as `source_texts`. The
per-instance values go into instance_scores.jsonl, so the instance pages and the paired significance read them
from files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from harness import metric_registry
from harness.errors import HarnessError, MetricSetupError

if TYPE_CHECKING:  # annotations only: a short-form run without neural metrics loads no task-config code
    from harness.config import ModelMetric
    from harness.recordings import RefSentence

__all__ = ["source_texts_of", "longform_source_texts", "model_metric_records", "needs_source"]

#: the neural metrics that score (hypothesis, reference) pairs without the source
SOURCE_FREE = ("BLEURT",)


def needs_source(names: Sequence[str]) -> bool:
    """Whether any of the neural metrics `names` reads the source text."""
    return any(n not in SOURCE_FREE for n in names)


def longform_source_texts(sentences: Sequence[RefSentence]) -> list[str]:
    """A long-form dataset's source transcript sentences, in order: COMET's `src` for the resegmented output."""
    missing = [f"{s.recording}@{s.offset_ms:g}ms" for s in sentences if s.source is None]
    if missing:
        raise HarnessError(f"COMET needs the source transcript of every reference sentence; none for {missing[0]}"
                           + (f" and {len(missing) - 1} more" if len(missing) > 1 else ""))
    return [s.source or "" for s in sentences]


def source_texts_of(records: Sequence[dict[str, Any]], source_texts: Sequence[str] | None) -> list[str]:
    """The source text of every record: `source_texts[index]` when given, else the record's own text source."""
    out: list[str] = []
    for rec in records:
        index = rec.get("index", 0)
        if source_texts is not None:
            if not isinstance(index, int) or not 0 <= index < len(source_texts):
                raise HarnessError(f"instance {index}: no line {index} in the source text ({len(source_texts)} lines)")
            out.append(source_texts[index])
        elif isinstance(rec.get("source"), str):
            out.append(rec["source"])
        else:
            raise HarnessError(f"instance {index}: COMET needs the source as text; this is a speech run: name the "
                               "transcript (source_text of the dataset in the task config, or --source-text FILE)")
    return out


def model_metric_records(
    names: Sequence[str],
    records: Sequence[dict[str, Any]],
    refs_by_set: dict[str, list[str]],
    settings: Mapping[str, ModelMetric],
    *,
    source_texts: Sequence[str] | None = None,
    counts: Any = None,
    seed: int = 12345,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """({key: scores.json record}, {key: per-instance numpy array}) of each neural metric in `names`."""
    import numpy as np

    out: dict[str, dict[str, Any]] = {}
    per_instance: dict[str, Any] = {}
    if not names:
        return out, per_instance
    sources = source_texts_of(records, source_texts) if needs_source(names) else None
    hyps = [rec["prediction"] for rec in records]
    for name in names:
        if name not in settings:
            raise MetricSetupError(f"{name} needs a checkpoint: metrics.{name}.model in the task config, or "
                               f"--{name.lower()}-model PATH")
        for i, (set_name, refs) in enumerate(refs_by_set.items()):
            key = name if i == 0 else f"{name}@{set_name}"
            result = metric_registry.function_of(name)(name, sources, hyps, refs, settings[name])
            rec = result.record(counts, seed)
            rec["reference_set"] = set_name
            rec.update(metric_registry.describe_key(key))
            out[key] = rec
            per_instance[key] = np.asarray(result.values, dtype=np.float64)
    return out, per_instance
