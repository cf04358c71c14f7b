"""E-mail notifications from the campaign portal (issue 47, item 4), tested against a local SMTP server
(aiosmtpd's `Controller` on loopback, keeping every message it receives in a list): the `notify:` block and its
one-line errors, the outbox's bounded retry and its line and audit entry, each job end mailed once (a restart
sends nothing again), the organizer's digest with what is stuck; then a real `harness portal` with `notify:`,
teams submitting with `harness submit --wait`, their mails, the digest by the admin route, and an SMTP server
that is gone."""

from __future__ import annotations

import json
import os
import smtplib
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timezone
from datetime import time as clock_time
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default as default_policy
from pathlib import Path
from typing import Any

import pytest
import requests
from aiosmtpd.controller import Controller

from harness.errors import ConfigError
from harness.portal.app import Portal
from harness.portal.lifecycle import JobState
from harness.portal.mail import Mail, NotifySettings, deliver, parse_notify
from harness.portal.notify import Notifier, at_most_s, attach, digest_mail, next_digest
from harness.portal.phases import load_portal_settings
from harness.portal.service import build
from harness.portal.store import Job
from harness.portal.upload_client import pack_folder, upload
from tests.portal_support import ROOT, Campaign, PortalProcess, api, harness, log_submission, make_campaign


class Inbox:
    """An aiosmtpd handler that keeps each message it receives (parsed) in a list."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 (aiosmtpd's name)
        message = BytesParser(policy=default_policy).parsebytes(envelope.content.replace(b"\r\n", b"\n"))
        assert isinstance(message, EmailMessage)
        message["X-Envelope-To"] = ", ".join(envelope.rcpt_tos)
        self.messages.append(message)
        return "250 OK"


def wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    """Poll `condition` until it holds, failing after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture()
def smtp_server() -> Iterator[tuple[Controller, Inbox]]:
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield controller, inbox
    finally:
        controller.stop()


def test_a_local_smtp_server_receives_a_mail(smtp_server: tuple[Controller, Inbox]) -> None:
    controller, inbox = smtp_server
    message = EmailMessage()
    message["From"] = "portal@example.org"
    message["To"] = "team@example.org"
    message["Subject"] = "hello"
    message.set_content("body text\n")
    with smtplib.SMTP(controller.hostname, controller.port, timeout=10) as client:
        client.send_message(message)
    wait_for(lambda: len(inbox.messages) == 1)
    assert inbox.messages[0]["Subject"] == "hello"
    assert inbox.messages[0]["X-Envelope-To"] == "team@example.org"
    assert inbox.messages[0].get_content() == "body text\n"


# ------------------------------------------------------------------------------------------ the notify: block

def notify_block(port: int, **extra: str) -> str:
    fields = {"smtp": f"127.0.0.1:{port}", "from": "portal@example.org", "organizer": "[chairs@example.org]",
              **extra}
    return "  notify: {" + ", ".join(f"{k}: {v}" for k, v in fields.items()) + "}\n"


def campaign_with_notify(root: Path, port: int, **extra: str) -> Campaign:
    campaign = make_campaign(root)
    with campaign.config.open("a", encoding="utf-8") as f:
        f.write(notify_block(port, **extra))
    return campaign


def test_the_notify_block_is_read_with_its_defaults(tmp_path: Path) -> None:
    campaign = campaign_with_notify(tmp_path, 2525)
    settings = load_portal_settings(campaign.config, {"dev", "test"}).notify
    assert settings == NotifySettings("127.0.0.1", 2525, "portal@example.org", ("chairs@example.org",))
    assert settings.digest_at == clock_time(7, 0) and not settings.starttls and settings.url is None
    assert load_portal_settings(make_campaign(tmp_path / "off").config, {"dev", "test"}).notify is None


