"""What one run needs and what it produced; the two facts every backend shares: how many instances a dataset
has (its loaded length, the same object the server serves) and the server's command line."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.config import Dataset, TaskConfig, Track
from harness.data.context import CONTEXT_ROOT
from harness.images import base as images
from harness.run import failures


class RunInterrupted(Exception):
    """The harness was asked to stop (Ctrl-C / SIGTERM) while a run was in flight."""


@dataclass
class RunSpec:
    """One submission × one dataset. `command` is the submission's command (a shell string or an argv list);
    `track` and `dataset` are the resolved objects of `config`."""

    submission_image: str
    command: str | list[str] | tuple[str, ...]
    config: TaskConfig
    track: Track
    dataset: Dataset
    out_dir: Path
    server_image: str = field(default_factory=lambda: images.DEFAULT_TAG)
    image_user: str | None = None
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    collect_peak_memory: bool = False
    resume_log: bool = False  # continue an interrupted run's instances.log instead of starting it afresh
    interface: str = "harness"  # or an agent-server interface: the server drives the participant (harness.drivers)
    participant_port: int | None = None
    prepare: str | list[str] | tuple[str, ...] | None = None  # the submission's `prepare:` command, run first
    fetch_volume: str | None = None  # the volume its `fetch:` filled, mounted read-only (harness.run.fetch)
    fetch_image: str | None = None  # that volume's files as an image, for swarm nodes without it (run.fetch.ship)

    @property
    def driven(self) -> bool:
        """The participant is an agent server that the evaluation server drives."""
        return self.interface != "harness"


@dataclass
class RunResult:
    """What one run produced, besides the files in its output folder."""

    outcome: failures.Outcome
    exit_code: int | None = None
    oom_killed: bool = False
    timed_out: str | None = None
    isolation: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    instances_done: int = 0
    instances_expected: int = 0
    peak_memory_bytes: int | None = None
    client_log_truncated: bool = False
    client_log_tail: list[str] = field(default_factory=list)  # last lines of client.log (runs that are not ok)
    first_instance_s: float | None = None  # participant start → first instance logged
    window: tuple[float, float] | None = None  # wall-clock (epoch) start and end of the whole run
    participant_started_at: float | None = None  # epoch seconds: when the backend started the participant
    startup: dict[str, Any] | None = None  # participant start → first request (harness.run.compute.startup)
    compute: dict[str, Any] | None = None  # participant compute time and real-time factor (compute.compute)


def count_instances(track: Track, dataset: Dataset) -> int:
    """Number of instances of a dataset: the length of the dataset as the server loads it."""
    from harness.data.loader import load_dataset

    return len(load_dataset(track.modality, dataset.source, dataset.references, dataset.segmentation,
                            dataset.transcripts))


PARTICIPANT_ALIAS = "participant"  # the agent server's name on a run's network


def server_command(spec: RunSpec, port: int, host: str, participant_host: str = PARTICIPANT_ALIAS,
                   context_root: str | None = CONTEXT_ROOT) -> list[str]:
    """The evaluation server's command line (`harness server ...`), the same for every backend; for an agent-server
    participant, with the driver that plays the client against it. The dataset's context documents are named
    under `context_root` (the participant's mount; None: by their host paths, for a participant on this host).
    The server writes no scores.json (`--no-score`): the batch scores the collected log on its host, with the
    task's neural metrics, once."""
    argv = ["harness", "server", "--config", str(spec.config.path), "--track", spec.track.name,
            "--dataset", spec.dataset.name, "--port", str(port), "--output", str(spec.out_dir), "--host", host,
            "--resume" if spec.resume_log else "--overwrite", "--no-score"]
    if spec.dataset.context is not None and context_root is not None:
        argv += ["--context-root", context_root]
    if spec.driven:
        argv += ["--drive", spec.interface, "--participant", f"{participant_host}:{spec.participant_port}"]
    return argv


def participant_argv(command: str | list[str] | tuple[str, ...]) -> list[str]:
    """The submission's command as an argv (a string runs under /bin/sh -c)."""
    return ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
