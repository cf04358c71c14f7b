"""The portal's web application: the JSON API under `/api/v1` (bearer tokens: the command line) and the pages
(a signed, secure, HTTP-only cookie after signing in with a token; every form carries tornado's XSRF token).

Authorization is checked per object: another team's submission, log or score answers 404, exactly as one that
does not exist. Every error is one line, `{"error": "..."}`, naming what is wrong.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tornado.web

from harness import layout
from harness.jsonio import read_json_or_none, write_text_atomic
from harness.portal.counters import counters, utc_now
from harness.portal.intake import Campaign, accept
from harness.portal.lifecycle import JobState
from harness.portal.queue import Queue
from harness.portal.store import Store, SubmissionRecord
from harness.portal.teams import ORGANIZER
from harness.portal.tokens import bearer
from harness.portal.uploads import UploadError, UploadHandler, UploadSettings
from leaderboard.hostpaths import HostPaths

COOKIE = "harness_portal"
#: failed sign-ins (bad tokens) one address may make per window before it must wait
FAILED_SIGNINS, FAILED_WINDOW_S = 20, 60.0
REFUSALS = {
    "unknown": "unknown token: check it, or ask the organizer for one (`harness portal token TEAM`)",
    "revoked": "revoked token: the organizer revoked it; ask for a new one",
    "expired": "expired token: ask the organizer for a new one (`harness portal token TEAM --rotate`)",
}


@dataclass
class SignInGuard:
    """Failed sign-ins per address in a sliding window (bounded memory: the oldest addresses are forgotten)."""

    limit: int = FAILED_SIGNINS
    window_s: float = FAILED_WINDOW_S
    clock: Any = time.monotonic
    failures: dict[str, deque[float]] = field(default_factory=dict)

    def wait_s(self, address: str) -> float:
        """Seconds `address` must wait before its next try (0: it may try now)."""
        seen = self.failures.get(address)
        if not seen:
            return 0.0
        now = self.clock()
        while seen and seen[0] <= now - self.window_s:
            seen.popleft()
        return 0.0 if len(seen) < self.limit else seen[0] + self.window_s - now

    def failed(self, address: str) -> None:
        if len(self.failures) > 10_000:
            self.failures.pop(next(iter(self.failures)))
        self.failures.setdefault(address, deque()).append(self.clock())


@dataclass
class RunsCache:
    """STATE/results/summary.json's runs by (submission, dataset), parsed again only when the file changes (it is
    megabytes in a campaign, and every listing reads it)."""

    key: tuple[int, int] | None = None
    runs: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, state: Path) -> dict[tuple[str, str], dict[str, Any]]:
        path = layout.ResultsDir(state / "results").summary
        try:
            info = path.stat()
            key: tuple[int, int] | None = (info.st_mtime_ns, info.st_size)
        except OSError:
            key = None
        with self.lock:
            if key != self.key:
                self.runs, self.key = _runs(state), key
            return self.runs


@dataclass
class Portal:
    """Everything the handlers share."""

    campaign: Campaign
    queue: Queue
    guard: SignInGuard = field(default_factory=SignInGuard)
    results: RunsCache = field(default_factory=RunsCache)
    #: the organizer's folders (state, config, data): cut from whatever a team is shown (answers, pages, mails)
    hosts: HostPaths = field(default_factory=HostPaths)

    @property
    def store(self) -> Store:
        return self.campaign.store


class ApiError(tornado.web.HTTPError):
    """An answer with its status and one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(status)
        self.message = message


def _who(handler: tornado.web.RequestHandler, portal: Portal) -> str:
    """The owner of the request's bearer token; 401 (one line) for none, or an unknown, revoked or expired one,
    429 while the address has failed too often."""
    return sign_in(portal, handler.request.remote_ip or "?", bearer(handler.request.headers.get("Authorization")),
                   "this needs a token: send `Authorization: Bearer TOKEN` (HARNESS_PORTAL_TOKEN for `harness submit`)")


