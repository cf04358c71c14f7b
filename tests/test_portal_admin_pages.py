"""The organizer's pages with a real `harness portal` (tests/portal_support.py): /admin and every one of its forms
are, to a team, the 404 page of a missing page; a form without its XSRF token is 403; the organizer withdraws a
log submission with a reason through the page (none: the one-line refusal) and sees the reason and the audit
entry; re-queues a job, chooses a primary, runs and reveals a phase (then /admin links to /board/), freezes dev
and `harness submit` is refused; and in headless Chromium at 1024 px signs in, sees a submission, disqualifies it
with a reason."""

from __future__ import annotations

import html
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.portal_support import (
    ROOT,
    Campaign,
    PortalProcess,
    api,
    harness,
    log_submission,
    make_campaign,
    wait_until_ended,
)

pytestmark = [pytest.mark.slow]

SCREENSHOT = Path("/tmp/portal-admin.png")


@pytest.fixture(scope="module")
def portal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Campaign, PortalProcess]]:
    campaign = make_campaign(tmp_path_factory.mktemp("admin"))
    server = PortalProcess(campaign, "--proxy-headers")  # as behind the organizer's HTTPS proxy
    try:
        yield campaign, server
    finally:
        server.stop()


def _submit(url: str, token: str, folder: Path) -> subprocess.CompletedProcess:
    """`harness submit FOLDER --portal URL`, with a cache of its own (where `harness submit` keeps the URL of an
    upload to resume: one left by another test's portal, long gone, is none of this test's business)."""
    env = {**os.environ, "HARNESS_PORTAL_TOKEN": token, "HARNESS_CACHE": str(folder.parent / "cache")}
    return subprocess.run(harness("submit", str(folder), "--portal", url), capture_output=True, text=True,
                          timeout=900, env=env)


