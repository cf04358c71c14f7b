"""Test participant for the Docker tests: the 2020 compatibility API with the standard library only.

`python3 probe_agent.py MODE [ARGS]`. Modes that translate (they write each source word back):
  copy             every sentence
  crash-after-1    exits with code 3 after the first sentence
  slow             sleeps 0.7 s per sentence (for the kill-and-resume test)
  block-after-1    translates the first sentence, then blocks until killed (the run cannot end on its own)
  spam             writes 2 MB to stdout first, then translates (client.log cap)
  hang-on-gpu GPU  sleeps forever when the swarm gave it GPU (DOCKER_RESOURCE_GPU), else translates every sentence
Modes that misbehave:
  net ADDR:PORT..  tries to connect to each address (GATEWAY: the default route's); prints JSON {addr: result}
  refs TEXT        searches the whole filesystem for TEXT (a reference sentence); prints JSON {found: [...]}
  oom              allocates memory until killed
  fork             forks until fork fails; prints how many children it got, then exits 1
  hang             sleeps forever without a request
  whoami           prints JSON: uid, gid, effective capabilities, no_new_privs, which paths are writable
"""
import json
import os
import socket
import sys
import threading
import time
import urllib.request

URL = os.environ.get("HARNESS_SERVER_URL", "")
MODE = sys.argv[1] if len(sys.argv) > 1 else "copy"


def call(method, path, body=None):
    req = urllib.request.Request(URL + path, data=body, method=method)
    with urllib.request.urlopen(req, timeout=30) as r:
        data = r.read()
    return json.loads(data) if data else None


def translate(crash_after=None, pause=0.0, stop_after=None):
    n = call("GET", "/")["num_sentences"]
    for i in range(n if stop_after is None else stop_after):
        if crash_after is not None and i == crash_after:
            print("crashing on purpose", flush=True)
            sys.exit(3)
        while True:
            seg = call("GET", f"/src?sent_id={i}")["segment"]
            if seg == "</s>":
                break
            call("PUT", f"/hypo?sent_id={i}", seg.encode())
        time.sleep(pause)
        call("PUT", f"/hypo?sent_id={i}", b"</s>")
        print(f"sentence {i} done", flush=True)


def default_gateway():
    for line in open("/proc/net/route").read().splitlines()[1:]:
        fields = line.split()
        if fields[1] == "00000000":
            return socket.inet_ntoa(int(fields[2], 16).to_bytes(4, "little"))
    return "0.0.0.0"


def probe_network(targets):
    out = {}
    for t in targets:
        host, port = t.rsplit(":", 1)
        host = default_gateway() if host == "GATEWAY" else host
        try:
            with socket.create_connection((host, int(port)), timeout=2):
                out[t] = "connected"
        except OSError as exc:
            out[t] = f"{type(exc).__name__}: {exc}"
    print("NET " + json.dumps(out), flush=True)


def search_refs(text):
    found = []
    needle = text.encode()
    for root, dirs, files in os.walk("/"):
        if root == "/":
            dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev")]
        for name in files:
            path = os.path.join(root, name)
            try:
                if os.path.islink(path) or os.path.getsize(path) > 5_000_000:
                    continue
                with open(path, "rb") as f:
                    if needle in f.read():
                        found.append(path)
            except OSError:
                continue
    print("REFS " + json.dumps({"found": found, "env": [k for k, v in os.environ.items() if text in v]}), flush=True)


if MODE == "copy":
    translate()
elif MODE == "crash-after-1":
    translate(crash_after=1)
elif MODE == "slow":
    translate(pause=0.7)
elif MODE == "block-after-1":
    translate(stop_after=1)
    threading.Event().wait()
elif MODE == "spam":
    line = "x" * 999 + "\n"
    for _ in range(2000):
        sys.stdout.write(line)
    sys.stdout.flush()
    translate()
elif MODE == "net":
    probe_network(sys.argv[2:])
elif MODE == "refs":
    search_refs(sys.argv[2])
elif MODE == "oom":
    hog = []
    while True:
        hog.append(bytearray(16 * 1024 * 1024))
        for j in range(0, len(hog[-1]), 4096):
            hog[-1][j] = 1
elif MODE == "fork":
    children = 0
    try:
        while True:
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            children += 1
    except OSError as exc:
        print(f"FORK children={children} error={exc}", flush=True)
    sys.exit(1)
elif MODE == "whoami":
    status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
    writable = {}
    for d in ("/", "/app", "/etc", "/tmp", "/dev/shm"):
        try:
            with open(os.path.join(d, "probe-write-test"), "w") as f:
                f.write("x")
            writable[d] = True
        except OSError:
            writable[d] = False
    print("WHOAMI " + json.dumps({"uid": os.getuid(), "gid": os.getgid(), "cap_eff": status["CapEff"].strip(),
                                  "no_new_privs": status.get("NoNewPrivs", "").strip(), "writable": writable,
                                  "env": {k: v for k, v in os.environ.items() if "SERVER" in k}}), flush=True)
elif MODE == "hang":
    time.sleep(3600)
elif MODE == "hang-on-gpu":  # hangs on the GPU named (the swarm lab's fake ones), translates anywhere else
    if os.environ.get("DOCKER_RESOURCE_GPU") == sys.argv[2]:
        time.sleep(3600)
    translate()
else:
    sys.exit(f"unknown mode {MODE}")
