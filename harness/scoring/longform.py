"""Scores of a long-form run: each recording's output stream resegmented onto its reference sentences, then
sentence-level quality and latency.

- Quality (BLEU, chrF, TER) is sacrebleu's on the sentences of the track's resegmentation (`softsegmenter` or
  `mwersegmenter`); each signature ends with `|reseg:METHOD`.
- LongYAAL and the Long* family are always computed on SoftSegmenter's sentences and StreamLAAL on
  mwerSegmenter's, as OmniSTEval and simulstream define them; every latency record names its resegmentation.
- Intervals are bootstrap 95% intervals over sentences (the same resamples for every metric).
- NE (re-translation stability) is computed on the recordings' revisions, as for short-form runs.

Recordings that failed keep what they wrote: their sentences are scored like the others and counted. Once the
sentences are made, the steps are short-form scoring's (`harness.scoring.steps`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from harness import __version__
from harness.errors import HarnessError
from harness.metric_registry import LONGFORM_LATENCY_METRICS, MODEL_METRICS, QUALITY_METRICS
from harness.metrics.longform_latency import SOFT_METRICS, STREAM_METRICS, sentence_values
from harness.metrics.resegment import METHODS, SentenceOutput, resegment
from harness.profiles import DEFAULT_PROFILE, Profile
from harness.recordings import RefSentence
from harness.scoring.means import mean_records
from harness.scoring.neural import longform_source_texts, needs_source
from harness.scoring.options import ScoringOptions
from harness.scoring.quality_step import start_quality
from harness.scoring.references import references_by_set
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
from harness.units import join_units, split_units

__all__ = ["is_longform_log", "recording_sentences", "resegment_run", "score_longform", "sentence_scores"]


def is_timed(record: dict[str, Any]) -> bool:
    """Whether a long-form record has times (long-form text, `timed: false`, has none: quality only)."""
    return record["longform"].get("timed", True) is not False


def is_longform_log(records: Sequence[dict[str, Any]]) -> bool:
    """Whether the records are whole recordings with a reference segmentation (a long-form run)."""
    return bool(records) and all(isinstance(r.get("longform"), dict) for r in records)


def recording_sentences(record: dict[str, Any]) -> list[RefSentence]:
    """The reference sentences a long-form record carries (`longform.segments` and `.sentences`)."""
    info = record["longform"]
    segments = info.get("segments") or []
    sets = info.get("sentences") or {}
    transcripts = info.get("transcripts")
    where = f"instance {record.get('index')}"
    for name, lines in sets.items():
        if len(lines) != len(segments):
            raise HarnessError(f"{where}: reference set {name!r} has {len(lines)} sentences for {len(segments)} "
                               "segments")
    name = str(info.get("recording") or record.get("index"))
    return [RefSentence(name, float(off), float(dur), {k: v[i] for k, v in sets.items()},
                        transcripts[i] if transcripts else None)
            for i, (off, dur) in enumerate(segments)]


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "absent"


def softsegmenter_tokens(lang: str | None, unit: str) -> str:
    """How SoftSegmenter splits the words it aligns: `chars`, `moses:LANG` (OmniSTEval's `--lang`) or `words`."""
    if unit == "char":
        return "chars"
    return f"moses:{lang}" if lang and lang not in ("zh", "ja") else "words"  # zh, ja: no Moses (OmniSTEval's)


def segmenter_label(method: str, lang: str | None, unit: str, profile: Profile | None = None) -> str:
    """The resegmentation as signatures record it: `softsegmenter+moses:es`, `mwersegmenter+words`, ...; under a
    profile that runs the original binary, `mwersegmenter-binary+case+chars` (its case rule and CJK tokens)."""
    if method == "mwersegmenter" and profile is not None and profile.stream_segmenter == "mwerbinary":
        tokens = ("chars" if profile.cjk_tokens == "chars" else "text") if unit == "char" else "words"
        return f"mwersegmenter-binary+{'case' if profile.case_sensitive else 'nocase'}+{tokens}"
    tokens = softsegmenter_tokens(lang, unit) if method == "softsegmenter" else ("chars" if unit == "char" else "words")
    return f"{method}+{tokens}"


def recording_end_ms(record: dict[str, Any], end: str) -> float | None:
    """Where the recording ends for LongYAAL: None (its last reference sentence, OmniSTEval's cut) or, for
    `end="audio"`, the end of its audio (`source_length`)."""
    if end != "audio":
        return None
    length = record.get("source_length")
    return float(length) if isinstance(length, (int, float)) and not isinstance(length, bool) else None


def resegment_run(records: Sequence[dict[str, Any]], method: str, reference_set: str, unit: str,
                  lang: str | None = None, end: str = "reference", profile: Profile | None = None
                  ) -> list[list[SentenceOutput]]:
    """Per recording (in the order given), its sentences' outputs by `method` against `reference_set`; `lang`
    splits words for SoftSegmenter as OmniSTEval's `--lang` does; `end` says where each recording ends; a `profile`
    whose stream segmenter is the original binary cuts `mwersegmenter` pieces as the 2025 tool does."""
    if method == "mwersegmenter" and profile is not None and profile.stream_segmenter == "mwerbinary":
        return _resegment_fbk(records, reference_set, unit, profile)
    out = []
    for rec in records:
        units = split_units(rec.get("prediction") or "", unit)
        delays = rec.get("delays") or []
        elapsed = rec.get("elapsed")
        if elapsed is not None and len(elapsed) != len(delays):
            elapsed = None
        if len(units) != len(delays):
            raise HarnessError(f"instance {rec.get('index')}: {len(units)} output units but {len(delays)} delays")
        out.append(resegment(recording_sentences(rec), units, delays, elapsed, reference_set=reference_set,
                             method=method, char_level=unit == "char", lang=None if unit == "char" else lang,
                             recording_end=recording_end_ms(rec, end)))
    return out


def _resegment_fbk(records: Sequence[dict[str, Any]], reference_set: str, unit: str, profile: Profile
                   ) -> list[list[SentenceOutput]]:
    """The 2025 tool's pieces and times (`harness.metrics.stream_laal_fbk`); a SimulEval log's cumulative elapsed
    times are read as the profile says."""
    from harness.metrics.stream_laal_fbk import FbkRecording, resegment_fbk

    recordings = []
    for rec in records:
        elapsed = rec.get("elapsed")
        recordings.append(FbkRecording(
            sentences=recording_sentences(rec), prediction=rec.get("prediction") or "",
            delays=rec.get("delays") or [], elapsed=elapsed if elapsed else None,
            cumulative_elapsed=rec.get("elapsed_kind") == "simuleval" and profile.simuleval_ca == "stream_laal"))
    try:
        return resegment_fbk(recordings, reference_set, unit=unit, char_split=unit == "char" and
                             profile.cjk_tokens == "chars", cap=profile.delay_cap,
                             case_sensitive=profile.case_sensitive)
    except ValueError as exc:
        raise HarnessError(str(exc)) from None


def _sentence_records(per_recording: list[list[SentenceOutput]], unit: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for outs in per_recording:
        for o in outs:
            rows.append({"index": len(rows), "prediction": join_units(o.units, unit), "delays": o.delays,
                         "elapsed": o.elapsed, "source_length": o.source_length,
                         "references": dict(o.sentence.references), "status": "ok", "latency_unit": "ms"})
    return rows


def _resegmented(records: Sequence[dict[str, Any]], method: str, wanted: set[str], reference_set: str, unit: str,
                 lang: str | None, end: str, profile: Profile
                 ) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, float | None]]],
                            dict[str, list[list[SentenceOutput]]], str]:
    """(sentence records, per-sentence metric values by resegmentation, outputs by resegmentation, the method the
    sentence records come from: `method`, unless no quality metric is wanted and another one was computed)."""
    needed = {method} if wanted & set(QUALITY_METRICS) else set()
    if wanted & set(SOFT_METRICS):
        needed.add("softsegmenter")
    if wanted & set(STREAM_METRICS):
        needed.add("mwersegmenter")
    by_method = {m: resegment_run(records, m, reference_set, unit, lang, end, profile)
                 for m in sorted(needed or {method})}
    if method not in by_method:  # no quality metric asked for: the sentences shown come from the one computed
        method = next(iter(by_method))
    per_sentence: dict[str, list[dict[str, float | None]]] = {}
    for m, fam in (("softsegmenter", SOFT_METRICS), ("mwersegmenter", STREAM_METRICS)):
        if m in by_method and wanted & set(fam):
            per_sentence[m] = [v for outs in by_method[m]
                               for v in sentence_values(outs, reference_set, method=m, char_level=unit == "char",
                                                        target_length=profile.stream_target_length)]
    return _sentence_records(by_method[method], unit), per_sentence, by_method, method


