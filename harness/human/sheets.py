"""Blind rating sheets and the ratings that come back.

`sample_sheet` picks `per_system` instances of each board (track × dataset) with a seed — the same instances for
every system of a board, so systems are compared on the same sentences — and writes one row per (system, instance)
with an opaque item id, the source and the hypothesis, shuffled, with no system name. `primary_only` keeps only
the runs of primary submissions (`kind: primary` in submission.yaml, the default; summary.json's `kind`), as IWSLT
evaluates primary submissions by hand. The key (item → submission,
track, dataset, index) goes to RESULTS/human/key.json, apart from the sheet.

`import_ratings` reads the sheet back with its score column filled (the rater named by `--rater` or a rater
column), or plain `rater,item,score` rows; rows left without a score are skipped; every other row is checked
(unknown item, score not an integer 1–5, a rater rating an item twice with different scores, here or in an earlier
import) and the first bad row stops the import with one line naming the file and the row. A row an earlier import
took with the same score is skipped, so a sheet can be imported again as its rater fills it. Accepted ratings are
appended to RESULTS/human/ratings.jsonl, then the summary is written anew from all of them.
"""

from __future__ import annotations

import csv
import json
import math
import random
from pathlib import Path
from typing import Any

from harness import layout
from harness.errors import HarnessError
from harness.human.agreement import krippendorff_alpha_interval, pearson, spearman
from harness.jsonio import read_jsonl, write_json

__all__ = ["sample_sheet", "import_ratings", "summarize", "SCORES"]

SCORES = range(1, 6)
PRIMARY = "primary"  # submission.yaml's default kind (harness.intake.submission.KINDS)


def _runs(results: Path, primary_only: bool = False) -> list[dict[str, Any]]:
    """The scored runs of summary.json (of primary submissions only, with `primary_only`)."""
    path = layout.ResultsDir(results).summary
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise HarnessError(f"{path}: cannot read the results summary ({exc})") from None
    runs = [r for r in data.get("runs", []) if r.get("status") in ("ok", "partial") and r.get("scores")]
    if primary_only:
        runs = [r for r in runs if (r.get("kind") or PRIMARY) == PRIMARY]
        if not runs:
            raise HarnessError(f"{path}: no scored run of a primary submission (kind: primary) to sample")
    return runs


def _records(results: Path, run: dict[str, Any]) -> dict[int, dict[str, Any]]:
    from harness.runlog import read_instances

    log = read_instances(layout.ResultsDir(results).run(run["submission"], run["dataset"]).instances_log,
                         allow_torn=True)
    return {r["index"]: r for r in log.records}


def _write_json(path: Path, obj: Any) -> None:
    write_json(path, obj, ensure_ascii=False, mkdir=True)


