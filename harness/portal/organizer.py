"""The organizer's actions, under `/api/v1/admin` (the organizer's token only; to a team every such URL is 404):
re-queue a job (evaluated anew on the same folder, so on the same image digest), withdraw or disqualify a
submission with a reason (the audit log keeps it; nothing is deleted), freeze a phase, choose a team's primary per
track, run a phase on each team's primaries, reveal a phase (the site rendered into STATE/site, served at /board),
and read the audit log. Every action is written to the audit log with who did it. Each action is a function
here, called by its JSON handler and by the organizer's pages (`admin_pages`) alike."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import tornado.web

from harness.portal.app import Api, ApiError, Portal, describe, owned
from harness.portal.lifecycle import ACTIVE, JobState, can_move
from harness.portal.phases import Phase
from harness.portal.store import SubmissionRecord
from harness.portal.teams import ORGANIZER

#: the one line refusing a withdrawal without a reason (the API's; the page passes its own)
NO_REASON = "a withdrawal needs a reason (\"reason\": \"...\"), kept in the audit log"


def phase_named(portal: Portal, name: str) -> Phase:
    """The campaign's phase `name`; 404 with the one line naming the known phases."""
    try:
        return portal.campaign.settings.phase(name)
    except Exception as exc:  # ConfigError: one line naming the known phases
        raise ApiError(404, str(exc)) from None


def requeue(portal: Portal, job_id: str) -> SubmissionRecord:
    """Queue an ended job again (evaluated anew on the same folder); its submission. 404 for no such job, 409 for
    one not ended."""
    job = portal.store.job(job_id)
    if job is None:
        raise ApiError(404, f"no job {job_id[:80]!r}")
    if not can_move(job.state, JobState.QUEUED) or job.state in ACTIVE:
        raise ApiError(409, f"job {job.id} is {job.state}: only an ended job is queued again")
    portal.store.move(job.id, JobState.QUEUED, who=ORGANIZER, reason="re-queued by the organizer")
    portal.queue.wake()
    return owned(portal, job.submission, ORGANIZER)


def withdraw(portal: Portal, submission_id: str, reason: str, disqualify: bool,
             missing: str = NO_REASON) -> SubmissionRecord:
    """Withdraw (or disqualify) a submission with its reason (400 with `missing` for none); its unfinished jobs
    are stopped, nothing is deleted."""
    reason = reason.strip()
    if not reason:
        raise ApiError(400, missing)
    sub = owned(portal, submission_id, ORGANIZER)
    for job in portal.store.jobs(sub.id, states=(JobState.QUEUED, *ACTIVE)):
        portal.queue.cancel(job, ORGANIZER)  # one at work ends withdrawn when its evaluation stops
    portal.store.withdraw(sub.id, ORGANIZER, reason, disqualify)
    return sub


def freeze(portal: Portal, name: str) -> Phase:
    """Freeze a phase: it takes no more submissions."""
    phase = phase_named(portal, name)
    portal.store.mark_phase(phase.name, "frozen", ORGANIZER)
    return phase


def choose_primary(portal: Portal, submission_id: str) -> SubmissionRecord:
    """Make a submission its team's primary on its track."""
    sub = owned(portal, submission_id, ORGANIZER)
    portal.store.set_primary(sub.team, sub.track, sub.id, ORGANIZER)
    return sub


def run_phase(portal: Portal, name: str) -> tuple[Phase, dict[str, list[str]]]:
    """Queue the phase's datasets on each team's primary per track (`primaries`); the jobs queued per
    submission."""
    phase = phase_named(portal, name)
    queued = {sub: portal.store.add_jobs(sub, phase.datasets, ORGANIZER) for sub in primaries(portal).values()}
    portal.queue.wake()
    return phase, queued


def primaries(portal: Portal) -> dict[tuple[str, str], str]:
    """Each team's primary per track: the organizer's choice, else its newest submission with a scored job."""
    store = portal.store
    chosen = dict(store.primaries())
    for sub in store.submissions():  # newest first
        if (sub.team, sub.track) in chosen or store.withdrawn(sub.id)[0] is not None:
            continue
        if any(j.state == JobState.SCORED for j in store.jobs(sub.id)):
            chosen[(sub.team, sub.track)] = sub.id
    return chosen


async def reveal(portal: Portal, name: str) -> tuple[Phase, str]:
    """Mark the phase revealed and render the site from STATE/results into STATE/site (anew; off the IOLoop, so
    the portal answers meanwhile), published at /board; the leaderboard's last line."""
    phase = phase_named(portal, name)
    portal.store.mark_phase(phase.name, "revealed", ORGANIZER)
    line = await asyncio.get_running_loop().run_in_executor(None, render_site, portal)
    return phase, line


