"""Extra context through `harness evaluate` with the real Docker engine: the context-terms template (its
`prepare:` reads the PDF with pypdf, network off), the mounts read-only at /context and /prepared with their
variables, nothing of it on a track without context, and a prepare that fails or outlives its limit."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.images.base import DEFAULT_TAG
from harness.layout import ResultsDir
from harness.runmeta import read_run_meta
from tests.context_task import make_context_task
from tests.templates_util import TEMPLATES, records

pytestmark = [pytest.mark.docker, pytest.mark.slow]

CLIENT = 'harness client --server "$HARNESS_SERVER_URL" --agent /app/agent.py'
#: the prepare probe: what it sees (network interfaces, the context list) into the prepared folder
PROBE_PREPARE = ('ls /sys/class/net > "$HARNESS_PREPARED_DIR/net.txt"; '
                 'python3 -c "import socket; socket.create_connection((\'8.8.8.8\', 53), 3)" '
                 '|| echo NET-OFF >> "$HARNESS_PREPARED_DIR/net.txt"; python3 /app/prepare.py')
#: the run probe: the variables and mounts, printed into client.log, then the agent
PROBE_COMMAND = ('echo "LIST=$HARNESS_CONTEXT_LIST PREPARED=$HARNESS_PREPARED_DIR"; cat "$HARNESS_CONTEXT_LIST"; '
                 'ls -l /context/docs; touch /context/x 2>/dev/null && echo CONTEXT-WRITABLE || echo CONTEXT-RO; '
                 'touch /prepared/y 2>/dev/null && echo PREPARED-WRITABLE || echo PREPARED-RO; '
                 'cat /prepared/net.txt; ' + CLIENT)
PLAIN_COMMAND = ('echo "LIST=${HARNESS_CONTEXT_LIST:-none} PREPARED=${HARNESS_PREPARED_DIR:-none}"; '
                 'ls /context 2>/dev/null || echo NO-CONTEXT; ' + CLIENT)


def _template(subs: Path, name: str, track: str, command: str | None = None,
              prepare: str | list[str] | None = None) -> None:
    """A copy of agent_templates/context_terms (FROM this checkout's base), with its own track/commands."""
    from agent_templates.fill_wheels import fill

    template = TEMPLATES / "context_terms"
    assert fill(template) == 0  # git-ignored wheels/, kept between runs
    folder = subs / name
    shutil.copytree(template, folder)
    dockerfile = folder / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("FROM harness-base:latest", f"FROM {DEFAULT_TAG}"))
    doc = (folder / "submission.yaml").read_text(encoding="utf-8").replace("text-en-es-context", track)
    lines = [ln for ln in doc.splitlines() if not (command and ln.startswith("command:"))
             and not (prepare is not None and ln.startswith("prepare:"))]
    if command:
        lines.append(f"command: {json.dumps(command)}")
    if prepare:
        lines.append(f"prepare: {json.dumps(prepare)}")
    (folder / "submission.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _evaluate(subs: Path, cfg: Path, out: Path, *extra: str) -> dict[str, dict]:
    proc = subprocess.run([sys.executable, "-m", "harness", "evaluate", str(subs), "--config", str(cfg), "--output",
                           str(out), "--dataset", "dev", *extra], capture_output=True, text=True, timeout=1800)
    assert (out / "summary.json").is_file(), proc.stderr
    return {r["submission"]: r for r in json.loads(ResultsDir(out).summary.read_text())["runs"]}


def test_context_reaches_the_container_read_only_and_prepare_runs_offline(tmp_path: Path) -> None:
    cfg = make_context_task(tmp_path / "task")
    subs = tmp_path / "subs"
    _template(subs, "template", "text-en-es-context")
    _template(subs, "probe", "text-en-es-context", PROBE_COMMAND, PROBE_PREPARE)
    _template(subs, "plain", "text-en-es", PLAIN_COMMAND, prepare="")
    out = tmp_path / "results"
    runs = _evaluate(subs, cfg, out)
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
    _template(subs, "slowprep", "text-en-es-context", prepare="echo preparing; sleep 300")
    _template(subs, "badprep", "text-en-es-context", prepare="echo no such paper >&2; exit 3")
    _template(subs, "noexe", "text-en-es-context", prepare=["/no/such/prepare"])
    runs = _evaluate(subs, cfg, tmp_path / "results")
    assert runs["noexe"]["status"] == "crash"
    assert runs["noexe"]["reason"] == "prepare: executable file not found: /no/such/prepare"
    assert runs["slowprep"]["status"] == "timeout"
    assert runs["slowprep"]["reason"] == "prepare: did not finish within limits.prepare_timeout_s (2 s)"
    assert runs["badprep"]["status"] == "crash"
    assert runs["badprep"]["reason"] == "prepare: exited with code 3: no such paper"
    assert "preparing" in ResultsDir(tmp_path / "results").run("slowprep", "dev").prepare_log.read_text()


@pytest.fixture()
def swarm():
    """This engine as a single-node swarm manager (as tests/test_swarm_docker.py makes it); left if made here."""
    from harness.run.docker_backend import docker_api

    made = str((docker_api().info().get("Swarm") or {}).get("LocalNodeState")) != "active"
    if made:
        subprocess.run(["docker", "swarm", "init", "--advertise-addr", "127.0.0.1"], capture_output=True, text=True,
                       check=True)
    yield
    if made:
        subprocess.run(["docker", "swarm", "leave", "--force"], capture_output=True, text=True, check=True)


def test_a_single_node_swarm_gives_the_same_context_and_prepare(swarm, tmp_path: Path) -> None:
    cfg = make_context_task(tmp_path / "task")
    subs = tmp_path / "subs"
    _template(subs, "probe", "text-en-es-context", PROBE_COMMAND, PROBE_PREPARE)
    out = tmp_path / "results"
    runs = _evaluate(subs, cfg, out, "--backend", "swarm")
    assert runs["probe"]["status"] == "ok", runs["probe"]
    run = ResultsDir(out).run("probe", "dev")
    log = run.client_log.read_text(encoding="utf-8")
    assert "LIST=/context/context.list PREPARED=/prepared" in log and "/context/docs/000-talk1.pdf" in log
    assert "CONTEXT-RO" in log and "PREPARED-RO" in log and "NET-OFF" in log
    assert records(run.path)[0][0] == "We stream with SimulStream today"
    entry = json.loads(ResultsDir(out).submission("probe").manifest.read_text())["runs"]["dev"]
    assert entry["isolation"]["backend"] == "swarm" and entry["timings"]["prepare_s"] > 0


def test_prepare_asks_for_the_runs_gpus(tmp_path: Path) -> None:
    """`limits.gpus` reaches the prepare container, which starts first: on an engine without the NVIDIA runtime
    the run ends at prepare, on the engine's refusal of the GPU request (a GPU host runs it on its GPUs)."""
    from harness.run.docker_backend import docker_api

    if "nvidia" in (docker_api().info().get("Runtimes") or {}):
        pytest.skip("this engine has the NVIDIA runtime: the request would be granted")
    cfg = make_context_task(tmp_path / "task", "limits: {gpus: 1}\n")
    subs = tmp_path / "subs"
    _template(subs, "gpuprep", "text-en-es-context", prepare="echo PREPARE-STARTED")
    out = tmp_path / "results"
    run = _evaluate(subs, cfg, out)["gpuprep"]
    assert run["status"] == "infra_error", run
    assert run["reason"].startswith("prepare: the engine could not start it: ") and "nvidia" in run["reason"]
    entry = json.loads(ResultsDir(out).submission("gpuprep").manifest.read_text())["runs"]["dev"]
    assert "prepare_s" not in entry["timings"] and "startup_s" not in entry["timings"]