def _scored(campaign: Campaign, url: str, team: str, folder: Path) -> str:
    """A log submission of `team` (its id), once scored."""
    token = campaign.token(team)
    proc = _submit(url, token, log_submission(folder, team=team, system=f"{team}-waitk"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sub_id = proc.stdout.splitlines()[0].split()[3]
    assert [j["state"] for j in wait_until_ended(url, token, sub_id)["jobs"]] == ["scored"]
    return sub_id


@pytest.fixture(scope="module")
def alphas(portal, tmp_path_factory: pytest.TempPathFactory) -> str:
    campaign, server = portal
    return _scored(campaign, server.url, "alpha", tmp_path_factory.mktemp("alpha") / "sub")


def _sign_in(url: str, token: str) -> tuple[requests.Session, str]:
    """A session signed in with `token` (its Secure cookie set in the jar by hand) and its XSRF token."""
    session = requests.Session()
    page = session.get(f"{url}/", timeout=60)
    found = re.search(r'name="_xsrf" value="([^"]+)"', page.text)
    assert found, page.text
    xsrf = html.unescape(found.group(1))
    answer = session.post(f"{url}/signin", data={"_xsrf": xsrf, "token": token}, allow_redirects=False, timeout=60)
    assert answer.status_code == 303, answer.text
    session.cookies.set("harness_portal", answer.cookies["harness_portal"])
    return session, xsrf


def _unmasked(page: str) -> str:
    """`page` without its forms' XSRF tokens (masked afresh for every answer)."""
    return re.sub(r'name="_xsrf" value="[^"]*"', 'name="_xsrf"', page)


def _forms(sub_id: str, job_id: str) -> list[str]:
    """Every form's URL on /admin for a submission and its job."""
    return [f"/admin/jobs/{job_id}/requeue", f"/admin/submissions/{sub_id}/withdraw",
            f"/admin/submissions/{sub_id}/primary", "/admin/phases/dev/freeze", "/admin/phases/dev/run",
            "/admin/phases/dev/reveal"]


def _audit(url: str, boss: str) -> list[tuple[str, str, str]]:
    return [(e["who"], e["action"], e["detail"]) for e in api(url, boss, "admin/audit").json()["audit"]]


def _one_line(page: str) -> str:
    (line,) = re.findall(r'<p class="error" role="alert">(.*?)</p>', page, re.S)
    return html.unescape(line)


def test_a_team_gets_the_missing_page_at_admin_and_on_every_form(portal, alphas: str) -> None:
    campaign, server = portal
    boss = campaign.token("organizer")
    job_id = api(server.url, boss, f"submissions/{alphas}").json()["jobs"][0]["id"]
    team, xsrf = _sign_in(server.url, campaign.token("alpha"))
    before = _audit(server.url, boss)

    def same_as_missing(answer: requests.Response, path: str) -> None:
        missing = team.get(f"{server.url}/admin/nothing-here", timeout=60)
        assert answer.status_code == 404 == missing.status_code, (path, answer.text)
        assert answer.headers["Content-Type"].startswith("text/html")
        assert html.unescape(_unmasked(answer.text)).replace(repr(path), "PATH") == html.unescape(
            _unmasked(missing.text)).replace(repr("/admin/nothing-here"), "PATH")

    same_as_missing(team.get(f"{server.url}/admin", timeout=60), "/admin")
    assert 'href="/admin"' not in team.get(f"{server.url}/team", timeout=60).text  # no link for a team
    for path in _forms(alphas, job_id):  # its own submission, its own job
        answer = team.post(f"{server.url}{path}", data={"_xsrf": xsrf, "reason": "mine", "disqualify": "1"},
                           allow_redirects=False, timeout=60)
        same_as_missing(answer, path)
    assert requests.get(f"{server.url}/admin", allow_redirects=False, timeout=60).status_code == 404  # nobody
    assert _audit(server.url, boss) == before  # nothing was done
    assert "withdrawn" not in api(server.url, boss, f"submissions/{alphas}").json()


def test_an_admin_form_without_its_xsrf_token_is_refused(portal, alphas: str) -> None:
    campaign, server = portal
    boss = campaign.token("organizer")
    job_id = api(server.url, boss, f"submissions/{alphas}").json()["jobs"][0]["id"]
    before = _audit(server.url, boss)
    organizer, _ = _sign_in(server.url, boss)
    for path in _forms(alphas, job_id):
        bare = organizer.post(f"{server.url}{path}", data={"reason": "r"}, allow_redirects=False, timeout=60)
        assert bare.status_code == 403 and "XSRF token is missing or wrong" in bare.text, (path, bare.text)
        wrong = organizer.post(f"{server.url}{path}", data={"_xsrf": "2|00|00|00", "reason": "r"},
                               allow_redirects=False, timeout=60)
        assert wrong.status_code == 403, (path, wrong.text)
    assert _audit(server.url, boss) == before


def test_the_organizer_sees_every_submission_and_withdraws_one_with_a_reason(portal, alphas: str) -> None:
    campaign, server = portal
    boss = campaign.token("organizer")
    organizer, xsrf = _sign_in(server.url, boss)
    team_page = organizer.get(f"{server.url}/team", timeout=60).text
    assert 'href="/admin"' in team_page  # the team page's header links to the organizer's page
    page = organizer.get(f"{server.url}/admin", timeout=60)
    assert page.status_code == 200 and "Refresh" not in page.headers  # a half-written reason is not reloaded away
    text = html.unescape(page.text)
    section = text[text.index(f'id="{alphas}"'):]
    assert "Alpha Lab" in section and "scored" in section and "primary (newest scored)" in section
    assert "Re-queue" in section and "BLEU" in section
    assert "opens 2020-01-01 00:00 UTC" in text and "closes 2100-01-01 00:00 UTC" in text
    assert "not yet open" in text and str(campaign.root) not in text and str(ROOT) not in text

    refused = organizer.post(f"{server.url}/admin/submissions/{alphas}/withdraw", data={"_xsrf": xsrf, "reason": " "},
                             allow_redirects=False, timeout=60)
    assert refused.status_code == 400
    assert _one_line(refused.text) == "a withdrawal needs a reason, kept in the audit log: write it in the form's " \
                                      "reason field"
    assert "withdrawn" not in api(server.url, boss, f"submissions/{alphas}").json()

    done = organizer.post(f"{server.url}/admin/submissions/{alphas}/withdraw",
                          data={"_xsrf": xsrf, "reason": "used the test references <b>"}, allow_redirects=False,
                          timeout=60)
    assert done.status_code == 303 and done.headers["Location"] == f"/admin#{alphas}"
    page = organizer.get(f"{server.url}/admin", timeout=60).text
    assert "<b>" not in page  # escaped
    text = html.unescape(page)
    section = text[text.index(f'id="{alphas}"'):text.index('id="audit"')]
    assert "Withdrawn: used the test references <b>" in section and "primary (" not in section
    audit = text[text.index('id="audit-log"'):]
    assert f"{alphas}: used the test references <b>" in audit and "withdraw" in audit
    assert ("organizer", "withdraw", f"{alphas}: used the test references <b>") in _audit(server.url, boss)
    described = api(server.url, boss, f"submissions/{alphas}").json()  # the API's action did the same
    assert described["withdrawn"] == "used the test references <b>" and described["disqualified"] is False
    assert {j["state"] for j in described["jobs"]} == {"withdrawn"}


def test_the_phase_forms_requeue_and_primary_then_freezing_dev_refuses_a_submission(tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path / "c")
    boss = campaign.token("organizer")
    server = PortalProcess(campaign)
    try:
        url = server.url
        sub_id = _scored(campaign, url, "alpha", tmp_path / "one")
        job = api(url, boss, f"submissions/{sub_id}").json()["jobs"][0]
        organizer, xsrf = _sign_in(url, boss)

        def post(path: str, anchor: str) -> None:
            answer = organizer.post(f"{url}{path}", data={"_xsrf": xsrf}, allow_redirects=False, timeout=600)
            assert answer.status_code == 303, (path, answer.text)
            assert answer.headers["Location"] == f"/admin#{anchor}"

        post(f"/admin/submissions/{sub_id}/primary", sub_id)
        assert "primary (chosen)" in organizer.get(f"{url}/admin", timeout=60).text
        post(f"/admin/jobs/{job['id']}/requeue", sub_id)
        again = wait_until_ended(url, boss, sub_id)["jobs"][0]
        assert again["state"] == "scored" and again["attempts"] == 2
        requeued = organizer.post(f"{url}/admin/jobs/nojob/requeue", data={"_xsrf": xsrf}, timeout=60)
        assert requeued.status_code == 404 and _one_line(requeued.text) == "no job 'nojob'"
        assert 'href="/admin"' in requeued.text  # the organizer's error page leads back to /admin

        post("/admin/phases/test/run", "phases")
        jobs = {j["dataset"] for j in api(url, boss, f"submissions/{sub_id}").json()["jobs"]}
        assert jobs == {"dev", "test"}
        wait_until_ended(url, boss, sub_id)
        assert requests.get(f"{url}/board/", timeout=60).status_code == 404
        post("/admin/phases/dev/reveal", "phases")
        assert requests.get(f"{url}/board/", timeout=60).status_code == 200
        text = html.unescape(organizer.get(f"{url}/admin", timeout=60).text)
        dev = text[text.index('id="phase-dev"'):text.index('id="phase-test"')]
        assert "revealed " in dev and 'href="/board/"' in dev

        post("/admin/phases/dev/freeze", "phases")
        text = html.unescape(organizer.get(f"{url}/admin", timeout=60).text)
        dev = text[text.index('id="phase-dev"'):text.index('id="phase-test"')]
        assert "frozen " in dev and "/admin/phases/dev/freeze" not in dev  # frozen once
        audit = text[text.index('id="audit-log"'):]
        for action in ("phase.frozen", "phase.revealed", "queue", "job.queued", "primary"):
            assert f">{action}<" in audit, action
        assert audit.index("phase.frozen") < audit.index("phase.revealed")  # newest first
        assert ("organizer", "primary", f"alpha text-en-es: {sub_id}") in _audit(url, boss)

        frozen = _submit(url, campaign.token("beta"), log_submission(tmp_path / "two", team="beta"))
        assert frozen.returncode != 0
        assert "phase dev is frozen by the organizer" in frozen.stdout + frozen.stderr
    finally:
        server.stop()


@pytest.mark.browser
def test_the_organizer_disqualifies_a_submission_in_chromium(portal, chromium, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.browser_support import chrome

    campaign, server = portal
    betas = _scored(campaign, server.url, "beta", tmp_path / "beta")
    driver = chrome(chromium, tmp_path / "profile", ["--window-size=1024,1400", "--no-first-run"])
    try:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": 1024, "height": 1400, "deviceScaleFactor": 1, "mobile": False})
        driver.get(f"{server.url}/")
        driver.find_element(By.NAME, "token").send_keys(campaign.token("organizer"))
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        WebDriverWait(driver, 60).until(lambda d: d.current_url == f"{server.url}/team")  # the sign-in's redirect
        driver.find_element(By.LINK_TEXT, "Organizer").click()
        WebDriverWait(driver, 60).until(lambda d: d.current_url == f"{server.url}/admin")
        section = driver.find_element(By.ID, betas)
        assert "Beta Group" in section.text and "scored" in section.text
        section.find_element(By.NAME, "reason").send_keys("two accounts for one team")
        section.find_element(By.CSS_SELECTOR, "button[name=disqualify][value='1']").click()
        WebDriverWait(driver, 60).until(lambda d: d.current_url == f"{server.url}/admin#{betas}")
        WebDriverWait(driver, 60).until(  # the page after the form's redirect, not the one before it
            lambda d: "Disqualified: two accounts for one team" in d.find_element(By.ID, betas).text)
        section = driver.find_element(By.ID, betas)
        assert "disqualified" in section.text
        assert f"{betas}: two accounts for one team" in driver.find_element(By.ID, "audit-log").text
        widths = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert widths[0] <= widths[1], widths  # nothing wider than the window
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(str(SCREENSHOT))
    finally:
        driver.quit()
