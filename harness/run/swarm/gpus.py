"""GPUs on a swarm: each worker advertises its GPUs as generic resources (`node-generic-resources` in its daemon
config, e.g. `gpu=GPU-1a2b`); the harness hands them out, one set per participant task, never two runs the same GPU.

Why the harness and not Swarm's own reservation: a service that reserves a generic resource *and* joins an overlay
network is rejected by Engine 20.10–24 ("assigned node no longer meets constraints", moby/moby#44378), and every run
needs its overlay network. So the pool reads what the nodes advertise, picks a node with enough free GPUs, pins the
task to that node and names the GPUs in the task's environment the way Swarm would (`DOCKER_RESOURCE_GPU`, and
`NVIDIA_VISIBLE_DEVICES` for the NVIDIA runtime). A run that finds no free GPU waits, and says so; a request larger
than any node advertises fails at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.run import failures

GPU_KIND = "gpu"


@dataclass(frozen=True)
class GpuGrant:
    """GPUs given to one participant task: the node they are on and their ids."""

    node_id: str
    hostname: str
    gpus: tuple[str, ...]

    def environment(self) -> dict[str, str]:
        ids = ",".join(self.gpus)
        return {"DOCKER_RESOURCE_GPU": ids, "NVIDIA_VISIBLE_DEVICES": ids}


def advertised_gpus(node: dict[str, Any]) -> tuple[str, ...]:
    """The GPU ids a node advertises (named resources; a discrete count N means ids 0..N-1)."""
    ids: list[str] = []
    for res in ((node.get("Description") or {}).get("Resources") or {}).get("GenericResources") or []:
        named, discrete = res.get("NamedResourceSpec"), res.get("DiscreteResourceSpec")
        if named and named.get("Kind") == GPU_KIND:
            ids.append(str(named.get("Value")))
        elif discrete and discrete.get("Kind") == GPU_KIND:
            ids.extend(str(i) for i in range(int(discrete.get("Value") or 0)))
    return tuple(ids)


def _usable(node: dict[str, Any]) -> bool:
    return ((node.get("Spec") or {}).get("Availability") == "active"
            and (node.get("Status") or {}).get("State") == "ready")


class GpuPool:
    """The GPUs this harness process has handed out, per node (one pool per process: runs share it)."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._taken: dict[str, set[str]] = {}

    def acquire(self, api: Any, count: int, keep_off: Callable[[dict[str, Any]], bool], timeout_s: float,
                on_wait: Callable[[str], None] | None = None) -> GpuGrant:
        """`count` free GPUs on one usable node (not one `keep_off` rejects), waiting up to `timeout_s` while all are
        in use; an InfraError when no node could ever hold the request or the wait ends."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while True:
                nodes = [n for n in api.nodes() if not keep_off(n)]
                largest = max((len(advertised_gpus(n)) for n in nodes), default=0)
                if largest < count:
                    raise failures.InfraError(f"asked for {count} GPU(s) per run, but no node advertises more than "
                                              f"{largest} (node-generic-resources in each worker's daemon.json)")
                for node in sorted(nodes, key=lambda n: len(self._taken.get(n["ID"], ()))):
                    if not _usable(node):
                        continue
                    free = [g for g in advertised_gpus(node) if g not in self._taken.get(node["ID"], set())]
                    if len(free) >= count:
                        grant = GpuGrant(node["ID"], str(node["Description"]["Hostname"]), tuple(free[:count]))
                        self._taken.setdefault(node["ID"], set()).update(grant.gpus)
                        return grant
                left = deadline - time.monotonic()
                if left <= 0:
                    raise failures.InfraError(f"no node had {count} free GPU(s) for {timeout_s:.0f} s "
                                              "(all in use by other runs, or their nodes down or drained)")
                if on_wait:
                    on_wait(f"waiting for {count} free GPU(s)")
                self._lock.wait(min(left, 1.0))  # a release wakes it; node changes are seen within a second

    def release(self, grant: GpuGrant) -> None:
        with self._lock:
            self._taken.get(grant.node_id, set()).difference_update(grant.gpus)
            self._lock.notify_all()


POOL = GpuPool()
