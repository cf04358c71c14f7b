"""`harness rescore FOLDER --segmentation Y --references R --target-lang L --output SITE`: every long-form log of
another tool under FOLDER scored under two campaign profiles, and one static page that shows them side by side.

Each `instances.log` under FOLDER is a run (named by its folder). Under `iwslt2025` (FBK stream_laal.py 2.0: BLEU,
StreamLAAL and StreamLAAL_CA on the original mwerSegmenter) and `iwslt2026` (BLEU on SoftSegmenter, LongYAAL as
OmniSTEval, StreamLAAL as simulstream; a SimulEval log's cumulative elapsed times read as OmniSTEval's
`--fix_simuleval_emission_ca`), so an organizer sees last year's numbers beside this year's definitions. BLEU uses
one tokenizer per target language on both sides (zh for zh, ja-mecab for ja, else 13a; `--tokenizer` to choose).
Where the 2025 tool's own output lies beside a log (`scores.resegmented.tsv`), its published values are shown too,
the run is scored under the profile of the version that wrote them (`iwslt2025-v1` for 1.0.0) and the page says
whether ours equal them (to 1e-9). Writes SITE/index.html and SITE/rescored.json.
"""

from __future__ import annotations

import argparse
import html
import sys
from pathlib import Path
from typing import Any

HELP = "re-score a folder of other tools' long-form logs under two campaign profiles; one page side by side"

TOLERANCE = 1e-9
COLUMNS: dict[str, tuple[str, ...]] = {"iwslt2025": ("BLEU", "StreamLAAL", "StreamLAAL_CA"),
                                       "iwslt2026": ("BLEU", "LongYAAL", "LongYAAL_CA", "StreamLAAL")}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `harness rescore`."""
    parser.add_argument("folder", metavar="FOLDER", help="a folder whose instances.log files (at any depth) are runs")
    parser.add_argument("--segmentation", required=True, metavar="YAML", help="the reference segmentation")
    parser.add_argument("--references", required=True, metavar="FILE", help="reference sentences, one a line")
    parser.add_argument("--target-lang", required=True, metavar="LANG", help="target language (zh, ja: by character)")
    parser.add_argument("--latency-unit", choices=("word", "char"), default=None,
                        help="word or char (default: char for zh and ja, else word)")
    parser.add_argument("--tokenizer", default=None,
                        help="sacrebleu tokenizer of both sides (default: zh for zh, ja-mecab for ja, else 13a)")
    parser.add_argument("--output", required=True, metavar="SITE", help="folder for index.html and rescored.json")


def _score(log: Path, profile: str, args: argparse.Namespace, unit: str) -> tuple[dict[str, Any], list[str]]:
    """(scores, warning lines) of one log under one profile."""
    from harness import interop
    from harness.profiles import get_profile
    from harness.scoring import score_records_with_instances
    from harness.scoring.options import ScoringOptions

    campaign = get_profile(profile)
    warnings: list[str] = []
    records = interop.read_foreign_log(log, Path(args.segmentation), {"orig": Path(args.references)},
                                       resegmentation=campaign.quality_resegmentation or "softsegmenter",
                                       warn=warnings.append, fix_emission_ca=campaign.simuleval_ca == "as-is")
    language = args.target_lang.split("-")[0].lower()
    options = ScoringOptions(profile=profile, target_lang=args.target_lang, bootstrap=1,
                             tokenizer=args.tokenizer or get_profile("iwslt2025").tokenizer_for(language),
                             metrics=("BLEU", "LongYAAL", "StreamLAAL") if campaign.metrics is None else None)
    scores, _ = score_records_with_instances(records, options, latency_unit=unit, source=str(log))
    return scores, warnings


def _published(log: Path) -> tuple[str | None, dict[str, float] | None]:
    from harness import interop

    tsv = log.parent / "scores.resegmented.tsv"
    return interop.read_stream_laal_tsv(tsv) if tsv.is_file() else (None, None)


def rescore_run(log: Path, args: argparse.Namespace, unit: str) -> dict[str, Any]:
    """One run's row: its numbers under both profiles, the published 2025 values and whether ours equal them."""
    from harness.profiles import STREAM_LAAL_VERSIONS

    version, published = _published(log)
    past = STREAM_LAAL_VERSIONS.get(version or "", "iwslt2025")
    row: dict[str, Any] = {"published_version": version, "published": published, "profiles": {}, "warnings": []}
    for key, profile in (("iwslt2025", past), ("iwslt2026", "iwslt2026")):
        scores, warnings = _score(log, profile, args, unit)
        row["profiles"][key] = {"profile": profile,
                                **{m: (scores.get(m) or {}).get("score") for m in COLUMNS[key]}}
        row["warnings"] += [w for w in warnings if w not in row["warnings"]]
    if published is not None:
        ours = row["profiles"]["iwslt2025"]
        row["equal_to_published"] = all(ours.get(m) is not None and abs(ours[m] - v) <= TOLERANCE
                                        for m, v in published.items())
    return row