@pytest.mark.parametrize(("block", "line"), [
    ({"from": "p@example.org"}, "portal.notify.smtp: the SMTP server is required (HOST:PORT)"),
    ({"smtp": "mail.example.org", "from": "p@example.org"},
     "portal.notify.smtp: 'mail.example.org' is not HOST:PORT (mail.example.org:587)"),
    ({"smtp": "h:25"}, "portal.notify.from: an e-mail address is required, got None"),
    ({"smtp": "h:25", "from": "p@example.org", "password": "hunter2"},
     "portal.notify.password: the sign-in is never kept in the file: name the environment variable that holds it "
     "(password_env: NAME)"),
    ({"smtp": "h:25", "from": "p@example.org", "user_env": "HOME", "password_env": "NOTIFY_TEST_UNSET"},
     "portal.notify.password_env: the environment variable NOTIFY_TEST_UNSET is not set"),
    ({"smtp": "h:25", "from": "p@example.org", "user_env": "HOME"},
     "portal.notify.password_env: user_env and password_env go together (the SMTP sign-in)"),
    ({"smtp": "h:25", "from": "p@example.org", "digest_at": 1439},
     "portal.notify.digest_at: quote the time (digest_at: \"07:00\"): YAML read it as the number 1439"),
    ({"smtp": "h:25", "from": "p@example.org", "digest_at": "7am"},
     "portal.notify.digest_at: a time of day in UTC as \"HH:MM\", got '7am'"),
    ({"smtp": "h:25", "from": "p@example.org", "organizer": "chairs@example.org"},
     "portal.notify.organizer: a list of e-mail addresses, got 'chairs@example.org'"),
    ({"smtp": "h:25", "from": "p@example.org", "organizer": ["nobody"]},
     "portal.notify.organizer[0]: an e-mail address is required, got 'nobody'"),
    ({"smtp": "h:25", "from": "p@example.org", "starttls": "yes"}, "portal.notify.starttls: true or false, got 'yes'"),
    ({"smtp": "h:25", "from": "p@example.org", "cc": "x"},
     "portal.notify.cc: unknown field (known: smtp, from, organizer, starttls, user_env, password_env, digest_at, "
     "url)"),
])
def test_a_wrong_notify_block_is_one_line_naming_the_field(block: dict, line: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_TEST_UNSET", raising=False)
    with pytest.raises(ConfigError) as refused:
        parse_notify(block, "portal.notify")
    assert str(refused.value) == line


def test_the_sign_in_is_read_from_the_environment_and_digest_at_is_utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOTIFY_TEST_USER", "portal")
    monkeypatch.setenv("NOTIFY_TEST_PASSWORD", "s3cret")
    settings = parse_notify({"smtp": "[::1]:587", "from": "Portal <p@example.org>", "starttls": True,
                             "user_env": "NOTIFY_TEST_USER", "password_env": "NOTIFY_TEST_PASSWORD",
                             "digest_at": "23:30", "url": "https://portal.example.org/"}, "portal.notify")
    assert (settings.host, settings.port, settings.url) == ("::1", 587, "https://portal.example.org")
    assert "s3cret" not in repr(settings)  # only the variable's name is kept
    noon = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc).timestamp()
    assert datetime.fromtimestamp(next_digest(noon, settings), timezone.utc) == datetime(
        2026, 11, 30, 23, 30, tzinfo=timezone.utc)
    late = datetime(2026, 11, 30, 23, 30, tzinfo=timezone.utc).timestamp()
    assert next_digest(late, settings) == late + 24 * 3600  # the one at this very minute is the next day's


# ------------------------------------------------------------------------------------------------- the outbox

def test_a_refusing_server_is_tried_a_bounded_number_of_times_then_is_one_line() -> None:
    settings = NotifySettings("127.0.0.1", free_port(), "portal@example.org")
    started = time.monotonic()
    error = deliver(settings, Mail(("a@example.org",), "s", "t", "a test"), threading.Event(), delays=(0.01, 0.01))
    assert error is not None and error.startswith("ConnectionRefusedError: ") and "\n" not in error
    assert time.monotonic() - started < 10


def test_a_mail_is_sent_with_its_headers(smtp_server: tuple[Controller, Inbox]) -> None:
    controller, inbox = smtp_server
    settings = NotifySettings(controller.hostname, controller.port, "Portal <portal@example.org>")
    assert deliver(settings, Mail(("a@example.org", "b@example.org"), "hi", "text\n", "x"), threading.Event()) is None
    wait_for(lambda: len(inbox.messages) == 1)
    got = inbox.messages[0]
    assert (got["From"], got["To"], got["Subject"]) == ("Portal <portal@example.org>", "a@example.org, b@example.org",
                                                        "hi")
    assert got["Auto-Submitted"] == "auto-generated" and got["Message-ID"].endswith("@example.org>")
    assert got["X-Envelope-To"] == "a@example.org, b@example.org"


