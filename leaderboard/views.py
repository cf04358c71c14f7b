"""Per-page view data arranged from the loaded results (no metric is computed here: see leaderboard.model)."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from harness.units import split_units
from leaderboard.metrics_info import Catalog
from leaderboard.model import META_KEYS, Results, Run, metric_keys
from leaderboard.safe import NAME_MAX, PAGE_TEXT_MAX, cap, csv_text, public_run

REVISIONS_MAX = 1000  # revisions an instance page shows


def _common_prefix(a: list[str], b: list[str]) -> int:
    """How many leading units `a` and `b` share."""
    keep = 0
    while keep < min(len(a), len(b)) and a[keep] == b[keep]:
        keep += 1
    return keep


def _revision_views(revisions: list[Any], tok_unit: str) -> list[dict[str, Any]]:
    """The first `REVISIONS_MAX` revisions, each with the units it keeps, erases and adds against the one before."""
    out = []
    prev: list[str] = []
    for rev in revisions[:REVISIONS_MAX]:
        cur = split_units(str(rev.get("text") or "")[:PAGE_TEXT_MAX], tok_unit)
        keep = _common_prefix(prev, cur)
        out.append({"delay": float(rev.get("delay") or 0.0), "elapsed": rev.get("elapsed"),
                    "text": cap(str(rev.get("text") or ""), PAGE_TEXT_MAX), "length": len(cur),
                    "kept": cur[:keep],
                    "erased_words": prev[keep:], "added": cur[keep:], "erased": len(prev) - keep})
        prev = cur
    return out


def _source(record: dict[str, Any]) -> tuple[list[str], float]:
    """The source's words (a text source; [] for audio) and its length (`source_length`, else its word count, else
    1)."""
    source = record.get("source")
    src_words = source.split() if isinstance(source, str) else []
    return src_words, float(record.get("source_length") or len(src_words) or 1)


def timeline(record: dict[str, Any], latency_unit: str, speech: bool) -> dict[str, Any]:
    """What the instance page's timeline and slider show: target tokens with delays, revisions with the words
    they erase and add. The source axis is in ms of audio for speech, in source words for text.

    A page shows at most `PAGE_TEXT_MAX` characters of any hypothesis and `REVISIONS_MAX` revisions (`cut` says
    what was left out), so a participant's output cannot make a page of unbounded size."""
    tok_unit = "char" if latency_unit == "char" else "word"
    unit = "ms" if speech or latency_unit == "ms" else "word"  # text streams one word per READ
    prediction = str(record.get("prediction") or "")
    target = split_units(prediction[:PAGE_TEXT_MAX], tok_unit)
    delays = [float(d) for d in (record.get("delays") or [])[: len(target)]]
    all_revisions = record.get("revisions") or []
    revisions = _revision_views(all_revisions, tok_unit)
    elapsed = [float(e) for e in (record.get("elapsed") or [])[: len(delays)]]
    src_words, source_length = _source(record)
    return {
        "unit": unit,
        "joiner": "" if tok_unit == "char" else " ",
        "source_length": source_length,
        "slider_max": slider_end(source_length, delays, revisions),
        "source_words": src_words,
        "target_words": target,
        "delays": delays,
        "elapsed": elapsed,
        "elapsed_plot": elapsed if unit == "ms" and len(elapsed) == len(delays) else [],
        "revisions": revisions,
        "prediction": cap(prediction, PAGE_TEXT_MAX),
        "error": cap(str(record.get("error") or ""), NAME_MAX),
        "cut": {"characters": max(0, len(prediction) - PAGE_TEXT_MAX),
                "revisions": max(0, len(all_revisions) - REVISIONS_MAX)},
    }


def slider_end(source_length: float, delays: list[float], revisions: list[dict[str, Any]]) -> int:
    """The slider's last position, in whole source units (its step is 1): the source's end or the last write,
    whichever is later, rounded up, so every word and revision shows at the end of the slider."""
    return math.ceil(max([source_length] + delays + [float(r["delay"]) for r in revisions]))


WINDOW_MS = 120_000  # one page section of a long recording's timeline


#: a resegmented sentence's fields that are not its metrics
SENTENCE_FIELDS = ("offset_ms", "duration_ms", "prediction", "references", "delays")


