"""Hardware and compute: the host probe (this machine, and a real `nvidia-smi` stand-in on PATH), and the start-up
time and real-time factor that a real `harness run` records in run.json, consistent with its own instances.log."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.run import compute, hardware
from tests.text_task import make_text_task

ROOT = Path(__file__).resolve().parent.parent

FAKE_SMI = """#!/bin/sh
# a stand-in for nvidia-smi: answers only the query the harness must ask
[ "$*" = "--query-gpu=name,driver_version,memory.total --format=csv,noheader" ] || { echo "bad args: $*" >&2; exit 9; }
echo "NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB"
echo "NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB"
echo "NVIDIA A10, 550.54.15, 23028 MiB"
"""


def test_the_host_probe_on_this_machine() -> None:
    host = hardware.probe()
    assert host["cpu"].strip() and host["cpu_count"] >= 1 and host["memory_bytes"] > 0
    if shutil.which("nvidia-smi") is None:  # this machine has none: recorded as none, never an error
        assert host["gpus"] == [] and host["gpu"] == "none" and host["summary"].endswith("GPU: none")
    assert host["cpu"] in host["summary"] and f"{host['cpu_count']} cores" in host["summary"]


def _on_path(monkeypatch: pytest.MonkeyPatch, folder: Path, script: str) -> None:
    folder.mkdir()
    exe = folder / "nvidia-smi"
    exe.write_text(script, encoding="utf-8")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


def test_gpus_are_read_from_nvidia_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _on_path(monkeypatch, tmp_path / "bin", FAKE_SMI)
    host = hardware.probe()
    assert host["gpus"] == [{"name": "NVIDIA H100 80GB HBM3", "driver": "550.54.15", "memory": "81559 MiB"}] * 2 + [
        {"name": "NVIDIA A10", "driver": "550.54.15", "memory": "23028 MiB"}]
    assert host["gpu"] == ("2x NVIDIA H100 80GB HBM3 (driver 550.54.15, 81559 MiB); "
                           "1x NVIDIA A10 (driver 550.54.15, 23028 MiB)")


def test_a_failing_nvidia_smi_is_no_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A driver that is installed but broken (nvidia-smi exits non-zero) is recorded as no GPU, not an error."""
    _on_path(monkeypatch, tmp_path / "bin", "#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
    host = hardware.probe()
    assert host["gpus"] == [] and host["gpu"] == "none"


def test_startup_and_compute_records() -> None:
    assert compute.startup(100.0, {"at": 102.5, "by": "probe"}) == {
        "seconds": 2.5, "started_at": 100.0, "first_request_at": 102.5, "by": "probe"}
    assert compute.startup(None, {"at": 1.0}) is None and compute.startup(1.0, None) is None
    assert compute.started_at("2026-11-26T13:04:04.123456789Z") == pytest.approx(1795698244.123456)
    assert compute.started_at("0001-01-01T00:00:00Z") is None  # the engine's "never started"
    records = [{"source_length": 2000.0, "timing": {"client_s": 0.5}}, {"source_length": 3000.0,
                                                                         "timing": {"client_s": 1.0}},
               {"source_length": 1000.0}]  # a record without timing (a log from elsewhere) is left out
    assert compute.compute(records, speech=True) == {"participant_s": 1.5, "source": 5.0, "source_unit": "s",
                                                     "rtf": 0.3, "instances": 2}
    assert compute.compute([{"source_length": 3, "timing": {"client_s": 0.3}}], speech=False)["rtf"] == 0.1
    assert compute.compute([{"source_length": 3}], speech=False) is None


def _harness_run(args: list[str]) -> tuple[dict, list[dict], float]:
    """Run `harness run` as its own process; (run.json, instances.log records, the wall time around it)."""
    out = Path(args[args.index("--output") + 1])
    t0 = time.time()
    proc = subprocess.run([sys.executable, "-m", "harness", "run", *args], capture_output=True, text=True,
                          timeout=600, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.time() - t0
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((out / "run.json").read_text(encoding="utf-8"))
    records = [json.loads(line) for line in (out / "instances.log").read_text(encoding="utf-8").splitlines()]
    return meta, records, wall


def _check(meta: dict, records: list[dict], wall: float, speech: bool) -> None:
    start = meta["startup"]
    assert start["by"] == "request" and 0 <= start["seconds"] <= wall
    assert start["seconds"] == pytest.approx(start["first_request_at"] - start["started_at"], abs=2e-3)
    comp = meta["compute"]
    client = sum(r["timing"]["client_s"] for r in records)
    source = sum(r["source_length"] for r in records) / (1000.0 if speech else 1.0)
    assert comp["instances"] == len(records) and comp["participant_s"] == pytest.approx(client, abs=1e-5)
    assert comp["source"] == pytest.approx(source) and comp["source_unit"] == ("s" if speech else "word")
    assert comp["rtf"] == pytest.approx(client / source, rel=1e-4, abs=1e-6)
    assert 0 <= comp["participant_s"] <= wall
    assert meta["hardware"]["cpu"] and meta["hardware"]["memory_bytes"] > 0 and meta["hardware"]["gpu"]


def test_harness_run_records_startup_and_rtf_of_a_speech_run(tmp_path: Path) -> None:
    if not (ROOT / "data" / "speech" / "dev.list").is_file():
        pytest.skip("data/speech not generated (python3 -m harness.data.prepare)")
    agent = tmp_path / "agent.py"
    agent.write_text("from harness.client.agent import ReadAction, SpeechAgent, WriteAction\n\n\n"
                     "class Wait(SpeechAgent):\n    def policy(self, states):\n"
                     "        if not states.source_finished:\n            return ReadAction()\n"
                     "        return WriteAction('hola', finished=True)\n", encoding="utf-8")
    meta, records, wall = _harness_run(["--config", str(ROOT / "configs" / "demo.yaml"), "--track", "speech-en-es",
                                        "--dataset", "dev", "--instances", "0-2", "--agent", str(agent),
                                        "--output", str(tmp_path / "run")])
    assert len(records) == 3
    _check(meta, records, wall, speech=True)


def test_harness_run_records_seconds_per_source_word_of_a_text_run(tmp_path: Path) -> None:
    cfg = make_text_task(tmp_path)
    meta, records, wall = _harness_run(["--config", str(cfg), "--dataset", "dev", "--agent",
                                        str(ROOT / "tests" / "agents" / "echo_text.py"),
                                        "--output", str(tmp_path / "run")])
    _check(meta, records, wall, speech=False)
    assert meta["compute"]["source"] == 2 + 6 + 5  # the words of tests/text_task.py's three sentences


@pytest.mark.slow
def test_the_leaderboard_shows_measured_and_declared_hardware(tmp_path: Path) -> None:
    """Two runs of one board: one timed by the harness (its run.json's measures, in a manifest as `harness
    evaluate` writes it) and a log submission that declared its hardware (`hardware: {declared: ...}`)."""
    from leaderboard.render import render_site

    cfg = make_text_task(tmp_path)
    out = tmp_path / "results"
    runs = []
    for sub in ("timed", "logged"):
        meta, _, _ = _harness_run(["--config", str(cfg), "--dataset", "dev", "--agent",
                                   str(ROOT / "tests" / "agents" / "echo_text.py"), "--output", str(out / sub / "dev")])
        runs.append({"submission": sub, "team": "t", "system": sub, "track": "text-en-es", "dataset": "dev",
                     "status": "ok", "scores": json.loads((out / sub / "dev" / "scores.json").read_text())})
        entry = {"status": "ok", "startup": meta["startup"], "compute": meta["compute"], "hardware": meta["hardware"]}
        manifest = {"submission": sub, "hardware": meta["hardware"], "runs": {"dev": entry}}
        if sub == "logged":  # a log submission's manifest: its declared hardware, nothing the harness timed
            declared = {"declared": "1x A100 80GB, 32 cores"}
            manifest.update(hardware=declared, runs={"dev": {"status": "ok", "hardware": declared}})
        (out / sub / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (out / "summary.json").write_text(json.dumps({"config_sha256": None, "runs": runs}), encoding="utf-8")
    timed = json.loads((out / "timed" / "manifest.json").read_text())["runs"]["dev"]

    render_site(out, tmp_path / "site", None)
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert ">Hardware<" in index and ">Start-up<" in index and ">RTF<" in index
    assert f"{timed['startup']['seconds']:.1f} s" in index and f"{timed['compute']['rtf']:.3g} s/word" in index
    assert "1x A100 80GB, 32 cores" in index and ">declared<" in index
    pages = {p.parent.name: p.read_text(encoding="utf-8") for p in (tmp_path / "site" / "runs").glob("*/index.html")}
    timed_page = next(v for k, v in pages.items() if k.startswith("timed"))
    logged_page = next(v for k, v in pages.items() if k.startswith("logged"))
    assert "Hardware and compute" in timed_page and timed["hardware"]["summary"] in timed_page
    assert "compute seconds per source word" in timed_page and "its first request" in timed_page
    assert "1x A100 80GB, 32 cores" in logged_page and "declared by the team, not measured" in logged_page
    assert logged_page.count("not measured") >= 3  # start-up, compute time, real-time factor


def test_declared_hardware_is_read_in_each_form_a_manifest_may_hold() -> None:
    from leaderboard.compute import compute_view

    measured = hardware.probe()
    for manifest in ({"hardware": "8x H100", "kind": "log"}, {"hardware": {"declared": "8x H100"}},
                     {"hardware": measured, "kind": "log", "submission_yaml": {"hardware": "8x H100"}}):
        view = compute_view(manifest, "dev")
        assert view.declared and view.hardware == view.short_hardware == "8x H100", manifest
    view = compute_view({"hardware": measured, "runs": {"dev": {"startup": {"seconds": 1.5, "by": "probe"}}}}, "dev")
    assert not view.declared and view.hardware == measured["summary"] and view.startup_s == 1.5 and view.rtf is None
