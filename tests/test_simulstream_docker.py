"""An IWSLT 2026 style image under `harness evaluate` in Docker (issue 11): SimulStream 1.0.0's own HTTP
speech-processor server as the image's command (wheel from the host, installed without its dependencies), serving
a harness speech agent through `harness.client.simulstream_processor`. Driven from the server container over the
run's internal network, it gives the same predictions, delays and non-CA scores as the same agent in an image
running the harness client; the participant's isolation is the same."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.images.base import DEFAULT_TAG
from harness.layout import ResultsDir
from harness.runlog import read_records

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
AGENT = ROOT / "tests" / "agents" / "chunk_speech_agent.py"
CHUNK_MS = 1000
SERVER = "simulstream.server.speech_processors.remote.http_speech_processor_server"
DOCKERFILE = f"""FROM {DEFAULT_TAG}
USER root
COPY wheels/ /tmp/wheels/
RUN pip install --no-index --no-cache-dir --no-deps /tmp/wheels/simulstream-*.whl && rm -rf /tmp/wheels
USER participant
COPY agent.py server.yaml processor.yaml /app/
CMD ["python3", "-m", "{SERVER}", "--server-config", "/app/server.yaml", "--speech-processor-config", \\
     "/app/processor.yaml"]
"""


def speech_task(root: Path, n: int = 3) -> Path:
    """The first `n` utterances of the bundled speech dev set (absolute paths), segments of half a chunk."""
    wavs = [line.strip() for line in (ROOT / "data/speech/dev.list").read_text().splitlines()[:n]]
    (root / "wav.lst").write_text("\n".join(str(ROOT / "data/speech" / w) for w in wavs) + "\n", encoding="utf-8")
    refs = (ROOT / "data/udhr/dev.es").read_text(encoding="utf-8").splitlines()[:n]
    (root / "ref.es").write_text("\n".join(refs) + "\n", encoding="utf-8")
    doc = {"task": "simulstream-docker", "tracks": [{
        "name": "speech-en-es", "modality": "speech", "source_lang": "en", "target_lang": "es",
        "segment_size": CHUNK_MS // 2, "quality": ["BLEU", "chrF"], "latency": ["AL", "LAAL"],
        "primary": {"quality": "BLEU", "latency": "LAAL"},
        "datasets": {"dev": {"source": str(root / "wav.lst"), "references": {"orig": str(root / "ref.es")}}}}],
        "limits": {"cpus": 1, "memory": "512m", "instance_timeout_s": 120, "idle_timeout_s": 60,
                   "total_timeout_s": 600, "startup_timeout_s": 60}}
    cfg = root / "config.yaml"
    cfg.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return cfg


def submission(root: Path, name: str, extra: dict) -> Path:
    sub = root / name
    sub.mkdir(parents=True)
    doc = {"team": "tests", "system": name, "contact": "t@example.org", "track": "speech-en-es", "kind": "primary",
           "description": "chunk agent", "build": {"dockerfile": "Dockerfile"}, **extra}
    (sub / "submission.yaml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    shutil.copy(AGENT, sub / "agent.py")
    return sub


def test_simulstream_server_image_equals_the_native_client(tmp_path: Path) -> None:
    from agent_templates.fill_wheels import fill

    cfg = speech_task(tmp_path)
    subs = tmp_path / "subs"
    server = submission(subs, "simulstream", {"interface": "simulstream-http", "port": 8080,
                                               "speech_processor_config": "/app/processor.yaml"})
    (server / "requirements-image.txt").write_text("simulstream==1.0.0 --no-deps\n", encoding="utf-8")
    assert fill(server) == 0
    (server / "Dockerfile").write_text(DOCKERFILE, encoding="utf-8")
    (server / "server.yaml").write_text(yaml.safe_dump({"hostname": "0.0.0.0", "port": 8080, "pool_size": 1,
                                                        "ttl": 600}), encoding="utf-8")
    (server / "processor.yaml").write_text(yaml.safe_dump({
        "type": "harness.client.simulstream_processor.AgentSpeechProcessor", "speech_chunk_size": CHUNK_MS / 1000,
        "agent": "/app/agent.py", "agent_args": ["--chunk-ms", str(CHUNK_MS)]}), encoding="utf-8")
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
