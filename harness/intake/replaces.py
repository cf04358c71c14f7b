"""`replaces: OLD-ID` checked against the submissions it may name (docs/participant.md, "new version").

A submission may replace an earlier submission of the same team and track only (`harness.batch.history`); a claim on
an unknown id, on another team's or another track's submission, or on itself is an error, one line naming the id
and why. Only where the set of submissions is known: `harness check-config CONFIG SUBMISSION...`, `harness
evaluate` (the submissions named and those of the results folder it continues, before any run) and `harness
leaderboard` (summary.json). `harness check` of one folder alone cannot know the other ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.errors import HarnessError
from harness.fields import suggest
from harness.intake.discover import SubmissionRef
from harness.intake.submission import load_submission

__all__ = ["Owner", "owners_in_summary", "replaces_problem", "replaces_problems", "too_many"]


@dataclass(frozen=True)
class Owner:
    """Whose a submission is: its team and its track (what a new version must share with it)."""

    team: str
    track: str


def replaces_problem(own_id: str, old: str, owner: Owner, known: Mapping[str, Owner]) -> str | None:
    """Why submission `own_id` of `owner` cannot say `replaces: old`, given the owner of every known id; None
    when it can."""
    if old == own_id:
        return f"{old!r} is this submission's own id"
    other = known.get(old)
    if other is None:
        guess = suggest(old, [k for k in known if k != own_id])
        return f"unknown id {old!r}: no submission has it" + (f"; did you mean {guess!r}?" if guess else "")
    if other.team != owner.team:
        return (f"{old!r} is another team's submission (team {other.team!r}, not {owner.team!r}): only the same "
                "team's can be replaced")
    if other.track != owner.track:
        return (f"{old!r} is a submission of another track ({other.track!r}, not {owner.track!r}): only one of the "
                "same track can be replaced")
    return None


def replaces_problems(refs: Iterable[SubmissionRef], earlier: Mapping[str, Owner] | None = None) -> list[str]:
    """A line (`FOLDER/submission.yaml: replaces: ...`) for each of `refs` whose `replaces:` names no earlier
    submission of its team and track among `refs` and `earlier` (the ids of a results folder: `owners_in_summary`).
    A submission.yaml that cannot be read is left to the check that reads it."""
    loaded = []
    for ref in refs:
        try:
            loaded.append((ref.id, load_submission(ref.path)))
        except HarnessError:
            continue
    known = {**(earlier or {}), **{sid: Owner(sub.team, sub.track) for sid, sub in loaded}}
    out = []
    for sid, sub in loaded:
        if sub.replaces and (why := replaces_problem(sid, sub.replaces, known[sid], known)) is not None:
            out.append(f"{sub.yaml_path}: replaces: {why}")
    return out


def owners_in_summary(runs: Iterable[Any]) -> dict[str, Owner]:
    """{submission id: its team and track} of summary.json's run lines (the first line of each id; a line that is no
    object, or whose fields are no strings, names no owner)."""
    out: dict[str, Owner] = {}
    for r in runs:
        if isinstance(r, dict) and isinstance(sid := r.get("submission"), str):
            team, track = r.get("team"), r.get("track")
            out.setdefault(sid, Owner(team if isinstance(team, str) else "", track if isinstance(track, str) else ""))
    return out


def too_many(problems: list[str], hint: str = "") -> str:
    """The first of `problems` as one line, saying how many more there are (`hint`: where they are all listed)."""
    more = f" (and {len(problems) - 1} more{hint})" if len(problems) > 1 else ""
    return f"{problems[0]}{more}"
