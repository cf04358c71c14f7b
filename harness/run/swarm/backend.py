"""The Swarm backend of `execute_run`: a run as two services on a Docker Swarm (`--backend swarm`).

The harness talks to a swarm manager (DOCKER_HOST). Per run: an internal overlay network (only the harness
attaches to it: its services and, for a warm network made ahead by `swarm.spares`, an inert placeholder), the
server service pinned to the data node (`swarm.services`), whose output says when it listens, and
the participant service; its task's exit code is the run's. When the participant's image has python3 its service
is created with the server's and its command waits behind the start gate (`gate`), so that placing and starting
it on a worker overlaps the server's start; its own code still starts only once the server listens and is alone
on the network. Images reach other nodes through the organizer's
registry (`--registry HOST:PORT`, pushed once per image, services pinned by digest: `swarm.registry`); a single-node
swarm needs none. Where the nodes have no internet, images are built on a build engine and moved to the manager
before they get here (`--build-engine`, `swarm.build_engine`: batch.scheduler, images.move). A fetch volume made
on another engine or for a swarm of several nodes is filled on the participant's node before the run, and the
participant pinned there (`fetch_fill`).

Faults: a task the swarm rejects, fails to start or loses (node down, no node with the resources asked) is an
`InfraError` (the run is retried once); a task that waits for resources longer than the start-up budget ends the
run with the swarm's own reason. Teardown removes the services, then the network; labelled services of a killed
harness are removed at the next start (`network.remove_resources`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness import layout
from harness.config import Limits
from harness.protocol import LISTENING_LINE
from harness.run import failures, network
from harness.run.context_mounts import ContextStage, run_prepare
from harness.run.deadlines import under_timeout, under_watchdog
from harness.run.docker_backend import SERVER_LOG_MAX_BYTES, SERVER_PORT, docker_api, poll_exit, wait_exit
from harness.run.gate import gated, image_python
from harness.run.sandbox import (
    SandboxPolicy,
    applied_isolation,
    give_run_folder_to_server,
    participant_user,
    server_user,
)
from harness.run.spec import RunResult, RunSpec, participant_argv, server_command
from harness.run.swarm.gpus import POOL, GpuGrant, advertised_gpus
from harness.run.swarm.registry import pinned_image
from harness.run.swarm.services import SWARM_GAPS, off_data_constraint, participant_service, server_service
from harness.run.swarm.settle import remove_network
from harness.run.swarm.spares import SPARES, Spare
from harness.run.tail import log_tail
from harness.run.watch import SERVER_READY_TIMEOUT_S, LogPump, ServerOutput

#: task states after which a task never runs again
ENDED = frozenset({"complete", "failed", "shutdown", "rejected", "orphaned", "remove"})
#: how long a task may wait for a node (pending: no node with the resources or the label asked)
PLACEMENT_TIMEOUT_S = 120.0
#: how often a task that is about to start is asked for (its start is on every run's critical path): every POLL_S at
#: first, then each wait POLL_GROWTH times the last, up to POLL_MAX_S. Each question lists the service's tasks on the
#: manager (about 3 ms of CPU there and here); a task placed at once starts within a poll of 20-40 ms, while one that
#: waits seconds for its image to be pulled on a worker is asked 10 times a second instead of 50.
POLL_S = 0.02
POLL_GROWTH = 1.25
POLL_MAX_S = 0.1


def swarm_manager(api: Any) -> dict[str, Any]:
    """This engine's swarm state; an InfraError with the fix when it is not an active manager."""
    state = (api.info().get("Swarm") or {})
    if state.get("LocalNodeState") != "active" or not state.get("ControlAvailable"):
        raise failures.InfraError("--backend swarm: this Docker engine is not a swarm manager "
                                  "(run `docker swarm init`, or point DOCKER_HOST at a manager)")
    return state


def _create_service(api: Any, spec: dict[str, Any]) -> str:
    return str(api._result(api._post_json(api._url("/services/create"), data=spec), True)["ID"])


def _task(api: Any, service_id: str) -> dict[str, Any] | None:
    """The newest task of a one-replica service (None before the scheduler made one; a `remove` state once the
    service itself is gone)."""
    import docker

    try:
        tasks = api.tasks(filters={"service": service_id})
    except docker.errors.NotFound:
        return {"Status": {"State": "remove", "Err": "its service was removed"}}
    return max(tasks, key=lambda t: t.get("CreatedAt", "")) if tasks else None


