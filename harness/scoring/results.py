"""The results stage of scoring: what `harness evaluate` computes once after every run of a batch.

`score_results(config, results_dir, runs)` writes, for the leaderboard to read as files:
- `RUN/instance_scores.jsonl` of every run that logged instances (per-instance latency metrics, and the COMET
  scores its own scoring wrote, kept as they are);
- `RESULTS/significance/<track>/<dataset>.json` per configured track × dataset: the paired bootstrap of every
  scored run against the board's best on the track's primary quality and latency metrics, over the instances
  both decoded, and (`adjacent`) of every two runs next to each other in one of the board's ranked tables on
  primary quality (`harness.scoring.clusters`: the leaderboard's rank clusters). The best is the best complete
  run by primary quality (a partial one only when none is complete), the order the leaderboard ranks in. Systems
  built on closed models (`models: closed`) are ranked apart, and runs whose regime cannot be decided
  (`not_ranked`) are not ranked: they are neither the best nor tested against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness import layout
from harness.config import TaskConfig, Track
from harness.errors import HarnessError
from harness.jsonio import write_json
from harness.metric_registry import LATENCY_METRICS, MODEL_METRICS, QUALITY_METRICS, REGISTRY
from harness.metrics.latency import continuous_wait
from harness.metrics.significance import paired_quality, paired_values
from harness.scoring.clusters import SIGNIFICANCE_LEVEL
from harness.scoring.corpus import corpus_instance_metrics, instance_rows
from harness.scoring.files import write_instance_scores
from harness.scoring.longform import is_longform_log, sentence_scores
from harness.scoring.options import ScoringOptions, track_scoring_options
from harness.scoring.references import reference_sets_of
from harness.status import SCORED_STATUSES

__all__ = ["score_results", "best_run", "SCORED_STATUSES"]


@dataclass
class _RunData:
    """One run's records by index and its per-instance latency and neural (COMET) values by metric and index
    (None: no value)."""

    records: dict[int, dict[str, Any]]
    latency: dict[str, dict[int, float | None]]
    reference_set: str


def _score(run: dict[str, Any], key: str) -> float | None:
    rec = (run.get("scores") or {}).get(key)
    value = rec.get("score") if isinstance(rec, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _scored(run: dict[str, Any], primary: str) -> bool:
    ok = run.get("status") in SCORED_STATUSES or bool(run.get("partial"))
    return ok and _score(run, primary) is not None


def best_run(runs: list[dict[str, Any]], primary_quality: str) -> dict[str, Any] | None:
    """The best complete run by `primary_quality` (a partial one only when none is complete), or None."""
    scored = [r for r in runs if _scored(r, primary_quality)]
    complete = [r for r in scored if r.get("status") == "ok" and not r.get("partial")]
    up = REGISTRY[primary_quality].higher_is_better if primary_quality in REGISTRY else True
    ranked = sorted(complete or scored, key=lambda r: (-(_score(r, primary_quality) or 0.0) if up
                                                       else (_score(r, primary_quality) or 0.0), r["submission"]))
    return ranked[0] if ranked else None


def dataset_anticipation(ds: Any) -> dict[str, Any]:
    """Average Anticipation of each reference set against the source (corpus and per instance)."""
    from harness.data.text import read_lines
    from harness.metrics.anticipation import (
        DEFINITION,
        EflomalAligner,
        aligned,
        average_anticipation,
        corpus_anticipation,
    )

    aligner = EflomalAligner()
    sources = read_lines(ds.source)
    sets = {}
    for name, path in ds.references.items():
        per = [average_anticipation(x) for x in aligned(aligner, sources, read_lines(path))]
        sets[name] = {"AA": corpus_anticipation(per), "instances": per}
    return {"aligner": aligner.name, "definition": DEFINITION, "reference_sets": sets}


def _load(run_dir: layout.RunDir, track: Track, options: ScoringOptions, keep: set[int] | None = None
          ) -> _RunData | None:
    """Read the run's log (a torn last line left out); write its instance_scores.jsonl; None without a log.
    `options`: the track's scoring options (`track_scoring_options`). With `keep` (the main domains' instances when
    some domain is optional: `harness.scoring.domains`), only those instances, and nothing is written."""
    read = _read_log(run_dir, keep)
    if read is None:
        return None
    log, records = read
    if is_longform_log(records):  # boards compare long-form runs sentence by sentence, after resegmentation
        sentences, values, rows = sentence_scores(records, options, latency_unit=log.latency_unit)
        _write_rows(run_dir, rows, keep)
        latency_ = {name: dict(enumerate(vals)) for name, vals in values.items()}
        return _RunData({r["index"]: r for r in sentences}, latency_, next(iter(reference_sets_of(sentences[0]))))
    ref_set = next(iter(reference_sets_of(records[0])))
    per = corpus_instance_metrics(records, log.latency_unit, ref_set, log.source_type == "speech",
                                  track.computation_aware)
    names = [*LATENCY_METRICS, *(f"{n}_CA" for n in LATENCY_METRICS if f"{n}_CA" in per)]
    if "CW" in track.latency:
        per["CW"] = np.array([np.nan if not r.get("delays") or (v := continuous_wait(r["delays"])) is None else v
                              for r in records], dtype=np.float64)
        names.append("CW")
    if track.anticipation and all(isinstance(r.get("source"), str) for r in records):
        per["AA"] = _anticipation_values(records)
        names.append("AA")
    neural = _neural_values(run_dir, [r["index"] for r in records])
    per.update(neural)
    _write_rows(run_dir, instance_rows(records, per, names + list(neural)), keep)
    latency = {name: {r["index"]: (None if v != v else float(v)) for r, v in zip(records, arr.tolist(), strict=True)}
               for name, arr in per.items()}
    return _RunData({r["index"]: r for r in records}, latency, ref_set)


def _write_rows(run_dir: layout.RunDir, rows: list[dict[str, Any]], keep: set[int] | None) -> None:
    """Write the run's instance_scores.jsonl, unless only some instances (`keep`) were read."""
    if keep is None:
        write_instance_scores(run_dir.path, rows)


