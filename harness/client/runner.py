"""The out-of-box runner: decodes instances with an agent, one round trip per policy action.

`--num-workers N` threads each hold their own connection and take instances from a shared queue. An agent
that raises on an instance ends that instance with status `error` and the run goes on: the first traceback of
each kind of failure is shown once (the agent's own frames), the others are counted ("N more instances failed
the same way"); the error the server logs for the instance names where the agent raised (`RuntimeError: boom
(raised at agent.py, line 7, in policy)`). An instance whose agent writes nothing is counted as empty. A server that
cannot be reached stops the run with one clear line.

Reads after the end of the source are answered here, without a round trip (the server has nothing more to serve):
an agent that keeps reading is stopped after `MAX_READS_AFTER_END` of them in an instance, that instance's error
saying what to return, in the time its policy takes to be asked that often (not that many round trips).

With `limits` (joint mode), the workers run in threads watched by the calling thread: an agent that does not
return within the idle timeout (or past the instance timeout) has its instance ended as `timeout` through
`on_stuck`, and the run stops with `summary.timed_out` set; the stuck thread is abandoned (a daemon).
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.client.agent import Agent, AgentStates, ReviseAction, WriteAction
from harness.client.connection import Connection, ServerRefused
from harness.client.progress import DecodeProgress
from harness.client.tracebacks import agent_traceback, raised_at
from harness.protocol import EOS, StepRequest, StepResponse, pcm16_to_floats

#: reads after the end of the source an agent may ask for in one instance (as the server's own limit)
MAX_READS_AFTER_END = 10_000


class AgentMisbehaved(Exception):
    """The agent broke a rule of the agent API; the message says which, and what it should have done."""


def failure_kind(exc: BaseException) -> str:
    """One line naming a failure of the agent: `RuntimeError: boom`, or the rule an `AgentMisbehaved` states."""
    if isinstance(exc, AgentMisbehaved):
        return str(exc)
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:400]


@dataclass
class RunSummary:
    """What a client run did."""

    decoded: int = 0
    errors: int = 0
    refused: int = 0
    actions: int = 0
    seconds: float = 0.0
    messages: list[str] = field(default_factory=list)
    empty: int = 0
    timed_out: str | None = None
    failures: dict[str, int] = field(default_factory=dict)
    outcome: Any = None  # the run's verdict (joint mode), a `failures.Outcome`

    def report_failure(self, index: int, exc: BaseException, agent: Agent) -> None:
        """Show the first failure of a kind with the agent's traceback; count the ones like it."""
        kind = failure_kind(exc)
        seen = kind in self.failures
        self.failures[kind] = self.failures.get(kind, 0) + 1
        if not seen:
            print(f"harness client: instance {index}: agent failed: {kind}", file=sys.stderr)
            if not isinstance(exc, AgentMisbehaved):
                print(agent_traceback(exc), end="", file=sys.stderr)

    def failure_lines(self) -> list[str]:
        """One line per kind of failure seen more than once."""
        return [f"{n - 1} more instance(s) failed the same way ({kind})" for kind, n in self.failures.items() if n > 1]

    def warnings(self) -> list[str]:
        lines = self.failure_lines()
        if self.empty:
            lines.append(f"warning: {self.empty} of {self.decoded} instance(s) have an empty output "
                         "(the agent wrote nothing)")
        return lines


@dataclass
class AgentTimeouts:
    """The task's timeouts, applied to the agent in joint mode."""

    instance_timeout_s: float
    idle_timeout_s: float


@dataclass
class _Watch:
    """What one worker is doing, for the watching thread: the instance, since when, and whether in the agent."""

    index: int | None = None
    started: float = 0.0
    in_agent: float | None = None
    done: bool = False
    abandoned: bool = False


def _absorb(agent: Agent, states: AgentStates, resp: StepResponse) -> None:
    """Add a served segment to the states."""
    seg = resp.segment
    if isinstance(seg, (bytes, bytearray)):
        seg = pcm16_to_floats(seg) if seg else []
    if resp.sample_rate:
        states.source_sample_rate = resp.sample_rate
    if seg is not None and seg != []:
        seg = agent.preprocess(seg)
        if isinstance(seg, list):
            states.source.extend(seg)
        else:
            states.source.append(seg)
    states.source_finished = resp.source_finished


