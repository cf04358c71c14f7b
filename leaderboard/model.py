"""Read a results directory (docs/formats.md, "Results layout") into the objects the pages are made of.

Nothing here computes a metric: scores come from summary.json / scores.json, per-instance metrics from
instance_scores.jsonl and paired significance from significance/<track>/<dataset>.json, as the scoring stage
wrote them. With a task config, only its tracks get boards; a run naming another track is listed as invalid.
Participants' strings (team, system, submission id, reason, track) are capped (`leaderboard.safe`).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import layout
from harness.config import Regime, TaskConfig, Track
from harness.errors import HarnessError
from harness.jsonio import read_json, read_jsonl
from harness.metric_registry import computation_aware_applies
from harness.runlog import read_records
from harness.status import SCORED_STATUSES
from leaderboard.compute import ComputeView, compute_view
from leaderboard.metrics_info import Catalog
from leaderboard.safe import PAGE_TEXT_MAX, cap, capped

OK_STATUSES = SCORED_STATUSES
META_KEYS = ("counts", "info", "domains")  # domains: per-domain scores (leaderboard.domains)
CLIENT_LOG_TAIL_LINES = 60


def slugify(text: str) -> str:
    """A file-name-safe form of a submission id or dataset name (keeps it readable)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "x"
    return slug[:80]


def tail(path: Path, lines: int = CLIENT_LOG_TAIL_LINES) -> str | None:
    """The last `lines` lines of a text file (None when the file does not exist)."""
    if not path.is_file():
        return None
    with path.open(encoding="utf-8", errors="replace") as fh:
        text = "".join(deque(fh, maxlen=lines))
    return text if len(text) <= PAGE_TEXT_MAX else "…" + text[-PAGE_TEXT_MAX + 1:]


def as_float(value: Any) -> float | None:
    """A finite float, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    f = float(value)
    return f if f == f and abs(f) != float("inf") else None


@dataclass
class Run:
    """One submission × dataset, as in summary.json's `runs`, with its files."""

    submission: str
    team: str
    system: str
    track: str
    kind: str
    baseline: bool
    dataset: str
    status: str
    reason: str | None
    scores: dict[str, Any]
    run_dir: Path | None = None
    manifest: dict[str, Any] = field(default_factory=dict)
    client_log_tail: str | None = None
    slug: str = ""
    partial: bool = False
    key: str = ""  # the submission id as summary.json has it (uncapped: names files and significance entries)
    log: bool = False  # scored from the participant's system log (its computation-aware latency is not ours)
    hardware: str = ""  # a log submission's declared hardware
    models: str = "open"  # `closed`: built on closed-source models, ranked apart
    #: with `regime_from`, the primary latency of this submission's run on that dataset (None: it has none)
    regime_latency: float | None = None

    @property
    def closed(self) -> bool:
        return self.models == "closed"

    @property
    def scored(self) -> bool:
        """Has scores to rank: status ok or partial, or a failure whose partial output was kept and scored."""
        ok = self.status in OK_STATUSES or self.partial
        return ok and any(k not in META_KEYS for k in self.scores)

    @property
    def metric_keys(self) -> list[str]:
        return [k for k, v in self.scores.items() if k not in META_KEYS and isinstance(v, dict)]

    @property
    def degenerate(self) -> bool:
        """OmniSTEval's degenerate-policy flag was raised on this run (short-form runs only)."""
        return self.score("DegeneratePolicy") == 1.0

    def score(self, key: str) -> float | None:
        rec = self.scores.get(key)
        return as_float(rec.get("score")) if isinstance(rec, dict) else None

    def ci(self, key: str) -> tuple[float, float] | None:
        rec = self.scores.get(key)
        ci = rec.get("ci95") if isinstance(rec, dict) else None
        if isinstance(ci, (list, tuple)) and len(ci) == 2:
            lo, hi = as_float(ci[0]), as_float(ci[1])
            if lo is not None and hi is not None:
                return (lo, hi)
        return None

    @property
    def compute(self) -> ComputeView:
        """Its hardware (measured or declared), start-up time and real-time factor, from the manifest."""
        return compute_view(self.manifest, self.dataset)

    @property
    def is_retranslation(self) -> bool:
        return "NE" in self.scores

    @property
    def page(self) -> str:
        """Path of the submission page, relative to the site root."""
        return f"runs/{self.slug}/index.html"

    def instances(self) -> list[dict[str, Any]]:
        """The run's instance records in index order (a torn last line left out; harness.runlog)."""
        return read_records(layout.RunDir(self.run_dir).instances_log) if self.run_dir else []

    def instance_scores(self) -> dict[int, dict[str, Any]]:
        """index → per-instance metrics, as the scoring stage wrote them ({} when it did not)."""
        if self.run_dir is None:
            return {}
        rows = read_jsonl(layout.RunDir(self.run_dir).instance_scores, "per-instance scores", missing_ok=True)
        return {r["index"]: {k: v for k, v in r.items() if k != "index"} for r in rows
                if isinstance(r.get("index"), int)}


