"""Batch evaluation: every submission named on the command line × the chosen datasets, in isolation, scored.

Scheduling: one `SubmissionJob` (batch/job.py) per submission, `--workers N` at a time, each run on its own
network; the summary is rewritten as submissions finish (so an interrupted batch still leaves one) and the
results stage (`finish_results`) runs once at the end. Ctrl-C / SIGTERM tear every run down. A results folder
that already holds results needs `resume` or `overwrite` (batch/outdir.py); the runs of its summary.json that are
not evaluated now are kept.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from harness import layout
from harness.batch.job import SubmissionJob
from harness.batch.options import EvaluateOptions, backend_name, build_engine_of, registry_of
from harness.batch.outdir import check_results_folder, merge_runs
from harness.batch.progress import TICK_S, Progress
from harness.batch.results import finish_results, previous_runs, write_summary
from harness.config import load_config
from harness.data.dataset_check import require_dataset
from harness.errors import HarnessError
from harness.fields import name_hint
from harness.intake.discover import SubmissionRef, discover


def evaluate(opts: EvaluateOptions, progress: Progress | None = None) -> dict[str, Any]:
    """Evaluate every submission; writes the results folder and returns the summary object.

    On KeyboardInterrupt (Ctrl-C, or SIGTERM turned into one by the command) every worker tears its run down,
    leftovers of this process are removed, and the interrupt propagates.
    """
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    from harness.run.docker_backend import docker_api
    from harness.run.network import remove_resources

    check_results_folder(opts.output, opts.resume, opts.overwrite)
    check_swarm_flags(opts)
    previous = previous_runs(opts.output)
    api = docker_api() if any(needs_image(ref) for ref in opts.submissions) else None  # log submissions: no Docker
    server_image = opts.server_image or ""
    if api is not None:
        check_backend(opts, api)
        check_secrets(opts)
        remove_resources(api)  # leftovers of killed harness processes
        if not server_image:
            server_image = base_image_for(opts)
    progress = progress or Progress()
    for ref in opts.submissions:
        progress.add(ref.id, opts.datasets[0])
    runs: list[dict[str, Any]] = []
    pool = ThreadPoolExecutor(max_workers=max(1, opts.workers), thread_name_prefix="harness-run")
    futures = {pool.submit(SubmissionJob(f, opts, progress, server_image)): f for f in opts.submissions}
    try:
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=TICK_S, return_when=FIRST_COMPLETED)
            for fut in done:
                runs.extend(fut.result())
            if done:  # the summary so far, so an interrupted batch still leaves one
                write_summary(opts.config, opts.output, merge_runs(previous, runs))
            progress.render()
    except BaseException:
        opts.stop.set()
        for fut in futures:
            fut.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        close_spares()
        if api is not None:
            remove_resources(api, only_pid=os.getpid())
        progress.close()
        raise
    pool.shutdown(wait=True)
    close_spares()
    progress.close()
    finish_results(opts.config, opts.output, merge_runs(previous, runs))
    return json.loads(layout.ResultsDir(opts.output).summary.read_text(encoding="utf-8"))


def needs_image(ref: SubmissionRef) -> bool:
    """Whether a submission is run from an image (so the batch needs Docker): not a log submission, nor one whose
    submission.yaml is invalid (its job reports that without Docker)."""
    from harness.intake.submission import load_submission

    try:
        return not load_submission(ref.path).is_log
    except HarnessError:
        return False


def check_secrets(opts: EvaluateOptions) -> None:
    """Before any run: every secret the task config names is set in the harness's environment, when a submission
    has a fetch step to give it to (one line naming the missing ones, never a value)."""
    from harness.intake.submission import load_submission
    from harness.run.fetch.secrets import missing_secrets

    missing = missing_secrets(opts.config)
    if not missing:
        return
    for ref in opts.submissions:
        try:
            fetches = bool(load_submission(ref.path).fetch)
        except HarnessError:
            continue
        if fetches:
            raise HarnessError(f"{opts.config.path}: secrets: {', '.join(missing)} not set in the harness's "
                               f"environment (the fetch step of {ref.id} needs it)")


def close_spares() -> None:
    """Remove the swarm backend's warm networks and wait for the removals it left to the engine, if it made any
    (imported only when the swarm backend was)."""
    import sys

    module = sys.modules.get("harness.run.swarm.spares")
    if module is not None:
        module.SPARES.close()
    settling = sys.modules.get("harness.run.swarm.settle")
    if settling is not None:
        settling.SETTLING.settle()


def base_image_for(opts: EvaluateOptions) -> str:
    """The harness base image (the server's image) on the harness's engine: built there, or with a build engine
    built there and moved (`images.move`)."""
    from harness.cache import cache_dir
    from harness.images.base import ensure_base_image
    from harness.images.move import move_image

    engine = build_engine_of(opts)
    if engine is None:
        return ensure_base_image()
    log = cache_dir() / "logs" / "base-image.log"
    tag = ensure_base_image(engine=engine, log=log)
    move_image(tag, engine, tag=tag, log=log)
    return tag


def check_swarm_flags(opts: EvaluateOptions) -> None:
    """The command line's swarm-only options make sense only with the swarm backend: one line otherwise."""
    if backend_name(opts) != "swarm":
        for flag, value in (("--registry", opts.registry), ("--build-engine", opts.build_engine)):
            if value:
                raise HarnessError(f"{flag} is for --backend swarm")


def check_backend(opts: EvaluateOptions, api: Any) -> None:
    """Before any run: the swarm backend needs a manager, an answering registry (if one is named), a node with
    the data label and an answering build engine (if one is named); each failure is one line."""
    if backend_name(opts) != "swarm":
        return
    from harness.run.failures import InfraError
    from harness.run.swarm.backend import check_data_node, check_gpus, swarm_manager
    from harness.run.swarm.registry import check_registry

    try:
        swarm_manager(api)
        check_data_node(api, opts.config.swarm.data_label)
        if opts.config.limits.gpus:
            check_gpus(api, len(opts.config.limits.gpus))
    except InfraError as exc:
        raise HarnessError(str(exc)) from None
    registry = registry_of(opts)
    if registry:
        check_registry(registry)
    engine = build_engine_of(opts)
    if engine:
        check_build_engine(engine)


def check_build_engine(engine: str) -> None:
    """One clear line if the build engine does not answer."""
    from harness.images.base import docker, last_line

    proc = docker(["version", "--format", "{{.Server.Version}}"], check=False, timeout=30, engine=engine)
    if proc.returncode != 0:
        raise HarnessError(f"build engine {engine} does not answer: {last_line(proc.stderr or proc.stdout)} "
                           "(check --build-engine / swarm.build_engine)")


def load_options(submissions: list[str | Path], config_path: Path, output: Path, datasets: list[str], workers: int,
                 resume: bool, overwrite: bool = False) -> EvaluateOptions:
    """Options for `harness evaluate` from its command-line values."""
    config = load_config(config_path, check_files=False)  # the files of the datasets evaluated now are checked
    for ds in datasets:
        if not any(ds in t.datasets for t in config.tracks):
            known = [name for t in config.tracks for name in t.datasets]
            raise HarnessError(f"{config_path}: no track has a dataset {ds!r}{name_hint(ds, known)}")
        for track in config.tracks:
            if ds in track.datasets:  # an organizer's data error stops the batch, never charged to a run
                require_dataset(config, track, ds)
    from harness.metrics.track_tools import track_tool_problems

    for track in config.tracks:  # a tool scoring needs that cannot run here: one line before anything runs
        problems = track_tool_problems(track) if set(datasets) & set(track.datasets) else []
        if problems:
            raise HarnessError(f"{config_path}: track {track.name!r}: {problems[0]}")
    return EvaluateOptions(submissions=discover(submissions), config=config, output=output,
                           datasets=datasets, workers=workers, resume=resume, overwrite=overwrite)
