"""The Swarm backend across real nodes: `scripts/swarm-lab.sh` makes a manager (the data node) and two workers, each a
Docker engine in its own network namespace with its own hostname, the workers advertising one fake GPU each, plus a
registry on the lab's bridge. Runs go through the registry by digest, the server stays on the data node, the
participants go to workers, and isolation, GPU exclusivity, node loss, a drained worker and a dead registry are each
checked for real. The module's last test takes the lab down and checks that nothing of it is left.

Node loss and draining are made deterministic with the probe's `hang-on-gpu` mode: the participant hangs on worker
1's GPU and translates anywhere else, and worker 2 is drained until the test has seen the first attempt running on
worker 1, so the first attempt can only be lost and the retry can only succeed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.clean_env import clean_environment
from tests.evaluate_data.support import CONFIG, HERE, HostListener, make_submission

ROOT = Path(__file__).resolve().parents[1]
LAB_SCRIPT = ROOT / "scripts" / "swarm-lab.sh"
LAB_DIR = Path(os.environ.get("HARNESS_LAB_DIR", "/var/lib/harness-lab"))
BRIDGE_ADDR = "10.213.0.1"
GPU1 = "lab-node1-gpu0"
#: the stand-in weights shipped across the lab: what travels is checked, not how much (tests/test_fetch_docker.py
#: downloads hundreds of MB)
LAB_WEIGHTS_MB = 16

pytestmark = [pytest.mark.docker, pytest.mark.lab, pytest.mark.slow]


def lab_cmd(*args: str) -> str:
    """`scripts/swarm-lab.sh ARGS`; its stdout (a failure shows its stderr: which engine, and how its log ends)."""
    proc = subprocess.run(["bash", str(LAB_SCRIPT), *args], capture_output=True, text=True, timeout=900,
                          env=clean_environment())  # as an organizer's fresh shell runs it
    assert proc.returncode == 0, f"swarm-lab.sh {' '.join(args)}: {proc.stderr[-2000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def lab():
    """The lab's environment (DOCKER_HOST of the manager, HARNESS_REGISTRY), with the base and probe images on the
    manager (loaded from this engine, as an organizer would build them on the data node)."""
    from harness.images.base import DEFAULT_TAG, docker_env, ensure_base_image

    ensure_base_image()
    env = dict(os.environ)
    env.pop("DOCKER_HOST", None)
    lab_env = dict(env)
    for key, value in re.findall(r"^export (\w+)=(\S+)$", lab_cmd("up", "2"), re.M):
        lab_env[key] = value
    subprocess.run(f"docker save {DEFAULT_TAG} | DOCKER_HOST={lab_env['DOCKER_HOST']} docker load", shell=True,
                   check=True, capture_output=True, env={**docker_env(), **env})
    yield {"host": env, "lab": lab_env}
    lab_cmd("down")


def on_lab(lab, *args: str) -> str:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=True, env=lab["lab"]).stdout


def config_file(tmp_path: Path, gpus: int = 0, patient: bool = False) -> Path:
    """The Docker tests' config with absolute data paths, the lab's data label, and optionally GPUs and timeouts far
    longer than any test (so only node loss or the test ends a run)."""
    doc = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    for track in doc["tracks"]:
        for ds in track["datasets"].values():
            ds["source"] = str(HERE / ds["source"])
            ds["references"] = {k: str(HERE / v) for k, v in ds["references"].items()}
    doc["limits"]["gpus"] = gpus
    if patient:
        doc["limits"].update(instance_timeout_s=3600, idle_timeout_s=3600, total_timeout_s=3600)
    doc["backend"] = "swarm"
    doc["swarm"] = {"data_label": "harness.data"}
    path = tmp_path / f"config-gpus{gpus}{'-patient' if patient else ''}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def evaluate(lab, subs: Path, out: Path, config: Path, *extra: str, where: str = "lab",
             background: bool = False):
    args = [sys.executable, "-m", "harness", "evaluate", str(subs), "--config", str(config), "--output", str(out),
            "--dataset", "dev", *extra]
    if where == "lab":
        args += ["--registry", lab["lab"]["HARNESS_REGISTRY"]]
    else:
        args += ["--backend", "local"]
    if background:
        return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=lab[where])
    return subprocess.run(args, capture_output=True, text=True, timeout=900, env=lab[where])


def manifest(out: Path, name: str) -> dict:
    return json.loads((out / name / "manifest.json").read_text())["runs"]["dev"]


def non_ca(out: Path, name: str) -> dict:
    scores = json.loads((out / name / "dev" / "scores.json").read_text())
    return {k: v for k, v in scores.items() if k != "info" and not k.endswith("_CA")}


def lab_leftovers(lab, nodes: tuple[int, ...] = (0, 1, 2)) -> list[str]:
    """The harness's services (manager) and containers and networks on every node named."""
    found = on_lab(lab, "service", "ls", "-q", "--filter", "label=harness=1").split()
    for i in nodes:
        sock = f"unix://{LAB_DIR}/node{i}/docker.sock"
        for what in (["ps", "-a", "-q"], ["network", "ls", "-q"]):
            out = subprocess.run(["docker", "-H", sock, *what, "--filter", "label=harness=1"], capture_output=True,
                                 text=True, check=True).stdout.split()
            found += [f"node{i}:{x}" for x in out]
    return found