def _cell(value: Any) -> str:
    return "–" if value is None else f"{value:.2f}" if isinstance(value, float) else html.escape(str(value))


def _row_html(name: str, row: dict[str, Any]) -> str:
    past, now = row["profiles"]["iwslt2025"], row["profiles"]["iwslt2026"]
    published = row.get("published") or {}
    equal = row.get("equal_to_published")
    mark = "" if equal is None else ("<td class=ok>equal</td>" if equal else "<td class=bad>differs</td>")
    cells = [f"<td>{_cell(published.get(m))}</td>" for m in COLUMNS["iwslt2025"]] if row.get("published") \
        else ["<td colspan=3>–</td>"]
    warn = f"<div class=warn>{html.escape('; '.join(row['warnings']))}</div>" if row["warnings"] else ""
    return (f"<tr><th>{html.escape(name)}{warn}</th>{''.join(cells)}{mark or '<td>–</td>'}"
            + "".join(f"<td>{_cell(past.get(m))}</td>" for m in COLUMNS["iwslt2025"])
            + "".join(f"<td>{_cell(now.get(m))}</td>" for m in COLUMNS["iwslt2026"]) + "</tr>")


def render(rows: dict[str, dict[str, Any]], title: str) -> str:
    """The page: per run, the published 2025 values, ours under the 2025 profile, ours under 2026's definitions."""
    head = ("<tr><th rowspan=2>run</th><th colspan=4>published (stream_laal.py)</th>"
            "<th colspan=3>2025 definitions (iwslt2025)</th><th colspan=4>2026 definitions (iwslt2026)</th></tr><tr>"
            + "".join(f"<th>{m}</th>" for m in COLUMNS["iwslt2025"]) + "<th>ours</th>"
            + "".join(f"<th>{m}</th>" for m in COLUMNS["iwslt2025"])
            + "".join(f"<th>{m}</th>" for m in COLUMNS["iwslt2026"]) + "</tr>")
    body = "\n".join(_row_html(name, row) for name, row in rows.items())
    equal = sum(1 for r in rows.values() if r.get("equal_to_published"))
    compared = sum(1 for r in rows.values() if r.get("equal_to_published") is not None)
    return f"""<!doctype html><html lang=en><meta charset=utf-8><title>{html.escape(title)}</title>
<style>body{{font:14px sans-serif;margin:1.5em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;
padding:3px 6px;text-align:right}}th:first-child{{text-align:left;font-weight:normal;max-width:38em}}
.ok{{background:#dfd}}.bad{{background:#fdd}}.warn{{color:#a50;font-size:12px}}</style>
<h1>{html.escape(title)}</h1>
<p>{len(rows)} runs; {equal} of {compared} with published 2025 values equal to them ({TOLERANCE:g}).
BLEU and StreamLAAL (ms) of 2025 on the original mwerSegmenter, as FBK's stream_laal.py; 2026: BLEU on
SoftSegmenter, LongYAAL (ms) as OmniSTEval 0.1.10 with --fix_simuleval_emission_ca, StreamLAAL as simulstream 1.0.0
(docs/profiles.md).</p>
<table>{head}
{body}</table></html>
"""


def run(args: argparse.Namespace) -> int:
    """Score every log under the folder under both profiles; write the page and the numbers."""
    from harness.errors import HarnessError
    from harness.jsonio import write_json, write_text_atomic
    from harness.layout import INSTANCES_LOG

    folder = Path(args.folder)
    logs = sorted(folder.rglob(INSTANCES_LOG)) if folder.is_dir() else []
    if not logs:
        raise HarnessError(f"{folder}: no instances.log in this folder or below it")
    from harness.metrics.mwerbinary import check_binary

    check_binary()  # the 2025 side needs the original binary: one line before any log is read
    unit = args.latency_unit or ("char" if args.target_lang.split("-")[0].lower() in ("zh", "ja") else "word")
    rows: dict[str, dict[str, Any]] = {}
    for n, log in enumerate(logs, 1):
        name = str(log.parent.relative_to(folder)) if log.parent != folder else folder.name
        rows[name] = rescore_run(log, args, unit)
        for line in rows[name]["warnings"]:
            print(f"warning: {line}", file=sys.stderr)
        print(f"[{n}/{len(logs)}] {name}", file=sys.stderr)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "rescored.json", rows)
    write_text_atomic(out / "index.html", render(rows, f"{folder.name}: 2025 and 2026 definitions"))
    compared = [r for r in rows.values() if r.get("equal_to_published") is not None]
    print(f"wrote {out / 'index.html'}: {len(rows)} runs, {sum(r['equal_to_published'] for r in compared)} of "
          f"{len(compared)} equal to their published 2025 values")
    return 0