def _read_log(run_dir: layout.RunDir, keep: set[int] | None) -> tuple[Any, list[dict[str, Any]]] | None:
    """(the run's log, its records in index order: only those in `keep` when given), None when there are none."""
    from harness.runlog import read_instances

    if not run_dir.instances_log.is_file():
        return None
    try:
        log = read_instances(run_dir.instances_log, allow_torn=True)
    except HarnessError:
        return None  # nothing to score (the run's status already says why)
    records = sorted((r for r in log.records if keep is None or r["index"] in keep), key=lambda r: r["index"])
    return (log, records) if records else None


def _domains(track: Track, dataset: str | None) -> Any:
    """The domain map of the track's dataset `dataset` (None: no such dataset, or no domains)."""
    ds = track.datasets.get(dataset) if dataset is not None else None
    if ds is None or ds.domains is None:
        return None
    from harness.data.domains import domain_map

    return domain_map(track, ds)


def _anticipation_values(records: list[dict[str, Any]]) -> Any:
    """AA of each output against its source text (NaN for an empty output)."""
    from harness.metrics.anticipation import EflomalAligner, aligned, average_anticipation

    links = aligned(EflomalAligner(), [r["source"] for r in records], [r["prediction"] for r in records])
    return np.array([np.nan if not r["prediction"].strip() or (v := average_anticipation(x)) is None else v
                     for r, x in zip(records, links, strict=True)])


def _neural_values(run_dir: layout.RunDir, indices: list[int]) -> dict[str, Any]:
    """{COMET key: per-instance numpy array (NaN: none)} that the run's scoring wrote to instance_scores.jsonl.

    Neural scores are computed once, when the run is scored; this stage keeps them (and tests them for
    significance) without loading a model."""
    import json

    import numpy as np

    try:
        lines = run_dir.instance_scores.read_text(encoding="utf-8").splitlines()
        rows = {row["index"]: row for row in map(json.loads, lines) if isinstance(row, dict) and "index" in row}
    except (OSError, ValueError):
        return {}
    keys = sorted({k for row in rows.values() for k in row if k.partition("@")[0] in MODEL_METRICS})
    out: dict[str, Any] = {}
    for key in keys:
        values = [rows.get(i, {}).get(key) for i in indices]
        out[key] = np.array([float(v) if isinstance(v, (int, float)) else np.nan for v in values])
    return out


def _paired(best: _RunData, other: _RunData, metric: str, track: Track, bootstrap: int, seed: int
            ) -> dict[str, Any]:
    common = sorted(set(best.records) & set(other.records))
    try:
        if metric in QUALITY_METRICS:
            refs = [reference_sets_of(best.records[i])[best.reference_set] for i in common]
            res = paired_quality([best.records[i]["prediction"] for i in common],
                                 [other.records[i]["prediction"] for i in common], refs, metric,
                                 bootstrap=bootstrap, seed=seed, tokenizer=track.tokenizer)
        else:
            if metric not in best.latency or metric not in other.latency:
                raise HarnessError(f"metric {metric!r} has no value for any instance")
            res = paired_values([best.latency[metric][i] for i in common], [other.latency[metric][i] for i in common],
                                metric, bootstrap=bootstrap, seed=seed)
    except HarnessError as exc:
        return {"error": str(exc)}
    res["reference_set"] = best.reference_set
    res["instances"] = len(common)
    res["all_instances"] = len(common) == len(best.records) == len(other.records)
    return res


