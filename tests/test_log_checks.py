"""A log submission's log is checked when it arrives, before scoring (issue 32, item 4): delays that never decrease
and lie inside their recording, one delay per output unit, computation-aware times not below the others, every
problem at once, one line naming the log, the line and the recording; and `harness check` of a good log prints its
dev-set primary latency and the regime it will compete in. Through `harness check` and `harness evaluate`; nothing
is built, no Docker."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import soundfile

from harness.errors import EXIT_FAILED, EXIT_OK
from tests.harness_cli import NO_DOCKER, run_in_checkout

ROOT = Path(__file__).resolve().parent.parent
SENTENCES = [("the first sentence of the talk", "la primera frase de la charla"),
             ("and here is the second one", "y aquí está la segunda"),
             ("a third sentence ends it", "una tercera frase lo termina")]


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    return run_in_checkout(*args, env=NO_DOCKER)


def _task(root: Path) -> Path:
    """A long-form track on one 12 s recording (three sentences), regimes low <= 1500 ms and high <= 4000 ms."""
    t = np.arange(16000 * 12) / 16000.0
    soundfile.write(str(root / "talk.wav"), (0.2 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), 16000)
    (root / "dev.list").write_text("talk.wav\n", encoding="utf-8")
    (root / "dev.yaml").write_text("".join(f"- {{wav: talk.wav, offset: {1.0 + 3.0 * i:.1f}, duration: 2.5}}\n"
                                           for i in range(3)), encoding="utf-8")
    (root / "dev.es").write_text("".join(es + "\n" for _, es in SENTENCES), encoding="utf-8")
    cfg = root / "task.yaml"
    cfg.write_text("task: t\ntracks:\n  - {name: lf, modality: speech, segmentation: longform, source_lang: en, "
                   "target_lang: es, quality: [BLEU], latency: [LongYAAL], primary: {latency: LongYAAL}, "
                   "regimes: [{name: low, max_latency: 1500}, {name: high, max_latency: 4000}], regime_from: dev, "
                   "datasets: {dev: {source: dev.list, segmentation: dev.yaml, references: {orig: dev.es}}}}\n",
                   encoding="utf-8")
    return cfg


def _chunks(lag: float) -> list[dict]:
    """A SimulStream metrics log: each word `lag` s after its share of its sentence is spoken."""
    out: list[dict] = [{"id": 0, "metadata": {"wav_name": "talk.wav"}}]
    for i, (_, es) in enumerate(SENTENCES):
        words = es.split()
        for k, word in enumerate(words):
            at = 1.0 + 3.0 * i + 2.5 * (k + 1) / len(words) + lag
            out.append({"id": 0, "total_audio_processed": round(at, 3), "computation_time": 0.05,
                        "generated_tokens": [word], "deleted_tokens": []})
    return out


def _submission(root: Path, lines: list[dict], name: str = "logsys") -> Path:
    sub = root / "subs" / name
    sub.mkdir(parents=True)
    (sub / "dev.jsonl").write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in lines),
                                   encoding="utf-8")
    (sub / "submission.yaml").write_text("team: t\nsystem: s\ntrack: lf\nlogs: {dev: dev.jsonl}\n"
                                         "hardware: 1 CPU core\n", encoding="utf-8")
    return sub


def test_every_problem_of_a_simulstream_log_is_one_line(tmp_path: Path) -> None:
    cfg = _task(tmp_path)
    lines = _chunks(0.5)
    lines[4]["total_audio_processed"] = 0.2  # line 5: before line 4's 2.75 s
    lines[9]["computation_time"] = -0.3  # line 10: a CA time below its delay
    lines[-1]["total_audio_processed"] = 14.0  # the last line: past the 12 s of audio
    sub = _submission(tmp_path, lines)
    log = sub.resolve() / "dev.jsonl"
    done = harness("check", str(sub), "--config", str(cfg), "--no-docker")
    assert done.returncode == EXIT_FAILED, done.stdout + done.stderr
    where = f"error: {sub.resolve() / 'submission.yaml'}: logs.dev: {log}: "
    expected = [
        f"{where}line 5: recording talk.wav: total_audio_processed 0.2 s is below 2.75 s of line 4 (delays never "
        "decrease)",
        f"{where}line 10: recording talk.wav: computation_time -0.3 s is negative: its computation-aware time "
        "would be below the non-computation-aware one",
        f"{where}line {len(lines)}: recording talk.wav: total_audio_processed 14 s is past the end of its audio "
        "(12 s)"]
    errors = [line for line in done.stdout.splitlines() if line.startswith("error: ")]
    assert errors == expected, done.stdout
    results = tmp_path / "results"
    evaluated = harness("evaluate", str(tmp_path / "subs"), "--config", str(cfg), "--output", str(results),
                        "--dataset", "dev")
    assert evaluated.returncode == EXIT_OK, evaluated.stdout + evaluated.stderr
    run = json.loads((results / "summary.json").read_text(encoding="utf-8"))["runs"][0]
    assert run["status"] == "invalid_submission" and not run.get("scores"), run
    assert run["reason"] == (expected[0].removeprefix("error: ") + " (and 2 more; `harness check SUBMISSION "
                             "--config CONFIG` lists them)")


def test_a_simuleval_long_form_log_needs_a_delay_per_word_and_ca_times_after_them(tmp_path: Path) -> None:
    cfg = _task(tmp_path)
    words = " ".join(es for _, es in SENTENCES).split()
    delays = [1500.0 + 600 * k for k in range(len(words))]
    elapsed = [d + 100 for d in delays]
    elapsed[3] = delays[3] - 50
    line = {"source": ["talk.wav"], "prediction": " ".join(words), "delays": delays[:-1], "elapsed": elapsed[:-1]}
    sub = _submission(tmp_path, [line])
    done = harness("check", str(sub), "--config", str(cfg), "--no-docker")
    assert done.returncode == EXIT_FAILED, done.stdout + done.stderr
    errors = [e.split(": line ", 1)[1] for e in done.stdout.splitlines() if e.startswith("error: ")]
    assert errors == [f"1: recording talk.wav: {len(words) - 1} delays for {len(words)} output units (one delay "
                      "each)",
                      f"1: recording talk.wav: computation-aware time 3 ({delays[3] - 50:g} ms) is below its delay "
                      f"({delays[3]:g} ms)"], done.stdout


def test_a_short_form_log_is_checked_instance_by_instance(tmp_path: Path) -> None:
    udhr = ROOT / "data" / "udhr"
    sources = (udhr / "dev.en").read_text(encoding="utf-8").splitlines()
    refs = (udhr / "dev.es").read_text(encoding="utf-8").splitlines()
    lines = []
    for i, (src, ref) in enumerate(zip(sources, refs, strict=True)):
        n, words = len(src.split()), ref.split()
        lines.append({"index": i, "prediction": ref, "delays": [min(3 + j, n) for j in range(len(words))],
                      "elapsed": [0.0] * len(words), "prediction_length": len(words), "reference": ref,
                      "source": src, "source_length": n})
    lines[2]["delays"] = lines[2]["delays"][:-2]
    lines[7]["delays"][-1] = len(sources[7].split()) + 4
    sub = tmp_path / "subs" / "waitk"
    sub.mkdir(parents=True)
    (sub / "dev.log").write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    (sub / "submission.yaml").write_text("team: t\nsystem: s\ntrack: text-en-es\nlogs: {dev: dev.log}\n"
                                         "hardware: 1 CPU core\n", encoding="utf-8")
    done = harness("check", str(sub), "--config", str(ROOT / "configs" / "demo.yaml"), "--no-docker")
    assert done.returncode == EXIT_FAILED, done.stdout + done.stderr
    errors = [e.split(": line ", 1)[1] for e in done.stdout.splitlines() if e.startswith("error: ")]
    n7 = len(sources[7].split())
    assert errors == [f"3: instance 2: {len(lines[2]['delays'])} delays for {len(refs[2].split())} output units "
                      "(one delay each)",
                      f"8: instance 7: delay {len(lines[7]['delays']) - 1} ({n7 + 4}) is past the end of its "
                      f"source ({n7} words)"], done.stdout


def test_check_prints_the_dev_latency_and_the_regime(tmp_path: Path) -> None:
    cfg = _task(tmp_path)
    sub = _submission(tmp_path, _chunks(0.5))
    done = harness("check", str(sub), "--config", str(cfg), "--no-docker")
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    line = next(x for x in done.stdout.splitlines() if "LongYAAL" in x)
    assert line.startswith(f"ok: {sub.resolve() / 'submission.yaml'}: logs.dev: LongYAAL ")
    assert line.endswith(" ms on dev: competes in regime 'low' (LongYAAL <= 1500) (decides its regime on every "
                         "dataset: regime_from: dev)"), line
    slow = _submission(tmp_path, _chunks(2.0), name="slow")
    done = harness("check", str(slow), "--config", str(cfg), "--no-docker")
    assert "competes in regime 'high' (LongYAAL <= 4000)" in done.stdout, done.stdout


def test_a_recording_the_segmentation_lacks_is_named_by_its_line(tmp_path: Path) -> None:
    cfg = _task(tmp_path)
    lines = _chunks(0.5)
    lines += [{"id": 1, "metadata": {"wav_name": "other.wav"}},
              {"id": 1, "total_audio_processed": 1.0, "computation_time": 0.05, "generated_tokens": ["x"],
               "deleted_tokens": []}]
    sub = _submission(tmp_path, lines)
    done = harness("check", str(sub), "--config", str(cfg), "--no-docker")
    assert done.returncode == EXIT_FAILED, done.stdout + done.stderr
    errors = [e for e in done.stdout.splitlines() if e.startswith("error: ")]
    assert errors == [f"error: {sub.resolve() / 'submission.yaml'}: logs.dev: {sub.resolve() / 'dev.jsonl'}: line "
                      f"{len(lines) - 1}: recording other.wav: not a recording of dataset 'dev' (its segmentation "
                      "has: talk.wav)"], done.stdout


def test_check_warns_when_the_dataset_that_decides_regimes_has_no_log(tmp_path: Path) -> None:
    cfg = _task(tmp_path)
    text = cfg.read_text(encoding="utf-8").replace("datasets: {dev: {source: dev.list, segmentation: dev.yaml, "
                                                   "references: {orig: dev.es}}}",
                                                   "datasets: {dev: {source: dev.list, segmentation: dev.yaml, "
                                                   "references: {orig: dev.es}}, test: {source: dev.list, "
                                                   "segmentation: dev.yaml, references: {orig: dev.es}}}")
    cfg.write_text(text, encoding="utf-8")
    sub = _submission(tmp_path, _chunks(0.5))
    (sub / "submission.yaml").write_text("team: t\nsystem: s\ntrack: lf\nlogs: {test: dev.jsonl}\n"
                                         "hardware: 1 CPU core\n", encoding="utf-8")
    done = harness("check", str(sub), "--config", str(cfg), "--no-docker")
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    assert (f"warning: {sub.resolve() / 'submission.yaml'}: logs: no dev log: its regime cannot be decided and it "
            "is not ranked (track 'lf' decides regimes by the LongYAAL of the dev run)") in done.stdout
    assert "competes in regime" not in done.stdout
