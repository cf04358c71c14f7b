"""Per-page view data computed from the loaded results, using the harness's own metric functions."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from harness.errors import HarnessError
from leaderboard.metrics_info import describe
from leaderboard.model import META_KEYS, Board, Results, Run


def significance(board: Board, bootstrap: int = 1000) -> dict[str, dict[str, Any]]:
    """Paired bootstrap (harness.metrics.significance) of every scored run against the board's best, on the
    primary quality and latency metrics, over the instances both decoded. {submission slug: {metric: result}}."""
    from harness.metrics.significance import paired_bootstrap

    best = board.best
    if best is None or best.run_dir is None:
        return {}
    best_recs = {r["index"]: r for r in best.instances() if isinstance(r.get("index"), int)}
    tokenizer = board.config.tokenizer if board.config else "13a"
    out: dict[str, dict[str, Any]] = {}
    for run in board.scored:
        if run is best:
            continue
        recs = {r["index"]: r for r in run.instances() if isinstance(r.get("index"), int)}
        common = sorted(set(recs) & set(best_recs))
        results: dict[str, Any] = {}
        for metric in (board.primary_quality, board.primary_latency):
            try:
                res = paired_bootstrap([best_recs[i] for i in common], [recs[i] for i in common], metric,
                                       bootstrap=bootstrap, tokenizer=tokenizer,
                                       latency_unit=board.latency_unit or "word")
            except HarnessError as exc:
                results[metric] = {"error": str(exc)}
                continue
            res["instances"] = len(common)
            res["all_instances"] = len(common) == len(best_recs) == len(recs)
            results[metric] = res
        out[run.slug] = results
    return out


def timeline(record: dict[str, Any], latency_unit: str, speech: bool) -> dict[str, Any]:
    """What the instance page's timeline and slider show: target tokens with delays, revisions with the words
    they erase and add. The source axis is in ms of audio for speech, in source words for text."""
    from harness.metrics.stability import tokens

    tok_unit = "char" if latency_unit == "char" else "word"
    unit = "ms" if speech or latency_unit == "ms" else "word"  # text streams one word per READ
    target = tokens(str(record.get("prediction") or ""), tok_unit)
    delays = [float(d) for d in record.get("delays") or []]
    revisions = []
    prev: list[str] = []
    for rev in record.get("revisions") or []:
        cur = tokens(str(rev.get("text") or ""), tok_unit)
        keep = 0
        while keep < min(len(prev), len(cur)) and prev[keep] == cur[keep]:
            keep += 1
        revisions.append({"delay": float(rev.get("delay") or 0.0), "elapsed": rev.get("elapsed"),
                          "text": str(rev.get("text") or ""), "length": len(cur), "kept": cur[:keep],
                          "erased_words": prev[keep:], "added": cur[keep:], "erased": len(prev) - keep})
        prev = cur
    elapsed = [float(e) for e in record.get("elapsed") or []]
    source = record.get("source")
    src_words = source.split() if isinstance(source, str) else []
    return {
        "unit": unit,
        "joiner": "" if tok_unit == "char" else " ",
        "source_length": float(record.get("source_length") or len(src_words) or 1),
        "source_words": src_words,
        "target_words": target,
        "delays": delays,
        "elapsed": elapsed,
        "elapsed_plot": elapsed if unit == "ms" and len(elapsed) == len(delays) else [],
        "revisions": revisions,
    }


def slider_data(view: dict[str, Any]) -> dict[str, Any]:
    """The JSON the slider script reads (no HTML in it: the script sets text only)."""
    return {
        "unit": view["unit"],
        "joiner": view["joiner"],
        "sourceLength": view["source_length"],
        "sourceWords": len(view["source_words"]),
        "delays": view["delays"],
        "tokens": view["target_words"][: len(view["delays"])],
        "revisions": [{"t": r["delay"], "text": r["text"]} for r in view["revisions"]],
    }


def board_metric_keys(runs: list[Run]) -> list[str]:
    """Every metric key present in `runs`, in first-seen order."""
    keys: list[str] = []
    for r in runs:
        for k in r.metric_keys:
            if k not in keys:
                keys.append(k)
    return keys


def track_summary(results: Results, track: str) -> dict[str, Any]:
    """summary.json restricted to one track."""
    meta = {k: v for k, v in results.summary.items() if k != "runs"}
    runs = [r for r in results.summary["runs"] if isinstance(r, dict) and r.get("track") == track]
    return {**meta, "track": track, "runs": runs}


def track_csv(runs: list[Run]) -> str:
    """One row per run: identity, status and every metric with its interval."""
    keys = board_metric_keys(runs)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    head = ["submission", "team", "system", "track", "dataset", "kind", "baseline", "status", "reason"]
    for k in keys:
        head += [k, f"{k}_ci95_low", f"{k}_ci95_high"]
    w.writerow(head)
    for r in runs:
        row: list[Any] = [r.submission, r.team, r.system, r.track, r.dataset, r.kind, r.baseline, r.status,
                          r.reason or ""]
        for k in keys:
            ci = r.ci(k)
            s = r.score(k)
            row += ["" if s is None else repr(s), "" if ci is None else repr(ci[0]), "" if ci is None else repr(ci[1])]
        w.writerow(row)
    return buf.getvalue()


def score_rows(run: Run) -> list[dict[str, Any]]:
    """All scores of a run, for the submission page, grouped quality / norm / latency / stability / other."""
    order = {"quality": 0, "norm": 1, "latency": 2, "stability": 3, "other": 4}
    rows = []
    for i, key in enumerate(run.metric_keys):
        rec = run.scores[key]
        info = describe(key)
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


__all__ = ["META_KEYS", "significance", "timeline", "slider_data", "track_summary", "track_csv", "score_rows",
           "manifest_items", "counts", "board_metric_keys"]
