"""One run = one submission × one dataset, in isolation.

Steps, each timed: a fresh internal network; the server container (harness image; the only container with the
hidden data, read-only, and the output folder) started and probed on GET /health until it answers; the
participant container started under the sandbox policy with the server URL in its environment; its output
streamed to client.log (size-capped) while the harness watches the total and idle timeouts; then exit code and
out-of-memory flag read back, the isolation flags read back from `docker inspect`, and everything removed — in a
`finally`, so also on Ctrl-C, SIGTERM and errors. A harness killed with SIGKILL leaves labelled resources that
`network.remove_resources` deletes at the next start.

The server container is confined too (it is harness code, but every byte it holds comes from the participant):
its own memory and pids limits (`limits.server_memory`, `limits.server_pids`), an unprivileged user
(`SERVER_UID` when the harness runs as root, which owns the run folder for it), no capabilities, no new
privileges, a read-only root, and write access to its run's folder only (the data is mounted read-only).

Both containers enforce their own deadline, so nothing outlives its budget when the harness is gone (SIGKILL,
power loss of the host's harness process): the server runs under coreutils `timeout` (the harness image has it)
and ends `server_deadline_s` after it starts; the participant's command runs under a POSIX-shell watchdog that
SIGKILLs it `participant_deadline_s` after it starts (`timeout` cannot be assumed in a submission image, a
shell can: string commands run under /bin/sh anyway). An argv command in an image without /bin/sh runs
unwrapped: it loses its server at the server's deadline and is removed at the next start. The network, which
runs nothing, stays until the next start removes it.

If the server dies while the participant runs (out of memory under its limit, a crash), that is the
participant's `protocol_violation`, not an `infra_error`: only the participant's traffic reaches the server, and
a retry would only repeat the damage.
"""

from __future__ import annotations

import math
import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import layout
from harness.config import TaskConfig
from harness.orchestrator import failures, images, network
from harness.orchestrator.sandbox import SandboxPolicy, applied_isolation, parse_bytes, participant_user
from harness.runlog import read_statuses

SERVER_PORT = 8000
SERVER_READY_TIMEOUT_S = 60.0
SERVER_LOG_MAX_BYTES = 5_000_000
POLL_S = 0.25
#: Seconds a container may outlive the harness's own deadline for it before it ends itself.
DEADLINE_GRACE_S = 10.0
#: The server's user when the harness runs as root: unprivileged and not the base image's participant (10001).
SERVER_UID = 10002
SERVER_TMPFS = "rw,nosuid,nodev,size=64m"
#: The participant's watchdog: `sh -c WATCHDOG harness-deadline SECONDS ARGV...` runs ARGV and SIGKILLs it after
#: SECONDS; the container ends with the shell (its PID 1), which exits with ARGV's status (137 when killed).
WATCHDOG = 'd=$1; shift; "$@" & c=$!; (sleep "$d"; kill -KILL "$c") >/dev/null 2>&1 & wait "$c"'
_PROBE = (
    "import sys,time,urllib.request\n"
    "end=time.monotonic()+{timeout}\n"
    "while time.monotonic()<end:\n"
    "  try:\n"
    "    urllib.request.urlopen('http://127.0.0.1:{port}/health',timeout=2).read(); sys.exit(0)\n"
    "  except Exception: time.sleep(0.05)\n"
    "sys.exit(1)\n"
)


class RunInterrupted(Exception):
    """The harness was asked to stop (Ctrl-C / SIGTERM) while a run was in flight."""


@dataclass
class RunSpec:
    """What one run needs. `command` is the submission's command (a shell string or an argv list)."""

    submission_image: str
    command: str | list[str]
    config: TaskConfig
    track: str
    dataset: str
    out_dir: Path
    server_image: str = field(default_factory=lambda: images.DEFAULT_TAG)
    image_user: str | None = None
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    collect_peak_memory: bool = False
    resume_log: bool = False  # continue an interrupted run's instances.log instead of starting it afresh


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
    first_instance_s: float | None = None  # participant start → first instance logged
    window: tuple[float, float] | None = None  # wall-clock (epoch) start and end of the whole run


def count_instances(config: TaskConfig, track: str, dataset: str) -> int:
    """Number of instances of a dataset: non-empty lines of the source (text) or of the audio list (speech)."""
    ds = config.track(track).dataset(dataset)
    with open(ds.source, encoding="utf-8") as f:
        return sum(1 for line in f if line.strip())


