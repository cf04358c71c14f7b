"""SimulStream 1.0.0's own HTTP speech-processor server, serving a harness agent through
`harness.client.simulstream_processor`, driven by `harness server --drive simulstream-http` (issue 11).

The same agent gives the same non-CA scores through the harness's native interface, and the driver's predictions
are the ones SimulStream's own client (`HttpProxySpeechProcessor` under its `MessageProcessor`, the path of
`simulstream.inference`) gets from the same server on the same audio. Real processes, real HTTP, loopback.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import types
from pathlib import Path

import pytest
import yaml

from harness.layout import RunDir
from harness.runlog import read_records
from tests.templates_util import comparable_scores, harness, joint_run

pytest.importorskip("simulstream")

ROOT = Path(__file__).resolve().parents[1]
AGENT = ROOT / "tests" / "agents" / "chunk_speech_agent.py"
SERVER_MODULE = "simulstream.server.speech_processors.remote.http_speech_processor_server"
CHUNK_MS = 1000


def speech_task(root: Path, n: int = 3) -> Path:
    """The first `n` utterances of the bundled speech dev set, segments of half a chunk."""
    wavs = [line.strip() for line in (ROOT / "data/speech/dev.list").read_text().splitlines()[:n]]
    (root / "wav.lst").write_text("\n".join(str(ROOT / "data/speech" / w) for w in wavs) + "\n", encoding="utf-8")
    refs = (ROOT / "data/udhr/dev.es").read_text(encoding="utf-8").splitlines()[:n]
    (root / "ref.es").write_text("\n".join(refs) + "\n", encoding="utf-8")
    cfg = root / "speech.yaml"
    cfg.write_text(f"""task: t
tracks:
  - name: speech-en-es
    modality: speech
    source_lang: en
    target_lang: es
    segment_size: {CHUNK_MS // 2}
    quality: [BLEU, chrF]
    latency: [AL, LAAL, AP]
    datasets:
      dev: {{source: wav.lst, references: {{orig: ref.es}}}}
""", encoding="utf-8")
    return cfg


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def simulstream_server(tmp_path: Path):  # noqa: ANN201
    """SimulStream's HTTP speech-processor server on loopback serving the chunk agent; yields its port."""
    port = free_port()
    server_cfg = tmp_path / "server.yaml"
    server_cfg.write_text(yaml.safe_dump({"hostname": "127.0.0.1", "port": port, "pool_size": 2, "ttl": 600}))
    proc_cfg = tmp_path / "processor.yaml"
    proc_cfg.write_text(yaml.safe_dump({"type": "harness.client.simulstream_processor.AgentSpeechProcessor",
                                        "speech_chunk_size": CHUNK_MS / 1000, "agent": str(AGENT),
                                        "agent_args": ["--chunk-ms", str(CHUNK_MS)]}))
    log = open(tmp_path / "simulstream.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, "-m", SERVER_MODULE, "--server-config", str(server_cfg),
                             "--speech-processor-config", str(proc_cfg)], stdout=log, stderr=subprocess.STDOUT)
    try:
        yield port
    finally:
        proc.kill()
        proc.wait(30)
        log.close()


def driven_run(cfg: Path, out: Path, port: int) -> None:
    done = subprocess.run(harness("server", "--config", str(cfg), "--dataset", "dev", "--port", "0", "--output",
                                  str(out), "--drive", "simulstream-http", "--participant", f"127.0.0.1:{port}",
                                  "--startup-timeout", "120"), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(RunDir(out).driver_report.read_text(encoding="utf-8"))
    assert report["state"] == "done", report


def peer_predictions(port: int, wav_list: Path) -> list[str]:
    """What SimulStream's own client gets from the server: `simulstream.inference`'s loop (MessageProcessor over
    an HttpProxySpeechProcessor; the wav file read as int16 PCM as its `read_wav_file` does, which needs
    `websockets`, not installed here), each recording's incremental outputs applied in order."""
    import soundfile

    sys.modules.setdefault("librosa", types.ModuleType("librosa"))  # only resamples; the audio is 16 kHz already
    from simulstream.server.message_processor import MessageProcessor
    from simulstream.server.speech_processors.remote.http_proxy_speech_processor import HttpProxySpeechProcessor

    out = []
    for i, wav in enumerate(wav_list.read_text().split()):
        proxy = HttpProxySpeechProcessor(types.SimpleNamespace(hostname="127.0.0.1", port=port))
        processor = MessageProcessor(i, proxy)
        data, rate = soundfile.read(wav, dtype="int16")  # what its wav reader hands over (int16 PCM)
        processor.process_metadata({"sample_rate": rate, "source_lang": "en", "target_lang": "es"})
        step = int(rate * proxy.speech_chunk_size)
        tokens: list[str] = []
        outputs = [processor.process_speech(data[k:k + step].tobytes()) for k in range(0, len(data), step)]
        for o in [*outputs, processor.end_of_stream()]:
            if o is None:
                continue
            if o.deleted_tokens:
                assert tokens[-len(o.deleted_tokens):] == o.deleted_tokens
                tokens = tokens[:-len(o.deleted_tokens)]
            tokens += o.new_tokens
        out.append(proxy.tokens_to_string(tokens))
        proxy.clear()  # tokens_to_string opened the session again (any request does): give it back
    return out


def test_simulstream_server_equals_native_interface_and_its_own_client(tmp_path: Path, simulstream_server: int
                                                                       ) -> None:
    cfg = speech_task(tmp_path)
    driven, native = tmp_path / "driven", tmp_path / "native"
    driven_run(cfg, driven, simulstream_server)
    joint_run(cfg, "speech-en-es", AGENT, native, "--chunk-ms", str(CHUNK_MS))
    subprocess.run(harness("score", str(driven)), check=True, capture_output=True, timeout=300)

    got = {r["index"]: r for r in read_records(RunDir(driven).instances_log)}
    ref = {r["index"]: r for r in read_records(RunDir(native).instances_log)}
    assert sorted(got) == sorted(ref) == [0, 1, 2]
    for i in ref:
        assert got[i]["status"] == "ok", got[i]
        assert (got[i]["prediction"], got[i]["delays"]) == (ref[i]["prediction"], ref[i]["delays"])
        assert [r["text"] for r in got[i]["revisions"]] == [r["text"] for r in ref[i]["revisions"]]
        assert [r["delay"] for r in got[i]["revisions"]] == [r["delay"] for r in ref[i]["revisions"]]
    assert comparable_scores(driven) == comparable_scores(native)
    assert "NE" in comparable_scores(driven)  # the revisions were scored as re-translation

    assert peer_predictions(simulstream_server, tmp_path / "wav.lst") == [got[i]["prediction"] for i in (0, 1, 2)]


def test_the_processor_answers_revisions_as_deleted_tokens() -> None:
    from harness.client.simulstream_processor import increment

    out = increment(["la", "de", "y"], ["la", "des", "el"])
    assert (out.deleted_tokens, out.deleted_string, out.new_tokens, out.new_string) == (
        ["de", "y"], " de y", ["des", "el"], " des el")
    first = increment([], ["la"])
    assert (first.new_string, first.deleted_string) == ("la", "")