@dataclass(frozen=True)
class _Plan:
    """What one long-form scoring resegments with: the method for quality, the unit, SoftSegmenter's language and
    where recordings end."""

    method: str
    unit: str
    lang: str | None
    end: str
    profile: Profile

    @property
    def label(self) -> str:
        return segmenter_label(self.method, self.lang, self.unit, self.profile)


def _plan(records: Sequence[dict[str, Any]], options: ScoringOptions, latency_unit: str) -> _Plan:
    profile = options.campaign
    method = (options.resegmentation or records[0]["longform"].get("resegmentation")
              or profile.quality_resegmentation or "softsegmenter")
    if method not in METHODS:
        raise HarnessError(f"unknown resegmentation {method!r} (choose from {', '.join(METHODS)})")
    unit = options.target_unit or ("char" if latency_unit == "char" or options.char_level_target else "word")
    return _Plan(method, unit, None if unit == "char" else options.language, options.longform_end, profile)


def sentence_scores(records: list[dict[str, Any]], options: ScoringOptions, *, latency_unit: str
                    ) -> tuple[list[dict[str, Any]], dict[str, list[float | None]], list[dict[str, Any]]]:
    """For the results stage: (sentence records of the track's resegmentation, per-sentence values of every
    long-form latency metric, the per-recording instance_scores rows)."""
    records = sorted(records, key=lambda r: r.get("index", 0))
    plan = _plan(records, options, latency_unit)
    first = next(iter(records[0]["longform"].get("sentences") or {"orig": None}))
    wanted = set(LONGFORM_LATENCY_METRICS) | set(QUALITY_METRICS)
    sentence_recs, per_sentence, by_method, method = _resegmented(records, plan.method, wanted, first, plan.unit,
                                                                  plan.lang, plan.end, plan.profile)
    values: dict[str, list[float | None]] = {}
    for rows in per_sentence.values():
        for name in (rows[0] if rows else {}):
            values[name] = [r.get(name) for r in rows]
    return sentence_recs, values, _rows(records, by_method[method], per_sentence, plan.unit)