def _write_request(agent: Agent, states: Any, action: Any, start: bool) -> StepRequest:
    """The request of a WRITE (or REVISE) action, with the agent's states updated as the action says."""
    if not isinstance(action, (WriteAction, ReviseAction)):
        raise TypeError(f"{type(agent).__name__} returned {action!r}, not a READ/WRITE action")
    text = agent.postprocess(action.content) if action.content else ""
    finished = action.finished or states.target_finished
    words = text.split()
    if EOS in words:  # the seed's style: writing </s> ends the instance
        words = words[: words.index(EOS)]
        text, finished = " ".join(words), True
    revise = isinstance(action, ReviseAction)
    if revise:
        states.target = text.split()
    else:
        states.target.extend(words)
    states.target_finished = finished
    return StepRequest(write=text, revise=revise, finished=finished, start=start)


def _report_agent_failure(conn: Connection, agent: Agent, index: int, exc: Exception, summary: RunSummary | None,
                          start: bool) -> None:
    """An agent's exception: reported (to `summary`, else on stderr) and sent to the server as the instance's error,
    with where the agent raised it."""
    line = failure_kind(exc)
    if summary is not None:
        with _REPORT_LOCK:
            summary.report_failure(index, exc, agent)
    else:
        print(f"harness client: instance {index}: agent failed: {line}", file=sys.stderr)
    where = "" if isinstance(exc, AgentMisbehaved) else raised_at(exc)
    conn.step(index, StepRequest(error=f"{line} (raised at {where})" if where else line, start=start))


def _kept_reading(wrote: bool) -> AgentMisbehaved:
    what = "without finishing the instance" if wrote else "without writing anything"
    return AgentMisbehaved(f"the agent kept reading after the end of the source ({MAX_READS_AFTER_END} reads) {what}: "
                           "once states.source_finished is true, return WriteAction(text, finished=True)")


def _decide(agent: Agent, states: AgentStates, watch: _Watch | None) -> Any:
    """The agent's next action, with the time it spends deciding marked for the watching thread."""
    if watch is not None:
        watch.in_agent = time.monotonic()
    try:
        return agent.decide(states)
    finally:
        if watch is not None:
            watch.in_agent = None


def _ended(resp: StepResponse, wrote: bool, summary: RunSummary | None) -> str:
    """The status of an instance the server says is finished (an ok one without output counts as empty)."""
    status = resp.status or "ok"
    if not wrote and status == "ok" and summary is not None:
        with _REPORT_LOCK:
            summary.empty += 1
    return status


def decode_instance(conn: Connection, agent: Agent, index: int, audio: str = "json",
                    summary: RunSummary | None = None, watch: _Watch | None = None) -> tuple[str, int]:
    """Decode one instance; returns (status, number of actions). Agent errors end the instance as `error`
    (reported through `summary`); an instance where nothing was written counts in `summary.empty`. Reads after
    the end of the source are answered here (see the module docstring)."""
    states = agent.build_states()
    states.instance_id = index
    start = True
    actions = past_end = 0
    wrote = False
    while True:
        req: StepRequest | None = None
        try:
            action = _decide(agent, states, watch)
            if action.is_read() and states.source_finished and not start:
                past_end += 1  # the server would serve nothing: answered here, no round trip
                if past_end > MAX_READS_AFTER_END:
                    raise _kept_reading(wrote)
            elif action.is_read():
                req = StepRequest(read=True, start=start, audio=audio)
            else:
                req = _write_request(agent, states, action, start)
                wrote = wrote or bool((req.write or "").strip())
        except Exception as exc:
            if watch is not None and watch.abandoned:
                return "timeout", actions
            _report_agent_failure(conn, agent, index, exc, summary, start)
            return "error", actions + 1
        if watch is not None and watch.abandoned:
            return "timeout", actions
        if req is None:
            continue
        resp = conn.step(index, req)
        actions += 1
        start = False
        if req.read:
            _absorb(agent, states, resp)
        if resp.finished:
            return _ended(resp, wrote, summary), actions


_REPORT_LOCK = threading.Lock()


