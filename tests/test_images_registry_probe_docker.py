"""Where the base image comes from is decided where it matters: the engine tries the registry, and a registry that
does not answer within the probe's window (or refuses) means the Debian-packages build, said in one line;
`HARNESS_AIR_GAPPED` still forces either way. Registries here are our own, on loopback: a silent socket, a closed
port, and Debian's docker-registry holding a one-file image."""

from __future__ import annotations

import io
import socket
import subprocess
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from harness.images import base

pytestmark = [pytest.mark.docker]


@pytest.fixture
def silent_registry() -> Iterator[str]:
    """A loopback port that accepts connections and never answers (a registry whose traffic is dropped)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield f"127.0.0.1:{server.getsockname()[1]}"


def test_a_registry_that_does_not_answer_means_debian_packages(silent_registry: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_AIR_GAPPED", raising=False)
    # the engine prints nothing until the registry answers: the probe gives up after its window, not the engine's
    assert not base.registry_answers(f"{silent_registry}/none/base:1", answer_s=1.0)


def test_a_refusing_registry_means_debian_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_AIR_GAPPED", raising=False)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    assert not base.registry_answers(f"127.0.0.1:{closed}/none/base:1")


def test_the_variable_forces_either_way(silent_registry: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_AIR_GAPPED", "0")
    assert base.registry_answers(f"{silent_registry}/none/base:1", answer_s=0.5)  # not asked: forced
    monkeypatch.setenv("HARNESS_AIR_GAPPED", "1")
    assert not base.registry_answers(f"{silent_registry}/none/base:1", answer_s=0.5)


def _one_file_image(tag: str) -> None:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        info = tarfile.TarInfo("hello.txt")
        info.size = 6
        tar.addfile(info, io.BytesIO(b"hello\n"))
    subprocess.run(["docker", "import", "-", tag], input=data.getvalue(), check=True, capture_output=True)


@pytest.mark.registry
def test_an_answering_registry_is_pulled_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_AIR_GAPPED", raising=False)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cfg = tmp_path / "registry.yml"
    cfg.write_text(f"version: 0.1\nlog: {{level: error}}\nstorage: {{filesystem: {{rootdirectory: {tmp_path}/r}}}}\n"
                   f"http: {{addr: 127.0.0.1:{port}}}\n", encoding="utf-8")
    registry = subprocess.Popen(["docker-registry", "serve", str(cfg)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
    ref = f"127.0.0.1:{port}/probe/one-file:{tmp_path.name.lower()}"
    try:
        _wait_for_registry(port, registry)
        _one_file_image(ref)
        subprocess.run(["docker", "push", ref], check=True, capture_output=True)
        subprocess.run(["docker", "rmi", ref], check=True, capture_output=True)
        assert not base.image_exists(ref)
        assert base.registry_answers(ref)
        assert base.image_exists(ref)  # pulled
    finally:
        subprocess.run(["docker", "rmi", ref], capture_output=True)
        registry.terminate()
        registry.wait(timeout=30)


def _wait_for_registry(port: int, registry: subprocess.Popen[bytes]) -> None:
    """Until the registry answers /v2/ (bounded in tries; at once if it exited)."""
    for _ in range(600):
        assert registry.poll() is None, registry.stderr.read() if registry.stderr else ""
        try:
            requests.get(f"http://127.0.0.1:{port}/v2/", timeout=1)
            return
        except requests.ConnectionError:
            time.sleep(0.05)
    pytest.fail("docker-registry did not listen")


@pytest.mark.parametrize(("setting", "decision", "expected"), [
    (None, True, "from Debian packages (debootstrap) (no registry answered for python:3.11-slim-bookworm within "
                 "10 s; HARNESS_AIR_GAPPED=0 forces it)"),
    (None, False, "from python:3.11-slim-bookworm (a registry answered; HARNESS_AIR_GAPPED=1 builds from Debian "
                  "packages instead)"),
    ("1", True, "from Debian packages (debootstrap) (HARNESS_AIR_GAPPED=1)"),
])
def test_the_build_says_which_base_in_one_line(setting: str | None, decision: bool, expected: str,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    if setting is None:
        monkeypatch.delenv("HARNESS_AIR_GAPPED", raising=False)
    else:
        monkeypatch.setenv("HARNESS_AIR_GAPPED", setting)
    base._say_which_base(decision)
    assert capsys.readouterr().err == f"harness: building the base image {expected}\n"