def sign_in(portal: Portal, address: str, token: str | None, missing: str) -> str:
    """The owner of `token` (the API's bearer, the pages' sign-in form); 429 while `address` has failed too often,
    401 with `missing` for no token, 401 with its one line for an unknown, revoked or expired one (a failure)."""
    wait = portal.guard.wait_s(address)
    if wait > 0:
        raise ApiError(429, f"too many failed sign-ins from {address}: wait {wait:.0f} s")
    if token is None:
        raise ApiError(401, missing)
    check = portal.store.check_token(token)
    if check.owner is None:
        portal.guard.failed(address)
        raise ApiError(401, REFUSALS[check.refused or "unknown"])
    return check.owner


class Base(tornado.web.RequestHandler):
    """JSON answers and one-line errors."""

    def initialize(self, portal: Portal) -> None:
        self.portal = portal

    def set_default_headers(self) -> None:
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Content-Type-Options", "nosniff")

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        message = exc.message if isinstance(exc, ApiError) else self._reason
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": " ".join(str(message).split())}) + "\n")

    def json(self, data: Any, status: int = 200) -> None:
        """Answer `data`; to anyone but the organizer without the organizer's folders (a run's reason names the
        dataset's file on the organizer's machine)."""
        if getattr(self, "owner", "") != ORGANIZER:
            data = self.portal.hosts.value(data)
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(data, indent=1) + "\n")

    def body_json(self, limit: int = 64 * 1024) -> dict[str, Any]:
        """The request's JSON object (bounded; one line when it is not one)."""
        if len(self.request.body) > limit:
            raise ApiError(413, f"the request body is over {limit} bytes")
        try:
            data = json.loads(self.request.body or b"{}")
        except ValueError as exc:
            raise ApiError(400, f"the request body is not JSON ({exc})") from None
        if not isinstance(data, dict):
            raise ApiError(400, "the request body must be a JSON object")
        return data


class Api(Base):
    """An API handler: bearer tokens only (no cookie), so it needs no XSRF token."""

    owner = ""

    def check_xsrf_cookie(self) -> None:
        return None

    def prepare(self) -> None:
        self.owner = _who(self, self.portal)

    def own_submission(self, submission_id: str) -> SubmissionRecord:
        return owned(self.portal, submission_id, self.owner)

    def organizer_only(self) -> None:
        if self.owner != ORGANIZER:
            raise ApiError(404, f"no such page {self.request.path[:80]!r}")


class MeHandler(Api):
    def get(self) -> None:
        now = utc_now()
        phase = self.portal.campaign.settings.open_phase(now)
        body: dict[str, Any] = {"owner": self.owner, "phase": None, "counters": {}}
        settings = self.portal.campaign.settings
        if settings.registry is not None:  # where `harness submit` pushes an image, and the largest it takes
            body["registry"] = settings.registry
            body["max_image_gb"] = None if settings.max_image_bytes is None else settings.max_image_bytes / 1e9
        if phase is not None:
            body["phase"] = {"name": phase.name, "datasets": list(phase.datasets), "results": phase.results,
                             "closes": phase.closes.isoformat().replace("+00:00", "Z")}
            if self.owner != ORGANIZER:
                body["counters"] = {c.name: c.as_json() for c in counters(self.portal.store, self.owner, phase, now)}
        self.json(body)


class SubmissionsApi(Api):
    def get(self) -> None:
        store = self.portal.store
        subs = store.submissions(None if self.owner == ORGANIZER else self.owner)
        queued = queued_ids(self.portal)
        self.json({"submissions": [describe(self.portal, s, self.owner, queued) for s in subs]})


class SubmissionApi(Api):
    def get(self, submission_id: str) -> None:
        self.json(describe(self.portal, self.own_submission(submission_id), self.owner))


class UploadSubmissionApi(Api):
    """Which submission a finished upload became."""

    def get(self, upload_id: str) -> None:
        found = self.portal.store.upload_submission(upload_id, self.owner)
        if found is None:
            raise ApiError(404, f"no finished upload {upload_id[:80]!r}")
        self.json(describe(self.portal, self.own_submission(found), self.owner))


class LogsHandler(Api):
    """The build log and each dataset's client-log tail, even for a failure."""

    def get(self, submission_id: str) -> None:
        sub = self.own_submission(submission_id)
        self.json({"submission": sub.id, "logs": submission_logs(self.portal, sub)})


