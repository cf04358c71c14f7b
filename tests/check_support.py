"""Helpers of the `harness check` tests (tests/test_check_cli.py, tests/test_check_cli_docker.py; not a test module;
imported as `tests.check_support`): a submission folder made on the fly, and the command run in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.images import base as images


def make(tmp_path: Path, yaml_extra: str = "", build: str = "{dockerfile: Dockerfile}",
         dockerfile: str | None = f"FROM {images.DEFAULT_TAG}\nCOPY agent.py /app/\n", name: str = "team-sys") -> Path:
    """A submission folder `tmp_path/name` with an agent, a `submission.yaml` and (unless None) `dockerfile`."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "submission.yaml").write_text(
        f"team: team\nsystem: sys\ncontact: a@b.c\ntrack: text-en-es\nbuild: {build}\n"
        f"command: harness client --agent /app/agent.py\n{yaml_extra}")
    (folder / "agent.py").write_text("# agent\n")
    if dockerfile is not None:
        (folder / "Dockerfile").write_text(dockerfile)
    return folder


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    """`harness check ARGS` in-process: its exit code and the lines it printed (stdout, then stderr)."""
    rc = main(["check", *args])
    out = capsys.readouterr()
    return rc, (out.out + out.err).splitlines()
