"""Failure classes of a run (one submission × one dataset) and of single instances.

Every run ends with exactly one status. `ok` and `partial` mean the submission ran to its end; the others are
failures. Only `infra_error` (a fault of the harness or of the Docker engine, not of the submission) is retried,
once. A failed run still keeps, scores and flags as partial whatever instances it finished.

A server that dies while the participant runs (out of memory under its limit, a crash) is the participant's
`protocol_violation`, not an `infra_error`: only the participant's traffic reaches the server, and a retry would
only repeat the damage.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from harness.status import FAILURES as FAILURES  # re-exported: callers spell failures.FAILURES
from harness.status import InstanceStatus, RunStatus

OK = RunStatus.OK
PARTIAL = RunStatus.PARTIAL
INVALID_SUBMISSION = RunStatus.INVALID_SUBMISSION
BUILD_ERROR = RunStatus.BUILD_ERROR
CRASH = RunStatus.CRASH
OOM = RunStatus.OOM
TIMEOUT = RunStatus.TIMEOUT
PROTOCOL_VIOLATION = RunStatus.PROTOCOL_VIOLATION
INFRA_ERROR = RunStatus.INFRA_ERROR

STATUSES: tuple[str, ...] = tuple(RunStatus)
RETRYABLE: frozenset[str] = frozenset({INFRA_ERROR})
MAX_RETRIES = 1


class InfraError(Exception):
    """A fault of the harness or the Docker engine (not of the submission); the run is retried once."""


class ParticipantStartError(Exception):
    """The participant's command could not be started (no such executable, not executable): the participant's
    `crash`, never retried. The message is the reason ("executable file not found: nosuchbinary")."""


class PrepareFailed(Exception):
    """The submission's `prepare:` command failed (`crash`, `oom`) or ran past `limits.prepare_timeout_s`
    (`timeout`): the run ends there, never retried. The message is the reason."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status


class FetchFailed(PrepareFailed):
    """The submission's `fetch:` command failed (`crash`: it exited non-zero, or wrote more than
    `limits.fetch_bytes`; `oom`) or ran past `limits.fetch_timeout_s` (`timeout`): no run starts, never retried.
    The message is the reason, secrets masked."""


@dataclass(frozen=True)
class Outcome:
    """The verdict of one run: `status` from STATUSES, a one-line `reason`, and whether output is partial."""

    status: str
    reason: str | None = None
    partial: bool = False


def should_retry(status: str, attempt: int) -> bool:
    """Whether a run that ended with `status` on attempt number `attempt` (0-based) is run again."""
    return status in RETRYABLE and attempt < MAX_RETRIES


def classify_run(
    *,
    exit_code: int | None,
    oom_killed: bool,
    timed_out: str | None,
    instance_statuses: Iterable[str],
    expected: int,
    failed: Mapping[int, tuple[str, str]] | None = None,
) -> Outcome:
    """Decide a run's status from what Docker and the instances.log say.

    Precedence: the out-of-memory flag, then a harness timeout (`timed_out` names which one), then, when every
    instance was logged and the command exited non-zero, the agent's own failures (instances in `error`: the
    client's agent raised) as a crash when they are at least as many as the protocol violations, else the protocol
    violations (a command that exits non-zero after that is not what went wrong); then a non-zero exit or an exit
    before every instance was finished (crash), then protocol violations; finished with some instances timed out
    or in error is `partial`; everything fine is `ok`.
    `failed` (index → (status, the server's reason), `runlog.read_failures`) puts the server's reasons for the
    first failed instances into the reason, so the person sees why without opening the log.
    """
    counts = Counter(instance_statuses)
    done = sum(counts.values())
    partial = done < expected or any(s != OK for s in counts)
    progress = f"{done}/{expected} instances"
    note = failed_instances_note(failed or {})
    why = f"; {note}" if note else ""
    violations = counts.get(PROTOCOL_VIOLATION, 0)
    if oom_killed:
        return Outcome(OOM, f"out of memory (killed by the memory limit) after {progress}", partial)
    if timed_out:
        return Outcome(TIMEOUT, f"{timed_out} after {progress}", partial)
    if exit_code is None:
        return Outcome(INFRA_ERROR, "participant container has no exit code", partial)
    if exit_code != 0:
        return _failed_exit(exit_code, counts, expected, why, partial)
    if done < expected:
        return Outcome(CRASH, f"exited (code 0) after only {progress}{why}", True)
    if violations:
        return Outcome(PROTOCOL_VIOLATION, f"{violations} of {expected} instances broke the protocol{why}", True)
    bad = {s: n for s, n in counts.items() if s != OK}
    if bad:
        what = ", ".join(f"{n} {s}" for s, n in sorted(bad.items()))
        return Outcome(PARTIAL, f"instances not ok: {what}{why}", True)
    return Outcome(OK, None, False)


