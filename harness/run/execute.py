"""`execute_run(spec)`: one run = one submission × one dataset, the same steps whatever runs it.

Steps, each timed: the backend starts the server (the only party with the hidden data and the output folder) and
gets the participant ready; the server is probed on GET /health until it answers; the participant starts with
the server URL in its environment, its output streamed to client.log (size-capped) while the watchdog enforces
the total and idle timeouts; then what the backend reads back (exit code, out-of-memory flag, isolation flags),
the outcome classified from the log (or, if the server died meanwhile, the participant's `protocol_violation`:
see `failures.server_died`; a command that cannot start is the participant's `crash`, "executable file not
found: NAME"), the last lines of client.log kept with every run that is not ok, and everything removed — in a
`finally`, so also on Ctrl-C, SIGTERM and errors. Backends: `DockerBackend` (isolated containers, `harness
evaluate`) and `LocalBackend` (local processes, `harness validate --no-docker`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from harness import layout
from harness.errors import HarnessError
from harness.jsonio import read_json_or_none
from harness.run import compute, failures
from harness.run.spec import RunInterrupted, RunResult, RunSpec, count_instances
from harness.run.tail import last_lines, log_tail
from harness.run.watch import Participant, ServerOutput, watch
from harness.runlog import read_failures, read_records, read_statuses
from harness.runmeta import FIRST_REQUEST, clear_harness_stop, note_harness_stop, read_run_meta


class Backend(Protocol):
    """Where a run happens. One backend object serves one run."""

    def prepare(self, spec: RunSpec, run_dir: layout.RunDir, timings: dict[str, float]) -> None:
        """Before anything else: stage the dataset's context for the participant and run the submission's
        `prepare:` command to its end (`timings["prepare_s"]`); `failures.PrepareFailed` when it fails."""

    def start_server(self, spec: RunSpec, run_dir: layout.RunDir, timings: dict[str, float]) -> None:
        """Start the server and the reading of its output (not waiting for it to listen)."""

    def prepare_participant(self, spec: RunSpec) -> None:
        """Whatever can be done for the participant while the server starts."""

    def wait_server_ready(self, run_dir: layout.RunDir) -> None:
        """Return once the server answers GET /health; `failures.InfraError` if it never does."""

    def start_participant(self, spec: RunSpec, run_dir: layout.RunDir) -> Participant:
        """Start the participant, its output pumped into client.log."""

    def server_output(self) -> ServerOutput:
        """The server's output stream: its last activity (the watchdog counts it) and whether it ended."""

    def collect(self, result: RunResult, run_dir: layout.RunDir) -> None:
        """Fill in what only the backend knows (exit code, OOM, isolation, log cut, peak memory)."""

    def server_exit(self) -> str | None:
        """None while the server runs; else how it ended, for a reason ("exited with code 1")."""

    def teardown(self) -> None:
        """Remove everything the run made; never raises."""


def execute_run(spec: RunSpec, stop: threading.Event | None = None,
                on_progress: Callable[[int, int], None] | None = None,
                backend: Backend | None = None) -> RunResult:
    """Run one submission on one dataset (default backend: Docker) and classify the outcome; never leaves
    resources behind. Raises `RunInterrupted` when `stop` is set (after tearing everything down); faults of the
    harness or the engine become an `infra_error` outcome."""
    if backend is None:
        from harness.run.docker_backend import DockerBackend

        backend = DockerBackend()
    stop = stop or threading.Event()
    spec.out_dir.mkdir(parents=True, exist_ok=True)
    run_dir = layout.RunDir(spec.out_dir)
    expected = count_instances(spec.track, spec.dataset)
    result = RunResult(outcome=failures.Outcome(failures.INFRA_ERROR, "not started"), instances_expected=expected)
    t0, wall0 = time.monotonic(), time.time()
    clear_harness_stop(run_dir)  # an earlier attempt's note is not this run's
    try:
        backend.prepare(spec, run_dir, result.timings)  # never part of the startup time or of any latency
        _run(spec, backend, run_dir, result, stop, on_progress, time.monotonic())
        return result
    except RunInterrupted:
        raise
    except failures.PrepareFailed as exc:  # the submission's own preprocessing failed: its status, not retried
        result.outcome = failures.Outcome(exc.status, str(exc), False)
        return result
    except failures.ParticipantStartError as exc:  # its command cannot start: the participant's crash
        result.outcome = failures.Outcome(failures.CRASH, str(exc), True)
        return result
    except failures.InfraError as exc:
        result.outcome = failures.Outcome(failures.INFRA_ERROR, str(exc), run_dir.instances_log.exists())
        return result
    except Exception as exc:  # noqa: BLE001 - engine or process faults
        result.outcome = failures.Outcome(failures.INFRA_ERROR, f"{type(exc).__name__}: {exc}".splitlines()[0],
                                          run_dir.instances_log.exists())
        return result
    finally:
        t_down = time.monotonic()
        backend.teardown()
        clear_harness_stop(run_dir)
        result.timings["teardown_s"] = time.monotonic() - t_down
        result.timings["total_s"] = time.monotonic() - t0
        result.window = (wall0, time.time())
        result.instances_done = len(read_statuses(run_dir.instances_log))
        _measure(spec, backend, run_dir, result)
        if result.outcome.partial and not _wrote_anything(run_dir):  # "partial output" only where there is some
            result.outcome = replace(result.outcome, partial=False)
        if result.outcome.status != failures.OK:
            result.client_log_tail = last_lines(run_dir.client_log)


def _wrote_anything(run_dir: layout.RunDir) -> bool:
    """Whether an instance of the run log has output (True when the log cannot be read: nothing is hidden)."""
    try:
        return failures.has_output(read_records(run_dir.instances_log))
    except HarnessError:
        return True


