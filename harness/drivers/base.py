"""The driver loop shared by every agent-server interface: readiness, one instance at a time, verdicts, timing.

Timing is the server's own: `Rounds.handed()` marks the moment a segment leaves for the participant (the server's
"depart"), `Rounds.answered()` the moment the participant's answer is in (the next "arrive"); the time between
counts as the participant's, exactly as the time between a native client's requests does, and so does every
further request whose answer shapes the output (SimulStream's `tokens_to_string`). Encoding a segment happens
before that window: the driver's own work is not charged to the participant.

Verdicts: an answer after the instance's time limit, or slower than `limits.idle_timeout_s` (as a native client
computing that long without a request), ends the instance as `timeout` (so does the server's own idle check, when it
comes first; the instance is then already logged and the driver goes on); a 5xx, a malformed or oversized
answer, or a connection closed mid-answer ends it as `protocol_violation` naming the endpoint; a participant that
stops listening ends the instance as `error` and the run (the driver's report says `gone`). A participant that
never listens within `limits.startup_timeout_s` leaves every instance unlogged and the report says `not_ready`; one
whose start-up answer proves it speaks the interface wrongly (`http.wait_listening`) leaves them unlogged too, at
once, and the report says `violation`. Once the harness has noted that it is killing the participant (its own total
or idle timeout, `runmeta.harness_stop`), the instance the kill cuts is a `timeout` "cut by the harness", no further
instance is driven, and the report says `stopped`.

Whatever a participant sends is at worst a `protocol_violation` of its instance: an exception the driver raises on
an answer (a bug it provokes, too) ends that instance so, naming the exception. Only a fault of the harness's own
machinery (`OSError` writing the run log, `MemoryError`) stops the run as `failed`, the infrastructure's error.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from harness import layout
from harness.drivers.http import (
    ParticipantError,
    ParticipantGone,
    ParticipantHttp,
    ParticipantTimeout,
    ProbeViolation,
    wait_listening,
)
from harness.jsonio import write_json
from harness.protocol import ProtocolError, StepRequest, StepResponse
from harness.runmeta import harness_stop
from harness.server.evaluation import Evaluation
from harness.server.session import ERROR, TIMEOUT, VIOLATION

__all__ = ["DriverReport", "Rounds", "AgentServerDriver", "write_report"]


class Rounds:
    """One instance's steps through the evaluation, with the participant's time measured between them."""

    def __init__(self, evaluation: Evaluation, index: int, audio: str = "json") -> None:
        self.evaluation, self.index, self.audio = evaluation, index, audio
        self.session: Any = None
        self.segment_ms: float | None = None  # None: the track's segment size

    def start(self) -> StepResponse:
        """Open the instance and read its first segment."""
        req = StepRequest(read=True, start=True, audio=self.audio)
        self.session = self.evaluation.begin(self.index, req, self.evaluation.clock())
        return self.evaluation.apply(self.session, req, self.segment_ms)

    def start_with(self, segment_ms: float) -> StepResponse:
        """Open the instance and read a first segment of `segment_ms` (the participant's own chunk size)."""
        self.segment_ms = segment_ms
        return self.start()

    def handed(self) -> None:
        """The segment leaves for the participant now: its clock runs from here."""
        self.evaluation.depart(self.session, self.evaluation.clock())

    def answered(self, t_answer: float, write: str = "", *, read: bool = True, finished: bool = False,
                 revise: bool = False) -> StepResponse:
        """Record what the participant answered at `t_answer` and read the next segment (unless finished)."""
        req = StepRequest(write=write, revise=revise, read=read and not finished, finished=finished,
                          audio=self.audio)
        self.session = self.evaluation.begin(self.index, req, t_answer)
        return self.evaluation.apply(self.session, req, self.segment_ms)


@dataclass
class DriverReport:
    """What the driver tells the orchestrator (written to the run folder as driver.json)."""

    interface: str
    state: str = "ready"  # ready | not_ready | violation (at start-up) | gone | done | failed (the harness's fault)
    #                       | stopped (the harness killed the participant on a total or idle timeout)
    reason: str = ""
    instances: int = 0


def write_report(run_dir: layout.RunDir, report: DriverReport) -> None:
    write_json(run_dir.driver_report, report.__dict__, indent=None)


class AgentServerDriver:
    """Base of the interface drivers: subclasses implement `probe` and `run_instance`."""

    interface = ""

    urllib_headers = False  # send requests as urllib does (the interface's own client uses urllib)

    def __init__(self, evaluation: Evaluation, host: str, port: int) -> None:
        self.evaluation = evaluation
        self.host, self.port = host, port
        self.http = ParticipantHttp(host, port, idle_s=evaluation.limits.idle_timeout_s,
                                    urllib_headers=self.urllib_headers)

    def probe(self, deadline: float) -> None:
        """Raise `ParticipantError` unless the participant gives a well-formed answer of this interface."""

    def run_instance(self, index: int, deadline: float) -> None:
        raise NotImplementedError

    def _verdict(self, index: int, exc: ParticipantError, report: DriverReport) -> bool:
        """Log instance `index` after what its participant did; whether the run goes on. Once the harness has
        decided to kill the participant (a total or idle timeout, `runmeta.harness_stop`), what fails from then on
        is the harness's doing: the instance is a `timeout` "cut by the harness", and the run stops there."""
        stopped = harness_stop(layout.RunDir(self.evaluation.writer.output))
        if stopped is not None:
            self.evaluation.fail(index, TIMEOUT, f"cut by the harness ({stopped}): {exc}")
            report.state, report.reason = "stopped", f"the harness ended the run ({stopped})"
            return False
        if isinstance(exc, ParticipantTimeout):
            self.evaluation.expire(index, str(exc))
        elif isinstance(exc, ParticipantGone):
            self.evaluation.fail(index, ERROR, str(exc))
            report.state, report.reason = "gone", str(exc)
            return False
        else:
            self.evaluation.fail(index, VIOLATION, str(exc))
        return True

    def run(self, startup_timeout_s: float) -> DriverReport:
        report = DriverReport(self.interface)
        try:
            wait_listening(self.host, self.port, time.monotonic() + startup_timeout_s, self.probe)
        except ProbeViolation as exc:
            report.state, report.reason = "violation", f"at start-up: {exc}"
            return report
        except ParticipantError as exc:
            report.state, report.reason = "not_ready", f"{exc} within {startup_timeout_s:g} s"
            return report
        self.evaluation.saw_participant("probe")  # its start-up ends at the first good probe (run/compute.py)
        limits = self.evaluation.limits
        for index in self.evaluation.pending():
            deadline = time.monotonic() + limits.instance_timeout_s
            try:
                self.run_instance(index, deadline)
            except ParticipantError as exc:
                if not self._verdict(index, exc, report):
                    return report
            except ProtocolError:
                if index not in self.evaluation.finished:
                    raise
                # the server ended the instance while the participant computed (idle timeout): it is logged
            except (OSError, MemoryError):
                raise  # the harness's own machinery failed (the run log, the memory of the server)
            except Exception as exc:  # noqa: BLE001 - provoked by an answer: that instance's violation
                self.evaluation.fail(index, VIOLATION, f"the driver could not use the participant's answer "
                                                       f"({type(exc).__name__}: {exc})".splitlines()[0][:300])
            report.instances += 1
        report.state = "done"
        return report