def _failed_exit(exit_code: int, counts: Counter[str], expected: int, why: str, partial: bool) -> Outcome:
    """The verdict of a command that exited non-zero (see `classify_run`)."""
    done = sum(counts.values())
    violations = counts.get(PROTOCOL_VIOLATION, 0)
    errors = counts.get(InstanceStatus.ERROR, 0)
    if errors and errors >= violations and done >= expected:
        return Outcome(CRASH, f"the agent failed in {errors} of {expected} instances{why}", partial)
    if violations and done >= expected:
        return Outcome(PROTOCOL_VIOLATION, f"{violations} of {expected} instances broke the protocol (then the "
                       f"command exited with code {exit_code}){why}", True)
    return Outcome(CRASH, f"exit code {exit_code} after {done}/{expected} instances{why}", partial)


#: How many failed instances a run's reason names (the rest are counted).
SHOWN_FAILURES = 2


def failed_instances_note(failed: Mapping[int, tuple[str, str]]) -> str:
    """`instance 0: error: RuntimeError: boom (raised at agent.py, line 7, in policy) (and 38 more like it);
    instance 39: protocol_violation: ...`: the server's reasons for the first failed instance of each of the first
    `SHOWN_FAILURES` kinds (status and reason), or "" when none failed."""
    kinds: dict[tuple[str, str], list[int]] = {}
    for i, kind in sorted(failed.items()):
        kinds.setdefault(kind, []).append(i)
    shown = []
    for (status, why), indices in list(kinds.items())[:SHOWN_FAILURES]:
        like = f" (and {len(indices) - 1} more like it)" if len(indices) > 1 else ""
        shown.append(f"instance {indices[0]}: {status}" + (f": {why}" if why else "") + like)
    more = sum(len(indices) for indices in list(kinds.values())[SHOWN_FAILURES:])
    return "; ".join(shown) + (f" (and {more} more failed)" if more > 0 else "")


def has_output(records: Iterable[Mapping[str, object]]) -> bool:
    """Whether any logged instance wrote something (a run's `partial` output is only worth the name then)."""
    return any(str(rec.get("prediction") or "").strip() for rec in records)


#: A shell's "command not found" line (dash, bash, busybox): `/bin/sh: 1: harnes: not found`,
#: `bash: line 1: harnes: command not found`, `harness-deadline: 1: nosuchbinary: not found`.
_SHELL_NOT_FOUND = re.compile(r":\s*([^:]+?): (?:command )?not found\s*$")
#: The engine's refusal to start a container's command: `exec: "nosuchbinary": executable file not found in $PATH`.
_EXEC_FAILED = re.compile(r'exec: "([^"]*)": (executable file not found|stat [^:]*: no such file or directory|'
                          r'permission denied)')
#: Exit status of a shell whose command was not found.
NOT_FOUND_EXIT = 127


def command_not_found(exit_code: int | None, output_tail: Sequence[str]) -> str | None:
    """"executable file not found: NAME" when the participant's shell said so and exited 127, else None."""
    if exit_code != NOT_FOUND_EXIT:
        return None
    for line in reversed(output_tail):
        m = _SHELL_NOT_FOUND.search(line)
        if m:
            return f"executable file not found: {m.group(1).strip()}"
    return None