def _measure(spec: RunSpec, backend: Backend, run_dir: layout.RunDir, result: RunResult) -> None:
    """The participant's start-up time (its start, as the backend knows it, to the first request the server saw)
    and its compute time over the source (`harness.run.compute`)."""
    try:
        result.participant_started_at = getattr(backend, "participant_started_at", lambda: None)()
        result.startup = compute.startup(result.participant_started_at, read_run_meta(run_dir).get(FIRST_REQUEST))
        result.compute = compute.compute(read_records(run_dir.instances_log), spec.track.is_speech)
    except HarnessError:  # an unreadable run.json or log: the run's outcome says why; nothing to measure
        result.startup = result.compute = None


def _driven(spec: RunSpec, backend: Backend, run_dir: layout.RunDir, result: RunResult,
            statuses: dict[int, str]) -> failures.Outcome:

    report = read_json_or_none(run_dir.driver_report)
    # the server still runs: the participant ended by itself (the harness stops it only after the driver)
    exited = result.exit_code if backend.server_exit() is None else None
    # ... unless our own timeout killed it: that is a `timeout` (see `failures.driven_outcome`)
    if exited is not None and report is None and not result.timed_out:
        done = len(statuses)
        tail = log_tail(run_dir.client_log)
        return failures.Outcome(failures.CRASH, f"the participant exited (code {exited}) after {done}/"
                                f"{result.instances_expected} instances" + (f": {tail}" if tail else ""), True)
    if report is not None and report.get("state") == "not_ready" and spec.participant_port is not None:
        ports = list(getattr(backend, "participant_ports", lambda: [])())
        if ports and spec.participant_port not in ports:
            # the usual mistake: submission.yaml declares another port than the image's server uses
            report["reason"] = (f"{report.get('reason')}; it listens on {', '.join(map(str, ports))}, not on the "
                                f"port: {spec.participant_port} that submission.yaml declares")
    return failures.driven_outcome(
        report, oom_killed=result.oom_killed, timed_out=result.timed_out, participant_exit=exited,
        instance_statuses=statuses.values(), expected=result.instances_expected,
        client_tail=log_tail(run_dir.client_log), failed=read_failures(run_dir.instances_log))


#: Seconds the harness waits, after killing an agent server on a timeout, for its driver to log the instance it
#: cut and end the server by itself (it sees the connection go at once).
DRIVER_GRACE_S = 10.0


def _driven_watch(run_dir: layout.RunDir, startup_timeout_s: float) -> tuple[Callable[[], bool], Callable[[str], None]]:
    """For an agent server: (whether it has started: the driver's first good probe is in run.json, so the idle
    window opens then, or at the latest once the driver's start-up limit is past; the note that the harness is
    killing it, written before the kill)."""
    latest = time.monotonic() + startup_timeout_s + DRIVER_GRACE_S

    def ready() -> bool:
        try:
            return FIRST_REQUEST in read_run_meta(run_dir) or time.monotonic() > latest
        except HarnessError:  # being replaced right now: asked again at the next poll
            return False

    return ready, lambda reason: note_harness_stop(run_dir, reason)


def _await_driver(server: ServerOutput) -> None:
    """Wait (at most `DRIVER_GRACE_S`) for the server to end once the driver has seen the participant go."""
    end = time.monotonic() + DRIVER_GRACE_S
    while not server.ended and time.monotonic() < end:
        time.sleep(0.05)


def _run(spec: RunSpec, backend: Backend, run_dir: layout.RunDir, result: RunResult, stop: threading.Event,
         on_progress: Callable[[int, int], None] | None, t0: float) -> None:
    """The steps between start and teardown; fills `result`."""
    timings = result.timings
    backend.start_server(spec, run_dir, timings)
    backend.prepare_participant(spec)
    backend.wait_server_ready(run_dir)
    timings["server_ready_s"] = time.monotonic() - t0
    participant = backend.start_participant(spec, run_dir)
    t_run = time.monotonic()
    timings["startup_s"] = t_run - t0
    ready, before_kill = (_driven_watch(run_dir, spec.config.limits.startup_timeout_s) if spec.driven
                          else (None, None))
    exit_code, result.timed_out, result.first_instance_s = watch(
        participant, run_dir.instances_log, spec.config.limits, stop, t_run, result.instances_expected,
        on_progress, backend.server_output(), ready=ready, before_kill=before_kill)
    if result.timed_out and spec.driven:
        _await_driver(backend.server_output())
    timings["run_s"] = time.monotonic() - t_run
    result.exit_code = exit_code
    backend.collect(result, run_dir)
    statuses = read_statuses(run_dir.instances_log)
    result.instances_done = len(statuses)
    timings["collect_s"] = time.monotonic() - t_run - timings["run_s"]
    if spec.driven:  # an agent server: the driver's report, not the participant's exit, says how it went
        result.outcome = _driven(spec, backend, run_dir, result, statuses)
        return
    gone = backend.server_exit()
    if gone is not None:
        result.outcome = failures.server_died(gone, len(statuses), result.instances_expected,
                                              log_tail(run_dir.server_log))
        return
    result.outcome = outcome = failures.classify_run(
        exit_code=result.exit_code, oom_killed=result.oom_killed, timed_out=result.timed_out,
        instance_statuses=statuses.values(), expected=result.instances_expected,
        failed=read_failures(run_dir.instances_log))
    not_found = failures.command_not_found(result.exit_code, last_lines(run_dir.client_log))
    if outcome.status == failures.CRASH and not_found:
        result.outcome = failures.Outcome(failures.CRASH, f"{not_found} ({outcome.reason})", outcome.partial)