def _boards(results: Path, primary_only: bool) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The scored runs by board (track, dataset)."""
    boards: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in _runs(results, primary_only):
        boards.setdefault((str(run.get("track")), str(run["dataset"])), []).append(run)
    return boards


def sample_sheet(results: Path, per_system: int, seed: int, output: Path, primary_only: bool = False,
                 notes: list[str] | None = None) -> tuple[int, int]:
    """Write the blind sheet to `output` and its key to RESULTS/human/key.json; (items, systems). A board with
    fewer common instances than `per_system` gives all it has, and says so in `notes`."""
    human = layout.ResultsDir(results).human
    if human.key.exists():
        raise HarnessError(f"{human.key}: a sheet was sampled already (its ratings would lose their key); "
                           "move the human/ folder away to sample anew")
    rng = random.Random(seed)
    rows, key = [], {}
    systems = 0
    for (track, dataset), runs in sorted(_boards(results, primary_only).items()):
        logs = {r["submission"]: _records(results, r) for r in runs}
        common = sorted(set.intersection(*(set(v) for v in logs.values())))
        if per_system > len(common) and notes is not None:
            notes.append(f"--per-system {per_system} is more than the {len(common)} instance(s) of {track} "
                         f"({dataset}) that all its {len(runs)} system(s) decoded: sampled all {len(common)}")
        chosen = sorted(rng.sample(common, min(per_system, len(common))))
        systems += len(runs)
        for sub, recs in sorted(logs.items()):
            for index in chosen:
                rec = recs[index]
                source = rec.get("source")
                rows.append({"source": source if isinstance(source, str) else " ".join(map(str, source or [])),
                             "hypothesis": rec.get("prediction", ""),
                             "_key": {"submission": sub, "track": track, "dataset": dataset, "index": index}})
    rng.shuffle(rows)
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["item", "source", "hypothesis", "score"])
        for n, row in enumerate(rows, 1):
            item = f"i{n:05d}"
            key[item] = row["_key"]
            writer.writerow([item, row["source"], row["hypothesis"], ""])
    _write_json(human.key, {"seed": seed, "per_system": per_system, "primary_only": primary_only,
                           "items": key})
    return len(rows), systems


def _read_key(results: Path) -> dict[str, dict[str, Any]]:
    path = layout.ResultsDir(results).human.key
    try:
        return json.loads(path.read_text(encoding="utf-8"))["items"]
    except (OSError, ValueError, KeyError) as exc:
        raise HarnessError(f"{path}: no sheet key ({exc}); run `harness human sample` first") from None


def _existing(results: Path) -> list[dict[str, Any]]:
    return read_jsonl(layout.ResultsDir(results).human.ratings, "ratings", missing_ok=True)


def _rating(row: dict[str, Any], where: str, rater: str | None, key: dict[str, Any],
            seen: dict[tuple[str, str], int]) -> dict[str, Any] | None:
    """One sheet row as a rating (None: not rated yet); a HarnessError naming the row when it is wrong, or when
    its rater rated its item already with another score (`seen`: the scores already taken)."""
    who = (row.get("rater") or "").strip() or (rater or "").strip()
    item, raw = (row.get("item") or "").strip(), row.get("score")
    if not str(raw or "").strip():
        return None
    if not who:
        raise HarnessError(f"{where}: no rater (fill the rater column or pass --rater NAME)")
    if item not in key:
        raise HarnessError(f"{where}: unknown item {item!r} (not in the sheet's key)")
    try:
        score = int(str(raw).strip())
    except ValueError:
        raise HarnessError(f"{where}: score {raw!r} is not an integer from 1 to 5") from None
    if score not in SCORES:
        raise HarnessError(f"{where}: score {score} is out of range (1 to 5)")
    if (who, item) in seen and seen[(who, item)] != score:
        raise HarnessError(f"{where}: rater {who!r} already rated item {item!r} with {seen[(who, item)]}, not "
                           f"{score} (a rating is never rewritten)")
    return {"rater": who, "item": item, "score": score}


def _read_sheet(ratings_csv: Path, rater: str | None, key: dict[str, Any], seen: dict[tuple[str, str], int]
                ) -> tuple[list[dict[str, Any]], int, int]:
    """The new ratings of a sheet, the rows without a score and the rows taken already with the same score."""
    new: list[dict[str, Any]] = []
    skipped = again = 0
    try:
        f = ratings_csv.open(encoding="utf-8", newline="")
    except OSError as exc:
        raise HarnessError(f"{ratings_csv}: cannot read ({exc.strerror})") from None
    with f:
        reader = csv.DictReader(f)
        columns = set(reader.fieldnames or ())
        if not {"item", "score"} <= columns:
            raise HarnessError(f"{ratings_csv}: the header must name the columns item and score (and rater, or "
                               "pass --rater NAME)")
        if "rater" not in columns and not rater:
            raise HarnessError(f"{ratings_csv}: no rater column: pass --rater NAME (the sheet's rater) or add a "
                               "rater column")
        for n, row in enumerate(reader, 2):
            rating = _rating(row, f"{ratings_csv}: row {n}", rater, key, seen)
            if rating is None:
                skipped += 1
            elif (rating["rater"], rating["item"]) in seen:
                again += 1
            else:
                seen[(rating["rater"], rating["item"])] = rating["score"]
                new.append(rating)
    return new, skipped, again


def import_ratings(results: Path, ratings_csv: Path, rater: str | None = None) -> dict[str, Any]:
    """Validate and add the ratings of `ratings_csv`; the new summary.

    The file is either the sheet `sample_sheet` wrote with its score column filled (its other columns are left
    alone; the rater is `rater`, or a rater column added to it) or plain `rater,item,score` rows. Rows whose score
    is blank were not rated and are skipped (counted in the summary's `skipped`); rows taken before with the same
    score are skipped too (`already`), so a sheet is imported again as its rater goes on filling it."""
    key = _read_key(results)
    seen = {(r["rater"], r["item"]): int(r["score"]) for r in _existing(results)}
    new, skipped, again = _read_sheet(ratings_csv, rater, key, seen)
    if not new and not again and skipped:
        raise HarnessError(f"{ratings_csv}: no row has a score yet (fill the score column with 1 to 5)")
    path = layout.ResultsDir(results).human.ratings
    with path.open("a", encoding="utf-8") as out:
        for r in new:
            out.write(json.dumps(r) + "\n")
    summary = summarize(results)
    summary["imported"] = len(new)
    summary["skipped"] = skipped
    summary["already"] = again
    return summary


def _bootstrap_mean(values: list[float], rng: random.Random, samples: int = 1000) -> list[float] | None:
    if len(values) < 2:
        return None
    means = sorted(math.fsum(rng.choice(values) for _ in values) / len(values) for _ in range(samples))
    lo = samples // 40
    return [means[lo], means[samples - lo - 1]]


def summarize(results: Path) -> dict[str, Any]:
    """Per-system human means (bootstrap 95% intervals over items), agreement and metric correlations; written to
    RESULTS/human/summary.json."""
    key = _read_key(results)
    ratings = _existing(results)
    by_item: dict[str, list[float]] = {}
    for r in ratings:
        by_item.setdefault(r["item"], []).append(float(r["score"]))
    per_system: dict[str, list[float]] = {}
    for item, scores in by_item.items():
        k = key[item]
        per_system.setdefault(f"{k['submission']}/{k['dataset']}", []).append(math.fsum(scores) / len(scores))
    rng = random.Random(12345)
    means = {name: math.fsum(v) / len(v) for name, v in per_system.items()}
    systems = {name: {"mean": means[name], "ci95": _bootstrap_mean(v, rng), "items": len(v)}
               for name, v in sorted(per_system.items())}
    runs = {f"{r['submission']}/{r['dataset']}": r for r in _runs(results)}
    correlations: dict[str, dict[str, float | None]] = {}
    names = [n for n in systems if n in runs]
    metrics = sorted({k for n in names for k, v in runs[n]["scores"].items()
                      if isinstance(v, dict) and isinstance(v.get("score"), (int, float))})
    for metric in metrics:
        pairs = [(runs[n]["scores"][metric]["score"], means[n]) for n in names
                 if isinstance(runs[n]["scores"].get(metric, {}).get("score"), (int, float))]
        if len(pairs) >= 3:
            xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
            correlations[metric] = {"pearson": pearson(xs, ys), "spearman": spearman(xs, ys), "systems": len(pairs)}
    summary = {
        "ratings": len(ratings),
        "raters": len({r["rater"] for r in ratings}),
        "items_rated": len(by_item),
        "krippendorff_alpha_interval": krippendorff_alpha_interval(
            [(r["rater"], r["item"], float(r["score"])) for r in ratings]),
        "systems": systems,
        "correlations": correlations,
    }
    _write_json(layout.ResultsDir(results).human.summary, summary)
    return summary
