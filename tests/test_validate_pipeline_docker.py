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


def test_a_failed_run_prints_its_failure_and_no_unrelated_preflight_lines(tmp_path):
    """A command that crashes before its first instance: the report is the failure, its output's last lines and
    where the results are, not the start-up time it could not measure nor the checks that passed."""
    script = "import sys; print('loading the model from /nonexistent'); sys.exit(3)"
    folder = make_submission(tmp_path / "subs", "val-crash", ["python3", "-c", script])
    proc = validate(folder, tmp_path / "out")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    assert "status       crash: exit code 3 after 0/3 instances" in out, out
    assert "    | loading the model from /nonexistent" in out, out
    for unrelated in ("start-up time", "peak memory", "[ok  ]", "[warn]"):
        assert unrelated not in out, out
    assert leftovers(f"harness.pid={proc.pid}") == []
