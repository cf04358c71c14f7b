"""Extra context through `harness evaluate` with the real Docker engine: the context-terms template (its
`prepare:` reads the PDF with pypdf, network off), the mounts read-only at /context and /prepared with their
variables, nothing of it on a track without context, and a prepare that fails or outlives its limit (on a swarm:
tests/test_swarm_docker.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.layout import ResultsDir
from harness.runmeta import read_run_meta
from tests.context_task import (
    PLAIN_COMMAND,
    PROBE_COMMAND,
    PROBE_PREPARE,
    context_template,
    evaluate_runs,
    make_context_task,
)
from tests.templates_util import records

pytestmark = [pytest.mark.docker, pytest.mark.slow]

def test_context_reaches_the_container_read_only_and_prepare_runs_offline(tmp_path: Path) -> None:
    cfg = make_context_task(tmp_path / "task")
    subs = tmp_path / "subs"
    context_template(subs, "template", "text-en-es-context")
    context_template(subs, "probe", "text-en-es-context", PROBE_COMMAND, PROBE_PREPARE)
    context_template(subs, "plain", "text-en-es", PLAIN_COMMAND, prepare="")
    out = tmp_path / "results"
    runs = evaluate_runs(subs, cfg, out)
    assert {k: r["status"] for k, r in runs.items()} == {"template": "ok", "probe": "ok", "plain": "ok"}, runs
    results = ResultsDir(out)
    # the template: pypdf read the paper during prepare, and its terms changed what the agent wrote
    template = results.run("template", "dev")
    assert "4 terms" in template.prepare_log.read_text(encoding="utf-8")
    assert records(template.path)[0][0] == "We stream with SimulStream today"
    entry = json.loads(results.submission("template").manifest.read_text())["runs"]["dev"]
    timings = entry["timings"]
    mounts = {m["destination"]: m["rw"] for m in entry["isolation"]["mounts"]}  # read back from docker inspect
    assert mounts == {"/context": False, "/prepared": False}
    assert timings["prepare_s"] > 0
    assert read_run_meta(template)["manifest"]["timings"]["prepare_s"] == timings["prepare_s"]
    # the probe: the list rewritten to the mount, both folders read-only, and prepare had only loopback
    log = results.run("probe", "dev").client_log.read_text(encoding="utf-8")
    assert "LIST=/context/context.list PREPARED=/prepared" in log
    assert "/context/docs/000-talk1.pdf" in log and "CONTEXT-RO" in log and "PREPARED-RO" in log
    assert "NET-OFF" in log and "\nlo\n" in log and "eth0" not in log
    # a track without context: no variable, no mount, no terms
    plain = results.run("plain", "dev")
    assert "LIST=none PREPARED=none" in plain.client_log.read_text(encoding="utf-8")
    assert "NO-CONTEXT" in plain.client_log.read_text(encoding="utf-8")
    assert records(plain.path)[0][0] == "we stream with simulstream today"
    assert not plain.prepare_log.exists()
    plain_entry = json.loads(results.submission("plain").manifest.read_text())["runs"]["dev"]
    assert plain_entry["isolation"]["mounts"] == [] and "prepare_s" not in plain_entry["timings"]


def test_a_prepare_that_fails_or_outlives_its_limit_ends_the_run(tmp_path: Path) -> None:
    cfg = make_context_task(tmp_path / "task", "limits: {prepare_timeout_s: 2}\n")
    subs = tmp_path / "subs"
    context_template(subs, "slowprep", "text-en-es-context", prepare="echo preparing; sleep 300")
    context_template(subs, "badprep", "text-en-es-context", prepare="echo no such paper >&2; exit 3")
    context_template(subs, "noexe", "text-en-es-context", prepare=["/no/such/prepare"])
    runs = evaluate_runs(subs, cfg, tmp_path / "results")
    assert runs["noexe"]["status"] == "crash"
    assert runs["noexe"]["reason"] == "prepare: executable file not found: /no/such/prepare"
    assert runs["slowprep"]["status"] == "timeout"
    assert runs["slowprep"]["reason"] == "prepare: did not finish within limits.prepare_timeout_s (2 s)"
    assert runs["badprep"]["status"] == "crash"
    assert runs["badprep"]["reason"] == "prepare: exited with code 3: no such paper"
    assert "preparing" in ResultsDir(tmp_path / "results").run("slowprep", "dev").prepare_log.read_text()


def test_prepare_asks_for_the_runs_gpus(tmp_path: Path) -> None:
    """`limits.gpus` reaches the prepare container, which starts first: on an engine without the NVIDIA runtime
    the run ends at prepare, on the engine's refusal of the GPU request (a GPU host runs it on its GPUs)."""
    from harness.run.docker_backend import docker_api

    if "nvidia" in (docker_api().info().get("Runtimes") or {}):
        pytest.skip("this engine has the NVIDIA runtime: the request would be granted")
    cfg = make_context_task(tmp_path / "task", "limits: {gpus: 1}\n")
    subs = tmp_path / "subs"
    context_template(subs, "gpuprep", "text-en-es-context", prepare="echo PREPARE-STARTED")
    out = tmp_path / "results"
    run = evaluate_runs(subs, cfg, out)["gpuprep"]
    assert run["status"] == "infra_error", run
    assert run["reason"].startswith("prepare: the engine could not start it: ") and "nvidia" in run["reason"]
    entry = json.loads(ResultsDir(out).submission("gpuprep").manifest.read_text())["runs"]["dev"]
    assert "prepare_s" not in entry["timings"] and "startup_s" not in entry["timings"]