class CancelHandler(Api):
    def post(self, submission_id: str) -> None:
        sub = self.own_submission(submission_id)
        cancel(self.portal, sub, self.owner)
        self.json(describe(self.portal, sub, self.owner))


def owned(portal: Portal, submission_id: str, owner: str) -> SubmissionRecord:
    """`owner`'s submission `submission_id` (the organizer's: any); 404 for another team's or none."""
    sub = portal.store.submission(submission_id)
    if sub is None or (owner != ORGANIZER and sub.team != owner):
        raise ApiError(404, f"no submission {submission_id[:80]!r}")
    return sub


def submission_logs(portal: Portal, sub: SubmissionRecord) -> dict[str, str | None]:
    """The build log's tail and each dataset's client-log tail (`DATASET/client`), even for a failure."""
    folder = layout.ResultsDir(portal.campaign.state / "results").submission(sub.id)
    logs = {"build": _tail(folder.build_log)}
    for job in portal.store.jobs(sub.id):
        logs[f"{job.dataset}/client"] = _tail(folder.run(job.dataset).client_log)
    return logs


def cancel(portal: Portal, sub: SubmissionRecord, who: str) -> list[str]:
    """Cancel every job of `sub` not finished yet, by `who`; the jobs cancelled (409 when none was left)."""
    done = []
    for job in portal.store.jobs(sub.id, states=(JobState.QUEUED, JobState.BUILDING, JobState.RUNNING,
                                                  JobState.SCORING)):
        portal.queue.cancel(job, who)
        done.append(job.id)
    if not done:
        raise ApiError(409, f"submission {sub.id} has no job left to cancel")
    return done


def describe(portal: Portal, sub: SubmissionRecord, viewer: str, queued: list[str] | None = None) -> dict[str, Any]:
    """A submission as the API shows it to `viewer`: its jobs with state, queue position, progress, failure
    class and reason; scores where the phase lets the viewer see them. `queued`: the queued jobs' ids in order
    (read once for a whole listing)."""
    if queued is None:
        queued = queued_ids(portal)
    runs = portal.results.get(portal.campaign.state)
    jobs = []
    for job in portal.store.jobs(sub.id):
        item: dict[str, Any] = {"id": job.id, "dataset": job.dataset, "state": job.state.value,
                                "done": job.done, "total": job.total, "attempts": job.attempts}
        if job.state == JobState.QUEUED:
            item["position"] = queued.index(job.id) + 1
            item["waiting"] = waiting_reason(portal, sub.team, item["position"])
        if job.failure or job.reason:
            item["failure"], item["reason"] = job.failure, job.reason
        run = runs.get((sub.id, job.dataset))
        if run is not None and job.state == JobState.SCORED and results_visible(portal, sub, job.dataset, viewer):
            item["scores"] = {name: (value or {}).get("score") for name, value in (run.get("scores") or {}).items()
                              if isinstance(value, dict)}
        jobs.append(item)
    withdrawn, disqualified = portal.store.withdrawn(sub.id)
    return {"id": sub.id, "team": sub.team, "phase": sub.phase, "track": sub.track, "system": sub.system,
            "baseline": sub.team in portal.campaign.baseline_teams,
            "sha256": sub.sha256, "created_at": _iso(sub.created_at), "jobs": jobs,
            **({"withdrawn": withdrawn, "disqualified": disqualified} if withdrawn is not None else {})}


def queued_ids(portal: Portal) -> list[str]:
    """The queued jobs' ids, first in line first."""
    return [j.id for j in portal.store.jobs(states=(JobState.QUEUED,))]


def waiting_reason(portal: Portal, team: str, position: int) -> str:
    """Why a queued job has not started: nothing stays queued without a reason shown."""
    at_work = portal.queue.at_work()
    cap = portal.campaign.settings.runs_per_team
    if cap == 0:
        return "the organizer has paused evaluations (runs_per_team: 0)"
    if at_work.get(team, 0) >= cap:
        return f"your team has {at_work[team]} run(s) at work, at most {cap} at once"
    ahead = f"{position - 1} job(s) ahead of it" if position > 1 else "next"
    return f"{ahead}; the evaluation at work has {sum(at_work.values())} run(s)" if at_work else ahead


