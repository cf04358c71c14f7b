"""Optional e-mail notifications (`portal.notify`, harness.portal.mail): when a job ends scored or failed, its
team's contacts (teams.yaml) get a mail saying so (the primary scores where the phase shows them to the team; for
a failure its class, its one line and the submission's page, which holds the build log and the client log's
tail); once a day at `digest_at` (UTC), and on demand (`POST /api/v1/admin/digest`), the organizer gets a digest.

Everything is sent from one thread (the outbox), never from the queue or the IOLoop: the queue's `after_batch`
only wakes it, and a mail that cannot be sent after a bounded retry is one line on standard error and an audit
entry. Which job ends were mailed is kept in the database (`Store.remember`: the end time and id of the last one
handled), so a portal started again mails each job end once; a job evaluated again ends anew and is mailed anew.
"""

from __future__ import annotations

import asyncio
import queue
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from harness.images.submission import DEFAULT_BUILD_TIMEOUT_S
from harness.portal.app import Api, ApiError, Portal, describe, results_visible
from harness.portal.lifecycle import ACTIVE, OUR_FAULT, JobState
from harness.portal.mail import RETRY_DELAYS_S, Mail, NotifySettings, deliver
from harness.portal.store import Job, SubmissionRecord
from harness.portal.teams import ORGANIZER, load_teams
from harness.run.deadlines import server_deadline_s

#: the last job end handled: "FINISHED_AT JOB_ID" (job ends are handled in that order)
JOBS_KEY = "notify:jobs-through"
#: the UTC day of the last daily digest ("YYYY-MM-DD"), so a restart does not send it twice
DIGEST_KEY = "notify:digest-day"
#: job ends older than this when the portal starts are not mailed (notifications turned on late, or back on)
LATE_S = 24 * 3600.0
#: the outbox looks for job ends this often even when nothing wakes it
POLL_S = 60.0
#: how long `POST /api/v1/admin/digest` waits for its mail to go out before it answers that it is on its way
DIGEST_ANSWER_S = 60.0
DAY_S = 24 * 3600.0


