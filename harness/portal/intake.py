"""A finished upload becomes a submission: the archive's members are checked before anything is extracted, the
folder is checked as `harness check` checks it, an image it names in the organizer's registry must be the team's
and be there (harness.portal.pinned), the phase must be open and the team's limits not reached; only then is the
folder moved into `STATE/submissions/ID` (atomically) and its jobs queued. Anything wrong is one line for the
team, and nothing of theirs is kept."""

from __future__ import annotations

import secrets
import shutil
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from harness.config import TaskConfig
from harness.digest import sha256_file
from harness.errors import HarnessError
from harness.images.checks import check_submission
from harness.portal.archive import ArchiveLimits, extract_checked
from harness.portal.counters import counters
from harness.portal.phases import Phase, PortalSettings
from harness.portal.pinned import check_pinned
from harness.portal.store import Store, SubmissionRecord

MAX_YAML_BYTES = 256 * 1024
#: an archive may unpack to this many times the upload cap (beyond: a decompression bomb, refused while reading)
UNPACKED_PER_UPLOAD = 4
_accepting = threading.Lock()  # limits are checked and the submission recorded as one step


@dataclass(frozen=True)
class Campaign:
    """What intake needs: the store, the state folder, the task config and the portal's settings."""

    store: Store
    state: Path
    config: TaskConfig
    settings: PortalSettings
    baseline_teams: frozenset[str] = frozenset()  # teams.yaml's `baseline: true` teams


def accept(campaign: Campaign, archive: Path, team: str, now: datetime, sha256: str | None = None) -> SubmissionRecord:
    """Check `archive` (a tar.gz of a submission folder uploaded by `team`) and record it as a submission of the
    phase open at `now`, or raise a HarnessError with one line. `sha256`: the archive's, when the upload has
    checked it already (else it is computed)."""
    phase = campaign.settings.open_phase(now)
    if phase is None:
        raise HarnessError(_closed_line(campaign.settings, now))
    if campaign.store.phase_marks(phase.name)[0] is not None:
        raise HarnessError(f"phase {phase.name} is frozen by the organizer: it takes no more submissions")
    incoming = campaign.state / "submissions" / f".incoming-{secrets.token_hex(8)}"
    try:
        return _accept(campaign, archive, team, now, phase, incoming, sha256)
    except HarnessError as exc:  # the team sees its own file names, never a folder of the organizer's
        raise HarnessError(_without_folder(str(exc).replace(str(archive), "the upload"), incoming)) from None
    finally:
        shutil.rmtree(incoming, ignore_errors=True)


def _without_folder(line: str, incoming: Path) -> str:
    """`line` with the paths under `incoming` made relative to the submission folder."""
    for prefix in sorted({str(p) for p in (incoming, *incoming.glob("*"))}, key=len, reverse=True):
        line = line.replace(prefix + "/", "").replace(prefix, ".")
    return line


def _accept(campaign: Campaign, archive: Path, team: str, now: datetime, phase: Phase, incoming: Path,
            sha256: str | None) -> SubmissionRecord:
    extract_checked(archive, incoming, ArchiveLimits(max_unpacked=UNPACKED_PER_UPLOAD *
                                                     campaign.settings.max_upload_bytes))
    folder = _submission_root(incoming)
    size = (folder / "submission.yaml").stat().st_size
    if size > MAX_YAML_BYTES:  # read within bounds: the YAML reader holds a file whole
        raise HarnessError(f"submission.yaml: {size} bytes; at most {MAX_YAML_BYTES // 1024} KiB")
    report = check_submission(folder, campaign.config, use_docker=False)
    if not report.ok:
        errors = report.errors
        more = f" (and {len(errors) - 1} more: run `harness check` on the folder)" if len(errors) > 1 else ""
        raise HarnessError(f"{errors[0].message}{more}")
    sub = report.submission
    assert sub is not None
    names = {team, *(t for t in [_team_name(campaign.store, team)] if t)}
    if sub.team not in names:
        raise HarnessError(f"submission.yaml: team: {sub.team!r} is not your team ({team!r})")
    if sub.build.image_ref is not None:  # in the portal's registry, the team's own, there, within the cap
        check_pinned(campaign.settings, campaign.state, sub.build.image_ref, team)
    with _accepting:
        full = [c for c in counters(campaign.store, team, phase, now) if c.reached]
        if full:
            raise HarnessError(f"phase {phase.name}: limit reached: {full[0].line()}")
        digest = sha256 or sha256_file(archive)
        sub_id = _baseline_id(campaign, team, sub.track) or f"{team}-{secrets.token_hex(6)}"
        target = campaign.state / "submissions" / sub_id
        folder.rename(target)
        return campaign.store.add_submission(team, phase.name, sub.track, sub.system, str(target), digest,
                                             phase.datasets, submission_id=sub_id)


def _baseline_id(campaign: Campaign, team: str, track: str) -> str | None:
    """A baseline team's first submission on a track whose config names a baseline takes that id, so the board
    marks it and norms against it (`tracks[].baseline`)."""
    named = next((t.baseline for t in campaign.config.tracks if t.name == track), None)
    if team in campaign.baseline_teams and named and campaign.store.submission(named) is None:
        return named
    return None


def _submission_root(extracted: Path) -> Path:
    """The folder holding submission.yaml: the archive's top, or its one top-level folder."""
    if (extracted / "submission.yaml").is_file():
        return extracted
    inner = [p for p in extracted.iterdir() if p.is_dir()]
    if len(inner) == 1 and (inner[0] / "submission.yaml").is_file():
        return inner[0]
    raise HarnessError("the upload holds no submission.yaml (at its top, or in its one folder)")


def _team_name(store: Store, team: str) -> str | None:
    return store.team_name(team)


def _closed_line(settings: PortalSettings, now: datetime) -> str:
    upcoming = sorted((p for p in settings.phases if p.opens > now), key=lambda p: p.opens)
    if upcoming:
        return f"no phase is open now: {upcoming[0].name} opens {upcoming[0].opens:%Y-%m-%d %H:%M} UTC"
    return "no phase is open now: every phase has closed"
