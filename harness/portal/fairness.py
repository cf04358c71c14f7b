"""Which queued jobs start next: first in, first out within a team, round-robin across teams, at most `per_team`
of a team's jobs at once, and at most one job of a submission at a time. A pure function: the queue keeps the
state (who was served when) and the tests and the benchmark call it directly."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol


class Queued(Protocol):
    """What fairness needs of a job."""

    @property
    def id(self) -> str: ...
    @property
    def team(self) -> str: ...
    @property
    def submission(self) -> str: ...
    @property
    def seq(self) -> int: ...


def pick_fair(queued: Sequence[Queued], running: Mapping[str, int], busy_submissions: set[str], per_team: int,
              slots: int, served: Mapping[str, int]) -> list[Queued]:
    """Up to `slots` jobs of `queued` (any order) to start now. `running` counts each team's jobs at work,
    `busy_submissions` are submissions with a job at work, `served[team]` is when the team was last served (a
    growing number; a team never served goes first, then by its oldest job)."""
    by_team: dict[str, list[Queued]] = {}
    for job in sorted(queued, key=lambda j: j.seq):
        by_team.setdefault(job.team, []).append(job)
    order = sorted(by_team, key=lambda t: (served.get(t, -1), by_team[t][0].seq))
    counts = dict(running)
    busy = set(busy_submissions)
    chosen: list[Queued] = []
    progressed = True
    while len(chosen) < slots and progressed:
        progressed = False
        for team in order:
            if len(chosen) >= slots:
                break
            if counts.get(team, 0) >= per_team:
                continue
            free = [j for j in by_team[team] if j.submission not in busy]
            if not free:
                continue
            job = free[0]
            by_team[team].remove(job)
            busy.add(job.submission)
            counts[team] = counts.get(team, 0) + 1
            chosen.append(job)
            progressed = True
    return chosen