def _task_reason(task: dict[str, Any]) -> str:
    st = task.get("Status") or {}
    return (st.get("Err") or st.get("Message") or st.get("State") or "unknown").splitlines()[0]


def wait_task_running(api: Any, service_id: str, what: str, budget_s: float) -> dict[str, Any]:
    """Wait until the service's task runs (or already ended: a quick exit); an InfraError naming the swarm's reason
    if it is rejected, or still unplaced after `budget_s`."""
    deadline = time.monotonic() + budget_s
    task: dict[str, Any] | None = None
    pause = POLL_S
    while time.monotonic() < deadline:
        task = _task(api, service_id)
        state = ((task or {}).get("Status") or {}).get("State")
        if state == "running" or state == "complete":
            return task or {}
        if state in ("failed", "rejected", "orphaned", "shutdown", "remove"):
            if state == "failed" and ((task or {}).get("Status") or {}).get("ContainerStatus", {}).get("ContainerID"):
                return task or {}  # it ran and exited: the exit code is the participant's
            raise failures.InfraError(f"swarm {what} task {state}: {_task_reason(task or {})}")
        time.sleep(pause)
        pause = min(pause * POLL_GROWTH, POLL_MAX_S)
    reason = _task_reason(task) if task else "no task scheduled"
    raise failures.InfraError(f"swarm {what} task not started after {budget_s:.0f} s: {reason}")


class _Task:
    """The participant's task as the watchdog sees it: its exit code once it ended; kill = stop the service."""

    def __init__(self, api: Any, service_id: str, ended: threading.Event) -> None:
        self.api, self.service_id, self.ended = api, service_id, ended
        self.final: dict[str, Any] | None = None
        self.killed = False

    def wait(self, seconds: float) -> int | None:
        """The exit code if the task ends within `seconds`, else None: asked as often as a container is (poll_exit;
        each question lists the service's tasks on the manager)."""
        return poll_exit(self._exit_code, seconds)

    def _exit_code(self) -> int | None:
        """The participant's exit code if its task has ended, else None (asked once); InfraError if it was lost."""
        task = _task(self.api, self.service_id)
        st = (task or {}).get("Status") or {}
        if st.get("State") in ENDED:
            self.final = task
            self.ended.set()
            if st.get("State") in ("complete", "failed") and "ContainerStatus" in st:
                return int(st["ContainerStatus"].get("ExitCode") or 0)
            if self.killed:  # we ended it (a timeout): removed with its service, as by SIGKILL
                return 137
            raise failures.InfraError(f"swarm participant task {st.get('State')}: {_task_reason(task or {})}")
        if (task or {}).get("DesiredState") in ("shutdown", "remove") and not self.killed:  # its node is lost
            self.final = task
            node = _hostname(self.api, (task or {}).get("NodeID"))
            raise failures.InfraError(f"swarm participant task lost on node {node}: {_node_state(self.api, task)}")
        return None

    def kill(self) -> None:
        self.killed = True
        task = _task(self.api, self.service_id)
        cid = (((task or {}).get("Status") or {}).get("ContainerStatus") or {}).get("ContainerID")
        try:
            if cid:
                self.api.kill(cid)
            else:
                self.api.remove_service(self.service_id)
        except Exception:  # noqa: BLE001 - it ended meanwhile, or lives on another node (removed at teardown)
            try:
                self.api.remove_service(self.service_id)
            except Exception:  # noqa: BLE001
                pass


