"""instances.log → scores.json: every quality and latency metric of one run, as docs/formats.md describes.

Top-level keys are metric names (`BLEU`, `chrF`, `TER`, `AL`, `LAAL`, `AP`, `DAL`, `ATD`, `StartOffset`,
`EndOffset`, `YAAL`, `NAME_CA` for speech runs with elapsed times, `NAME@SET` for other reference sets and
`NAME@multi` for all of them together, `NE` for re-translation logs, `NormBLEU` with a baseline)
plus `counts` and `info`.
Unqualified names refer to the first reference set. Every interval comes from the same bootstrap resamples of
the instances (sacrebleu's seeded draw), so metrics stay comparable. Every metric record also carries `kind`,
`direction`, `unit` and `definition` from `harness.metric_registry`, so readers need no metric code.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness import metric_registry
from harness.errors import HarnessError
from harness.metric_registry import (
    ALL_LATENCY_METRICS,
    DIAGNOSTIC_METRICS,
    LATENCY_METRICS,
    MODEL_METRICS,
    QUALITY_METRICS,
)
from harness.metrics import latency as lat
from harness.metrics.degeneracy import DEGENERACY_METRICS, degeneracy
from harness.metrics.quality import norm_score
from harness.scoring.means import mean_records, value_blocks
from harness.scoring.options import ScoringOptions
from harness.scoring.quality_step import start_quality
from harness.scoring.references import reference_sets_of, references_by_set
from harness.scoring.steps import (
    instance_counts,
    latency_record,
    ne_record,
    quality_and_neural,
    resampled,
    resamples,
    run_info,
    wanted_metrics,
)

__all__ = [
    "reference_sets_of",
    "instance_metrics",
    "corpus_instance_metrics",
    "score_records",
    "score_records_with_instances",
    "score_path",
    "add_norm_scores",
    "instance_rows",
    "score_log",
    "references_by_set",
]


def _is_speech(record: dict[str, Any], latency_unit: str) -> bool:
    return latency_unit == "ms" or isinstance(record.get("source"), list)


def _is_harness_record(record: dict[str, Any]) -> bool:
    """Written by the harness's server (which records `latency_unit` and `status`), not by SimulEval."""
    return "latency_unit" in record or "status" in record or "timing" in record


def _elapsed(record: dict[str, Any]) -> list[float] | None:
    """The record's elapsed times, or None where there are none.

    SimulEval writes all-zero elapsed times for text sources, meaning "not measured"; in a harness log every
    value is measured, so all zeros are a value (a client that wrote everything at once), never "no timing".
    """
    el = record.get("elapsed")
    if not el or len(el) != len(record.get("delays") or []):
        return None
    if not any(el) and not _is_harness_record(record):  # any(): some value is not 0
        return None
    return el


def instance_metrics(
    record: dict[str, Any],
    latency_unit: str,
    *,
    reference_set: str | None = None,
) -> dict[str, float | None]:
    """Per-instance AL, LAAL, AP, DAL, ATD, StartOffset, EndOffset, YAAL (and `_CA` for speech with elapsed times).

    An empty hypothesis gives None for every metric (SimulEval leaves it out of the corpus mean).
    """
    refs = reference_sets_of(record)
    ref = refs[reference_set] if reference_set else next(iter(refs.values()))
    delays = record.get("delays") or []
    elapsed = _elapsed(record)
    speech = _is_speech(record, latency_unit)
    if not metric_registry.computation_aware_applies(speech):
        elapsed = None  # text: delays are words, elapsed adds milliseconds to them (no unit): no _CA metrics
    if not delays:
        names = list(LATENCY_METRICS)
        if metric_registry.computation_aware_applies(speech) and record.get("elapsed") is not None:
            names += [f"{n}_CA" for n in LATENCY_METRICS]
        return dict.fromkeys(names)
    target_unit = "char" if latency_unit == "char" else "word"
    return lat.instance_latency(
        delays, record["source_length"], lat.reference_length(ref, target_unit), speech, elapsed
    )


