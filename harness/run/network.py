"""Per-run Docker networks, the harness labels every resource carries, and removal of leftovers.

A run's network is an internal bridge (no route out) whose bridge interface has no address on the host
(`inhibit_ipv4`): containers on it reach each other and nothing else — not the host, not the host's other
bridges, not other runs' networks. The server container joins under the alias `server`.

Every container and network the harness makes carries `harness=1`, the owning process (`harness.pid`) and host
(`harness.host`). Resources whose owner is dead (killed harness, power loss) are removed at the next start;
resources of a live harness process are left alone, so two harness commands can run side by side.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any

LABEL = "harness"
SERVER_ALIAS = "server"
NETWORK_OPTIONS = {
    "com.docker.network.bridge.inhibit_ipv4": "true",  # no host address on the bridge: the host is unreachable
    "com.docker.network.bridge.enable_ip_masquerade": "false",
}


def _start_time(pid: int) -> str:
    """The kernel's start time of a process (clock ticks since boot), so a reused pid is not taken for its owner."""
    try:
        stat = open(f"/proc/{pid}/stat", encoding="ascii").read()
        return stat.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def labels(run_id: str, role: str, pid: int | None = None) -> dict[str, str]:
    """Labels for one resource of run `run_id` (`role`: network, server or participant)."""
    pid = os.getpid() if pid is None else pid
    return {
        LABEL: "1",
        "harness.pid": str(pid),
        "harness.pid_start": _start_time(pid),
        "harness.host": socket.gethostname(),
        "harness.run": run_id,
        "harness.role": role,
    }


def create_network(api: Any, name: str, run_id: str) -> dict[str, Any]:
    """Create the internal network of one run; returns its `docker network inspect`."""
    created = api.create_network(
        name,
        driver="bridge",
        internal=True,
        options=NETWORK_OPTIONS,
        labels=labels(run_id, "network"),
        check_duplicate=True,
    )
    return api.inspect_network(created["Id"])


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _orphaned(lbl: dict[str, str], only_pid: int | None) -> bool:
    if lbl.get(LABEL) != "1":
        return False
    try:
        pid = int(lbl.get("harness.pid", ""))
    except ValueError:
        return True
    if only_pid is not None:
        return pid == only_pid
    if lbl.get("harness.host") != socket.gethostname():
        return False
    if pid == os.getpid():
        return False
    if not _pid_alive(pid):
        return True
    started = lbl.get("harness.pid_start")
    return bool(started) and started != _start_time(pid) != ""  # the pid now belongs to another process


def _swarm_services(api: Any) -> list[dict[str, Any]]:
    """The harness's services when this engine is a swarm manager, else none."""
    if not ((api.info().get("Swarm") or {}).get("ControlAvailable")):
        return []
    return list(api.services(filters={"label": f"{LABEL}=1"}))


def remove_resources(api: Any, only_pid: int | None = None) -> dict[str, int]:
    """Remove labelled swarm services, containers, then networks: those of `only_pid`, or (None) those of dead
    harness processes. Returns how many of each were removed.
    """
    removed = {"services": 0, "containers": 0, "networks": 0}
    for s in _swarm_services(api):
        if _orphaned((s.get("Spec") or {}).get("Labels") or {}, only_pid):
            try:
                api.remove_service(s["ID"])
                removed["services"] += 1
            except Exception:  # noqa: BLE001 - already gone
                pass
    for c in api.containers(all=True, filters={"label": f"{LABEL}=1"}):
        if _orphaned(c.get("Labels") or {}, only_pid):
            try:
                api.remove_container(c["Id"], force=True, v=True)
                removed["containers"] += 1
            except Exception:  # noqa: BLE001 - already gone or being removed
                pass
    gone: list[str] = []
    for n in api.networks(filters={"label": f"{LABEL}=1"}):
        if _orphaned(n.get("Labels") or {}, only_pid):
            try:
                api.remove_network(n["Id"])
                removed["networks"] += 1
                gone.append(n["Id"])
            except Exception:  # noqa: BLE001
                pass
    deadline = time.monotonic() + 10  # a swarm network's local copy goes a moment after its removal
    while gone and api.networks(ids=gone) and time.monotonic() < deadline:
        time.sleep(0.1)
    return removed