class SwarmBackend:
    """One run as swarm services on a per-run internal overlay network; see the module docstring."""

    def __init__(self, registry: str | None = None, data_label: str | None = None,
                 placement_timeout_s: float = PLACEMENT_TIMEOUT_S) -> None:
        self.placement_timeout_s = placement_timeout_s
        self.api: Any = docker_api()
        self.state = swarm_manager(self.api)
        self.registry, self.data_label = registry, data_label
        self.services: list[str] = []
        self.net: dict[str, Any] | None = None
        self.server_service = ""
        self.server_cid = ""
        self.part_spec: dict[str, Any] | None = None
        self.part_service = ""
        self.part_task: _Task | None = None
        self.part_cid = ""
        self.server_pump: LogPump | None = None
        self.client_pump: LogPump | None = None
        self.limits: Limits | None = None
        self.images: dict[str, str] = {}
        self.ready: threading.Thread | None = None
        self.healthy = False
        self.probe_error: BaseException | None = None
        self.server_log: Any = None
        self.grant: GpuGrant | None = None
        self.spare: Spare | None = None
        self.gate_python: str | None = None  # the participant starts early behind the gate (its image's python3)
        self.gate_file: Path | None = None
        self.part_ended = threading.Event()
        self.stage: ContextStage | None = None
        self.fetch_node: str | None = None  # the node the fetch volume was filled on: the participant's
        self.fetch_fill: dict[str, Any] | None = None

    def prepare(self, spec: RunSpec, run_dir: layout.RunDir, timings: dict[str, float]) -> None:
        """Stage the context and run `prepare:` on this node (see run/context_mounts.py): a single-node swarm
        only, where the participant's service runs beside the staging folder. The fetch volume is filled on the
        participant's node when it is not this engine's (`fetch_fill`), and the participant pinned there."""
        self.stage = stage = ContextStage(spec)
        if not stage.needed:
            return
        several = int(self.state.get("Nodes") or 1) > 1
        if several and (spec.dataset.context is not None or spec.prepare):
            raise failures.InfraError("extra context and prepare: need a single-node swarm (the staging folder is "
                                      "on the manager); run this track with backend: local")
        if spec.fetch_volume and spec.fetch_image:
            self._fill_fetch_volume(spec, several, timings)
        if not (spec.dataset.context is not None or spec.prepare):
            return
        user = participant_user(spec.image_user if spec.image_user is not None
                                else self.api.inspect_image(spec.submission_image)["Config"].get("User"))
        stage.stage(user)
        if spec.prepare:
            run_prepare(self.api, spec, stage, user, run_dir, timings, wait_exit)

    def _fill_fetch_volume(self, spec: RunSpec, several: bool, timings: dict[str, float]) -> None:
        """The fetch volume on the node the participant will run on (its GPUs' node, else where Swarm puts the
        fill under the participant's constraints); that node is then the participant's."""
        from harness.run.swarm.fetch_fill import fill_on_node

        assert spec.fetch_volume and spec.fetch_image
        policy = SandboxPolicy.from_limits(spec.config.limits)
        if policy.gpus and self.grant is None:
            self.grant = POOL.acquire(self.api, len(policy.gpus),
                                      lambda n: several and is_data_node(n, self.data_label), self.placement_timeout_s)
        constraints = [off_data_constraint(self.data_label)] if several else []
        if self.grant is not None:
            constraints.append(f"node.id == {self.grant.node_id}")
        image = pinned_image(self.api, spec.fetch_image, self.registry)
        fill = fill_on_node(self.api, image=image, volume=spec.fetch_volume, run_id=spec.run_id,
                            constraints=constraints, create_service=_create_service,
                            budget_s=self.placement_timeout_s + spec.config.limits.fetch_timeout_s)
        self.fetch_node = fill.node_id
        self.fetch_fill = {"node": _hostname(self.api, fill.node_id), "filled": fill.filled, "image": image}
        timings["fetch_fill_s"] = fill.seconds

    def _local_node(self) -> str:
        return str(self.state.get("NodeID") or "")

    def start_server(self, spec: RunSpec, run_dir: layout.RunDir, timings: dict[str, float]) -> None:
        t0 = time.monotonic()
        api = self.api
        self.limits = spec.config.limits
        name = f"harness-{spec.run_id}"
        if not spec.driven:  # an agent server is polled by the driver: it needs no gate
            try:
                self.gate_python = image_python(api, spec.submission_image)
            except Exception:  # noqa: BLE001 - no gate: the participant starts once the server is healthy
                self.gate_python = None
        self.spare = SPARES.take()  # a warm network made while the previous run worked
        if self.spare is not None:
            self.net = self.spare.net
        else:
            created = api.create_network(f"{name}-net", driver="overlay", internal=True, attachable=False,
                                         labels=network.labels(spec.run_id, "network"), check_duplicate=True)
            self.net = api.inspect_network(created["Id"])
        timings["network_s"] = time.monotonic() - t0
        give_run_folder_to_server(spec.out_dir)
        image = pinned_image(api, spec.server_image, self.registry)
        self.images["server"] = image
        if self.gate_python:
            self.gate_file = run_dir.start_gate
            self.gate_file.unlink(missing_ok=True)  # a gate left open by an earlier attempt
        argv = server_command(spec, SERVER_PORT, "0.0.0.0") + (["--gate-file", str(self.gate_file)] if self.gate_file
                                                                else [])
        svc = server_service(
            name=f"{name}-server", image=image, argv=under_timeout(argv, spec.config.limits),
            user=server_user(), labels=network.labels(spec.run_id, "server"), network_id=self.net["Id"],
            alias=network.SERVER_ALIAS, limits=spec.config.limits, config=spec.config, out_dir=str(spec.out_dir),
            data_label=self.data_label)
        self.server_log = run_dir.server_log
        self.server_service = _create_service(api, svc)
        self.services.append(self.server_service)
        # placement, then the server's "listening" line, while the participant is prepared
        self.ready = threading.Thread(target=self._probe_server, daemon=True)
        self.ready.start()

    def _probe_server(self) -> None:
        """Wait for the server's task, start its log pump, wait for its output to say it listens; what went wrong
        is kept for `wait_server_ready`."""
        api = self.api
        try:
            task = wait_task_running(api, self.server_service, "server", self.placement_timeout_s)
            if task.get("NodeID") != self._local_node():
                raise failures.InfraError(f"swarm server task runs on node {task.get('NodeID')}, not on this "
                                          "manager; run the harness on the data node")
            self.server_cid = cid = task["Status"]["ContainerStatus"]["ContainerID"]
            gone = None
            if self.spare is not None:  # the server holds the network now: the placeholder goes before the participant
                gone = threading.Thread(target=SPARES.placeholder_done, args=(api, self.spare), daemon=True)
                gone.start()
            self.server_pump = LogPump(lambda: api.logs(cid, stdout=True, stderr=True, stream=True, follow=True),
                                       self.server_log, SERVER_LOG_MAX_BYTES, watch_for=LISTENING_LINE)
            self.server_pump.start()
            self.healthy = self.server_pump.wait_for_line(SERVER_READY_TIMEOUT_S)
            if gone is not None:
                gone.join(30)
            if self.healthy and self.gate_file is not None:  # healthy and alone on the network: the participant may go
                self._open_gate(self.gate_file)
        except Exception as exc:  # noqa: BLE001 - reported by wait_server_ready
            self.probe_error = exc

    @staticmethod
    def _open_gate(gate_file: Path) -> None:
        """Let the participant waiting at the gate start (the server sees the file through its run-folder mount)."""
        gate_file.touch()

    def prepare_participant(self, spec: RunSpec) -> None:
        api = self.api
        image = pinned_image(api, spec.submission_image, self.registry)
        self.images["participant"] = image
        user = participant_user(spec.image_user if spec.image_user is not None
                                else api.inspect_image(spec.submission_image)["Config"].get("User"))
        policy = SandboxPolicy.from_limits(spec.config.limits)
        host = network.SERVER_ALIAS
        several = int(self.state.get("Nodes") or 1) > 1  # keep participants off the data node when others exist
        stage = self.stage or ContextStage(spec)
        env = {**policy.environment(f"http://{host}:{SERVER_PORT}", host, SERVER_PORT), **stage.environment()}
        if policy.gpus:
            if self.grant is None:  # else taken in prepare, for the fetch volume's node
                self.grant = POOL.acquire(api, len(policy.gpus),
                                          lambda n: several and is_data_node(n, self.data_label),
                                          self.placement_timeout_s)
            env.update(self.grant.environment())
        argv = participant_argv(spec.command)
        if isinstance(spec.command, str):
            argv = under_watchdog(argv, spec.config.limits)
        if self.gate_python:
            argv = gated(self.gate_python, host, SERVER_PORT, self.placement_timeout_s + SERVER_READY_TIMEOUT_S, argv)
        assert self.net is not None
        self.part_spec = participant_service(
            name=f"harness-{spec.run_id}-participant", image=image, argv=argv, user=user,
            labels=network.labels(spec.run_id, "participant"), network_id=self.net["Id"], policy=policy,
            env=env, off_data_node=several, data_label=self.data_label,
            node_id=self.grant.node_id if self.grant else self.fetch_node, binds=stage.binds())
        if self.gate_python:  # placed and started now, while the server starts; it waits at the gate
            self._create_participant()

    def _create_participant(self) -> None:
        assert self.part_spec is not None
        self.part_service = _create_service(self.api, self.part_spec)
        self.services.append(self.part_service)

    def _data_node(self) -> str | None:
        task = _task(self.api, self.server_service)
        return (task or {}).get("NodeID") or None

    def wait_server_ready(self, run_dir: layout.RunDir) -> None:
        assert self.ready is not None
        self.ready.join(self.placement_timeout_s + SERVER_READY_TIMEOUT_S + 10)
        if self.probe_error is not None:
            raise self.probe_error
        if not self.healthy:
            if self.server_pump is not None:
                self.server_pump.join(2)
            raise failures.InfraError(f"server not healthy: {log_tail(run_dir.server_log)}")

    def start_participant(self, spec: RunSpec, run_dir: layout.RunDir) -> _Task:
        if not self.part_service:
            self._create_participant()
        wait_task_running(self.api, self.part_service, "participant", self.placement_timeout_s)
        SPARES.prepare(self.api, spec.server_image)  # the next run's network, made while this one works
        self.client_pump = LogPump(self._participant_logs, run_dir.client_log, spec.config.limits.client_log_max_bytes)
        self.client_pump.start()
        self.part_task = _Task(self.api, self.part_service, self.part_ended)
        return self.part_task

    def _participant_logs(self) -> Iterator[bytes]:
        """The container's own log stream when it runs here (it ends when the container exits), else the swarm's
        service log stream (collected until the task ended)."""
        task = _task(self.api, self.part_service) or {}
        cid = ((task.get("Status") or {}).get("ContainerStatus") or {}).get("ContainerID")
        if cid and task.get("NodeID") == self._local_node():
            self.part_cid = cid
            return iter(self.api.logs(cid, stdout=True, stderr=True, stream=True, follow=True))
        # on another node: the swarm's log stream does not end with the task, so read it whole once the task ended
        while not self.part_ended.wait(0.2):  # set by the watchdog's poll (`_Task.wait`) once it saw the end
            if ((_task(self.api, self.part_service) or {}).get("Status") or {}).get("State") in ENDED:
                break
        return iter(self.api.service_logs(self.part_service, stdout=True, stderr=True, follow=False))

    def server_output(self) -> ServerOutput:
        assert self.server_pump is not None
        return self.server_pump

    def collect(self, result: RunResult, run_dir: layout.RunDir) -> None:
        api = self.api
        assert self.client_pump is not None and self.net is not None and self.part_task is not None
        self.client_pump.join(5)
        task = self.part_task.final or _task(api, self.part_service) or {}
        status = task.get("Status") or {}
        cid = (status.get("ContainerStatus") or {}).get("ContainerID")
        if result.exit_code is None and "ContainerStatus" in status:
            result.exit_code = status["ContainerStatus"].get("ExitCode")
        node = task.get("NodeID")
        placement: dict[str, Any] = {"backend": "swarm", "participant_node": _hostname(api, node),
                                     "server_node": _hostname(api, self._data_node()),
                                     "image": self.images.get("participant"),
                                     "server_image": self.images.get("server"),
                                     "not_applied_by_swarm": SWARM_GAPS}
        if self.grant:
            placement["gpus_assigned"] = list(self.grant.gpus)
        if self.fetch_fill:
            placement["fetch_fill"] = self.fetch_fill
        if cid and node == self._local_node():
            info = api.inspect_container(cid)
            result.oom_killed = bool(info["State"].get("OOMKilled"))
            placement["image_id"] = info.get("Image")
            try:  # read back now: an attachable network inspected right after its creation has no Driver yet
                net = api.inspect_network(self.net["Id"])
            except Exception:  # noqa: BLE001
                net = self.net
            result.isolation = {**applied_isolation(info, net), **placement}
        else:  # the container is on another node: what the swarm reports, from the service spec
            result.isolation = {"read_back": "service spec (container on another node)", **placement}
        result.client_log_truncated = self.client_pump.truncated

    def server_exit(self) -> str | None:
        task = _task(self.api, self.server_service) or {}
        st = task.get("Status") or {}
        if st.get("State") == "running":
            return None
        if self.server_cid:
            try:
                state = self.api.inspect_container(self.server_cid)["State"]
                if state.get("OOMKilled"):
                    assert self.limits is not None
                    return f"ran out of memory (limits.server_memory {self.limits.server_memory})"
                return f"exited with code {state.get('ExitCode')}"
            except Exception:  # noqa: BLE001 - gone with its node
                pass
        return f"swarm task {st.get('State')}: {_task_reason(task)}"

    def teardown(self) -> None:
        def remove_now(cid: str) -> None:
            try:
                self.api.remove_container(cid, force=True, v=True)
            except Exception:  # noqa: BLE001 - already gone
                pass

        # local containers go at once (in parallel), not after the services' grace period
        removals = [threading.Thread(target=remove_now, args=(c,), daemon=True)
                    for c in (self.part_cid, self.server_cid) if c]
        for t in removals:
            t.start()
        for t in removals:
            t.join(30)
        if self.spare is not None:
            SPARES.placeholder_done(self.api, self.spare)
        if self.gate_file is not None:
            self.gate_file.unlink(missing_ok=True)
        self.part_ended.set()
        remove_services(self.api, self.services, self.net["Id"] if self.net else None, settle=False)
        if self.grant:
            POOL.release(self.grant)
            self.grant = None
        for pump in (self.server_pump, self.client_pump):
            if pump is not None:
                pump.join(2)
        if self.stage is not None:
            self.stage.remove()