def assert_nothing_left(lab, nodes: tuple[int, ...] = (0, 1, 2)) -> None:
    """Nothing of the harness on the nodes named, once their engines have processed the removals (a worker removes a
    task's container after the manager dropped the service: wait for that, bounded)."""
    deadline = time.monotonic() + 60
    while (left := lab_leftovers(lab, nodes)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == [], "left on the lab's nodes"


def test_lab_runs_by_digest_across_nodes_with_the_local_scores(lab, tmp_path):
    subs = tmp_path / "subs"
    make_submission(subs, "good", "python3 /app/probe_agent.py copy")
    config = config_file(tmp_path)
    local = evaluate(lab, subs, tmp_path / "local", config, where="host")
    assert local.returncode == 0, local.stderr
    run = evaluate(lab, subs, tmp_path / "lab", config)
    assert run.returncode == 0, run.stderr
    assert non_ca(tmp_path / "lab", "good") == non_ca(tmp_path / "local", "good")
    iso = manifest(tmp_path / "lab", "good")["isolation"]
    registry = lab["lab"]["HARNESS_REGISTRY"]
    assert iso["server_node"] == "hlab-node0"  # the data node
    assert iso["participant_node"] in ("hlab-node1", "hlab-node2")
    assert iso["image"].startswith(f"{registry}/harness/run@sha256:")
    # the digest that ran is the one the worker's engine pulled
    node = iso["participant_node"][-1]
    pulled = subprocess.run(["docker", "-H", f"unix://{LAB_DIR}/node{node}/docker.sock", "image", "inspect",
                             iso["image"], "-f", "{{json .RepoDigests}}"], capture_output=True, text=True, check=True)
    assert iso["image"] in json.loads(pulled.stdout)
    assert_nothing_left(lab)


#: a submission that needs a Debian package: installed by a RUN step, then used by the command before it translates
APT_DOCKERFILE = ("FROM {base}\nUSER root\nRUN apt-get update && apt-get install -y --no-install-recommends bc "
                  "&& rm -rf /var/lib/apt/lists/*\nUSER participant\nCOPY probe_agent.py /app/probe_agent.py\n")
APT_COMMAND = ["sh", "-c", 'test "$(echo 6*7 | bc)" = 42 && exec python3 /app/probe_agent.py copy']


def test_images_built_where_the_network_is_run_on_nodes_without_it(lab, tmp_path):
    """The lab's nodes have no route out, so a Dockerfile that installs a Debian package cannot build on the
    manager (build_error); with `--build-engine local` it builds on this machine's engine, is moved to the manager
    and pushed by digest, and runs on a worker, which has the package."""
    from harness.images.base import DEFAULT_TAG

    subs = tmp_path / "subs"
    folder = make_submission(subs, "apt", APT_COMMAND)
    (folder / "Dockerfile").write_text(APT_DOCKERFILE.format(base=DEFAULT_TAG), encoding="utf-8")
    config = config_file(tmp_path)
    on_manager = evaluate(lab, subs, tmp_path / "manager", config)
    assert on_manager.returncode == 0, on_manager.stderr
    assert manifest(tmp_path / "manager", "apt")["status"] == "build_error"
    failed = (tmp_path / "manager" / "apt" / "build.log").read_text()
    assert "Failed to fetch" in failed and "Unable to locate package bc" in failed  # the mirror is out of reach
    on_lab(lab, "rmi", DEFAULT_TAG)  # the server image too is made on the build engine and moved to the manager
    run = evaluate(lab, subs, tmp_path / "out", config, "--build-engine", "local")
    assert run.returncode == 0, run.stderr
    here = subprocess.run(["docker", "image", "inspect", "-f", "{{.Id}}", DEFAULT_TAG], capture_output=True,
                          text=True, check=True, env=lab["host"]).stdout
    assert on_lab(lab, "image", "inspect", "-f", "{{.Id}}", DEFAULT_TAG) == here
    out = manifest(tmp_path / "out", "apt")
    assert out["status"] == "ok", out
    image = json.loads((tmp_path / "out" / "apt" / "manifest.json").read_text())["image"]
    assert image["built_on"] == {"engine": "local", "moved": True, "copied": True}
    assert "built on engine local" in (tmp_path / "out" / "apt" / "build.log").read_text()
    iso = out["isolation"]
    assert iso["participant_node"] in ("hlab-node1", "hlab-node2")
    assert iso["image"].startswith(f"{lab['lab']['HARNESS_REGISTRY']}/harness/run@sha256:")
    node = iso["participant_node"][-1]
    answer = subprocess.run(["docker", "-H", f"unix://{LAB_DIR}/node{node}/docker.sock", "run", "--rm", "--network",
                             "none", "--entrypoint", "sh", iso["image"], "-c", "echo 6*7 | bc"],
                            capture_output=True, text=True, check=True)
    assert answer.stdout.strip() == "42"  # the package is in the bytes the worker pulled by digest
    # the same image as an image.tar: loaded on the build engine, and not copied again (the manager has that id)
    tarred = tmp_path / "tarred" / "apt-tar"
    tarred.mkdir(parents=True)
    (tarred / "submission.yaml").write_text((folder / "submission.yaml").read_text().replace(
        "dockerfile: Dockerfile", "image: image.tar"), encoding="utf-8")
    subprocess.run(["docker", "save", "-o", str(tarred / "image.tar"), image["id"]], check=True, env=lab["host"])
    run = evaluate(lab, tarred.parent, tmp_path / "tar-out", config, "--build-engine", "local")
    assert run.returncode == 0, run.stderr
    assert manifest(tmp_path / "tar-out", "apt-tar")["status"] == "ok"
    loaded = json.loads((tmp_path / "tar-out" / "apt-tar" / "manifest.json").read_text())["image"]
    assert loaded["id"] == image["id"]
    assert loaded["built_on"] == {"engine": "local", "moved": True, "copied": False}
    assert_nothing_left(lab)


def _fetch_on_lab(lab, subs: Path, out: Path, cfg: Path, token: str) -> tuple[dict, dict]:
    """One evaluation of `labfetch` on the lab, built and fetched on this machine's engine; (manifest, its dev run)."""
    env = {**lab["lab"], "HUB_TOKEN": token}
    args = [sys.executable, "-m", "harness", "evaluate", str(subs), "--config", str(cfg), "--output", str(out),
            "--dataset", "dev", "--registry", lab["lab"]["HARNESS_REGISTRY"], "--build-engine", "local",
            "--overwrite"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr
    assert token not in proc.stdout + proc.stderr
    man = json.loads((out / "labfetch" / "manifest.json").read_text())
    assert man["runs"]["dev"]["status"] == "ok", (man["runs"]["dev"], man.get("fetch"))
    return man, man["runs"]["dev"]


def test_weights_fetched_where_the_network_is_reach_a_worker_without_it(lab, tmp_path):
    """The fetch step on a swarm whose nodes have no route out: it runs on the build engine (this machine's, where
    the stand-in hub is), its volume travels as an image through the registry and is filled on the worker that runs
    the submission, once per node and fill; the run there reads the weights read-only, with no network and no
    secret. A second evaluation uses the cache and the same image, and fills only a node that never had it."""
    import docker

    from harness.images.base import DEFAULT_TAG
    from tests.fetch_support import TOKEN, big_sha256, start_hub, stop_hub
    from tests.fetch_support import make_submission as make_fetch_submission
    from tests.text_task import make_text_task

    host = docker.from_env(environment=lab["host"]).api
    hub = start_hub(host, DEFAULT_TAG, big_mb=LAB_WEIGHTS_MB)
    volume, volumes = "", set()
    try:
        task = tmp_path / "task"
        task.mkdir()
        cfg = make_text_task(task, limits=f"fetch: {{allow: [hub], network: {hub.network}}}\nsecrets: [HUB_TOKEN]\n"
                                          "backend: swarm\nswarm: {data_label: harness.data}\n")
        subs = tmp_path / "subs"
        run = 'python3 /app/probe.py && harness client --server "$HARNESS_SERVER_URL" --agent /app/echo.py'
        make_fetch_submission(subs, "labfetch", ["python3", "/app/fetch.py", str(task), "http://hub:8000/big.bin"],
                              run)
        seen: dict[str, str] = {}  # node → the image its volume was filled from
        shipped = None
        for attempt in range(2):
            man, entry = _fetch_on_lab(lab, subs, tmp_path / f"out{attempt}", cfg, TOKEN)
            fetched = man["fetch"]
            volume = fetched["volume"]
            volumes.add(volume)
            assert fetched["engine"] == "local" and fetched["cached"] is (attempt == 1)
            assert fetched["shipped_as"] == f"{volume}:volume"
            iso = entry["isolation"]
            node = iso["participant_node"]
            assert node in ("hlab-node1", "hlab-node2") and iso["server_node"] == "hlab-node0"
            fill = iso["fetch_fill"]
            assert fill["node"] == node and fill["image"].startswith(f"{lab['lab']['HARNESS_REGISTRY']}/harness/run@")
            shipped = shipped or fill["image"]
            assert fill["image"] == shipped  # made once: the second evaluation ships the same bytes
            assert fill["filled"] is (seen.get(node) != fill["image"])  # once per node and fill
            seen[node] = fill["image"]
            client = (tmp_path / f"out{attempt}" / "labfetch" / "dev" / "client.log").read_text()
            assert f"WEIGHTS {LAB_WEIGHTS_MB << 20} {big_sha256(LAB_WEIGHTS_MB)}" in client, client[-2000:]
            assert "FETCH-RO" in client and "NET-OFF" in client and "SECRET=none" in client
        # the volume is on the worker(s) that ran it, with the fill's stamp; the manager never had it
        for name, image in seen.items():
            sock = f"unix://{LAB_DIR}/node{name[-1]}/docker.sock"
            stamp = subprocess.run(["docker", "-H", sock, "run", "--rm", "--network", "none", "-v",
                                    f"{volume}:/v:ro", "--entrypoint", "cat", image,
                                    "/v/.harness-fetch-stamp"], capture_output=True, text=True, check=True).stdout
            assert stamp == image
        assert on_lab(lab, "volume", "ls", "-q", "--filter", f"name={volume}").split() == []
        assert hub.network not in on_lab(lab, "network", "ls", "--format", "{{.Name}}").split()  # no way to the hub
        assert_nothing_left(lab)
    finally:
        stop_hub(host, hub)
        for name in volumes:  # this machine's cache and the images made of it (the lab's go with the lab)
            subprocess.run([sys.executable, "-m", "harness", "fetch-cache", "prune", name], capture_output=True,
                           timeout=300, env=lab["host"])
            subprocess.run(["docker", "rmi", f"{name}:volume"], capture_output=True, env=lab["host"])


def test_two_gpu_runs_never_share_a_gpu(lab, tmp_path):
    subs = tmp_path / "subs"
    make_submission(subs, "gpu-a", "python3 /app/probe_agent.py slow")
    make_submission(subs, "gpu-b", "python3 /app/probe_agent.py slow")
    run = evaluate(lab, subs, tmp_path / "out", config_file(tmp_path, gpus=1), "--workers", "2")
    assert run.returncode == 0, run.stderr
    a, b = (manifest(tmp_path / "out", n)["isolation"] for n in ("gpu-a", "gpu-b"))
    assert a["gpus_assigned"] != b["gpus_assigned"]
    assert {a["gpus_assigned"][0], b["gpus_assigned"][0]} <= {"lab-node1-gpu0", "lab-node2-gpu0"}
    assert a["participant_node"] != b["participant_node"]


def test_swarm_gpu_reservation_with_an_overlay_network_is_rejected(lab):
    """Why the harness hands out GPUs itself (harness/run/swarm/gpus.py): on this engine a service that reserves a
    generic resource and joins an overlay network is rejected (moby/moby#44378). If this test fails, the engine
    fixed it and Swarm's own reservation could be used."""
    net = "harness-labgpu-net"
    on_lab(lab, "network", "create", "-d", "overlay", "--internal", "--label", "harness.test=1", net)
    try:
        on_lab(lab, "service", "create", "-d", "--name", "labgpu", "--network", net, "--generic-resource", "gpu=1",
               "--restart-condition", "none", "--constraint", "node.role==worker", _base(), "true")
        deadline = time.monotonic() + 60
        states = ""
        while "Rejected" not in states and "Complete" not in states and time.monotonic() < deadline:
            states = on_lab(lab, "service", "ps", "labgpu", "--no-trunc", "--format", "{{.CurrentState}} {{.Error}}")
            time.sleep(0.2)
        assert "Rejected" in states and "assigned node no longer meets constraints" in states, states
    finally:
        on_lab(lab, "service", "rm", "labgpu")
        _remove_network(lab, net)


def test_isolation_holds_across_nodes(lab, tmp_path):
    """From a worker: the lab bridge, the registry, another run's server on the manager and the references are all
    out of reach; the run's own server on the manager answers (positive control)."""
    other_net = "harness-labother-net"
    on_lab(lab, "network", "create", "-d", "overlay", "--internal", "--label", "harness.test=1", other_net)
    on_lab(lab, "service", "create", "-d", "--name", "labother-server", "--network", other_net, "--label",
           "harness.test=1", "--endpoint-mode", "dnsrr", "--constraint", "node.labels.harness.data==true",
           "--restart-condition", "none", _base(), "python3", "-m", "http.server",
           "8080")
    listener = HostListener()
    try:
        other_ip = _task_ip(lab, "labother-server", other_net)
        subs = tmp_path / "subs"
        targets = [f"{BRIDGE_ADDR}:{listener.port}", f"{lab['lab']['HARNESS_REGISTRY']}", f"{other_ip}:8080",
                   f"GATEWAY:{listener.port}", "server:8000"]
        make_submission(subs, "net", ["python3", "/app/probe_agent.py", "net", *targets])
        needle = (HERE / "dev.es").read_text(encoding="utf-8").splitlines()[0]
        make_submission(subs, "refs", ["python3", "/app/probe_agent.py", "refs", needle])
        evaluate(lab, subs, tmp_path / "out", config_file(tmp_path))
        net_log = (tmp_path / "out" / "net" / "dev" / "client.log").read_text()
        reached = json.loads(next(ln for ln in net_log.splitlines() if ln.startswith("NET "))[4:])
        assert manifest(tmp_path / "out", "net")["isolation"]["participant_node"] != "hlab-node0"
        assert reached.pop("server:8000") == "connected", "positive control: the server must be reachable"
        assert all(v != "connected" for v in reached.values()), reached
        assert listener.accepted == []
        refs_log = (tmp_path / "out" / "refs" / "dev" / "client.log").read_text()
        assert json.loads(next(ln for ln in refs_log.splitlines() if ln.startswith("REFS "))[5:]) == {
            "found": [], "env": []}
    finally:
        listener.close()
        on_lab(lab, "service", "rm", "labother-server")
        _remove_network(lab, other_net)


def _base() -> str:
    from harness.images.base import DEFAULT_TAG

    return DEFAULT_TAG


def _task_ip(lab, service: str, network: str) -> str:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        out = on_lab(lab, "service", "ps", service, "-q", "--filter", "desired-state=running")
        for task in out.split():
            info = json.loads(on_lab(lab, "inspect", task))[0]
            if info["Status"]["State"] == "running":
                for att in info.get("NetworksAttachments") or []:
                    if att["Network"]["Spec"]["Name"] == network:
                        return att["Addresses"][0].split("/")[0]
        time.sleep(0.2)
    pytest.fail(f"{service} never ran")


def _remove_network(lab, name: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if subprocess.run(["docker", "network", "rm", name], capture_output=True, env=lab["lab"]).returncode == 0:
            return
        time.sleep(0.2)


def _participant_running_on(lab, node: str) -> bool:
    out = on_lab(lab, "service", "ls", "-q", "--filter", "label=harness.role=participant")
    for sid in out.split():
        tasks = on_lab(lab, "service", "ps", sid, "--format", "{{.Node}} {{.CurrentState}}").splitlines()
        if any(t.startswith(node + " ") and "Running" in t for t in tasks):
            return True
    return False


def _wait_for(condition, what: str, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"never: {what}")
        time.sleep(0.2)


def _node_availability(lab, node: str, availability: str) -> None:
    on_lab(lab, "node", "update", "--availability", availability, node)


def test_a_lost_worker_is_infra_error_then_ok_on_a_live_node(lab, tmp_path):
    subs = tmp_path / "subs"
    make_submission(subs, "lost", ["python3", "/app/probe_agent.py", "hang-on-gpu", GPU1])
    config = config_file(tmp_path, gpus=1, patient=True)
    local = evaluate(lab, subs, tmp_path / "local", config_file(tmp_path, gpus=0), where="host")
    assert local.returncode == 0, local.stderr
    _node_availability(lab, "hlab-node2", "drain")  # the first attempt can only land on worker 1
    proc = evaluate(lab, subs, tmp_path / "out", config, background=True)
    try:
        _wait_for(lambda: _participant_running_on(lab, "hlab-node1"), "a participant on hlab-node1")
        _node_availability(lab, "hlab-node2", "active")  # the retry can only land on worker 2
        lab_cmd("kill", "node1")
        stdout, stderr = proc.communicate(timeout=600)
    finally:
        _node_availability(lab, "hlab-node2", "active")
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    run = manifest(tmp_path / "out", "lost")
    assert [a["status"] for a in run["attempt_outcomes"]] == ["infra_error", "ok"], run["attempt_outcomes"]
    assert "lost on node hlab-node1: node down" in run["attempt_outcomes"][0]["reason"]
    assert run["isolation"]["participant_node"] == "hlab-node2"
    assert non_ca(tmp_path / "out", "lost") == non_ca(tmp_path / "local", "lost")
    assert_nothing_left(lab, nodes=(0, 2))  # nothing on the nodes still up
    lab_cmd("up", "2")  # worker 1's engine back for the next tests (it rejoins as the same node)
    _wait_for(lambda: "Down" not in on_lab(lab, "node", "ls", "--format", "{{.Status}}"), "hlab-node1 Ready")


def test_a_drained_worker_sends_the_rest_elsewhere(lab, tmp_path):
    subs = tmp_path / "subs"
    make_submission(subs, "first", ["python3", "/app/probe_agent.py", "hang-on-gpu", GPU1])
    make_submission(subs, "second", ["python3", "/app/probe_agent.py", "hang-on-gpu", GPU1])
    _node_availability(lab, "hlab-node2", "drain")
    proc = evaluate(lab, subs, tmp_path / "out", config_file(tmp_path, gpus=1, patient=True), background=True)
    try:
        _wait_for(lambda: _participant_running_on(lab, "hlab-node1"), "a participant on hlab-node1")
        _node_availability(lab, "hlab-node2", "active")
        _node_availability(lab, "hlab-node1", "drain")  # its task is shut down; everything else goes to worker 2
        stdout, stderr = proc.communicate(timeout=600)
    finally:
        for node in ("hlab-node1", "hlab-node2"):
            _node_availability(lab, node, "active")
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    runs = {n: manifest(tmp_path / "out", n) for n in ("first", "second")}
    assert {n: r["status"] for n, r in runs.items()} == {"first": "ok", "second": "ok"}
    assert all(r["isolation"]["participant_node"] == "hlab-node2" for r in runs.values())
    statuses = sorted(tuple(a["status"] for a in r["attempt_outcomes"]) for r in runs.values())
    assert statuses == [("infra_error", "ok"), ("ok",)], statuses
    assert_nothing_left(lab)


def test_a_registry_that_stopped_is_one_line(lab, tmp_path):
    pid = int((LAB_DIR / "registry.pid").read_text())
    os.kill(pid, 9)
    _wait_for(lambda: not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2],
              "the registry gone")
    subs = tmp_path / "subs"
    make_submission(subs, "good", "python3 /app/probe_agent.py copy")
    try:
        run = evaluate(lab, subs, tmp_path / "out", config_file(tmp_path))
    finally:
        lab_cmd("up", "2")  # the registry back
    registry = lab["lab"]["HARNESS_REGISTRY"]
    assert run.returncode != 0
    assert run.stderr.strip().splitlines()[-1].endswith(
        f"registry {registry} does not answer (ConnectionError): start it, or check --registry / swarm.registry")
    assert not (tmp_path / "out" / "good" / "dev").exists()  # no run was started, so none retried


def test_down_leaves_nothing(lab):
    lab_cmd("down")
    assert not LAB_DIR.exists()
    assert not [ns for ns in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
                if ns.startswith("hlab")]
    assert subprocess.run(["ip", "link", "show", "hlab0"], capture_output=True).returncode != 0
    assert "hlab0" not in subprocess.run(["iptables", "-S", "FORWARD"], capture_output=True, text=True).stdout
    mine = [p for p in Path("/proc").glob("[0-9]*/cmdline")
            if str(LAB_DIR).encode() in _read(p)]
    assert mine == []
    assert str(LAB_DIR) not in Path("/proc/mounts").read_text()


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""
