"""`harness validate`: the organizer's pipeline for participants, as local processes (`--no-docker`; the pipeline
with Docker is tests/test_validate_pipeline_docker.py's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.evaluate_data.support import make_submission, validate


def test_no_docker_runs_the_command_locally(tmp_path):
    folder = make_submission(tmp_path / "subs", "local-copy", "python3 probe_agent.py copy")
    proc = validate(folder, tmp_path / "out", "--no-docker")
    assert proc.returncode == 0, proc.stderr
    assert "status       ok" in proc.stdout and "instances    3/3" in proc.stdout
    assert "BLEU" in proc.stdout and "LAAL" in proc.stdout
    run_dir = tmp_path / "out" / "local-copy" / "dev"
    assert (run_dir / "scores.json").is_file() and "sentence 2 done" in (run_dir / "client.log").read_text()


def test_no_docker_reports_a_crash(tmp_path):
    folder = make_submission(tmp_path / "subs", "local-crash", "python3 probe_agent.py crash-after-1")
    proc = validate(folder, tmp_path / "out", "--no-docker")
    assert proc.returncode == 1
    assert "status       crash: exit code 3 after 1/3 instances  [partial output]" in proc.stdout


@pytest.mark.slow
def test_no_docker_enforces_the_idle_timeout(tmp_path):
    """The local backend runs under the same watchdog as Docker: a client that never asks is killed, not waited on."""
    folder = make_submission(tmp_path / "subs", "local-hang", "python3 probe_agent.py hang")
    proc = validate(folder, tmp_path / "out", "--no-docker")
    assert proc.returncode == 1
    assert "status       timeout: idle timeout (no instance finished for 8 s)" in proc.stdout, proc.stdout


def test_invalid_submission_is_one_line(tmp_path):
    folder = make_submission(tmp_path / "subs", "broken", "python3 probe_agent.py copy")
    (folder / "submission.yaml").write_text("team: [\n", encoding="utf-8")
    proc = validate(folder, tmp_path / "out", "--no-docker")
    assert proc.returncode == 1  # as `harness check` and the Docker pipeline: the submission's status (issue 26)
    status = next(line for line in proc.stdout.splitlines() if line.startswith("status"))
    assert "invalid_submission" in status and "submission.yaml" in status and "Traceback" not in proc.stderr


@pytest.mark.apertium
def test_no_docker_runs_an_example_submission_unchanged(tmp_path):
    """A real baseline (wait-k over Apertium) validates locally with exactly the command it ships in Docker."""
    example = Path(__file__).resolve().parents[1] / "agent_templates" / "waitk_apertium"
    proc = validate(example, tmp_path / "out", "--no-docker")
    assert proc.returncode == 0, proc.stderr
    assert "status       ok" in proc.stdout and "instances    3/3" in proc.stdout
