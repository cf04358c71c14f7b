"""Driver benchmark (issue 11): the cost of the harness playing the evaluator against an agent server.

Measured in one run, against SimulEval 1.1.4's own agent service (`simuleval --standalone`) serving a zero-compute
wait-1 echo agent, on the same sentences (data/udhr/dev.en, repeated):

* per segment: the harness's driver (`harness.drivers`, recording into an `Evaluation` and its run log) against a
  plain `requests` client making the same calls (`POST /reset`, then `PUT /input` + `GET /output` per segment) and
  keeping nothing; SimulEval's own `--remote-eval` is the peer's path, but it does not run in 1.1.4
  (`'SentenceLevelEvaluator' object has no attribute 'instance_iterator'`), so the plain client stands in for it.
  Also the driver's own work per segment (the server-side time in the log: from an answer's arrival to the next
  hand-off), which is what it adds beyond the HTTP calls. Goal: <= 1 ms per segment.
* per chunk: the driver against SimulStream 1.0.0's own client path (`simulstream.inference`'s loop over its
  `HttpProxySpeechProcessor`) on the same recordings and the same server;
* AL_CA - AL of a zero-compute agent behind each interface (what a participant that computes nothing is charged):
  the harness client over WebSocket and SimulEval's service on text; the harness client and SimulStream 1.0.0's
  HTTP server (serving the same zero agent through harness.client.simulstream_processor) on speech.

Usage: python bench/driver_bench.py [--repeat N] [--rounds R] [--utterances K] [--json OUT]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import layout  # noqa: E402
from harness.drivers import drive  # noqa: E402
from harness.server.evaluation import open_evaluation  # noqa: E402

SIMULEVAL_ECHO = '''
from simuleval.agents import TextToTextAgent, SpeechToTextAgent
from simuleval.agents.actions import ReadAction, WriteAction
from simuleval.data.segments import TextSegment
from simuleval.utils import entrypoint


@entrypoint
class Echo(TextToTextAgent):
    """Zero compute: after each word read, write it back (TextSegment: 1.1.4's service fails on plain strings)."""

    def policy(self, states=None):
        states = states or self.states
        if len(states.target) < len(states.source):
            seg = TextSegment(content=states.source[len(states.target)], finished=False, tgt_lang="es")
            states.update_target(seg)
            return WriteAction(seg, finished=False)
        if states.source_finished:
            return WriteAction(TextSegment(content="", finished=True, tgt_lang="es"), finished=True)
        return ReadAction()
'''

HARNESS_ZERO = '''
from harness.client.agent import ReadAction, SpeechAgent, TextAgent, WriteAction


class EchoText(TextAgent):
    """Zero compute: read a word, write it back."""

    def policy(self, states):
        if len(states.target) < len(states.source):
            return WriteAction(states.source[len(states.target)])
        if states.source_finished:
            return WriteAction("", finished=True)
        return ReadAction()


class WordPerSegment(SpeechAgent):
    """Zero compute: one word per segment of audio read."""

    def policy(self, states):
        if states.source_finished:
            return WriteAction("w", finished=True)
        if len(states.target) < states.extra.get("reads", 0):
            return WriteAction("w")
        states.extra["reads"] = states.extra.get("reads", 0) + 1
        return ReadAction()
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, seconds: float = 120.0) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.05)
    raise SystemExit(f"nothing listens on port {port}")


@contextlib.contextmanager
def process(argv: list[str], log: Path, port: int) -> Iterator[None]:
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_port(port)
            yield
        finally:
            proc.kill()
            proc.wait(30)


def text_task(folder: Path, repeat: int) -> Path:
    lines = (ROOT / "data/udhr/dev.en").read_text(encoding="utf-8").splitlines() * repeat
    refs = (ROOT / "data/udhr/dev.es").read_text(encoding="utf-8").splitlines() * repeat
    (folder / "src.en").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "ref.es").write_text("\n".join(refs) + "\n", encoding="utf-8")
    cfg = folder / "text.yaml"
    cfg.write_text("task: bench\ntracks:\n  - {name: text-en-es, modality: text, source_lang: en, target_lang: es,\n"
                   "     datasets: {dev: {source: src.en, references: {orig: ref.es}}}}\n", encoding="utf-8")
    return cfg


def speech_task(folder: Path, utterances: int) -> Path:
    wavs = (ROOT / "data/speech/dev.list").read_text().splitlines()[:utterances]
    (folder / "wav.lst").write_text("\n".join(str(ROOT / "data/speech" / w) for w in wavs) + "\n", encoding="utf-8")
    refs = (ROOT / "data/udhr/dev.es").read_text(encoding="utf-8").splitlines()[:utterances]
    (folder / "ref.es").write_text("\n".join(refs) + "\n", encoding="utf-8")
    cfg = folder / "speech.yaml"
    cfg.write_text("task: bench\ntracks:\n  - {name: speech-en-es, modality: speech, source_lang: en, target_lang: "
                   "es, segment_size: 320,\n     datasets: {dev: {source: wav.lst, references: {orig: ref.es}}}}\n",
                   encoding="utf-8")
    return cfg


