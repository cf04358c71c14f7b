"""The Docker backend of `execute_run`: the run inside isolated containers (`harness evaluate`).

A fresh internal network; the server container (harness image; the only container with the hidden data,
read-only, and its run folder), confined by `sandbox.server_host_config` and probed from inside; the participant
container under the sandbox policy; after the run, the exit code, out-of-memory flag and isolation flags read back
from `docker inspect`. Both containers end themselves at their own deadline (run/deadlines.py), so nothing
outlives its budget when the harness is gone; a harness killed with SIGKILL leaves labelled resources that
`network.remove_resources` deletes at the next start.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import layout
from harness.config import Limits
from harness.protocol import LISTENING_LINE
from harness.run import failures, network
from harness.run.compute import started_at
from harness.run.context_mounts import ContextStage, run_prepare
from harness.run.deadlines import under_timeout, under_watchdog
from harness.run.ports import tcp_listening_ports
from harness.run.sandbox import (
    SandboxPolicy,
    applied_isolation,
    give_run_folder_to_server,
    participant_user,
    server_host_config,
    server_user,
)
from harness.run.spec import PARTICIPANT_ALIAS, RunResult, RunSpec, participant_argv, server_command
from harness.run.tail import log_tail
from harness.run.watch import SERVER_READY_TIMEOUT_S, LogPump, ServerOutput

SERVER_PORT = 8000
SERVER_LOG_MAX_BYTES = 5_000_000


class _PeakMemory(threading.Thread):
    """The highest memory use of a container: its cgroup's own peak counter, read from the host every 0.1 s
    (cgroup v1 `memory.max_usage_in_bytes`, v2 `memory.peak` or `memory.current`), else `docker stats`."""

    def __init__(self, api: Any, container: str) -> None:
        super().__init__(daemon=True)
        self.api, self.container = api, container
        self.peak: int | None = None
        self.done = threading.Event()

    def _files(self) -> list[Path]:
        c = self.container
        roots = [Path("/sys/fs/cgroup/memory/docker") / c, Path(f"/sys/fs/cgroup/memory/system.slice/docker-{c}.scope"),
                 Path("/sys/fs/cgroup/docker") / c, Path(f"/sys/fs/cgroup/system.slice/docker-{c}.scope")]
        names = ("memory.max_usage_in_bytes", "memory.peak", "memory.current")
        return [r / n for r in roots for n in names if (r / n).is_file()][:1]

    def run(self) -> None:
        files = self._files()
        if not files:
            return self._from_stats()
        while True:
            try:
                self.peak = max(self.peak or 0, int(files[0].read_text().strip()))
            except (OSError, ValueError):
                return
            if self.done.wait(0.1):
                return

    def _from_stats(self) -> None:
        try:
            for s in self.api.stats(self.container, stream=True, decode=True):
                mem = s.get("memory_stats") or {}
                value = max(int(mem.get("max_usage") or 0), int(mem.get("usage") or 0))
                if value:
                    self.peak = max(self.peak or 0, value)
                if self.done.is_set() or not (s.get("pids_stats") or {}).get("current"):
                    return
        except Exception:  # noqa: BLE001
            return


def docker_api() -> Any:
    """A low-level Docker API client; no engine is an InfraError."""
    import docker

    try:
        return docker.from_env(timeout=120).api
    except Exception as exc:  # noqa: BLE001
        raise failures.InfraError(f"no Docker engine answers: {exc}") from None


#: How often a container's state is asked for while waiting on it: each `inspect` costs the engine and this process
#: about 2 ms of CPU together, so a run's watchdog asks 4 times a second, not 16.
INSPECT_EVERY_S = 0.25


def exit_code(api: Any, cid: str) -> int | None:
    """The container's exit code if it has stopped (-1 if it is gone), else None; asked once."""
    import docker.errors
    import requests

    try:
        state = api.inspect_container(cid)["State"]
    except docker.errors.NotFound:
        return -1  # removed: it has ended, with no code left to read
    except requests.exceptions.RequestException:
        return None  # the engine is slow to answer: ask again
    if not state.get("Running") and state.get("Status") in ("exited", "dead"):
        return int(state.get("ExitCode", -1))
    return None


def poll_exit(ask: Callable[[], int | None], seconds: float) -> int | None:
    """`ask()` (an exit code, or None while running) every INSPECT_EVERY_S and at the end, until it answers or
    `seconds` pass. A wait of one poll or less (the watchdog's) asks once, then sleeps: the watchdog's next call asks
    again at once, so asking at the end too would ask twice at the same moment."""
    if seconds <= INSPECT_EVERY_S:
        code = ask()
        if code is None:
            time.sleep(max(0.0, seconds))
        return code
    deadline = time.monotonic() + seconds
    while True:
        code = ask()
        if code is not None:
            return code
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        time.sleep(min(INSPECT_EVERY_S, left))


def wait_exit(api: Any, cid: str, seconds: float) -> int | None:
    """The exit code if the container stops within `seconds`, else None (poll_exit of `inspect`).

    Polls `inspect` (each answer is immediate) instead of the engine's long-polling `wait`: a `wait` whose read
    timeout was lost on a reused connection blocked a run's thread forever, so that SIGTERM could not end
    `harness evaluate` (seen on a loaded machine).
    """
    return poll_exit(lambda: exit_code(api, cid), seconds)


