"""Agent-server submissions under `harness evaluate` in Docker: SimulEval 1.1.4's own agent service in an image
scores exactly as the same agent through the harness client; the participant cannot reach the evaluation server;
a wrong `port:`, a crash at start and a participant that never listens end with one clear reason."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from harness.images.base import DEFAULT_TAG
from tests.evaluate_data.support import leftovers, run_owned
from tests.templates_util import demo_text_dev
from tests.text_task import make_text_task

pytestmark = [pytest.mark.docker]

ROOT = Path(__file__).resolve().parent.parent


def _echo_submission(root: Path, name: str, cmd: str, port: int = 2023) -> None:
    sub = root / name
    sub.mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "agents" / "echo_service.py", sub / "echo_service.py")
    (sub / "Dockerfile").write_text(f"FROM {DEFAULT_TAG}\nCOPY echo_service.py /app/\nCMD {cmd}\n",
                                    encoding="utf-8")
    (sub / "submission.yaml").write_text(
        f"team: tests\nsystem: {name}\ncontact: t@example.org\ntrack: text-en-es\nkind: primary\n"
        f"description: echo service\nbuild: {{dockerfile: Dockerfile}}\ninterface: simuleval-agent-server\n"
        f"port: {port}\n", encoding="utf-8")


def _evaluate(subs: Path, config: Path, out: Path) -> tuple[dict, int]:
    """The runs of `harness evaluate` by submission, and the harness's pid (its resources' label)."""
    proc, pid = run_owned([sys.executable, "-m", "harness", "evaluate", str(subs), "--config", str(config),
                           "--output", str(out), "--dataset", "dev", "--workers", "2"], timeout=900)
    assert proc.returncode == 0, proc.stderr
    return {r["submission"]: r for r in json.loads((out / "summary.json").read_text())["runs"]}, pid


def test_echo_services_good_hostile_and_broken(tmp_path: Path) -> None:
    config = make_text_task(tmp_path, limits="limits: {instance_timeout_s: 30, idle_timeout_s: 30, "
                                             "startup_timeout_s: 8}\n")
    subs = tmp_path / "subs"
    probes = "server:8000,server:22,server:2023,participant:2023"
    _echo_submission(subs, "echo", f'["python3", "/app/echo_service.py", "2023", "--probe", "{probes}"]')
    _echo_submission(subs, "wrongport", '["python3", "/app/echo_service.py", "9999"]')
    _echo_submission(subs, "crasher", '["python3", "/app/echo_service.py", "2023", "--exit", "3"]')
    runs, pid = _evaluate(subs, config, tmp_path / "results")

    echo = runs["echo"]
    assert echo["status"] == "ok", echo.get("reason")
    records = [json.loads(x) for x in (tmp_path / "results" / "echo" / "dev" / "instances.log").read_text()
               .splitlines()]
    assert sorted(r["prediction"] for r in records) == sorted((tmp_path / "src.en").read_text().splitlines())
    log = (tmp_path / "results" / "echo" / "dev" / "client.log").read_text()
    # the evaluation server listens on its own loopback only: nothing of it is reachable from the participant
    for target in ("server:8000", "server:22", "server:2023"):
        assert f"probe {target}: failed" in log, log
    assert "CONNECTED" not in log.replace("probe participant:2023: CONNECTED", "")

    wrong = runs["wrongport"]
    assert wrong["status"] == "timeout"
    assert "never answered on port 2023" in wrong["reason"], wrong["reason"]
    # only the participant's own listener: not Docker's embedded DNS resolver (127.0.0.11, a port of its own)
    assert "; it listens on 9999, not on the port: 2023 that submission.yaml declares" in wrong["reason"], \
        wrong["reason"]

    crash = runs["crasher"]
    assert crash["status"] == "crash" and "code 3" in crash["reason"] and "crashing at start" in crash["reason"]
    assert leftovers(f"harness.pid={pid}") == []


#: the demo's first dev sentences that SimulEval's agent service is driven on, in its image and natively
DRIVEN_SENTENCES = 12


@pytest.mark.apertium
def test_simuleval_service_image_scores_equal_the_native_client(tmp_path: Path) -> None:
    from agent_templates.fill_wheels import fill

    template = ROOT / "agent_templates" / "simuleval_agent_server"
    sub = tmp_path / "subs" / "service"
    shutil.copytree(template, sub, ignore=shutil.ignore_patterns("wheels"))
    assert fill(sub) == 0
    config = demo_text_dev(tmp_path / "task", DRIVEN_SENTENCES)
    runs, _ = _evaluate(tmp_path / "subs", config, tmp_path / "results")
    assert runs["service"]["status"] == "ok", runs["service"].get("reason")
    driven = json.loads((tmp_path / "results" / "service" / "dev" / "scores.json").read_text())
    from harness.cli import main

    native = tmp_path / "native"
    assert main(["run", "--config", str(config), "--track", "text-en-es", "--dataset",
                 "dev", "--agent", str(ROOT / "agent_templates" / "simuleval_waitk" / "agent.py"), "--output",
                 str(native), "--waitk", "3"]) == 0
    ref = json.loads((native / "scores.json").read_text())
    assert driven["counts"]["instances"] == ref["counts"]["instances"] == DRIVEN_SENTENCES
    for key in ("BLEU", "chrF", "TER", "AL", "LAAL", "AP", "DAL", "ATD", "YAAL"):
        assert driven[key]["score"] == ref[key]["score"], key
    manifest = json.loads((tmp_path / "results" / "service" / "manifest.json").read_text())
    assert manifest["runs"]["dev"]["isolation"]["cap_drop"] == ["ALL"]
