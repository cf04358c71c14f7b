"""What a team's submissions count against in a phase, and when each counter resets: shown on every page, in the
API, and by `harness submit`, and checked before a submission is accepted."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from harness.portal.lifecycle import FINAL
from harness.portal.phases import Phase, next_reset
from harness.portal.store import Store


@dataclass(frozen=True)
class Counter:
    """One limit: how much of it is used, the limit (None: none), and when it resets (None: never)."""

    name: str
    used: int
    limit: int | None
    resets_at: datetime | None = None

    @property
    def reached(self) -> bool:
        return self.limit is not None and self.used >= self.limit

    def as_json(self) -> dict[str, object]:
        return {"used": self.used, "limit": self.limit,
                "resets_at": self.resets_at.isoformat().replace("+00:00", "Z") if self.resets_at else None}

    def line(self) -> str:
        limit = "no limit" if self.limit is None else f"{self.used} of {self.limit}"
        when = f", resets {self.resets_at:%Y-%m-%d %H:%M} UTC" if self.resets_at else ""
        return f"{self.name}: {limit}{when}"


def counters(store: Store, team: str, phase: Phase, now: datetime) -> list[Counter]:
    """The team's counters in `phase` at `now`: per day, total, own failures (a separate cap), at once."""
    charges = store.charges(team, phase.name)
    day_start = next_reset(now).timestamp() - 86400
    unfinished = sum(1 for sub in store.submissions(team) if sub.phase == phase.name
                     and any(j.state not in FINAL for j in store.jobs(sub.id)))
    return [
        Counter("per day", sum(1 for at, c in charges if c == "quota" and at >= day_start), phase.limits.per_day,
                next_reset(now)),
        Counter("total", sum(1 for _, c in charges if c == "quota"), phase.limits.total),
        Counter("own failures", sum(1 for _, c in charges if c == "failure"), phase.limits.failures),
        Counter("at once", unfinished, phase.limits.at_once),
    ]


def utc_now() -> datetime:
    return datetime.now(timezone.utc)
