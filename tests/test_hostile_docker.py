"""Hostile submissions through the real Docker path of `harness evaluate` (issue 13 items 2, 3, 4, 5, 8, 9).

Every wait is on a condition read from Docker or from the run's files, bounded by a limit derived from the
configured deadlines; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import io
import json
import math
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness import layout
from harness.batch.progress import Progress
from harness.batch.scheduler import EvaluateOptions, evaluate
from harness.config import load_config
from harness.intake.discover import discover
from harness.run import deadlines
from harness.run.docker_backend import docker_api
from harness.runlog import read_statuses
from tests.evaluate_data.support import HERE, make_submission

pytestmark = [pytest.mark.docker, pytest.mark.slow]

LIMITS = {"cpus": 1, "memory": "256m", "pids": 64, "shm_size": "16m", "gpus": 0, "instance_timeout_s": 5,
          "idle_timeout_s": 3, "total_timeout_s": 40, "client_log_max_bytes": 20000}


def write_config(root: Path, **limits: Any) -> Path:
    """A copy of the tiny evaluate-tests task (3 sentences per dataset) with `limits` changed."""
    root.mkdir(parents=True, exist_ok=True)
    for name in ("dev.en", "dev.es"):
        shutil.copy2(HERE / name, root / name)
    doc = {"task": "hostile-tests", "tracks": [{
        "name": "text-en-es", "modality": "text", "source_lang": "en", "target_lang": "es", "latency_unit": "word",
        "quality": ["BLEU"], "latency": ["AL", "LAAL"], "primary": {"quality": "BLEU", "latency": "LAAL"},
        "datasets": {"dev": {"source": "dev.en", "references": {"orig": "dev.es"}}}}],
        "limits": {**LIMITS, **limits}}
    path = root / "config.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def base() -> str:
    """The server image, also the FROM of the probe submissions."""
    from harness.images.base import ensure_base_image

    return ensure_base_image()


def docker(*args: str) -> str:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=True, timeout=120).stdout


def inspect(cid: str) -> dict[str, Any]:
    return json.loads(docker("inspect", cid))[0]


def containers(pid: int, role: str) -> list[str]:
    return docker("ps", "-a", "-q", "--filter", f"label=harness.pid={pid}",
                  "--filter", f"label=harness.role={role}").split()


def wait_for(what: str, condition: Callable[[], Any], limit_s: float, every_s: float = 0.2) -> Any:
    """Poll `condition` every `every_s` until it returns something truthy; fail after `limit_s` (a bound, not a
    timing)."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(every_s)
    raise AssertionError(f"not within {limit_s:g} s: {what}")


def remove_leftovers(pid: int) -> None:
    from harness.run.network import remove_resources

    remove_resources(docker_api(), only_pid=pid)


def evaluate_process(subs: Path, config: Path, out: Path, server_image: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "harness", "evaluate", str(subs), "--config", str(config),
                             "--output", str(out), "--dataset", "dev", "--server-image", server_image],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def running_pair(pid: int) -> tuple[str, str] | None:
    """(server, participant) container ids once both run (the server listens). A participant listed and then gone
    before it is inspected (an attempt torn down, to be retried) is not running: the caller asks again."""
    server, part = containers(pid, "server"), containers(pid, "participant")
    if not (server and part):
        return None
    found = subprocess.run(["docker", "inspect", part[0]], capture_output=True, text=True, timeout=120)
    if found.returncode == 0 and json.loads(found.stdout)[0]["State"]["Running"]:
        return server[0], part[0]
    return None


# ------------------------------------------------------------------------------------------ item 3: server


