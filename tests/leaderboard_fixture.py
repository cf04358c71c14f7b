"""A real results directory for the leaderboard tests, made by running simple deterministic policies (a helper,
not a test module: the session fixture `fixture_results` of conftest.py builds it once).

Two text runs go through the real server and client (`harness run` with the agent templates of the repository);
the others are decoded here by policies over the same data, so that every case a page must show is present. The
source is the bundled UDHR text (en→es, test split) and the LibriVox recordings of pocketsphinx-testdata
(speech). Translations come from Apertium (eng-spa), run once over every source prefix the policies can ask for;
the policies (wait-k, re-translation, offline, a cascade over the LibriVox transcripts) decide from the prefixes
they have read only. Every file is written by the harness's own writers: instances.log by the run log's
`LogWriter`, scores.json and instance_scores.jsonl by the scoring stage (`harness.scoring.score_run`), summary.json
by the batch's summary writer and the significance files by `harness.scoring.results.score_results`.
Nothing here writes a score or a results file by hand.
"""

from __future__ import annotations

import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import soundfile as sf

from harness import __version__, layout
from harness.batch.results import finish_results as finish_batch
from harness.batch.results import score_run
from harness.config import Track, load_config
from harness.data.prepare import LIBRIVOX
from harness.jsonio import write_json
from harness.metrics.stability import final_token_delays
from harness.runlog import LogWriter, read_records
from harness.scoring.options import track_scoring_options

REPO = Path(__file__).resolve().parents[1]
UDHR = REPO / "data" / "udhr"
XSS_TEAM = '<script>window.__pwned = "team"</script>Tag Team'
XSS_TEXT = '<script>window.__pwned = "hypothesis"</script>'
SEGMENT_MS = 320
TEXT_INSTANCES = 10  # the first sentences of the UDHR test split: enough for every view, quick in a browser


def apertium(lines: list[str]) -> list[str]:
    """Translate lines en→es with one Apertium call (unknown words are kept as they are)."""
    out = subprocess.run(["apertium", "-u", "eng-spa"], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, check=True, timeout=120).stdout
    result = out.split("\n")[: len(lines)]
    return [" ".join(r.split()) for r in result]


class PrefixMT:
    """Apertium translations of every word prefix of a set of sentences (a table the policies look into)."""

    def __init__(self, sentences: list[list[str]]) -> None:
        keys = sorted({" ".join(words[:j]) for words in sentences for j in range(1, len(words) + 1)})
        self.table = dict(zip(keys, apertium(keys), strict=True))

    def __call__(self, words: list[str]) -> list[str]:
        return self.table[" ".join(words)].split() if words else []


def _wait_k(src: list[str], mt: PrefixMT, k: int, echo: str = "") -> tuple[list[str], list[float], list[float]]:
    """Wait-k over prefix translations: after reading j words, commit the next word of MT(prefix) while j-m >= k."""
    start = time.perf_counter()
    out: list[str] = []
    delays: list[float] = []
    elapsed: list[float] = []
    j = 0
    while True:
        finished = j == len(src)
        hyp = mt(src[:j])
        if (finished or j - len(out) >= k) and len(out) < len(hyp):
            out.append(hyp[len(out)])
            delays.append(float(j))
            elapsed.append(j + (time.perf_counter() - start) * 1000)
        elif not finished:
            j += 1
        else:
            break
    for word in echo.split():
        out.append(word)
        delays.append(float(j))
        elapsed.append(j + (time.perf_counter() - start) * 1000)
    return out, delays, elapsed


def text_record(index: int, src: str, refs: dict[str, str], policy: str, mt: PrefixMT, k: int = 3,
                echo: str = "") -> dict[str, Any]:
    """Decode one sentence with `policy` (wait-k, offline or retranslation) into an instances.log record."""
    words = src.split()
    rec: dict[str, Any] = {"index": index, "source": src, "source_length": len(words),
                           "reference": next(iter(refs.values())), "references": refs, "status": "ok", "error": None,
                           "latency_unit": "word"}
    start = time.perf_counter()
    if policy == "retranslation":
        revisions = []
        for j in range(1, len(words) + 1):
            text = " ".join(mt(words[:j]))
            if not revisions or revisions[-1]["text"] != text:
                revisions.append({"delay": float(j), "elapsed": j + (time.perf_counter() - start) * 1000,
                                  "text": text})
        final = revisions[-1]["text"].split()
        rec["revisions"] = revisions
        delays = final_token_delays([(r["delay"], r["text"]) for r in revisions])
        elapsed = final_token_delays([(r["elapsed"], r["text"]) for r in revisions])
    else:
        final, delays, elapsed = _wait_k(words, mt, len(words) if policy == "offline" else k, echo)
    rec.update(prediction=" ".join(final), delays=delays, elapsed=elapsed, prediction_length=len(final),
               timing={"wall_s": time.perf_counter() - start, "server_s": 0.0})
    return rec


