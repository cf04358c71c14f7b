"""Hardware and compute under `harness evaluate` in Docker: each run's manifest entry has the host, the
participant's start-up time (its container's start, as the engine records it, to the first request the server
saw; for an agent server the driver's first good probe) and its compute time over the source, consistent with the
run's own records and timings; the leaderboard shows them on the run page and in a column."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.images.base import DEFAULT_TAG
from tests.evaluate_data.support import leftovers
from tests.speech_task import counter_submission, make_task
from tests.text_task import make_text_task

pytestmark = [pytest.mark.docker, pytest.mark.espeak]

ROOT = Path(__file__).resolve().parent.parent


def _evaluate(subs: Path, config: Path, out: Path) -> dict:
    proc = subprocess.Popen([sys.executable, "-m", "harness", "evaluate", str(subs), "--config", str(config),
                             "--output", str(out), "--dataset", "dev"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    assert leftovers(f"harness.pid={proc.pid}") == []  # nothing of its runs is left behind
    return json.loads((out / "summary.json").read_text())


def _consistent(out: Path, sub: str, speech: bool, by: str) -> dict:
    """The run's manifest entry, checked against its own records and timings (bounds that timing cannot break)."""
    manifest = json.loads((out / sub / "manifest.json").read_text())
    run = manifest["runs"]["dev"]
    assert run["status"] == "ok", run["reason"]
    start = run["startup"]
    assert start["by"] == by
    assert 0 <= start["seconds"] <= run["timings"]["total_s"]
    assert start["seconds"] == pytest.approx(start["first_request_at"] - start["started_at"], abs=2e-3)
    low, high = run["window"]  # the whole run, on the same (host) clock
    assert low - 1e-3 <= start["started_at"] <= start["first_request_at"] <= high + 1e-3
    records = [json.loads(x) for x in (out / sub / "dev" / "instances.log").read_text().splitlines()]
    client = sum(r["timing"]["client_s"] for r in records)
    source = sum(r["source_length"] for r in records) / (1000.0 if speech else 1.0)
    comp = run["compute"]
    assert comp["instances"] == len(records) and comp["participant_s"] == pytest.approx(client, abs=1e-5)
    assert comp["source"] == pytest.approx(source) and comp["source_unit"] == ("s" if speech else "word")
    assert comp["rtf"] == pytest.approx(client / source, rel=1e-4, abs=1e-6)
    assert comp["participant_s"] <= run["timings"]["total_s"]
    for host in (run["hardware"], manifest["hardware"]):
        assert host["cpu"] and host["cpu_count"] >= 1 and host["memory_bytes"] > 0 and host["gpu"]
    return run


def test_startup_and_rtf_of_a_speech_client_and_an_agent_server(tmp_path: Path) -> None:
    config = make_task(tmp_path / "speech")
    subs = tmp_path / "subs"
    counter_submission(subs)
    out = tmp_path / "results"
    _evaluate(subs, config, out)
    _consistent(out, "counter", speech=True, by="request")

    (tmp_path / "text").mkdir()
    text = make_text_task(tmp_path / "text", limits="limits: {instance_timeout_s: 30, idle_timeout_s: 30}\n")
    service = tmp_path / "services" / "hw-echo"  # its own image tag: tests/test_drivers_docker.py's `echo` differs
    service.mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "agents" / "echo_service.py", service / "echo_service.py")
    (service / "Dockerfile").write_text(f'FROM {DEFAULT_TAG}\nCOPY echo_service.py /app/\n'
                                        f'CMD ["python3", "/app/echo_service.py", "2023"]\n', encoding="utf-8")
    (service / "submission.yaml").write_text(
        "team: tests\nsystem: hw-echo\ncontact: t@example.org\ntrack: text-en-es\nkind: primary\n"
        "description: echo service\nbuild: {dockerfile: Dockerfile}\ninterface: simuleval-agent-server\n"
        "port: 2023\n", encoding="utf-8")
    text_out = tmp_path / "text-results"
    _evaluate(tmp_path / "services", text, text_out)
    _consistent(text_out, "hw-echo", speech=False, by="probe")

    from leaderboard.render import render_site

    render_site(out, tmp_path / "site", None)
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert ">RTF<" in index and ">Start-up<" in index
    page = next((tmp_path / "site" / "runs").glob("counter*/index.html")).read_text(encoding="utf-8")
    assert "Hardware and compute" in page and "GPU:" in page and "from the participant's container start to its " \
        "first request" in page
    assert "Real-time factor" in page and "compute time over audio duration" in page
