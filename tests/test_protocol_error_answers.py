"""A `ProtocolError` is plain Python (the client side never loads tornado's web module) that the server answers with
its own status and one access-log line, never as an uncaught exception."""

from __future__ import annotations

import subprocess
import sys

import requests

from tests.evaluate_data.support import CONFIG
from tests.templates_util import listening_url


def test_the_client_side_loads_no_web_framework() -> None:
    probe = ("import sys; import harness.client.connection, harness.client.runner, harness.protocol; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] == 'tornado'))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


def test_refusals_keep_their_status_and_log_one_line_each(tmp_path) -> None:
    server = subprocess.Popen([sys.executable, "-m", "harness", "server", "--config", str(CONFIG), "--dataset", "dev",
                               "--port", "0", "--output", str(tmp_path / "run")], stderr=subprocess.PIPE, text=True)
    try:
        url = listening_url(server.stderr.readline())
        unknown = requests.post(url + "/v1/instances/x/step", json={"write": "a"}, timeout=30)
        wrong_type = requests.post(url + "/v1/instances/0/step", data="{}", timeout=30,
                                   headers={"Content-Type": "text/plain"})
        unfinished = requests.get(url + "/result", timeout=30)
        # the access log is written after each answer is sent: read it until the three refusals are there
        logged: list[str] = []
        while sum(1 for ln in logged if any(f" {c} " in ln for c in ("404", "415", "409"))) < 3:
            nxt = server.stderr.readline()
            assert nxt, "the server ended before logging the three refusals: " + "".join(logged)
            logged.append(nxt)
    finally:
        server.terminate()
        _, rest = server.communicate(timeout=60)
    err = "".join(logged) + rest
    assert (unknown.status_code, wrong_type.status_code, unfinished.status_code) == (404, 415, 409)
    assert "not an integer" in unknown.json()["error"] and unknown.json()["status"] == 404
    assert "Content-Type must be application/json" in wrong_type.json()["error"]
    assert "Traceback" not in err and "Uncaught" not in err, err
    assert len([ln for ln in err.splitlines() if any(f" {c} " in ln for c in ("404", "415", "409"))]) == 3, err
