"""One isolated run against the real Docker engine: what the participant container can and cannot do.

Each case runs the probe agent (tests/evaluate_data/agents/probe_agent.py) in its own run and checks the failure
class and that no container or network of the run is left behind.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest

from harness.config import load_config
from harness.run import failures, network
from harness.run.docker_backend import docker_api
from tests.evaluate_data.support import CONFIG, HostListener, generous_config, leftovers, run_probe, tagged

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def config():
    return load_config(CONFIG)

@pytest.fixture(scope="module")
def patient(tmp_path_factory: pytest.TempPathFactory):
    """CONFIG with timeouts far above what a probe takes on a loaded machine: the probes that scan the filesystem or
    try connections end by themselves, never by the clock."""
    return load_config(generous_config(tmp_path_factory.mktemp("patient")))


def test_normal_run_and_flags_read_back(probe_image, config, tmp_path):
    result, log = run_probe(probe_image, config, tmp_path, "copy")
    assert result.outcome.status == failures.OK, result.outcome
    assert result.exit_code == 0 and result.instances_done == 3
    iso = result.isolation
    assert iso["cap_drop"] == ["ALL"] and not iso["cap_add"] and not iso["privileged"]
    assert any(o.startswith("no-new-privileges") for o in iso["security_opt"])
    assert iso["read_only_rootfs"] and "/tmp" in iso["tmpfs"] and iso["mounts"] == []
    assert iso["memory_bytes"] == 256 * 1024**2 == iso["memory_swap_bytes"]
    assert iso["pids_limit"] == 64 and iso["nano_cpus"] == 10**9 and iso["shm_size_bytes"] == 16 * 1024**2
    assert iso["network_internal"] and not iso["network_host_address"]
    assert not iso["user"].startswith("0") and iso["user"] != "root"
    tm = result.timings
    assert all(tm[t] > 0 for t in ("network_s", "server_ready_s", "startup_s", "run_s", "teardown_s")), tm
    # stamped from one start, in order: network made, server answering, participant started; then run, teardown
    assert tm["network_s"] <= tm["server_ready_s"] <= tm["startup_s"], tm
    assert tm["startup_s"] + tm["run_s"] + tm["teardown_s"] <= tm["total_s"], tm
    lines = [json.loads(x) for x in (tmp_path / "instances.log").read_text().splitlines()]
    assert [r["prediction"] for r in lines] == (Path(CONFIG).parent / "dev.en").read_text().splitlines()


def test_inside_the_container(probe_image, config, tmp_path):
    result, log = run_probe(probe_image, config, tmp_path, "whoami")
    me = tagged(log, "WHOAMI")
    assert me["uid"] != 0 and me["gid"] != 0
    assert int(me["cap_eff"], 16) == 0
    assert me["no_new_privs"] == "1"
    assert me["writable"] == {"/": False, "/app": False, "/etc": False, "/tmp": True, "/dev/shm": True}
    url = me["env"]["HARNESS_SERVER_URL"]
    assert url == me["env"]["SERVER_URL"] == f"http://{me['env']['SERVER_HOST']}:{me['env']['SERVER_PORT']}"
    # it exits 0 without translating: a crash (exited early), not ok
    assert result.outcome.status == failures.CRASH and result.instances_done == 0


def _bridge_gateway() -> str:
    out = subprocess.run(["docker", "network", "inspect", "bridge", "-f", "{{(index .IPAM.Config 0).Gateway}}"],
                         capture_output=True, text=True, check=True).stdout.strip()
    return out or "172.17.0.1"


def test_network_reaches_only_the_server(probe_image, patient, tmp_path):
    """Host listener (docker0 gateway, own bridge's gateway), another run's network and container: all fail."""
    api = docker_api()
    other_run = "test-other-" + uuid.uuid4().hex[:6]
    other = network.create_network(api, f"harness-{other_run}-net", other_run)
    listener = HostListener()
    cid = None
    try:
        c = api.create_container(
            probe_image, entrypoint=["python3", "-m", "http.server", "8080"], labels=network.labels(other_run, "x"),
            host_config=api.create_host_config(network_mode=other["Name"]))
        cid = c["Id"]
        api.start(cid)
        other_ip = api.inspect_container(cid)["NetworkSettings"]["Networks"][other["Name"]]["IPAddress"]
        other_gw = other["IPAM"]["Config"][0]["Gateway"]
        targets = [f"{_bridge_gateway()}:{listener.port}", f"{other_gw}:{listener.port}", f"{other_ip}:8080",
                   f"127.0.0.1:{listener.port}", "server:8000"]
        result, log = run_probe(probe_image, patient, tmp_path, "net", *targets)
        reached = tagged(log, "NET")
        assert reached.pop("server:8000") == "connected", "positive control: the server must be reachable"
        assert all(v != "connected" for v in reached.values()), reached
        assert listener.accepted == []
    finally:
        listener.close()
        if cid:
            api.remove_container(cid, force=True)
        api.remove_network(other["Id"])
    assert leftovers(f"harness.run={other_run}") == []


def test_own_gateway_unreachable(probe_image, patient, tmp_path):
    """The run's own bridge has no host address: the container's default gateway answers nothing."""
    listener = HostListener()
    try:
        result, log = run_probe(probe_image, patient, tmp_path, "net", f"GATEWAY:{listener.port}")
    finally:
        listener.close()
    reached = tagged(log, "NET")
    assert all(v != "connected" for v in reached.values()), reached
    assert listener.accepted == []


def test_references_are_absent(probe_image, patient, tmp_path):
    needle = (Path(CONFIG).parent / "dev.es").read_text(encoding="utf-8").splitlines()[0]
    result, log = run_probe(probe_image, patient, tmp_path, "refs", needle)
    found = tagged(log, "REFS")
    assert found == {"found": [], "env": []}
    # the server, which alone has the data, did log the reference
    assert result.outcome.status == failures.CRASH and result.instances_done == 0


def test_memory_bomb_is_oom(probe_image, patient, tmp_path):
    """Under the patient timeouts: on a loaded machine the kernel may reclaim for many seconds before it kills."""
    result, _ = run_probe(probe_image, patient, tmp_path, "oom")
    assert result.oom_killed
    assert result.outcome.status == failures.OOM, result.outcome


def test_fork_bomb_hits_pids_limit(probe_image, config, tmp_path):
    result, log = run_probe(probe_image, config, tmp_path, "fork")
    line = next(ln for ln in log.splitlines() if ln.startswith("FORK "))
    children = int(line.split()[1].split("=")[1])
    assert 0 < children < 64, line
    assert result.outcome.status == failures.CRASH, result.outcome


def test_hang_times_out(probe_image, config, tmp_path):
    result, _ = run_probe(probe_image, config, tmp_path, "hang")
    assert result.outcome.status == failures.TIMEOUT, result.outcome
    assert "idle timeout" in result.outcome.reason
    assert result.timings["run_s"] < config.limits.instance_timeout_s + config.limits.idle_timeout_s + 5


def test_endless_output_is_capped(probe_image, config, tmp_path):
    result, _ = run_probe(probe_image, config, tmp_path, "spam")
    size = (tmp_path / "client.log").stat().st_size
    cap = config.limits.client_log_max_bytes
    assert result.client_log_truncated and cap <= size <= cap + 200
    assert result.outcome.status == failures.OK, result.outcome


def test_crash_halfway(probe_image, config, tmp_path):
    result, _ = run_probe(probe_image, config, tmp_path, "crash-after-1")
    assert result.outcome.status == failures.CRASH and result.outcome.partial
    assert result.exit_code == 3 and result.instances_done == 1