# -- per segment: the driver vs a plain requests client -----------------------------------------------------------
def plain_requests(port: int, sentences: list[list[str]]) -> tuple[float, int]:
    """The same calls as the driver with `requests`, keeping nothing: (seconds, segments sent)."""
    import requests

    base = f"http://127.0.0.1:{port}"
    session = requests.Session()
    segments = 0
    t0 = time.perf_counter()
    for words in sentences:
        session.post(f"{base}/reset", timeout=60)
        step, finished = 0, False
        while not finished:
            if step < len(words):
                seg = {"index": step, "content": words[step], "finished": step == len(words) - 1,
                       "is_empty": False, "data_type": "text", "tgt_lang": "es", "config": {}}
                step += 1
            else:
                seg = {"index": step, "content": [], "finished": True, "is_empty": True, "data_type": None,
                       "tgt_lang": "es", "config": {}}
            session.put(f"{base}/input", data=json.dumps(seg), timeout=60)
            segments += 1
            finished = bool(session.get(f"{base}/output", timeout=60).json().get("finished"))
    return time.perf_counter() - t0, segments


def simulstream_client(port: int, wav_list: Path) -> tuple[float, int]:
    """SimulStream 1.0.0's own client path over every recording (`simulstream.inference`'s loop: MessageProcessor
    over an HttpProxySpeechProcessor; librosa, which only resamples, stubbed): (seconds, chunks processed)."""
    import types

    import soundfile

    sys.modules.setdefault("librosa", types.ModuleType("librosa"))
    from simulstream.server.message_processor import MessageProcessor
    from simulstream.server.speech_processors.remote.http_proxy_speech_processor import HttpProxySpeechProcessor

    audio = [soundfile.read(w, dtype="int16") for w in wav_list.read_text().split()]
    chunks = 0
    t0 = time.perf_counter()
    for i, (data, rate) in enumerate(audio):
        proxy = HttpProxySpeechProcessor(types.SimpleNamespace(hostname="127.0.0.1", port=port))
        processor = MessageProcessor(i, proxy)
        processor.process_metadata({"sample_rate": rate, "source_lang": "en", "target_lang": "es"})
        step = int(rate * proxy.speech_chunk_size)
        for k in range(0, len(data), step):
            processor.process_speech(data[k:k + step].tobytes())
            chunks += 1
        processor.end_of_stream()
    return time.perf_counter() - t0, chunks


def driver_run(cfg: Path, out: Path, interface: str, port: int) -> tuple[float, list[dict]]:
    """The harness's driver over every instance: (seconds, records)."""
    ev = open_evaluation(cfg, "dev", out, overwrite=True)
    t0 = time.perf_counter()
    report = drive(ev, interface, f"127.0.0.1:{port}", 60.0, layout.RunDir(out))
    seconds = time.perf_counter() - t0
    ev.writer.sync()
    records = ev.records()
    ev.close()
    if report.state != "done":
        raise SystemExit(f"driver: {report.state}: {report.reason}")
    return seconds, records


def native_run(cfg: Path, out: Path, agent: object, audio: str = "json") -> list[dict]:
    """The harness client over WebSocket against a loopback harness server (speech as `audio`)."""
    from harness.client.connection import WebSocketConnection
    from harness.client.runner import run_instances
    from harness.run.joint import loopback_server

    ev = open_evaluation(cfg, "dev", out, overwrite=True)
    with loopback_server(ev) as url:
        run_instances(lambda: WebSocketConnection(url), agent, ev.pending(), audio=audio)  # type: ignore[arg-type]
    ev.writer.sync()
    records = ev.records()
    ev.close()
    return records


