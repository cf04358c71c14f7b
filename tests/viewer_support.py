"""`harness view` started as a real process on a free loopback port, for the viewer and timeline tests."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

__all__ = ["free_port", "wait_http", "start_view"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, limit_s: float = 60) -> None:
    """Return once `url` answers; fail after `limit_s`."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"{url} never answered")


def start_view(path: Path) -> tuple[subprocess.Popen, str]:
    """`harness view PATH --port P` running, and its URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "harness", "view", str(path), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    wait_http(url)
    return proc, url