def refresh_public_board(portal: Portal, dataset: str) -> None:
    """After an evaluation of `dataset`: render the public site again when that dataset's results are public."""
    if dataset in published_datasets(portal):
        render_site(portal)


def published_datasets(portal: Portal) -> frozenset[str]:
    """The datasets whose runs the public site may show: those of phases revealed or whose results are public."""
    return frozenset(d for p in portal.campaign.settings.phases
                     if p.results == "public" or portal.store.phase_marks(p.name)[1] is not None for d in p.datasets)


def audit_entries(portal: Portal) -> list[dict[str, Any]]:
    """The audit log, oldest first."""
    return [{"at": at, "who": who, "action": action, "detail": detail}
            for at, who, action, detail in portal.store.audit_log()]


class Admin(Api):
    """An organizer's action: 404 for anyone else."""

    def prepare(self) -> None:
        super().prepare()
        self.organizer_only()


class RequeueJob(Admin):
    def post(self, job_id: str) -> None:
        self.json(describe(self.portal, requeue(self.portal, job_id), ORGANIZER))


class Withdraw(Admin):
    def post(self, submission_id: str) -> None:
        body = self.body_json()
        sub = withdraw(self.portal, submission_id, str(body.get("reason") or ""), bool(body.get("disqualify")))
        self.json(describe(self.portal, sub, ORGANIZER))


class FreezePhase(Admin):
    def post(self, name: str) -> None:
        self.json({"phase": freeze(self.portal, name).name, "frozen": True})


class Primary(Admin):
    def post(self) -> None:
        sub = choose_primary(self.portal, str(self.body_json().get("submission") or ""))
        self.json({"team": sub.team, "track": sub.track, "primary": sub.id})


class RunPhase(Admin):
    """Queue the phase's datasets on each team's primary per track (chosen, else its newest submission with a
    scored job that is not withdrawn)."""

    def post(self, name: str) -> None:
        phase, queued = run_phase(self.portal, name)
        self.json({"phase": phase.name, "queued": {sub: len(jobs) for sub, jobs in queued.items()}})


class Reveal(Admin):
    """Render the site from STATE/results into STATE/site (anew) and publish it at /board."""

    async def post(self, name: str) -> None:
        phase, line = await reveal(self.portal, name)
        self.json({"phase": phase.name, "revealed": True, "board": "/board/", "leaderboard": line})


def render_site(portal: Portal) -> str:
    """`harness leaderboard STATE/results --output STATE/site --overwrite --datasets ...` with the datasets the
    public may see (a phase still hidden names none of its runs there); its last line (one line if it fails)."""
    state = portal.campaign.state
    datasets = ",".join(sorted(published_datasets(portal))) or "-"
    proc = subprocess.run([sys.executable, "-m", "harness", "leaderboard", str(state / "results"), "--config",
                           str(portal.campaign.config.path), "--output", str(state / "site"), "--overwrite",
                           "--datasets", datasets], capture_output=True, text=True, timeout=3600)
    last = (proc.stdout.strip() or proc.stderr.strip()).splitlines()[-1:] or [""]
    if proc.returncode != 0:
        raise ApiError(500, f"the leaderboard could not be rendered: {last[0]}")
    return last[0]


class Audit(Admin):
    def get(self) -> None:
        self.json({"audit": audit_entries(self.portal)})


class RevealedSite(tornado.web.StaticFileHandler):
    """The public site: 404 until a phase is revealed or has public results."""

    def initialize(self, path: str, portal: Portal) -> None:  # type: ignore[override]
        super().initialize(path=path, default_filename="index.html")
        self.portal = portal

    def prepare(self) -> None:
        if not published_datasets(self.portal):  # nothing revealed, nothing public: there is no board yet
            raise tornado.web.HTTPError(404)


def routes(portal: Portal) -> list[Any]:
    kw = {"portal": portal}
    return [
        (r"/api/v1/admin/jobs/([A-Za-z0-9_-]+)/requeue", RequeueJob, kw),
        (r"/api/v1/admin/submissions/([A-Za-z0-9_-]+)/withdraw", Withdraw, kw),
        (r"/api/v1/admin/phases/([A-Za-z0-9_.-]+)/freeze", FreezePhase, kw),
        (r"/api/v1/admin/phases/([A-Za-z0-9_.-]+)/run", RunPhase, kw),
        (r"/api/v1/admin/phases/([A-Za-z0-9_.-]+)/reveal", Reveal, kw),
        (r"/api/v1/admin/primaries", Primary, kw),
        (r"/api/v1/admin/audit", Audit, kw),
        (r"/board/(.*)", RevealedSite, {"path": str(Path(portal.campaign.state) / "site"), "portal": portal}),
    ]
