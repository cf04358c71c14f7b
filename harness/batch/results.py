"""The results stage of a batch: scoring each run once from its file, the summary, and `finish_results`,
the one hand-off after all runs (Norm-Score against each track's baseline, summary.json, then the scoring
stage's per-instance metrics and per-board significance files that the leaderboard reads)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import __version__, layout
from harness.config import TaskConfig
from harness.jsonio import read_json_or_none, write_json
from harness.runlog import read_statuses

if TYPE_CHECKING:
    from harness.data.domains import DomainMap
    from harness.scoring.options import ScoringOptions


def score_run(run_dir: Path, options: ScoringOptions, partial: bool, domains: DomainMap | None = None
              ) -> dict[str, Any] | None:
    """Score what the run logged with `options` (`track_scoring_options` of its track, with the task's neural
    metrics) and, for a dataset with `domains:`, per domain (`domain_map`); None when nothing was logged; writes
    scores.json and instance_scores.jsonl."""
    from harness.scoring import score_log, write_instance_scores, write_scores

    log = layout.RunDir(run_dir).instances_log
    if not read_statuses(log):
        return None
    scores, rows = score_log(log, options)
    if domains is not None:  # per-domain scores; optional domains out of the top-level (ranked) scores
        from harness.scoring.domains import add_domain_scores

        scores = add_domain_scores(scores, log, domains, options)
    write_instance_scores(log.parent, rows)
    if isinstance(scores.get("info"), dict):
        scores["info"]["partial"] = partial
    write_scores(log, scores)
    return scores


def configured_baseline(config: TaskConfig, track: str | None, sub_id: str) -> bool:
    """Whether the task config names `sub_id` as the baseline of `track` (`tracks[].baseline`). A submission's own
    `baseline:` field is ignored: any participant could set it."""
    return any(t.name == track and t.baseline == sub_id for t in config.tracks)


def finish_results(config: TaskConfig, output: Path, runs: list[dict[str, Any]]) -> Path:
    """The results-stage step once every run is scored: Norm-Score against each track's baseline (rewriting
    those runs' scores.json), `summary.json`, then every run's instance_scores.jsonl and each board's
    significance file (`harness.scoring.results`). The single call site of this stage; the summary's path."""
    from harness.scoring.results import score_results

    norm_against_baselines(config, output, runs)
    path = write_summary(config, output, runs)
    score_results(config, output, runs)
    return path


def norm_against_baselines(config: TaskConfig, output: Path, runs: list[dict[str, Any]]) -> None:
    """NormBLEU against the track's configured baseline submission, where it ran on the same dataset."""
    from harness.scoring import add_norm_scores, write_scores

    for track in config.tracks:
        if not track.baseline:
            continue
        base = {r["dataset"]: r for r in runs if r["submission"] == track.baseline and r["scores"]}
        for r in runs:
            b = base.get(r["dataset"])
            if r["track"] == track.name and r["scores"] and b is not None:
                add_norm_scores(r["scores"], b["scores"], track.baseline)
                write_scores(layout.ResultsDir(output).run(r["submission"], r["dataset"]).instances_log, r["scores"])


def previous_runs(output: Path) -> list[dict[str, Any]]:
    """The runs of the results folder's summary.json ([] when there is none); a summary.json that cannot be read is
    a HarnessError (rewriting it would lose its runs)."""
    from harness.errors import HarnessError

    path = layout.ResultsDir(output).summary
    if not path.exists():
        return []
    doc = read_json_or_none(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("runs"), list):
        raise HarnessError(f"{path}: not a summary.json this harness wrote (no list of runs); move it away to "
                           f"continue in this folder")
    return [r for r in doc["runs"] if isinstance(r, dict)]


def regime_notes(config: TaskConfig, runs: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """{(submission, dataset): why it is not ranked} for the scored runs of a track with `regime_from` whose
    submission has no complete, scored run on that dataset (its regime cannot be decided)."""
    notes: dict[tuple[str, str], str] = {}
    for track in config.tracks:
        if track.regime_from is None:
            continue
        mine = [r for r in runs if r.get("track") == track.name]
        decided = {r.get("submission") for r in mine if r.get("dataset") == track.regime_from
                   and r.get("status") == "ok" and not r.get("partial")
                   and isinstance((r.get("scores") or {}).get(track.primary_latency), dict)}
        for r in mine:
            if r.get("submission") not in decided and r.get("scores") and r.get("status") == "ok":
                notes[(str(r.get("submission")), str(r.get("dataset")))] = (
                    f"no {track.regime_from} result: not ranked (track {track.name!r} decides regimes by the "
                    f"{track.primary_latency} of the {track.regime_from} run)")
    return notes


def write_summary(config: TaskConfig, output: Path, runs: list[dict[str, Any]]) -> Path:
    """RESULTS/summary.json (docs/formats.md); `runs` is every run of the folder (see `outdir.merge_runs`). A run
    whose regime cannot be decided (`regime_notes`) says why in `not_ranked`; one that a newer submission of the same
    team replaces (its `replaces:`) names it in `superseded_by` (`harness.batch.history`)."""
    from harness.batch.history import mark_superseded

    mark_superseded(runs)  # a newer version of the team's submission (`replaces:`) takes its place on the board
    notes = regime_notes(config, runs)
    for r in runs:
        r.pop("not_ranked", None)
        if (note := notes.get((str(r.get("submission")), str(r.get("dataset"))))) is not None:
            r["not_ranked"] = note
    summary = {"task": config.task, "harness_version": __version__, "config_sha256": config.sha256,
               "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "runs": sorted(runs, key=lambda r: (r["submission"], r["dataset"]))}
    path = layout.ResultsDir(output).summary
    write_json(path, summary, default=str)
    return path
