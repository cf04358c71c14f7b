"""The drivers by interface name, and `drive`: one run of an agent-server participant through its driver.

The registry lives above the base and the drivers (each driver imports the base; nothing below imports this).
"""

from __future__ import annotations

from collections.abc import Callable

from harness import layout
from harness.drivers.base import AgentServerDriver, DriverReport, write_report
from harness.drivers.simuleval_agent_server import SimulEvalAgentServer
from harness.drivers.simulstream_http import SimulStreamHttp
from harness.server.evaluation import Evaluation

__all__ = ["DRIVERS", "drive"]


#: every agent-server interface and its driver
_DRIVERS: dict[str, Callable[..., AgentServerDriver]] = {"simuleval-agent-server": SimulEvalAgentServer,
                                                          "simulstream-http": SimulStreamHttp}
DRIVERS = tuple(_DRIVERS)


def drive(evaluation: Evaluation, interface: str, participant: str, startup_timeout_s: float,
          run_dir: layout.RunDir) -> DriverReport:
    """Drive every pending instance of `evaluation` through the participant at `participant` (HOST:PORT)."""
    host, _, port = participant.rpartition(":")
    driver = _DRIVERS[interface](evaluation, host, int(port))
    try:
        report = driver.run(startup_timeout_s)
    except Exception as exc:  # noqa: BLE001 - the report is the result; the server must still stop
        report = DriverReport(interface, "failed", f"driver failed: {type(exc).__name__}: {exc}".splitlines()[0])
    finally:
        driver.http.close()
    write_report(run_dir, report)
    return report