def data_paths(config: TaskConfig) -> list[Path]:
    """Files and folders the server needs, to be mounted read-only at their own absolute paths."""
    paths: set[Path] = {config.path}
    for track in config.tracks:
        for ds in track.datasets.values():
            files = [ds.source, *ds.references.values()]
            paths.update(p for p in files if p.exists())
            if track.modality == "speech" and ds.source.is_file():
                for line in ds.source.read_text(encoding="utf-8").splitlines():
                    if line.strip():
                        audio = (ds.source.parent / line.strip()).resolve()
                        paths.add(audio.parent)
    dirs = sorted(p for p in paths if p.is_dir())
    keep = [d for d in dirs if not any(d != o and o in d.parents for o in dirs)]
    return keep + sorted(p for p in paths if p.is_file() and not any(d in p.parents for d in keep))


def participant_deadline_s(limits: Any) -> float:
    """Seconds after its start at which the participant container kills its own command."""
    return limits.total_timeout_s + DEADLINE_GRACE_S


def server_deadline_s(limits: Any) -> float:
    """Seconds after its start at which the server container ends itself: the participant starts at most the
    health-probe wait after the server, and the harness collects its results within the grace after that."""
    return SERVER_READY_TIMEOUT_S + DEADLINE_GRACE_S + participant_deadline_s(limits) + DEADLINE_GRACE_S


def server_user() -> str:
    """The server container's user: `SERVER_UID` when the harness is root, else the harness's own (non-root) uid."""
    if os.getuid() == 0:
        return f"{SERVER_UID}:{SERVER_UID}"
    return f"{os.getuid()}:{os.getgid()}"


def _give_run_folder_to_server(run_dir: Path) -> None:
    """Let the server's user write the run folder (and a resumed instances.log): chown when the harness is root."""
    if os.getuid() != 0:
        return
    for root, dirs, files in os.walk(run_dir):
        for name in [*dirs, *files]:
            os.chown(os.path.join(root, name), SERVER_UID, SERVER_UID, follow_symlinks=False)
    os.chown(run_dir, SERVER_UID, SERVER_UID)


def server_host_config(api: Any, spec: RunSpec, network_name: str) -> Any:
    """The server container's confinement: own memory/pids limits, no capabilities, read-only root, the data
    read-only and only the run folder writable."""
    from docker.types import LogConfig

    limits = spec.config.limits
    memory = parse_bytes(limits.server_memory)
    mounts = [f"{p}:{p}:ro" for p in data_paths(spec.config)] + [f"{spec.out_dir}:{spec.out_dir}:rw"]
    return api.create_host_config(
        binds=mounts, network_mode=network_name, init=True, mem_limit=memory, memswap_limit=memory,
        pids_limit=int(limits.server_pids), cap_drop=["ALL"], security_opt=["no-new-privileges:true"],
        read_only=True, tmpfs={"/tmp": SERVER_TMPFS}, privileged=False,
        log_config=LogConfig(type="json-file", config={"max-size": "20m", "max-file": "1"}))


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


def server_command(spec: RunSpec) -> list[str]:
    """The evaluation server's command inside the harness image, ending itself at `server_deadline_s`."""
    deadline = math.ceil(server_deadline_s(spec.config.limits))
    return ["timeout", "-k", "5", str(deadline),
            "harness", "server", "--config", str(spec.config.path), "--track", spec.track, "--dataset", spec.dataset,
            "--port", str(SERVER_PORT), "--output", str(spec.out_dir), "--host", "0.0.0.0",
            "--resume" if spec.resume_log else "--overwrite"]


class _LogPump(threading.Thread):
    """Copies a container's stdout+stderr into a file, up to `max_bytes`, then notes the cut and stops reading."""

    def __init__(self, api: Any, container: str, path: Path, max_bytes: int) -> None:
        super().__init__(daemon=True)
        self.api, self.container, self.path, self.max_bytes = api, container, path, max_bytes
        self.truncated = False
        self.ended = False  # the container's output ended: it exited (not set when the log was truncated)
        self.last_activity = time.monotonic()
        self.first_output: float | None = None

    def run(self) -> None:
        written = 0
        try:
            stream = self.api.logs(self.container, stdout=True, stderr=True, stream=True, follow=True)
            with open(self.path, "wb") as f:
                for chunk in stream:
                    self.last_activity = time.monotonic()
                    if self.first_output is None:
                        self.first_output = self.last_activity
                    room = self.max_bytes - written
                    f.write(chunk[:room])
                    written += min(len(chunk), room)
                    if len(chunk) > room:
                        self.truncated = True
                        f.write(f"\n[harness: log truncated at {self.max_bytes} bytes]\n".encode())
                        f.flush()
                        stream.close()
                        return
                    f.flush()
        except Exception:  # noqa: BLE001 - the container went away; what was written stays
            pass
        self.ended = True


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


