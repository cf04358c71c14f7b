"""Long-form scoring speed against the peers, and the server's memory while it streams a long recording.

    python bench/longform_bench.py [--minutes 150] [--peer-minutes 150] [--skip-server]

1. A talk of `--minutes` minutes is synthesized as a log at a realistic rate (~150 words a minute: UDHR Spanish
   sentences, a system output that drops, substitutes, inserts and delays words). The same files are scored by
   - `harness score` (SoftSegmenter + BLEU/chrF + LongYAAL & co.) against `omnisteval longform` on the same JSONL;
   - `harness score --metrics StreamLAAL` against simulstream's `score_latency --scorer stream_laal` on the same
     log written in SimulStream's format;
   each timed as a separate process, with equal values checked, the ratio printed (goal: >= 5x faster) and
   the peak RSS of each process.
   `--peer-minutes` scores a shorter prefix talk with the peers when they cannot finish the long one here.
   - `harness score --profile iwslt2025` (BLEU and StreamLAAL as the 2025 organizers' tool, which runs the original
     mwerSegmenter binary) against that binary run by itself on the same talk (the part of the 2025 tool that
     costs), and against FBK's `stream_laal.py` itself where `--stream-laal PATH` names a copy: times, and whether
     every resegmented sentence is the binary's (`--skip-binary` leaves this out).
2. `harness server` streams a recording of `--minutes` minutes (the bundled 22-minute talk repeated) to a client
   that reads every segment; the server's RSS is printed at the start and at the end (goal: bounded, flat).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def synthesize(minutes: float, folder: Path, seed: int = 1) -> dict[str, Path]:
    """Segmentation, references, a JSONL hypothesis and a SimulStream log for one talk of `minutes`."""
    rng = random.Random(seed)
    lines = [x for x in (ROOT / "data" / "udhr" / "dev.es").read_text(encoding="utf-8").splitlines() if x.strip()]
    vocab = sorted({w for x in lines for w in x.split()})
    seg, refs, words, delays, elapsed, chunks = [], [], [], [], [], []
    t, k, compute = 0.5, 0, 0.0
    while t < minutes * 60:
        text = lines[k % len(lines)]
        k += 1
        n = len(text.split())
        dur = n / 2.8 + rng.uniform(-0.2, 0.4)  # ~150 output words a minute after the drops
        seg.append({"wav": "talk.wav", "offset": round(t, 3), "duration": round(dur, 3)})
        refs.append(text)
        out = []
        for w in text.split():
            r = rng.random()
            if r < 0.08:
                continue
            out.append(rng.choice(vocab) if r < 0.18 else w)
        i = 0
        while i < len(out):
            step = rng.randint(1, 4)
            at = (t + dur * min(1.0, (i + step) / len(out)) + rng.choice([0.0, 0.2, 0.6, 1.5])) * 1000
            at = round(max(at, delays[-1] if delays else 0.0), 3)
            compute += rng.uniform(5, 60)
            ca = round(at + compute, 3)
            chunks.append((at, ca, out[i:i + step]))
            words += out[i:i + step]
            delays += [at] * len(out[i:i + step])
            elapsed += [ca] * len(out[i:i + step])
            i += step
        t += dur + rng.uniform(0.15, 0.9)
    length = max(t * 1000, delays[-1])
    folder.mkdir(parents=True, exist_ok=True)
    p = {"seg": folder / "seg.yaml", "ref": folder / "ref.txt", "jsonl": folder / "hyp.jsonl",
         "log": folder / "metrics.jsonl", "cfg": folder / "eval.yaml"}
    p["seg"].write_text(yaml.safe_dump(seg), encoding="utf-8")
    p["ref"].write_text("\n".join(refs) + "\n", encoding="utf-8")
    p["jsonl"].write_text(json.dumps({"source": ["talk.wav"], "prediction": " ".join(words), "delays": delays,
                                      "elapsed": elapsed, "source_length": length}) + "\n", encoding="utf-8")
    with p["log"].open("w", encoding="utf-8") as f:
        f.write(json.dumps({"id": 0, "metadata": {"wav_name": "talk.wav"}}) + "\n")
        for at, ca, ws in chunks:
            f.write(json.dumps({"id": 0, "total_audio_processed": at / 1000, "computation_time": (ca - at) / 1000,
                                "generated_tokens": ws, "deleted_tokens": []}) + "\n")
    p["cfg"].write_text("detokenizer_type: simuleval\nlatency_unit: word\n", encoding="utf-8")
    print(f"talk: {minutes:g} min, {len(seg)} sentences, {len(words)} output words ({len(words) / minutes:.0f}/min)")
    return p


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MiB of that process, stdout) of one command."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"failed: {' '.join(cmd)}\n{err.read().decode()[-2000:]}")
        return wall, usage.ru_maxrss / 1024, out.read().decode()


def compare_omnisteval(p: dict[str, Path], out: Path) -> None:
    metrics = ["BLEU", "chrF", "LongYAAL", "LongAL", "LongLAAL", "LongAP", "LongDAL"]
    ours_t, ours_m, ours_out = timed([sys.executable, "-m", "harness", "score", str(p["jsonl"]), "--segmentation",
                                      str(p["seg"]), "--references", str(p["ref"]), "--format", "json",
                                      "--no-write", "--bootstrap", "1", "--metrics", *metrics])
    peer_t, peer_m, _ = timed([sys.executable, "-m", "omnisteval.cli", "longform", "--speech_segmentation",
                               str(p["seg"]), "--ref_sentences_file", str(p["ref"]), "--hypothesis_file",
                               str(p["jsonl"]), "--output_folder", str(out), "--word_level"])
    ours = json.loads(ours_out)
    rows = (out / "scores.tsv").read_text(encoding="utf-8").splitlines()[1:]
    peer = dict(r.split("\t") for r in rows)
    names = {"BLEU": "BLEU", "chrF": "chrF", "LongYAAL": "LongYAAL (CU)", "LongAL": "LongAL (CU)",
             "LongLAAL": "LongLAAL (CU)", "LongAP": "LongAP (CU)", "LongDAL": "LongDAL (CU)"}
    equal = all(abs(ours[m]["score"] - float(peer[names[m]])) <= 6e-5 * max(1.0, abs(float(peer[names[m]])))
                for m in metrics)
    print(f"omnisteval longform: harness {ours_t:.2f} s ({ours_m:.0f} MiB) vs omnisteval {peer_t:.2f} s "
          f"({peer_m:.0f} MiB): {peer_t / ours_t:.1f}x faster (goal >= 5x); values equal (4 decimals): {equal}")


def compare_simulstream(p: dict[str, Path]) -> None:
    ours_t, ours_m, ours_out = timed([sys.executable, "-m", "harness", "score", str(p["log"]), "--segmentation",
                                      str(p["seg"]), "--references", str(p["ref"]), "--simulstream-config",
                                      str(p["cfg"]), "--format", "json", "--no-write", "--bootstrap", "1",
                                      "--metrics", "StreamLAAL"])
    peer_t, peer_m, peer_out = timed([sys.executable, "-m", "simulstream.metrics.score_latency", "--eval-config",
                                      str(p["cfg"]), "--log-file", str(p["log"]), "--audio-definition",
                                      str(p["seg"]), "--reference", str(p["ref"]), "--scorer", "stream_laal"])
    ours = json.loads(ours_out)
    line = next(x for x in peer_out.splitlines() if "ideal_latency" in x)
    ideal = float(line.split("ideal_latency=")[1].split(",")[0]) * 1000
    aware = float(line.split("computational_aware_latency=")[1].rstrip(")")) * 1000
    equal = math.isclose(ours["StreamLAAL"]["score"], ideal, rel_tol=1e-9) and math.isclose(
        ours["StreamLAAL_CA"]["score"], aware, rel_tol=1e-9)
    print(f"simulstream StreamLAAL: harness {ours_t:.2f} s ({ours_m:.0f} MiB) vs simulstream {peer_t:.2f} s "
          f"({peer_m:.0f} MiB): {peer_t / ours_t:.1f}x faster (goal >= 5x); values equal (1e-9): {equal}")


def cpu_timed(cmd: list[str], cwd: Path | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and the children it waited for) of one command."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return time.perf_counter() - t0, usage.ru_utime + usage.ru_stime


def compare_binary(p: dict[str, Path], folder: Path, stream_laal: Path | None) -> None:
    """`harness score --profile iwslt2025` against the original mwerSegmenter binary's segmentation of the same
    talk (and FBK's stream_laal.py where given): times, and equal sentences."""
    from harness.metrics.mwerbinary import check_binary

    exe = check_binary()
    folder.mkdir(parents=True, exist_ok=True)
    hyp = json.loads(p["jsonl"].read_text(encoding="utf-8"))
    (folder / "ref").write_text("".join(x.strip() + "\n" for x in p["ref"].read_text(encoding="utf-8").splitlines()),
                                encoding="utf-8")
    (folder / "hyp").write_text(hyp["prediction"], encoding="utf-8")
    binary_t, binary_cpu = cpu_timed([str(exe), "-mref", "ref", "-hypfile", "hyp", "-usecase", "1"], folder)
    lines = [x.strip() for x in (folder / "__segments").read_text(encoding="utf-8").splitlines()]
    log = folder / "hyp.jsonl"
    log.write_text(p["jsonl"].read_text(encoding="utf-8"), encoding="utf-8")
    ours_t, ours_m, ours_out = timed([sys.executable, "-m", "harness", "score", str(log), "--segmentation",
                                      str(p["seg"]), "--references", str(p["ref"]), "--target-lang", "es",
                                      "--profile", "iwslt2025", "--format", "json", "--bootstrap", "1"])
    rows = [json.loads(x) for x in (folder / "instance_scores.jsonl").read_text(encoding="utf-8").splitlines()]
    ours = [s["prediction"] for r in rows for s in r["sentences"]]
    _, ours_cpu = cpu_timed([sys.executable, "-m", "harness", "score", str(log), "--segmentation", str(p["seg"]),
                             "--references", str(p["ref"]), "--target-lang", "es", "--profile", "iwslt2025",
                             "--no-write", "--bootstrap", "1"])
    print(f"iwslt2025 profile: harness score {ours_t:.2f} s ({ours_m:.0f} MiB; {ours_cpu:.2f} CPU s) vs the original "
          f"mwerSegmenter alone {binary_t:.2f} s ({binary_cpu:.2f} CPU s): {binary_t / ours_t:.2f}x (goal >= 1: no "
          f"slower; one recording runs one binary, so ours is the binary plus Python); sentences equal: "
          f"{ours == lines} ({len(lines)} sentences)")
    if stream_laal is not None:
        env = {**os.environ, "MWERSEGMENTER_ROOT": str(exe.parent)}
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, str(stream_laal), "--simuleval-instances", str(log), "--reference",
                              str(p["ref"]), "--audio-yaml", str(p["seg"]), "--sacrebleu-tokenizer", "13a",
                              "--latency-unit", "word"], env=env, capture_output=True, text=True, check=True)
        peer_t = time.perf_counter() - t0
        published = [float(x) for x in out.stdout.strip().splitlines()[-1].split("\t")]
        mine = [json.loads(ours_out)[k]["score"] for k in ("BLEU", "StreamLAAL", "StreamLAAL_CA")]
        equal = all(math.isclose(a, b, rel_tol=0, abs_tol=1e-9) for a, b in zip(mine, published, strict=True))
        print(f"iwslt2025 profile: harness score {ours_t:.2f} s vs stream_laal.py {peer_t:.2f} s: "
              f"{peer_t / ours_t:.2f}x; BLEU, StreamLAAL, StreamLAAL_CA equal (1e-9): {equal}")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def server_memory(minutes: float, folder: Path) -> None:
    """Stream a `minutes`-long recording through `harness server` and print its RSS at the start and the end."""
    import soundfile

    from harness.data.longform_build import SAMPLE_RATE

    base = ROOT / "data" / "longform" / "talks" / "udhr-long.wav"
    reps = max(1, math.ceil(minutes * 60 / soundfile.info(str(base)).duration))
    wav = folder / "long.wav"
    with soundfile.SoundFile(str(wav), "w", SAMPLE_RATE, 1, subtype="PCM_16") as f:
        for _ in range(reps):
            for block in soundfile.blocks(str(base), blocksize=1 << 20, dtype="int16"):
                f.write(block)
    seconds = soundfile.info(str(wav)).duration
    (folder / "long.list").write_text("long.wav\n", encoding="utf-8")
    (folder / "long.yaml").write_text(yaml.safe_dump([{"wav": "long.wav", "offset": 0.0,
                                                       "duration": round(seconds - 0.01, 3)}]), encoding="utf-8")
    (folder / "long.txt").write_text("una frase\n", encoding="utf-8")
    cfg = folder / "task.yaml"
    cfg.write_text("task: bench\ntracks:\n  - {name: lf, modality: speech, segmentation: longform, source_lang: en, "
                   "target_lang: es, datasets: {dev: {source: long.list, segmentation: long.yaml, references: "
                   "{orig: long.txt}}}}\nlimits: {instance_timeout_s: 7200, idle_timeout_s: 600}\n",
                   encoding="utf-8")
    agent = folder / "reader.py"
    agent.write_text("from harness.client.agent import ReadAction, SpeechAgent, WriteAction\n\n\n"
                     "class Reader(SpeechAgent):\n    def policy(self, states):\n        states.source.clear()\n"
                     "        return WriteAction('fin', finished=True) if states.source_finished else ReadAction()\n",
                     encoding="utf-8")
    port = 18000 + os.getpid() % 1000
    server = subprocess.Popen([sys.executable, "-m", "harness", "server", "--config", str(cfg), "--dataset", "dev",
                               "--port", str(port), "--output", str(folder / "run")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        import socket

        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        start = rss_mib(server.pid)
        peak = start
        client = subprocess.Popen([sys.executable, "-m", "harness", "client", "--server", f"http://127.0.0.1:{port}",
                                   "--agent", str(agent), "--audio", "pcm16"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        t0 = time.perf_counter()
        while client.poll() is None:
            peak = max(peak, rss_mib(server.pid))
            time.sleep(0.5)
        end = rss_mib(server.pid)
        print(f"server RSS while streaming {seconds / 3600:.2f} h of audio ({time.perf_counter() - t0:.0f} s): "
              f"start {start:.0f} MiB, peak {peak:.0f} MiB, end {end:.0f} MiB (client exit {client.returncode})")
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=150.0)
    ap.add_argument("--peer-minutes", type=float, default=None,
                    help="talk length for the peers (default: --minutes)")
    ap.add_argument("--skip-peers", action="store_true")
    ap.add_argument("--skip-omnisteval", action="store_true", help="OmniSTEval needs ~20 min and ~10 GiB at 2.5 h")
    ap.add_argument("--skip-server", action="store_true")
    ap.add_argument("--skip-binary", action="store_true", help="leave out the iwslt2025 profile's comparison")
    ap.add_argument("--stream-laal", type=Path, default=None,
                    help="a copy of FBK's stream_laal.py (with simuleval installed) to time beside the profile")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if not args.skip_peers:
            p = synthesize(args.peer_minutes or args.minutes, root / "talk")
            compare_simulstream(p)
            if not args.skip_binary:
                compare_binary(p, root / "binary", args.stream_laal)
            if not args.skip_omnisteval:
                compare_omnisteval(p, root / "omni")
        if not args.skip_server:
            server_memory(args.minutes, root)


if __name__ == "__main__":
    main()