# ------------------------------------------------------------------------------ the notifier on a portal's store

@pytest.fixture()
def built(tmp_path: Path, smtp_server: tuple[Controller, Inbox]) -> Iterator[tuple[Campaign, Portal, Inbox]]:
    """A portal built (not serving: its queue is not started) with `notify:` pointing at the local server."""
    controller, inbox = smtp_server
    campaign = campaign_with_notify(tmp_path, controller.port)
    portal = build(campaign.config, campaign.teams, campaign.state, workers=1)
    try:
        yield campaign, portal, inbox
    finally:
        portal.store.close()


def ended_job(portal: Portal, state: JobState, dataset: str = "dev", team: str = "alpha", failure: str | None = None,
              reason: str | None = None) -> Job:
    """A submission of `team` whose one job has ended in `state` (as the queue would end it)."""
    sub = portal.store.add_submission(team, "dev", "text-en-es", "waitk", "/nowhere", "0" * 64, (dataset,))
    job = portal.store.jobs(sub.id)[0]
    portal.store.move(job.id, JobState.BUILDING)
    return portal.store.move(job.id, state, failure=failure, reason=reason)


def started(campaign: Campaign, portal: Portal, **kw: Any) -> Notifier:
    notifier = attach(portal, campaign.teams)
    assert notifier is not None
    if kw:
        notifier = Notifier(portal, notifier.settings, notifier.contacts, **kw)
    notifier.start("http://portal.test:8700")
    return notifier


def test_a_failed_job_is_mailed_to_its_team_once_even_across_a_restart(built) -> None:
    campaign, portal, inbox = built
    notifier = started(campaign, portal)
    try:
        job = ended_job(portal, JobState.FAILED, failure="crash", reason="the agent exited with status 1")
        portal.queue.after_batch("dev")  # what the queue calls after each evaluation: it wakes the outbox
        wait_for(lambda: len(inbox.messages) == 1)
    finally:
        notifier.stop()
    mail = inbox.messages[0]
    assert mail["To"] == "a@example.org" and mail["From"] == "portal@example.org"
    assert mail["Subject"].strip() == f"[demo-simultaneous-translation] {job.submission} failed on dev: crash"
    text = mail.get_content()
    assert f"your submission {job.submission} (system waitk, track text-en-es, phase dev) failed on dev." in text
    assert "  failure: crash\n  reason: the agent exited with status 1\n" in text
    assert "the build log and the client log's last lines are on the submission's page" in text
    assert f"http://portal.test:8700/team/submissions/{job.submission}\n" in text
    again = started(campaign, portal)  # a portal started again: the job end was mailed already
    try:
        answer = again.ask_digest().result(timeout=30)
    finally:
        again.stop()
    wait_for(lambda: len(inbox.messages) == 2)
    assert [m["To"] for m in inbox.messages] == ["a@example.org", "chairs@example.org"]  # no second job mail
    assert answer["sent"] is True and answer["to"] == ["chairs@example.org"]
    assert inbox.messages[1].get_content() == answer["text"]
    assert f"  crash: 1\n    {job.submission} on dev: the agent exited with status 1\n" in answer["text"]
    assert not [a for a in portal.store.audit_log() if a[2] == "notify.failed"]


def test_a_hidden_phases_score_is_not_in_the_mail(built) -> None:
    campaign, portal, inbox = built
    notifier = started(campaign, portal)
    try:
        job = ended_job(portal, JobState.SCORED, dataset="test")  # phase test: results hidden until the reveal
        notifier.wake()
        wait_for(lambda: len(inbox.messages) == 1)
    finally:
        notifier.stop()
    assert inbox.messages[0]["Subject"].strip() == f"[demo-simultaneous-translation] {job.submission} scored on test"
    text = inbox.messages[0].get_content()
    assert "was scored on test. Its results are hidden until the organizer reveals phase test." in text
    assert "BLEU" not in text