def start_failure(engine_message: str) -> str | None:
    """The participant's reason when the engine refused to start its command (see `_EXEC_FAILED`), else None."""
    m = _EXEC_FAILED.search(engine_message)
    if m is None:
        return None
    what = "not executable" if m.group(2) == "permission denied" else "executable file not found"
    return f"{what}: {m.group(1)}"


def driven_outcome(report: dict | None, *, oom_killed: bool, timed_out: str | None, participant_exit: int | None,
                   instance_statuses: Iterable[str], expected: int, client_tail: str = "",
                   failed: Mapping[int, tuple[str, str]] | None = None) -> Outcome:
    """The outcome of a run whose participant is an agent server driven by the evaluation server.

    The participant never exits by itself: the harness stops it once the driver is done, so its exit code says
    nothing unless it died first. A kill by the harness's own total or idle timeout (`timed_out` names it) is a
    `timeout`, whatever the driver saw of it afterwards (the server gone, or no report yet). The driver's report
    says whether it ever listened (`not_ready`: a crash when it had exited, else a timeout, with the tail of its
    log), whether its start-up answer broke the interface (`violation`) and whether it went away mid-run (`gone`:
    a crash, an exit the harness did not cause).
    """
    statuses = list(instance_statuses)
    done = len(statuses)
    tail = f": {client_tail}" if client_tail else ""
    if timed_out and not oom_killed:
        partial = done < expected or any(s != OK for s in statuses)
        return Outcome(TIMEOUT, f"{timed_out} after {done}/{expected} instances", partial)
    if report is None:
        return Outcome(INFRA_ERROR, "the driver left no report (the evaluation server died)", done > 0)
    state, reason = report.get("state"), str(report.get("reason") or "")
    if state == "failed":
        return Outcome(INFRA_ERROR, reason, done > 0)
    if oom_killed:
        return Outcome(OOM, f"out of memory (killed by the memory limit) after {done}/{expected} instances", True)
    if state == "not_ready":
        if participant_exit is not None:
            return Outcome(CRASH, f"the participant exited (code {participant_exit}) before it listened: {reason}"
                           f"{tail}", done > 0)
        return Outcome(TIMEOUT, f"{reason}{tail}", done > 0)
    if state == "violation":
        return Outcome(PROTOCOL_VIOLATION, f"{reason}{tail}", done > 0)
    if state == "gone":
        code = f" (exit code {participant_exit})" if participant_exit is not None else ""
        return Outcome(CRASH, f"the participant's server went away{code} after {done}/{expected} instances: "
                       f"{reason}{tail}", True)
    return classify_run(exit_code=0, oom_killed=False, timed_out=timed_out, instance_statuses=statuses,
                        expected=expected, failed=failed)


def server_died(why: str, done: int, expected: int, log_tail: str = "") -> Outcome:
    """The participant's failure when the server died while it ran; `why` says how ("exited with code 1")."""
    reason = f"the evaluation server {why} while this participant ran, after {done}/{expected} instances"
    return Outcome(PROTOCOL_VIOLATION, f"{reason}: {log_tail}" if log_tail else reason, True)


def prepare_outcome(exit_code: int | None, oom_killed: bool, timeout_s: float, tail: str) -> PrepareFailed | None:
    """How a `prepare:` command ended, as the run's failure (None when it succeeded). `exit_code` None: it was
    still running at `limits.prepare_timeout_s`."""
    after = f": {tail}" if tail else ""
    if exit_code is None:
        return PrepareFailed(TIMEOUT, f"prepare: did not finish within limits.prepare_timeout_s ({timeout_s:g} s)")
    if oom_killed:
        return PrepareFailed(OOM, f"prepare: ran out of memory (exit code {exit_code}){after}")
    if exit_code != 0:
        return PrepareFailed(CRASH, f"prepare: exited with code {exit_code}{after}")
    return None
