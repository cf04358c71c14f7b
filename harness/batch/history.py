"""Resubmissions: a submission's earlier results are kept, never overwritten, and the board shows its newest.

Two ways a team hands in a new version of a system:

- **the same submission folder** with a new image or new logs, evaluated again into the same results folder
  (`--resume`: the run's key changed; `--overwrite`): before the new run starts, the finished run of the old version
  moves to `RESULTS/<submission>/versions/<N>-<dataset>/` (everything it wrote, with the submission's manifest of
  then) and `RESULTS/<submission>/versions.json` gets a line for it: when it was evaluated and replaced, its status,
  what it ran (image digest or log sha256), its content key and its scores' file;
- **another submission folder** whose submission.yaml says `replaces: OLD-ID` (the team's earlier submission on
  the same track; several latency settings of one system are separate submissions, so the same team and system
  alone never make a new version): both stay in summary.json and the older one's lines carry `superseded_by` (the
  newer id; `mark_superseded`, run when summary.json is written). The significance files and the board leave
  superseded runs out; the newer submission's page lists them in its history.

An unfinished run (its run.json says so) was never evaluated: it starts over as before.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness import layout
from harness.errors import HarnessError
from harness.jsonio import read_json_or_none, write_json
from harness.runmeta import read_run_meta

__all__ = ["keep_previous", "mark_superseded", "read_versions", "finished_at", "now"]


def now() -> str:
    """The current UTC time as run.json and versions.json record it."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def read_versions(sub: layout.SubmissionDir) -> list[dict[str, Any]]:
    """The entries of RESULTS/<submission>/versions.json ([] when it does not exist); a HarnessError naming the
    file when it is not a list (rewriting it would lose versions)."""
    if not sub.versions.exists():
        return []
    data = read_json_or_none(sub.versions)
    if not isinstance(data, list):
        raise HarnessError(f"{sub.versions}: not a list of versions this harness wrote; move it away to continue")
    return [e for e in data if isinstance(e, dict)]


def _what_ran(entry: dict[str, Any]) -> dict[str, Any]:
    """What a run's manifest entry says it ran: the image digest, or a log submission's log (file, sha256)."""
    out: dict[str, Any] = {}
    if isinstance(entry.get("image_digest"), str):
        out["image_digest"] = entry["image_digest"]
    log = entry.get("log")
    if isinstance(log, dict) and isinstance(log.get("sha256"), str):
        out["log_sha256"] = log["sha256"]
    return out


def keep_previous(sub: layout.SubmissionDir, run: layout.RunDir, dataset: str) -> Path | None:
    """Before a run folder is redone: move a finished run to the submission's versions (its line added to
    versions.json) and return where it went; remove an unfinished one (None). Nothing there: None."""
    if not run.path.exists():
        return None
    try:
        meta = read_run_meta(run)
    except HarnessError:
        meta = {}
    if not meta.get("finished"):
        shutil.rmtree(run.path)
        return None
    versions = read_versions(sub)
    number = 1 + max((int(e["version"]) for e in versions if isinstance(e.get("version"), int)
                      and e.get("dataset") == dataset), default=0)  # versions count per dataset: 1-dev, 1-test
    target = sub.version_run(number, dataset)
    target.path.parent.mkdir(parents=True, exist_ok=True)
    run.path.rename(target.path)  # one rename of the folder: the old version is never half-moved
    if sub.manifest.is_file():
        shutil.copy2(sub.manifest, target.path / layout.MANIFEST)
    entry = given if isinstance(given := meta.get("manifest"), dict) else {}
    versions.append({
        "version": number, "dataset": dataset, "folder": str(target.path.relative_to(sub.path)),
        "finished_at": finished_at(run_meta=meta, path=target.run_meta), "replaced_at": now(),
        "status": meta.get("status"), "reason": meta.get("reason"), "partial": bool(meta.get("partial")),
        "content_key": meta.get("content_key"), **_what_ran(entry),
    })
    write_json(sub.versions, versions, ensure_ascii=False)
    return target.path


def finished_at(run_meta: dict[str, Any], path: Path) -> str | None:
    """When a run finished: its run.json's `finished_at`, else the time run.json was last written (older runs)."""
    given = run_meta.get("finished_at")
    if isinstance(given, str):
        return given
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).isoformat(timespec="seconds")
    except OSError:
        return None


def mark_superseded(runs: list[dict[str, Any]]) -> None:
    """Set `superseded_by` on the summary lines of every submission that a later one names in `replaces` (same team
    and track only: no one replaces another team's system); clear it elsewhere."""
    owner: dict[str, tuple[Any, Any]] = {}
    for r in runs:
        r.pop("superseded_by", None)
        owner.setdefault(str(r.get("submission")), (r.get("team"), r.get("track")))
    newer: dict[str, str] = {}
    for r in runs:
        old, new = r.get("replaces"), str(r.get("submission"))
        if isinstance(old, str) and old != new and owner.get(old) == (r.get("team"), r.get("track")):
            newer[old] = new
    for r in runs:
        if (by := newer.get(str(r.get("submission")))) is not None:
            r["superseded_by"] = by