class _Container:
    """The participant container as the watchdog sees it."""

    def __init__(self, api: Any, cid: str) -> None:
        self.api, self.cid = api, cid

    def wait(self, seconds: float) -> int | None:
        return wait_exit(self.api, self.cid, seconds)

    def kill(self) -> None:
        try:
            self.api.kill(self.cid)
        except Exception:  # noqa: BLE001 - exited meanwhile
            pass


def _has_shell(api: Any, cid: str) -> bool:
    """Whether a (created, not started) container's image has /bin/sh."""
    import docker

    try:
        stream, _ = api.get_archive(cid, "/bin/sh")
        for _chunk in stream:
            pass
        return True
    except docker.errors.NotFound:
        return False


def _start_participant(api: Any, cid: str) -> None:
    """Start the participant container; an engine refusal to run its command (no such executable) is the
    participant's `ParticipantStartError`, any other engine error propagates (infra_error)."""
    import docker

    try:
        api.start(cid)
    except docker.errors.APIError as exc:
        reason = failures.start_failure(str(exc))
        if reason is None:
            raise
        raise failures.ParticipantStartError(reason) from None


def image_argv(image: dict[str, Any], spec: RunSpec) -> list[str]:
    """The image's own command (entrypoint + cmd): what an agent-server submission without `command:` runs."""
    config = image.get("Config") or {}
    argv = [*(config.get("Entrypoint") or []), *(config.get("Cmd") or [])]
    if not argv:
        raise failures.ParticipantStartError("the image has no command (no ENTRYPOINT or CMD) and submission.yaml "
                                             "names none")
    return argv


def _server_exit(state: dict[str, Any], limits: Limits) -> str:
    """How the server container ended, from its `docker inspect` state."""
    if state.get("OOMKilled"):
        return f"ran out of memory (limits.server_memory {limits.server_memory})"
    return f"exited with code {state.get('ExitCode')}"


