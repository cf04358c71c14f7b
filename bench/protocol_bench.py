"""Protocol benchmark: per-action round trip and throughput of the harness beside SimulEval 1.1.4's loop.

Measured in one run, on the same data (data/udhr/dev.en by default) with zero-compute wait-1 echo agents:

* SimulEval 1.1.4's in-process loop (`send_source` → `pushpop` → `receive_prediction`, as in its evaluator);
* `harness run` in-process (runner → Evaluation, no HTTP);
* the out-of-box client over loopback against a `harness server` process: WebSocket stream and HTTP keep-alive;
* computation-aware overhead: (elapsed − delay) charged per action to a zero-compute agent, and AL_CA − AL;
* speech payload: bytes on the wire (both directions, counted by a TCP relay) per second of audio, vs 16-bit PCM.

Usage: python bench/protocol_bench.py [--source F --reference F] [--repeat N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.client.agent import ReadAction, TextAgent, WriteAction  # noqa: E402
from harness.client.connection import (  # noqa: E402
    Connection,
    HTTPConnection,
    InProcessConnection,
    WebSocketConnection,
)
from harness.client.runner import run_instances  # noqa: E402
from harness.protocol import StepRequest, StepResponse  # noqa: E402
from harness.server.evaluation import open_evaluation  # noqa: E402


class EchoWait1(TextAgent):
    """Zero-compute wait-1: read a word, write it back."""

    def policy(self, states):  # noqa: ANN001, ANN201
        if len(states.target) < len(states.source):
            return WriteAction(states.source[len(states.target)])
        if states.source_finished:
            return WriteAction("", finished=True)
        return ReadAction()


class ReadAll(TextAgent):
    """Zero-compute speech reader: reads the whole source, writes one word."""

    source_type = "speech"

    def preprocess(self, segment):  # noqa: ANN001, ANN201
        return []  # keep no samples: the benchmark measures the wire, not the agent

    def policy(self, states):  # noqa: ANN001, ANN201
        return WriteAction("fin", finished=True) if states.source_finished else ReadAction()


class Timed(Connection):
    """Wraps a connection and records every step's round trip."""

    def __init__(self, inner: Connection, sink: list[float]) -> None:
        self.inner, self.sink = inner, sink

    def info(self) -> dict:
        return self.inner.info()

    def step(self, index: int, req: StepRequest) -> StepResponse:
        t = time.perf_counter()
        r = self.inner.step(index, req)
        self.sink.append(time.perf_counter() - t)
        return r

    def close(self) -> None:
        self.inner.close()


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values) * 1000.0, q))


def write_task(folder: Path, source: Path, reference: Path, modality: str = "text", extra: str = "") -> Path:
    cfg = folder / f"{modality}.yaml"
    cfg.write_text(f"task: bench\ntracks:\n  - name: {modality}\n    modality: {modality}\n    source_lang: en\n"
                   f"    target_lang: es\n{extra}    datasets:\n      dev: {{source: {source}, "
                   f"references: {{orig: {reference}}}}}\n")
    return cfg


# -- SimulEval 1.1.4 ----------------------------------------------------------------------------------------

def simuleval_loop(source: Path, reference: Path, out: Path) -> dict:
    from simuleval.agents import ReadAction as SRead
    from simuleval.agents import TextToTextAgent
    from simuleval.agents import WriteAction as SWrite
    from simuleval.evaluator import build_evaluator
    from simuleval.utils.agent import build_system_args

    calls = [0]

    class SimulEvalEchoWait1(TextToTextAgent):
        def policy(self):  # noqa: ANN201
            calls[0] += 1
            s = self.states
            if len(s.target) < len(s.source):
                return SWrite(s.source[len(s.target)], finished=s.source_finished
                              and len(s.target) + 1 == len(s.source))
            return SWrite("", finished=True) if s.source_finished else SRead()

    config = {"source": str(source), "target": str(reference),
              "output": str(out), "no_progress_bar": True, "quality_metrics": "BLEU", "latency_metrics": "AL"}
    import simuleval.utils.agent as agent_utils

    agent_utils.EVALUATION_SYSTEM_LIST[:] = [SimulEvalEchoWait1]
    old_argv = sys.argv
    sys.argv = ["simuleval"]
    try:
        system, args = build_system_args(config)
        evaluator = build_evaluator(args)
    finally:
        sys.argv = old_argv
    steps: list[float] = []
    t0 = time.perf_counter()
    with open(out / "instances.log", "a") as file:  # SimulEval's SentenceLevelEvaluator.__call__ loop, timed
        system.reset()
        for instance in evaluator.iterator:
            while not evaluator.is_finished(instance):
                t = time.perf_counter()
                segment = instance.send_source(evaluator.source_segment_size)
                output = system.pushpop(segment)
                instance.receive_prediction(output)
                if instance.finish_prediction:
                    system.reset()
                steps.append(time.perf_counter() - t)
            file.write(json.dumps(instance.summarize()) + "\n")
    wall = time.perf_counter() - t0
    return {"actions": calls[0], "wall_s": wall, "steps": steps}


