"""Scores of a long-form run: each recording's output stream resegmented onto its reference sentences, then
sentence-level quality and latency.

- Quality (BLEU, chrF, TER) is sacrebleu's on the sentences of the track's resegmentation (`softsegmenter` or
  `mwersegmenter`); each signature ends with `|reseg:METHOD`.
- LongYAAL and the Long* family are always computed on SoftSegmenter's sentences and StreamLAAL on
  mwerSegmenter's, as OmniSTEval and simulstream define them; every latency record names its resegmentation.
- Intervals are bootstrap 95% intervals over sentences (the same resamples for every metric).
- NE (re-translation stability) is computed on the recordings' revisions, as for short-form runs.

Recordings that failed keep what they wrote: their sentences are scored like the others and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import metadata
from typing import Any

from harness import __version__, metric_registry
from harness.errors import HarnessError
from harness.longform.latency import SOFT_METRICS, STREAM_METRICS, sentence_values
from harness.longform.model import RefSentence
from harness.longform.resegment import METHODS, SentenceOutput, resegment
from harness.metric_registry import LONGFORM_LATENCY_METRICS, MODEL_METRICS, OPTIONAL_METRICS, QUALITY_METRICS
from harness.units import join_units, split_units

__all__ = ["is_longform_log", "recording_sentences", "resegment_run", "score_longform", "sentence_scores"]


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


def resegment_run(records: Sequence[dict[str, Any]], method: str, reference_set: str, unit: str
                  ) -> list[list[SentenceOutput]]:
    """Per recording (in the order given), its sentences' outputs by `method` against `reference_set`."""
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
                             method=method, char_level=unit == "char"))
    return out


def _sentence_records(per_recording: list[list[SentenceOutput]], unit: str) -> list[dict[str, Any]]:
    rows = []
    for outs in per_recording:
        for o in outs:
            rows.append({"index": len(rows), "prediction": join_units(o.units, unit), "delays": o.delays,
                         "elapsed": o.elapsed, "source_length": o.source_length,
                         "references": dict(o.sentence.references), "status": "ok", "latency_unit": "ms"})
    return rows


def _resegmented(records: Sequence[dict[str, Any]], method: str, wanted: set[str], reference_set: str, unit: str
                 ) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, float | None]]],
                            dict[str, list[list[SentenceOutput]]], str]:
    """(sentence records, per-sentence metric values by resegmentation, outputs by resegmentation, the method the
    sentence records come from: `method`, unless no quality metric is wanted and another one was computed)."""
    needed = {method} if wanted & set(QUALITY_METRICS) else set()
    if wanted & set(SOFT_METRICS):
        needed.add("softsegmenter")
    if wanted & set(STREAM_METRICS):
        needed.add("mwersegmenter")
    by_method = {m: resegment_run(records, m, reference_set, unit) for m in sorted(needed or {method})}
    if method not in by_method:  # no quality metric asked for: the sentences shown come from the one computed
        method = next(iter(by_method))
    per_sentence: dict[str, list[dict[str, float | None]]] = {}
    for m, fam in (("softsegmenter", SOFT_METRICS), ("mwersegmenter", STREAM_METRICS)):
        if m in by_method and wanted & set(fam):
            per_sentence[m] = [v for outs in by_method[m]
                               for v in sentence_values(outs, reference_set, method=m, char_level=unit == "char")]
    return _sentence_records(by_method[method], unit), per_sentence, by_method, method


def sentence_scores(records: list[dict[str, Any]], *, latency_unit: str, resegmentation: str | None = None
                    ) -> tuple[list[dict[str, Any]], dict[str, list[float | None]], list[dict[str, Any]]]:
    """For the results stage: (sentence records of the track's resegmentation, per-sentence values of every
    long-form latency metric, the per-recording instance_scores rows)."""
    records = sorted(records, key=lambda r: r.get("index", 0))
    method = resegmentation or records[0]["longform"].get("resegmentation") or "softsegmenter"
    unit = "char" if latency_unit == "char" else "word"
    first = next(iter(records[0]["longform"].get("sentences") or {"orig": None}))
    wanted = set(LONGFORM_LATENCY_METRICS) | set(QUALITY_METRICS)
    sentence_recs, per_sentence, by_method, method = _resegmented(records, method, wanted, first, unit)
    values: dict[str, list[float | None]] = {}
    for rows in per_sentence.values():
        for name in (rows[0] if rows else {}):
            values[name] = [r.get(name) for r in rows]
    return sentence_recs, values, _rows(records, by_method[method], per_sentence, unit)


