"""SimulStream 1.0.0's own HTTP speech-processor server, serving a harness agent through
`harness.client.simulstream_processor`, driven by `harness server --drive simulstream-http` (issue 11).

The same agent gives the same non-CA scores through the harness's native interface, and the driver's predictions
are the ones SimulStream's own client (`HttpProxySpeechProcessor` under its `MessageProcessor`, the path of
`simulstream.inference`) gets from the same server on the same audio. Real processes, real HTTP, loopback.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from harness.layout import RunDir
from harness.runlog import read_records
from tests.templates_util import comparable_scores, dev_utterances, harness, joint_run

pytest.importorskip("simulstream")

ROOT = Path(__file__).resolve().parents[1]
AGENT = ROOT / "tests" / "agents" / "chunk_speech_agent.py"
SERVER_MODULE = "simulstream.server.speech_processors.remote.http_speech_processor_server"
CHUNK_MS = 1000


def speech_task(root: Path, n: int = 3) -> Path:
    """`n` utterances of the bundled speech dev set (`tests.templates_util.dev_utterances`), segments of half a
    chunk."""
    wavs, refs = dev_utterances(n)
    (root / "wav.lst").write_text("\n".join(str(w) for w in wavs) + "\n", encoding="utf-8")
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


@contextlib.contextmanager
def simulstream_server(root: Path, agent: Path, agent_args: list[str], chunk_s: float) -> Iterator[int]:
    """SimulStream's HTTP speech-processor server on loopback serving `agent`; yields its port."""
    port = free_port()
    server_cfg = root / "server.yaml"
    server_cfg.write_text(yaml.safe_dump({"hostname": "127.0.0.1", "port": port, "pool_size": 2, "ttl": 600}))
    proc_cfg = root / "processor.yaml"
    proc_cfg.write_text(yaml.safe_dump({"type": "harness.client.simulstream_processor.AgentSpeechProcessor",
                                        "speech_chunk_size": chunk_s, "agent": str(agent),
                                        "agent_args": agent_args}))
    log = open(root / "simulstream.log", "wb")  # noqa: SIM115
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

    # librosa (not installed) only resamples, and the audio is 16 kHz already: a stand-in for the import, taken out
    # again at once (left in, it would make `transformers` in a later test of this process take it for librosa)
    stand_in = "librosa" not in sys.modules
    if stand_in:
        sys.modules["librosa"] = types.ModuleType("librosa")
    try:
        from simulstream.server.message_processor import MessageProcessor
        from simulstream.server.speech_processors.remote.http_proxy_speech_processor import HttpProxySpeechProcessor
    finally:
        if stand_in:
            del sys.modules["librosa"]

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


def assert_same_runs(driven: Path, native: Path, n: int) -> None:
    """Same predictions, delays, revisions and non-CA scores in two run folders."""
    subprocess.run(harness("score", str(driven)), check=True, capture_output=True, timeout=300)
    got = {r["index"]: r for r in read_records(RunDir(driven).instances_log)}
    ref = {r["index"]: r for r in read_records(RunDir(native).instances_log)}
    assert sorted(got) == sorted(ref) == list(range(n))
    for i in ref:
        assert got[i]["status"] == "ok", got[i]
        assert (got[i]["prediction"], got[i]["delays"]) == (ref[i]["prediction"], ref[i]["delays"])
        assert [r["text"] for r in got[i].get("revisions", [])] == [r["text"] for r in ref[i].get("revisions", [])]
        assert [r["delay"] for r in got[i].get("revisions", [])] == [r["delay"] for r in ref[i].get("revisions", [])]
    assert comparable_scores(driven) == comparable_scores(native)


@pytest.mark.slow
def test_simulstream_server_equals_native_interface_and_its_own_client(tmp_path: Path) -> None:
    cfg = speech_task(tmp_path)
    driven, native = tmp_path / "driven", tmp_path / "native"
    args = ["--chunk-ms", str(CHUNK_MS)]
    with simulstream_server(tmp_path, AGENT, args, CHUNK_MS / 1000) as port:
        driven_run(cfg, driven, port)
        peer = peer_predictions(port, tmp_path / "wav.lst")
    joint_run(cfg, "speech-en-es", AGENT, native, *args)
    assert_same_runs(driven, native, 3)
    assert "NE" in comparable_scores(driven)  # the revisions were scored as re-translation
    assert peer == [r["prediction"] for r in read_records(RunDir(driven).instances_log)]


@pytest.mark.slow
@pytest.mark.apertium
def test_the_simulstream_template_serves_the_whisper_cascade_as_the_native_interface_does(
        whisper_cascade_in_process, tmp_path: Path) -> None:
    """agent_templates/simulstream_http: its processor config serves its agent.py (the whisper_cascade template's
    agent) on two dev utterances with the same outputs and non-CA scores as whisper_cascade natively (the session's
    in-process run of it, `whisper_cascade_in_process`, with the processor's agent options)."""
    template = ROOT / "agent_templates" / "simulstream_http"
    whisper = ROOT / "agent_templates" / "whisper_cascade" / "agent.py"
    assert (template / "agent.py").read_bytes() == whisper.read_bytes()  # a copy, kept equal
    proc = yaml.safe_load((template / "processor.yaml").read_text(encoding="utf-8"))
    assert [str(o) for o in proc["agent_args"]] == whisper_cascade_in_process["options"]
    driven = tmp_path / "driven"
    with simulstream_server(tmp_path, template / "agent.py", proc["agent_args"], proc["speech_chunk_size"]) as port:
        driven_run(whisper_cascade_in_process["config"], driven, port)
    assert_same_runs(driven, whisper_cascade_in_process["run"], 2)


def test_the_processor_answers_revisions_as_deleted_tokens() -> None:
    from harness.client.simulstream_processor import increment

    out = increment(["la", "de", "y"], ["la", "des", "el"])
    assert (out.deleted_tokens, out.deleted_string, out.new_tokens, out.new_string) == (
        ["de", "y"], " de y", ["des", "el"], " des el")
    first = increment([], ["la"])
    assert (first.new_string, first.deleted_string) == ("la", "")
