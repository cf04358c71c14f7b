"""BLEURT (issue 24): an optional registry metric from a checkpoint the organizer names, with the same values as
bleurt-pytorch's own scorer (BleurtForSequenceClassification + BleurtTokenizer, as its README scores), intervals,
a per-dataset score cache and one-line errors.

bleurt-pytorch's checkpoints are downloads, so the tests build a tiny random-initialised one offline
(`bleurt_checkpoint`, tests/conftest.py); the inputs are the real run log in examples/runs (40 sentences) and a
second system made from it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import yaml

from harness.cli import main
from harness.config import ModelMetric, load_config
from harness.errors import ConfigError, MetricSetupError
from harness.scoring import score_log
from harness.scoring.options import ScoringOptions

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "runs" / "udhr-dev-waitk3"


def _records(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def _runs(tmp_path: Path) -> tuple[Path, Path]:
    """The example run, and a second system: the same run with every hypothesis's words in reverse order."""
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(EXAMPLE, a)
    b.mkdir()
    recs = _records(a / "instances.log")
    for r in recs:
        r["prediction"] = " ".join(reversed(r["prediction"].split()))
    (b / "instances.log").write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return a, b


def _readme_scores(ckpt: Path, references: list[str], candidates: list[str], batch: int) -> list[float]:
    """bleurt-pytorch's README scorer, run on `batch` pairs at a time (one call when batch >= len)."""
    import torch
    from bleurt_pytorch import BleurtForSequenceClassification, BleurtTokenizer

    model = BleurtForSequenceClassification.from_pretrained(str(ckpt))
    tokenizer = BleurtTokenizer.from_pretrained(str(ckpt))
    model.eval()
    out: list[float] = []
    for a in range(0, len(references), batch):
        with torch.no_grad():
            inputs = tokenizer(references[a:a + batch], candidates[a:a + batch], padding="longest",
                               return_tensors="pt")
            out += model(**inputs).logits.flatten().tolist()
    return out


@pytest.mark.slow
@pytest.mark.bleurt
def test_bleurt_values_are_bleurt_pytorch_scores_per_sentence_and_system(tmp_path: Path, bleurt_checkpoint,
                                                                         capsys, monkeypatch) -> None:
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    a, b = _runs(tmp_path)
    assert main(["score", str(a), str(b), "--bleurt-model", str(bleurt_checkpoint), "--metrics", "BLEURT", "BLEU",
                 "--format", "json"]) == 0
    both = json.loads(capsys.readouterr().out)
    theirs = {}
    for run in (a, b):
        recs = _records(run / "instances.log")
        refs, hyps = [r["reference"] for r in recs], [r["prediction"] for r in recs]
        theirs[run.name] = _readme_scores(bleurt_checkpoint, refs, hyps, 16)
        rows = [json.loads(line) for line in (run / "instance_scores.jsonl").read_text().splitlines()]
        assert [row["BLEURT"] for row in rows] == theirs[run.name]  # every sentence: the same float
        rec = both[str(run)]["BLEURT"]
        assert rec["score"] == sum(theirs[run.name]) / len(recs)
        lo, hi = rec["ci95"]
        assert lo <= rec["score"] <= hi and lo < hi
        digest = hashlib.sha256()
        for f in sorted(p for p in bleurt_checkpoint.iterdir() if p.is_file()):
            digest.update(f.name.encode() + b"\0" + f.read_bytes())
        for part in (f"model:{bleurt_checkpoint}", f"sha256:{digest.hexdigest()[:16]}", "precision:fp32",
                     "batch:16", "device:cpu", "nrefs:1", "bs:1000|seed:12345", "bleurt-pytorch:0.0.1"):
            assert part in rec["signature"], (part, rec["signature"])
        assert rec["kind"] == "quality" and rec["direction"] == "higher" and "bleurt-pytorch" in rec["definition"]
    assert theirs["a"] != theirs["b"] and len(set(theirs["a"])) > 30  # two systems, scores that differ


@pytest.mark.bleurt
def test_one_batch_is_the_readme_call_itself_and_the_cache_never_recomputes(tmp_path: Path, bleurt_checkpoint,
                                                                           monkeypatch) -> None:
    """batch_size 64 >= 40 sentences: the harness's one batch is the README's single call on the whole list."""
    from harness.metrics.bleurt.values import scorer_for

    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    a, _ = _runs(tmp_path)
    recs = _records(a / "instances.log")
    readme = _readme_scores(bleurt_checkpoint, [r["reference"] for r in recs], [r["prediction"] for r in recs], 64)
    settings = ModelMetric("BLEURT", bleurt_checkpoint, batch_size=64, precision="fp32")
    scores, rows = score_log(a, ScoringOptions(metrics=["BLEURT"], model_metrics={"BLEURT": settings}))
    assert [row["BLEURT"] for row in rows] == readme
    scorer = scorer_for(settings, "test")
    computed = scorer.computed
    assert computed == 40
    again, _ = score_log(a, ScoringOptions(metrics=["BLEURT"], model_metrics={"BLEURT": settings}))
    assert scorer.computed == computed and again["BLEURT"]["score"] == scores["BLEURT"]["score"]  # cached
    assert (tmp_path / "cache" / "bleurt" / "scores.sqlite3").is_file()


