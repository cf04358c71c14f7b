"""The fetch volume on the swarm node that runs the submission: filled there from the fetched image, once per node.

A one-shot service of the fetched image (`run.fetch.ship`), pinned to the participant's node (the node of its GPU
grant) or, without GPUs, placed by Swarm under the participant's own constraints and then taken as its node; it
mounts the volume of the cache's name on that node and unpacks the image's files into it unless the volume holds
this fill's stamp already (`volume_tool.py unpack`). No network, no data, no secrets. The harness remembers the
nodes it filled, so later runs of the process skip the service; a new process finds the stamp.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.run import failures, network
from harness.run.fetch import cache

_HERE = Path(__file__).resolve().parents[1] / "fetch"
POLL_S = 0.2
_filled: dict[tuple[str, str, str], str] = {}  # (node id, volume, image) → how the fill went
_lock = threading.Lock()


@dataclass(frozen=True)
class Fill:
    """The fetch volume on a node: the node, whether it was filled now (False: it held this fill already) and the
    seconds it took (service included)."""

    node_id: str
    filled: bool
    seconds: float


def fill_on_node(api: Any, *, image: str, volume: str, run_id: str, constraints: list[str], budget_s: float,
                 create_service: Any) -> Fill:
    """Fill `volume` on the node `constraints` pick (pin it with `node.id == ...`) from `image`; `InfraError` when
    the service cannot be placed, fails or outlives `budget_s`."""
    pinned = [c.split("==", 1)[1].strip() for c in constraints if c.replace(" ", "").startswith("node.id==")]
    if pinned:
        with _lock:
            if (pinned[0], volume, image) in _filled:
                return Fill(pinned[0], False, 0.0)
    t0 = time.monotonic()
    script = (_HERE / "volume_tool.py").read_text(encoding="utf-8")
    labels = network.labels(run_id, "fetch-fill")
    spec = {
        "Name": f"harness-{run_id}-fetch-fill", "Labels": labels,
        "TaskTemplate": {
            "ContainerSpec": {"Image": image, "Command": ["python3", "-c", script, "unpack", image], "User": "0:0",
                              "Labels": labels,
                              "Mounts": [{"Type": "volume", "Source": volume, "Target": "/volume",
                                          "VolumeOptions": {"NoCopy": True, "Labels": {cache.LABEL: "1"}}}]},
            "RestartPolicy": {"Condition": "none", "MaxAttempts": 0},
            "Placement": {"Constraints": constraints},
        },
        "Mode": {"Replicated": {"Replicas": 1}},
    }
    service = create_service(api, spec)
    try:
        node, out = _wait(api, service, budget_s)
    finally:
        try:
            api.remove_service(service)
        except Exception:  # noqa: BLE001 - gone already; the next start removes labelled leftovers
            pass
    with _lock:
        _filled[(node, volume, image)] = out
    return Fill(node, out.startswith("filled"), time.monotonic() - t0)


def _wait(api: Any, service: str, budget_s: float) -> tuple[str, str]:
    """(the node, the tool's last line) once the task completed; InfraError otherwise."""
    deadline = time.monotonic() + budget_s
    while True:
        tasks = api.tasks(filters={"service": service})
        task = max(tasks, key=lambda t: t.get("CreatedAt", "")) if tasks else {}
        st = task.get("Status") or {}
        if st.get("State") == "complete":
            return str(task.get("NodeID")), _last_line(api, service)
        if st.get("State") in ("failed", "rejected", "orphaned", "shutdown", "remove"):
            why = (st.get("Err") or st.get("Message") or st.get("State") or "").splitlines()[0]
            tail = _last_line(api, service)
            raise failures.InfraError(f"fetch: filling the volume on a swarm node failed: {why}"
                                      f"{f': {tail}' if tail else ''}")
        if time.monotonic() > deadline:
            raise failures.InfraError(f"fetch: filling the volume on a swarm node did not end within "
                                      f"{budget_s:.0f} s ({st.get('State') or 'no task scheduled'})")
        time.sleep(POLL_S)


def _last_line(api: Any, service: str) -> str:
    try:
        raw = b"".join(api.service_logs(service, stdout=True, stderr=True, follow=False))
    except Exception:  # noqa: BLE001 - no logs: the state says enough
        return ""
    lines = [ln for ln in raw.decode("utf-8", "replace").splitlines() if ln.strip()]
    return lines[-1].strip()[-200:] if lines else ""