def speech_record(index: int, wav: Path, transcript: list[str], ref: str, mt: PrefixMT, k: int) -> dict[str, Any]:
    """A cascade over the recording: words of the transcript known in proportion to the audio read, wait-k MT."""
    info = sf.info(str(wav))
    total = info.frames * 1000.0 / info.samplerate
    start = time.perf_counter()
    out: list[str] = []
    delays: list[float] = []
    elapsed: list[float] = []
    read = 0.0
    while True:
        finished = read >= total
        known = transcript if finished else transcript[: int(len(transcript) * read / total)]
        hyp = mt(known)
        if (finished or len(known) - len(out) >= k) and len(out) < len(hyp):
            out.append(hyp[len(out)])
            delays.append(read)
            elapsed.append(read + (time.perf_counter() - start) * 1000)
        elif not finished:
            read = min(read + SEGMENT_MS, total)
        else:
            break
    return {"index": index, "source": [str(wav)], "source_length": total, "prediction": " ".join(out),
            "delays": delays, "elapsed": elapsed, "prediction_length": len(out), "reference": ref,
            "references": {"orig": ref}, "status": "ok", "error": None, "latency_unit": "ms",
            "timing": {"wall_s": time.perf_counter() - start, "server_s": 0.0}}


CONFIG = """\
task: leaderboard-fixture
tracks:
  - name: text-en-es
    modality: text
    source_lang: en
    target_lang: es
    latency_unit: word
    quality: [BLEU, chrF, TER]
    latency: [LAAL, AL, AP, DAL, ATD, StartOffset, EndOffset]
    primary: {{quality: BLEU, latency: LAAL}}
    regimes: [{{name: low, max_latency: 3}}, {{name: high, max_latency: 6}}]
    baseline: organizers-offline
    datasets:
      test: {{source: {text_src}, references: {{orig: {text_ref}, mono: {mono}}}}}
  - name: speech-en-es
    modality: speech
    source_lang: en
    target_lang: es
    quality: [BLEU, chrF]
    latency: [LAAL, AL, StartOffset]
    primary: {{quality: BLEU, latency: LAAL}}
    regimes: [{{name: low, max_latency: 1000}}, {{name: high, max_latency: 2000}}]
    datasets:
      test: {{source: {speech_list}, references: {{orig: {speech_ref}}}}}
"""

# submission id, team, system, kind, baseline, track, policy, k
TEXT_RUNS = [
    ("organizers-offline", "Organizers", "offline", "primary", True, "offline", 0),
    ("lab-a-wait1", "Lab A", "wait-k", "contrastive", False, "wait-k", 1),  # one system, three latency settings
    ("lab-a-wait3", "Lab A", "wait-k", "primary", False, "wait-k", 3),
    ("lab-a-wait5", "Lab A", "wait-k", "contrastive", False, "wait-k", 5),
    ("flicker-retrans", "Flicker", "re-translation", "primary", False, "retranslation", 0),
    ("tag-team-wait2", XSS_TEAM, "wait-2 <b>echo</b>", "primary", False, "wait-k", 2),
]
# submission id, system, kind, agent template, agent options: run by `harness run` on the text track
HARNESS_RUNS = [("apertium-waitk2", "wait-2 (harness run)", "primary", "waitk_apertium", ["--waitk", "2"]),
                ("apertium-retrans", "re-translation (harness run)", "contrastive", "retranslation", [])]
SPEECH_RUNS = [("speechy-k2", "Speechy", "cascade wait-2", "primary", 2),
               ("speechy-k4", "Speechy", "cascade wait-4", "contrastive", 4)]


def _manifest(config_text: str, config: Path) -> dict[str, Any]:
    import hashlib

    return {"harness_version": __version__, "config": str(config),
            "config_sha256": hashlib.sha256(config_text.encode()).hexdigest(),
            "image_digest": None, "isolation": {"mode": "local process (test fixture, no container)"},
            "hardware": {"machine": platform.machine(), "processor": platform.processor() or platform.machine(),
                         "python": platform.python_version()}}


def write_run(results: Path, sub: str, ds: str, records: list[dict[str, Any]], client_log: str,
              manifest: dict[str, Any], track: Track, bootstrap: int = 200) -> dict[str, Any] | None:
    """Write a run folder as a run does (log, client log, manifest) and score it as the scoring stage does (with
    `track`'s scoring options)."""
    run = layout.ResultsDir(results).run(sub, ds)
    writer = LogWriter(run.path)
    for rec in records:
        writer.write(rec)
    writer.close()
    run.client_log.write_text(client_log, encoding="utf-8")
    write_json(layout.ResultsDir(results).submission(sub).manifest, manifest, mkdir=True)
    return score_run(run.path, track_scoring_options(track, bootstrap=bootstrap), False) if records else None


def summary_record(sub: str, team: str, system: str, track: str | None, kind: str, baseline: bool, status: str,
                   scores: dict[str, Any] | None, reason: str | None = None, partial: bool = False,
                   dataset: str = "test") -> dict[str, Any]:
    """One `runs` entry of summary.json, with the fields the batch records (docs/formats.md)."""
    return {"submission": sub, "team": team, "system": system, "track": track, "kind": kind, "baseline": baseline,
            "dataset": dataset, "status": status, "reason": reason, "partial": partial, "scores": scores or {}}