def ca_minus_al(records: list[dict]) -> float:
    """Mean AL on the elapsed times minus mean AL on the delays (ms): what the participant is charged."""
    from harness.metrics.latency import corpus_latency

    rows = [r for r in records if r.get("delays")]
    values = corpus_latency([r["delays"] for r in rows], [r["source_length"] for r in rows],
                            [len(r["reference"].split()) for r in rows], False, [r["elapsed"] for r in rows])
    return float(values["AL_CA"].mean() - values["AL"].mean())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="copies of the 40 dev sentences (default 5)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of each client (default 3)")
    parser.add_argument("--utterances", type=int, default=10, help="speech dev utterances (default 10)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="driver-bench-") as tmp:
        folder = Path(tmp)
        (folder / "simuleval_echo.py").write_text(SIMULEVAL_ECHO, encoding="utf-8")
        (folder / "harness_zero.py").write_text(HARNESS_ZERO, encoding="utf-8")
        sys.path.insert(0, str(folder))
        import harness_zero  # type: ignore[import-not-found]

        cfg = text_task(folder, args.repeat)
        sentences = [line.split() for line in (folder / "src.en").read_text(encoding="utf-8").splitlines()]
        port = free_port()
        service = ["simuleval", "--standalone", "--remote-port", str(port), "--agent",
                   str(folder / "simuleval_echo.py")]
        with process(service, folder / "service.log", port):
            plain_requests(port, sentences[:5])  # warm both paths up
            driver_run(cfg, folder / "warm", "simuleval-agent-server", port)
            plain, driven, own = [], [], []
            for r in range(args.rounds):
                seconds, segments = plain_requests(port, sentences)
                plain.append(seconds / segments * 1000)
                seconds, records = driver_run(cfg, folder / f"driven{r}", "simuleval-agent-server", port)
                driven.append(seconds / segments * 1000)
                own.append(sum(rec["timing"]["server_s"] for rec in records) / segments * 1000)
            se_records = records
        results["segments"] = segments
        results["plain_requests_ms_per_segment"] = statistics.median(plain)
        results["driver_ms_per_segment"] = statistics.median(driven)
        results["driver_own_ms_per_segment"] = statistics.median(own)
        print(f"SimulEval 1.1.4 agent service, zero-compute echo agent, {segments} segments per round, "
              f"median of {args.rounds} rounds:")
        print(f"  plain requests client (same calls, keeps nothing) {results['plain_requests_ms_per_segment']:.3f} "
              f"ms/segment")
        print(f"  harness driver (times, records, logs)              {results['driver_ms_per_segment']:.3f} "
              f"ms/segment  ({results['driver_ms_per_segment'] / results['plain_requests_ms_per_segment']:.2f}x)")
        print(f"  driver overhead vs the plain client: "
              f"{results['driver_ms_per_segment'] - results['plain_requests_ms_per_segment']:+.3f} ms/segment; "
              f"the driver's own work (server-side time in the log): {results['driver_own_ms_per_segment']:.3f} "
              f"ms/segment (goal <= 1 ms)")

        print("\nAL_CA - AL of a zero-compute agent (ms):")
        ca = results["al_ca_minus_al_ms"] = {}
        ca["text, harness client (WebSocket)"] = ca_minus_al(native_run(cfg, folder / "nt", harness_zero.EchoText()))
        ca["text, simuleval-agent-server"] = ca_minus_al(se_records)
        scfg = speech_task(folder, args.utterances)
        ca["speech, harness client (WebSocket, pcm16)"] = ca_minus_al(
            native_run(scfg, folder / "ns", harness_zero.WordPerSegment(), audio="pcm16"))
        sport = free_port()
        (folder / "server.yaml").write_text(f"hostname: 127.0.0.1\nport: {sport}\npool_size: 1\nttl: 600\n")
        (folder / "processor.yaml").write_text(
            "type: harness.client.simulstream_processor.AgentSpeechProcessor\nspeech_chunk_size: 0.32\n"
            f"agent: {folder / 'harness_zero.py'}\nagent_class: WordPerSegment\n")
        simulstream = [sys.executable, "-m", "simulstream.server.speech_processors.remote.http_speech_processor_server",
                       "--server-config", str(folder / "server.yaml"), "--speech-processor-config",
                       str(folder / "processor.yaml")]
        with process(simulstream, folder / "simulstream.log", sport):
            simulstream_client(sport, folder / "wav.lst")  # warm up
            peer, driven_ss = [], []
            for r in range(args.rounds):
                seconds, chunks = simulstream_client(sport, folder / "wav.lst")
                peer.append(seconds / chunks * 1000)
                seconds, ss_records = driver_run(scfg, folder / f"ss{r}", "simulstream-http", sport)
                driven_ss.append(seconds / chunks * 1000)
        ca["speech, simulstream-http"] = ca_minus_al(ss_records)
        for name, value in ca.items():
            print(f"  {name:42} {value:8.3f}")
        results["simulstream_chunks"] = chunks
        results["simulstream_client_ms_per_chunk"] = statistics.median(peer)
        results["simulstream_driver_ms_per_chunk"] = statistics.median(driven_ss)
        print(f"\nSimulStream 1.0.0 HTTP server, zero-compute agent, {chunks} chunks of 320 ms per round, median of "
              f"{args.rounds} rounds:")
        print(f"  SimulStream's own client (inference loop, HttpProxySpeechProcessor) "
              f"{results['simulstream_client_ms_per_chunk']:.3f} ms/chunk")
        print(f"  harness driver (times, records, logs)                              "
              f"{results['simulstream_driver_ms_per_chunk']:.3f} ms/chunk "
              f"({results['simulstream_driver_ms_per_chunk'] / results['simulstream_client_ms_per_chunk']:.2f}x)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
