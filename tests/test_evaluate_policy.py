"""Pure parts of the orchestrator (no Docker): failure classes, retry rule, sandbox policy, resume keys, progress."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

from harness.batch import manifest, resume
from harness.batch.progress import Progress
from harness.config import load_config
from harness.run import failures
from harness.run.sandbox import NOBODY, SandboxPolicy, data_paths, parse_bytes, participant_user
from harness.runlog import read_statuses
from tests.evaluate_data.support import CONFIG


def classify(**kw):
    base = {"exit_code": 0, "oom_killed": False, "timed_out": None, "instance_statuses": ["ok"] * 3, "expected": 3}
    return failures.classify_run(**{**base, **kw})


def test_classification_precedence():
    assert classify() == failures.Outcome("ok", None, False)
    assert classify(oom_killed=True, exit_code=137, timed_out="idle").status == "oom"
    assert classify(exit_code=137, timed_out="total timeout (5 s)").status == "timeout"
    out = classify(exit_code=3, instance_statuses=["ok"])
    assert out.status == "crash" and out.partial and "exit code 3 after 1/3" in out.reason
    assert classify(instance_statuses=["ok", "ok"]).status == "crash"  # exit 0 before the end
    assert classify(instance_statuses=["ok", "protocol_violation", "ok"]).status == "protocol_violation"
    out = classify(instance_statuses=["ok", "timeout", "error"])
    assert out.status == "partial" and out.partial and "1 error, 1 timeout" in out.reason
    assert classify(exit_code=None).status == "infra_error"


def test_only_infra_errors_are_retried_once():
    assert failures.should_retry("infra_error", 0) and not failures.should_retry("infra_error", 1)
    for status in failures.STATUSES:
        if status != "infra_error":
            assert not failures.should_retry(status, 0)


def test_sizes_and_users():
    assert parse_bytes("2g") == 2 * 1024**3 and parse_bytes("256m") == 256 * 1024**2 and parse_bytes(512) == 512
    with pytest.raises(ValueError):
        parse_bytes("lots")
    assert participant_user("") == participant_user("root") == participant_user("0") == NOBODY
    assert participant_user("0:1000") == NOBODY and participant_user("toor") == NOBODY
    assert participant_user("1234") == "1234:1234" and participant_user("1234:99") == "1234:99"
    assert participant_user("participant") == "10001:10001"


def test_policy_from_limits():
    config = load_config(CONFIG)
    policy = SandboxPolicy.from_limits(config.limits)
    args = policy.host_config_args("net-x")
    assert args["cap_drop"] == ["ALL"] and args["read_only"] and args["network_mode"] == "net-x"
    assert args["mem_limit"] == args["memswap_limit"] == 256 * 1024**2 and args["pids_limit"] == 64
    assert "device_requests" not in args
    gpu = SandboxPolicy(memory=1, cpus=1, pids=1, shm_size=1, gpus=("0", "2")).host_config_args("n")
    assert gpu["device_requests"][0]["DeviceIDs"] == ["0", "2"]
    env = policy.environment("http://server:8000", "server", 8000)
    assert env["HARNESS_SERVER_URL"] == env["SERVER_URL"] == "http://server:8000" and env["SERVER_PORT"] == "8000"


def test_server_mounts_cover_the_data_only(tmp_path):
    shutil.copytree(CONFIG.parent, tmp_path / "task", ignore=shutil.ignore_patterns("agents", "*.py"))
    config = load_config(tmp_path / "task" / "config.yaml")
    paths = data_paths(config)
    assert set(paths) == {tmp_path / "task" / n for n in ("config.yaml", "dev.en", "dev.es", "test.en", "test.es")}


def test_resume_key_is_content_not_name(tmp_path):
    config = load_config(CONFIG)
    track = config.track()
    hashes = manifest.dataset_hashes(track.dataset("dev"), "text")
    key = resume.content_key("sha256:aaa", config, track.name, "dev", hashes)
    moved = {str(tmp_path / Path(p).name): h for p, h in hashes.items()}
    assert resume.content_key("sha256:aaa", config, track.name, "dev", moved) == key
    assert resume.content_key("sha256:bbb", config, track.name, "dev", hashes) != key
    changed = dict(hashes, **{next(iter(hashes)): "0" * 64})
    assert resume.content_key("sha256:aaa", config, track.name, "dev", changed) != key


def test_torn_last_line_is_not_an_instance(tmp_path):
    log = tmp_path / "instances.log"
    log.write_text('{"index": 0, "status": "ok"}\n{"index": 1, "status": "timeout"}\n{"index": 2, "sta')
    assert read_statuses(log) == {0: "ok", 1: "timeout"}


def test_progress_lines():
    out = io.StringIO()
    p = Progress(stream=out, tty=False)
    p.add("team-a", "test")
    p.update("team-a", state="running", done=3, total=20)
    p.update("team-a", state="running", done=4, total=20)  # same state: no new line
    p.update("team-a", state="ok", done=20, total=20)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and "running" in lines[0] and "3/20" in lines[0] and "20/20" in lines[1]
    tty = io.StringIO()
    p = Progress(stream=tty, tty=True)
    p.add("a", "dev")
    p.add("b", "dev")
    p.render()
    p.update("b", state="running", done=1, total=3)
    p.render()
    assert "\x1b[2F" in tty.getvalue() and "1/3" in tty.getvalue()


def test_leftover_ownership():
    """Resources of a dead harness, or of a pid since reused by another process, are leftovers; ours are not."""
    from harness.run.network import _orphaned, _start_time, labels

    mine = labels("run", "participant")
    assert not _orphaned(mine, None) and _orphaned(mine, os.getpid())
    assert _orphaned(dict(mine, **{"harness.pid": "4194303"}), None)  # above any pid in use: dead
    init = {"harness.pid": "1", "harness.pid_start": _start_time(1)}
    assert not _orphaned(dict(mine, **init), None)  # alive and the same process
    reused = dict(mine, **init)
    reused["harness.pid_start"] = "1" + init["harness.pid_start"]
    assert _orphaned(reused, None)  # the pid now belongs to another process
    assert not _orphaned(dict(mine, **{"harness.pid": "4194303", "harness.host": "elsewhere"}), None)


def test_instance_count_is_the_length_the_server_serves(tmp_path):
    """A blank line in a text source is an instance for the server, so it is one for the watchdog too."""
    from harness.data.loader import load_dataset
    from harness.run.spec import count_instances

    (tmp_path / "s.en").write_text("one\n\nthree\n", encoding="utf-8")
    (tmp_path / "r.es").write_text("uno\ndos\ntres\n", encoding="utf-8")
    (tmp_path / "c.yaml").write_text(
        "task: t\ntracks:\n  - name: tr\n    modality: text\n    source_lang: en\n    target_lang: es\n"
        "    datasets:\n      dev: {source: s.en, references: {orig: r.es}}\n", encoding="utf-8")
    track = load_config(tmp_path / "c.yaml").track("tr")
    ds = track.dataset("dev")
    assert count_instances(track, ds) == len(load_dataset("text", ds.source, ds.references)) == 3
