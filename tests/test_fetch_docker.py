"""The fetch step through `harness evaluate` with the real Docker engine, against a stand-in model hub of ours (an
HTTP server in a container on an internal network we create, a 300 MiB file behind a token) and a second server
that the task does not allow: the download goes through the harness's proxy, the refused host is logged and named,
prepare and run see the weights read-only with no network and no secret, the second evaluation hits the cache,
`--refetch` downloads again, `harness fetch-cache` lists and prunes, and no file the evaluation wrote holds the
token. A quota overrun and a fetch timeout are one line each."""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.cache import cache_root
from harness.layout import ResultsDir
from tests.fetch_support import (
    BIG_MB,
    TOKEN,
    Hub,
    big_sha256,
    evaluate,
    files_under,
    make_submission,
    start_hub,
    stop_hub,
)
from tests.text_task import make_text_task

pytestmark = [pytest.mark.docker, pytest.mark.slow]

PROBE_RUN = ('python3 /app/probe.py && cat "$HARNESS_PREPARED_DIR/probe.txt" && '
             'harness client --server "$HARNESS_SERVER_URL" --agent /app/echo.py')
PROBE_PREPARE = 'python3 /app/probe.py > "$HARNESS_PREPARED_DIR/probe.txt"'


@pytest.fixture(scope="module")
def hub() -> Iterator[Hub]:
    from harness.images.base import ensure_base_image
    from harness.run.docker_backend import docker_api

    api = docker_api()
    world = start_hub(api, ensure_base_image())
    yield world
    stop_hub(api, world)


def _task(root: Path, hub: Hub, limits: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    return make_text_task(root, limits=f"fetch: {{allow: [hub], network: {hub.network}}}\nsecrets: [HUB_TOKEN]\n"
                                       f"{limits}")


def _prune(*volumes: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", "fetch-cache", "prune", *volumes], capture_output=True,
                          text=True, timeout=300)


def test_weights_come_through_the_proxy_once_and_reach_the_run_read_only(hub: Hub, tmp_path: Path) -> None:
    cfg = _task(tmp_path / "task", hub)
    subs = tmp_path / "subs"
    fetch = ["python3", "/app/fetch.py", str(cfg.parent), "--connect", "hub:8000", "--connect", "other:8000",
             "--try", "http://other:8000/big.bin", "http://hub:8000/big.bin"]
    make_submission(subs, "hubfetch", fetch, PROBE_RUN, PROBE_PREPARE)
    out = tmp_path / "results"
    runs, proc = evaluate(subs, cfg, out)
    assert runs["hubfetch"]["status"] == "ok", (runs, proc.stderr)
    assert TOKEN not in proc.stdout + proc.stderr
    results, sha, size = ResultsDir(out), big_sha256(), BIG_MB << 20
    sub = results.submission("hubfetch")
    fetch_log = sub.fetch_log.read_text(encoding="utf-8")
    # the fetch: the allowed hub answered, the other server was refused by the proxy, no data was there
    assert f"GOT big.bin {size} {sha}" in fetch_log and "HTTP 403 http://other:8000/big.bin" in fetch_log
    assert "token=***" in fetch_log and "NO-DATA" in fetch_log
    # CONNECT, as an HTTPS client goes: a tunnel to the hub (which wants its token inside), none to the other
    assert "TUNNEL hub:8000 200 401" in fetch_log and "TUNNEL other:8000 403 -" in fetch_log
    events = [json.loads(line) for line in sub.fetch_proxy_log.read_text().splitlines()]
    assert {"event": "refused", "method": "GET", "host": "other", "port": 8000, "why": "not in fetch.allow"} in events
    assert {"event": "allowed", "method": "GET", "host": "hub", "port": 8000} in events
    assert {"event": "allowed", "method": "CONNECT", "host": "hub", "port": 8000} in events
    manifest = json.loads(sub.manifest.read_text())
    fetched = manifest["fetch"]
    assert fetched["cached"] is False and fetched["bytes"] >= size and fetched["refused"] == ["other:8000"]
    assert manifest["timings"]["fetch_s"] == fetched["fetch_s"] > 0
    entry = manifest["runs"]["dev"]
    assert "fetch_s" not in entry["timings"]  # never part of a run, nor of any latency
    mounts = {m["destination"]: m["rw"] for m in entry["isolation"]["mounts"]}
    assert mounts["/fetched"] is False and entry["isolation"]["network_internal"] is True
    # prepare and run: the weights whole and read-only, no network to the hub, no secret
    client = results.run("hubfetch", "dev").client_log.read_text(encoding="utf-8")
    assert client.count(f"WEIGHTS {size} {sha}") == 2 and client.count("FETCH-RO") == 2
    assert client.count("NET-OFF") == 2 and client.count("SECRET=none") == 2 and "FETCH_DIR=/fetched" in client
    # the second evaluation: the cache, no download
    again, _ = evaluate(subs, cfg, out, "--overwrite")
    assert again["hubfetch"]["status"] == "ok"
    second = json.loads(sub.manifest.read_text())["fetch"]
    assert second["cached"] is True and second["volume"] == fetched["volume"]
    assert second["bytes"] == fetched["bytes"] and second["fetch_s"] == fetched["fetch_s"]
    listed = subprocess.run([sys.executable, "-m", "harness", "fetch-cache", "list"], capture_output=True, text=True,
                            timeout=300)
    assert fetched["volume"] in listed.stdout and f"{fetched['bytes'] / 1e6:.1f} MB" in listed.stdout
    # --refetch: downloaded again
    third, _ = evaluate(subs, cfg, out, "--overwrite", "--refetch")
    assert third["hubfetch"]["status"] == "ok"
    assert json.loads(sub.manifest.read_text())["fetch"]["cached"] is False
    # the site shows the fetch's bytes and time on the run page
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "harness", "leaderboard", str(out), "--output", str(site)], check=True,
                   capture_output=True, timeout=600)
    pages = [p.read_text(encoding="utf-8") for p in site.rglob("*.html") if "Fetched weights" in p.read_text()]
    assert pages and f"{fetched['bytes'] / 1e6:.1f} MB in" in pages[0]
    # the token is in no file the evaluations wrote (results, the site, the cache's records)
    for path in files_under(out, site, cache_root() / "fetch"):
        assert TOKEN.encode() not in path.read_bytes(), path
    pruned = _prune(fetched["volume"])
    assert f"removed {fetched['volume']}" in pruned.stdout, pruned.stdout + pruned.stderr