@pytest.mark.bleurt
@pytest.mark.media
@pytest.mark.espeak
def test_a_long_form_run_scores_bleurt_from_the_task_config_without_a_transcript(tmp_path: Path, bleurt_checkpoint,
                                                                                 monkeypatch) -> None:
    """`metrics: {BLEURT: {model: PATH}}` in the task config, BLEURT in a long-form track with no transcripts
    (BLEURT reads no source): `harness score --config` scores the run's resegmented sentences with it (`harness
    run` scores no neural metric, as for COMET; `harness evaluate` does)."""
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    data = ROOT / "data" / "longform"
    config = yaml.safe_load((ROOT / "configs" / "longform.yaml").read_text(encoding="utf-8"))
    track = next(t for t in config["tracks"] if t["name"] == "longform-en-asr")
    track["quality"] = ["BLEU", "BLEURT"]
    track["datasets"] = {"librivox": {"source": str(data / "asr.list"), "segmentation": str(data / "asr.yaml"),
                                      "references": {"orig": str(data / "asr.en")}}}
    config["tracks"] = [track]
    config["metrics"] = {"BLEURT": {"model": str(bleurt_checkpoint)}}
    task = tmp_path / "task.yaml"
    task.write_text(yaml.safe_dump(config), encoding="utf-8")
    assert load_config(task).metrics["BLEURT"].precision == "fp32"  # bleurt-pytorch's, not comet-score's fp16
    out = tmp_path / "run"
    assert main(["run", "--config", str(task), "--dataset", "librivox", "--agent",
                 str(ROOT / "tests" / "agents" / "longform_oracle.py"), "--output", str(out),
                 "--segmentation", str(data / "asr.yaml"), "--references", str(data / "asr.en")]) == 0
    assert "BLEURT" not in json.loads((out / "scores.json").read_text(encoding="utf-8"))  # run: no neural metric
    assert main(["score", str(out), "--config", str(task), "--metrics", "BLEU", "BLEURT"]) == 0
    scores = json.loads((out / "scores.json").read_text(encoding="utf-8"))
    rec = scores["BLEURT"]
    assert isinstance(rec["score"], float) and rec["ci95"] is not None
    assert rec["signature"].endswith("|reseg:softsegmenter+moses:en") and rec["resegmentation"] == "softsegmenter"
    refs = (data / "asr.en").read_text(encoding="utf-8").splitlines()
    assert rec["score"] == pytest.approx(sum(_readme_scores(bleurt_checkpoint, refs, refs, 16)) / len(refs))