def test_a_team_without_contacts_gets_nothing_and_old_job_ends_are_not_mailed(built) -> None:
    campaign, portal, inbox = built
    ended_job(portal, JobState.SCORED)  # before notifications were on: not mailed
    notifier = started(campaign, portal)
    try:
        ended_job(portal, JobState.FAILED, team="organizers", failure="crash", reason="x")  # no contacts
        mine = ended_job(portal, JobState.FAILED, team="beta", failure="timeout", reason="total timeout (3600 s)")
        notifier.wake()
        wait_for(lambda: len(inbox.messages) == 1)
        notifier.ask_digest().result(timeout=30)  # sent after anything before it: nothing else came
    finally:
        notifier.stop()
    assert [m["To"] for m in inbox.messages] == ["b@example.org", "chairs@example.org"]
    assert mine.submission in inbox.messages[0]["Subject"]


def test_the_digest_names_a_stuck_job_and_the_queue(built) -> None:
    campaign, portal, _ = built
    sub = portal.store.add_submission("beta", "dev", "text-en-es", "slow", "/nowhere", "0" * 64, ("dev",))
    job = portal.store.move(portal.store.jobs(sub.id)[0].id, JobState.BUILDING)
    portal.store.add_submission("alpha", "dev", "text-en-es", "next", "/nowhere", "0" * 64, ("dev",))
    now, limit = time.time(), at_most_s(portal)  # a build, a fetch, a prepare step, the run's deadline
    assert limit == 3600 + 3600 + 1800 + 60 + 10 + 3600 + 10 + 10  # configs/demo.yaml keeps the default limits
    calm = digest_mail(portal, ("chairs@example.org",), "http://p", now).text
    assert "Stuck: none (no job at work for more than 3 h 31 min, what the limits allow)" in calm
    later = digest_mail(portal, ("chairs@example.org",), "http://p", now + limit + 600).text
    assert "Stuck: 1 job(s) at work for more than 3 h 31 min, what the limits allow:\n" in later
    assert f"  {job.id}: {sub.id} on dev, building for 3 h 41 min" in later
    assert "Jobs queued now: 1 (the oldest since " in calm
    assert f"  beta (Beta Group): 1: {sub.id} (dev building)" in calm


def test_the_daily_digest_goes_out_once_at_its_time(built) -> None:
    campaign, portal, inbox = built
    seven = datetime(2026, 11, 30, 7, 0, tzinfo=timezone.utc).timestamp()
    now = [seven - 0.2]
    notifier = started(campaign, portal, clock=lambda: now[0])
    try:
        now[0] = seven + 1  # the clock passes 07:00 while the outbox waits for it
        wait_for(lambda: len(inbox.messages) == 1)
    finally:
        notifier.stop()
    assert inbox.messages[0]["Subject"].strip() == "[demo-simultaneous-translation] portal digest 2026-11-30"
    now[0] = seven - 0.2  # a portal started again just before: today's digest was sent already
    again = started(campaign, portal, clock=lambda: now[0])
    try:
        now[0] = seven + 2
        again.ask_digest().result(timeout=30)  # the outbox has passed 07:00 by the time it answers
    finally:
        again.stop()
    digest = "[demo-simultaneous-translation] portal digest 2026-11-30"
    assert [m["Subject"].strip() for m in inbox.messages] == [digest] * 2  # the asked one only


def test_a_mail_that_cannot_be_sent_is_a_line_and_an_audit_entry(built, capfd: pytest.CaptureFixture[str]) -> None:
    campaign, portal, inbox = built
    controller = Controller(Inbox(), hostname="127.0.0.1", port=free_port())  # never started: refuses
    settings = replace(portal.campaign.settings.notify, port=controller.port)
    notifier = Notifier(portal, settings, {"alpha": ("a@example.org",)}, delays=(0.01, 0.01))
    notifier.start("http://portal.test")
    try:
        job = ended_job(portal, JobState.FAILED, failure="crash", reason="x")
        notifier.wake()
        wait_for(lambda: any(a[2] == "notify.failed" for a in portal.store.audit_log()))
    finally:
        notifier.stop()
    entry = next(a for a in portal.store.audit_log() if a[2] == "notify.failed")
    assert entry[1] == "portal" and entry[3].startswith(
        f"mail about {job.submission} on dev (failed) to a@example.org not sent: ConnectionRefusedError: ")
    assert f"harness portal: {entry[3]}\n" in capfd.readouterr().err


