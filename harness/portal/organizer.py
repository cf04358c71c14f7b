"""The organizer's actions, under `/api/v1/admin` (the organizer's token only; to a team every such URL is 404):
re-queue a job (evaluated anew on the same folder, so on the same image digest), withdraw or disqualify a
submission with a reason (the audit log keeps it; nothing is deleted), freeze a phase, choose a team's primary per
track, run a phase on each team's primaries, reveal a phase (the site rendered into STATE/site, served at /board),
and read the audit log. Every action is written to the audit log with who did it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import tornado.web

from harness.portal.app import Api, ApiError, Portal, describe, owned
from harness.portal.lifecycle import ACTIVE, JobState, can_move
from harness.portal.teams import ORGANIZER


class Admin(Api):
    """An organizer's action: 404 for anyone else."""

    def prepare(self) -> None:
        super().prepare()
        self.organizer_only()

    def phase_named(self, name: str) -> Any:
        try:
            return self.portal.campaign.settings.phase(name)
        except Exception as exc:  # ConfigError: one line naming the known phases
            raise ApiError(404, str(exc)) from None


class RequeueJob(Admin):
    def post(self, job_id: str) -> None:
        job = self.portal.store.job(job_id)
        if job is None:
            raise ApiError(404, f"no job {job_id[:80]!r}")
        if not can_move(job.state, JobState.QUEUED) or job.state in ACTIVE:
            raise ApiError(409, f"job {job.id} is {job.state}: only an ended job is queued again")
        self.portal.store.move(job.id, JobState.QUEUED, who=ORGANIZER, reason="re-queued by the organizer")
        self.portal.queue.wake()
        self.json(describe(self.portal, owned(self.portal, job.submission, ORGANIZER), ORGANIZER))


class Withdraw(Admin):
    def post(self, submission_id: str) -> None:
        body = self.body_json()
        reason = str(body.get("reason") or "").strip()
        if not reason:
            raise ApiError(400, "a withdrawal needs a reason (\"reason\": \"...\"), kept in the audit log")
        sub = owned(self.portal, submission_id, ORGANIZER)
        for job in self.portal.store.jobs(sub.id, states=(JobState.QUEUED, *ACTIVE)):
            self.portal.queue.cancel(job, ORGANIZER)  # one at work ends withdrawn when its evaluation stops
        self.portal.store.withdraw(sub.id, ORGANIZER, reason, bool(body.get("disqualify")))
        self.json(describe(self.portal, sub, ORGANIZER))


class FreezePhase(Admin):
    def post(self, name: str) -> None:
        phase = self.phase_named(name)
        self.portal.store.mark_phase(phase.name, "frozen", ORGANIZER)
        self.json({"phase": phase.name, "frozen": True})


class Primary(Admin):
    def post(self) -> None:
        body = self.body_json()
        sub = owned(self.portal, str(body.get("submission") or ""), ORGANIZER)
        self.portal.store.set_primary(sub.team, sub.track, sub.id, ORGANIZER)
        self.json({"team": sub.team, "track": sub.track, "primary": sub.id})


class RunPhase(Admin):
    """Queue the phase's datasets on each team's primary per track (chosen, else its newest submission with a
    scored job that is not withdrawn)."""

    def post(self, name: str) -> None:
        phase = self.phase_named(name)
        chosen = primaries(self.portal)
        queued = {sub: self.portal.store.add_jobs(sub, phase.datasets, ORGANIZER) for sub in chosen.values()}
        self.portal.queue.wake()
        self.json({"phase": phase.name, "queued": {sub: len(jobs) for sub, jobs in queued.items()}})


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


class Reveal(Admin):
    """Render the site from STATE/results into STATE/site (anew) and publish it at /board."""

    def post(self, name: str) -> None:
        phase = self.phase_named(name)
        line = render_site(self.portal)
        self.portal.store.mark_phase(phase.name, "revealed", ORGANIZER)
        self.json({"phase": phase.name, "revealed": True, "board": "/board/", "leaderboard": line})


def render_site(portal: Portal) -> str:
    """`harness leaderboard STATE/results --output STATE/site --overwrite`; its last line (one line if it fails)."""
    state = portal.campaign.state
    proc = subprocess.run([sys.executable, "-m", "harness", "leaderboard", str(state / "results"), "--config",
                           str(portal.campaign.config.path), "--output", str(state / "site"), "--overwrite"],
                          capture_output=True, text=True, timeout=3600)
    last = (proc.stdout.strip() or proc.stderr.strip()).splitlines()[-1:] or [""]
    if proc.returncode != 0:
        raise ApiError(500, f"the leaderboard could not be rendered: {last[0]}")
    return last[0]


class Audit(Admin):
    def get(self) -> None:
        self.json({"audit": [{"at": at, "who": who, "action": action, "detail": detail}
                             for at, who, action, detail in self.portal.store.audit_log()]})


class RevealedSite(tornado.web.StaticFileHandler):
    """The revealed site: 404 until a phase has been revealed."""

    def initialize(self, path: str, portal: Portal) -> None:  # type: ignore[override]
        super().initialize(path=path, default_filename="index.html")
        self.portal = portal

    def prepare(self) -> None:
        settings = self.portal.campaign.settings
        if not any(self.portal.store.phase_marks(p.name)[1] for p in settings.phases):
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
