"""What one `harness evaluate` (or `harness validate`) is asked to do: its options, read by the scheduler
(`batch.scheduler`) and by each submission's job (`batch.job`)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from harness.config import TaskConfig
from harness.intake.discover import SubmissionRef

__all__ = ["EvaluateOptions", "backend_name", "build_engine_of", "registry_of"]


@dataclass
class EvaluateOptions:
    """Everything `harness evaluate` (and `harness validate`) needs."""

    submissions: list[SubmissionRef]
    config: TaskConfig
    output: Path
    datasets: list[str]
    workers: int = 1
    resume: bool = False
    overwrite: bool = False
    server_image: str | None = None
    collect_peak_memory: bool = False
    #: network of the Dockerfile's RUN steps. Builds get the engine's default network: no hidden data exists at
    #: build time, and Dockerfiles routinely install packages (the baselines apt-get Apertium); "none" forbids it.
    build_network: str = "default"
    #: where runs happen: `local` (containers on this engine) or `swarm` (services on the swarm this engine
    #: manages); None: the task config's `backend:`
    backend: str | None = None
    registry: str | None = None  # swarm: HOST:PORT every node pulls from (None: the config's swarm.registry)
    #: swarm: the engine images are built on, then moved to the manager (None: the config's swarm.build_engine)
    build_engine: str | None = None
    #: fetch again even when a submission's fetch volume is cached (`--refetch`)
    refetch: bool = False
    stop: threading.Event = field(default_factory=threading.Event)


def backend_name(opts: EvaluateOptions) -> str:
    """The backend of this evaluation: the command line's, else the task config's."""
    return opts.backend or opts.config.backend


def registry_of(opts: EvaluateOptions) -> str | None:
    """The swarm registry: the command line's, else the task config's (None: single node, no registry)."""
    return opts.registry or opts.config.swarm.registry


def build_engine_of(opts: EvaluateOptions) -> str | None:
    """Where images are built: on the swarm backend the command line's build engine, else the task config's (then
    moved to the manager); None: on the harness's own engine."""
    if backend_name(opts) != "swarm":
        return None
    return opts.build_engine or opts.config.swarm.build_engine