# ------------------------------------------------------------------------------------- a real portal, end to end

def submit(url: str, token: str, folder: Path, *extra: str) -> str:
    """`harness submit FOLDER --portal URL` as a team does; the submission's id."""
    proc = subprocess.run(harness("submit", str(folder), "--portal", url, *extra), capture_output=True, text=True,
                          timeout=900, env={**os.environ, "HARNESS_PORTAL_TOKEN": token})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.splitlines()[0].split()[3]


def short_log_submission(folder: Path, team: str) -> Path:
    """A log submission whose dev log lacks its last three lines: `harness check` would refuse it, so it is sent
    past the command (the portal takes it: it checks logs when it evaluates them) and its evaluation fails."""
    log_submission(folder, team=team, system="short-log")
    log = folder / "dev.log"
    log.write_text("".join(log.read_text(encoding="utf-8").splitlines(True)[:-3]), encoding="utf-8")
    return folder


def upload_past_the_command(url: str, token: str, folder: Path) -> str:
    archive = pack_folder(folder, folder.parent / f"{folder.name}.tar.gz")
    done = upload(f"{url}/api/v1/uploads", archive, token, {"filename": archive.name})
    answer = requests.get(f"{done}/submission", headers={"Authorization": f"Bearer {token}"}, timeout=60)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["id"])


def mails_to(inbox: Inbox, address: str) -> list[EmailMessage]:
    return [m for m in inbox.messages if address in m["X-Envelope-To"].split(", ")]


@pytest.mark.slow
def test_teams_are_mailed_their_scores_and_failures_and_the_organizer_the_digest(
        tmp_path: Path, smtp_server: tuple[Controller, Inbox]) -> None:
    controller, inbox = smtp_server
    campaign = campaign_with_notify(tmp_path / "c", controller.port)
    tokens = {owner: campaign.token(owner) for owner in ("alpha", "beta", "organizer")}
    server = PortalProcess(campaign)
    try:
        scored = submit(server.url, tokens["alpha"], log_submission(tmp_path / "ok"), "--wait")
        wait_for(lambda: len(mails_to(inbox, "a@example.org")) == 1, timeout=60)
        failed = upload_past_the_command(server.url, tokens["beta"], short_log_submission(tmp_path / "bad", "beta"))
        wait_for(lambda: len(mails_to(inbox, "b@example.org")) == 1, timeout=600)
        digest = api(server.url, tokens["organizer"], "admin/digest", "POST")
        assert api(server.url, tokens["beta"], "admin/digest", "POST").status_code == 404  # a team: no such page
        wait_for(lambda: len(mails_to(inbox, "chairs@example.org")) == 1)
    finally:
        server.stop()
    ok = mails_to(inbox, "a@example.org")[0]
    bleu = json.loads((ROOT / "examples" / "runs" / "udhr-dev-waitk3" / "scores.json").read_text())["BLEU"]["score"]
    assert ok["Subject"].strip() == f"[demo-simultaneous-translation] {scored} scored on dev"
    text = ok.get_content()
    assert f"your submission {scored} (system waitk-log, track text-en-es, phase dev) was scored on dev:" in text
    assert f"\n  BLEU {bleu:.2f}\n  LAAL " in text  # the track's primary quality and latency
    assert f"{server.url}/team/submissions/{scored}\n" in text
    bad = mails_to(inbox, "b@example.org")[0]
    reason = "37 instances, but dataset 'dev' has 40"
    assert bad["Subject"].strip().startswith(f"[demo-simultaneous-translation] {failed} failed on dev: ")
    failure = bad["Subject"].strip().rsplit(": ", 1)[1]
    text = bad.get_content()
    assert f"  failure: {failure}\n  reason: submission.yaml: logs.dev: dev.log: {reason}" in text
    assert str(campaign.state) not in text  # the team's own file names, not the organizer's folders
    assert "the build log and the client log's last lines are on the submission's page" in text
    assert f"{server.url}/team/submissions/{failed}\n" in text
    assert [m["X-Envelope-To"] for m in inbox.messages].count("a@example.org") == 1  # one mail per job end
    assert digest.status_code == 200, digest.text
    sent = digest.json()
    assert sent["sent"] is True and sent["to"] == ["chairs@example.org"] and sent["error"] is None
    assert mails_to(inbox, "chairs@example.org")[0].get_content() == sent["text"]
    assert f"  alpha (Alpha Lab): 1: {scored} (dev scored)" in sent["text"]
    assert f"  beta (Beta Group): 1: {failed} (dev failed: {failure})" in sent["text"]
    assert f"Failures in the last day: 1\n  {failure}: 1\n    {failed} on dev: " in sent["text"]
    assert "Jobs queued now: 0\n" in sent["text"] and "Stuck: none" in sent["text"]