@dataclass
class RegimeTable:
    """A latency regime table: the runs whose primary latency is at most `max_latency` (and above `min_latency`,
    when the regime names one), ranked."""

    name: str
    max_latency: float | None
    runs: list[Run]
    min_latency: float | None = None

    def bounds(self, latency: str) -> str:
        """The regime's condition on the `latency` metric: `LongYAAL ≤ 2000`, `2000 < LongYAAL ≤ 4000`."""
        low = f"{self.min_latency:g} < " if self.min_latency is not None else ""
        return f"{low}{latency} ≤ {self.max_latency:g}"


@dataclass
class Board:
    """One configured track on one dataset: what the index shows in one section."""

    track: str
    dataset: str
    runs: list[Run]
    config: Track | None
    primary_quality: str
    primary_latency: str
    columns: list[str]
    catalog: Catalog
    regimes: list[RegimeTable] = field(default_factory=list)
    latency_unit: str = ""
    modality: str = ""
    #: the scoring stage's paired tests (RESULTS/significance/<track>/<dataset>.json), {} when absent
    significance_file: dict[str, Any] = field(default_factory=dict)
    #: Average Anticipation of each reference set (RESULTS/anticipation/<track>/<dataset>.json), {} when absent
    anticipation: dict[str, float] = field(default_factory=dict)
    #: the dataset whose runs decide the regimes (`tracks[].regime_from`), None: each run's own latency
    regime_from: str | None = None

    @property
    def slug(self) -> str:
        return slugify(f"{self.track}-{self.dataset}")

    def _has_scores(self, r: Run) -> bool:
        return r.scored and r.score(self.primary_quality) is not None

    @property
    def scored(self) -> list[Run]:
        """The runs of the main ranking: scored, open models, and (with `regime_from`) a result there."""
        return [r for r in self.runs if self._has_scores(r) and not r.closed and self.regime_note(r) is None]

    @property
    def unranked(self) -> list[Run]:
        """Open-model runs out of the ranking: failed, or without the result that decides their regime."""
        return [r for r in self.runs if not r.closed and r not in self.scored]

    @property
    def closed(self) -> list[Run]:
        """Systems built on closed models: ranked apart, by primary quality (scored ones first)."""
        runs = [r for r in self.runs if r.closed]
        scored = self.ranked([r for r in runs if self._has_scores(r)])
        return scored + [r for r in runs if r not in scored]

    def regime_note(self, r: Run) -> str | None:
        """Why a scored run has no regime (`regime_from` and no scored run there), else None."""
        if self.regime_from is None or not self._has_scores(r) or r.regime_latency is not None:
            return None
        return (f"no {self.regime_from} result: not ranked (regimes are decided by the {self.primary_latency} of "
                f"the {self.regime_from} run)")

    def regime_rule(self) -> str:
        """How this board's regimes place a submission, in one sentence ("" without regimes): disjoint bands
        (`min_latency` set so that no two overlap) hold each submission in one regime at most; nested bounds
        hold it in every regime whose bound its primary latency stays under."""
        bands = sorted((g for g in self.regimes if g.max_latency is not None), key=lambda g: g.max_latency or 0.0)
        if not bands:
            return ""
        pl = self.primary_latency
        listed = "; ".join(f"{g.name}: {g.bounds(pl)}" for g in bands)
        disjoint = all(b.min_latency is not None and a.max_latency is not None and b.min_latency >= a.max_latency
                       for a, b in zip(bands, bands[1:], strict=False))
        if len(bands) > 1 and disjoint:
            return (f"The regimes are disjoint bands of {pl}: a submission competes only in the band its {pl} "
                    f"falls in ({listed}).")
        if any(g.min_latency is not None for g in bands):
            return f"A submission competes in every regime whose band holds its {pl} ({listed})."
        return f"A submission competes in every regime whose bound its {pl} stays under ({listed})."

    def regime_latency(self, r: Run) -> float | None:
        """The latency that places `r` in a regime: its `regime_from` run's primary latency, else its own."""
        return r.regime_latency if self.regime_from is not None else r.score(self.primary_latency)

    def ranked(self, runs: list[Run]) -> list[Run]:
        """`runs` best first by the primary quality metric (direction from its record); complete runs
        rank above partial or failed ones, whose scores cover only part of the test set."""
        up = self.catalog.describe(self.primary_quality).higher_is_better is not False
        return sorted(runs, key=lambda r: (r.status != "ok" or r.partial,
                                           -(r.score(self.primary_quality) or 0.0) if up
                                           else (r.score(self.primary_quality) or 0.0), r.submission))

    @property
    def best(self) -> Run | None:
        """The run the significance file compares against, else the best complete run by primary quality (a
        partial run only when no run is complete)."""
        named = self.significance_file.get("best")
        for r in self.scored:
            if r.key == named:
                return r
        complete = [r for r in self.scored if r.status == "ok" and not r.partial]
        ranked = self.ranked(complete or self.scored)
        return ranked[0] if ranked else None

    def significance(self) -> dict[str, dict[str, Any]]:
        """{run slug: {metric: paired test against the best}} from the significance file."""
        tests = self.significance_file.get("runs")
        if not isinstance(tests, dict):
            return {}
        return {r.slug: tests[r.key] for r in self.runs if isinstance(tests.get(r.key), dict)}

    def quality_metrics(self) -> list[str]:
        """The board's quality metrics: its track's (`quality:`), else (no config) its quality columns."""
        if self.config is not None:
            return list(self.config.quality)
        return [k for k in self.columns if self.catalog.describe(k).kind == "quality"]

    def signatures(self) -> dict[str, str]:
        """Distinct sacrebleu signatures of the board's quality metrics (and their reference sets, `BLEU@mono`),
        over the board's runs; a metric the scores hold but the track does not list (TER) is left out."""
        metrics = set(self.quality_metrics())
        out: dict[str, set[str]] = {}
        for r in self.scored:
            for key in r.metric_keys:
                sig = r.scores[key].get("signature")
                if isinstance(sig, str) and key.partition("@")[0] in metrics:
                    out.setdefault(key, set()).add(sig)
        return {k: " / ".join(sorted(v)) for k, v in sorted(out.items())}


