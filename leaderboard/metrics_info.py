"""What each metric key of scores.json means, as the scoring stage wrote it into the records.

Every metric record of scores.json carries `kind`, `direction`, `unit` and `definition` (from
`harness.metric_registry`, written by `harness.scoring`); the leaderboard imports no metric code and reads them
here. A key no record explains (a scores.json from an older harness) is shown as `other`, without a direction.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

KINDS = ("quality", "norm", "latency", "stability", "diagnostic", "other")


@dataclass(frozen=True)
class MetricInfo:
    """A metric key explained for a reader."""

    key: str
    kind: str  # quality | latency | stability | norm | diagnostic | other
    higher_is_better: bool | None
    definition: str
    unit: str | None = None
    toward_zero: bool = False  # closest to 0 is better (a signed test value such as DSPTV)

    @property
    def arrow(self) -> str:
        """↑ when higher is better, ↓ when lower is better, →0 when closest to 0 is, nothing when unknown."""
        if self.toward_zero:
            return "→0"
        if self.higher_is_better is None:
            return ""
        return "↑" if self.higher_is_better else "↓"

    @property
    def better(self) -> str:
        """The direction in words (`higher is better`), or "" when unknown."""
        if self.toward_zero:
            return "closer to 0 is better"
        if self.higher_is_better is None:
            return ""
        return f"{'higher' if self.higher_is_better else 'lower'} is better"

    @property
    def tooltip(self) -> str:
        """Definition plus the direction in words, for a `title` attribute."""
        if not self.better:
            return self.definition
        return f"{self.definition} {self.arrow} {self.better}."


def from_record(key: str, record: Any) -> MetricInfo:
    """The `MetricInfo` a scores.json record gives about itself."""
    rec = record if isinstance(record, dict) else {}
    kind = str(rec["kind"]) if rec.get("kind") in KINDS else "other"
    direction = rec.get("direction")
    up = True if direction == "higher" else False if direction == "lower" else None
    definition = rec.get("definition") if isinstance(rec.get("definition"), str) else ""
    unit = rec.get("unit") if isinstance(rec.get("unit"), str) else None
    return MetricInfo(key, kind, up, definition or f"{key} (no definition in the scores).", unit,
                      toward_zero=direction == "zero")


class Catalog:
    """Every metric key of a results folder with what its records say; `describe(key)` for templates."""

    def __init__(self, score_objects: Iterable[dict[str, Any]] = ()) -> None:
        self.infos: dict[str, MetricInfo] = {}
        for scores in score_objects:
            self.add(scores)

    def add(self, scores: dict[str, Any]) -> None:
        for key, rec in scores.items():
            if isinstance(rec, dict) and key not in self.infos and "kind" in rec:
                self.infos[key] = from_record(key, rec)

    def describe(self, key: str) -> MetricInfo:
        """The key's info as its records say, else `other` without a direction."""
        if key in self.infos:
            return self.infos[key]
        return MetricInfo(key, "other", None, f"{key} (no definition in the scores).")