class Notifier:
    """The outbox: one thread that mails job ends, the daily digest and the digests asked for."""

    def __init__(self, portal: Portal, settings: NotifySettings, contacts: dict[str, tuple[str, ...]], *,
                 delays: tuple[float, ...] = RETRY_DELAYS_S, clock: Callable[[], float] = time.time) -> None:
        self.portal, self.settings, self.contacts = portal, settings, contacts
        self.delays, self.clock = delays, clock
        self.url = settings.url or ""
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._asks: queue.SimpleQueue[Future[dict[str, Any]]] = queue.SimpleQueue()
        self._mark: tuple[float, str] = (0.0, "")
        self._due = 0.0
        self._thread = threading.Thread(target=self._loop, name="portal-notify", daemon=True)

    def start(self, url: str) -> None:
        """Start the outbox; `url` is where the portal listens (the pages' address unless `notify.url` says)."""
        self.url = self.settings.url or url.rstrip("/")
        now = self.clock()
        self._mark = max(_read_mark(self.portal, now), (now - LATE_S, ""))
        self._due = next_digest(now, self.settings)
        self._thread.start()

    def wake(self) -> None:
        """Look for job ends now (the queue calls it after each evaluation)."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout=60)

    def ask_digest(self) -> Future[dict[str, Any]]:
        """The organizer's digest, now: what was sent (to, subject, text) and whether it went out."""
        asked: Future[dict[str, Any]] = Future()
        self._asks.put(asked)
        self._wake.set()
        return asked

    # ------------------------------------------------------------------------------------------ the loop

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._answer_asks()
            self._mail_job_ends()
            if self.clock() >= self._due:
                self._daily_digest()
            self._wake.wait(timeout=max(0.0, min(POLL_S, self._due - self.clock())))
            self._wake.clear()
        self._answer_asks()

    def _answer_asks(self) -> None:
        while True:
            try:
                asked = self._asks.get_nowait()
            except queue.Empty:
                return
            if asked.set_running_or_notify_cancel():
                try:
                    asked.set_result(self._send_digest(self.clock()))
                except Exception as exc:  # a digest that cannot be made is the organizer's answer, not our end
                    asked.set_exception(exc)

    def _mail_job_ends(self) -> None:
        for job in ended_since(self.portal, self._mark):
            if self._stop.is_set():
                return  # not marked: mailed after the next start
            sub = self.portal.store.submission(job.submission)
            to = self.contacts.get(job.team, ())
            if sub is not None and to:
                self._send(job_mail(self.portal, sub, job, to, self.url))
            self._mark = (float(job.finished_at or 0.0), job.id)
            self.portal.store.remember(JOBS_KEY, f"{self._mark[0]!r} {job.id}")

    def _daily_digest(self) -> None:
        now = self.clock()
        day = datetime.fromtimestamp(self._due, timezone.utc).strftime("%Y-%m-%d")
        self._due = next_digest(now, self.settings)
        if self.portal.store.remember(DIGEST_KEY, day) != day:
            self._send_digest(now)

    def _send_digest(self, now: float) -> dict[str, Any]:
        mail = digest_mail(self.portal, self.settings.organizer, self.url, now)
        error = self._send(mail) if mail.to else "no organizer addresses (portal.notify.organizer)"
        return {"to": list(mail.to), "subject": mail.subject, "text": mail.text, "sent": error is None,
                "error": error}

    def _send(self, mail: Mail) -> str | None:
        """Send `mail` with the bounded retry; a failure is one line on standard error and an audit entry."""
        error = deliver(self.settings, mail, self._stop, self.delays)
        if error is not None:
            line = f"mail about {mail.about} to {', '.join(mail.to)} not sent: {error}"
            print(f"harness portal: {line}", file=sys.stderr, flush=True)
            self.portal.store.audit("portal", "notify.failed", line)
        return error


def attach(portal: Portal, teams: Path) -> Notifier | None:
    """The notifier of a portal whose settings have `notify:` (None without), woken after each evaluation through
    the queue's `after_batch` (what was there before is still called)."""
    settings = portal.campaign.settings.notify
    if settings is None:
        return None
    notifier = Notifier(portal, settings, {t.id: t.contacts for t in load_teams(teams)})
    before = portal.queue.after_batch

    def after_batch(dataset: str) -> object:
        notifier.wake()
        return before(dataset) if before is not None else None

    portal.queue.after_batch = after_batch
    return notifier


def _read_mark(portal: Portal, now: float) -> tuple[float, str]:
    """The last job end handled; the first time, now (job ends from before notifications were on are not mailed)."""
    kept = portal.store.remember(JOBS_KEY, f"{now!r} ")
    if kept is None:
        return now, ""
    portal.store.remember(JOBS_KEY, kept)
    at, _, job_id = kept.partition(" ")
    try:
        return float(at), job_id
    except ValueError:
        return now, ""


def ended_since(portal: Portal, mark: tuple[float, str]) -> list[Job]:
    """The jobs that ended scored or failed after `mark` (end time, id), in that order."""
    ended = [j for j in portal.store.jobs(states=(JobState.SCORED, JobState.FAILED))
             if j.finished_at is not None and (j.finished_at, j.id) > mark]
    return sorted(ended, key=lambda j: (j.finished_at or 0.0, j.id))


def next_digest(now: float, settings: NotifySettings) -> float:
    """The first `digest_at` (UTC) after `now`."""
    today = datetime.fromtimestamp(now, timezone.utc).replace(hour=settings.digest_at.hour,
                                                              minute=settings.digest_at.minute, second=0,
                                                              microsecond=0)
    return (today if today.timestamp() > now else today + timedelta(days=1)).timestamp()