@pytest.mark.parametrize(("block", "message"), [
    ("{BLEURT: {batch_size: 8}}", r"metrics\.BLEURT\.model: missing required field"),
    ("{BLEURT: {model: nowhere}}", r"metrics\.BLEURT\.model: no such checkpoint folder or file: .*nowhere$"),
    ("{BLUERT: {model: .}}", r"metrics\.BLUERT: unknown field; did you mean 'BLEURT'\?"),
    ("{}", r"tracks\[0\]\.quality\[1\]: BLEURT needs a checkpoint: add `metrics: \{BLEURT: \{model: PATH\}\}`"),
])
def test_config_errors_name_the_file_and_field(tmp_path: Path, block: str, message: str) -> None:
    (tmp_path / "s.txt").write_text("a\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("task: t\ntracks:\n  - {name: x, modality: text, source_lang: en, target_lang: es,\n"
                   "     quality: [BLEU, BLEURT], datasets: {test: {source: s.txt, references: s.txt}}}\n"
                   f"metrics: {block}\n")
    with pytest.raises(ConfigError, match=f"^{cfg}: {message}"):
        load_config(cfg)


def test_bad_checkpoint_paths_give_one_line(tmp_path: Path, capsys) -> None:
    from harness.metrics.bleurt.checkpoint import locate

    run = tmp_path / "run"
    shutil.copytree(EXAMPLE, run)
    assert main(["score", str(run), "--metrics", "BLEURT", "--bleurt-model", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"harness score: error: --bleurt-model: no such BLEURT checkpoint folder: {tmp_path / 'missing'}"
    assert main(["score", str(run), "--metrics", "BLEURT"]) == 2
    assert capsys.readouterr().err.strip() == ("harness score: error: BLEURT needs a checkpoint: metrics.BLEURT.model "
                                               "in the task config, or --bleurt-model PATH")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(MetricSetupError, match=r"^m: .*empty is not a BLEURT checkpoint \(no config.json in it\)$"):
        locate(empty, "m")
    (empty / "config.json").write_text('{"model_type": "bert"}')
    with pytest.raises(MetricSetupError, match=r"config.json model_type is 'bert', not 'bleurt'\)$"):
        locate(empty, "m")
    (empty / "config.json").write_text('{"model_type": "bleurt"}')
    with pytest.raises(MetricSetupError, match=r"\(no model.safetensors or pytorch_model.bin in it\)$"):
        locate(empty, "m")
    with pytest.raises(MetricSetupError, match=r"is not a BLEURT checkpoint \(expected a folder with config.json\)$"):
        locate(empty / "config.json", "m")


@pytest.mark.bleurt
def test_weights_that_do_not_load_give_one_line(tmp_path: Path, bleurt_checkpoint, capsys, monkeypatch) -> None:
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    bad = tmp_path / "bad"
    shutil.copytree(bleurt_checkpoint, bad)
    weights = next(p for p in bad.iterdir() if p.name in ("model.safetensors", "pytorch_model.bin"))
    weights.write_bytes(b"garbage, not weights")
    run = tmp_path / "run"
    shutil.copytree(EXAMPLE, run)
    assert main(["score", str(run), "--metrics", "BLEURT", "--bleurt-model", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith(f"harness score: error: --bleurt-model: {bad} is not a loadable "
                                              "BLEURT checkpoint: ")


def test_a_missing_extra_is_one_line_naming_it(monkeypatch) -> None:
    import importlib.util

    from harness.metrics.bleurt import scorer

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "bleurt_pytorch" else real(name, *a))
    with pytest.raises(MetricSetupError, match=r"^BLEURT needs the optional extra: pip install 'harness\[bleurt\]'"):
        scorer.require_bleurt()


@pytest.mark.bleurt
def test_evaluate_scoring_and_significance_keep_bleurt(tmp_path: Path, bleurt_checkpoint, monkeypatch) -> None:
    """The results stage of `harness evaluate` (score_run with the task's `metrics:` block, then score_results):
    BLEURT per instance beside the latency metrics, and paired significance on it."""
    from harness.batch.results import score_run
    from harness.scoring.options import track_scoring_options
    from harness.scoring.results import score_results

    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    a, b = _runs(tmp_path / "runs")
    (tmp_path / "dev.en").write_text("".join(r["source"] + "\n" for r in _records(a / "instances.log")))
    (tmp_path / "dev.es").write_text("".join(r["reference"].strip() + "\n" for r in _records(a / "instances.log")))
    (tmp_path / "task.yaml").write_text(
        "task: t\ntracks:\n  - {name: tx, modality: text, source_lang: en, target_lang: es, quality: [BLEU, BLEURT],\n"
        "     latency: [LAAL], primary: {quality: BLEURT, latency: LAAL},\n"
        "     datasets: {dev: {source: dev.en, references: {orig: dev.es}}}}\n"
        f"metrics: {{BLEURT: {{model: {bleurt_checkpoint}}}}}\n")
    config = load_config(tmp_path / "task.yaml")
    track = config.track("tx")
    results, runs = tmp_path / "results", []
    for sub, run in (("sys-a", a), ("sys-b", b)):
        target = results / sub / "dev"
        target.mkdir(parents=True)
        shutil.copy(run / "instances.log", target / "instances.log")
        scores = score_run(target, track_scoring_options(track, config=config, dataset=track.dataset("dev")), False)
        assert scores is not None and "BLEURT" in scores
        runs.append({"submission": sub, "track": "tx", "dataset": "dev", "status": "ok", "scores": scores})
    score_results(config, results, runs)
    sig = json.loads((results / "significance" / "tx" / "dev.json").read_text())
    other = "sys-b" if sig["best"] == "sys-a" else "sys-a"
    assert 0 < sig["runs"][other]["BLEURT"]["p_value"] <= 1 and sig["runs"][other]["BLEURT"]["instances"] == 40
    rows = [json.loads(line) for line in (results / other / "dev" / "instance_scores.jsonl").read_text().splitlines()]
    assert all(isinstance(row["BLEURT"], float) and "LAAL" in row for row in rows)