def _wait_exit(api: Any, cid: str, seconds: float) -> int | None:
    """The exit code if the container stops within `seconds`, else None."""
    import requests

    try:
        return int(api.wait(cid, timeout=seconds)["StatusCode"])
    except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
        return None


def _quietly(fn: Callable[..., Any], *args: Any) -> None:
    """Call `fn` in a helper thread; its failure shows up in what the caller inspects afterwards."""
    try:
        fn(*args)
    except Exception:  # noqa: BLE001
        pass


def _tail(path: Path, n: int = 300) -> str:
    try:
        return " ".join(path.read_text(encoding="utf-8", errors="replace")[-n:].split())
    except OSError:
        return ""


def execute_run(spec: RunSpec, stop: threading.Event | None = None,
                on_progress: Callable[[int, int], None] | None = None) -> RunResult:
    """Run one submission on one dataset in isolation and classify the outcome; never leaves resources behind.

    Raises `RunInterrupted` when `stop` is set (after tearing everything down). Docker faults become an
    `infra_error` outcome.
    """
    stop = stop or threading.Event()
    spec.out_dir.mkdir(parents=True, exist_ok=True)
    expected = count_instances(spec.config, spec.track, spec.dataset)
    run_dir = layout.RunDir(spec.out_dir)
    log_path = run_dir.instances_log
    limits = spec.config.limits
    policy = SandboxPolicy.from_limits(limits)
    api = docker_api()
    name = f"harness-{spec.run_id}"
    created: list[str] = []
    net_id: str | None = None
    result = RunResult(outcome=failures.Outcome(failures.INFRA_ERROR, "not started"), instances_expected=expected)
    t0 = time.monotonic()
    wall0 = time.time()
    timings = result.timings
    server_pump: _LogPump | None = None
    try:
        net = network.create_network(api, f"{name}-net", spec.run_id)
        net_id = net["Id"]
        timings["network_s"] = time.monotonic() - t0

        _give_run_folder_to_server(spec.out_dir)
        server = api.create_container(
            spec.server_image,
            command=server_command(spec),
            name=f"{name}-server",
            user=server_user(),
            environment={"HOME": "/tmp", "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"},
            labels=network.labels(spec.run_id, "server"),
            host_config=server_host_config(api, spec, net["Name"]),
            networking_config=api.create_networking_config(
                {net["Name"]: api.create_endpoint_config(aliases=[network.SERVER_ALIAS])}),
        )
        created.append(server["Id"])
        api.start(server["Id"])
        server_pump = _LogPump(api, server["Id"], run_dir.server_log, SERVER_LOG_MAX_BYTES)
        server_pump.start()
        probe = api.exec_create(server["Id"], ["python3", "-c", _PROBE.format(port=SERVER_PORT,
                                                                              timeout=SERVER_READY_TIMEOUT_S)])
        # the health probe runs while the participant container is being created
        probe_thread = threading.Thread(target=_quietly, args=(api.exec_start, probe["Id"]), daemon=True)
        probe_thread.start()

        image = api.inspect_image(spec.submission_image)
        user = participant_user(spec.image_user if spec.image_user is not None else image["Config"].get("User"))
        host = network.SERVER_ALIAS
        url = f"http://{host}:{SERVER_PORT}"
        argv = ["/bin/sh", "-c", spec.command] if isinstance(spec.command, str) else list(spec.command)
        watchdog = ["/bin/sh", "-c", WATCHDOG, "harness-deadline", str(math.ceil(participant_deadline_s(limits)))]

        def create_participant(args: list[str]) -> str:
            cid = api.create_container(
                spec.submission_image,
                entrypoint=args[:1],
                command=args[1:],
                name=f"{name}-participant",
                user=user,
                environment=policy.environment(url, host, SERVER_PORT),
                labels=network.labels(spec.run_id, "participant"),
                host_config=api.create_host_config(**policy.host_config_args(net["Name"])),
            )["Id"]
            created.append(cid)
            return cid

        part = {"Id": create_participant(watchdog + argv)}
        if not isinstance(spec.command, str) and not _has_shell(api, part["Id"]):
            api.remove_container(part["Id"], force=True)
            created.remove(part["Id"])
            part = {"Id": create_participant(argv)}
        probe_thread.join(SERVER_READY_TIMEOUT_S + 10)
        if api.exec_inspect(probe["Id"]).get("ExitCode") != 0:
            server_pump.join(2)
            raise failures.InfraError(f"server not healthy: {_tail(run_dir.server_log)}")
        timings["server_ready_s"] = time.monotonic() - t0
        client_pump = _LogPump(api, part["Id"], run_dir.client_log, limits.client_log_max_bytes)
        api.start(part["Id"])
        t_run = time.monotonic()
        timings["startup_s"] = t_run - t0
        client_pump.start()
        mem = _PeakMemory(api, part["Id"]) if spec.collect_peak_memory else None
        if mem:
            mem.start()

        exit_code, timed_out, result.first_instance_s = _watch(
            api, part["Id"], log_path, limits, stop, t_run, expected, on_progress, server_pump)
        timings["run_s"] = time.monotonic() - t_run
        client_pump.join(5)
        info = api.inspect_container(part["Id"])
        result.exit_code = exit_code if exit_code is not None else info["State"].get("ExitCode")
        result.oom_killed = bool(info["State"].get("OOMKilled"))
        result.timed_out = timed_out
        result.isolation = applied_isolation(info, api.inspect_network(net_id))
        result.client_log_truncated = client_pump.truncated
        if mem:
            mem.done.set()
            mem.join(2)
            result.peak_memory_bytes = mem.peak
        server_state = api.inspect_container(server["Id"])["State"]
        statuses = read_statuses(log_path)
        result.instances_done = len(statuses)
        timings["collect_s"] = time.monotonic() - t_run - timings["run_s"]
        if not server_state.get("Running"):
            result.outcome = server_died(server_state, spec.config.limits, len(statuses), expected,
                                         _tail(run_dir.server_log))
            return result
        result.outcome = failures.classify_run(
            exit_code=result.exit_code, oom_killed=result.oom_killed, timed_out=timed_out,
            instance_statuses=statuses.values(), expected=expected)
        return result
    except RunInterrupted:
        raise
    except failures.InfraError as exc:
        result.outcome = failures.Outcome(failures.INFRA_ERROR, str(exc), log_path.exists())
        return result
    except Exception as exc:  # noqa: BLE001 - Docker API faults
        result.outcome = failures.Outcome(failures.INFRA_ERROR, f"{type(exc).__name__}: {exc}".splitlines()[0],
                                          log_path.exists())
        return result
    finally:
        t_down = time.monotonic()
        _teardown(api, created, net_id)
        if server_pump is not None:
            server_pump.join(2)
        timings["teardown_s"] = time.monotonic() - t_down
        timings["total_s"] = time.monotonic() - t0
        result.window = (wall0, time.time())
        result.instances_done = len(read_statuses(log_path))


