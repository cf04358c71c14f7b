"""Networks whose removal a swarm engine is still finishing.

Swarm removes a run's overlay network from its cluster state at once, but the engine drops its local copy a moment
later (about 0.2 s on the lab). A run need not wait for that: teardown hands the network here, one background thread
waits for each network (bounded, retrying the removal if the engine still has it at the end), and `settle()` waits
for all of them: at the end of a batch, on Ctrl-C and at exit, so nothing of a run is left once the harness returns.
"""

from __future__ import annotations

import atexit
import threading
import time
from typing import Any

POLL_S = 0.05
BUDGET_S = 30.0


class Settling:
    """Removed networks not yet gone from the engine, and the thread that watches them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[Any, float, float]] = {}
        self._thread: threading.Thread | None = None
        self.last_settle_s: float | None = None  # how long the engine took for the last network (benchmarks)

    def add(self, api: Any, net_id: str, budget_s: float = BUDGET_S) -> None:
        """Watch a network whose removal the engine accepted until its local copy is gone."""
        with self._lock:
            now = time.monotonic()
            self._pending[net_id] = (api, now + budget_s, now)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._watch, name="harness-settle", daemon=True)
                self._thread.start()

    def _watch(self) -> None:
        while True:
            with self._lock:
                pending = dict(self._pending)
                if not pending:
                    self._thread = None
                    return
            for net_id, (api, deadline, added) in pending.items():
                try:
                    gone = not api.networks(ids=[net_id])
                    if not gone and time.monotonic() >= deadline:
                        api.remove_network(net_id)  # last try; a leftover is removed at the next start
                except Exception:  # noqa: BLE001 - gone meanwhile, or left to the next start's cleanup
                    gone = True
                if gone or time.monotonic() >= deadline:
                    self.last_settle_s = time.monotonic() - added
                    with self._lock:
                        self._pending.pop(net_id, None)
            time.sleep(POLL_S)

    def settle(self, timeout_s: float = BUDGET_S + 5) -> None:
        """Wait until every network handed here is gone (or given up on)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout_s)


SETTLING = Settling()
atexit.register(SETTLING.settle)


def remove_network(api: Any, net_id: str, budget_s: float, settle: bool = True) -> None:
    """Remove a swarm network (retrying while endpoints are still released), then wait until the engine dropped
    its local copy, or (`settle=False`) leave that wait to `SETTLING`; bounded, errors left to the next start."""
    deadline = time.monotonic() + budget_s
    while time.monotonic() < deadline:
        try:
            api.remove_network(net_id)
        except Exception as exc:  # noqa: BLE001 - endpoints still attached while tasks shut down
            if "not found" not in str(exc).lower():
                time.sleep(0.1)
                continue
        if not settle:
            SETTLING.add(api, net_id, max(1.0, deadline - time.monotonic()))
            return
        if not api.networks(ids=[net_id]):
            return
        time.sleep(0.1)