def _sentence_views(segments: list[Any], scored: list[Any], refs: dict[str, Any], first: str | None,
                    window_ms: float) -> list[dict[str, Any]]:
    """Each reference sentence of a recording (its `segments`: [offset ms, duration ms]) with its span, its
    window, its reference in the set `first`, and its resegmented prediction and metrics (`scored`, in order)."""
    sentences: list[dict[str, Any]] = []
    for n, seg in enumerate(segments):
        start, dur = float(seg[0]), float(seg[1])
        out = scored[n] if n < len(scored) else {}
        metrics = {k: v for k, v in out.items() if k not in SENTENCE_FIELDS}
        sentences.append({"n": n, "start_ms": start, "end_ms": start + dur, "window": int(start // window_ms),
                          "reference": cap(str(refs[first][n]) if first else "", PAGE_TEXT_MAX),
                          "prediction": cap(str(out.get("prediction", "")), PAGE_TEXT_MAX), "metrics": metrics})
    return sentences


def _window_views(length: float, window_ms: float, delays: list[float], words: list[str],
                  sentences: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The recording's timeline cut into windows of `window_ms` (at least one): the words written in each (the
    last also holds those written after the recording's end) and the sentences spoken in it."""
    n_windows = max(1, int(-(-length // window_ms)))
    windows = []
    for k in range(n_windows):
        a, b = k * window_ms, min((k + 1) * window_ms, length)
        windows.append({"n": k, "start_ms": a, "end_ms": b,
                        "points": [(d, i, w) for i, (d, w) in enumerate(zip(delays, words, strict=False))
                                   if a <= d < b or (k == n_windows - 1 and d >= b)],
                        "sentences": [s for s in sentences if s["start_ms"] < b and s["end_ms"] > a]})
    return windows


def recording(record: dict[str, Any], row: dict[str, Any] | None, window_ms: float = WINDOW_MS) -> dict[str, Any]:
    """What a long-form recording's page shows: its resegmented sentences (from the scoring stage's
    instance_scores row) and its timeline cut into windows of `window_ms`, each with the words written in it and
    the sentences spoken in it, so a 20-minute talk stays readable (and each sentence links to its window)."""
    info = record.get("longform") or {}
    segments = info.get("segments") or []
    refs = info.get("sentences") or {}
    first = next(iter(refs), None)
    length = float(record.get("source_length") or 1.0)
    words = split_units(str(record.get("prediction") or ""), "word")
    delays = [float(d) for d in (record.get("delays") or [])]
    sentences = _sentence_views(segments, (row or {}).get("sentences") or [], refs, first, window_ms)
    return {"name": str(info.get("recording") or record.get("index")), "length_ms": length,
            "sentences": sentences, "windows": _window_views(length, window_ms, delays, words, sentences),
            "reference_set": first, "resegmentation": info.get("resegmentation"), "words": len(words),
            "last_sentence_end_ms": max((float(a) + float(b) for a, b in segments), default=0.0)}


def slider_data(view: dict[str, Any]) -> dict[str, Any]:
    """The JSON the slider script reads (no HTML in it: the script sets text only)."""
    return {
        "unit": view["unit"],
        "joiner": view["joiner"],
        "sourceLength": view["source_length"],
        "sliderMax": view["slider_max"],
        "sourceWords": len(view["source_words"]),
        "delays": view["delays"],
        "tokens": view["target_words"][: len(view["delays"])],
        "revisions": [{"t": r["delay"], "text": r["text"]} for r in view["revisions"]],
    }


def public_summary(results: Results) -> dict[str, Any]:
    """summary.json as the site publishes it: participants' strings capped (`leaderboard.safe`)."""
    meta = {k: (cap(v) if isinstance(v, str) else v) for k, v in results.summary.items() if k != "runs"}
    return {**meta, "runs": [public_run(r) for r in results.summary["runs"] if isinstance(r, dict)]}


def track_summary(results: Results, track: str) -> dict[str, Any]:
    """The published summary.json restricted to one track (a board's track)."""
    public = public_summary(results)
    return {**public, "track": track, "runs": [r for r in public["runs"] if r.get("track") == track]}


def track_csv(runs: list[Run]) -> str:
    """One row per run: identity, status and every metric with its interval. Text cells are capped and cannot
    start a spreadsheet formula (`leaderboard.safe.csv_text`); numbers are written as numbers."""
    keys = metric_keys(runs)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    head = ["submission", "team", "system", "track", "dataset", "kind", "baseline", "status", "reason", "models",
            "log", "hardware"]
    for k in keys:
        head += [k, f"{k}_ci95_low", f"{k}_ci95_high"]
    w.writerow(head)
    for r in runs:
        row: list[Any] = [csv_text(x) for x in (r.submission, r.team, r.system, r.track, r.dataset, r.kind)]
        row += [r.baseline, csv_text(r.status), csv_text(r.reason or ""), r.models, r.log, csv_text(r.hardware)]
        for k in keys:
            ci = r.ci(k)
            s = r.score(k)
            row += ["" if s is None else repr(s), "" if ci is None else repr(ci[0]), "" if ci is None else repr(ci[1])]
        w.writerow(row)
    return buf.getvalue()


def score_rows(run: Run, catalog: Catalog) -> list[dict[str, Any]]:
    """All scores of a run, for the submission page, grouped quality / norm / latency / stability / other."""
    order = {"quality": 0, "norm": 1, "latency": 2, "stability": 3, "diagnostic": 4, "other": 5}
    rows = []
    for i, key in enumerate(run.metric_keys):
        rec = run.scores[key]
        info = catalog.describe(key)
        notes = []
        if rec.get("unit"):
            notes.append(f"unit: {rec['unit']}")
        if "computation_aware" in rec:
            notes.append("computation-aware" if rec["computation_aware"] else "not computation-aware")
        if rec.get("baseline"):
            notes.append(f"baseline: {rec['baseline']}")
        if rec.get("note"):
            notes.append(str(rec["note"]))
        rows.append({"key": key, "info": info, "score": run.score(key), "ci": run.ci(key),
                     "reference_set": rec.get("reference_set"), "signature": rec.get("signature"),
                     "notes": "; ".join(notes), "order": (order[info.kind], i)})
    rows.sort(key=lambda r: r["order"])
    return rows


def manifest_items(manifest: dict[str, Any]) -> list[tuple[str, str]]:
    """Top-level manifest entries as (key, compact JSON or text) pairs."""
    out = []
    for k, v in manifest.items():
        out.append((str(k), v if isinstance(v, str) else json.dumps(v, indent=1, ensure_ascii=False, sort_keys=True)))
    return out


def counts(run: Run) -> dict[str, Any]:
    c = run.scores.get("counts")
    return c if isinstance(c, dict) else {}


__all__ = ["META_KEYS", "timeline", "slider_data", "public_summary", "track_summary", "track_csv", "score_rows",
           "manifest_items", "counts"]
