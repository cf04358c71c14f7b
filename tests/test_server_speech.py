"""Speech: segments streamed from disk, PCM and JSON encodings, and flat memory on a 2-hour file."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile

from harness.client.connection import HTTPConnection, InProcessConnection, WebSocketConnection
from harness.protocol import StepRequest, pcm16_to_floats
from harness.run.joint import loopback_server
from harness.server.evaluation import open_evaluation


def make_speech_task(root: Path, seconds: list[float], segment_ms: int = 320, rate: int = 16000) -> Path:
    rng = np.random.default_rng(0)
    names = []
    for i, d in enumerate(seconds):
        samples = (rng.uniform(-0.5, 0.5, int(rate * d))).astype(np.float32)
        soundfile.write(root / f"a{i}.wav", samples, rate, subtype="PCM_16")
        names.append(f"a{i}.wav")
    (root / "wav.lst").write_text("\n".join(names) + "\n")
    (root / "ref.es").write_text("\n".join(f"frase {i}" for i in range(len(seconds))) + "\n")
    cfg = root / "speech.yaml"
    cfg.write_text(f"""task: t
tracks:
  - name: speech-en-es
    modality: speech
    source_lang: en
    target_lang: es
    segment_size: {segment_ms}
    datasets:
      dev: {{source: wav.lst, references: {{orig: ref.es}}}}
""")
    return cfg


def test_pcm_and_json_segments_carry_the_same_samples_and_ms_delays(tmp_path: Path) -> None:
    cfg = make_speech_task(tmp_path, [1.0, 1.0])
    original, rate = soundfile.read(tmp_path / "a0.wav", dtype="float32")
    ev = open_evaluation(cfg, "dev", tmp_path / "out")
    with loopback_server(ev) as url:
        for conn, audio in ((WebSocketConnection(url), "pcm16"), (HTTPConnection(url), "pcm16"),
                            (HTTPConnection(url), "json")):
            got: list[float] = []
            r = conn.step(0, StepRequest(read=True, start=True, audio=audio))
            while True:
                seg = pcm16_to_floats(r.segment) if isinstance(r.segment, bytes) else r.segment
                got.extend(seg or [])
                if r.source_finished:
                    break
                r = conn.step(0, StepRequest(read=True, audio=audio))
            assert r.sample_rate == rate and r.position == len(original)
            np.testing.assert_allclose(got, original, atol=1e-4)
            conn.close()
        conn = InProcessConnection(ev)  # a fresh instance: instance 0 was served whole, and stays served
        conn.step(1, StepRequest(read=True, start=True))
        conn.step(1, StepRequest(write="uno", read=True))
        conn.step(1, StepRequest(write="dos", finished=True))
    rec = ev.records()[0]
    ev.close()
    assert rec["index"] == 1 and rec["delays"] == [320.0, 640.0] and rec["source_length"] == 1000.0
    assert rec["source"] == [str(tmp_path / "a1.wav")] and rec["latency_unit"] == "ms"


def test_last_segment_is_shorter_and_flags_the_end(tmp_path: Path) -> None:
    ev = open_evaluation(make_speech_task(tmp_path, [0.5]), "dev", tmp_path / "out")
    conn = InProcessConnection(ev)
    r1 = conn.step(0, StepRequest(read=True, start=True, audio="pcm16"))
    r2 = conn.step(0, StepRequest(read=True, audio="pcm16"))
    r3 = conn.step(0, StepRequest(read=True, audio="pcm16"))
    assert len(r1.segment) == 2 * 5120 and not r1.source_finished
    assert len(r2.segment) == 2 * (8000 - 5120) and r2.source_finished
    assert r3.segment is None and r3.source_finished
    ev.close()


SERVER_RSS = r"""
import sys, threading, time
from harness.client.connection import InProcessConnection
from harness.protocol import StepRequest
from harness.server.evaluation import open_evaluation

def rss_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])

ev = open_evaluation(sys.argv[1], "dev", sys.argv[2])
conn = InProcessConnection(ev)
before = rss_kb()
peak = before
r = conn.step(0, StepRequest(read=True, start=True, audio="pcm16"))
n = 1
while not r.source_finished:
    r = conn.step(0, StepRequest(read=True, audio="pcm16"))
    n += 1
    if n % 50 == 0:
        peak = max(peak, rss_kb())
conn.step(0, StepRequest(write="fin", finished=True))
print(before, peak, n, r.position)
"""


@pytest.mark.slow
def test_two_hour_file_is_streamed_with_flat_memory(tmp_path: Path) -> None:
    rate, seconds = 16000, 2 * 3600
    path = tmp_path / "a0.wav"
    block = (np.sin(np.arange(rate * 60) / 7.0) * 0.3).astype(np.float32)
    with soundfile.SoundFile(path, "w", samplerate=rate, channels=1, subtype="PCM_16") as f:
        for _ in range(seconds // 60):
            f.write(block)
    (tmp_path / "wav.lst").write_text("a0.wav\n")
    (tmp_path / "ref.es").write_text("una charla larga\n")
    cfg = tmp_path / "speech.yaml"
    cfg.write_text("task: t\ntracks:\n  - {name: s, modality: speech, source_lang: en, target_lang: es, "
                   "segment_size: 2000, datasets: {dev: {source: wav.lst, references: {orig: ref.es}}}}\n")
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", SERVER_RSS, str(cfg), str(tmp_path / "out")], capture_output=True,
                         text=True, check=True, timeout=300)
    before, peak, steps, position = map(int, out.stdout.split())
    assert position == rate * seconds and steps == seconds // 2
    file_mb = path.stat().st_size / 2**20
    growth_mb = (peak - before) / 1024
    print(f"2-hour file: {file_mb:.0f} MiB on disk, RSS growth {growth_mb:.1f} MiB, {time.perf_counter() - t0:.1f} s")
    assert growth_mb < 20, f"memory grew by {growth_mb:.1f} MiB while streaming a {file_mb:.0f} MiB file"
    rec = json.loads((tmp_path / "out" / "instances.log").read_text())
    assert rec["source_length"] == seconds * 1000.0 and rec["delays"] == [seconds * 1000.0]
