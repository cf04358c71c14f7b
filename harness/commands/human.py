"""`harness human sample|import`: blind rating sheets out, human ratings in (SiMuST-C §3)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

HELP = "human judgments: sample a blind rating sheet from RESULTS, import ratings and summarize them"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    sample = sub.add_parser("sample", help="write a blind rating sheet (systems hidden, items shuffled)")
    sample.add_argument("results", type=Path, metavar="RESULTS")
    sample.add_argument("--per-system", type=int, default=200, help="sentences per system and board (200)")
    sample.add_argument("--seed", type=int, default=12345, help="seed of the sampling and shuffling (12345)")
    sample.add_argument("--output", type=Path, required=True, help="the sheet (CSV: item, source, hypothesis, score)")
    sample.add_argument("--primary-only", action="store_true",
                        help="only primary submissions (kind: primary in submission.yaml), as IWSLT rates them")
    imp = sub.add_parser("import", help="add ratings (the sampled sheet with its score column filled, or CSV rows "
                                        "rater,item,score 1-5) and summarize all of them")
    imp.add_argument("results", type=Path, metavar="RESULTS")
    imp.add_argument("ratings", type=Path, metavar="RATINGS_CSV")
    imp.add_argument("--rater", default=None, metavar="NAME",
                     help="who filled the sheet (for a sheet without a rater column)")


CAUTION_SYSTEMS = 5  # fewer systems than this: a system-level correlation says little


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def correlation_lines(summary: dict[str, Any]) -> list[str]:
    """What `import` prints of the system-level correlations it computed (with a caution over few systems)."""
    rated = len(summary["systems"])
    corr: dict[str, dict[str, Any]] = summary["correlations"]
    if not corr:
        return [f"  no metric correlation: {rated} system(s) rated, at least 3 needed"]
    n = max(c["systems"] for c in corr.values())
    lines = [f"  system-level correlation with the human means over {n} system(s) (Pearson, Spearman):"]
    width = max(len(m) for m in corr)
    lines += [f"    {m:<{width}}  {_fmt(c['pearson'])}  {_fmt(c['spearman'])}" for m, c in corr.items()]
    if n < CAUTION_SYSTEMS:
        lines.append(f"  caution: {n} systems are too few for these correlations to mean much "
                     f"({CAUTION_SYSTEMS} or more are wanted)")
    return lines


def _sample(args: argparse.Namespace) -> int:
    from harness.errors import HarnessError
    from harness.human.sheets import sample_sheet

    if args.per_system < 1:
        raise HarnessError("--per-system must be at least 1")
    notes: list[str] = []
    items, systems = sample_sheet(args.results, args.per_system, args.seed, args.output, args.primary_only, notes)
    for note in notes:
        print(f"harness human: {note}")
    print(f"harness human: {items} items from {systems} system(s) in {args.output}; the key stays in "
          f"{args.results}/human/")
    return 0


def run(args: argparse.Namespace) -> int:
    from harness.human.sheets import import_ratings

    if args.action == "sample":
        return _sample(args)
    summary = import_ratings(args.results, args.ratings, args.rater)
    alpha = summary["krippendorff_alpha_interval"]
    notes = [f"{summary['skipped']} row(s) without a score skipped"] if summary["skipped"] else []
    if summary["already"]:
        notes.append(f"{summary['already']} row(s) imported before with the same score skipped")
    skipped = f" ({'; '.join(notes)})" if notes else ""
    print(f"harness human: {summary['imported']} rating(s) added{skipped}; {summary['ratings']} by {summary['raters']} "
          f"rater(s); Krippendorff's alpha (interval) {'-' if alpha is None else f'{alpha:.3f}'}")
    for name, s in summary["systems"].items():
        print(f"  {name}: {s['mean']:.2f} over {s['items']} item(s)")
    for line in correlation_lines(summary):
        print(line)
    return 0
