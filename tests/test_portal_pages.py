"""The portal's pages with a real `harness portal` (tests/portal_support.py): signing in with a token (the API's
one-line refusals, a signed HttpOnly, Secure, SameSite=Lax cookie), XSRF tokens on every form, another team's
submission a 404 page exactly like a missing one; and a team's journey in headless Chromium: sign in, submit with
`harness submit`, watch the team page reach `scored` and read the scores, fail to open another team's submission."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from harness import layout
from harness.portal.pages import job_line
from tests.portal_support import (
    ROOT,
    Campaign,
    PortalProcess,
    harness,
    log_submission,
    make_campaign,
    wait_until_ended,
)

pytestmark = [pytest.mark.slow]

REFUSALS = {
    "unknown": "unknown token: check it, or ask the organizer for one (`harness portal token TEAM`)",
    "revoked": "revoked token: the organizer revoked it; ask for a new one",
    "expired": "expired token: ask the organizer for a new one (`harness portal token TEAM --rotate`)",
}
SCREENSHOT = Path("/tmp/portal-team.png")
SUBMISSION_SCREENSHOT = Path("/tmp/portal-submission.png")


@pytest.fixture(scope="module")
def portal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Campaign, PortalProcess]]:
    campaign = make_campaign(tmp_path_factory.mktemp("pages"))
    server = PortalProcess(campaign, "--proxy-headers")  # as behind the organizer's HTTPS proxy
    try:
        yield campaign, server
    finally:
        server.stop()


def _submit(url: str, token: str, folder: Path) -> str:
    """`harness submit FOLDER --portal URL`; the submission's id."""
    proc = subprocess.run(harness("submit", str(folder), "--portal", url), capture_output=True, text=True,
                          timeout=900, env={**os.environ, "HARNESS_PORTAL_TOKEN": token})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.splitlines()[0].split()[3]