def _node_state(api: Any, task: dict[str, Any] | None) -> str:
    """What the swarm says of a task's node ("down", "drain", ...)."""
    try:
        node = api.inspect_node((task or {}).get("NodeID"))
    except Exception:  # noqa: BLE001
        return "node unknown"
    avail = (node.get("Spec") or {}).get("Availability")
    state = (node.get("Status") or {}).get("State")
    return f"node {state}" + (f", availability {avail}" if avail != "active" else "")


def _hostname(api: Any, node_id: str | None) -> str | None:
    if not node_id:
        return None
    try:
        return str(api.inspect_node(node_id)["Description"]["Hostname"])
    except Exception:  # noqa: BLE001
        return node_id


def remove_services(api: Any, services: list[str], net_id: str | None, budget_s: float = 30.0,
                    settle: bool = True) -> None:
    """Remove a run's services, wait (bounded) until this node holds none of their containers, then remove the
    network and wait until the engine dropped its local copy (`settle=False`: `swarm.settle` waits for that in the
    background); errors are ignored, leftovers are caught by the next start's `remove_resources`."""
    for sid in services:
        try:
            api.remove_service(sid)
        except Exception:  # noqa: BLE001
            pass
    deadline = time.monotonic() + budget_s
    for sid in services:  # the node's agent removes each task's container after the service is gone
        of_service = {"label": f"com.docker.swarm.service.id={sid}"}
        while time.monotonic() < deadline and api.containers(all=True, filters=of_service):
            time.sleep(0.1)
    if net_id:
        remove_network(api, net_id, max(0.0, deadline - time.monotonic()), settle)


