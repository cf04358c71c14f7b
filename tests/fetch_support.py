"""The fetch tests' own world on this Docker engine: an internal network of ours with a stand-in model hub
(`hub`, tests/fetch_hub.py: a token-guarded 300 MiB file and Whisper tiny.en) and a second server (`other`) that no
task allows; submissions whose `fetch:` downloads from them and whose prepare and run probe what they see."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.images.base import DEFAULT_TAG
from harness.layout import ResultsDir

HERE = Path(__file__).resolve().parent
BIG_MB = 300
TOKEN = f"hub-token-{uuid.uuid4().hex}"
HUB_READY_S = 120

FETCH_PY = '''"""Download each URL (Bearer $HUB_TOKEN) into $HARNESS_FETCH_DIR; `--try URL`: only report it."""
import hashlib, os, sys, urllib.error, urllib.request

out = os.environ["HARNESS_FETCH_DIR"]
token = os.environ.get("HUB_TOKEN", "")
print("token=" + token, flush=True)  # the harness masks it in fetch.log
print("DATA-SEEN" if os.path.exists(sys.argv[1]) else "NO-DATA", flush=True)
def tunnel(target):
    """CONNECT through the proxy (as an HTTPS client does), then a request without the token inside the tunnel."""
    import socket
    host, port = os.environ["HTTPS_PROXY"].rsplit("/", 1)[1].split(":")
    with socket.create_connection((host, int(port)), timeout=60) as s:
        s.sendall(f"CONNECT {target} HTTP/1.1\\r\\nHost: {target}\\r\\n\\r\\n".encode())
        answer = s.recv(4096).split(b"\\r\\n")[0].decode()
        inner = ""
        if " 200 " in answer:
            s.sendall(b"GET /big.bin HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
            inner = s.recv(4096).split(b"\\r\\n")[0].decode()
    print("TUNNEL", target, answer.split(" ")[1], inner.split(" ")[1] if inner else "-", flush=True)


args, failed, i = sys.argv[2:], False, 0
while i < len(args):
    if args[i] == "--connect":
        tunnel(args[i + 1])
        i += 2
        continue
    must = args[i] != "--try"
    i += 0 if must else 1
    url, i = args[i], i + 1
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(req, timeout=60) as r, open(os.path.join(out, url.rsplit("/", 1)[1]), "wb") as f:
            h, n = hashlib.sha256(), 0
            while chunk := r.read(1 << 20):
                f.write(chunk); h.update(chunk); n += len(chunk)
        print("GOT", url.rsplit("/", 1)[1], n, h.hexdigest(), flush=True)
    except urllib.error.HTTPError as exc:
        print("HTTP", exc.code, url, flush=True)
        failed = failed or must
sys.exit(1 if failed else 0)
'''

PROBE_PY = '''"""What a prepare or run container sees of the fetch volume, the network and the secret."""
import hashlib, os, socket

d = os.environ.get("HARNESS_FETCH_DIR", "")
print("FETCH_DIR=" + d)
h, n = hashlib.sha256(), 0
with open(os.path.join(d, "big.bin"), "rb") as f:
    while chunk := f.read(1 << 20):
        h.update(chunk); n += len(chunk)
print("WEIGHTS", n, h.hexdigest())
try:
    open(os.path.join(d, "x"), "w")
    print("FETCH-WRITABLE")
except OSError:
    print("FETCH-RO")
try:
    socket.create_connection(("hub", 8000), 3)
    print("NET-ON")
except OSError:
    print("NET-OFF")
print("SECRET=" + ("present" if "HUB_TOKEN" in os.environ else "none"))
'''


def big_sha256(mb: int = BIG_MB) -> str:
    """The sha256 of the hub's /big.bin of `mb` MiB (block i of 1 MiB is byte i % 251 repeated)."""
    h = hashlib.sha256()
    for i in range(mb):
        h.update(bytes([i % 251]) * (1 << 20))
    return h.hexdigest()


@dataclass
class Hub:
    network: str
    containers: list[str]


def start_hub(api, tag: str, models: Path | None = None, big_mb: int = BIG_MB) -> Hub:
    """Our internal network with `hub` and `other` (both tests/fetch_hub.py) on it, answering; `/big.bin` is `big_mb`
    MiB."""
    net = f"harness-test-hub-{uuid.uuid4().hex[:8]}"
    api.create_network(net, driver="bridge", internal=True, labels={"harness-test": "fetch"})
    hub = Hub(net, [])
    source = (HERE / "fetch_hub.py").read_text(encoding="utf-8")
    for alias in ("hub", "other"):
        binds = [f"{models}:/models:ro"] if models else []
        cid = api.create_container(
            # as root: the models folder is under pytest's temporary folders (mode 0700, root's)
            tag, entrypoint=["python3", "-c", source], command=[], name=f"{net}-{alias}", user="0:0",
            environment={"HUB_TOKEN": TOKEN, "BIG_MB": str(big_mb)}, labels={"harness-test": "fetch"},
            host_config=api.create_host_config(network_mode=net, binds=binds, read_only=True),
            networking_config=api.create_networking_config({net: api.create_endpoint_config(aliases=[alias])}))["Id"]
        hub.containers.append(cid)
        api.start(cid)
    for cid in hub.containers:
        deadline = time.monotonic() + HUB_READY_S
        while b"hub listening" not in api.logs(cid):
            assert time.monotonic() < deadline and api.inspect_container(cid)["State"]["Running"], api.logs(cid)
            time.sleep(0.2)
    return hub


def stop_hub(api, hub: Hub) -> None:
    for cid in hub.containers:
        api.remove_container(cid, force=True)
    api.remove_network(hub.network)


def make_submission(subs: Path, name: str, fetch: list[str], command: str | None = None,
                    prepare: str | None = None) -> Path:
    """A submission FROM this checkout's base image with fetch.py, probe.py and the echo agent."""
    folder = subs / name
    folder.mkdir(parents=True)
    (folder / "fetch.py").write_text(FETCH_PY, encoding="utf-8")
    (folder / "probe.py").write_text(PROBE_PY, encoding="utf-8")
    (folder / "echo.py").write_text((HERE / "agents" / "echo_text.py").read_text(encoding="utf-8"))
    (folder / "Dockerfile").write_text(f"FROM {DEFAULT_TAG}\nCOPY fetch.py probe.py echo.py /app/\n")
    client = 'harness client --server "$HARNESS_SERVER_URL" --agent /app/echo.py'
    lines = ["team: t", f"system: {name}", "track: text-en-es", "build: {dockerfile: Dockerfile}",
             f"command: {json.dumps(command or client)}", f"fetch: {json.dumps(fetch)}"]
    if prepare:
        lines.append(f"prepare: {json.dumps(prepare)}")
    (folder / "submission.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def evaluate(subs: Path, cfg: Path, out: Path, *extra: str, env: dict[str, str] | None = None
             ) -> tuple[dict[str, dict], subprocess.CompletedProcess]:
    env = {**os.environ, "HUB_TOKEN": TOKEN, **(env or {})}
    proc = subprocess.run([sys.executable, "-m", "harness", "evaluate", str(subs), "--config", str(cfg), "--output",
                           str(out), "--dataset", "dev", *extra], capture_output=True, text=True, timeout=1800,
                          env=env)
    assert (out / "summary.json").is_file(), proc.stderr
    runs = {r["submission"]: r for r in json.loads(ResultsDir(out).summary.read_text())["runs"]}
    return runs, proc


def files_under(*roots: Path) -> Iterator[Path]:
    for root in roots:
        if root.is_dir():
            yield from (p for p in root.rglob("*") if p.is_file())