# ---------------------------------------------------------------------------------------------- what is said

def page_url(url: str, sub: SubmissionRecord) -> str:
    return f"{url}/team/submissions/{sub.id}"


def job_mail(portal: Portal, sub: SubmissionRecord, job: Job, to: tuple[str, ...], url: str) -> Mail:
    """The mail to a team about one job's end: scored (with its primary scores, or that they are hidden) or failed
    (its class, its one line, where to look)."""
    task = portal.campaign.config.task
    what = f"your submission {sub.id} (system {sub.system}, track {sub.track}, phase {sub.phase})"
    team = portal.store.team_name(sub.team) or sub.team
    if job.state == JobState.SCORED:
        subject, body = f"[{task}] {sub.id} scored on {job.dataset}", _scored(portal, sub, job, what)
    else:
        subject, body = f"[{task}] {sub.id} failed on {job.dataset}: {job.failure}", _failed(portal, sub, job, what)
    text = (f"Hello {team},\n\n{body}\n\nThe submission's page (sign in with your team's token):\n"
            f"{page_url(url, sub)}\n\n-- \nThe {task} portal, {url} (an automatic mail)\n")
    return Mail(to, subject, text, f"{sub.id} on {job.dataset} ({job.state.value})")


def _scored(portal: Portal, sub: SubmissionRecord, job: Job, what: str) -> str:
    if not results_visible(portal, sub, job.dataset, sub.team):
        phase = next((p.name for p in portal.campaign.settings.phases if job.dataset in p.datasets), sub.phase)
        return (f"{what} was scored on {job.dataset}. Its results are hidden until the organizer reveals phase "
                f"{phase}.")
    item: dict[str, Any] = next((j for j in describe(portal, sub, sub.team)["jobs"] if j["id"] == job.id), {})
    scores = item.get("scores") or {}
    track = portal.campaign.config.track(sub.track)
    primary = [(name, scores.get(name)) for name in (track.primary_quality, track.primary_latency)]
    lines = "\n".join(f"  {name} {value:.2f}" for name, value in primary if isinstance(value, (int, float)))
    return (f"{what} was scored on {job.dataset}:\n\n{lines or '  (no primary score found)'}\n\nEvery score is "
            f"on its page.")


def _failed(portal: Portal, sub: SubmissionRecord, job: Job, what: str) -> str:
    counts = ("It failed through the organizer's fault: it counts against none of your limits." if job.failure
              in OUR_FAULT else "It counts against your phase's cap on failures, not against your submissions.")
    # the team's own file names, and none of the organizer's folders
    reason = portal.hosts.text((job.reason or "(none given)").replace(f"{sub.folder}/", ""))
    return (f"{what} failed on {job.dataset}.\n\n  failure: {job.failure}\n  reason: {reason}\n\n{counts}\n"
            f"Where to look: the build log and the client log's last lines are on the submission's page\n"
            f"below (and at GET /api/v1/submissions/{job.submission}/logs with your token).")


def at_most_s(portal: Portal) -> float:
    """How long a job may be at work before it is stuck, by the task config's limits: a build, a fetch, a
    `prepare:` step, then the run's own deadline (its start and total timeout)."""
    limits = portal.campaign.config.limits
    return DEFAULT_BUILD_TIMEOUT_S + limits.fetch_timeout_s + limits.prepare_timeout_s + server_deadline_s(limits)


def digest_mail(portal: Portal, organizer: tuple[str, ...], url: str, now: float) -> Mail:
    """The organizer's digest: each team's submissions of the last day, its failures by class, the jobs queued
    now, and any job at work for longer than the limits allow."""
    task, since, jobs = portal.campaign.config.task, now - DAY_S, portal.store.jobs()
    lines = [f"The {task} portal, {url}: the day to {_utc(now)}.", "", *_submitted(portal, jobs, since), "",
             *_failures(jobs, since), "", *_queued(jobs), "", *_stuck(jobs, at_most_s(portal), now)]
    return Mail(organizer, f"[{task}] portal digest {_utc(now)[:10]}", "\n".join(lines) + "\n",
                f"the digest of {_utc(now)}")


