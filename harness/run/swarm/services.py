"""A run as Docker Swarm services: the one place that turns a `RunSpec` into service specs (Engine API shape).

Two services per run, each one replica that is never restarted, on the run's internal overlay network with DNS
round-robin endpoints (`dnsrr`: this needs no IPVS in the kernel). The server is pinned to the data node (the node
label the organizer names, default the manager) and joins under the alias `server`; the participant goes to any
other node with room, pinned to the node of its GPUs when the task config asks for GPUs (`swarm.gpus`).

What Swarm cannot apply (Engine API 1.41, Docker 20.10 as Debian ships it) and what stands in for it is listed in
`SWARM_GAPS`; the manifest records the flags read back from the container that ran, never the request.
"""

from __future__ import annotations

from typing import Any

from harness.config import Limits
from harness.run.sandbox import SERVER_LOG_MAX_SIZE, SandboxPolicy, data_paths
from harness.sizes import parse_bytes

SERVER_TMPFS_BYTES = 64 * 2**20
PARTICIPANT_TMPFS_BYTES = 128 * 2**20
STOP_GRACE_NS = 1_000_000_000

#: Flags of the local backend that a Swarm service cannot carry, and what replaces each.
SWARM_GAPS = {
    "no-new-privileges": "not settable on services before Engine API 1.44; every capability is dropped "
                         "(bounding set empty), so a setuid binary gains none; set `\"no-new-privileges\": true` in "
                         "each node's daemon.json to have it on every container",
    "memory-swap": "services set no swap limit (the engine allows 2x the memory limit); run nodes without swap or "
                   "with vm.swappiness=0",
    "tmpfs exec": "service tmpfs mounts are noexec (the local backend allows exec on /tmp for JIT compilers)",
    "shm-size": "replaced by a tmpfs mount on /dev/shm of limits.shm_size",
    "ipc": "the engine's default IPC mode (private) applies",
    "gpus": "device requests are replaced by GPUs the nodes advertise as `gpu` generic resources, handed out by "
            "the harness (DOCKER_RESOURCE_GPU and NVIDIA_VISIBLE_DEVICES name them; Swarm's own reservation fails "
            "with overlay networks on Engine 20.10-24, moby/moby#44378)",
}


def data_constraint(data_label: str | None) -> str:
    """The placement constraint of the node that holds the hidden data and the results folder."""
    if not data_label:
        return "node.role == manager"
    key, _, value = data_label.partition("=")
    return f"node.labels.{key} == {value or 'true'}"


def off_data_constraint(data_label: str | None) -> str:
    """The placement constraint that keeps a task off the data node."""
    return data_constraint(data_label).replace(" == ", " != ")


def _env(values: dict[str, str]) -> list[str]:
    return [f"{k}={v}" for k, v in values.items()]


def _service(name: str, labels: dict[str, str], container: dict[str, Any], resources: dict[str, Any],
             constraints: list[str], network_id: str, aliases: list[str]) -> dict[str, Any]:
    return {
        "Name": name,
        "Labels": labels,
        "TaskTemplate": {
            "ContainerSpec": {**container, "Labels": labels, "StopGracePeriod": STOP_GRACE_NS},
            "Resources": resources,
            "RestartPolicy": {"Condition": "none", "MaxAttempts": 0},
            "Placement": {"Constraints": constraints},
            "Networks": [{"Target": network_id, "Aliases": aliases}],
            "LogDriver": {"Name": "json-file", "Options": {"max-size": SERVER_LOG_MAX_SIZE, "max-file": "1"}},
        },
        "Mode": {"Replicated": {"Replicas": 1}},
        "EndpointSpec": {"Mode": "dnsrr"},
    }


def server_service(*, name: str, image: str, argv: list[str], user: str, labels: dict[str, str], network_id: str,
                   alias: str, limits: Limits, config: Any, out_dir: str, data_label: str | None) -> dict[str, Any]:
    """The server's service: the data read-only and the run folder writable (bind mounts on the data node)."""
    memory = parse_bytes(limits.server_memory)
    mounts = [{"Type": "bind", "Source": str(p), "Target": str(p), "ReadOnly": True} for p in data_paths(config)]
    mounts.append({"Type": "bind", "Source": out_dir, "Target": out_dir, "ReadOnly": False})
    mounts.append({"Type": "tmpfs", "Target": "/tmp", "TmpfsOptions": {"SizeBytes": SERVER_TMPFS_BYTES,
                                                                        "Mode": 0o1777}})
    container = {
        "Image": image, "Command": argv[:1], "Args": argv[1:], "User": user, "Init": True, "ReadOnly": True,
        "Env": _env({"HOME": "/tmp", "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}),
        "Mounts": mounts, "CapabilityDrop": ["ALL"],
    }
    resources = {"Limits": {"MemoryBytes": memory, "Pids": int(limits.server_pids)}}
    return _service(name, labels, container, resources, [data_constraint(data_label)], network_id, [alias])


def participant_service(*, name: str, image: str, argv: list[str], user: str, labels: dict[str, str],
                        network_id: str, policy: SandboxPolicy, env: dict[str, str],
                        off_data_node: bool, data_label: str | None, node_id: str | None = None,
                        binds: list[str] | None = None) -> dict[str, Any]:
    """The participant's service under the sandbox policy; `off_data_node` keeps it off the data node (a swarm
    with other nodes; a single-node swarm runs it beside the server); `node_id` pins it (the node of its GPUs);
    `binds` (`SOURCE:TARGET:ro`) are host folders of its node mounted in it (extra context, prepared output), or
    a volume of its node by name (the fetch step's cache)."""
    container = {
        "Image": image, "Command": argv[:1], "Args": argv[1:], "User": user, "ReadOnly": True,
        "Env": _env(env), "CapabilityDrop": ["ALL"],
        "Mounts": [
            {"Type": "tmpfs", "Target": "/tmp", "TmpfsOptions": {"SizeBytes": PARTICIPANT_TMPFS_BYTES,
                                                                  "Mode": 0o1777}},
            {"Type": "tmpfs", "Target": "/dev/shm", "TmpfsOptions": {"SizeBytes": policy.shm_size, "Mode": 0o1777}},
            *({"Type": "bind" if b.startswith("/") else "volume", "Source": b.split(":")[0],
               "Target": b.split(":")[1], "ReadOnly": b.endswith(":ro")} for b in binds or ()),
        ],
        "Ulimits": [{"Name": "nofile", "Soft": policy.nofile, "Hard": policy.nofile}],
    }
    resources: dict[str, Any] = {"Limits": {"NanoCPUs": int(policy.cpus * 1e9), "MemoryBytes": policy.memory,
                                            "Pids": policy.pids}}
    constraints = [off_data_constraint(data_label)] if off_data_node else []
    if node_id:
        constraints.append(f"node.id == {node_id}")
    return _service(name, labels, container, resources, constraints, network_id, [])
