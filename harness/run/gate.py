"""The start gate: a participant placed on another node is started early and waits inside its container until the
harness lets it run.

Starting a container on a Swarm worker costs about a second (the node sets the run's overlay network up), most of
it while the server on the data node is still starting. The swarm backend therefore creates the participant's
service together with the server's and runs the participant's command behind this gate: a few lines of Python (the
image's own `python3`, isolated mode) that wait on the server's `GET /gate` (held until it opens, up to 10 s per
request; retried every 10 ms while the server does not listen yet) and then `exec` the command unchanged, with
the same environment, user and PID. The server keeps `/gate` closed (`harness server --gate-file`) until the harness
creates the gate file in the run folder (bind-mounted into the server's container on the data node, where the
harness runs; the participant never sees it), which it does once the server answers `/health` and the run's network
holds nothing but the server (the warm network's placeholder is gone). So the participant's own
code starts exactly when it did before, only without waiting for its container. Images without `python3` start
the old way, after the server is healthy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: Where an image's python3 may live.
PYTHON_PATHS = ("/usr/bin/python3", "/usr/local/bin/python3")
#: The gate: wait on GET /gate (held requests, no proxies), then exec the command; a shell's messages and
#: codes when it cannot.
GATE = (
    "import http.client,os,sys,time\n"
    "host,port,budget=sys.argv[1],int(sys.argv[2]),float(sys.argv[3]);argv=sys.argv[4:]\n"
    "end=time.monotonic()+budget\n"
    "while True:\n"
    "  try:\n"
    "    c=http.client.HTTPConnection(host,port,timeout=max(1,min(budget,10))+5)\n"
    "    c.request('GET','/gate?wait=%g'%max(0,min(10,end-time.monotonic())))\n"
    "    s=c.getresponse().status;c.close()\n"
    "    if s==200: break\n"
    "  except (OSError,http.client.HTTPException): pass\n"
    "  if time.monotonic()>=end:\n"
    "    sys.stderr.write('harness gate: the evaluation server did not let the participant start within %gs\\n'"
    "%budget);sys.exit(125)\n"
    "  time.sleep(0.01)\n"
    "try: os.execvp(argv[0],argv)\n"
    "except FileNotFoundError: sys.stderr.write('sh: 1: %s: not found\\n'%argv[0]);sys.exit(127)\n"
    "except PermissionError: sys.stderr.write('sh: 1: %s: Permission denied\\n'%argv[0]);sys.exit(126)\n"
)


def gated(python: str, host: str, port: int, budget_s: float, argv: Sequence[str]) -> list[str]:
    """`argv` behind the gate: run by `python` once the server at host:port opens GET /gate (within budget_s)."""
    return [python, "-I", "-S", "-c", GATE, host, str(port), f"{budget_s:g}", *argv]


_PYTHONS: dict[str, str | None] = {}


def image_python(api: Any, image: str) -> str | None:
    """The path of python3 in an image on this engine (None: none), read from a container that never starts;
    cached per image id."""
    image_id = str(api.inspect_image(image)["Id"])
    if image_id in _PYTHONS:
        return _PYTHONS[image_id]
    found = None
    cid = api.create_container(image_id, ["/harness-never-started"], entrypoint=[], network_disabled=True)["Id"]
    try:
        for path in PYTHON_PATHS:  # HEAD of the archive endpoint: the file's stat, no content
            if api.head(api._url("/containers/{0}/archive", cid), params={"path": path}).status_code == 200:
                found = path
                break
    finally:
        api.remove_container(cid, force=True)
    _PYTHONS[image_id] = found
    return found
