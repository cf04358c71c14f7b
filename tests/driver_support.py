"""Driving a participant's agent server in-process: the real driver on a real `Evaluation` and its run log, for the
driver tests (tests/test_drivers_*.py, tests/test_simulstream_wire.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness import layout
from harness.drivers import drive
from harness.drivers.base import DriverReport
from harness.server.evaluation import open_evaluation
from tests.text_task import make_text_task

__all__ = ["SIMULEVAL", "SIMULSTREAM", "run_driver", "text_cfg"]

SIMULEVAL, SIMULSTREAM = "simuleval-agent-server", "simulstream-http"


def run_driver(cfg: Path, out: Path, interface: str, port: int, startup_s: float = 10.0
               ) -> tuple[DriverReport, dict[int, dict[str, Any]]]:
    """Drive every instance of `cfg`'s dev set through the participant on `port`; (report, records by index)."""
    ev = open_evaluation(cfg, "dev", out)
    try:
        report = drive(ev, interface, f"127.0.0.1:{port}", startup_s, layout.RunDir(out))
        ev.writer.sync()
        return report, {r["index"]: r for r in ev.records()}
    finally:
        ev.close()


def text_cfg(tmp_path: Path, **limits: float) -> Path:
    items = ", ".join(f"{k}: {v}" for k, v in limits.items())
    return make_text_task(tmp_path, limits=f"limits: {{{items}}}\n" if items else "")
