"""The Swarm backend on a real single-node swarm: runs as services give the local backend's results, the participant
is confined (flags read back from the container that ran), reaches only its own run's server, and nothing of a run
is left behind; a GPU the swarm does not have, a missing data label and a dead registry are one line each.

The `swarm` fixture of tests/conftest.py makes this engine a swarm manager if it is not one, and leaves the swarm
when the test session ends if it made it; under pytest-xdist these tests run in one worker, in this order (the first
one needs an engine that is not a swarm manager yet).
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.config import load_config
from harness.layout import ResultsDir
from harness.run import failures, network
from harness.run.docker_backend import docker_api
from harness.run.swarm.backend import SwarmBackend, _create_service, remove_services, wait_task_running
from harness.scoring.corpus import score_path
from harness.sizes import parse_bytes
from tests.context_task import PROBE_COMMAND, PROBE_PREPARE, context_template, evaluate_runs, make_context_task
from tests.evaluate_data.support import (
    CONFIG,
    HERE,
    HostListener,
    generous_config,
    leftovers,
    make_submission,
    run_probe,
    swarm_state,
    tagged,
)
from tests.templates_util import records

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def config():
    return load_config(CONFIG)

@pytest.fixture(scope="module")
def patient(tmp_path_factory: pytest.TempPathFactory):
    """CONFIG with timeouts far above what a probe takes on a loaded machine: the probes that scan the filesystem or
    try connections end by themselves, never by the clock."""
    return load_config(generous_config(tmp_path_factory.mktemp("patient")))


def non_ca(scores: dict) -> dict:
    return {k: v for k, v in scores.items() if k != "info" and not k.endswith("_CA")}


def test_evaluate_swarm_on_a_non_manager_is_one_line(tmp_path):
    if swarm_state() == "active":
        pytest.skip("this engine was a swarm manager before the tests began")
    proc = _evaluate(tmp_path, "--backend", "swarm")
    assert proc.returncode != 0
    assert "this Docker engine is not a swarm manager (run `docker swarm init`" in proc.stderr


def test_a_single_node_swarm_gives_the_same_context_and_prepare(swarm, tmp_path: Path) -> None:
    cfg = make_context_task(tmp_path / "task")
    subs = tmp_path / "subs"
    context_template(subs, "probe", "text-en-es-context", PROBE_COMMAND, PROBE_PREPARE)
    out = tmp_path / "results"
    runs = evaluate_runs(subs, cfg, out, "--backend", "swarm")
    assert runs["probe"]["status"] == "ok", runs["probe"]
    run = ResultsDir(out).run("probe", "dev")
    log = run.client_log.read_text(encoding="utf-8")
    assert "LIST=/context/context.list PREPARED=/prepared" in log and "/context/docs/000-talk1.pdf" in log
    assert "CONTEXT-RO" in log and "PREPARED-RO" in log and "NET-OFF" in log
    assert records(run.path)[0][0] == "We stream with SimulStream today"
    entry = json.loads(ResultsDir(out).submission("probe").manifest.read_text())["runs"]["dev"]
    assert entry["isolation"]["backend"] == "swarm" and entry["timings"]["prepare_s"] > 0


def test_swarm_run_gives_the_local_scores(swarm, probe_image, config, tmp_path):
    local, _ = run_probe(probe_image, config, tmp_path / "local", "copy")
    swarm_result, _ = run_probe(probe_image, config, tmp_path / "swarm", "copy", backend=SwarmBackend())
    assert local.outcome.status == swarm_result.outcome.status == failures.OK
    assert swarm_result.instances_done == local.instances_done == 3
    assert non_ca(score_path(tmp_path / "swarm")) == non_ca(score_path(tmp_path / "local"))
    iso = swarm_result.isolation
    assert iso["backend"] == "swarm" and iso["participant_node"] == iso["server_node"] == socket.gethostname()
    assert iso["image"] == docker_api().inspect_image(probe_image)["Id"] == iso["image_id"]
    assert "no-new-privileges" in iso["not_applied_by_swarm"]


def test_swarm_participant_is_confined(swarm, probe_image, config, tmp_path):
    result, log = run_probe(probe_image, config, tmp_path, "whoami", backend=SwarmBackend())
    me = tagged(log, "WHOAMI")
    assert me["uid"] != 0 and me["gid"] != 0
    assert int(me["cap_eff"], 16) == 0
    assert me["writable"] == {"/": False, "/app": False, "/etc": False, "/tmp": True, "/dev/shm": True}
    iso = result.isolation  # read back from the container that ran
    assert iso["cap_drop"] == ["ALL"] and iso["read_only_rootfs"] and not iso["privileged"]
    assert iso["memory_bytes"] == parse_bytes(config.limits.memory) and iso["pids_limit"] == config.limits.pids
    assert iso["network_internal"] and not iso["network_host_address"]
    # the gap the manifest declares is the truth inside the container (Engine API 1.41 has no such service flag)
    assert (me["no_new_privs"] == "1") == ("no-new-privileges" not in iso["not_applied_by_swarm"])
    assert result.outcome.status == failures.CRASH and result.instances_done == 0


def _gateway(net: dict) -> str:
    """A bridge's host address: its IPAM gateway, else the subnet's first address (Docker's rule; a docker_gwbridge
    made moments ago by `swarm init` may not list its gateway yet)."""
    cfg = net["IPAM"]["Config"][0]
    return cfg.get("Gateway") or str(next(ipaddress.ip_network(cfg["Subnet"]).hosts()))


def test_swarm_network_reaches_only_its_server(swarm, probe_image, patient, tmp_path):
    """Host listener (docker0 and docker_gwbridge gateways, loopback), another run's server service on its own
    overlay network, the references: nothing but this run's server answers."""
    api = docker_api()
    other_run = "test-other-" + uuid.uuid4().hex[:6]
    net = api.create_network(f"harness-{other_run}-net", driver="overlay", internal=True,
                             labels=network.labels(other_run, "network"))
    other = _create_service(api, {
        "Name": f"harness-{other_run}-server", "Labels": network.labels(other_run, "server"),
        "TaskTemplate": {"ContainerSpec": {"Image": probe_image, "Command": ["python3", "-m", "http.server", "8080"]},
                         "RestartPolicy": {"Condition": "none"}, "Networks": [{"Target": net["Id"]}]},
        "Mode": {"Replicated": {"Replicas": 1}}, "EndpointSpec": {"Mode": "dnsrr"}})
    listener = HostListener()
    try:
        task = wait_task_running(api, other, "other", 60)
        info = api.inspect_container(task["Status"]["ContainerStatus"]["ContainerID"])
        other_ip = next(iter(info["NetworkSettings"]["Networks"].values()))["IPAddress"]
        gateways = [_gateway(api.inspect_network(n)) for n in ("bridge", "docker_gwbridge")]
        targets = [f"{gw}:{listener.port}" for gw in gateways] + [
            f"{other_ip}:8080", f"127.0.0.1:{listener.port}", f"GATEWAY:{listener.port}", "server:8000"]
        _, log = run_probe(probe_image, patient, tmp_path / "net", "net", *targets, backend=SwarmBackend())
        reached = tagged(log, "NET")
        assert reached.pop("server:8000") == "connected", "positive control: the server must be reachable"
        assert all(v != "connected" for v in reached.values()), reached
        assert listener.accepted == []
        needle = (HERE / "dev.es").read_text(encoding="utf-8").splitlines()[0]
        _, log = run_probe(probe_image, patient, tmp_path / "refs", "refs", needle, backend=SwarmBackend())
        assert tagged(log, "REFS") == {"found": [], "env": []}
    finally:
        listener.close()
        remove_services(api, [other], net["Id"])
    assert leftovers(f"harness.run={other_run}") == []


