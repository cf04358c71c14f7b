"""`harness score RUN_DIR_OR_LOG [--format json]`: score an instances.log; write scores.json and
instance_scores.jsonl beside it."""

from __future__ import annotations

import argparse
import json
from typing import Any

HELP = "score an instances.log (the harness's or SimulEval's) and write scores.json beside it"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `harness score`."""
    parser.add_argument("path", metavar="RUN_DIR_OR_LOG", help="a run directory or an instances.log")
    parser.add_argument("--format", choices=("table", "json"), default="table", help="output format (table)")
    parser.add_argument(
        "--latency-unit",
        choices=("word", "char", "ms"),
        default=None,
        help="override the log's latency unit (SimulEval logs: word for text, ms for speech; char for zh/ja)",
    )
    parser.add_argument("--tokenizer", default="13a", help="sacrebleu tokenizer for BLEU (13a; zh, char, ja-mecab)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for 95%% intervals (1000)")
    parser.add_argument("--seed", type=int, default=12345, help="seed of the bootstrap resampling (12345)")
    parser.add_argument("--no-computation-aware", action="store_true", help="leave out the NAME_CA metrics")
    parser.add_argument("--metrics", nargs="+", default=None, metavar="NAME", help="only these metrics (default: all)")
    parser.add_argument("--no-write", action="store_true", help="do not write scores.json and instance_scores.jsonl")


def _fmt(x: Any) -> str:
    return "-" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def render_table(scores: dict[str, Any]) -> str:
    """A readable table of a scores object: metric, score, 95% interval, unit or reference set."""
    rows = [("metric", "score", "95% CI", "unit / reference set")]
    for name, rec in scores.items():
        if name in ("counts", "info") or not isinstance(rec, dict):
            continue
        ci = rec.get("ci95")
        ci_s = f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "-"
        extra = rec.get("unit") or ""
        if rec.get("reference_set"):
            extra = f"{extra} / {rec['reference_set']}" if extra else rec["reference_set"]
        rows.append((name, _fmt(rec.get("score")), ci_s, extra))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    c = scores.get("counts", {})
    lines.append(
        f"instances: {c.get('instances')}  empty: {c.get('empty_instances')}  failed: {c.get('failed_instances')}"
    )
    for name, rec in scores.items():
        if isinstance(rec, dict) and rec.get("signature"):
            lines.append(f"{name}: {rec['signature']}")
            break
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Score, write scores.json and instance_scores.jsonl unless --no-write, print a table or the JSON object."""
    from harness.scoring import score_log, write_instance_scores, write_scores

    scores, rows = score_log(
        args.path,
        latency_unit=args.latency_unit,
        tokenizer=args.tokenizer,
        bootstrap=args.bootstrap,
        seed=args.seed,
        computation_aware=not args.no_computation_aware,
        metrics=args.metrics,
    )
    target = None
    if not args.no_write:
        target = write_scores(args.path, scores)
        write_instance_scores(target.parent, rows)
    if args.format == "json":
        print(json.dumps(scores, indent=1, ensure_ascii=False))
    else:
        print(render_table(scores))
        if target is not None:
            print(f"wrote {target}")
    return 0
