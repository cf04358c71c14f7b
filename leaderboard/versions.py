"""A submission's versions, as the results folder keeps them (`harness.batch.history`): the board shows the newest
version; its page lists every version on the same dataset (the runs a re-evaluation of its folder kept, and the
submissions it `replaces`, with theirs), oldest first, each with what it ran (image digest or log sha256), when it
was evaluated, its primary scores and what changed from the version before it. Superseded runs (`superseded_by` in
summary.json) are on no board.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import layout
from harness.errors import HarnessError
from harness.jsonio import read_json_or_none
from harness.runmeta import read_run_meta
from leaderboard.model import Board, Results, Run, as_float
from leaderboard.safe import cap

__all__ = ["Version", "versions_of"]


@dataclass
class Version:
    """One version of a submission on one dataset."""

    submission: str
    label: str
    evaluated_at: str
    ran: str  # `image sha256:…` or `log sha256:…` ("" when not recorded)
    status: str
    scores: dict[str, Any]
    current: bool = False
    changes: list[str] = field(default_factory=list)

    def score(self, key: str) -> float | None:
        rec = self.scores.get(key)
        return as_float(rec.get("score")) if isinstance(rec, dict) else None

    def ci(self, key: str) -> tuple[float, float] | None:
        rec = self.scores.get(key)
        ci = rec.get("ci95") if isinstance(rec, dict) else None
        if isinstance(ci, list) and len(ci) == 2 and all(as_float(v) is not None for v in ci):
            return (float(ci[0]), float(ci[1]))
        return None


def _ran(entry: dict[str, Any]) -> str:
    if isinstance(entry.get("image_digest"), str):
        return f"image {cap(entry['image_digest'])}"
    log = given if isinstance(given := entry.get("log"), dict) else {}
    sha = entry.get("log_sha256") or log.get("sha256")
    return f"log {cap(sha)}" if isinstance(sha, str) else ""


def _scores(path: Path) -> dict[str, Any]:
    data = read_json_or_none(path) if path.is_file() else None
    return data if isinstance(data, dict) else {}


def _live(run: Run, label: str, current: bool) -> Version:
    """A run of summary.json as a version (when it finished and what it ran: its run.json)."""
    from harness.batch.history import finished_at

    meta: dict[str, Any] = {}
    when = ""
    if run.run_dir is not None:
        folder = layout.RunDir(run.run_dir)
        try:
            meta = read_run_meta(folder)
        except HarnessError:
            meta = {}
        when = (finished_at(meta, folder.run_meta) or "") if folder.run_meta.exists() else ""
    entry = given if isinstance(given := meta.get("manifest"), dict) else {}
    return Version(run.key, label, when, _ran(entry), run.status, run.scores, current)


def _archived(root: Path, submission: str, dataset: str) -> list[Version]:
    """The kept earlier versions of `submission` on `dataset` (its versions.json)."""
    from harness.batch.history import read_versions

    if "/" in submission + dataset or ".." in submission + dataset:  # names from summary.json stay inside RESULTS
        return []
    sub = layout.ResultsDir(root).submission(submission)
    try:
        entries = read_versions(sub)
    except HarnessError:
        return []
    out = []
    for e in entries:
        if e.get("dataset") != dataset or not isinstance(e.get("version"), int):
            continue
        folder = sub.version_run(e["version"], dataset)
        out.append(Version(submission, f"{cap(submission)} v{e['version']}", cap(str(e.get("finished_at") or "")),
                           _ran(e), cap(str(e.get("status") or "")), _scores(folder.scores)))
    return out


def _changes(before: Version, after: Version, metrics: list[str]) -> list[str]:
    """What changed from `before` to `after`: what ran, and each primary score."""
    out = []
    if after.ran != before.ran:
        out.append("new image" if after.ran.startswith("image") else "new log" if after.ran else "changed")
    elif after.ran:
        out.append("same " + after.ran.split(" ")[0])
    for key in metrics:
        a, b = before.score(key), after.score(key)
        if a is not None and b is not None:
            out.append(f"{key} {b - a:+.2f}")
    return out


def _earlier(summary: dict[str, Any], key: str) -> set[str]:
    """The submissions a chain of `superseded_by` leads from to `key` (its earlier versions in other folders)."""
    newer = {str(r.get("submission")): str(r["superseded_by"]) for r in summary.get("runs") or []
             if isinstance(r, dict) and isinstance(r.get("superseded_by"), str)}
    out: set[str] = set()
    for sub in newer:
        seen, at = {sub}, newer[sub]
        while at != key and at in newer and at not in seen:
            seen.add(at)
            at = newer[at]
        if at == key:
            out.add(sub)
    return out


def versions_of(results: Results, board: Board, run: Run) -> list[Version]:
    """Every version of `run` on its dataset (its own kept runs and the submissions it replaces), oldest first, the
    run itself last (`current`); [] when it has no earlier version."""
    earlier = _earlier(results.summary, run.key)
    others = [r for r in results.runs if r.key in earlier and r.dataset == run.dataset]
    versions: list[Version] = []
    for r in others:
        versions += _archived(results.root, r.key, run.dataset)
        versions.append(_live(r, r.key, False))
    versions += _archived(results.root, run.key, run.dataset)
    if not versions:
        return []
    versions.sort(key=lambda v: v.evaluated_at)
    versions.append(_live(run, f"{run.key} (on the board)", True))
    metrics = [board.primary_quality, board.primary_latency]
    for before, after in zip(versions, versions[1:], strict=False):
        after.changes = _changes(before, after, metrics)
    return versions
