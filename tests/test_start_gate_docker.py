"""The start gate's image probe (harness/run/gate.py) against a real Docker engine: the base image's python3 is
found, and an image without python3 gets no gate."""

from __future__ import annotations

import io
import tarfile

import pytest

from harness.run.gate import image_python

pytestmark = pytest.mark.docker


def test_image_python_finds_python3_or_none(tmp_path):
    from harness.images.base import DEFAULT_TAG, ensure_base_image
    from harness.run.docker_backend import docker_api

    api = docker_api()
    ensure_base_image()
    assert image_python(api, DEFAULT_TAG) == "/usr/bin/python3"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:  # an image holding one file and no python3
        info = tarfile.TarInfo("hello.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    api.import_image_from_data(buf.getvalue(), repository="harness-test-nopython", tag="latest")
    try:
        assert image_python(api, "harness-test-nopython:latest") is None
    finally:
        api.remove_image("harness-test-nopython:latest", force=True)