def corpus_instance_metrics(
    records: Sequence[dict[str, Any]], latency_unit: str, reference_set: str, speech: bool, computation_aware: bool
) -> dict[str, Any]:
    """{metric: per-instance numpy array (NaN where there is no value)} for all records, vectorized."""
    import numpy as np

    target_unit = "char" if latency_unit == "char" else "word"
    rows = [i for i, r in enumerate(records) if r.get("delays")]
    computation_aware = computation_aware and metric_registry.computation_aware_applies(speech)  # speech only
    elapsed = [_elapsed(records[i]) for i in rows] if computation_aware else None
    if elapsed is not None and all(e is None for e in elapsed):
        elapsed = None
    out: dict[str, Any] = {}
    if rows:
        sub = [records[i] for i in rows]
        values = lat.corpus_latency(
            [r["delays"] for r in sub],
            [r["source_length"] for r in sub],
            [lat.reference_length(reference_sets_of(r)[reference_set], target_unit) for r in sub],
            speech,
            elapsed,
        )
        for name, arr in values.items():
            full = np.full(len(records), np.nan)
            full[rows] = arr
            out[name] = full
    return out


def score_records(records: list[dict[str, Any]], options: ScoringOptions | None = None, *, latency_unit: str,
                  speech: bool | None = None, source: str | None = None,
                  baseline: tuple[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The scores.json object of a list of validated instance records (see `score_records_with_instances`)."""
    return score_records_with_instances(records, options, latency_unit=latency_unit, speech=speech, source=source,
                                        baseline=baseline)[0]


def score_records_with_instances(
    records: list[dict[str, Any]],
    options: ScoringOptions | None = None,
    *,
    latency_unit: str,
    speech: bool | None = None,
    source: str | None = None,
    baseline: tuple[str, dict[str, Any]] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(scores.json object, instance_scores rows) of a list of validated instance records (see module docstring).

    The one scoring path: it decides once whether the records are short-form instances or long-form recordings
    (scored on their resegmented sentences, `harness.scoring.longform`); both call the same quality, latency and
    neural steps. `options` says how (default: `ScoringOptions()`);
    `options.metrics` restricts the output to these base names (e.g. `["BLEU", "AL"]`); default: every string,
    latency and diagnostic metric but the optional ones, plus the neural ones (COMET, XCOMET) that
    `options.model_metrics` configures (`options.source_texts`: the source transcript by index, for speech runs).
    Optional metrics (METEOR, AA, CW) are computed when `metrics` or `also` (a track's own list) names them;
    `target_lang` picks METEOR's modules. The rows are one per record in index order: `{"index": i, NAME: value or
    None, ...}` for every latency and neural metric scored.
    """
    if not records:
        raise HarnessError("no instances to score")
    options = options or ScoringOptions()
    if isinstance(records[0].get("longform"), dict):  # the long-form modules load for long-form runs alone
        from harness.scoring.longform import is_longform_log, score_longform

        if is_longform_log(records):
            return score_longform(records, options, latency_unit=latency_unit, source=source)
    records = sorted(records, key=lambda r: r.get("index", 0))
    run = _ShortRun(records, options, latency_unit, _is_speech(records[0], latency_unit) if speech is None else speech)
    out, rows = run.score()
    if baseline is not None:
        add_norm_scores(out, baseline[1], baseline[0])
    out["counts"] = instance_counts(records)
    out["info"] = run.info(source)
    return out, rows


#: every metric a short-form run can be scored on
SHORT_FORM_METRICS = (*QUALITY_METRICS, *ALL_LATENCY_METRICS, *DIAGNOSTIC_METRICS, *MODEL_METRICS)


class _ShortRun:
    """The scoring of one short-form run, its instances as they are: its facts, then the shared quality, latency,
    neural and NE steps (`harness.scoring.steps`) and the short-form diagnostics (degeneracy, AA)."""

    def __init__(self, records: list[dict[str, Any]], options: ScoringOptions, latency_unit: str,
                 speech: bool) -> None:
        self.records, self.options, self.latency_unit, self.speech = records, options, latency_unit, speech
        self.wanted = wanted_metrics(options, SHORT_FORM_METRICS)
        # speech delays are milliseconds of source audio whatever the target token unit (word or char) is
        self.target_unit = "char" if latency_unit == "char" else "word"
        self.delay_unit = "ms" if speech else latency_unit
        self.sets = list(options.reference_sets or reference_sets_of(records[0]))
        self.refs_by_set = references_by_set(records, self.sets)
        self.has_ca = False

    def score(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        import numpy as np

        options, records = self.options, self.records
        quality = start_quality([rec["prediction"] for rec in records], self.refs_by_set, self.wanted,
                                tokenizer=options.tokenizer, target_lang=options.meteor_lang)
        counts = resamples(options, len(records))
        per_instance, names = self._latency_values()
        empty = np.full(len(records), np.nan)
        columns = [per_instance.get(name, empty) for name in names]
        blocks = list(value_blocks(columns)) if columns and counts is not None else []
        by_key, latency_sums = resampled(quality, counts, blocks)
        out, neural_values = quality_and_neural(quality, counts, by_key, [m for m in MODEL_METRICS if m in self.wanted],
                                                records, self.refs_by_set, options, options.source_texts)
        out.update(self._latency_records(names, mean_records(columns, counts, latency_sums)))
        if self.wanted & set(DEGENERACY_METRICS):
            _add_degeneracy(out, records, per_instance, self.target_unit, self.sets[0], self.delay_unit, self.wanted)
        if "AA" in self.wanted:
            aa = _add_anticipation(out, records, counts)
            if aa is not None:
                per_instance["AA"] = aa
                names = [*names, "AA"]
        ne = ne_record(records, self.target_unit)  # stability of re-translation systems
        if ne is not None:
            out["NE"] = ne
        rows = instance_rows(records, {**per_instance, **neural_values}, names + list(neural_values))
        return out, rows

    def _latency_values(self) -> tuple[dict[str, Any], list[str]]:
        """({metric: per-instance values}, the latency names reported) on the first reference set."""
        import numpy as np

        plain = [n for n in LATENCY_METRICS if n in self.wanted]
        per_instance = (corpus_instance_metrics(self.records, self.latency_unit, self.sets[0], self.speech,
                                                self.options.computation_aware)
                        if plain or self.wanted & set(DEGENERACY_METRICS) else {})
        if "CW" in self.wanted:
            per_instance["CW"] = np.array([np.nan if not r.get("delays") or (v := lat.continuous_wait(r["delays"]))
                                           is None else v for r in self.records], dtype=np.float64)
            plain.append("CW")
        self.has_ca = "AL_CA" in per_instance
        ca = [f"{n}_CA" for n in plain if metric_registry.REGISTRY[n].computation_aware] if self.has_ca else []
        return per_instance, plain + ca

    def _latency_records(self, names: list[str], means: list[tuple[float | None, list[float] | None]]
                         ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, (score, ci) in zip(names, means, strict=True):
            out[name] = latency_record(
                name, score, ci, reference_set=self.sets[0], unit=self.delay_unit,
                empty="no instance with a non-empty hypothesis" + (
                    " emitted before the end of the source" if name.removesuffix("_CA") == "YAAL" else ""))
        return out

    def info(self, source: str | None) -> dict[str, Any]:
        out = self._info(source)
        if "METEOR" in self.wanted:  # its stems and synonyms are a language's: say which (None: English modules)
            out["target_lang"] = self.options.target_lang
        return out

    def _info(self, source: str | None) -> dict[str, Any]:
        return run_info(self.options, latency_unit=self.delay_unit, target_unit=self.target_unit,
                        middle={"modality": "speech" if self.speech else "text"}, source=source, sets=self.sets,
                        computation_aware=self.has_ca)


def _add_anticipation(out: dict[str, Any], records: Sequence[dict[str, Any]], counts: Any) -> Any:
    """AA of each output against its source text (text runs); the per-instance values, or None for speech."""
    import numpy as np

    from harness.metrics.anticipation import DEFINITION, EflomalAligner, aligned, average_anticipation

    if not all(isinstance(r.get("source"), str) for r in records):
        return None
    aligner = EflomalAligner()
    links = aligned(aligner, [r["source"] for r in records], [r.get("prediction") or "" for r in records])
    values = np.array([np.nan if not (r.get("prediction") or "").strip() or (v := average_anticipation(x)) is None
                       else v for r, x in zip(records, links, strict=True)], dtype=np.float64)
    (score, ci), = mean_records([values], counts)
    out["AA"] = {"score": score, "ci95": ci, "aligner": aligner.name, **metric_registry.describe_key("AA")}
    out["AA"]["definition"] = DEFINITION
    return values


def _add_degeneracy(out: dict[str, Any], records: Sequence[dict[str, Any]], per_instance: dict[str, Any],
                    target_unit: str, reference_set: str, delay_unit: str, wanted: set[str]) -> None:
    """SWF, EFSW, DSPTV and DegeneratePolicy of a short-form run (non-CA delays, YAAL on the first set)."""
    yaal = per_instance.get("YAAL")
    if yaal is None:  # YAAL not asked for: compute it for the diagnostics alone
        yaal = [lat.yet_another_average_lagging(r["delays"], r["source_length"],
                                                lat.reference_length(reference_sets_of(r)[reference_set], target_unit))
                if r.get("delays") else None for r in records]
    else:
        yaal = [None if v != v else float(v) for v in yaal.tolist()]
    values = degeneracy([r.get("delays") or [] for r in records], [r["source_length"] for r in records], yaal)
    for name, value in values.items():
        if name in wanted:
            out[name] = {"score": value, "ci95": None, "reference_set": reference_set,
                         **metric_registry.describe_key(name, delay_unit)}


def instance_rows(records: Sequence[dict[str, Any]], per_instance: dict[str, Any], names: list[str]
                   ) -> list[dict[str, Any]]:
    """One `{"index", NAME: value or None}` row per record (the instance_scores.jsonl lines)."""
    keys = ["index", *(name for name in names if name in per_instance)]
    keys += [name for name in dict.fromkeys(names) if name not in keys]  # no values: None
    columns = [[rec.get("index") for rec in records]]
    columns += [[None if v != v else v for v in per_instance[name].tolist()]  # NaN: no value
                for name in keys[1:] if name in per_instance]
    nones = (None,) * (len(keys) - len(columns))
    return [dict(zip(keys, values + nones, strict=True)) for values in zip(*columns, strict=True)]


def add_norm_scores(scores: dict[str, Any], baseline_scores: dict[str, Any], baseline_name: str) -> dict[str, Any]:
    """Add `NormBLEU` (and `NormBLEU@SET`): the system's BLEU over the offline baseline's on the same references."""
    for key in list(scores):
        if key == "BLEU" or key.startswith("BLEU@"):
            base = baseline_scores.get(key)
            if isinstance(base, dict) and base.get("score") is not None:
                scores["Norm" + key] = {
                    "score": norm_score(scores[key]["score"], base["score"]),
                    "baseline": baseline_name,
                    "reference_set": scores[key].get("reference_set"),
                    **metric_registry.describe_key("Norm" + key),
                }
    return scores


def score_path(path: str | Path, options: ScoringOptions | None = None, *, latency_unit: str | None = None,
               allow_torn: bool = False) -> dict[str, Any]:
    """Score a run directory or an instances.log (the harness's or SimulEval 1.1.4's); see `score_log`."""
    return score_log(path, options, latency_unit=latency_unit, allow_torn=allow_torn)[0]


def score_log(
    path: str | Path,
    options: ScoringOptions | None = None,
    *,
    latency_unit: str | None = None,
    allow_torn: bool = False,
    baseline: tuple[str, dict[str, Any]] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(scores, instance_scores rows) of a run directory or an instances.log.

    `latency_unit` overrides the log's own; `allow_torn=True` leaves out a torn last line (for scoring partial
    runs) instead of reporting it. A run whose options name no target language takes the one its run recorded.
    """
    from harness.runlog import read_instances

    log = read_instances(path, latency_unit=latency_unit, allow_torn=allow_torn)
    options = options or ScoringOptions()
    if options.target_lang is None:
        options = options.with_recorded_language(recorded_target_lang(log.path, log.records))
    return score_records_with_instances(
        log.records,
        options,
        latency_unit=log.latency_unit,
        speech=log.source_type == "speech",
        source=str(log.path),
        baseline=baseline,
    )


def recorded_target_lang(log_path: Path, records: Sequence[dict[str, Any]]) -> str | None:
    """The target language a run recorded: in its run.json, else in its long-form records; None if neither."""
    from harness import layout
    from harness.runmeta import read_run_meta

    run = layout.RunDir(log_path.parent)
    if run.run_meta.exists():
        lang = read_run_meta(run).get("target_lang")
        if isinstance(lang, str) and lang:
            return lang
    for rec in records:
        info = rec.get("longform")
        if isinstance(info, dict) and isinstance(info.get("target_lang"), str) and info["target_lang"]:
            return str(info["target_lang"])
    return None