def finish_results(results: Path, config_path: Path, runs: list[dict[str, Any]]) -> None:
    """What the batch does after its runs (`harness.batch.results.finish_results`): Norm-Scores against the
    baseline, summary.json, the results stage."""
    finish_batch(load_config(config_path, check_files=False), results, runs)


def build_results(root: Path) -> tuple[Path, Path]:
    """Write RESULTS (under `root`) and its task config; returns (results dir, config path)."""
    root.mkdir(parents=True, exist_ok=True)
    src = (UDHR / "test.en").read_text(encoding="utf-8").splitlines()[:TEXT_INSTANCES]
    orig = (UDHR / "test.es").read_text(encoding="utf-8").splitlines()[:TEXT_INSTANCES]
    mono = apertium(src)  # a second, monotone reference set (as SiMuST-C's `mono`)
    for name, lines in (("test.en", src), ("test.es", orig), ("test.mono.es", mono)):
        (root / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    transcripts: list[tuple[Path, list[str]]] = []
    for line in (LIBRIVOX / "transcription").read_text().splitlines():
        words, _, fid = line.rpartition("(")
        words_l = [w for w in words.split() if w not in ("<s>", "</s>")]
        transcripts.append((LIBRIVOX / (fid.strip(" )") + ".wav"), words_l))
    speech_refs = apertium([" ".join(w) for _, w in transcripts])
    (root / "speech.list").write_text("\n".join(str(p) for p, _ in transcripts) + "\n", encoding="utf-8")
    (root / "speech.es").write_text("\n".join(speech_refs) + "\n", encoding="utf-8")
    config_text = CONFIG.format(text_src=root / "test.en", text_ref=root / "test.es", mono=root / "test.mono.es",
                                speech_list=root / "speech.list",
                                speech_ref=root / "speech.es")
    config = root / "task.yaml"
    config.write_text(config_text, encoding="utf-8")
    mt = PrefixMT([s.split() for s in src] + [w for _, w in transcripts])
    results = root / "results"
    manifest = _manifest(config_text, config)
    tracks = load_config(config, check_files=False)
    text_track, speech_track = tracks.track("text-en-es"), tracks.track("speech-en-es")
    runs: list[dict[str, Any]] = []
    for sub, team, system, kind, is_base, policy, k in TEXT_RUNS:
        records = [text_record(i, s, {"orig": o, "mono": m}, policy, mt, k,
                               echo=XSS_TEXT if sub.startswith("tag-team") and i == 0 else "")
                   for i, (s, o, m) in enumerate(zip(src, orig, mono, strict=True))]
        scores = write_run(results, sub, "test", records, f"[agent] {policy} k={k}: decoded {len(records)} instances\n",
                           manifest, text_track)
        runs.append(summary_record(sub, team, system, "text-en-es", kind, is_base, "ok", scores))
    # the project's own agent templates through the real server and client (`harness run`)
    for sub, system, kind, agent, extra in HARNESS_RUNS:
        out = root / "runs" / sub
        subprocess.run([sys.executable, "-m", "harness", "run", "--config", str(config), "--dataset", "test",
                        "--track", "text-en-es", "--agent", str(REPO / "agent_templates" / agent / "agent.py"),
                        "--output", str(out), *extra], check=True, capture_output=True, timeout=300)
        records = read_records(layout.RunDir(out).instances_log)
        scores = write_run(results, sub, "test", records, f"[harness run] {agent} {' '.join(extra)}\n", manifest,
                           text_track)
        runs.append(summary_record(sub, "Apertium Lab", system, "text-en-es", kind, False, "ok", scores))
    # an agent raising on instance 5: what it decoded before is kept, scored, flagged partial (as evaluate does)
    records, log = [], ""
    for i, (s, o, m) in enumerate(zip(src, orig, mono, strict=True)):
        try:
            if i == 5:
                raise ZeroDivisionError("division by zero")
            records.append(text_record(i, s, {"orig": o, "mono": m}, "wait-k", mt, 4))
        except ZeroDivisionError as exc:
            log = f"[agent] decoding instance {i}\nTraceback (most recent call last):\nZeroDivisionError: {exc}\n"
            break
    scores = write_run(results, "crashy-wait4", "test", records, log, manifest, text_track)
    runs.append(summary_record("crashy-wait4", "Crashy", "wait-4", "text-en-es", "primary", False, "crash", scores,
                               f"crash on instance {len(records)}: ZeroDivisionError: division by zero", True))
    runs.append(summary_record("broken-build", "Broken", "nothing", "text-en-es", "primary", False, "build_error",
                               None, "Dockerfile line 3: COPY failed: file not found: model.bin"))
    for sub, team, system, kind, k in SPEECH_RUNS:
        records = [speech_record(i, wav, words, ref, mt, k)
                   for i, ((wav, words), ref) in enumerate(zip(transcripts, speech_refs, strict=True))]
        scores = write_run(results, sub, "test", records, f"[agent] cascade wait-{k}\n", manifest, speech_track)
        runs.append(summary_record(sub, team, system, "speech-en-es", kind, False, "ok", scores))
    finish_results(results, config, runs)
    return results, config

