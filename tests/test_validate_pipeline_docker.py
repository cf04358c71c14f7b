"""`harness validate`: the organizer's pipeline for participants with Docker, its preflight checks included, leaving
nothing behind."""

from __future__ import annotations

import pytest

from tests.evaluate_data.support import leftovers, make_submission, validate

pytestmark = pytest.mark.docker


def test_docker_pipeline_with_preflight(tmp_path):
    folder = make_submission(tmp_path / "subs", "val-docker", "python3 probe_agent.py copy")
    proc = validate(folder, tmp_path / "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "status       ok" in out and "instances    3/3" in out
    for check in ("image architecture: amd64", "image size:", "start-up time:", "peak memory:"):
        assert check in out, out
    assert "[fail]" not in out
    assert (tmp_path / "out" / "val-docker" / "manifest.json").is_file()
    assert leftovers(f"harness.pid={proc.pid}") == []