def test_a_refused_host_a_quota_overrun_and_a_timeout_are_one_line_each(hub: Hub, tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    make_submission(subs, "refused", ["python3", "/app/fetch.py", "/nowhere", "http://other:8000/big.bin"])
    make_submission(subs, "overquota", ["python3", "/app/fetch.py", "/nowhere", "http://hub:8000/big.bin"])
    runs, proc = evaluate(subs, _task(tmp_path / "task", hub, "limits: {fetch_bytes: 1m}\n"), tmp_path / "r1")
    assert runs["refused"]["status"] == "crash", proc.stderr
    assert runs["refused"]["reason"] == ("fetch: exited with code 1 (the proxy refused other:8000: not in "
                                         "fetch.allow): token=*** NO-DATA HTTP 403 http://other:8000/big.bin")
    assert runs["overquota"]["status"] == "crash"
    assert runs["overquota"]["reason"].startswith("fetch: wrote more than limits.fetch_bytes (1m): ")
    assert "\n" not in runs["overquota"]["reason"] and TOKEN not in proc.stdout + proc.stderr
    assert not (tmp_path / "r1" / "overquota" / "dev" / "client.log").exists()  # no run without its weights
    subs2 = tmp_path / "subs2"
    make_submission(subs2, "slowfetch", ["/bin/sh", "-c", "echo fetching; sleep 600"])
    runs, _ = evaluate(subs2, _task(tmp_path / "task2", hub, "limits: {fetch_timeout_s: 2}\n"), tmp_path / "r2")
    assert runs["slowfetch"]["status"] == "timeout"
    assert runs["slowfetch"]["reason"] == "fetch: did not finish within limits.fetch_timeout_s (2 s)"
    listed = subprocess.run([sys.executable, "-m", "harness", "fetch-cache", "list"], capture_output=True, text=True,
                            timeout=300).stdout
    for name in ("refused", "overquota", "slowfetch"):  # a failed fetch leaves no volume
        volume = json.loads((tmp_path / ("r2" if name == "slowfetch" else "r1") / name / "manifest.json")
                            .read_text())["fetch"]
        assert "volume" not in volume and volume["status"] in ("crash", "timeout")
    assert "unfinished" not in listed


def test_limits_gpus_and_the_secrets_reach_the_fetch_container(tmp_path: Path, monkeypatch) -> None:
    """Read back from `docker inspect` of a created (not started: no GPU here) fetch container: the GPUs of
    limits.gpus, the secret, the proxy variables, the volume writable; no server variable."""
    from harness.config import load_config
    from harness.images.base import ensure_base_image
    from harness.run.docker_backend import docker_api
    from harness.run.fetch.step import FetchRequest, _Fetch

    monkeypatch.setenv("HUB_TOKEN", TOKEN)
    cfg = load_config(make_text_task(tmp_path, limits="secrets: [HUB_TOKEN]\nlimits: {gpus: [0, 2]}\n"))
    api, tag = docker_api(), ensure_base_image()
    req = FetchRequest(image_id=tag, image_digest="sha256:x", command=("true",), image_user=None, config=cfg,
                       helper_image=tag, log=tmp_path / "fetch.log", proxy_log=tmp_path / "proxy.log")
    fetch = _Fetch(api, req, "harness-fetch-gpu-probe", "k" * 64)
    fetch.net = {"Name": "none"}
    try:
        info = api.inspect_container(fetch._create_fetch("10001:10001"))
    finally:
        fetch.net = None  # not ours to remove
        fetch._teardown()
        api.remove_volume("harness-fetch-gpu-probe", force=True)  # made by the engine for the bind
    assert [r["DeviceIDs"] for r in info["HostConfig"]["DeviceRequests"]] == [["0", "2"]]
    env = dict(e.split("=", 1) for e in info["Config"]["Env"])
    assert env["HUB_TOKEN"] == TOKEN and env["HTTPS_PROXY"] == "http://proxy:3128"
    assert env["HARNESS_FETCH_DIR"] == "/fetched" and not any(k.startswith("HARNESS_SERVER") for k in env)
    assert info["HostConfig"]["Binds"] == ["harness-fetch-gpu-probe:/fetched:rw"]
    assert info["HostConfig"]["ReadonlyRootfs"] is True and info["HostConfig"]["CapDrop"] == ["ALL"]


def test_fetch_cache_prune_removes_an_unfinished_fetch_and_keeps_a_finished_one(tmp_path: Path) -> None:
    """Two volumes as the harness labels them: one with its record (a finished fetch of an image this engine has),
    one without (a fetch that was interrupted); `prune` without names removes only the second."""
    from harness.images.base import ensure_base_image
    from harness.run.docker_backend import docker_api
    from harness.run.fetch import cache

    api, tag = docker_api(), ensure_base_image()
    image_id = api.inspect_image(tag)["Id"]
    made = []
    for command in (["finished", str(tmp_path)], ["interrupted", str(tmp_path)]):
        key = cache.cache_key(image_id, command)
        made.append(cache.volume_name(key))
        api.create_volume(made[-1], labels=cache.volume_labels(key, image_id, image_id, command))
        if command[0] == "finished":
            cache.write_record(made[-1], {"key": key, "bytes": 1, "fetch_s": 0.5})
    try:
        listed = subprocess.run([sys.executable, "-m", "harness", "fetch-cache", "list"], capture_output=True,
                                text=True, timeout=300).stdout
        assert f"{made[0]}  0.0 MB  0.5 s" in listed and f"{made[1]}  -  -  unfinished" in listed
        pruned = _prune()
        assert f"removed {made[1]}" in pruned.stdout and made[0] not in pruned.stdout
        assert [v["Name"] for v in api.volumes(filters={"name": made[0]})["Volumes"]] == [made[0]]
    finally:
        _prune(*made)
    assert not cache.record_path(made[0]).exists()


#: A second harness process asking for a fetch: the cached path of `ensure_fetched`, its result as JSON.
SECOND_HARNESS = """
import json, sys
from pathlib import Path
from harness.config import load_config
from harness.run.docker_backend import docker_api
from harness.run.fetch.step import FetchRequest, ensure_fetched
config, image, helper, logs, *command = sys.argv[1:]
req = FetchRequest(image_id=image, image_digest=image, command=tuple(command), image_user=None,
                   config=load_config(Path(config)), helper_image=helper, log=Path(logs) / "fetch.log",
                   proxy_log=Path(logs) / "proxy.log")
got = ensure_fetched(docker_api(), req)
print(json.dumps({"cached": got.cached, "bytes": got.bytes}))
"""


def _waits_on(lock: Path, pid: int) -> bool:
    """Whether process `pid` is blocked on the flock of `lock` (/proc/locks lists a waiter after `->`)."""
    inode = str(lock.stat().st_ino)
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields:
            waiter = fields[fields.index("->") + 1:]
            if len(waiter) >= 5 and waiter[3] == str(pid) and waiter[4].rsplit(":", 1)[-1] == inode:
                return True
    return False


def test_a_second_harness_waits_for_a_fetch_in_progress_and_finds_its_volume(tmp_path: Path) -> None:
    """Two harness processes on one host fetching for the same image and command: the second waits on the first's
    lock file (beside the cache's records) and then finds its volume, instead of fetching into it at the same time."""
    from harness.images.base import ensure_base_image
    from harness.run.docker_backend import docker_api
    from harness.run.fetch import cache

    api, tag = docker_api(), ensure_base_image()
    image_id = api.inspect_image(tag)["Id"]
    command = ["true", str(tmp_path)]  # a key of this test alone
    key = cache.cache_key(image_id, command)
    volume = cache.volume_name(key)
    lock = cache.lock_folder() / f"{volume}.lock"
    (tmp_path / "task").mkdir()
    config = make_text_task(tmp_path / "task")
    try:
        with lock.open("a") as first:
            fcntl.flock(first, fcntl.LOCK_EX)  # the first harness, fetching
            second = subprocess.Popen([sys.executable, "-c", SECOND_HARNESS, str(config), image_id, tag, str(tmp_path),
                                       *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                deadline = time.monotonic() + 120
                while not _waits_on(lock, second.pid):
                    assert second.poll() is None, f"went ahead without waiting: {second.communicate()}"
                    assert time.monotonic() < deadline, "the second harness never reached the lock"
                    time.sleep(0.05)
                api.create_volume(volume, labels=cache.volume_labels(key, image_id, image_id, command))
                cache.write_record(volume, {"key": key, "bytes": 7, "fetch_s": 0.25})
            finally:
                fcntl.flock(first, fcntl.LOCK_UN)
            out, err = second.communicate(timeout=120)
        assert second.returncode == 0, err
        assert json.loads(out) == {"cached": True, "bytes": 7}
    finally:
        _prune(volume)