# -- harness ------------------------------------------------------------------------------------------------

def start_server(cfg: Path, out: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "harness", "server", "--config", str(cfg), "--dataset", "dev",
                             "--port", "0", "--output", str(out), "--overwrite"], stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    if "listening on" not in line:
        proc.kill()
        raise SystemExit(f"server did not start: {line}{proc.stderr.read()}")
    threading.Thread(target=proc.stderr.read, daemon=True).start()
    return proc, line.split("listening on ")[1].split()[0]


def harness_text_run(cfg: Path, out: Path, transport: str) -> dict:
    from harness.scoring import score_path

    steps: list[float] = []
    agent = EchoWait1()
    if transport == "inprocess":
        ev = open_evaluation(cfg, "dev", out, overwrite=True)
        t0 = time.perf_counter()
        summary = run_instances(lambda: Timed(InProcessConnection(ev), steps), agent, ev.pending())
        wall = time.perf_counter() - t0
        ev.close()
        scores = score_path(ev.writer.path)
        records = [json.loads(x) for x in (out / "instances.log").read_text().splitlines()]
        return {"actions": summary.actions, "wall_s": wall, "steps": steps, "scores": scores, "records": records}
    proc, url = start_server(cfg, out)
    try:
        make = {"ws": WebSocketConnection, "http": HTTPConnection}[transport]
        pending = HTTPConnection(url).info()["pending"]
        t0 = time.perf_counter()
        summary = run_instances(lambda: Timed(make(url), steps), agent, pending)
        wall = time.perf_counter() - t0
        deadline = time.monotonic() + 30
        while not (out / "scores.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        proc.terminate()
        proc.wait(10)
    scores = json.loads((out / "scores.json").read_text())
    records = [json.loads(x) for x in (out / "instances.log").read_text().splitlines()]
    return {"actions": summary.actions, "wall_s": wall, "steps": steps, "scores": scores, "records": records}


def ca_overhead_ms_per_action(records: list[dict]) -> float:
    """Client time charged per action: mean over instances of (elapsed − delay at the last write) / actions."""
    per = []
    for r in records:
        if r["delays"]:
            actions = len(r["source"].split()) + r["prediction_length"] + 1  # reads + writes + the final write
            per.append((r["elapsed"][-1] - r["delays"][-1]) / actions)
    return statistics.mean(per)


# -- speech bytes on the wire -------------------------------------------------------------------------------

class CountingRelay:
    """A loopback TCP relay that counts the bytes going each way."""

    def __init__(self, target_port: int) -> None:
        self.target = target_port
        self.bytes = 0
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        try:
            while True:
                data = a.recv(1 << 16)
                if not data:
                    break
                with self.lock:
                    self.bytes += len(data)
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def speech_wire(folder: Path, segment_ms: int) -> list[dict]:
    import soundfile

    rate, files, seconds = 16000, 6, 5.0
    rng = np.random.default_rng(1)
    names = []
    for i in range(files):
        soundfile.write(folder / f"s{i}.wav", rng.uniform(-0.4, 0.4, int(rate * seconds)).astype(np.float32), rate,
                        subtype="PCM_16")
        names.append(f"s{i}.wav")
    (folder / "wav.lst").write_text("\n".join(names) + "\n")
    (folder / "wav.es").write_text("fin\n" * files)
    cfg = write_task(folder, folder / "wav.lst", folder / "wav.es", "speech", f"    segment_size: {segment_ms}\n")
    audio_s = files * seconds
    pcm_bytes = audio_s * rate * 2
    rows = []
    for transport, audio in (("ws", "pcm16"), ("http", "pcm16"), ("ws", "json")):
        out = folder / f"speech-{transport}-{audio}"
        proc, url = start_server(cfg, out)
        try:
            port = int(url.rsplit(":", 1)[1])
            relay = CountingRelay(port)
            relay_url = f"http://127.0.0.1:{relay.port}"
            make = {"ws": WebSocketConnection, "http": HTTPConnection}[transport]
            pending = HTTPConnection(url).info()["pending"]
            before = relay.bytes
            run_instances(lambda: make(relay_url), ReadAll(), pending, audio=audio)  # noqa: B023
            time.sleep(0.2)
            wire = relay.bytes - before
        finally:
            proc.terminate()
            proc.wait(10)
        rows.append({"transport": transport, "audio": audio, "segment_ms": segment_ms,
                     "bytes_per_audio_s": wire / audio_s, "ratio_vs_pcm16": wire / pcm_bytes})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, default=ROOT / "data" / "udhr" / "dev.en")
    ap.add_argument("--reference", type=Path, default=ROOT / "data" / "udhr" / "dev.es")
    ap.add_argument("--repeat", type=int, default=3, help="copies of the data (more actions per measurement)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds per loop; the fastest is reported (noise)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures as JSON here")
    args = ap.parse_args()
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="harness-bench-") as tmp:
        folder = Path(tmp)
        src_lines = args.source.read_text(encoding="utf-8").splitlines() * args.repeat
        ref_lines = args.reference.read_text(encoding="utf-8").splitlines() * args.repeat
        (folder / "src.en").write_text("\n".join(src_lines) + "\n")
        (folder / "ref.es").write_text("\n".join(ref_lines) + "\n")
        cfg = write_task(folder, folder / "src.en", folder / "ref.es")
        words = sum(len(x.split()) for x in src_lines)
        print(f"data: {len(src_lines)} sentences, {words} source words ({args.source.name} x{args.repeat})")

        rows: dict = {}
        for k in range(args.rounds):  # interleaved rounds, so that load on the machine hits every loop alike
            (folder / f"se{k}").mkdir()
            candidates = {"simuleval-1.1.4 in-process": simuleval_loop(folder / "src.en", folder / "ref.es",
                                                                        folder / f"se{k}")}
            for transport in ("inprocess", "ws", "http"):
                candidates[f"harness {transport}"] = harness_text_run(cfg, folder / f"h-{transport}-{k}", transport)
            for name, r in candidates.items():
                if name not in rows or r["wall_s"] < rows[name]["wall_s"]:
                    rows[name] = r
        se = rows["simuleval-1.1.4 in-process"]
        print(f"\n{'loop (fastest of ' + str(args.rounds) + ' rounds)':32} {'actions':>8} {'p50 ms':>8} {'p99 ms':>8} "
              f"{'actions/s':>10} {'wall s':>8} {'speed vs SimulEval':>19}")
        for name, r in rows.items():
            rate = r["actions"] / r["wall_s"]
            p50, p99 = pct(r["steps"], 50), pct(r["steps"], 99)
            speed = se["wall_s"] / r["wall_s"]  # same data: >1 means faster than SimulEval's loop
            results[name] = {"actions": r["actions"], "p50_ms": p50, "p99_ms": p99, "actions_per_s": rate,
                             "wall_s": r["wall_s"], "speed_vs_simuleval_same_data": speed}
            print(f"{name:32} {r['actions']:8d} {p50:8.4f} {p99:8.4f} {rate:10.0f} {r['wall_s']:8.3f} {speed:18.2f}x")
        print("  SimulEval's p50/p99 are per loop iteration (a segment pushed, the policy popped: a write and the next "
              "read\n  together); the harness's are per action (a read or a write, one round trip each).")

        print("\ncomputation-aware overhead for a zero-compute agent:")
        for name in ("harness inprocess", "harness ws", "harness http"):
            r = rows[name]
            per_action = ca_overhead_ms_per_action(r["records"])
            ca_gap = al_elapsed_minus_al(r["records"])
            results[name].update(ca_ms_per_action=per_action, al_ca_minus_al=ca_gap)
            print(f"  {name:20} (elapsed - delay) per action {per_action:.4f} ms (goal <= 0.5);  AL_CA - AL = "
                  f"{ca_gap:.3f} ms")
        same = [json.loads(json.dumps({k: v["score"] for k, v in rows[n]["scores"].items()
                                       if isinstance(v, dict) and "score" in v and not k.endswith("_CA")}))
                for n in ("harness inprocess", "harness ws", "harness http")]
        differ = sorted(k for k in same[0] if not same[0].get(k) == same[1].get(k) == same[2].get(k))
        results["non_ca_scores_identical"] = not differ
        print(f"  non-CA scores identical across in-process / WebSocket / HTTP: {not differ}"
              + (f" (differ: {', '.join(differ)}: {[s.get(differ[0]) for s in same]})" if differ else ""))

        print("\nspeech payload (bytes on the wire, both directions, per second of 16 kHz audio):")
        (folder / "speech").mkdir()
        results["speech"] = speech_wire(folder / "speech", 320)
        for row in results["speech"]:
            print(f"  {row['transport']:4} {row['audio']:5} segment {row['segment_ms']} ms: "
                  f"{row['bytes_per_audio_s']:9.0f} B/s = {row['ratio_vs_pcm16']:.3f} x 16-bit PCM (goal <= 1.05)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


def al_elapsed_minus_al(records: list[dict]) -> float:
    """Mean AL on the elapsed times minus mean AL on the delays, in ms. Text runs get no `_CA` scores (they are
    speech-only), so the wire's cost is measured here directly from the logged times."""
    from harness.metrics.latency import corpus_latency

    rows = [r for r in records if r.get("delays")]
    values = corpus_latency([r["delays"] for r in rows], [r["source_length"] for r in rows],
                            [len(r["reference"].split()) for r in rows], False, [r["elapsed"] for r in rows])
    return float(values["AL_CA"].mean() - values["AL"].mean())


if __name__ == "__main__":
    sys.exit(main())