def score_longform(
    records: list[dict[str, Any]],
    *,
    latency_unit: str,
    tokenizer: str = "13a",
    computation_aware: bool = True,
    reference_sets: list[str] | None = None,
    bootstrap: int = 1000,
    seed: int = 12345,
    source: str | None = None,
    metrics: Sequence[str] | None = None,
    resegmentation: str | None = None,
    also: Sequence[str] = (),
    target_lang: str = "en",
    model_metrics: dict[str, Any] | None = None,
    **_: Any,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(scores.json object, per-recording rows with their sentences) of a long-form run's records."""
    import numpy as np

    from harness.metrics.quality import resample_counts
    from harness.metrics.stability import corpus_normalized_erasure
    from harness.scoring.corpus import mean_records, score_records_with_instances

    records = sorted(records, key=lambda r: r.get("index", 0))
    method = resegmentation or records[0]["longform"].get("resegmentation") or "softsegmenter"
    if method not in METHODS:
        raise HarnessError(f"unknown resegmentation {method!r} (choose from {', '.join(METHODS)})")
    unit = "char" if latency_unit == "char" else "word"
    model_metrics = model_metrics or {}
    known = set(QUALITY_METRICS) | set(LONGFORM_LATENCY_METRICS) | set(MODEL_METRICS)
    wanted = (set(metrics) if metrics is not None
              else (known - set(OPTIONAL_METRICS) - set(MODEL_METRICS)) | set(also) | set(model_metrics))
    if wanted - known:
        raise HarnessError(f"unknown metric(s) for a long-form run: {', '.join(sorted(wanted - known))}")
    sets = list(reference_sets or records[0]["longform"].get("sentences") or {"orig": None})
    first = sets[0]

    sentence_recs, per_sentence, by_method, method = _resegmented(records, method, wanted, first, unit)
    out: dict[str, Any] = {}
    quality = [m for m in QUALITY_METRICS if m in wanted]
    neural = [m for m in MODEL_METRICS if m in wanted]
    if quality or neural:
        from harness.scoring.neural import longform_source_texts

        sources = longform_source_texts([o.sentence for outs in by_method[method] for o in outs]) if neural else None
        q, _ = score_records_with_instances(sentence_recs, latency_unit="ms", tokenizer=tokenizer,
                                            reference_sets=sets, bootstrap=bootstrap, seed=seed, speech=True,
                                            metrics=quality + neural, target_lang=target_lang,
                                            model_metrics=model_metrics, source_texts=sources)
        for key, rec in q.items():
            if key not in ("counts", "info"):
                if rec.get("signature"):
                    rec["signature"] += f"|reseg:{method}"
                rec["resegmentation"] = method
                out[key] = rec

    n_sent = len(sentence_recs)
    counts = resample_counts(n_sent, bootstrap, seed) if bootstrap > 1 else None
    names: list[tuple[str, str]] = []
    for m, fam in (("softsegmenter", SOFT_METRICS), ("mwersegmenter", STREAM_METRICS)):
        if m not in per_sentence:
            continue
        plain = [n for n in LONGFORM_LATENCY_METRICS if n in fam and n in wanted]
        has_ca = computation_aware and any(f"{n}_CA" in row for row in per_sentence[m] for n in plain)
        names += [(m, n) for n in plain] + ([(m, f"{n}_CA") for n in plain] if has_ca else [])
    columns = [np.array([np.nan if row.get(n) is None else row[n] for row in per_sentence[m]], dtype=np.float64)
               for m, n in names]
    for (m, name), (score, ci) in zip(names, mean_records(columns, counts), strict=True):
        entry: dict[str, Any] = {"score": score, "ci95": ci, "reference_set": first,
                                 "computation_aware": name.endswith("_CA"), "resegmentation": m,
                                 **metric_registry.describe_key(name, "ms")}
        if score is None:
            entry["note"] = "no sentence received output"
        out[name] = entry

    revised = [r["revisions"] for r in records if r.get("revisions")]
    if revised:
        out["NE"] = {"score": corpus_normalized_erasure(([rv["text"] for rv in revs] for revs in revised), unit),
                     "instances": len(revised), **metric_registry.describe_key("NE")}
    out["counts"] = {
        "instances": len(records),
        "empty_instances": sum(1 for r in records if not r.get("delays")),
        "failed_instances": sum(1 for r in records if r.get("status", "ok") != "ok"),
        "sentences": n_sent,
        "empty_sentences": sum(1 for r in sentence_recs if not r["delays"]),
    }
    out["info"] = {
        "harness_version": __version__,
        "latency_unit": "ms",
        "target_unit": unit,
        "modality": "speech",
        "segmentation": "longform",
        "resegmentation": method,
        "resegmenters": {"softsegmenter": f"harness {__version__} (OmniSTEval 0.1.10 algorithm)",
                         "mwersegmenter": f"mweralign {_version('mweralign')}"},
        "source": source,
        "reference_sets": sets,
        "tokenizer": tokenizer,
        "bootstrap": bootstrap,
        "seed": seed,
        "computation_aware": any(n.endswith("_CA") for _, n in names),
    }
    return out, _rows(records, by_method[method], per_sentence, unit)


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
        row: dict[str, Any] = {"index": rec.get("index"), "sentences": sentences}
        for values in per_sentence.values():
            mine = values[k - len(outs):k]
            for name in (mine[0] if mine else {}):
                vals = [v[name] for v in mine if v.get(name) is not None]
                row[name] = sum(vals) / len(vals) if vals else None
        rows.append(row)
    return rows
