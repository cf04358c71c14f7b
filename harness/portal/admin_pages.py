"""The organizer's pages: `/admin` shows every team's submissions (newest first) with each job's state, progress
and failure (the API's `describe()`), withdrawals and disqualifications with their reasons, each team's primary
per track, the phases with their times and marks, and the last audit entries; its forms re-queue a job, withdraw
or disqualify a submission (with a reason), choose a primary, and freeze, run or reveal a phase.

Each form calls the function the JSON action under /api/v1/admin calls (`organizer`), so both write the same
audit entries, and then sends the browser back to /admin. The organizer signs in with the organizer's token on
the team pages' sign-in page (`pages`: a signed cookie, XSRF tokens on every form). To anyone else every URL here
is the 404 page of a missing page, as is a missing page under /admin/.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from harness.portal import organizer
from harness.portal.app import ApiError, Portal
from harness.portal.counters import utc_now
from harness.portal.lifecycle import ACTIVE, JobState, can_move
from harness.portal.pages import UNFINISHED, VISIBILITY, Page
from harness.portal.teams import ORGANIZER
from leaderboard.hostpaths import site_host_paths

#: how many audit entries /admin shows (newest first)
AUDIT_SHOWN = 50
NO_REASON = "a withdrawal needs a reason, kept in the audit log: write it in the form's reason field"
#: a job in these states can be queued again from the page (an ended one; a withdrawn one never)
REQUEUABLE = tuple(s.value for s in JobState if s not in ACTIVE and can_move(s, JobState.QUEUED))


def _at(value: float | None) -> datetime | None:
    """A time of the store (seconds since the epoch) as an aware UTC datetime (the pages' `utc` filter)."""
    return None if value is None else datetime.fromtimestamp(value, tz=UTC)


class AdminPage(Page):
    """A page or form of the organizer's: the 404 page of a missing page to anyone else (after the XSRF check of
    a POST, which every page makes first)."""

    def prepare(self) -> None:
        if self.owner != ORGANIZER:
            raise ApiError(404, f"no such page {self.request.path[:80]!r}")

    def page(self, template: str, status: int = 200, **values: Any) -> None:
        """The organizer's error page leads back to /admin (anyone else's is the pages' own)."""
        if template == "error.html" and self.owner == ORGANIZER:
            template = "admin_error.html"
        super().page(template, status, **values)

    def back(self, anchor: str = "") -> None:
        """Back to /admin (at `anchor`), where the action now shows in the audit list."""
        self.redirect("/admin" + (f"#{anchor}" if anchor else ""), status=303)


class AdminOverview(AdminPage):
    """/admin. It does not reload itself (a half-written reason would be lost): the organizer reloads it."""

    def get(self) -> None:
        portal, store = self.portal, self.portal.store
        now = utc_now()
        chosen = store.primaries()
        primaries = organizer.primaries(portal)
        primary_of = {sub_id: "chosen" if chosen.get(key) == sub_id else "newest scored"
                      for key, sub_id in primaries.items()}
        subs = []
        for record in store.submissions():  # newest first
            shown = self.shown(record)
            shown["team_name"] = store.team_name(record.team) or record.team
            shown["primary"] = primary_of.get(record.id)
            subs.append(shown)
        phases = []
        for phase in portal.campaign.settings.phases:
            frozen, revealed = store.phase_marks(phase.name)
            state = "open" if phase.is_open(now) else ("not yet open" if now < phase.opens else "closed")
            phases.append({"phase": phase, "state": state, "frozen": _at(frozen), "revealed": _at(revealed)})
        audit = [{**entry, "at": f"{_at(entry['at']):%Y-%m-%d %H:%M:%S} UTC",
                  "detail": self.hosts.text(str(entry["detail"]))}
                 for entry in organizer.audit_entries(portal)[::-1][:AUDIT_SHOWN]]
        self.page("admin.html", phases=phases, visibility=VISIBILITY, submissions=subs, unfinished=UNFINISHED,
                  requeuable=REQUEUABLE, primaries=sorted(primaries.items()), audit=audit, audit_shown=AUDIT_SHOWN,
                  team_names={t: store.team_name(t) or t for t in store.team_ids()},
                  shown_at=f"{now:%Y-%m-%d %H:%M:%S} UTC")


class RequeueForm(AdminPage):
    def post(self, job_id: str) -> None:
        self.back(organizer.requeue(self.portal, job_id).id)


class WithdrawForm(AdminPage):
    """Withdraw, or with `disqualify` set disqualify, with the form's reason (none: its one-line refusal)."""

    def post(self, submission_id: str) -> None:
        sub = organizer.withdraw(self.portal, submission_id, self.get_body_argument("reason", ""),
                                 bool(self.get_body_argument("disqualify", "")), missing=NO_REASON)
        self.back(sub.id)


class PrimaryForm(AdminPage):
    def post(self, submission_id: str) -> None:
        self.back(organizer.choose_primary(self.portal, submission_id).id)


class FreezeForm(AdminPage):
    def post(self, name: str) -> None:
        organizer.freeze(self.portal, name)
        self.back("phases")


class RunForm(AdminPage):
    def post(self, name: str) -> None:
        organizer.run_phase(self.portal, name)
        self.back("phases")


class RevealForm(AdminPage):
    """Render the leaderboard and publish it; /admin then links to /board/ (a failed rendering: its one line)."""

    async def post(self, name: str) -> None:
        await organizer.reveal(self.portal, name)
        self.back("phases")


class AdminMissing(AdminPage):
    """A missing page under /admin/: the 404 page the organizer's pages answer anyone else."""

    def prepare(self) -> None:
        raise ApiError(404, f"no such page {self.request.path[:80]!r}")


def routes(portal: Portal) -> list[Any]:
    """The organizer's pages' routes (`make_app`'s `extra`)."""
    campaign = portal.campaign
    kw = {"portal": portal, "hosts": site_host_paths(campaign.state, campaign.config, [])}
    return [
        (r"/admin", AdminOverview, kw),
        (r"/admin/jobs/([A-Za-z0-9_-]+)/requeue", RequeueForm, kw),
        (r"/admin/submissions/([A-Za-z0-9_-]+)/withdraw", WithdrawForm, kw),
        (r"/admin/submissions/([A-Za-z0-9_-]+)/primary", PrimaryForm, kw),
        (r"/admin/phases/([A-Za-z0-9_.-]+)/freeze", FreezeForm, kw),
        (r"/admin/phases/([A-Za-z0-9_.-]+)/run", RunForm, kw),
        (r"/admin/phases/([A-Za-z0-9_.-]+)/reveal", RevealForm, kw),
        (r"/admin/.*", AdminMissing, kw),
    ]