#: every metric a long-form run can be scored on
LONG_FORM_METRICS = (*QUALITY_METRICS, *LONGFORM_LATENCY_METRICS, *MODEL_METRICS)


def _wanted(options: ScoringOptions) -> set[str]:
    return wanted_metrics(options, LONG_FORM_METRICS, defaults=options.campaign.metrics, run=" for a long-form run")


def _quality(sentence_recs: list[dict[str, Any]], outputs: list[list[SentenceOutput]], wanted: set[str],
             sets: list[str], options: ScoringOptions, plan: _Plan) -> dict[str, Any]:
    """String and neural quality on the resegmented sentences (the shared steps), each signature naming the
    resegmentation."""
    quality = {m for m in QUALITY_METRICS if m in wanted}
    neural = [m for m in MODEL_METRICS if m in wanted]
    if not quality and not neural:
        return {}
    refs_by_set = references_by_set(sentence_recs, sets)
    step = start_quality([r["prediction"] for r in sentence_recs], refs_by_set, quality, tokenizer=options.tokenizer,
                         target_lang=options.meteor_lang)
    counts = resamples(options, len(sentence_recs))
    by_key, _ = resampled(step, counts)
    sources = longform_source_texts([o.sentence for outs in outputs for o in outs]) if needs_source(neural) else None
    out, _ = quality_and_neural(step, counts, by_key, neural, sentence_recs, refs_by_set, options, sources)
    for rec in out.values():
        if rec.get("signature"):
            rec["signature"] += f"|reseg:{plan.label}" + profile_tag(plan.profile)
        rec["resegmentation"] = plan.method
    return out


def profile_tag(profile: Profile) -> str:
    """The signature field that names a profile other than the default (the default's signatures are as before)."""
    return "" if profile.name == DEFAULT_PROFILE else f"|profile:{profile.name}"


def _latency_names(per_sentence: dict[str, list[dict[str, float | None]]], wanted: set[str],
                   computation_aware: bool) -> list[tuple[str, str]]:
    """(resegmentation, metric) of every long-form latency value reported: each family on its own resegmenter's
    sentences, `_CA` twins where elapsed times exist."""
    names: list[tuple[str, str]] = []
    for m, fam in (("softsegmenter", SOFT_METRICS), ("mwersegmenter", STREAM_METRICS)):
        if m not in per_sentence:
            continue
        plain = [n for n in LONGFORM_LATENCY_METRICS if n in fam and n in wanted]
        has_ca = computation_aware and any(f"{n}_CA" in row for row in per_sentence[m] for n in plain)
        names += [(m, n) for n in plain] + ([(m, f"{n}_CA") for n in plain] if has_ca else [])
    return names


def _latency(per_sentence: dict[str, list[dict[str, float | None]]], wanted: set[str], first: str,
             options: ScoringOptions, plan: _Plan) -> dict[str, Any]:
    """The Long* family and StreamLAAL (with `_CA` twins): means over sentences with bootstrap intervals."""
    import numpy as np

    n_sent = len(next(iter(per_sentence.values()))) if per_sentence else 0
    counts = resamples(options, n_sent) if n_sent else None
    names = _latency_names(per_sentence, wanted, options.computation_aware)
    columns = [np.array([np.nan if row.get(n) is None else row[n] for row in per_sentence[m]], dtype=np.float64)
               for m, n in names]
    out: dict[str, Any] = {}
    for (m, name), (score, ci) in zip(names, mean_records(columns, counts), strict=True):
        after = ({"recording_end": plan.end} if m == "softsegmenter"
                 else {"profile": plan.profile.name} if plan.profile.name != DEFAULT_PROFILE else {})
        out[name] = latency_record(
            name, score, ci, reference_set=first, unit="ms", empty="no sentence received output", after=after,
            segmenter={"resegmentation": m, "segmenter": segmenter_label(m, plan.lang, plan.unit, plan.profile)})
    return out