def is_data_node(node: dict[str, Any], data_label: str | None) -> bool:
    """Whether a node (`docker node inspect`) is the data node: the labelled one, else a manager."""
    spec = node.get("Spec") or {}
    if not data_label:
        return spec.get("Role") == "manager"
    key, _, value = data_label.partition("=")
    return (spec.get("Labels") or {}).get(key) == (value or "true")


def check_data_node(api: Any, data_label: str | None) -> str:
    """The hostname of the data node (`swarm.data_label`, default the manager); an InfraError if no node has it."""
    for node in api.nodes():
        if is_data_node(node, data_label):
            return str(node["Description"]["Hostname"])
    key, _, value = (data_label or "").partition("=")
    raise failures.InfraError(f"swarm.data_label: no node has the label {key}={value or 'true'} "
                              f"(set it with `docker node update --label-add {key}={value or 'true'} NODE`)")


def check_gpus(api: Any, count: int) -> None:
    """An InfraError when no node advertises `count` GPUs (a request the swarm could never place)."""
    largest = max((len(advertised_gpus(n)) for n in api.nodes()), default=0)
    if largest < count:
        raise failures.InfraError(f"limits.gpus asks for {count} GPU(s) per run, but no swarm node advertises more "
                                  f"than {largest} (node-generic-resources in each worker's daemon.json)")
