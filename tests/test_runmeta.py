"""run.json has one reader and writer: the server's identity and the batch's resume key live side by side."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import layout
from harness.batch import resume
from harness.errors import HarnessError
from harness.run import failures
from harness.runmeta import read_run_meta, update_run_meta
from harness.server.identity import IDENTITY_KEY, record_identity


def test_the_batch_keeps_the_servers_identity_and_the_server_keeps_the_batchs_key(tmp_path: Path) -> None:
    run = layout.RunDir(tmp_path)
    resume.mark_started(run, "k1")
    record_identity(run, {"track": "t", "dataset": "dev"})  # the server starts inside the run
    resume.mark_finished(run, "k1", failures.Outcome(failures.OK, None), {"attempts": 1})
    meta = read_run_meta(run)
    assert meta[IDENTITY_KEY] == {"track": "t", "dataset": "dev"}
    assert (meta["content_key"], meta["finished"], meta["status"]) == ("k1", True, "ok")
    assert resume.finished_run(run, "k1") == meta and resume.finished_run(run, "k2") is None


def test_a_run_that_starts_again_forgets_how_it_ended(tmp_path: Path) -> None:
    run = layout.RunDir(tmp_path)
    resume.mark_finished(run, "k1", failures.Outcome(failures.CRASH, "exit 1"), {})
    resume.mark_started(run, "k2")
    assert read_run_meta(run) == {"content_key": "k2", "finished": False}


def test_an_unreadable_run_json_is_named(tmp_path: Path) -> None:
    run = layout.RunDir(tmp_path)
    run.run_meta.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(HarnessError, match="run.json: not a JSON object"):
        update_run_meta(run, {"a": 1})
    assert resume.finished_run(run, "k") is None
