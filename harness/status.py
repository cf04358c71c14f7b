"""Every status word the harness writes, in one place: a run's status and an instance's status.

The members are `str`s whose value is the word itself, so they compare equal to the words read back from
files (`"ok" == RunStatus.OK`) and are written as those words by `json`, `str()` and f-strings.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["RunStatus", "InstanceStatus", "FAILURES", "SCORED_STATUSES"]


class _Word(str, Enum):
    """A status word: `str(member)` and `f"{member}"` are its value on every Python the harness supports."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class RunStatus(_Word):
    """How one run (one submission × one dataset) ended. `ok` and `partial` ran to their end; the rest failed."""

    OK = "ok"
    PARTIAL = "partial"
    INVALID_SUBMISSION = "invalid_submission"
    BUILD_ERROR = "build_error"
    CRASH = "crash"
    OOM = "oom"
    TIMEOUT = "timeout"
    PROTOCOL_VIOLATION = "protocol_violation"
    INFRA_ERROR = "infra_error"


class InstanceStatus(_Word):
    """How one instance (one source the server streamed) ended; `open` while it runs."""

    OPEN = "open"
    OK = "ok"
    TIMEOUT = "timeout"
    ERROR = "error"
    PROTOCOL_VIOLATION = "protocol_violation"


#: the run statuses that are failures, in the order reports list them
FAILURES: tuple[RunStatus, ...] = tuple(s for s in RunStatus if s not in (RunStatus.OK, RunStatus.PARTIAL))
#: the run statuses whose output is scored and ranked (a failure whose partial output was kept is scored too)
SCORED_STATUSES: tuple[RunStatus, ...] = (RunStatus.OK, RunStatus.PARTIAL)
