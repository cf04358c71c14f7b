"""Base-image helpers that need no Docker engine: apt mirror discovery, source digest, wheel requirements."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.images import base as images
from harness.images import wheelhouse


def test_debian_mirror_from_one_line_and_deb822_sources() -> None:
    one_line = ("deb [arch=amd64] http://mirror.example/debian bookworm main\n"
                "deb http://security.debian.org/debian-security bookworm-security main\n")
    deb822 = ("Types: deb\nURIs: https://deb.nodesource.com/node_20.x\nSuites: nodistro\n\n"
              "Types: deb\nURIs: http://deb.debian.org/debian/\nSuites: bookworm bookworm-updates\nComponents: main\n")
    assert list(images._debian_uris(one_line)) == ["http://mirror.example/debian"]
    assert list(images._debian_uris(deb822)) == ["http://deb.debian.org/debian"]


def test_source_digest_follows_the_code(tmp_path: Path) -> None:
    (tmp_path / "harness").mkdir()
    (tmp_path / "harness" / "__init__.py").write_text("x = 1\n")
    (tmp_path / "harness" / "__pycache__").mkdir()
    (tmp_path / "setup.cfg").write_text("[metadata]\n")
    first = wheelhouse.source_digest(tmp_path)
    (tmp_path / "harness" / "__pycache__" / "m.pyc").write_bytes(b"junk")
    assert wheelhouse.source_digest(tmp_path) == first
    (tmp_path / "harness" / "__init__.py").write_text("x = 2\n")
    assert wheelhouse.source_digest(tmp_path) != first


@pytest.mark.slow
def test_wheel_requirements_leave_out_extras() -> None:
    wheel, _ = wheelhouse.build_harness_wheel()
    reqs = wheelhouse.wheel_requirements(wheel)
    assert any(r.startswith("tornado") for r in reqs)
    assert not any(r.startswith(("pytest", "ruff", "faster-whisper", "av")) for r in reqs)
    # the base image's extras: the media extra's PyAV (the server streams MP4 talks), its marker dropped
    with_media = wheelhouse.wheel_requirements(wheel, wheelhouse.IMAGE_EXTRAS)
    assert with_media[:len(reqs)] == reqs and with_media[len(reqs):] == ("av>=12",)
