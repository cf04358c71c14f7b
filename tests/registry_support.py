"""The organizer's Docker registry for the portal's Docker tests: Debian's docker-registry on a free loopback port,
started with the config `harness portal registry-config` writes (the portal as its token server), and the docker
CLI with a credentials folder of its own (never ~/.docker)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests

from tests.portal_support import Campaign, harness


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_registry(address: str, registry: subprocess.Popen[bytes], log: Path) -> requests.Response:
    """/v2/'s first answer (bounded in tries; at once if the registry exited)."""
    for _ in range(600):
        assert registry.poll() is None, log.read_text(encoding="utf-8", errors="replace")[-4000:]
        try:
            return requests.get(f"http://{address}/v2/", timeout=2)
        except requests.ConnectionError:
            time.sleep(0.05)
    pytest.fail("docker-registry did not listen")


class RegistryProcess:
    """docker-registry serving `address` with images under `storage`, its tokens from the portal at `portal_url`;
    `stop()` ends it."""

    def __init__(self, campaign: Campaign, portal_url: str, address: str, storage: Path, log: Path) -> None:
        written = subprocess.run(harness("portal", "registry-config", "--state", str(campaign.state), "--portal-url",
                                         portal_url, "--listen", address, "--storage", str(storage)),
                                 capture_output=True, text=True, timeout=120)
        assert written.returncode == 0, written.stderr
        self.config = campaign.state / "registry" / "config.yml"
        self.stdout = written.stdout
        self.address, self.storage, self.log = address, storage, log
        with log.open("wb") as out:
            self.process = subprocess.Popen(["docker-registry", "serve", str(self.config)], stdout=out,
                                            stderr=subprocess.STDOUT)
        self.first = wait_for_registry(address, self.process, log)

    def blobs(self) -> set[str]:
        """The digests of the blobs (layers, configs, manifests) the registry stores."""
        return {p.parent.name for p in (self.storage / "docker" / "registry" / "v2" / "blobs").rglob("data")}

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=60)


def docker_as(config: Path, *args: str, stdin: str | None = None,
              timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The docker CLI with the credentials folder `config` (made when missing)."""
    config.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["docker", *args], input=stdin, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "DOCKER_CONFIG": str(config)})


def remove_images(address: str) -> None:
    """Every image the engine has of the registry at `address` (tags and digests), untagged ones too."""
    ours = subprocess.run(["docker", "image", "ls", "-q", "--filter", f"reference={address}/*/*"],
                          capture_output=True, text=True, timeout=120).stdout.split()
    if ours:
        subprocess.run(["docker", "rmi", "-f", *sorted(set(ours))], capture_output=True, timeout=120)