class DockerBackend:
    """One run in containers on a per-run internal network; see the module docstring."""

    def __init__(self) -> None:
        self.api: Any = docker_api()
        self.created: list[str] = []
        self.net: dict[str, Any] | None = None
        self.server_id = ""
        self.part_id = ""
        self.server_pump: LogPump | None = None
        self.client_pump: LogPump | None = None
        self.mem: _PeakMemory | None = None
        self.limits: Limits | None = None
        self.ports_seen: list[int] = []
        self.stop_ports = threading.Event()
        self.started: float | None = None  # epoch seconds the participant container started
        self.stage: ContextStage | None = None

    def prepare(self, spec: RunSpec, run_dir: layout.RunDir, timings: dict[str, float]) -> None:
        """Stage the dataset's context and run the submission's `prepare:` command (see run/context_mounts.py)."""
        self.stage = stage = ContextStage(spec)
        if not stage.needed:
            return
        user = self._user(spec)
        stage.stage(user)
        if spec.prepare:
            run_prepare(self.api, spec, stage, user, run_dir, timings, wait_exit)

    def _user(self, spec: RunSpec) -> str:
        """The participant's user (see sandbox.participant_user)."""
        image = self.api.inspect_image(spec.submission_image)
        return participant_user(spec.image_user if spec.image_user is not None else image["Config"].get("User"))

    def start_server(self, spec: RunSpec, run_dir: layout.RunDir, timings: dict[str, float]) -> None:
        t0 = time.monotonic()
        api = self.api
        self.limits = spec.config.limits
        name = f"harness-{spec.run_id}"
        self.net = net = network.create_network(api, f"{name}-net", spec.run_id)
        timings["network_s"] = time.monotonic() - t0
        give_run_folder_to_server(spec.out_dir)
        server = api.create_container(
            spec.server_image,
            # a driven participant (an agent server) has no business with the server's API: it listens on loopback
            command=under_timeout(server_command(spec, SERVER_PORT, "127.0.0.1" if spec.driven else "0.0.0.0"),
                                  spec.config.limits),
            name=f"{name}-server",
            user=server_user(),
            environment={"HOME": "/tmp", "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"},
            labels=network.labels(spec.run_id, "server"),
            host_config=server_host_config(api, spec, net["Name"]),
            networking_config=api.create_networking_config(
                {net["Name"]: api.create_endpoint_config(aliases=[network.SERVER_ALIAS])}),
        )
        self.server_id = server["Id"]
        self.created.append(self.server_id)
        api.start(self.server_id)
        # the server's output says when it listens (read while the participant container is being created)
        self.server_pump = LogPump(lambda: api.logs(self.server_id, stdout=True, stderr=True, stream=True,
                                                    follow=True), run_dir.server_log, SERVER_LOG_MAX_BYTES,
                                   watch_for=LISTENING_LINE)
        self.server_pump.start()

    def prepare_participant(self, spec: RunSpec) -> None:
        api, net = self.api, self.net
        assert net is not None
        image = api.inspect_image(spec.submission_image)
        user = self._user(spec)
        host = network.SERVER_ALIAS
        policy = SandboxPolicy.from_limits(spec.config.limits)
        argv = participant_argv(spec.command) if spec.command else image_argv(image, spec)
        stage = self.stage or ContextStage(spec)
        host_args = {**policy.host_config_args(net["Name"]), "binds": stage.binds()}

        def create(args: list[str]) -> str:
            cid = api.create_container(
                spec.submission_image,
                entrypoint=args[:1],
                command=args[1:],
                name=f"harness-{spec.run_id}-participant",
                user=user,
                environment={**policy.environment(f"http://{host}:{SERVER_PORT}", host, SERVER_PORT),
                             **stage.environment()},
                labels=network.labels(spec.run_id, "participant"),
                host_config=api.create_host_config(**host_args),
                networking_config=api.create_networking_config(
                    {net["Name"]: api.create_endpoint_config(aliases=[PARTICIPANT_ALIAS])}),
            )["Id"]
            self.created.append(cid)
            return cid

        self.part_id = create(under_watchdog(argv, spec.config.limits))
        if not isinstance(spec.command, str) and not _has_shell(api, self.part_id):
            # an argv command in an image without /bin/sh runs unwrapped (see run/deadlines.py)
            api.remove_container(self.part_id, force=True)
            self.created.remove(self.part_id)
            self.part_id = create(argv)

    def wait_server_ready(self, run_dir: layout.RunDir) -> None:
        assert self.server_pump is not None
        if not self.server_pump.wait_for_line(SERVER_READY_TIMEOUT_S):
            self.server_pump.join(2)
            raise failures.InfraError(f"server not healthy: {log_tail(run_dir.server_log)}")

    def start_participant(self, spec: RunSpec, run_dir: layout.RunDir) -> _Container:
        api, cid = self.api, self.part_id
        self.client_pump = LogPump(lambda: api.logs(cid, stdout=True, stderr=True, stream=True, follow=True),
                                   run_dir.client_log, spec.config.limits.client_log_max_bytes)
        self.started = time.time()  # until the engine's own State.StartedAt is read back (`collect`)
        _start_participant(api, cid)
        self.client_pump.start()
        if spec.driven:
            threading.Thread(target=self._watch_ports, args=(self.stop_ports,), daemon=True).start()
        if spec.collect_peak_memory:
            self.mem = _PeakMemory(api, cid)
            self.mem.start()
        return _Container(api, cid)

    def server_output(self) -> ServerOutput:
        assert self.server_pump is not None
        return self.server_pump

    def collect(self, result: RunResult, run_dir: layout.RunDir) -> None:
        api = self.api
        assert self.client_pump is not None and self.net is not None
        self.client_pump.join(5)
        info = api.inspect_container(self.part_id)
        if result.exit_code is None:
            result.exit_code = info["State"].get("ExitCode")
        result.oom_killed = bool(info["State"].get("OOMKilled"))
        self.started = started_at(info["State"].get("StartedAt")) or self.started
        result.isolation = applied_isolation(info, api.inspect_network(self.net["Id"]))
        result.client_log_truncated = self.client_pump.truncated
        if self.mem:
            self.mem.done.set()
            self.mem.join(2)
            result.peak_memory_bytes = self.mem.peak

    def participant_ports(self) -> list[int]:
        """The TCP ports a driven participant was last seen listening on ([] when unknown)."""
        return list(self.ports_seen)

    def participant_started_at(self) -> float | None:
        """When the participant's container started (the engine's `State.StartedAt`), epoch seconds."""
        return self.started

    def _watch_ports(self, stop: threading.Event) -> None:
        """While a driven participant runs, note the ports it listens on (its network namespace's
        /proc/PID/net/tcp*, readable when the harness is root): a wrong `port:` is then named in the reason."""
        while not stop.wait(1.0):
            try:
                pid = int(self.api.inspect_container(self.part_id)["State"].get("Pid") or 0)
            except Exception:  # noqa: BLE001 - gone
                return
            if pid > 0:
                self.ports_seen = tcp_listening_ports(pid) or self.ports_seen

    def server_exit(self) -> str | None:
        assert self.limits is not None
        state = self.api.inspect_container(self.server_id)["State"]
        return None if state.get("Running") else _server_exit(state, self.limits)

    def teardown(self) -> None:
        self.stop_ports.set()
        _teardown(self.api, self.created, self.net["Id"] if self.net else None)
        if self.server_pump is not None:
            self.server_pump.join(2)
        if self.stage is not None:
            self.stage.remove()


def _teardown(api: Any, containers: list[str], net_id: str | None) -> None:
    """Remove the run's containers (in parallel), then its network; errors are ignored, leftovers are
    caught by the next start's `remove_resources`."""
    def remove(cid: str) -> None:
        try:
            api.remove_container(cid, force=True, v=True)
        except Exception:  # noqa: BLE001
            pass

    threads = [threading.Thread(target=remove, args=(cid,), daemon=True) for cid in containers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    if net_id:
        for _ in range(3):
            try:
                api.remove_network(net_id)
                break
            except Exception:  # noqa: BLE001
                time.sleep(0.2)