@dataclass
class Results:
    """A whole results directory."""

    root: Path
    summary: dict[str, Any]
    runs: list[Run]
    boards: list[Board]
    task: str
    catalog: Catalog
    #: runs naming no track, or (with a config) a track it does not have: listed, without a board
    invalid: list[Run] = field(default_factory=list)
    #: RESULTS/human/summary.json (`harness human import`), {} when there are no ratings
    human: dict[str, Any] = field(default_factory=dict)


def _without_text_ca(scores: dict[str, Any]) -> dict[str, Any]:
    """`scores` without `NAME_CA` records unless the run is speech (`harness.metric_registry.CA_MODALITIES`).

    Older scorers (and SimulEval) computed text CA metrics as words plus milliseconds; such a number has no unit,
    so the site never shows it, whatever an older scores.json holds.
    """
    info = given if isinstance(given := scores.get("info"), dict) else {}
    speech = info.get("modality") == "speech" or info.get("latency_unit") == "ms"
    if computation_aware_applies(speech):
        return scores
    return {k: v for k, v in scores.items() if not k.partition("@")[0].endswith("_CA")}


HUMAN_DEFINITION = ("Human judgment: mean 1–5 rating of sampled sentences by blind raters (harness human), "
                    "with a bootstrap 95% interval over the rated sentences.")


