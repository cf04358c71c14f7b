"""`failures.driven_outcome` (issue 27): a kill by the harness's own timeout is a `timeout` naming the limit, whatever
the driver saw afterwards; only an exit the harness did not cause is a `crash`; a start-up answer that breaks the
interface is a `protocol_violation`."""

from __future__ import annotations

import pytest

from harness.run import failures


def outcome(report: dict | None, *, timed_out: str | None = None, exit_code: int | None = None,
            statuses: tuple[str, ...] = ("ok",)) -> failures.Outcome:
    return failures.driven_outcome(report, oom_killed=False, timed_out=timed_out, participant_exit=exit_code,
                                   instance_statuses=statuses, expected=3)


@pytest.mark.parametrize("report", [
    {"state": "gone", "reason": "POST /reset: connection refused (the participant's server is gone)"},
    None,  # the driver had not written its report yet when the run was classified
    {"state": "done"},
])
def test_our_own_kill_is_a_timeout_naming_the_limit(report: dict | None) -> None:
    got = outcome(report, timed_out="total timeout (5 s)", exit_code=137, statuses=("ok", "protocol_violation"))
    assert got == failures.Outcome(failures.TIMEOUT, "total timeout (5 s) after 2/3 instances", True)


def test_an_exit_we_did_not_cause_is_a_crash() -> None:
    got = outcome({"state": "gone", "reason": "GET /output: connection refused"}, exit_code=137)
    assert got.status == failures.CRASH and "went away (exit code 137)" in (got.reason or "")


def test_a_bad_startup_answer_is_a_protocol_violation() -> None:
    got = outcome({"state": "violation", "reason": "at start-up: GET / answered 404"}, statuses=())
    assert got == failures.Outcome(failures.PROTOCOL_VIOLATION, "at start-up: GET / answered 404", False)