def results_visible(portal: Portal, sub: SubmissionRecord, dataset: str, viewer: str) -> bool:
    """Whether `viewer` may see the scores of `sub` on `dataset`: the organizer always; the team when the phase of
    that dataset shows results to the team or to everyone, or once the phase is revealed."""
    if viewer == ORGANIZER:
        return True
    settings = portal.campaign.settings
    phase = next((p for p in settings.phases if dataset in p.datasets), None) or settings.phase(sub.phase)
    return phase.results in ("team", "public") or portal.store.phase_marks(phase.name)[1] is not None


def _runs(state: Path) -> dict[tuple[str, str], dict[str, Any]]:
    summary = read_json_or_none(layout.ResultsDir(state / "results").summary)
    runs = summary.get("runs") if isinstance(summary, dict) else None
    return {(str(r.get("submission")), str(r.get("dataset"))): r for r in runs or [] if isinstance(r, dict)}


def _tail(path: Path, limit: int = 16 * 1024) -> str | None:
    try:
        with path.open("rb") as f:
            f.seek(max(0, path.stat().st_size - limit))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return None


def _iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


class PortalUploads(UploadHandler):
    """The tus endpoint with the portal's bearer tokens (no cookie: no XSRF token)."""

    def check_xsrf_cookie(self) -> None:
        return None


def upload_settings(portal: Portal) -> UploadSettings:
    """Uploads owned by their bearer's team; a finished one becomes a submission (or its one line, 422)."""
    campaign = portal.campaign

    def identify(handler: tornado.web.RequestHandler) -> str:
        try:
            owner = _who(handler, portal)
        except ApiError as exc:
            raise UploadError(exc.status_code, exc.message) from None
        if owner == ORGANIZER:
            raise UploadError(403, "the organizer's token submits nothing: use a team's token")
        return owner

    async def complete(part: Path, metadata: Any, owner: str) -> None:
        # checking and extracting a large archive takes a while: off the IOLoop, so other requests go on
        checked = metadata.get("sha256")  # the upload checked the whole file against it
        sub = await asyncio.get_running_loop().run_in_executor(None, accept, campaign, part, owner, utc_now(),
                                                                checked)
        portal.store.link_upload(part.stem, owner, sub.id)
        portal.queue.wake()

    return UploadSettings(staging=campaign.state / "uploads", identify=identify, on_complete=complete,
                          max_size=campaign.settings.max_upload_bytes,
                          expires_after=float(campaign.settings.upload_expires_s))


def make_app(portal: Portal, cookie_secret: str, extra: list[Any] | None = None) -> tornado.web.Application:
    """The portal's routes."""
    kw = {"portal": portal}
    uploads = {"settings": upload_settings(portal)}
    routes: list[Any] = [
        (r"/api/v1/me", MeHandler, kw),
        (r"/api/v1/uploads/?()", PortalUploads, uploads),
        (r"/api/v1/uploads/([A-Za-z0-9_-]+)", PortalUploads, uploads),
        (r"/api/v1/uploads/([A-Za-z0-9_-]+)/submission", UploadSubmissionApi, kw),
        (r"/api/v1/submissions", SubmissionsApi, kw),
        (r"/api/v1/submissions/([A-Za-z0-9_-]+)", SubmissionApi, kw),
        (r"/api/v1/submissions/([A-Za-z0-9_-]+)/logs", LogsHandler, kw),
        (r"/api/v1/submissions/([A-Za-z0-9_-]+)/cancel", CancelHandler, kw),
        *(extra or []),
    ]
    return tornado.web.Application(routes, cookie_secret=cookie_secret, xsrf_cookies=True,
                                   default_handler_class=NotFound, default_handler_args=kw,
                                   upload_settings=uploads["settings"])


class NotFound(Base):
    def prepare(self) -> None:
        raise ApiError(404, f"no such page {self.request.path[:80]!r}")


def cookie_secret(state: Path) -> str:
    """The secret that signs the portal's cookies: made once, kept in STATE (only its owner may read it)."""
    path = state / "cookie-secret"
    if not path.is_file():
        old = os.umask(0o077)  # only the portal's user may read it
        try:
            write_text_atomic(path, secrets.token_urlsafe(48), mkdir=True)
        finally:
            os.umask(old)
    return path.read_text(encoding="utf-8").strip()
