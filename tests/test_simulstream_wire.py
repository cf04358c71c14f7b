"""What reaches a SimulStream server from the `simulstream-http` driver is what SimulStream 1.0.0's own client
(`HttpProxySpeechProcessor`) sends (issue 27): the same request lines, the same headers in the same order with the
same values, the same JSON bodies (keys, order, spacing), one connection per request, and session ids of the same
form (`uuid4().hex`): nothing that tells the participant it is the harness asking, or which instance it is.

Both talk to `tests.agent_server_fakes.FakeAgentServer`, which keeps every request as it arrived."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest

from tests.agent_server_fakes import FakeAgentServer, speech_task
from tests.driver_support import SIMULSTREAM, run_driver
from tests.simulstream_wire import Request, real_client_requests

pytest.importorskip("simulstream")

def form(req: Request, port: int) -> tuple[str, list[str], list[str]]:
    """(request line, header lines with this server's port and the body's length written as such, body keys)."""
    line, headers, body = req
    shown = [h.replace(f":{port}", ":PORT").replace(f": {len(body)}", ": LEN") for h in headers]
    doc = json.loads(body)
    assert body == json.dumps(doc).encode(), "the body is json.dumps's own spelling"
    return line, shown, list(doc)


def session_of(req: Request) -> str:
    return json.loads(req[2])["session_id"]


def test_the_driver_sends_what_simulstreams_own_client_sends(tmp_path: Path) -> None:
    real = real_client_requests()
    with FakeAgentServer("simulstream", chunk_s=0.5) as fake:
        report, recs = run_driver(speech_task(tmp_path, [1.2, 0.7]), tmp_path / "out", SIMULSTREAM, fake.port)
        ours = list(fake.calls.raw)
        connections = fake.connections
    assert report.state == "done" and [recs[i]["status"] for i in (0, 1)] == ["ok", "ok"]
    real_port = int(re.search(r":(\d+)$", [h for h in real[0][1] if h.startswith("Host:")][0]).group(1))
    expected = {form(r, real_port)[0]: form(r, real_port) for r in real}
    for req in ours:  # every request of the driver (its probe's included) has the form of the client's own
        line = req[0]
        assert line in expected, f"the real client never sends {line}"
        assert form(req, fake.port) == expected[line], line
    assert connections == len(ours)  # a connection of its own for every request, as urllib opens one
    ids = [session_of(r) for r in ours]
    for sid in ids:
        assert re.fullmatch(r"[0-9a-f]{32}", sid) and uuid.UUID(hex=sid).version == 4, sid
    assert re.fullmatch(r"[0-9a-f]{32}", session_of(real[0]))
    # the probe's session, then one per recording, each used for all of its requests and cleared at its end
    sessions = list(dict.fromkeys(ids))
    assert len(sessions) == 3
    for sid in sessions:
        lines = [r[0].split(" HTTP")[0] for r in ours if session_of(r) == sid]
        assert lines[-1] == "POST /clear"
    recording = [r[0].split(" HTTP")[0] for r in ours if session_of(r) == sessions[1]]
    assert recording[:3] == ["GET /speech_chunk_size", "PUT /source_language", "PUT /target_language"]
    assert recording[-2:] == ["POST /end_of_stream", "POST /clear"]