def _submitted(portal: Portal, jobs: list[Job], since: float) -> list[str]:
    store = portal.store
    by_sub: dict[str, list[Job]] = {}
    for job in jobs:
        by_sub.setdefault(job.submission, []).append(job)
    subs = [s for s in store.submissions() if s.created_at >= since]
    lines = [f"Submissions in the last day: {len(subs)}"]
    for team in (t for t in store.team_ids() if t != ORGANIZER):
        mine = [s for s in subs if s.team == team]
        shown = "; ".join(f"{s.id} ({_states(by_sub.get(s.id, []))})" for s in mine[:20])
        more = f" and {len(mine) - 20} more" if len(mine) > 20 else ""
        lines.append(f"  {team} ({store.team_name(team) or team}): {len(mine)}" + (f": {shown}{more}" if shown else ""))
    return lines


def _failures(jobs: list[Job], since: float) -> list[str]:
    failed = [j for j in jobs if j.state == JobState.FAILED and (j.finished_at or 0.0) >= since]
    lines = [f"Failures in the last day: {len(failed)}"]
    for failure in sorted({str(j.failure) for j in failed}):
        these = [j for j in failed if str(j.failure) == failure]
        lines.append(f"  {failure}: {len(these)}")
        lines += [f"    {j.submission} on {j.dataset}: {(j.reason or '')[:200]}" for j in these[:20]]
    return lines


def _queued(jobs: list[Job]) -> list[str]:
    queued = [j for j in jobs if j.state == JobState.QUEUED]
    oldest = f" (the oldest since {_utc(min(j.queued_at for j in queued))})" if queued else ""
    return [f"Jobs queued now: {len(queued)}{oldest}"]


def _stuck(jobs: list[Job], limit_s: float, now: float) -> list[str]:
    stuck = [j for j in jobs if j.state in ACTIVE and j.started_at is not None and now - j.started_at > limit_s]
    if not stuck:
        return [f"Stuck: none (no job at work for more than {_span(limit_s)}, what the limits allow)"]
    return [f"Stuck: {len(stuck)} job(s) at work for more than {_span(limit_s)}, what the limits allow:",
            *(f"  {j.id}: {j.submission} on {j.dataset}, {j.state.value} for {_span(now - (j.started_at or now))}"
              for j in stuck)]


def _states(jobs: list[Job]) -> str:
    return ", ".join(f"{j.dataset} {j.state.value}" + (f": {j.failure}" if j.failure else "") for j in jobs) or "-"


def _utc(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(at))


def _span(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes // 60} h {minutes % 60:02d} min"


# ------------------------------------------------------------------------------------------------- the route

class DigestNow(Api):
    """`POST /api/v1/admin/digest`: the organizer's digest sent now; the answer is what was sent."""

    def initialize(self, portal: Portal, notifier: Notifier | None = None) -> None:
        super().initialize(portal)
        self.notifier = notifier

    def prepare(self) -> None:
        super().prepare()
        self.organizer_only()

    async def post(self) -> None:
        if self.notifier is None:
            raise ApiError(409, "e-mail notifications are off: add a notify: block to the portal: section "
                                "(docs/portal.md)")
        asked = asyncio.wrap_future(self.notifier.ask_digest())
        done, _ = await asyncio.wait({asked}, timeout=DIGEST_ANSWER_S)
        if not done:
            self.json({"sent": None, "error": "queued behind other mail: it goes out when the SMTP server takes "
                                              "it"}, status=202)
            return
        self.json(asked.result())


def routes(portal: Portal, notifier: Notifier | None) -> list[Any]:
    return [(r"/api/v1/admin/digest", DigestNow, {"portal": portal, "notifier": notifier})]