def score_results(config: TaskConfig, results_dir: str | Path, runs: list[dict[str, Any]], *,
                  bootstrap: int = 1000, seed: int = 12345) -> list[Path]:
    """Write every run's instance_scores.jsonl and each configured board's significance file; their paths.

    `runs` are the summary records of the batch (docs/formats.md, `summary.json` `runs`). Runs whose track is not
    in `config` are left out (they get no board).
    """
    results = layout.ResultsDir(Path(results_dir))
    data, written = _load_runs(config, results, runs)
    for track in config.tracks:
        if track.anticipation:
            written += [write_json(results.anticipation(track.name, name), dataset_anticipation(ds), ensure_ascii=False,
                                          mkdir=True)
                        for name, ds in track.datasets.items()
                        if any(r.get("track") == track.name and r.get("dataset") == name for r in runs)]
        for dataset in track.datasets:
            board = [r for r in runs if r.get("track") == track.name and r.get("dataset") == dataset
                     and r.get("models") != "closed" and not r.get("not_ranked") and not r.get("superseded_by")]
            if board:
                out = _board_significance(track, dataset, board, data, bootstrap, seed)
                out["adjacent"] = _adjacent_tests(track, dataset, board, runs, data, bootstrap, seed)
                out["cluster_level"] = SIGNIFICANCE_LEVEL  # p below it: a new rank cluster starts
                written.append(write_json(results.significance(track.name, dataset), out, ensure_ascii=False,
                                          mkdir=True))
    return written


def _load_runs(config: TaskConfig, results: layout.ResultsDir, runs: list[dict[str, Any]]
               ) -> tuple[dict[tuple[str, str], _RunData | None], list[Path]]:
    """({(submission, dataset): the run's data}, the instance_scores.jsonl written) for runs of known tracks."""
    tracks = {t.name: t for t in config.tracks}
    options = {t.name: track_scoring_options(t) for t in config.tracks}  # built once per track
    data: dict[tuple[str, str], _RunData | None] = {}
    written: list[Path] = []
    for run in runs:
        track = tracks.get(run.get("track"))  # type: ignore[arg-type]
        if track is None or not isinstance(run.get("submission"), str) or not isinstance(run.get("dataset"), str):
            continue
        run_dir = results.run(run["submission"], run["dataset"])
        if "/" in run["submission"] + run["dataset"] or ".." in run["submission"] + run["dataset"]:
            continue
        data[(run["submission"], run["dataset"])] = loaded = _load(run_dir, track, options[track.name])
        main = domains.main_indices if (domains := _domains(track, run["dataset"])) is not None else None
        if loaded is not None and main is not None:  # optional domains never change the main ranking
            data[(run["submission"], run["dataset"])] = _load(run_dir, track, options[track.name], main)
        if loaded is not None:
            written.append(run_dir.instance_scores)
    return data, written


def _board_significance(track: Track, dataset: str, board: list[dict[str, Any]],
                        data: dict[tuple[str, str], _RunData | None], bootstrap: int, seed: int) -> dict[str, Any]:
    """One board's significance file: every scored run against the best one, on both primary metrics."""
    best = best_run(board, track.primary_quality)
    out: dict[str, Any] = {"track": track.name, "dataset": dataset, "best": best["submission"] if best else None,
                           "metrics": [track.primary_quality, track.primary_latency],
                           "bootstrap": bootstrap, "seed": seed, "runs": {}}
    best_data = data.get((best["submission"], dataset)) if best else None
    for run in board:
        if best is None or run is best or not _scored(run, track.primary_quality):
            continue
        other = data.get((run["submission"], dataset))
        if best_data is None or other is None:
            continue
        out["runs"][run["submission"]] = {m: _paired(best_data, other, m, track, bootstrap, seed)
                                          for m in (track.primary_quality, track.primary_latency)}
    return out


def _adjacent_tests(track: Track, dataset: str, board: list[dict[str, Any]], runs: list[dict[str, Any]],
                    data: dict[tuple[str, str], _RunData | None], bootstrap: int, seed: int) -> list[dict[str, Any]]:
    """The paired test on primary quality of every two runs adjacent in one of the board's tables
    (`harness.scoring.clusters`): what the leaderboard's rank clusters are made of."""
    from harness.scoring.clusters import adjacent_pairs

    scored = [r for r in board if _scored(r, track.primary_quality)]
    out = []
    for a, b in adjacent_pairs(track, scored, runs):
        first, second = data.get((a, dataset)), data.get((b, dataset))
        if first is not None and second is not None:
            out.append({"runs": [a, b], track.primary_quality: _paired(first, second, track.primary_quality, track,
                                                                       bootstrap, seed)})
    return out
