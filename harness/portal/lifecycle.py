"""A portal job's lifecycle, the one typed state machine the pages, the API and the queue read.

A job is one submission × one dataset. It is `queued` until the queue starts it, `building`, `running` and
`scoring` while `harness evaluate` works on it, and ends `scored`, `failed` (with the run's failure class),
`cancelled` (by its team or the organizer) or `withdrawn` (by the organizer, with a reason). A job that was
running when the portal stopped is `queued` again when it starts.
"""

from __future__ import annotations

from enum import Enum

from harness.status import RunStatus


class JobState(str, Enum):
    """Where a job is. Members compare equal to their words (`"queued" == JobState.QUEUED`)."""

    QUEUED = "queued"
    BUILDING = "building"
    RUNNING = "running"
    SCORING = "scoring"
    SCORED = "scored"
    FAILED = "failed"
    CANCELLED = "cancelled"
    WITHDRAWN = "withdrawn"

    def __str__(self) -> str:
        return str(self.value)


ACTIVE = (JobState.BUILDING, JobState.RUNNING, JobState.SCORING)
FINAL = (JobState.SCORED, JobState.FAILED, JobState.CANCELLED, JobState.WITHDRAWN)

#: the moves a job may make; anything else is a bug, refused by `Store.move`
TRANSITIONS: dict[JobState, frozenset[JobState]] = {
    JobState.QUEUED: frozenset({JobState.BUILDING, JobState.CANCELLED, JobState.WITHDRAWN, JobState.FAILED}),
    JobState.BUILDING: frozenset({JobState.RUNNING, JobState.SCORING, JobState.SCORED, JobState.FAILED,
                                  JobState.CANCELLED, JobState.WITHDRAWN, JobState.QUEUED}),
    JobState.RUNNING: frozenset({JobState.SCORING, JobState.SCORED, JobState.FAILED, JobState.CANCELLED,
                                 JobState.WITHDRAWN, JobState.QUEUED}),
    JobState.SCORING: frozenset({JobState.SCORED, JobState.FAILED, JobState.CANCELLED, JobState.WITHDRAWN,
                                 JobState.QUEUED}),
    JobState.SCORED: frozenset({JobState.WITHDRAWN, JobState.QUEUED}),
    JobState.FAILED: frozenset({JobState.WITHDRAWN, JobState.QUEUED}),
    JobState.CANCELLED: frozenset({JobState.QUEUED, JobState.WITHDRAWN}),
    JobState.WITHDRAWN: frozenset(),
}

#: run statuses that are the organizer's fault: the job is refunded (it counts against no limit)
OUR_FAULT: frozenset[str] = frozenset({RunStatus.INFRA_ERROR.value})


def can_move(old: JobState, new: JobState) -> bool:
    """Whether a job in state `old` may move to `new`."""
    return new in TRANSITIONS[old]


def outcome(run_status: str) -> tuple[JobState, str | None]:
    """A finished run's job state and failure class: `scored` for ok and partial, else `failed` with the status."""
    if run_status in (RunStatus.OK.value, RunStatus.PARTIAL.value):
        return JobState.SCORED, None
    return JobState.FAILED, run_status