def test_swarm_memory_bomb_is_oom(swarm, probe_image, patient, tmp_path):
    """Under the patient timeouts: on a loaded machine the kernel may reclaim for many seconds before it kills (a
    full-suite run once saw no kill within the 8 s idle window)."""
    result, _ = run_probe(probe_image, patient, tmp_path, "oom", backend=SwarmBackend())
    assert result.oom_killed and result.outcome.status == failures.OOM


def test_gpus_no_node_advertises_are_one_line(swarm, tmp_path):
    """No node of this swarm advertises a `gpu` generic resource: `harness evaluate` says so before any run, and a run
    started anyway ends at once as infra_error with the same reason (it never waits silently)."""
    doc = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    for track in doc["tracks"]:
        for ds in track["datasets"].values():
            ds["source"] = str(HERE / ds["source"])
            ds["references"] = {k: str(HERE / v) for k, v in ds["references"].items()}
    doc["limits"]["gpus"] = 1
    path = tmp_path / "gpu.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    subs = tmp_path / "subs"
    make_submission(subs, "good", "python3 /app/probe_agent.py copy")
    proc = subprocess.run([sys.executable, "-m", "harness", "evaluate", str(subs), "--config", str(path), "--output",
                           str(tmp_path / "out"), "--dataset", "dev", "--backend", "swarm"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines()[-1].endswith(
        "limits.gpus asks for 1 GPU(s) per run, but no swarm node advertises more than 0 "
        "(node-generic-resources in each worker's daemon.json)")


def test_leftover_services_of_a_dead_harness_are_removed(swarm, probe_image):
    """A service labelled with a pid that no longer lives (a killed harness) goes at the next start. Its owner lives
    while the test sees the service (so no harness that another test starts meanwhile removes it), then dies; the
    removal is then what any harness start does, this test's call or one beside it."""
    owner = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    run = "test-dead-" + uuid.uuid4().hex[:6]
    api = docker_api()
    try:
        _create_service(api, {
            "Name": f"harness-{run}-participant", "Labels": network.labels(run, "participant", pid=owner.pid),
            "TaskTemplate": {"ContainerSpec": {"Image": probe_image, "Command": ["sleep", "600"]},
                             "RestartPolicy": {"Condition": "none"}},
            "Mode": {"Replicated": {"Replicas": 1}}})
        assert leftovers(f"harness.run={run}")
    finally:
        assert owner.stdin is not None
        owner.stdin.close()
        owner.wait()
    network.remove_resources(api)
    deadline = time.monotonic() + 30
    while leftovers(f"harness.run={run}") and time.monotonic() < deadline:
        time.sleep(0.2)  # the task's container goes once the swarm has processed the removal
    assert leftovers(f"harness.run={run}") == []


def _evaluate(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    subs = tmp_path / "subs"
    make_submission(subs, "good", "python3 /app/probe_agent.py copy")
    return subprocess.run([sys.executable, "-m", "harness", "evaluate", str(subs), "--config", str(CONFIG),
                           "--output", str(tmp_path / "out"), "--dataset", "dev", *extra],
                          capture_output=True, text=True, timeout=600, env={**os.environ})


def test_evaluate_backend_swarm_writes_the_manifest(swarm, tmp_path):
    proc = _evaluate(tmp_path, "--backend", "swarm")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    (run,) = summary["runs"]
    assert run["status"] == "ok" and run["scores"]["BLEU"]["score"] > 0
    man = json.loads((tmp_path / "out" / "good" / "manifest.json").read_text())
    iso = man["runs"]["dev"]["isolation"]
    assert iso["backend"] == "swarm" and iso["participant_node"] == socket.gethostname()
    assert iso["image"].startswith("sha256:") and iso["image"] == iso["image_id"]


def test_evaluate_swarm_bad_settings_are_one_line(swarm, tmp_path):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there now
    proc = _evaluate(tmp_path / "a", "--backend", "swarm", "--registry", f"127.0.0.1:{port}")
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines()[-1].endswith(
        f"registry 127.0.0.1:{port} does not answer (ConnectionError): start it, or check --registry / "
        "swarm.registry")
    proc = _evaluate(tmp_path / "b", "--registry", f"127.0.0.1:{port}")
    assert "--registry is for --backend swarm" in proc.stderr


def test_a_task_lost_mid_run_is_infra_error(swarm, probe_image, config, tmp_path):
    """The participant's task disappears while it runs (as when its node is lost): infra_error, which the batch
    retries once; nothing of the run is left."""
    backend = SwarmBackend()
    api = docker_api()

    def lose_the_participant() -> None:
        deadline = time.monotonic() + 120
        while not backend.part_service and time.monotonic() < deadline:
            time.sleep(0.05)
        wait_task_running(api, backend.part_service, "participant", 60)
        api.remove_service(backend.part_service)

    thread = threading.Thread(target=lose_the_participant, daemon=True)
    thread.start()
    result, _ = run_probe(probe_image, config, tmp_path, "hang", backend=backend)
    thread.join(10)
    assert result.outcome.status == failures.INFRA_ERROR, result.outcome
    assert "swarm participant task" in result.outcome.reason
    assert failures.should_retry(result.outcome.status, 0)


def _registry(tmp_path: Path) -> tuple[subprocess.Popen, str]:
    """Debian's docker-registry on a free loopback port (the engine trusts 127.0.0.0/8 over plain HTTP)."""
    import requests

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    cfg = tmp_path / "registry.yml"
    cfg.write_text(yaml.safe_dump({"version": 0.1, "storage": {"filesystem": {"rootdirectory": str(tmp_path / "r")}},
                                   "http": {"addr": f"127.0.0.1:{port}"}, "log": {"level": "error"}}))
    proc = subprocess.Popen(["docker-registry", "serve", str(cfg)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/v2/", timeout=1).status_code == 200:
                return proc, f"127.0.0.1:{port}"
        except requests.RequestException:
            time.sleep(0.1)
    proc.kill()
    pytest.fail("docker-registry did not start")


@pytest.mark.registry
def test_evaluate_with_a_registry_runs_the_pushed_digest(swarm, tmp_path):
    import requests

    proc, registry = _registry(tmp_path)
    try:
        run = _evaluate(tmp_path, "--backend", "swarm", "--registry", registry)
        assert run.returncode == 0, run.stderr
        man = json.loads((tmp_path / "out" / "good" / "manifest.json").read_text())
        iso = man["runs"]["dev"]["isolation"]
        assert iso["image"].startswith(f"{registry}/harness/run@sha256:")
        digest = iso["image"].rpartition("@")[2]
        tags = requests.get(f"http://{registry}/v2/harness/run/tags/list", timeout=5).json()["tags"]
        answers = [requests.head(f"http://{registry}/v2/harness/run/manifests/{t}", timeout=5, headers={
            "Accept": "application/vnd.docker.distribution.manifest.v2+json"}) for t in tags]
        assert digest in {a.headers.get("Docker-Content-Digest") for a in answers}
        assert iso["server_image"].startswith(f"{registry}/harness/run@sha256:")
    finally:
        proc.kill()
        proc.wait()


def test_sigterm_mid_run_leaves_nothing(swarm, tmp_path):
    subs = tmp_path / "subs"
    make_submission(subs, "hangs", "python3 /app/probe_agent.py hang")
    proc = subprocess.Popen([sys.executable, "-m", "harness", "evaluate", str(subs), "--config", str(CONFIG),
                             "--output", str(tmp_path / "out"), "--dataset", "dev", "--backend", "swarm"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not _running_participant(proc.pid) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert _running_participant(proc.pid), "the participant service never ran"
    proc.send_signal(15)
    proc.communicate(timeout=120)
    assert proc.returncode != 0
    assert leftovers(f"harness.pid={proc.pid}") == []


def _running_participant(pid: int) -> bool:
    out = subprocess.run(["docker", "ps", "-q", "--filter", f"label=harness.pid={pid}",
                          "--filter", "label=harness.role=participant"], capture_output=True, text=True).stdout
    return bool(out.strip())


def test_resume_across_backends(swarm, tmp_path):
    """A run finished on the local backend is not run again by `--resume --backend swarm` (same content key)."""
    first = _evaluate(tmp_path)
    assert first.returncode == 0, first.stderr
    again = subprocess.run([sys.executable, "-m", "harness", "evaluate", str(tmp_path / "subs"), "--config",
                            str(CONFIG), "--output", str(tmp_path / "out"), "--dataset", "dev", "--backend", "swarm",
                            "--resume"], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    man = json.loads((tmp_path / "out" / "good" / "manifest.json").read_text())
    assert man["runs"]["dev"]["resumed"] is True
    assert "backend" not in man["runs"]["dev"]["isolation"]  # the local run's record, kept


@pytest.mark.apertium
def test_demo_submissions_score_on_the_swarm_as_in_process(swarm, tmp_path):
    """The demo's three baselines (scripts/demo.sh) on the first sentences of the dev set: on the swarm backend, the
    same non-CA scores as `harness run` gives in-process with each template's own agent options (the local backend's
    equality with the swarm's is `test_swarm_run_gives_the_local_scores`)."""
    import shlex

    from tests.templates_util import TEMPLATES, comparable_scores, demo_text_dev, joint_run

    config = demo_text_dev(tmp_path / "task", 6)  # what the comparison needs: equal scores, sentence by sentence
    demo = {"waitk3": "waitk_apertium", "local-agreement": "local_agreement", "retranslation": "retranslation"}
    out = tmp_path / "swarm"
    run = subprocess.run([sys.executable, "-m", "harness", "evaluate",
                          *(f"{sid}={TEMPLATES / folder}" for sid, folder in demo.items()),
                          "--config", str(config), "--output", str(out), "--dataset", "dev", "--backend", "swarm"],
                         capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stderr
    for sid, folder in demo.items():
        command = shlex.split(yaml.safe_load((TEMPLATES / folder / "submission.yaml").read_text())["command"])
        options = command[command.index("--agent") + 2:]  # what follows `--agent agent.py`
        joint_run(config, "text-en-es", TEMPLATES / folder / "agent.py", tmp_path / "joint" / sid, *options)
        assert comparable_scores(out / sid / "dev") == comparable_scores(tmp_path / "joint" / sid), sid
        assert comparable_scores(out / sid / "dev")["BLEU"]["score"] > 0


def test_a_run_on_a_warm_network_meets_only_its_server(swarm, probe_image, config, tmp_path):
    """After a run, the next run's overlay network is made warm in the background; the next run takes it. Its
    participant is started early, behind the start gate; by the time the gate opens, the network's placeholder is
    gone: the server is the only other endpoint."""
    from harness.run.swarm.spares import SPARES

    first, _ = run_probe(probe_image, config, tmp_path / "first", "copy", backend=SwarmBackend())
    assert first.outcome.status == failures.OK
    SPARES.wait_ready()
    backend = SwarmBackend()
    seen: dict[str, Any] = {}
    open_gate = backend._open_gate

    def look_then_open(gate_file):
        net = docker_api().inspect_network(backend.net["Id"])
        seen["endpoints"] = [c["Name"] for c in (net.get("Containers") or {}).values()]
        seen["participant_created"] = bool(backend.part_service)
        return open_gate(gate_file)

    backend._open_gate = look_then_open
    second, _ = run_probe(probe_image, config, tmp_path / "second", "copy", backend=backend)
    assert backend.spare is not None, "the second run did not take the warm network"
    assert second.outcome.status == failures.OK
    assert seen["participant_created"], "the participant was not started behind the gate"
    others = [e for e in seen["endpoints"] if not e.endswith("-endpoint") and "-participant." not in e]
    assert others == [e for e in seen["endpoints"] if "-server." in e], seen["endpoints"]  # the server (and swarm's LB)
    assert any("-server." in e for e in seen["endpoints"])
    assert not (tmp_path / "second" / ".start-gate").exists(), "the gate file is removed with the run"
    assert non_ca(score_path(tmp_path / "second")) == non_ca(score_path(tmp_path / "first"))

