"""The harness's command line as the tests run it: `python3 -m harness ARGS` in a subprocess of this interpreter,
its output captured as text. `timeout` is a hang guard, never a measure: it is far above what a command takes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: no Docker engine answers there: a command that would use one says so instead of using the host's
NO_DOCKER = {"DOCKER_HOST": "unix:///nonexistent/docker.sock"}


def run_harness(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
                timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """`harness ARGS` in `cwd`, with `env` over this process's environment (None: this process's own)."""
    full = None if env is None else {**os.environ, **env}
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=timeout,
                          env=full, cwd=cwd)


def run_in_checkout(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None,
                    timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """`harness ARGS` of this checkout (it first on PYTHONPATH), by default in its root folder."""
    return run_harness(*args, cwd=cwd, env={"PYTHONPATH": str(ROOT), **(env or {})}, timeout=timeout)


def validate(folder: Path, config: Path, out: Path, *extra: str,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`harness validate FOLDER --config CONFIG --output OUT EXTRA...`."""
    return run_harness("validate", str(folder), "--config", str(config), "--output", str(out), *extra, env=env)


def read_terminal(master: int) -> bytes:
    """All a command wrote to a pseudo-terminal, read from its master side until the command closed its side."""
    shown = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the other side is closed
            break
        if not chunk:
            break
        shown += chunk
    return shown
