"""The scoring stage: instances.log → scores.json and instance_scores.jsonl (`corpus`, `files`), and after a
batch, per-board paired significance (`results.score_results`). Reads `harness.metric_registry` for what metrics
exist; computes with `harness.metrics`."""

from harness.scoring.corpus import (
    add_norm_scores,
    corpus_instance_metrics,
    instance_metrics,
    instance_rows,
    score_log,
    score_path,
    score_records,
    score_records_with_instances,
)
from harness.scoring.files import write_instance_scores, write_scores
from harness.scoring.references import reference_sets_of

__all__ = [
    "add_norm_scores",
    "corpus_instance_metrics",
    "instance_metrics",
    "instance_rows",
    "reference_sets_of",
    "score_log",
    "score_path",
    "score_records",
    "score_records_with_instances",
    "write_instance_scores",
    "write_scores",
]
