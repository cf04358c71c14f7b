"""`harness check SUBMISSION_DIR` with a Docker engine: the built image's architecture and size against the caps,
and a FROM image the engine lacks is a warning."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from harness.images import base as images
from tests.check_support import check, make

pytestmark = pytest.mark.docker


def test_built_image_architecture_and_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness.images.submission import build_submission_image, submission_tag
    from harness.intake.submission import load_submission

    folder = make(tmp_path, dockerfile="FROM scratch\nCOPY agent.py /\n", name=f"check-{uuid.uuid4().hex[:8]}")
    rc, lines = check(capsys, str(folder))
    assert rc == 0 and any("not built yet" in ln for ln in lines)
    sub = load_submission(folder)
    tag = submission_tag(sub)
    try:
        build_submission_image(sub, tmp_path / "build.log")
        rc, lines = check(capsys, str(folder))
        assert rc == 0, lines
        assert f"ok: image {tag}: image architecture {images.host_architecture()} (linux)" in lines
        assert any(ln.startswith(f"ok: image {tag}: ") and "(cap 10.0 GiB)" in ln for ln in lines)
        assert not any("FROM scratch" in ln for ln in lines)
        rc, lines = check(capsys, str(folder), "--max-image-size", "1")
        assert rc == 1 and any(ln.startswith(f"error: image {tag}: ") and "exceeds the size cap" in ln
                               for ln in lines)
    finally:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True)


def test_from_an_image_the_engine_lacks_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = make(tmp_path, dockerfile="FROM harness-test/does-not-exist:9\nCOPY agent.py /\n")
    rc, lines = check(capsys, str(folder), "-q")
    assert rc == 0
    assert any(ln.startswith(f"warning: {folder}/Dockerfile: FROM harness-test/does-not-exist:9: not on this engine")
               for ln in lines)
    assert not any(ln.startswith("ok:") for ln in lines)