def trailing_units(record: dict[str, Any]) -> int:
    """Units written at or after the end of the recording's last reference sentence: OmniSTEval's LongYAAL leaves
    them out (its recording ends there), whatever the audio after that sentence holds."""
    if not is_timed(record):
        return 0
    segments = record["longform"].get("segments") or []
    end = max((float(off) + float(dur) for off, dur in segments), default=0.0)
    return sum(1 for d in record.get("delays") or [] if d >= end)


def score_longform(records: list[dict[str, Any]], options: ScoringOptions, *, latency_unit: str,
                   source: str | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(scores.json object, per-recording rows with their sentences) of a long-form run's records."""
    records = sorted(records, key=lambda r: r.get("index", 0))
    plan = _plan(records, options, latency_unit)
    wanted = _wanted(options)
    if not all(is_timed(r) for r in records):  # long-form text: no times, no latency
        wanted &= set(QUALITY_METRICS) | set(MODEL_METRICS)
    sets = list(options.reference_sets or records[0]["longform"].get("sentences") or {"orig": None})
    first = sets[0]
    sentence_recs, per_sentence, by_method, method = _resegmented(records, plan.method, wanted, first, plan.unit,
                                                                  plan.lang, plan.end, plan.profile)
    plan = _Plan(method, plan.unit, plan.lang, plan.end, plan.profile)
    out = _quality(sentence_recs, by_method[method], wanted, sets, options, plan)
    latency = _latency(per_sentence, wanted, first, options, plan)
    out.update(latency)
    ne = ne_record(records, plan.unit)
    if ne is not None:
        out["NE"] = ne
    trailing = [trailing_units(r) for r in records]
    out["counts"] = {
        **instance_counts(records),
        "sentences": len(sentence_recs),
        "empty_sentences": sum(1 for r in sentence_recs if not r["delays"]),
        "trailing_units": sum(trailing),
        "recordings_with_trailing_units": sum(1 for n in trailing if n),
    }
    out["info"] = _info(options, plan, sets, source, latency)
    return out, _rows(records, by_method[method], per_sentence, plan.unit)


def _info(options: ScoringOptions, plan: _Plan, sets: list[str], source: str | None,
          latency: dict[str, Any]) -> dict[str, Any]:
    return run_info(options, latency_unit="ms", target_unit=plan.unit, middle={
        "target_lang": options.target_lang,
        "modality": "speech",
        "segmentation": "longform",
        "resegmentation": plan.method,
        "softsegmenter_tokens": softsegmenter_tokens(plan.lang, plan.unit),
        "recording_end": plan.end,
        "resegmenters": {"softsegmenter": f"harness {__version__} (OmniSTEval 0.1.10 algorithm)",
                         "mwersegmenter": _mwer_label(plan.profile)},
        "profile": plan.profile.name,
        "profile_choices": plan.profile.describe(),
    }, source=source, sets=sets, computation_aware=any(n.endswith("_CA") for n in latency))


def _mwer_label(profile: Profile) -> str:
    if profile.stream_segmenter == "mwerbinary":
        return f"original mwerSegmenter binary (SLTev {_version('SLTev')}), as FBK stream_laal.py"
    return f"mweralign {_version('mweralign')}"


def _rows(records: Sequence[dict[str, Any]], outputs: list[list[SentenceOutput]],
          per_sentence: dict[str, list[dict[str, float | None]]], unit: str) -> list[dict[str, Any]]:
    """instance_scores.jsonl: one row per recording, with its sentences (text, times and metrics)."""
    rows, k = [], 0
    for rec, outs in zip(records, outputs, strict=True):
        sentences = []
        for o in outs:
            s: dict[str, Any] = {"offset_ms": o.sentence.offset_ms, "duration_ms": o.sentence.duration_ms,
                                 "prediction": join_units(o.units, unit), "references": o.sentence.references,
                                 "delays": o.delays}
            for values in per_sentence.values():
                s.update(values[k])
            sentences.append(s)
            k += 1
        row: dict[str, Any] = {"index": rec.get("index"), "sentences": sentences, "trailing_units": trailing_units(rec)}
        for values in per_sentence.values():
            mine = values[k - len(outs):k]
            for name in (mine[0] if mine else {}):
                vals = [float(x) for v in mine if (x := v.get(name)) is not None]
                row[name] = sum(vals) / len(vals) if vals else None
        rows.append(row)
    return rows