def _watch(api: Any, cid: str, log_path: Path, limits: Any, stop: threading.Event, t_run: float, expected: int,
           on_progress: Callable[[int, int], None] | None,
           server_pump: _LogPump) -> tuple[int | None, str | None, float | None]:
    """Wait for the participant to exit, enforcing the total and idle timeouts.

    Returns (exit code, which timeout fired or None, seconds until the first instance was logged or None).
    """
    last_size = -1
    last_progress = time.monotonic()
    # The server ends an instance after instance_timeout_s, or idle_timeout_s without a request, and logs it; so a
    # working client finishes an instance at least every instance_timeout_s + idle_timeout_s.
    idle_limit = limits.instance_timeout_s + limits.idle_timeout_s
    first_seen: float | None = None
    while True:
        code = _wait_exit(api, cid, POLL_S)
        if code is not None:
            return code, None, first_seen
        if stop.is_set():
            raise RunInterrupted()
        now = time.monotonic()
        size = log_path.stat().st_size if log_path.exists() else 0
        if size and first_seen is None:
            first_seen = now - t_run
        if size != last_size:
            last_size, last_progress = size, now
            if on_progress:
                on_progress(len(read_statuses(log_path)), expected)
        activity = max(last_progress, server_pump.last_activity)
        timed_out = None
        if server_pump.ended:  # the server is gone: nothing the participant does from now on counts
            _quietly(api.kill, cid)
            return _wait_exit(api, cid, 10), None, first_seen
        if now - t_run > limits.total_timeout_s:
            timed_out = f"total timeout ({limits.total_timeout_s:g} s)"
        elif now - activity > idle_limit:
            timed_out = f"idle timeout (no instance finished for {idle_limit:g} s)"
        if timed_out:
            try:
                api.kill(cid)
            except Exception:  # noqa: BLE001 - exited meanwhile
                pass
            return _wait_exit(api, cid, 10), timed_out, first_seen


def server_died(state: dict[str, Any], limits: Any, done: int, expected: int, log_tail: str) -> failures.Outcome:
    """The participant's failure when the server died while the participant ran (see the module docstring)."""
    if state.get("OOMKilled"):
        why = f"ran out of memory (limits.server_memory {limits.server_memory})"
    else:
        why = f"exited with code {state.get('ExitCode')}"
    reason = f"the evaluation server {why} while this participant ran, after {done}/{expected} instances"
    return failures.Outcome(failures.PROTOCOL_VIOLATION, f"{reason}: {log_tail}" if log_tail else reason, True)


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