def _human_summary(root: Path) -> dict[str, Any]:
    path = layout.ResultsDir(root).human.summary
    if not path.is_file():
        return {}
    data = read_json(path, "human judgments summary")
    return data if isinstance(data, dict) else {}


def _add_human_scores(runs: list[Run], human: dict[str, Any]) -> None:
    """Show each rated run's human mean as a `Human` score (in memory only: scores.json is never rewritten)."""
    systems = given if isinstance(given := human.get("systems"), dict) else {}
    for run in runs:
        entry = systems.get(f"{run.key}/{run.dataset}")
        if isinstance(entry, dict) and isinstance(entry.get("mean"), (int, float)):
            run.scores["Human"] = {"score": entry["mean"], "ci95": entry.get("ci95"), "kind": "quality",
                                   "direction": "higher", "unit": "rating 1–5", "definition": HUMAN_DEFINITION}


def _checked_entry(raw: Any, where: str) -> dict[str, Any]:
    """An entry of summary.json's `runs`: an object with non-empty string submission, dataset and status, and a
    string track when it names one (else a one-line error naming the entry)."""
    if not isinstance(raw, dict):
        raise HarnessError(f"{where}: expected an object")
    for key in ("submission", "dataset", "status"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise HarnessError(f"{where}.{key}: missing or not a string")
    if raw.get("track") is not None and not isinstance(raw.get("track"), str):
        raise HarnessError(f"{where}.track: not a string")
    return raw


def _run_folder(root: Path, sub: str, ds: str) -> Path | None:
    """RESULTS/<submission>/<dataset> when the names stay inside RESULTS and the folder exists, else None."""
    inside = "/" not in sub + ds and ".." not in sub + ds and len(sub) < 256 and len(ds) < 256
    return root / sub / ds if inside and (root / sub / ds).is_dir() else None


def _run_scores(raw: dict[str, Any], run_dir: Path | None) -> dict[str, Any]:
    """The entry's scores, else its run folder's scores.json; text CA records left out (`_without_text_ca`)."""
    scores = given if isinstance(given := raw.get("scores"), dict) else {}
    if not scores and run_dir and layout.RunDir(run_dir).scores.is_file():
        scores = read_json(layout.RunDir(run_dir).scores, "scores")
    return _without_text_ca(scores)


def _run_manifest(root: Path, sub: str, run_dir: Path | None) -> dict[str, Any]:
    """The submission's manifest.json, capped ({} without a run folder or a manifest object)."""
    manifest_path = layout.SubmissionDir(root / sub).manifest if run_dir else None
    manifest = read_json(manifest_path, "manifest") if manifest_path and manifest_path.is_file() else {}
    return capped(manifest) if isinstance(manifest, dict) else {}


def _unique_slug(text: str, used: set[str]) -> str:
    """`slugify(text)`, with `_` added until no earlier run has it; recorded in `used`."""
    slug = slugify(text)
    while slug in used:
        slug += "_"
    used.add(slug)
    return slug


def _capped_or(raw: dict[str, Any], key: str, default: str) -> str:
    """`raw[key]` as a capped string; `default` (capped) when it is absent or empty."""
    return cap(str(raw.get(key) or default))


def _capped_if_string(raw: dict[str, Any], key: str) -> str | None:
    """`raw[key]` capped when it is a string, else None."""
    return cap(raw[key]) if isinstance(raw.get(key), str) else None


def _run_from_summary(root: Path, raw: Any, i: int, used: set[str]) -> Run:
    """Entry `i` of summary.json's `runs` with its run folder's files (scores, manifest, client log)."""
    raw = _checked_entry(raw, f"{layout.ResultsDir(root).summary}: runs[{i}]")
    sub, ds = raw["submission"], raw["dataset"]
    run_dir = _run_folder(root, sub, ds)
    scores = _run_scores(raw, run_dir)
    manifest = _run_manifest(root, sub, run_dir)
    slug = _unique_slug(f"{sub}-{ds}", used)
    return Run(
        submission=cap(sub),
        team=_capped_or(raw, "team", sub),
        system=_capped_or(raw, "system", ""),
        track=_capped_or(raw, "track", ""),
        kind=_capped_or(raw, "kind", "primary"),
        baseline=bool(raw.get("baseline")),
        dataset=cap(ds),
        status=cap(raw["status"]),
        reason=_capped_if_string(raw, "reason"),
        scores=scores,
        run_dir=run_dir,
        manifest=manifest,
        client_log_tail=tail(layout.RunDir(run_dir).client_log) if run_dir else None,
        slug=slug,
        partial=bool(raw.get("partial")) or raw["status"] == "partial",
        key=sub,
        log=raw.get("log") is True,
        hardware=_capped_if_string(raw, "hardware") or "",
        models="closed" if raw.get("models") == "closed" else "open",
    )


def metric_keys(runs: list[Run]) -> list[str]:
    """Every metric key of `runs`, in the order they first appear."""
    present: list[str] = []
    for r in runs:
        for k in r.metric_keys:
            if k not in present:
                present.append(k)
    return present


def _wanted(track: Track | None, present: list[str], pq: str, pl: str, catalog: Catalog) -> list[str]:
    """The track's quality and latency metrics (without a track: every plain metric the runs have, no `@` subset,
    no CA variant, no unexplained key), primary quality then primary latency first."""
    if track is not None:
        wanted = [*track.quality, *track.latency]
    else:
        wanted = [k for k in present
                  if "@" not in k and not k.endswith("_CA") and catalog.describe(k).kind != "other"]
    for first in (pl, pq):
        if first in wanted:
            wanted.remove(first)
        wanted.insert(0, first)
    return wanted


def _latency_columns(wanted: list[str], present: list[str], pl: str, catalog: Catalog) -> list[str]:
    """The wanted latency metrics, the primary latency's CA variant right after it when the runs have one."""
    latency = [k for k in wanted if catalog.describe(k).kind == "latency"]
    if f"{pl}_CA" in present:
        latency.insert(latency.index(pl) + 1 if pl in latency else 0, f"{pl}_CA")
    return latency


def _columns(track: Track | None, runs: list[Run], pq: str, pl: str, catalog: Catalog) -> list[str]:
    """Index columns: primary quality, primary latency (and its CA variant), then the other configured quality and
    latency metrics, NE and Norm-Scores."""
    present = metric_keys(runs)
    wanted = _wanted(track, present, pq, pl, catalog)
    quality = [k for k in wanted if catalog.describe(k).kind == "quality"]
    latency = _latency_columns(wanted, present, pl, catalog)
    extra = [k for k in present if "@" not in k and catalog.describe(k).kind in ("stability", "norm")]
    # the primary quality and latency (and its CA variant) first: on a narrow screen they are the columns in view
    primaries = [k for k in (pq, pl, f"{pl}_CA") if k in quality + latency]
    rest = [k for k in quality + latency + extra if k not in primaries]
    return [k for k in primaries + rest if k in present] or [pq]


def _significance_file(root: Path, track: str, dataset: str) -> dict[str, Any]:
    path = layout.ResultsDir(root).significance(track, dataset)
    if "/" in track + dataset or ".." in track + dataset or not path.is_file():
        return {}
    data = read_json(path, "significance file")
    return data if isinstance(data, dict) else {}


def _anticipation_file(root: Path, track: str, dataset: str) -> dict[str, float]:
    """{reference set: its Average Anticipation} from the scoring stage's file ({} when absent)."""
    path = layout.ResultsDir(root).anticipation(track, dataset)
    if "/" in track + dataset or ".." in track + dataset or not path.is_file():
        return {}
    data = read_json(path, "anticipation file")
    sets = data.get("reference_sets") if isinstance(data, dict) else None
    if not isinstance(sets, dict):
        return {}
    return {cap(str(k)): v["AA"] for k, v in sets.items()
            if isinstance(v, dict) and isinstance(v.get("AA"), (int, float)) and not isinstance(v.get("AA"), bool)}


def _track(config: TaskConfig | None, name: str) -> Track | None:
    """The config's track called `name` (None without a config or such a track)."""
    return next((t for t in config.tracks if t.name == name), None) if config else None


def _scored_unit(runs: list[Run]) -> str:
    """The latency unit the scorer wrote into the first run whose scores name one ("" when none does)."""
    for r in runs:
        info = r.scores.get("info")
        if isinstance(info, dict) and isinstance(info.get("latency_unit"), str):
            return str(info["latency_unit"])
    return ""


def _outside_table(board: Board, outside: list[Run], top: float) -> RegimeTable:
    """The table of the scored runs no regime holds: `above TOP` when all are above the loosest bound."""
    above = all((s := board.regime_latency(r)) is None or s > top for r in outside)
    return RegimeTable(f"above {top:g}" if above else "outside", None, board.ranked(outside))


def _regime_tables(board: Board, regimes: Sequence[Regime]) -> list[RegimeTable]:
    """The board's ranked tables: one per regime, tightest first, then one of the scored runs none holds (if
    any); without regimes, one table `all`."""
    scored = board.scored
    if not regimes:
        return [RegimeTable("all", None, board.ranked(scored))]
    ordered = sorted(regimes, key=lambda g: g.max_latency)
    tables: list[RegimeTable] = []
    placed: set[str] = set()
    for reg in ordered:
        inside = [r for r in scored if (s := board.regime_latency(r)) is not None and reg.holds(s)]
        placed.update(r.key for r in inside)
        tables.append(RegimeTable(reg.name, reg.max_latency, board.ranked(inside), reg.min_latency))
    outside = [r for r in scored if r.key not in placed]
    if outside:
        tables.append(_outside_table(board, outside, ordered[-1].max_latency))
    return tables


def _board(root: Path, track_name: str, dataset: str, runs: list[Run], config: TaskConfig | None,
           catalog: Catalog, regime_runs: dict[str, float] | None = None) -> Board:
    """One board; `regime_runs`: {submission: primary latency of its scored run on the track's `regime_from`}."""
    track = _track(config, track_name)
    pq = track.primary_quality if track else "BLEU"
    pl = track.primary_latency if track else "LAAL"
    board = Board(cap(track_name), dataset, runs, track, pq, pl, _columns(track, runs, pq, pl, catalog), catalog,
                  significance_file=_significance_file(root, track_name, dataset),
                  anticipation=_anticipation_file(root, track_name, dataset))
    board.modality = track.modality if track else ""
    # the unit the scorer used (ms for speech), else the config's
    board.latency_unit = _scored_unit(runs) or (
        "ms" if board.modality == "speech" else (track.latency_unit if track else "word"))
    if board.latency_unit == "ms":
        board.modality = board.modality or "speech"
    if track is not None and track.regime_from is not None:
        board.regime_from = cap(track.regime_from)
        for r in runs:
            r.regime_latency = (regime_runs or {}).get(r.key)
    board.regimes.extend(_regime_tables(board, track.regimes if track else ()))
    return board


def _regime_latencies(placed: list[tuple[Run, str]], config: TaskConfig | None, track_name: str
                      ) -> dict[str, float]:
    """{submission: primary latency (never computation-aware) of its scored run on the track's `regime_from`
    dataset}; {} when the track decides regimes on each run's own latency."""
    track = _track(config, track_name)
    if track is None or track.regime_from is None:
        return {}
    out: dict[str, float] = {}
    for r, t in placed:
        if t != track_name or r.dataset != track.regime_from or r.status != "ok" or r.partial:
            continue
        if r.score(track.primary_quality) is not None and (s := r.score(track.primary_latency)) is not None:
            out[r.key] = s
    return out


def _check_replaces(path: Path, entries: list[dict[str, Any]]) -> None:
    """A one-line HarnessError (saying how many more) when a run's `replaces` names no earlier submission of its
    team and track in summary.json: the board would show both versions (`harness.intake.replaces`)."""
    from harness.intake.replaces import owners_in_summary, replaces_problem, too_many

    known = owners_in_summary(entries)
    problems: list[str] = []
    seen: set[str] = set()
    for i, raw in enumerate(entries):
        sub, old = raw["submission"], raw.get("replaces")
        if old is None or sub in seen:  # a submission's claim is the same on each of its lines
            continue
        seen.add(sub)
        why = replaces_problem(sub, old, known[sub], known) if isinstance(old, str) \
            else f"expected a submission id, got {type(old).__name__}"
        if why is not None:
            problems.append(f"{path}: runs[{i}].replaces: {why}")
    if problems:
        raise HarnessError(too_many(problems))


def _read_summary(root: Path) -> dict[str, Any]:
    """RESULTS/summary.json: an object with a list `runs` (else a one-line error naming the file)."""
    if not root.is_dir():
        raise HarnessError(f"{root}: results directory not found")
    results_dir = layout.ResultsDir(root)
    summary = read_json(results_dir.summary, "summary")
    if not isinstance(summary, dict) or not isinstance(summary.get("runs"), list):
        raise HarnessError(f"{results_dir.summary}: expected an object with a list 'runs'")
    return summary


def _place_runs(runs: list[Run], tracks: list[Any], config: TaskConfig | None
                ) -> tuple[list[tuple[Run, str]], list[Run]]:
    """([(run, its track)] for the runs naming a track (with a config: one it has), [the runs that do not])."""
    configured = {t.name for t in config.tracks} if config else None
    valid = [bool(t) and (configured is None or t in configured) for t in tracks]
    placed = [(r, t) for r, t, ok in zip(runs, tracks, valid, strict=True) if ok]
    invalid = [r for r, ok in zip(runs, valid, strict=True) if not ok]
    return placed, invalid


def _board_keys(placed: list[tuple[Run, str]], config: TaskConfig | None) -> list[tuple[str, str]]:
    """(track, dataset) of every board: the config's track order (others after, by name), test first."""
    keys: list[tuple[str, str]] = []
    for r, t in placed:
        if (t, r.dataset) not in keys:
            keys.append((t, r.dataset))
    order = {t.name: i for i, t in enumerate(config.tracks)} if config else {}
    keys.sort(key=lambda k: (order.get(k[0], len(order)), k[0], k[1] != "test", k[1]))
    return keys


def _add_human_columns(boards: list[Board]) -> None:
    """The Human column, where ratings exist, after the automatic metrics."""
    for board in boards:
        if any("Human" in r.scores for r in board.runs) and "Human" not in board.columns:
            board.columns.append("Human")


def load_results(root: Path, config: TaskConfig | None = None, datasets: frozenset[str] | None = None) -> Results:
    """Read RESULTS/summary.json and every run's files; group runs into boards (configured track × dataset).
    With `datasets`, the runs of other datasets are left out entirely (a site published before a hidden phase's
    reveal names none of its runs)."""
    summary = _read_summary(root)
    if datasets is not None:
        summary = {**summary, "runs": [r for r in summary["runs"] if r.get("dataset") in datasets]}
    used: set[str] = set()
    runs = [_run_from_summary(root, raw, i, used) for i, raw in enumerate(summary["runs"])]
    _check_replaces(layout.ResultsDir(root).summary, summary["runs"])
    human = _human_summary(root)
    _add_human_scores(runs, human)
    placed, invalid = _place_runs(runs, [raw.get("track") for raw in summary["runs"]], config)
    # a superseded run (a newer submission names it in `replaces:`) is on no board (harness.batch.history)
    gone = {i for i, raw in enumerate(summary["runs"]) if raw.get("superseded_by")}
    placed = [(r, t) for r, t in placed if not any(r is runs[i] for i in gone)]
    catalog = Catalog(r.scores for r, _ in placed)
    boards = [_board(root, t, d, [r for r, rt in placed if (rt, r.dataset) == (t, d)], config, catalog,
                     _regime_latencies(placed, config, t)) for t, d in _board_keys(placed, config)]
    _add_human_columns(boards)
    task = cap(str(summary.get("task") or (config.task if config else "") or root.name))
    return Results(root, summary, runs, boards, task, catalog, invalid, human)