def test_server_container_is_limited_unprivileged_and_writes_only_its_run_folder(tmp_path: Path, base: str) -> None:
    config = write_config(tmp_path / "task", total_timeout_s=300, instance_timeout_s=300, idle_timeout_s=300)
    subs, out = tmp_path / "subs", tmp_path / "results"
    make_submission(subs, "hangs", "python3 /app/probe_agent.py hang", base=base)
    proc = evaluate_process(subs, config, out, base)
    try:
        server, _ = wait_for("server and participant running", lambda: running_pair(proc.pid), 120)
        info = inspect(server)
        hc, limits = info["HostConfig"], load_config(config).limits
        from harness.run.sandbox import parse_bytes

        assert hc["Memory"] > 0 and (hc["PidsLimit"] or 0) > 0  # today: neither (0 and None)
        assert hc["Memory"] == parse_bytes(limits.server_memory)
        assert hc["MemorySwap"] == hc["Memory"]
        assert hc["PidsLimit"] == limits.server_pids > 0
        uid = info["Config"]["User"].split(":")[0]
        assert uid and uid != "0" and uid != "root"
        assert hc["CapDrop"] == ["ALL"] and "no-new-privileges:true" in hc["SecurityOpt"]
        assert hc["ReadonlyRootfs"] is True
        run_dir = (out / "hangs" / "dev").resolve()
        writable = [m["Destination"] for m in info["Mounts"] if m["RW"]]
        assert writable == [str(run_dir)]

        def can_write(path: Path) -> bool:
            return subprocess.run(["docker", "exec", server, "sh", "-c", f"echo x > '{path}'"],
                                  capture_output=True, timeout=60).returncode == 0

        assert can_write(run_dir / "probe.txt")
        assert not can_write(out.resolve() / "escaped.txt")
        assert not can_write(out.resolve() / "hangs" / "escaped.txt")
        assert not can_write(config.parent.resolve() / "dev.es")
        assert not can_write(Path("/escaped.txt"))
        assert not (out / "escaped.txt").exists() and not (out / "hangs" / "escaped.txt").exists()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=120)
        remove_leftovers(proc.pid)


# ------------------------------------------------------------------------------------ item 4: own deadline


def test_containers_end_themselves_when_the_harness_is_gone(tmp_path: Path, base: str) -> None:
    """The harness is frozen with SIGSTOP, then SIGKILLed once the containers ended: a frozen harness does for
    the containers exactly what a dead one does (nothing), while its live pid keeps other harness processes on
    this host from removing its containers as leftovers of a dead one in the middle of the test."""
    total = 3.0
    config = write_config(tmp_path / "task", total_timeout_s=total, instance_timeout_s=100, idle_timeout_s=100)
    subs, out = tmp_path / "subs", tmp_path / "results"
    make_submission(subs, "forever", "python3 /app/probe_agent.py hang", base=base)
    proc = evaluate_process(subs, config, out, base)
    try:
        server, part = wait_for("server and participant running", lambda: running_pair(proc.pid), 120)
        proc.send_signal(signal.SIGSTOP)
        # the latest moment either container may still run: the server's own deadline (the longer one) + margin
        limit = deadlines.server_deadline_s(load_config(config).limits) + 30

        def both_exited() -> bool:
            return not inspect(server)["State"]["Running"] and not inspect(part)["State"]["Running"]

        # a wait of about a minute and a half: asked every 2 s (each question is two `docker inspect` processes)
        wait_for("the orphaned server and participant to end themselves", both_exited, limit, every_s=2.0)
        assert inspect(part)["State"]["ExitCode"] != 0
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        remove_leftovers(proc.pid)


def test_argv_command_runs_under_the_watchdog_too(tmp_path: Path, base: str) -> None:
    """A list `command` in an image with /bin/sh gets the same deadline as a shell string."""
    config = write_config(tmp_path / "task", total_timeout_s=300, instance_timeout_s=300, idle_timeout_s=300)
    subs, out = tmp_path / "subs", tmp_path / "results"
    make_submission(subs, "argv", ["python3", "/app/probe_agent.py", "hang"], base=base)
    proc = evaluate_process(subs, config, out, base)
    try:
        _, part = wait_for("server and participant running", lambda: running_pair(proc.pid), 120)
        cfg = inspect(part)["Config"]
        deadline = str(math.ceil(deadlines.participant_deadline_s(load_config(config).limits)))
        assert cfg["Entrypoint"] == ["/bin/sh"]
        assert cfg["Cmd"][-5:] == ["harness-deadline", deadline, "python3", "/app/probe_agent.py", "hang"]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=120)
        remove_leftovers(proc.pid)


# --------------------------------------------------------------------- item 2: a server killed mid-run


def test_server_dying_under_a_participant_is_that_participants_failure(tmp_path: Path, base: str) -> None:
    config = write_config(tmp_path / "task", total_timeout_s=60)
    subs, out = tmp_path / "subs", tmp_path / "results"
    make_submission(subs, "kills-server", "python3 /app/probe_agent.py crash-after-1; sleep 1000", base=base)
    log = layout.ResultsDir(out).run("kills-server", "dev").instances_log
    proc = evaluate_process(subs, config, out, base)
    try:
        server = wait_for("the first instance logged", lambda: read_statuses(log) and containers(proc.pid, "server"),
                          180)[0]
        docker("kill", server)
        stdout, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, stdout
    finally:
        if proc.poll() is None:
            proc.kill()
        remove_leftovers(proc.pid)
    summary = json.loads(layout.ResultsDir(out).summary.read_text())
    (record,) = summary["runs"]
    assert record["status"] == "protocol_violation", record
    assert "server" in record["reason"]
    manifest = json.loads(layout.SubmissionDir(out / "kills-server").manifest.read_text())
    assert manifest["runs"]["dev"]["attempts"] == 1


