"""The harness base image, built air-gapped (debootstrap + docker import + host wheelhouse) with the real engine."""

from __future__ import annotations

import subprocess

import pytest

from harness import __version__
from harness.images import base as images
from harness.images import wheelhouse

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="session")
def base_image() -> str:
    """One build per test session (later ensure_base_image calls are cache hits)."""
    return images.ensure_base_image(air_gapped=True)


def docker_run(image: str, script: str) -> subprocess.CompletedProcess[str]:
    """Run `script` the way participant containers run: read-only root, tmpfs /tmp, no capabilities, no network."""
    return subprocess.run(["docker", "run", "--rm", "--read-only", "--tmpfs", "/tmp:size=16m", "--cap-drop", "ALL",
                           "--security-opt", "no-new-privileges", "--network", "none", image, "sh", "-c", script],
                          capture_output=True, text=True, timeout=120)


def test_labels_record_the_installed_harness(base_image: str) -> None:
    for _ in range(3):  # the harness source may change under a running test session: ask again
        images.ensure_base_image()
        labels = images.image_labels(base_image)
        if labels[images.LABEL_DIGEST] == wheelhouse.build_wheelhouse().digest:
            break
    assert labels[images.LABEL_VERSION] == __version__
    assert labels[images.LABEL_DIGEST] == wheelhouse.build_wheelhouse().digest
    if labels[images.LABEL_MODE] == "air-gapped":
        tarball = wheelhouse.cache_dir() / f"rootfs-{images.rootfs_key()}.tar.gz"
        assert tarball.is_file()
        assert images.image_exists(images.rootfs_image_tag(tarball))
    info = images.image_info(base_image)
    assert info.architecture == images.host_architecture() and info.id.startswith("sha256:")
    assert 50e6 < info.size < 600e6


def test_second_call_is_a_cache_hit(base_image: str) -> None:
    images.ensure_base_image()
    digest = wheelhouse.build_wheelhouse().digest
    before = images.image_info(base_image).id
    assert images.ensure_base_image() == base_image
    if wheelhouse.build_wheelhouse().digest != digest:
        pytest.skip("the harness source changed during the test")
    assert images.image_info(base_image).id == before


def test_participant_user_read_only_root_and_harness_commands(base_image: str) -> None:
    proc = docker_run(base_image, "id -u; id -un; echo HOME=$HOME; harness --version; "
                      "harness server --help >/dev/null && harness client --help >/dev/null && echo cli-ok; "
                      "python3 -c 'import harness.client.agent, sacrebleu, numpy, soundfile, tornado; "
                      "print(\"imports-ok\")'; "
                      "touch /tmp/x && echo tmp-writable; touch /opt/harness/x 2>/dev/null || echo root-ro")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split()
    assert lines[:3] == [str(images.PARTICIPANT_UID), images.PARTICIPANT_USER, "HOME=/tmp"]
    assert f"harness {__version__}" in proc.stdout
    for word in ("cli-ok", "imports-ok", "tmp-writable", "root-ro"):
        assert word in lines, proc.stdout + proc.stderr


def test_pip_inside_the_image_has_no_index(base_image: str) -> None:
    proc = docker_run(base_image, "pip download --no-cache-dir -d /tmp/w requests 2>&1; echo rc=$?")
    assert "rc=0" not in proc.stdout
    assert "no-index" in proc.stdout or "No matching distribution" in proc.stdout


def test_registry_probe_without_network(base_image: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_AIR_GAPPED", raising=False)
    assert images.registry_answers(base_image)  # on the engine already: no pull needed
    monkeypatch.setenv("HARNESS_AIR_GAPPED", "1")
    assert not images.registry_answers(base_image)


def test_image_build_command_is_a_cache_hit(base_image: str, capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli import main

    assert main(["image", "build", "--air-gapped"]) == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith(f"{base_image}: sha256:") and f"harness {__version__}" in out
    assert images.host_architecture() in out