@pytest.mark.slow
def test_an_smtp_server_that_is_gone_stops_no_evaluation_and_a_restart_mails_nothing_twice(
        tmp_path: Path) -> None:
    inbox, port = Inbox(), free_port()
    smtp = Controller(inbox, hostname="127.0.0.1", port=port)
    smtp.start()
    smtp.stop()  # the organizer's SMTP server is down: every connection is refused
    campaign = campaign_with_notify(tmp_path / "c", port)
    tokens = {owner: campaign.token(owner) for owner in ("alpha", "beta", "organizer")}
    server = PortalProcess(campaign)
    try:
        first = submit(server.url, tokens["alpha"], log_submission(tmp_path / "one"), "--wait")
        second = submit(server.url, tokens["beta"], log_submission(tmp_path / "two", team="beta"), "--wait")
        assert [j["state"] for j in api(server.url, tokens["beta"], f"submissions/{second}").json()["jobs"]] == [
            "scored"]  # the next job ended scored while the mail about the first could not go out

        def failed_mails() -> list[dict]:
            audit = api(server.url, tokens["organizer"], "admin/audit").json()["audit"]
            return [a for a in audit if a["action"] == "notify.failed"]

        wait_for(lambda: len(failed_mails()) == 2, timeout=120)
        details = [a["detail"] for a in failed_mails()]
    finally:
        server.stop()
    assert details[0].startswith(f"mail about {first} on dev (scored) to a@example.org not sent: "
                                 "ConnectionRefusedError: ")
    assert f"harness portal: {details[0]}\n" in server.log_text()  # one line on the portal's standard error
    smtp = Controller(inbox, hostname="127.0.0.1", port=port)
    smtp.start()  # the server is back; the portal is started again
    again = PortalProcess(campaign)
    try:
        third = submit(again.url, tokens["alpha"], log_submission(tmp_path / "three", system="third"), "--wait")
        wait_for(lambda: len(inbox.messages) == 1, timeout=60)
        digest = api(again.url, tokens["organizer"], "admin/digest", "POST").json()  # after anything queued before
    finally:
        again.stop()
        smtp.stop()
    assert [m["Subject"].strip() for m in inbox.messages[:1]] == [
        f"[demo-simultaneous-translation] {third} scored on dev"]  # the two failed ones are not sent again
    assert digest["sent"] is True and len(inbox.messages) == 2



@pytest.mark.slow
def test_without_notify_the_digest_route_is_one_line_and_nothing_is_sent(tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path / "c")
    tokens = {owner: campaign.token(owner) for owner in ("alpha", "organizer")}
    server = PortalProcess(campaign)
    try:
        submit(server.url, tokens["alpha"], log_submission(tmp_path / "s"), "--wait")
        answer = api(server.url, tokens["organizer"], "admin/digest", "POST")
        assert api(server.url, tokens["alpha"], "admin/digest", "POST").status_code == 404
    finally:
        server.stop()
    assert answer.status_code == 409 and answer.json() == {
        "error": "e-mail notifications are off: add a notify: block to the portal: section (docs/portal.md)"}
    assert "mail" not in server.log_text()
