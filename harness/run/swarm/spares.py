"""Warm overlay networks for the swarm backend's next runs.

The first task on a fresh overlay network waits ~0.5 s while the node sets the network up (namespace, VXLAN
device, DNS). A spare network is made in the background while the previous run works, with an inert placeholder
container on the data node holding that set-up; the next run takes it, starts its server on it, and the placeholder
is removed as soon as the server runs — before the participant's command starts (a participant started early waits
at the start gate until then, `gate`), so a run's participant only ever sees its own server. Spares carry the
harness labels (a killed harness's are removed at the next start) and are removed when the batch ends or is
interrupted (`close`).
"""

from __future__ import annotations

import atexit
import threading
import time
import uuid
from typing import Any

from harness.run import network
from harness.run.swarm.settle import remove_network

PLACEHOLDER_COMMAND = ["sleep", "86400"]


class Spare:
    """A warm network and the placeholder container that keeps it warm."""

    def __init__(self, net: dict[str, Any], placeholder: str) -> None:
        self.net, self.placeholder = net, placeholder


def _make(api: Any, image: str) -> Spare:
    spare_id = "warm-" + uuid.uuid4().hex[:8]
    created = api.create_network(f"harness-{spare_id}-net", driver="overlay", internal=True, attachable=True,
                                 labels=network.labels(spare_id, "network"), check_duplicate=True)
    net = api.inspect_network(created["Id"])
    cid = ""
    try:
        cid = api.create_container(
            image, PLACEHOLDER_COMMAND, name=f"harness-{spare_id}-placeholder", user="65534:65534",
            labels=network.labels(spare_id, "placeholder"),
            host_config=api.create_host_config(
                network_mode=net["Name"], cap_drop=["ALL"], security_opt=["no-new-privileges:true"], read_only=True,
                mem_limit=32 * 2**20, pids_limit=8, privileged=False))["Id"]
        api.start(cid)
    except Exception:
        remove(api, Spare(net, cid))
        raise
    return Spare(net, cid)


def remove(api: Any, spare: Spare, budget_s: float = 10.0) -> None:
    """Remove a spare's placeholder, then its network (once the endpoint is gone); errors are left to the next
    start's cleanup."""
    if spare.placeholder:
        try:
            api.remove_container(spare.placeholder, force=True)
        except Exception:  # noqa: BLE001
            pass
    remove_network(api, spare.net["Id"], budget_s)


class Spares:
    """At most one warm network ready per process: `take` returns it (or None), `prepare` makes the next."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ready: list[Spare] = []
        self._making: threading.Thread | None = None
        self._closed = False
        self._api: Any = None
        self.last_make_s: float | None = None

    def take(self) -> Spare | None:
        """A warm network, if one is ready."""
        with self._lock:
            return self._ready.pop() if self._ready else None

    def prepare(self, api: Any, image: str) -> None:
        """Start making the next spare in the background (called once a run's participant works, so the making
        overlaps that run's own work rather than a start)."""
        with self._lock:
            self._closed = False
            self._api = api
            if self._ready or (self._making is not None and self._making.is_alive()):
                return
            self._making = threading.Thread(target=self._refill, args=(api, image), daemon=True)
            self._making.start()

    def placeholder_done(self, api: Any, spare: Spare) -> None:
        """The run's server runs on the spare's network: its placeholder goes."""
        if spare.placeholder:
            try:
                api.remove_container(spare.placeholder, force=True)
            except Exception:  # noqa: BLE001 - the next start's cleanup removes it
                pass

    def wait_ready(self, timeout_s: float = 60.0) -> float | None:
        """Wait for the spare being made (benchmarks: so that making it does not overlap a measured start);
        how long making the last spare took, in seconds."""
        making = self._making
        if making is not None:
            making.join(timeout_s)
        return self.last_make_s

    def _refill(self, api: Any, image: str) -> None:
        t0 = time.monotonic()
        try:
            spare = _make(api, image)
        except Exception:  # noqa: BLE001 - no spare: the next run makes its network itself
            return
        self.last_make_s = time.monotonic() - t0
        with self._lock:
            if self._closed or self._ready:
                remove(api, spare)
            else:
                self._ready.append(spare)

    def close(self) -> None:
        """Remove the spares (end of a batch, Ctrl-C, exit); a spare still being made is removed when done."""
        with self._lock:
            self._closed = True
            ready, self._ready = self._ready, []
            making = self._making
        if making is not None:
            making.join(30)
        with self._lock:
            ready += self._ready
            self._ready = []
        for spare in ready:
            remove(self._api, spare)


SPARES = Spares()
atexit.register(SPARES.close)
