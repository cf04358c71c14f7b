"""Per-domain scores of a run (`domains` in scores.json), for a dataset whose recordings carry a domain.

Each domain's scores are the run's scoring (`score_records_with_instances`, with its bootstrap intervals) on that
domain's instances alone: the same string and latency metrics and signatures as the run's own, without the neural
metrics (a second pass of a model per domain). A domain marked optional never changes the main ranking: when a
dataset has one, the run's top-level scores (the ones every board ranks by) cover the other domains' instances
only, and scores.json says so in `info.main_domains`. A dataset without domains gets no `domains` key at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.data.domains import DomainMap
from harness.errors import HarnessError
from harness.scoring.corpus import score_records_with_instances
from harness.scoring.options import ScoringOptions

__all__ = ["add_domain_scores", "main_records"]


def main_records(records: Sequence[dict[str, Any]], domains: DomainMap | None) -> list[dict[str, Any]]:
    """The records of the main ranking: all of them, or those outside every optional domain."""
    keep = domains.main_indices if domains is not None else None
    return list(records) if keep is None else [r for r in records if r.get("index") in keep]


def _subset_scores(records: list[dict[str, Any]], options: ScoringOptions, **kwargs: Any) -> dict[str, Any]:
    scores, _ = score_records_with_instances(records, options, **kwargs)
    scores.pop("info", None)
    return scores


def add_domain_scores(scores: dict[str, Any], log: str | Path, domains: DomainMap, options: ScoringOptions
                      ) -> dict[str, Any]:
    """`scores` (the run's scores.json object, scored from `log` with `options`) with per-domain scores under
    `domains` and, when some domain is optional, its top-level metrics rescored on the main domains' instances."""
    from harness.runlog import read_instances

    run_log = read_instances(log, allow_torn=True)
    kwargs: dict[str, Any] = {"latency_unit": run_log.latency_unit, "speech": run_log.source_type == "speech"}
    main = main_records(run_log.records, domains)
    if domains.optional and main:
        info = scores.get("info")
        scores = {**_subset_scores(main, options, **kwargs), "info": info}
        if isinstance(info, dict):
            info["main_domains"] = [d for d in domains.names if d not in domains.optional]
    per: dict[str, Any] = {}
    for name in domains.names:
        subset = [r for r in run_log.records if domains.by_index.get(r.get("index", -1)) == name]
        entry: dict[str, Any] = {"optional": name in domains.optional}
        if not subset:
            entry["counts"] = {"instances": 0}
        else:
            try:
                entry.update(_subset_scores(subset, options.without_model_metrics(), **kwargs))
            except HarnessError as exc:
                entry["error"] = str(exc)
        per[name] = entry
    scores["domains"] = per
    return scores