def run_instances(make_connection: Callable[[], Connection], agent: Agent, indices: list[int], num_workers: int = 1,
                  audio: str = "json", progress: bool = False, limits: AgentTimeouts | None = None,
                  on_stuck: Callable[[int, str], None] | None = None, label: str = "harness client") -> RunSummary:
    """Decode `indices` with `num_workers` threads, each with its own connection (see the module docstring)."""
    summary = RunSummary()
    todo: queue.Queue[int] = queue.Queue()
    for i in indices:
        todo.put(i)
    lock = threading.Lock()
    changed = threading.Condition(lock)
    fatal: list[BaseException] = []
    stop = threading.Event()
    t0 = time.perf_counter()
    n_threads = max(1, min(num_workers, len(indices) or 1))
    watches = [_Watch() for _ in range(n_threads)]
    meter = DecodeProgress(label, len(indices))
    meter.start()

    def worker(watch: _Watch) -> None:
        conn: Connection | None = None
        try:
            conn = make_connection()
            while not fatal and not stop.is_set():
                try:
                    index = todo.get_nowait()
                except queue.Empty:
                    return
                watch.index, watch.started = index, time.monotonic()
                try:
                    status, n = decode_instance(conn, agent, index, audio, summary, watch if limits else None)
                except ServerRefused as exc:
                    if watch.abandoned:
                        return
                    with lock:
                        summary.refused += 1
                        summary.messages.append(f"instance {index}: {exc}")
                    print(f"harness client: instance {index}: {exc}", file=sys.stderr)
                    if exc.status not in (404, 409):
                        fatal.append(exc)
                    continue
                if watch.abandoned:
                    return
                with lock:
                    summary.decoded += 1
                    summary.actions += n
                    summary.errors += status != "ok"
                    meter.update(summary.decoded, summary.errors)
                    if progress:
                        print(f"harness client: instance {index}: {status} ({n} actions)", file=sys.stderr)
        except BaseException as exc:  # reported once by the caller
            if not watch.abandoned:
                fatal.append(exc)
        finally:
            if conn is not None:
                conn.close()
            with changed:
                watch.done = True
                changed.notify_all()

    if n_threads == 1 and limits is None:
        worker(watches[0])  # no thread switches on the hot path
    else:
        for k, w in enumerate(watches):
            threading.Thread(target=worker, args=(w,), name=f"harness-worker-{k}", daemon=True).start()
        _watch(watches, changed, limits, summary, stop, on_stuck)
    meter.finish()
    summary.seconds = time.perf_counter() - t0
    if fatal:
        raise fatal[0]
    return summary


def _watch(watches: list[_Watch], changed: threading.Condition, limits: AgentTimeouts | None, summary: RunSummary,
           stop: threading.Event, on_stuck: Callable[[int, str], None] | None) -> None:
    """Wait for the workers; with `limits`, end the instance of an agent that does not return in time."""
    period = None
    if limits is not None:
        period = min(1.0, max(0.005, min(limits.idle_timeout_s, limits.instance_timeout_s) / 4))
    with changed:
        while not all(w.done or w.abandoned for w in watches):
            changed.wait(period)
            if limits is None:
                continue
            now = time.monotonic()
            for w in watches:
                since = w.in_agent
                if w.done or w.abandoned or since is None or w.index is None:
                    continue
                if now - since > limits.idle_timeout_s:
                    reason = f"no request for {limits.idle_timeout_s:g} s"
                    run_reason = f"idle timeout (the agent did not return for {limits.idle_timeout_s:g} s)"
                elif now - w.started > limits.instance_timeout_s:
                    reason = f"instance took longer than {limits.instance_timeout_s:g} s"
                    run_reason = f"instance timeout ({limits.instance_timeout_s:g} s)"
                else:
                    continue
                w.abandoned = True
                stop.set()  # the other workers finish their instance and stop
                summary.timed_out = summary.timed_out or f"{run_reason} on instance {w.index}"
                print(f"harness client: instance {w.index}: timeout: {reason}", file=sys.stderr)
                if on_stuck is not None:
                    on_stuck(w.index, reason)


def client_exit_code(summary: RunSummary) -> int:
    """The exit code of `harness client` after `summary`: 1 when an instance failed or was refused, else 0."""
    return 1 if summary.refused or summary.errors else 0


def agent_info_check(agent: Agent, info: dict[str, Any]) -> None:
    """Refuse a text agent on a speech track (and vice versa) before decoding anything; then hand the agent the
    dataset's context documents (`Agent.set_context`)."""
    from harness.errors import HarnessError

    source_type = getattr(agent, "source_type", "text")
    if info.get("modality") and source_type != info["modality"]:
        raise HarnessError(f"{type(agent).__name__} reads {source_type} but the server serves "
                           f"{info['modality']} (track {info.get('track')})")
    context = info.get("context") or []
    set_context = getattr(agent, "set_context", None)
    if callable(set_context):
        set_context([str(p) for p in context])
