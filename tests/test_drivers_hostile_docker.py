"""Hostile agent-server images under `harness evaluate` in Docker (issue 27): one batch of stand-ins
(`tests/agents/hostile_agent_server.py`), each misbehaving in one way, and the verdict each must get.

* an answer nested 100,000 deep is the instances' `protocol_violation`, not the driver's death (`infra_error`);
* a server the total timeout kills (exit 137) is a `timeout` naming the limit, not a `crash`, and the instance the
  kill cut is logged as cut by the harness, not as the participant's protocol violation;
* a start-up answer of 10 MiB, of garbage, or connections cut every time: a `protocol_violation` at once, after a
  probe or three, not a start-up `timeout` after 200 probes;
* a server that listens on the declared port but never answers: a start-up `timeout` whose reason names no other
  port (Docker's embedded DNS listens on 127.0.0.11 in every container; it is not the participant's);
* SimulStream's processor pool of one survives a probe that got no answer (the probe clears its session);
* what reaches a SimulStream server is what SimulStream's own client sends (request lines, headers, bodies, ids);
* the leaderboard of these results prints none of the participants' control characters raw.

The batch runs once for the module (about a minute); every test reads its results.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.images.base import DEFAULT_TAG
from harness.layout import ResultsDir
from tests.evaluate_data.support import leftovers
from tests.text_task import make_text_task

pytestmark = [pytest.mark.docker]

ROOT = Path(__file__).resolve().parent.parent
STAND_IN = ROOT / "tests" / "agents" / "hostile_agent_server.py"
TOTAL_S = 25  # the harness's own total timeout: only `hang-output` reaches it
SIMULEVAL = ("deep-output", "hang-output", "start-huge", "start-cut", "start-garbage", "start-hang")
SIMULSTREAM = ("ss-record", "ss-firstcut")


def _submission(subs: Path, mode: str) -> None:
    sub = subs / mode
    sub.mkdir(parents=True)
    shutil.copy(STAND_IN, sub / "server.py")
    port = 8080 if mode.startswith("ss-") else 2023
    (sub / "Dockerfile").write_text(f'FROM {DEFAULT_TAG}\nCOPY server.py /app/\nCMD ["python3", "/app/server.py", '
                                    f'"{port}", "{mode}"]\n', encoding="utf-8")
    doc: dict[str, Any] = {
        "team": "tests", "system": mode, "contact": "t@example.org",
        "track": "speech-en-es" if mode.startswith("ss-") else "text-en-es", "kind": "primary",
        "description": "stand-in", "build": {"dockerfile": "Dockerfile"},
        "interface": "simulstream-http" if mode.startswith("ss-") else "simuleval-agent-server", "port": port}
    if mode.startswith("ss-"):
        doc["speech_processor_config"] = "/app/none.yaml"
    (sub / "submission.yaml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")


def _config(root: Path) -> Path:
    """Both tracks: text (three sentences) and speech (the first bundled dev recording, 16 kHz)."""
    make_text_task(root)
    wav = (ROOT / "data/speech/dev.list").read_text().splitlines()[0].strip()
    (root / "wav.lst").write_text(str(ROOT / "data/speech" / wav) + "\n", encoding="utf-8")
    (root / "ref.es").write_text((ROOT / "data/udhr/dev.es").read_text(encoding="utf-8").splitlines()[0] + "\n",
                                 encoding="utf-8")
    doc = yaml.safe_load((root / "task.yaml").read_text(encoding="utf-8"))
    doc["tracks"].append({"name": "speech-en-es", "modality": "speech", "source_lang": "en", "target_lang": "es",
                          "segment_size": 500, "datasets": {"dev": {"source": str(root / "wav.lst"),
                                                                    "references": {"orig": str(root / "ref.es")}}}})
    doc["limits"] = {"instance_timeout_s": 60, "idle_timeout_s": 60, "total_timeout_s": TOTAL_S,
                     "startup_timeout_s": 8}
    cfg = root / "task.yaml"
    cfg.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return cfg


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, Any]]]:
    root = tmp_path_factory.mktemp("hostile-images")
    config = _config(root)
    for mode in (*SIMULEVAL, *SIMULSTREAM):
        _submission(root / "subs", mode)
    out = root / "results"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "evaluate", str(root / "subs"), "--config", str(config),
                             "--output", str(out), "--dataset", "dev", "--workers", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, stderr = proc.communicate(timeout=900)
    assert proc.returncode == 0, stderr[-3000:]
    assert leftovers(f"harness.pid={proc.pid}") == []
    runs = {r["submission"]: r for r in json.loads((out / "summary.json").read_text())["runs"]}
    return out, runs


def _client_log(out: Path, sub: str) -> str:
    return ResultsDir(out).run(sub, "dev").client_log.read_text(encoding="utf-8", errors="replace")


def _manifest_run(out: Path, sub: str) -> dict[str, Any]:
    return json.loads(ResultsDir(out).submission(sub).manifest.read_text(encoding="utf-8"))["runs"]["dev"]


def test_deeply_nested_json_is_the_instances_violation(batch: tuple[Path, dict]) -> None:
    out, runs = batch
    run = runs["deep-output"]
    assert run["status"] == "protocol_violation", run.get("reason")
    records = [json.loads(x) for x in ResultsDir(out).run("deep-output", "dev").instances_log.read_text()
               .splitlines()]
    assert len(records) == 3 and {r["status"] for r in records} == {"protocol_violation"}
    assert all("nested deeper than 64 levels" in r["error"] for r in records), records[0]["error"]


def test_our_total_timeout_is_a_timeout_not_a_crash(batch: tuple[Path, dict]) -> None:
    out, runs = batch
    run = runs["hang-output"]
    assert run["status"] == "timeout", run.get("reason")
    assert run["reason"].startswith(f"total timeout ({TOTAL_S} s) after "), run["reason"]
    assert _manifest_run(out, "hang-output")["timed_out"] == f"total timeout ({TOTAL_S} s)"
    # the instance our kill cut is marked so, not the participant's violation, and none after it is an error
    # (issue 32, item 15)
    log = ResultsDir(out).run("hang-output", "dev").instances_log
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [(r["index"], r["status"]) for r in records] == [(0, "timeout")], records
    assert records[0]["error"].startswith(f"cut by the harness (total timeout ({TOTAL_S} s)): GET /output"), records


@pytest.mark.parametrize(("sub", "probes", "reason"), [
    ("start-huge", 1, "at start-up: GET /: answer larger than 1000000 bytes"),
    ("start-garbage", 1, "at start-up: GET /: the answer is not JSON within bounds (malformed JSON"),
    ("start-cut", 3, "at start-up: GET /: the connection was closed before a complete answer (3 times in a row)"),
])
def test_a_bad_startup_answer_is_a_violation_at_once(batch: tuple[Path, dict], sub: str, probes: int,
                                                     reason: str) -> None:
    out, runs = batch
    run = runs[sub]
    assert run["status"] == "protocol_violation", run.get("reason")
    assert run["reason"].startswith(reason), run["reason"]
    assert _client_log(out, sub).count("request: GET /\n") == probes


def test_a_listener_that_never_answers_is_a_startup_timeout_naming_no_other_port(batch: tuple[Path, dict]) -> None:
    _, runs = batch
    run = runs["start-hang"]
    assert run["status"] == "timeout", run.get("reason")
    assert "never answered on port 2023" in run["reason"] and "listens on" not in run["reason"], run["reason"]


def test_the_simulstream_pool_survives_an_unanswered_probe(batch: tuple[Path, dict]) -> None:
    out, runs = batch
    assert runs["ss-firstcut"]["status"] == "ok", runs["ss-firstcut"].get("reason")
    log = _client_log(out, "ss-firstcut")
    # the probe: asked, cut (the processor kept), cleared; asked again, answered, cleared; then the recording
    assert log.count("request: GET /speech_chunk_size") == 3 and log.count("request: POST /clear") == 3


def test_a_simulstream_server_sees_what_simulstreams_own_client_sends(batch: tuple[Path, dict]) -> None:
    pytest.importorskip("simulstream")
    from tests.simulstream_wire import real_client_requests

    out, runs = batch
    assert runs["ss-record"]["status"] == "ok", runs["ss-record"].get("reason")
    seen = [json.loads(line[5:]) for line in _client_log(out, "ss-record").splitlines() if line.startswith("raw: ")]

    def form(line: str, headers: list[str], body: str) -> tuple[str, list[str], list[str]]:
        shown = [re.sub(r"^Host: .*", "Host: HOST", h).replace(f": {len(body)}", ": LEN") for h in headers]
        doc = json.loads(body)
        assert body == json.dumps(doc), "the body is json.dumps's own spelling"
        return line, shown, list(doc)

    real = {r[0]: form(r[0], r[1], r[2].decode()) for r in real_client_requests()}
    assert len(seen) >= 8
    for req in seen:
        assert req["line"] in real, f"the real client never sends {req['line']}"
        assert form(req["line"], req["headers"], req["body"]) == real[req["line"]]
        assert [h for h in req["headers"] if h.startswith("Host: ")] == ["Host: participant:8080"]
        sid = json.loads(req["body"])["session_id"]
        assert re.fullmatch(r"[0-9a-f]{32}", sid) and uuid.UUID(hex=sid).version == 4, sid


def test_the_leaderboard_prints_no_control_character_raw(batch: tuple[Path, dict], tmp_path: Path) -> None:
    out, runs = batch
    assert "\x1b" in _client_log(out, "deep-output")
    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "harness", "leaderboard", str(out), "--output", str(site)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    raw = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")
    pages = [*site.rglob("*.html"), *site.rglob("*.csv")]
    assert pages
    for page in pages:
        found = raw.search(page.read_text(encoding="utf-8"))
        assert found is None, f"{page.relative_to(site)}: {found.group()!r}"
    assert any("\\x1b]0;owned title\\x07" in p.read_text(encoding="utf-8") for p in site.rglob("*.html"))
