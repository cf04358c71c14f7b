"""The out-of-box runner: decodes instances with an agent, one round trip per policy action.

`--num-workers N` threads each hold their own connection and take instances from a shared queue. An agent
that raises on an instance ends that instance with status `error` (the message is logged) and the run goes
on; a server that cannot be reached stops the run with one clear line.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.client.agent import Agent, AgentStates, ReviseAction, WriteAction
from harness.client.connection import Connection, ServerRefused
from harness.protocol import EOS, StepRequest, StepResponse, pcm16_to_floats


@dataclass
class RunSummary:
    """What a client run did."""

    decoded: int = 0
    errors: int = 0
    refused: int = 0
    actions: int = 0
    seconds: float = 0.0
    messages: list[str] = field(default_factory=list)


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


def decode_instance(conn: Connection, agent: Agent, index: int, audio: str = "json") -> tuple[str, int]:
    """Decode one instance; returns (status, number of actions). Agent errors end the instance as `error`."""
    states = agent.build_states()
    states.instance_id = index
    start = True
    actions = 0
    while True:
        try:
            action = agent.decide(states)
            if action.is_read():
                req = StepRequest(read=True, start=start, audio=audio)
            elif isinstance(action, (WriteAction, ReviseAction)):
                text = agent.postprocess(action.content) if action.content else ""
                finished = action.finished or states.target_finished
                words = text.split()
                if EOS in words:  # the seed's style: writing </s> ends the instance
                    words = words[: words.index(EOS)]
                    text, finished = " ".join(words), True
                revise = isinstance(action, ReviseAction)
                req = StepRequest(write=text, revise=revise, finished=finished, start=start)
                if revise:
                    states.target = text.split()
                else:
                    states.target.extend(words)
                states.target_finished = finished
            else:
                raise TypeError(f"{type(agent).__name__} returned {action!r}, not a READ/WRITE action")
        except Exception as exc:
            line = f"{type(exc).__name__}: {exc}".splitlines()[0][:400]
            print(f"harness client: instance {index}: agent failed: {line}", file=sys.stderr)
            traceback.print_exc(limit=5, file=sys.stderr)
            conn.step(index, StepRequest(error=line, start=start))
            return "error", actions + 1
        resp = conn.step(index, req)
        actions += 1
        start = False
        if req.read:
            _absorb(agent, states, resp)
        if resp.finished:
            return resp.status or "ok", actions


def run_instances(make_connection: Callable[[], Connection], agent: Agent, indices: list[int], num_workers: int = 1,
                  audio: str = "json", progress: bool = False) -> RunSummary:
    """Decode `indices` with `num_workers` threads, each with its own connection."""
    summary = RunSummary()
    todo: queue.Queue[int] = queue.Queue()
    for i in indices:
        todo.put(i)
    lock = threading.Lock()
    fatal: list[BaseException] = []
    t0 = time.perf_counter()

    def worker() -> None:
        try:
            conn = make_connection()
        except BaseException as exc:  # reported once by the caller
            fatal.append(exc)
            return
        try:
            while not fatal:
                try:
                    index = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    status, n = decode_instance(conn, agent, index, audio)
                except ServerRefused as exc:
                    with lock:
                        summary.refused += 1
                        summary.messages.append(f"instance {index}: {exc}")
                    print(f"harness client: instance {index}: {exc}", file=sys.stderr)
                    if exc.status not in (404, 409):
                        fatal.append(exc)
                    continue
                with lock:
                    summary.decoded += 1
                    summary.actions += n
                    summary.errors += status != "ok"
                    if progress:
                        print(f"harness client: instance {index}: {status} ({n} actions)", file=sys.stderr)
        except BaseException as exc:
            fatal.append(exc)
        finally:
            conn.close()

    n_threads = max(1, min(num_workers, len(indices) or 1))
    if n_threads == 1:
        worker()  # no thread switches on the hot path
    else:
        threads = [threading.Thread(target=worker, name=f"harness-worker-{k}", daemon=True) for k in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    summary.seconds = time.perf_counter() - t0
    if fatal:
        raise fatal[0]
    return summary


def agent_info_check(agent: Agent, info: dict[str, Any]) -> None:
    """Refuse a text agent on a speech track (and vice versa) before decoding anything."""
    from harness.errors import HarnessError

    source_type = getattr(agent, "source_type", "text")
    if info.get("modality") and source_type != info["modality"]:
        raise HarnessError(f"{type(agent).__name__} reads {source_type} but the server serves "
                           f"{info['modality']} (track {info.get('track')})")
