"""The reference texts of instance records, by reference set: what every scoring step compares against."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.errors import HarnessError

__all__ = ["reference_sets_of", "references_by_set"]


def reference_sets_of(record: dict[str, Any]) -> dict[str, str]:
    """{set name: reference text} of a record; a SimulEval record's single `reference` is the set `orig`."""
    refs = record.get("references")
    if isinstance(refs, dict) and refs:
        return refs
    return {"orig": record.get("reference", "")}


def references_by_set(records: Sequence[dict[str, Any]], sets: list[str]) -> dict[str, list[str]]:
    """{set name: the references of every record, in order}; a HarnessError names a record missing a set."""
    refs_by_set: dict[str, list[str]] = {name: [] for name in sets}
    for rec in records:
        refs = reference_sets_of(rec)
        for name in sets:
            if name not in refs:
                raise HarnessError(f"instance {rec.get('index')}: no reference set {name!r}")
            refs_by_set[name].append(refs[name])
    return refs_by_set
