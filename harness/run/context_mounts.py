"""Extra context and the `prepare:` step in a participant's container (Docker and single-node swarm backends).

Before a run the dataset's context documents are copied into a host staging folder with the list rewritten
(`harness.data.context`); the participant gets it read-only at `/context` and `HARNESS_CONTEXT_LIST` naming the
list. A submission's `prepare:` command runs first in its own container of the participant's image: no network,
the run's GPUs and memory/CPU limits, the context read-only and `/prepared` writable, killed at
`limits.prepare_timeout_s`; the streamed run then gets `/prepared` read-only (`HARNESS_PREPARED_DIR`). A track
without `context:` gets neither the mount nor the variable. A submission with `fetch:` has its filled volume
read-only at `/fetched` (`HARNESS_FETCH_DIR`) in prepare and in the run (see harness.run.fetch).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import layout
from harness.data.context import (
    CONTEXT_ENV,
    CONTEXT_ROOT,
    PREPARED_ENV,
    PREPARED_ROOT,
    context_list_path,
    stage_context,
)
from harness.run import failures, network
from harness.run.fetch import FETCH_ENV, FETCH_ROOT
from harness.run.sandbox import SandboxPolicy
from harness.run.spec import RunSpec, participant_argv
from harness.run.tail import log_tail

PREPARE_LOG_MAX_BYTES = 1_000_000


class ContextStage:
    """The run's host staging folder: `context/` (the documents and the rewritten list) and `prepared/`."""

    def __init__(self, spec: RunSpec) -> None:
        self.spec = spec
        self.root: Path | None = None

    @property
    def needed(self) -> bool:
        return self.spec.dataset.context is not None or bool(self.spec.prepare) or bool(self.spec.fetch_volume)

    def _root(self) -> Path:
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix=f"harness-{self.spec.run_id}-context-"))
            os.chmod(self.root, 0o755)
        return self.root

    def stage(self, user: str) -> None:
        """Copy the documents and make `prepared/` writable by the participant's `user` (`uid:gid`)."""
        if self.spec.dataset.context is not None:
            stage_context(self.spec.dataset, self._root() / "context")
        if self.spec.prepare:
            prepared = self._root() / "prepared"
            prepared.mkdir()
            if os.getuid() == 0:
                uid, _, gid = user.partition(":")
                os.chown(prepared, int(uid), int(gid or uid))
            else:
                os.chmod(prepared, 0o777)

    def binds(self, prepared_rw: bool = False) -> list[str]:
        """Docker bind strings: the context read-only, the prepared folder (read-only unless `prepared_rw`)."""
        out = []
        if self.root is not None and (self.root / "context").is_dir():
            out.append(f"{self.root / 'context'}:{CONTEXT_ROOT}:ro")
        if self.root is not None and (self.root / "prepared").is_dir():
            out.append(f"{self.root / 'prepared'}:{PREPARED_ROOT}:{'rw' if prepared_rw else 'ro'}")
        if self.spec.fetch_volume:
            out.append(f"{self.spec.fetch_volume}:{FETCH_ROOT}:ro")
        return out

    def environment(self) -> dict[str, str]:
        """The variables naming what is mounted."""
        env = {}
        if self.spec.dataset.context is not None:
            env[CONTEXT_ENV] = context_list_path()
        if self.spec.prepare:
            env[PREPARED_ENV] = PREPARED_ROOT
        if self.spec.fetch_volume:
            env[FETCH_ENV] = FETCH_ROOT
        return env

    def remove(self) -> None:
        """Delete the staging folder (its read-only folders made writable first); never raises."""
        if self.root is None:
            return
        for folder, dirs, _files in os.walk(self.root):
            for d in dirs:
                try:
                    os.chmod(os.path.join(folder, d), 0o755)
                except OSError:
                    pass
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None


def run_prepare(api: Any, spec: RunSpec, stage: ContextStage, user: str, run_dir: layout.RunDir,
                timings: dict[str, float], wait_exit: Callable[[Any, str, float], int | None]) -> None:
    """Run the submission's `prepare:` command to its end (network off); `failures.PrepareFailed` when it fails or
    outlives `limits.prepare_timeout_s`. Its output goes to prepare.log, its time to `timings["prepare_s"]`;
    `wait_exit(api, container, seconds)` is the backend's wait for a container's exit code."""
    limits = spec.config.limits
    policy = SandboxPolicy.from_limits(limits)
    host_config = policy.host_config_args("none")
    host_config["binds"] = stage.binds(prepared_rw=True)
    argv = participant_argv(list(spec.prepare or ()))
    env = {k: v for k, v in policy.environment("", "", 0).items() if not k.startswith(("HARNESS_SERVER", "SERVER"))}
    cid = api.create_container(
        spec.submission_image, entrypoint=argv[:1], command=argv[1:], name=f"harness-{spec.run_id}-prepare",
        user=user, environment={**env, **stage.environment()}, labels=network.labels(spec.run_id, "prepare"),
        host_config=api.create_host_config(**host_config))["Id"]
    t0 = time.monotonic()
    try:
        _start(api, cid)
        code = wait_exit(api, cid, limits.prepare_timeout_s)
        timings["prepare_s"] = time.monotonic() - t0
        if code is None:
            api.kill(cid)
        state = api.inspect_container(cid)["State"]
        _save_log(api, cid, run_dir.prepare_log)
    finally:
        api.remove_container(cid, force=True, v=True)
    failed = failures.prepare_outcome(code, bool(state.get("OOMKilled")), limits.prepare_timeout_s,
                                      log_tail(run_dir.prepare_log))
    if failed is not None:
        raise failed


def _start(api: Any, cid: str) -> None:
    """Start the prepare container; a command the engine cannot run is the submission's `crash`, any other refusal
    (a GPU request this engine cannot grant) the harness's `infra_error`, both named as the prepare step's."""
    import docker

    try:
        api.start(cid)
    except docker.errors.APIError as exc:
        reason = failures.start_failure(str(exc))
        if reason is None:
            detail = str(getattr(exc, "explanation", None) or exc).splitlines()[0]
            raise failures.InfraError(f"prepare: the engine could not start it: {detail}") from None
        raise failures.PrepareFailed(failures.CRASH, f"prepare: {reason}") from None


def _save_log(api: Any, cid: str, path: Path) -> None:
    """The prepare container's output, at most `PREPARE_LOG_MAX_BYTES` (its end kept)."""
    data = api.logs(cid, stdout=True, stderr=True)
    path.write_bytes(data[-PREPARE_LOG_MAX_BYTES:])
