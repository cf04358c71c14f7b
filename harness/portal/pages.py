"""The pages a team uses in a browser: sign in with a token, follow the team's submissions and counters, read one
submission's logs, cancel what has not finished.

Signing in checks the token as the API does (`app.sign_in`: the same one-line refusals, the same `SignInGuard`);
a signed, secure, HTTP-only cookie then carries who signed in (a team id, or the organizer, who sees every team's
submissions). Every form carries tornado's XSRF token and these handlers never skip its check (the API does: it
takes bearer tokens only). What a page shows of a submission is the API's `describe()` and `submission_logs()`,
with the organizer's host folders cut out (`leaderboard.hostpaths`); pages load nothing from elsewhere (inline
CSS, no script) and read at 420 px.
"""

from __future__ import annotations

import re
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
import markupsafe
import tornado.web

from harness.portal.app import COOKIE, ApiError, Portal, cancel, describe, owned, sign_in, submission_logs
from harness.portal.counters import counters, utc_now
from harness.portal.plots import ResultsForPlots, plot_style, team_plots
from harness.portal.teams import ORGANIZER
from harness.portal.tokens import token_hash
from leaderboard.hostpaths import HostPaths, site_host_paths

TEMPLATES = Path(__file__).resolve().parent / "templates"
#: how long a sign-in lasts (days): the cookie's expiry, and the age past which its signature is refused
SESSION_DAYS = 1
#: seconds between reloads of a page while one of its jobs is unfinished
RELOAD_S = 15
UNFINISHED = ("queued", "building", "running", "scoring")
NO_TOKEN = "this needs a token: paste the token the organizer gave your team"
STALE_FORM = ("this form's XSRF token is missing or wrong (an old page, or a form from another site): reload the "
              "page and send it again")
VISIBILITY = {"team": "each team sees its own scores", "public": "scores are public",
              "hidden": "scores are hidden until the organizer reveals them"}


def _utc(value: str | datetime | None) -> str:
    """An ISO time (`...Z`) or an aware datetime as `YYYY-MM-DD HH:MM UTC`."""
    if value is None:
        return ""
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return f"{value:%Y-%m-%d %H:%M} UTC"


def job_line(job: dict[str, Any]) -> str:
    """What a job of `describe()` is doing, in a few words."""
    state = job["state"]
    if state == "queued" and "position" in job:
        return f"queued (position {job['position']})"
    if state == "running" and job.get("total"):
        return f"running ({job['done']}/{job['total']} instances)"
    if state == "failed":
        return "failed: " + (job.get("failure") or "unknown") + (f" ({job['reason']})" if job.get("reason") else "")
    if state in ("cancelled", "withdrawn") and job.get("reason"):
        return f"{state}: {job['reason']}"
    return str(state)


def score_text(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "–"


def word_breaks(name: str) -> markupsafe.Markup:
    """A metric's name (escaped) that may wrap where its words meet (`Degenerate|Policy`), not inside them."""
    return markupsafe.Markup(re.sub(r"(?<=[a-z])(?=[A-Z])", "<wbr>", str(markupsafe.escape(name))))


_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                          undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
_ENV.filters.update(utc=_utc, job_line=job_line, score=score_text, word_breaks=word_breaks)


class Page(tornado.web.RequestHandler):
    """An HTML page of the portal; errors are a page with one line."""

    def initialize(self, portal: Portal, hosts: HostPaths, plots: ResultsForPlots | None = None) -> None:
        self.portal = portal
        self.hosts = hosts
        self.plots = plots

    def set_default_headers(self) -> None:
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("X-Frame-Options", "DENY")
        self.set_header("Referrer-Policy", "no-referrer")
        self.set_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; "
                                                   "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")

    def get_current_user(self) -> str | None:
        """The owner of the session's token, while that token is valid (revoking or rotating it ends the session)."""
        value = self.get_signed_cookie(COOKIE, max_age_days=SESSION_DAYS)
        return self.portal.store.check_token_hash(value.decode("utf-8")).owner if value else None

    @property
    def owner(self) -> str:
        """Who signed in ("" for nobody)."""
        return str(self.current_user or "")

    def page(self, template: str, status: int = 200, **values: Any) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(_ENV.get_template(template).render(
            xsrf=markupsafe.Markup(self.xsrf_form_html()), owner=self.owner, **values))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, ApiError):
            message = exc.message
        elif status_code == 403:  # tornado's own refusal of a POST without the right XSRF token
            message = STALE_FORM
        else:
            message = self._reason
        self.page("error.html", status_code, title=f"{status_code} {self._reason}",
                  message=" ".join(self.hosts.text(str(message)).split()))

    def signed_in(self) -> str | None:
        """Who signed in; nobody: sent to the sign-in page (None)."""
        if not self.owner:
            self.redirect("/", status=303)
            return None
        return self.owner

    def shown(self, sub: Any) -> dict[str, Any]:
        """A submission as the API describes it to the one signed in, without the organizer's host folders."""
        return dict(self.hosts.value(describe(self.portal, sub, self.owner)))


LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
PLAIN_HTTP = ("this page came over plain HTTP: a browser keeps no secure cookie from it, so signing in cannot last; "
              "the organizer serves the portal over HTTPS (a reverse proxy in front of `harness portal`)")


class SignInPage(Page):
    def get(self) -> None:
        if self.owner:
            self.redirect("/team", status=303)
            return
        plain = self.request.protocol != "https" and self.request.host_name not in LOOPBACK
        self.page("signin.html", error=None, notice=PLAIN_HTTP if plain else None)


class SignIn(Page):
    """The sign-in form's token, checked as the API checks a bearer token."""

    def post(self) -> None:
        token = self.get_body_argument("token", "").strip() or None
        try:
            owner = sign_in(self.portal, self.request.remote_ip or "?", token, NO_TOKEN)
        except ApiError as exc:
            self.page("signin.html", exc.status_code, error=exc.message, notice=None)
            return
        assert token is not None and owner  # sign_in refused anything else
        self.set_signed_cookie(COOKIE, token_hash(token), expires_days=SESSION_DAYS, httponly=True, secure=True,
                               samesite="Lax")
        self.redirect("/team", status=303)


class SignOut(Page):
    def post(self) -> None:
        self.clear_cookie(COOKIE, httponly=True, secure=True, samesite="Lax")
        self.redirect("/", status=303)


class TeamPage(Page):
    """The team's submissions, newest first, each job's state; the open phase's counters; scores it may see."""

    def get(self) -> None:
        owner = self.signed_in()
        if owner is None:
            return
        store, now = self.portal.store, utc_now()
        phase = self.portal.campaign.settings.open_phase(now)
        subs = [self.shown(s) for s in store.submissions(None if owner == ORGANIZER else owner)]
        counted = counters(store, owner, phase, now) if phase is not None and owner != ORGANIZER else []
        if any(j["state"] in UNFINISHED for s in subs for j in s["jobs"]):
            self.set_header("Refresh", str(RELOAD_S))
        plots = self.team_plots(owner, subs)
        self.page("team.html", name=store.team_name(owner) or owner, phase=phase, visibility=VISIBILITY,
                  counters=[c.line() for c in counted], submissions=subs, unfinished=UNFINISHED,
                  plots=plots, plot_style=plot_style() if plots else "",
                  shown_at=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))


    def team_plots(self, owner: str, subs: list[dict[str, Any]]) -> list[str]:
        """The team's quality-latency plots on the datasets whose results it may see (none for the organizer,
        who has the board)."""
        if self.plots is None or owner == ORGANIZER:
            return []
        settings = self.portal.campaign.settings
        datasets = frozenset(d for p in settings.phases for d in p.datasets
                             if p.results in ("team", "public") or self.portal.store.phase_marks(p.name)[1])
        return [self.hosts.text(svg) for svg in team_plots(self.plots, {s["id"] for s in subs}, datasets)]


class SubmissionPage(Page):
    """One submission with its build log and client-log tails; another team's is 404, as a missing one."""

    def get(self, submission_id: str) -> None:
        owner = self.signed_in()
        if owner is None:
            return
        sub = owned(self.portal, submission_id, owner)
        shown = self.shown(sub)
        logs = {name: None if text is None else self.hosts.text(text)
                for name, text in submission_logs(self.portal, sub).items()}
        if any(j["state"] in UNFINISHED for j in shown["jobs"]):
            self.set_header("Refresh", str(RELOAD_S))
        self.page("submission.html", sub=shown, logs=logs, unfinished=UNFINISHED)


class CancelSubmission(Page):
    """The cancel button: every unfinished job of the submission, then back to the team page."""

    def post(self, submission_id: str) -> None:
        owner = self.signed_in()
        if owner is None:
            return
        cancel(self.portal, owned(self.portal, submission_id, owner), owner)
        self.redirect("/team", status=303)


def routes(portal: Portal) -> list[Any]:
    """The pages' routes (`make_app`'s `extra`)."""
    campaign = portal.campaign
    kw = {"portal": portal, "hosts": site_host_paths(campaign.state, campaign.config, []),
          "plots": ResultsForPlots(campaign.state / "results", campaign.config)}
    return [
        (r"/", SignInPage, kw),
        (r"/signin", SignIn, kw),
        (r"/signout", SignOut, kw),
        (r"/team", TeamPage, kw),
        (r"/team/submissions/([A-Za-z0-9_-]+)", SubmissionPage, kw),
        (r"/team/submissions/([A-Za-z0-9_-]+)/cancel", CancelSubmission, kw),
    ]