@pytest.fixture(scope="module")
def alphas(portal, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A submission of team alpha (its id), once it has ended (nothing writes its results folder any more)."""
    campaign, server = portal
    token = campaign.token("alpha")
    sub_id = _submit(server.url, token, log_submission(tmp_path_factory.mktemp("alpha") / "sub"))
    assert [j["state"] for j in wait_until_ended(server.url, token, sub_id)["jobs"]] == ["scored"]
    return sub_id


def _xsrf(session: requests.Session, url: str) -> str:
    """The XSRF token of the sign-in page's form (its cookie is now in `session`)."""
    page = session.get(f"{url}/", timeout=60)
    found = re.search(r'name="_xsrf" value="([^"]+)"', page.text)
    assert found, page.text
    return html.unescape(found.group(1))


def _sign_in(url: str, token: str) -> tuple[requests.Session, str, requests.Response]:
    """A session signed in with `token` (the cookie is Secure: requests would not send it back over http, so it
    is set in the session's jar by hand), its XSRF token, and the sign-in's answer."""
    session = requests.Session()
    xsrf = _xsrf(session, url)
    answer = session.post(f"{url}/signin", data={"_xsrf": xsrf, "token": token}, allow_redirects=False, timeout=60)
    if answer.status_code == 303:
        session.cookies.set("harness_portal", answer.cookies["harness_portal"])
    return session, xsrf, answer


def _unmasked(page: str) -> str:
    """`page` without its forms' XSRF tokens (masked afresh for every answer)."""
    return re.sub(r'name="_xsrf" value="[^"]*"', 'name="_xsrf"', page)


def test_the_sign_in_page_asks_for_a_token(portal) -> None:
    _, server = portal
    answer = requests.get(f"{server.url}/", timeout=60)
    assert answer.status_code == 200 and answer.headers["Content-Type"].startswith("text/html")
    assert 'name="token"' in answer.text and 'name="_xsrf"' in answer.text
    assert "default-src 'none'" in answer.headers["Content-Security-Policy"]
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", answer.text)  # nothing from elsewhere
    assert 'id="notice"' not in answer.text  # loopback: a secure cookie is kept over plain HTTP
    remote = requests.get(f"{server.url}/", headers={"Host": "portal.example.org"}, timeout=60).text
    assert 'id="notice"' in remote and "plain HTTP" in remote  # elsewhere, it would not be: the page says so
    behind_tls = requests.get(f"{server.url}/", headers={"Host": "portal.example.org", "X-Forwarded-Proto": "https"},
                              timeout=60).text
    assert 'id="notice"' not in behind_tls
    team = requests.get(f"{server.url}/team", allow_redirects=False, timeout=60)
    assert team.status_code == 303 and team.headers["Location"] == "/"  # nobody signed in: the sign-in page


def test_signing_in_sets_a_signed_httponly_secure_lax_cookie(portal) -> None:
    campaign, server = portal
    _, _, answer = _sign_in(server.url, campaign.token("alpha"))
    assert answer.status_code == 303 and answer.headers["Location"] == "/team"
    (cookie,) = [c for c in answer.raw.headers.getlist("Set-Cookie") if c.startswith("harness_portal=")]
    flags = {f.strip().lower() for f in cookie.split(";")[1:]}
    assert {"httponly", "secure", "samesite=lax"} <= flags, cookie
    value = cookie.split(";")[0].partition("=")[2]
    assert value != "alpha" and value.count("|") >= 5  # tornado's signed value, not the owner in the clear
    forged = requests.get(f"{server.url}/team", cookies={"harness_portal": "alpha"}, allow_redirects=False,
                          timeout=60)
    assert forged.status_code == 303  # an unsigned cookie signs nobody in


@pytest.mark.parametrize("how", ["unknown", "revoked", "expired"])
def test_a_refused_token_shows_its_one_line(portal, how: str) -> None:
    campaign, server = portal
    if how == "unknown":
        token = "hpt_" + "x" * 43
    elif how == "revoked":
        token = campaign.token("beta")
        subprocess.run(harness("portal", "token", "beta", "--revoke", "--state", str(campaign.state)), check=True,
                       capture_output=True, timeout=120)
    else:
        token = campaign.token("beta", "--ttl-days", "0")
    _, _, answer = _sign_in(server.url, token)
    assert answer.status_code == 401 and "harness_portal" not in answer.cookies
    lines = re.findall(r'<p class="error" role="alert">(.*?)</p>', answer.text, re.S)
    assert [html.unescape(line) for line in lines] == [REFUSALS[how]]


def test_a_form_without_its_xsrf_token_is_refused(portal, alphas: str) -> None:
    campaign, server = portal
    token = campaign.token("alpha")
    bare = requests.post(f"{server.url}/signin", data={"token": token}, allow_redirects=False, timeout=60)
    assert bare.status_code == 403 and "harness_portal" not in bare.cookies
    assert "XSRF token is missing or wrong" in bare.text
    session, xsrf, _ = _sign_in(server.url, token)
    for path in (f"team/submissions/{alphas}/cancel", "signout"):
        refused = session.post(f"{server.url}/{path}", allow_redirects=False, timeout=60)
        assert refused.status_code == 403, (path, refused.text)
        wrong = session.post(f"{server.url}/{path}", data={"_xsrf": "2|00|00|00"}, allow_redirects=False,
                             timeout=60)
        assert wrong.status_code == 403, (path, wrong.text)
    assert session.get(f"{server.url}/team", timeout=60).status_code == 200  # still signed in: nothing was done
    out = session.post(f"{server.url}/signout", data={"_xsrf": xsrf}, allow_redirects=False, timeout=60)
    assert out.status_code == 303 and out.cookies.get("harness_portal", "") == ""


def test_another_teams_submission_is_a_404_page_like_a_missing_one(portal, alphas: str) -> None:
    campaign, server = portal
    beta, xsrf, _ = _sign_in(server.url, campaign.token("beta"))
    missing = "alpha-000000000000"
    for sub_id in (alphas, missing):
        page = beta.get(f"{server.url}/team/submissions/{sub_id}", timeout=60)
        assert page.status_code == 404 and page.headers["Content-Type"].startswith("text/html")
        assert html.unescape(page.text).count(f"no submission {sub_id!r}") == 1
        again = beta.get(f"{server.url}/team/submissions/{missing}", timeout=60)
        assert _unmasked(page.text).replace(sub_id, "ID") == _unmasked(again.text).replace(missing, "ID")
        cancel = beta.post(f"{server.url}/team/submissions/{sub_id}/cancel", data={"_xsrf": xsrf},
                           allow_redirects=False, timeout=60)
        assert cancel.status_code == 404 and f"no submission {sub_id!r}" in html.unescape(cancel.text)
    assert alphas not in beta.get(f"{server.url}/team", timeout=60).text
    alpha, _, _ = _sign_in(server.url, campaign.token("alpha"))
    own = alpha.get(f"{server.url}/team/submissions/{alphas}", timeout=60)
    assert own.status_code == 200 and alphas in own.text and "build" in own.text
    assert str(campaign.root) not in own.text and str(ROOT) not in own.text  # no host folder of the organizer
    organizer, _, _ = _sign_in(server.url, campaign.token("organizer"))
    assert organizer.get(f"{server.url}/team/submissions/{alphas}", timeout=60).status_code == 200  # any team's
    assert alphas in organizer.get(f"{server.url}/team", timeout=60).text


def test_log_tails_are_escaped_and_name_no_host_folder(portal, alphas: str) -> None:
    campaign, server = portal
    folder = layout.ResultsDir(campaign.state / "results").submission(alphas)
    folder.run("dev").client_log.parent.mkdir(parents=True, exist_ok=True)
    host = campaign.state / "submissions" / alphas / "agent.py"
    folder.build_log.write_text(f"step 1/2\n<script>alert(1)</script> in {host}\n", encoding="utf-8")
    folder.run("dev").client_log.write_text("x" * 40_000 + "\nthe last line & more\n", encoding="utf-8")
    alpha, _, _ = _sign_in(server.url, campaign.token("alpha"))
    page = alpha.get(f"{server.url}/team/submissions/{alphas}", timeout=60).text
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert f"in submissions/{alphas}/agent.py" in page and str(campaign.root) not in page
    assert "the last line &amp; more" in page and page.count("x" * 100) < 200  # the tail, not the whole log


def test_too_many_failed_sign_ins_wait_even_with_a_right_token(tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path / "c")
    token = campaign.token("alpha")
    server = PortalProcess(campaign)
    try:
        for _ in range(20):
            assert _sign_in(server.url, "hpt_" + "y" * 43)[2].status_code == 401
        session, _, answer = _sign_in(server.url, token)
        assert answer.status_code == 429 and "harness_portal" not in answer.cookies
        line = html.unescape(re.findall(r'<p class="error" role="alert">(.*?)</p>', answer.text, re.S)[0])
        assert re.fullmatch(r"too many failed sign-ins from 127\.0\.0\.1: wait \d+ s", line), line
        assert session.get(f"{server.url}/team", allow_redirects=False, timeout=60).status_code == 303
    finally:
        server.stop()


def test_queued_submissions_show_their_place_and_cancel_from_the_page(tmp_path: Path) -> None:
    """A portal that starts nothing (`runs_per_team: 0`): two queued submissions, newest first with their queue
    places; the cancel button cancels one (and is gone), and a second cancel is the API's one line (409)."""
    campaign = make_campaign(tmp_path / "c")
    campaign.config.write_text(campaign.config.read_text(encoding="utf-8").replace("runs_per_team: 2",
                                                                                   "runs_per_team: 0"))
    token = campaign.token("alpha")
    server = PortalProcess(campaign)
    try:
        first = _submit(server.url, token, log_submission(tmp_path / "one", system="first"))
        second = _submit(server.url, token, log_submission(tmp_path / "two", system="second"))
        session, xsrf, _ = _sign_in(server.url, token)
        page = session.get(f"{server.url}/team", timeout=60)
        assert page.headers["Refresh"] == "15"  # it reloads itself while a job is unfinished
        text = html.unescape(page.text)
        assert text.index(second) < text.index(first)  # newest first
        assert "queued (position 1)" in text and "queued (position 2)" in text
        assert text.count("Cancel this submission") == 2 and "at once: 2 of 2" in text
        done = session.post(f"{server.url}/team/submissions/{first}/cancel", data={"_xsrf": xsrf},
                            allow_redirects=False, timeout=60)
        assert done.status_code == 303 and done.headers["Location"] == "/team"
        text = html.unescape(session.get(f"{server.url}/team", timeout=60).text)
        assert "cancelled: cancelled by alpha" in text and text.count("Cancel this submission") == 1
        assert "queued (position 1)" in text and "at once: 1 of 2" in text
        again = session.post(f"{server.url}/team/submissions/{first}/cancel", data={"_xsrf": xsrf},
                             allow_redirects=False, timeout=60)
        assert again.status_code == 409
        assert f"submission {first} has no job left to cancel" in html.unescape(again.text)
    finally:
        server.stop()


@pytest.mark.parametrize(("job", "line"), [
    ({"state": "queued", "position": 3}, "queued (position 3)"),
    ({"state": "building"}, "building"),
    ({"state": "running", "done": 4, "total": 10}, "running (4/10 instances)"),
    ({"state": "scoring"}, "scoring"),
    ({"state": "failed", "failure": "agent_error", "reason": "the agent exited (code 1)"},
     "failed: agent_error (the agent exited (code 1))"),
    ({"state": "cancelled", "reason": "cancelled by alpha"}, "cancelled: cancelled by alpha"),
    ({"state": "withdrawn", "reason": "a late run"}, "withdrawn: a late run"),
])
def test_each_job_state_reads_as_a_few_words(job: dict, line: str) -> None:
    assert job_line(job) == line


def _wait_for_state(driver, url: str, sub_id: str, state: str, limit_s: float = 600) -> str:
    """The team page's text once `sub_id`'s section shows `state` (reloaded until it does; bounded)."""
    from selenium.webdriver.common.by import By

    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        driver.get(f"{url}/team")
        sections = driver.find_elements(By.ID, sub_id)
        if sections and all(s.get_attribute("class") == f"state state-{state}"
                            for s in sections[0].find_elements(By.CSS_SELECTOR, ".state")):
            return str(sections[0].text)
        time.sleep(1)
    raise AssertionError(f"{sub_id} did not show {state} within {limit_s} s:\n{driver.page_source[:4000]}")


@pytest.mark.browser
def test_a_team_signs_in_submits_and_reads_its_scores_in_chromium(portal, alphas: str, chromium,
                                                                   tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.browser_support import chrome

    campaign, server = portal
    token = campaign.token("beta")
    driver = chrome(chromium, tmp_path / "profile", ["--window-size=600,1100", "--no-first-run"])
    try:  # a phone's width (a headless window is at least 500 px wide: the page's width is set instead)
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": 420, "height": 1100, "deviceScaleFactor": 1, "mobile": False})
        driver.get(f"{server.url}/")
        driver.find_element(By.NAME, "token").send_keys(token)
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        WebDriverWait(driver, 60).until(lambda d: d.current_url == f"{server.url}/team")  # the sign-in's redirect
        assert "Beta Group" in driver.find_element(By.TAG_NAME, "h1").text
        counters = driver.find_element(By.ID, "counters").text
        assert "per day: 0 of 2, resets " in counters and " UTC" in counters

        sub_id = _submit(server.url, token, log_submission(tmp_path / "sub", team="beta", system="waitk-beta"))
        text = _wait_for_state(driver, server.url, sub_id, "scored")
        bleu = json.loads((ROOT / "examples" / "runs" / "udhr-dev-waitk3" / "scores.json").read_text())["BLEU"]
        assert re.search(rf"\bBLEU\s+{bleu['score']:.2f}\b", text), text
        assert "waitk-beta" in text and "Cancel" not in text  # nothing left to cancel
        assert "per day: 1 of 2" in driver.find_element(By.ID, "counters").text
        widths = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert widths[0] <= widths[1] == 420, widths  # no sideways scroll at 420 px (a plot scrolls in its box)
        assert str(campaign.root) not in driver.page_source and str(ROOT) not in driver.page_source
        driver.save_screenshot(str(SCREENSHOT))

        driver.find_element(By.LINK_TEXT, sub_id).click()
        WebDriverWait(driver, 60).until(lambda d: d.current_url == f"{server.url}/team/submissions/{sub_id}")
        assert "build" in driver.page_source and sub_id in driver.find_element(By.CLASS_NAME, "submission").text
        driver.save_screenshot(str(SUBMISSION_SCREENSHOT))

        driver.get(f"{server.url}/team/submissions/{alphas}")
        assert driver.find_element(By.TAG_NAME, "h1").text == "404 Not Found"
        assert f"no submission {alphas!r}" in driver.find_element(By.CLASS_NAME, "error").text
        assert "waitk-log" not in driver.page_source
    finally:
        driver.quit()


def test_the_team_page_plots_the_teams_own_results_only(tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path / "c")
    tokens = {team: campaign.token(team) for team in ("alpha", "beta")}
    server = PortalProcess(campaign, "--proxy-headers")
    try:
        subs = {team: _submit(server.url, tokens[team], log_submission(tmp_path / team, team=team,
                                                                       system=f"plotted-{team}"))
                for team in ("alpha", "beta")}
        for team, sub in subs.items():
            assert wait_until_ended(server.url, tokens[team], sub)["jobs"][0]["state"] == "scored"
        session, _, _ = _sign_in(server.url, tokens["alpha"])
        page = session.get(f"{server.url}/team", timeout=60).text
    finally:
        server.stop()
    svg = page[page.index("<svg"):page.rindex("</svg>")]
    assert "plotted-alpha" in svg and "plotted-beta" not in svg and "<a " not in svg
    assert "svg .tick" in page  # the leaderboard's plot styles come along


def test_revoking_a_token_ends_the_sessions_signed_in_with_it(portal) -> None:
    campaign, server = portal
    session, _, _ = _sign_in(server.url, campaign.token("organizers"))
    assert session.get(f"{server.url}/team", allow_redirects=False, timeout=60).status_code == 200
    revoked = subprocess.run(harness("portal", "token", "organizers", "--revoke", "--state", str(campaign.state)),
                             capture_output=True, text=True, timeout=120)
    assert revoked.returncode == 0, revoked.stderr
    after = session.get(f"{server.url}/team", allow_redirects=False, timeout=60)
    assert after.status_code == 303 and after.headers["Location"] == "/"  # signed out with its token
