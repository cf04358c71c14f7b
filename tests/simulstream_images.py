"""SimulStream 1.0.0 submissions for the Docker and validate tests (not a test module; imported as
`tests.simulstream_images`): the image's command is SimulStream's own HTTP speech-processor server, installed from a
host-made wheel without its dependencies, serving `tests/agents/chunk_speech_agent.py` through
`harness.client.simulstream_processor`; a small speech task on the bundled dev recordings; and `harness validate`
run on such a submission."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from harness.images.base import DEFAULT_TAG
from tests.templates_util import dev_utterances

ROOT = Path(__file__).resolve().parent.parent
AGENT = ROOT / "tests" / "agents" / "chunk_speech_agent.py"
CHUNK_MS = 1000
SERVER_MODULE = "simulstream.server.speech_processors.remote.http_speech_processor_server"
SERVER_ARGV = ["python3", "-m", SERVER_MODULE, "--server-config", "server.yaml", "--speech-processor-config",
               "processor.yaml"]
DOCKERFILE = f"""FROM {DEFAULT_TAG}
USER root
COPY wheels/ /tmp/wheels/
RUN pip install --no-index --no-cache-dir --no-deps /tmp/wheels/simulstream-*.whl && rm -rf /tmp/wheels
USER participant
COPY agent.py server.yaml processor.yaml /app/
CMD ["python3", "-m", "{SERVER_MODULE}", "--server-config", "/app/server.yaml", "--speech-processor-config", \\
     "/app/processor.yaml"]
"""


def speech_task(root: Path, n: int = 3, limits: dict | None = None) -> Path:
    """`n` utterances of the bundled speech dev set (`tests.templates_util.dev_utterances`), segments of half a
    chunk."""
    root.mkdir(parents=True, exist_ok=True)
    wavs, refs = dev_utterances(n)
    (root / "wav.lst").write_text("\n".join(str(w) for w in wavs) + "\n", encoding="utf-8")
    (root / "ref.es").write_text("\n".join(refs) + "\n", encoding="utf-8")
    doc = {"task": "simulstream-tests", "tracks": [{
        "name": "speech-en-es", "modality": "speech", "source_lang": "en", "target_lang": "es",
        "segment_size": CHUNK_MS // 2, "quality": ["BLEU", "chrF"], "latency": ["AL", "LAAL"],
        "primary": {"quality": "BLEU", "latency": "LAAL"},
        "datasets": {"dev": {"source": str(root / "wav.lst"), "references": {"orig": str(root / "ref.es")}}}}],
        "limits": {"cpus": 1, "memory": "512m", "instance_timeout_s": 120, "idle_timeout_s": 60,
                   "total_timeout_s": 600, "startup_timeout_s": 60, **(limits or {})}}
    cfg = root / "config.yaml"
    cfg.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return cfg


def submission(root: Path, name: str, extra: dict) -> Path:
    """A submission folder holding the chunk agent and a `submission.yaml` with `extra` fields (no Dockerfile)."""
    sub = root / name
    sub.mkdir(parents=True)
    doc = {"team": "tests", "system": name, "contact": "t@example.org", "track": "speech-en-es", "kind": "primary",
           "description": "chunk agent", "build": {"dockerfile": "Dockerfile"}, **extra}
    (sub / "submission.yaml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    shutil.copy(AGENT, sub / "agent.py")
    return sub


def simulstream_submission(root: Path, name: str, declared_port: int = 8080, listen_port: int = 8080,
                           hostname: str = "0.0.0.0", agent_path: str = "/app/agent.py",
                           command: list[str] | None = None, wheels: bool = True) -> Path:
    """A simulstream-http submission: SimulStream's server on `listen_port`, `submission.yaml` declaring
    `declared_port`; wheels/ filled from the host (pip download of simulstream 1.0.0) unless `wheels` is false."""
    from agent_templates.fill_wheels import fill

    extra: dict = {"interface": "simulstream-http", "port": declared_port,
                   "speech_processor_config": "/app/processor.yaml"}
    if command is not None:
        extra["command"] = command
    sub = submission(root, name, extra)
    (sub / "requirements-image.txt").write_text("simulstream==1.0.0 --no-deps\n", encoding="utf-8")
    assert not wheels or fill(sub) == 0
    (sub / "Dockerfile").write_text(DOCKERFILE, encoding="utf-8")
    (sub / "server.yaml").write_text(yaml.safe_dump({"hostname": hostname, "port": listen_port, "pool_size": 1,
                                                     "ttl": 600}), encoding="utf-8")
    (sub / "processor.yaml").write_text(yaml.safe_dump({
        "type": "harness.client.simulstream_processor.AgentSpeechProcessor", "speech_chunk_size": CHUNK_MS / 1000,
        "agent": agent_path, "agent_args": ["--chunk-ms", str(CHUNK_MS)]}), encoding="utf-8")
    return sub
