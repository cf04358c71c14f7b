"""An IWSLT 2026 style image under `harness evaluate` in Docker (issue 11): SimulStream 1.0.0's own HTTP
speech-processor server as the image's command (wheel from the host, installed without its dependencies), serving
a harness speech agent through `harness.client.simulstream_processor`. Driven from the server container over the
run's internal network, it gives the same predictions, delays and non-CA scores as the same agent in an image
running the harness client; the participant's isolation is the same. The simulstream_http template runs as is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.images.base import DEFAULT_TAG
from harness.layout import ResultsDir
from harness.runlog import read_records
from tests.simulstream_images import CHUNK_MS, ROOT, simulstream_submission, speech_task, submission

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_simulstream_server_image_equals_the_native_client(tmp_path: Path) -> None:
    cfg = speech_task(tmp_path)
    subs = tmp_path / "subs"
    simulstream_submission(subs, "simulstream")
    native = submission(subs, "native", {"command": f'harness client --server "$HARNESS_SERVER_URL" --audio pcm16 '
                                                    f'--agent agent.py --chunk-ms {CHUNK_MS}'})
    (native / "Dockerfile").write_text(f"FROM {DEFAULT_TAG}\nCOPY agent.py /app/\n", encoding="utf-8")

    out = tmp_path / "results"
    proc = subprocess.run([sys.executable, "-m", "harness", "evaluate", str(subs), "--config", str(cfg), "--output",
                           str(out), "--dataset", "dev", "--workers", "2"], capture_output=True, text=True,
                          timeout=1500)
    assert proc.returncode == 0, proc.stderr
    runs = {r["submission"]: r for r in json.loads(ResultsDir(out).summary.read_text())["runs"]}
    assert runs["simulstream"]["status"] == "ok", runs["simulstream"].get("reason")
    assert runs["native"]["status"] == "ok", runs["native"].get("reason")

    def log(name: str) -> dict[int, dict]:
        return {r["index"]: r for r in read_records(ResultsDir(out).run(name, "dev").instances_log)}

    driven, ref = log("simulstream"), log("native")
    assert sorted(driven) == sorted(ref) == [0, 1, 2]
    for i in ref:
        assert (driven[i]["prediction"], driven[i]["delays"]) == (ref[i]["prediction"], ref[i]["delays"])
        assert [r["text"] for r in driven[i]["revisions"]] == [r["text"] for r in ref[i]["revisions"]]
    scores = {name: {k: v["score"] for k, v in runs[name]["scores"].items()
                     if isinstance(v, dict) and "score" in v and not k.endswith("_CA")} for name in runs}
    assert scores["simulstream"] == scores["native"] and "NE" in scores["native"]
    client_log = ResultsDir(out).run("simulstream", "dev").client_log.read_text()
    assert "Serving on http://0.0.0.0:8080" in client_log  # SimulStream's own server ran, unchanged
    manifest = json.loads(ResultsDir(out).submission("simulstream").manifest.read_text())
    assert manifest["submission_yaml"]["interface"] == "simulstream-http"
    assert manifest["submission_yaml"]["speech_processor_config"] == "/app/processor.yaml"
    isolation = manifest["runs"]["dev"]["isolation"]
    assert isolation["cap_drop"] == ["ALL"] and isolation["read_only_rootfs"] and isolation["network_internal"]


@pytest.mark.apertium
def test_the_simulstream_http_template_runs_as_is(tmp_path: Path) -> None:
    """agent_templates/simulstream_http, its Dockerfile and configs unchanged (FROM this checkout's base tag): the
    Whisper cascade behind SimulStream's own server translates the first two dev recordings."""
    import shutil

    from agent_templates.fill_wheels import fill

    template = ROOT / "agent_templates" / "simulstream_http"
    assert fill(template) == 0  # git-ignored wheels/, kept between runs
    sub = tmp_path / "subs" / "simulstream-http"  # its own image tag: tests/test_context_docker.py has a `template`
    shutil.copytree(template, sub)
    dockerfile = sub / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("FROM harness-base:latest", f"FROM {DEFAULT_TAG}"))
    cfg = speech_task(tmp_path / "task", n=2, limits={"memory": "2g", "startup_timeout_s": 300,
                                                      "instance_timeout_s": 300, "idle_timeout_s": 120})
    out = tmp_path / "results"
    proc = subprocess.run([sys.executable, "-m", "harness", "evaluate", str(sub), "--config", str(cfg), "--output",
                           str(out), "--dataset", "dev"], capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr
    run = json.loads(ResultsDir(out).summary.read_text())["runs"][0]
    assert run["status"] == "ok", run.get("reason")
    assert run["scores"]["BLEU"]["score"] > 15
    assert "Serving on http://0.0.0.0:8080" in ResultsDir(out).run("simulstream-http", "dev").client_log.read_text()
