"""Joint mode (`harness run`): an evaluation and a client in one process, above both.

In-process calls by default, or the server's own HTTP set-up (`server.app.run_server`) on a loopback port in a
background thread. Scores are computed once, from the log file, after the run.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness import layout
from harness.client.agent import Agent
from harness.client.connection import Connection, InProcessConnection, connect
from harness.client.options import select_instances
from harness.client.runner import AgentTimeouts, RunSummary, agent_info_check, client_exit_code, run_instances
from harness.run import compute
from harness.runmeta import update_run_meta
from harness.server.app import run_server
from harness.server.evaluation import Evaluation, open_evaluation


@contextmanager
def loopback_server(evaluation: Evaluation) -> Iterator[str]:
    """Serve `evaluation` on 127.0.0.1 (a free port) from a background thread; yields its URL."""
    ready = threading.Event()
    state: dict[str, Any] = {}

    def thread_main() -> None:
        async def main() -> None:
            state["loop"] = asyncio.get_running_loop()
            state["stop"] = asyncio.Event()

            def listening(port: int) -> None:
                state["port"] = port
                ready.set()

            await run_server(evaluation, "127.0.0.1", 0, state["stop"], listening)

        try:
            asyncio.run(main())
        except BaseException as exc:  # reported by the waiting thread
            state["error"] = exc
            ready.set()

    thread = threading.Thread(target=thread_main, name="harness-loopback-server", daemon=True)
    thread.start()
    ready.wait()
    if "error" in state:
        raise state["error"]
    try:
        yield f"http://127.0.0.1:{state['port']}"
    finally:
        state["loop"].call_soon_threadsafe(state["stop"].set)
        thread.join()


def _record_compute(evaluation: Evaluation, records: list[dict[str, Any]], started_at: float | None) -> None:
    """The host, the start-up time and the compute time of this run, into its run.json."""
    from harness.run.hardware import hardware

    run = layout.RunDir(evaluation.writer.output)
    update_run_meta(run, {"hardware": hardware(), "startup": compute.startup(started_at, evaluation.first_request),
                          "compute": compute.compute(records, evaluation.speech)})


def joint_run(config: str | Path, dataset: str, output: str | Path, agent: Agent, track: str | None = None,
              resume: bool = False, overwrite: bool = False, transport: str = "inprocess", num_workers: int = 1,
              instances: str | None = None, progress: bool = False,
              system: dict[str, Any] | None = None, started_at: float | None = None) -> tuple[RunSummary, Path]:
    """Decode every pending instance with `agent`, then score the log file into scores.json; (summary, its path).

    The task's instance and idle timeouts hold for the agent in every transport. `summary.outcome` is the run's
    verdict by the orchestrator's rule (`classify_run`), as if the client were a container that exited with
    `client_exit_code(summary)`: the same agent bug gets the same status here and under Docker. `system` (the
    agent file's hash, class and options) is part of the run's identity: `--resume` refuses another system.
    run.json gets the host's hardware, the start-up time (from `started_at`, by default this process's start, to
    the agent's first request) and the compute time over the source (`harness.run.compute`).
    """
    from harness.run.failures import classify_run, has_output

    evaluation = open_evaluation(config, dataset, output, track, resume=resume, overwrite=overwrite,
                                 system=system)
    limits = AgentTimeouts(evaluation.limits.instance_timeout_s, evaluation.limits.idle_timeout_s)
    try:
        info = evaluation.info()
        agent_info_check(agent, info)
        indices = select_instances(instances, info["pending"])
        expected = len(evaluation.dataset) - len(info["pending"]) + len(indices)
        if transport == "inprocess":
            summary = run_instances(lambda: InProcessConnection(evaluation), agent, indices, num_workers,
                                    progress=progress, limits=limits, on_stuck=evaluation.expire,
                                    label="harness run")
        else:
            with loopback_server(evaluation) as url:
                def make() -> Connection:
                    return connect(url, transport)

                summary = run_instances(make, agent, indices, num_workers, audio="pcm16", progress=progress,
                                        limits=limits, on_stuck=evaluation.expire, label="harness run")
        records = evaluation.records()
        statuses = [rec.get("status", "ok") for rec in records]
        failed = {rec["index"]: (str(rec.get("status")), str(rec.get("error") or "")[:500]) for rec in records
                  if rec.get("status", "ok") != "ok"}
        summary.outcome = classify_run(exit_code=client_exit_code(summary), oom_killed=False,
                                       timed_out=summary.timed_out, instance_statuses=statuses, expected=expected,
                                       failed=failed)
        if summary.outcome.partial and not has_output(records):  # "partial output" only where there is some
            summary.outcome = replace(summary.outcome, partial=False)
        _record_compute(evaluation, records, compute.process_started_at() if started_at is None else started_at)
    finally:
        evaluation.close()
    return summary, score_evaluation(evaluation)


def evaluation_scores(evaluation: Evaluation) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The scores of the evaluation's log as `harness score` gives them (its track's options), per domain too when
    its dataset has domains (harness.scoring.domains), and the per-instance rows."""
    from harness.scoring import score_log
    from harness.scoring.options import track_scoring_options

    options = track_scoring_options(evaluation.track)
    scores, rows = score_log(evaluation.writer.path, options)
    ds = evaluation.track.datasets.get(evaluation.dataset_name)
    if ds is not None and ds.domains is not None:
        from harness.data.domains import domain_map
        from harness.scoring.domains import add_domain_scores

        domains = domain_map(evaluation.track, ds)
        if domains is not None:
            scores = add_domain_scores(scores, evaluation.writer.path, domains, options)
    return scores, rows


def score_evaluation(evaluation: Evaluation) -> Path:
    """Score the evaluation's log (`evaluation_scores`) into scores.json and instance_scores.jsonl (what `harness
    view` and the leaderboard's instance pages show per instance); the path of scores.json."""
    from harness.scoring import write_instance_scores, write_scores

    scores, rows = evaluation_scores(evaluation)
    target = write_scores(evaluation.writer.path, scores)
    write_instance_scores(target.parent, rows)
    return target