# ---------------------------------------- items 5, 8, 9: resume key, self-declared baseline, manifest, progress


def run_batch(subs: Path, config: Path, out: Path, base: str, resume: bool) -> tuple[dict[str, Any], str]:
    stream = io.StringIO()
    opts = EvaluateOptions(submissions=discover([subs]), config=load_config(config), output=out, datasets=["dev"],
                           resume=resume, server_image=base)
    summary = evaluate(opts, progress=Progress(stream=stream, tty=False))
    return summary, stream.getvalue()


@pytest.fixture(scope="module")
def resumed(tmp_path_factory: pytest.TempPathFactory, base: str) -> Iterator[dict[str, Any]]:
    """One submission claiming `baseline: true`: evaluated, then resumed after its command changed, then resumed
    again unchanged."""
    root = tmp_path_factory.mktemp("resume")
    config = write_config(root / "task")
    subs, out = root / "subs", root / "results"
    folder = make_submission(subs, "claims", "python3 /app/probe_agent.py copy", base=base,
                             extra_yaml="baseline: true\n")
    first, _ = run_batch(subs, config, out, base, resume=False)
    manifest1 = json.loads(layout.SubmissionDir(out / "claims").manifest.read_text())
    doc = yaml.safe_load((folder / "submission.yaml").read_text())
    doc["command"] = "python3 /app/probe_agent.py crash-after-1"  # same image, another command
    (folder / "submission.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    second, _ = run_batch(subs, config, out, base, resume=True)
    manifest2 = json.loads(layout.SubmissionDir(out / "claims").manifest.read_text())
    third, progress3 = run_batch(subs, config, out, base, resume=True)
    yield {"first": first, "manifest1": manifest1, "second": second, "manifest2": manifest2, "third": third,
           "progress3": progress3}


def test_self_declared_baseline_gets_no_baseline_flag(resumed: dict[str, Any]) -> None:
    (record,) = resumed["first"]["runs"]
    assert record["status"] == "ok"
    assert record["baseline"] is False


def test_resume_redoes_a_run_whose_command_changed(resumed: dict[str, Any]) -> None:
    (record,) = resumed["second"]["runs"]
    assert record["status"] == "crash", record
    assert not resumed["manifest2"]["runs"]["dev"].get("resumed")


def test_resumed_failed_run_shows_the_instances_it_really_finished(resumed: dict[str, Any]) -> None:
    (record,) = resumed["third"]["runs"]
    assert record["status"] == "crash"
    lines = [line for line in resumed["progress3"].splitlines() if "(resumed)" in line]
    assert lines and " 1/3 " in lines[-1], resumed["progress3"]


def test_manifest_total_covers_scoring(resumed: dict[str, Any]) -> None:
    timings = resumed["manifest1"]["runs"]["dev"]["timings"]
    assert timings["score_s"] > 0
    assert timings["total_s"] >= timings["score_s"] + timings["run_s"]


def test_every_attempt_keeps_its_status_and_reason(tmp_path: Path, base: str) -> None:
    """A server image that cannot start: infra_error, retried once; both attempts stay in the manifest."""
    broken = tmp_path / "broken-server"
    broken.mkdir()
    (broken / "Dockerfile").write_text(f"FROM {base}\nENTRYPOINT [\"/bin/false\"]\n", encoding="utf-8")
    tag = "harness-hostile-broken-server:latest"
    docker("build", "-q", "-t", tag, str(broken))
    config = write_config(tmp_path / "task")
    subs, out = tmp_path / "subs", tmp_path / "results"
    make_submission(subs, "victim", "python3 /app/probe_agent.py copy", base=base)
    try:
        summary, _ = run_batch(subs, config, out, tag, resume=False)
    finally:
        docker("rmi", "-f", tag)
    (record,) = summary["runs"]
    assert record["status"] == "infra_error"
    entry = json.loads(layout.SubmissionDir(out / "victim").manifest.read_text())["runs"]["dev"]
    assert entry["attempts"] == 2
    history = entry["attempt_outcomes"]
    assert [a["status"] for a in history] == ["infra_error", "infra_error"]
    assert all(a["reason"] for a in history)

