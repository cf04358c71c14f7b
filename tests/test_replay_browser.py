"""The audio-synchronised replay of a long-form recording page, in headless Chromium, from the site's files (file://).

Two real runs of the 7-minute bundled talk (`harness run`): the oracle of tests/agents (an incremental system) and
a re-translating system (tests/replay_support.py: a draft ending in a wrong word at the middle of each sentence,
revised at its end). `harness leaderboard --with-audio dev` publishes the talk's audio; the same results without
the option give a site with no audio, whose replay runs silent on the clock. The time is set through the media
element (waiting for its `seeked` event) or the page's own `harnessReplay.seek`, never by sleeping: at each time
the words shown in each lane are exactly those whose delay (non-computation-aware) or elapsed time
(computation-aware) is at most that time, and a revision's replaced words are struck through from its moment on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.cli import main
from tests import replay_support as rs
from tests.speech_task import make_task

pytestmark = [pytest.mark.browser, pytest.mark.espeak, pytest.mark.slow]
webdriver = pytest.importorskip("selenium.webdriver")
from tests.browser_support import DESKTOP, chrome  # noqa: E402  (after selenium is known to be here)
from tests.speech_agent_source import every_two_reads  # noqa: E402

By = pytest.importorskip("selenium.webdriver.common.by").By
Keys = pytest.importorskip("selenium.webdriver.common.keys").Keys
WebDriverWait = pytest.importorskip("selenium.webdriver.support.ui").WebDriverWait

SHOWN = """return Array.from(document.querySelectorAll('.lane-text[data-lane="' + arguments[0] + '"] .rw'))
  .filter(e => getComputedStyle(e).display !== 'none')
  .map(e => [e.textContent, e.classList.contains('erased')]);"""
SEEK_MEDIA = """const [s, done] = [arguments[0], arguments[arguments.length - 1]];
const a = document.getElementById('replay-audio');
a.addEventListener('seeked', () => done(a.currentTime), {once: true});
a.currentTime = s;"""


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("replay")
    oracle = rs.harness_run(root / "oracle", "dev", rs.ORACLE)
    revising = rs.harness_run(root / "revising", "dev", rs.revising_agent(root))
    results = rs.results_of(root, [("oracle", "dev", oracle), ("retrans", "dev", revising)])
    out = {"oracle": oracle, "revising": revising}
    for name, extra in (("audio", ["--with-audio", "dev"]), ("silent", [])):
        site = root / f"site-{name}"
        assert main(["leaderboard", str(results), "--config", str(rs.CONFIG), "--output", str(site), *extra]) == 0
        out[name] = site
    return out


SHORT_WORDS = "uno dos tres cuatro cinco seis siete".split()
SHORT_AGENT = every_two_reads(SHORT_WORDS, compute_s=0.05)


@pytest.fixture(scope="module")
def short_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A short-form speech run (two espeak-ng sentences, `harness run`) in a site with its dev audio."""
    root = tmp_path_factory.mktemp("short")
    config = make_task(root)
    (root / "agent.py").write_text(SHORT_AGENT, encoding="utf-8")
    run = root / "run"
    assert main(["run", "--config", str(config), "--dataset", "dev", "--agent", str(root / "agent.py"), "--output",
                 str(run)]) == 0
    results = rs.results_of(root, [("words", "dev", run)], config, "speech-en-en")
    site = root / "site"
    assert main(["leaderboard", str(results), "--config", str(config), "--output", str(site), "--with-audio"]) == 0
    return run, site


@pytest.fixture(scope="module")
def driver(chromium: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    drv = chrome(chromium, tmp_path_factory.mktemp("profile"), [*DESKTOP, "--autoplay-policy=no-user-gesture-required"],
                 log_requests=True, script_timeout=30)
    yield drv
    drv.quit()


def _open(driver, site: Path, run: str, index: int = 0) -> None:
    """Open a recording page from the site's files; fail on a console error or a request outside the site."""
    driver.get_log("browser")
    driver.get_log("performance")
    driver.get((site / "runs" / run / "instances" / f"{index}.html").as_uri())
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return !!window.harnessReplay"))
    problems = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert not problems, problems
    base = site.as_uri()
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent" and msg["params"].get("documentURL", "").startswith(base):
            url = msg["params"]["request"]["url"]  # a request of the site's page (not of the browser's own pages)
            assert url.startswith(base) or url.startswith("data:"), f"a request outside the site: {url}"


def _media_ready(driver) -> None:
    WebDriverWait(driver, 30).until(lambda d: d.execute_script(
        "return document.getElementById('replay-audio').readyState >= 1"))


def _shown(driver, lane: str) -> list[tuple[str, bool]]:
    return [(w, struck) for w, struck in driver.execute_script(SHOWN, lane)]


def _seek(driver, ms: float) -> float:
    """Set the replay's clock through its own API; the page's time then."""
    driver.execute_script("window.harnessReplay.seek(arguments[0])", ms)
    return float(driver.execute_script("return window.harnessReplay.time()"))


def _moments(times: list[float], end: float) -> list[float]:
    """Times that test every edge: 0, each distinct time exactly, midway to the next, and the end."""
    distinct = sorted(set(times))
    picks = distinct[:: max(1, len(distinct) // 12)]
    mids = [(a + b) / 2 for a, b in zip(distinct, distinct[1:], strict=False)][:: max(1, len(distinct) // 12)]
    return [0.0, *picks, *mids, end]


def test_at_each_playback_time_the_words_shown_are_those_written_by_then(sites, driver) -> None:
    rec = rs.records(sites["oracle"])[0]
    words = rec["prediction"].split()
    assert len(words) == len(rec["delays"]) == len(rec["elapsed"]) > 200
    assert any(e > rec["source_length"] for e in rec["elapsed"]) or max(rec["elapsed"]) > max(rec["delays"])
    _open(driver, sites["audio"], "oracle-dev")
    _media_ready(driver)
    audio_s = driver.execute_script("return document.getElementById('replay-audio').duration")
    assert audio_s * 1000 == pytest.approx(rec["source_length"], abs=50)
    checked = 0
    for ms in _moments(rec["delays"], rec["source_length"] - 1):
        t = driver.execute_async_script(SEEK_MEDIA, ms / 1000) * 1000  # through the media element
        assert driver.execute_script("return window.harnessReplay.time()") == pytest.approx(t, abs=1e-6)
        assert _shown(driver, "nca") == [(w, False) for w, d in zip(words, rec["delays"], strict=True) if d <= t]
        assert _shown(driver, "ca") == [(w, False) for w, e in zip(words, rec["elapsed"], strict=True) if e <= t]
        checked += 1
    for ms in _moments(rec["elapsed"], max(rec["elapsed"])):  # the page's API, also past the audio's end
        t = _seek(driver, ms)
        assert t == ms
        assert _shown(driver, "ca") == [(w, False) for w, e in zip(words, rec["elapsed"], strict=True) if e <= t]
        assert _shown(driver, "nca") == [(w, False) for w, d in zip(words, rec["delays"], strict=True) if d <= t]
        checked += 1
    assert checked > 40
    assert [w for w, _ in _shown(driver, "ca")] == words  # the end: every word


def _current(revisions: list[dict], key: str, t: float) -> list[str]:
    text = ""
    for r in revisions:
        if r[key] <= t:
            text = r["text"]
    return text.split()


def test_revisions_are_struck_through_then_replaced_as_they_happened(sites, driver) -> None:
    rec = rs.records(sites["revising"])[0]
    revisions = rec["revisions"]
    assert len(revisions) > 40 and revisions[0]["text"].endswith(rs.DRAFT)
    _open(driver, sites["audio"], "retrans-dev")
    _media_ready(driver)
    for key, lane in (("delay", "nca"), ("elapsed", "ca")):
        times = [r[key] for r in revisions]
        for ms in _moments(times, max(times)):
            t = _seek(driver, ms)
            shown = _shown(driver, lane)
            assert [w for w, struck in shown if not struck] == _current(revisions, key, t), (lane, t)
            # each draft's wrong last word is struck once its sentence's revision came, and only then
            finals = sum(1 for r in revisions if r[key] <= t and not r["text"].endswith(rs.DRAFT))
            assert [w for w, struck in shown if struck] == [rs.DRAFT] * finals, (lane, t)
    # through the media element too: between a draft and its revision the draft is shown, its wrong word not struck
    draft, final = revisions[4], revisions[5]
    assert draft["text"].endswith(rs.DRAFT) and final["delay"] > draft["delay"]
    t = driver.execute_async_script(SEEK_MEDIA, (draft["delay"] + final["delay"]) / 2000) * 1000
    assert [w for w, struck in _shown(driver, "nca") if not struck] == draft["text"].split()
    assert _shown(driver, "nca")[-1] == (rs.DRAFT, False) and t < final["delay"]
    driver.find_element(By.ID, "replay-erased").click()  # hiding erased words leaves the current revision
    driver.execute_async_script(SEEK_MEDIA, final["delay"] / 1000 + 0.001)
    assert _shown(driver, "nca") == [(w, False) for w in final["text"].split()]
    driver.find_element(By.ID, "replay-erased").click()


def test_a_click_on_a_word_or_a_timeline_dot_moves_the_player_there(sites, driver) -> None:
    rec = rs.records(sites["oracle"])[0]
    words, delays = rec["prediction"].split(), rec["delays"]
    _open(driver, sites["audio"], "oracle-dev")
    _media_ready(driver)
    _seek(driver, rec["source_length"] - 1)
    k = next(i for i in range(60, len(delays)) if delays[i] > delays[i - 1])  # the first word of a later write
    span = driver.find_elements(By.CSS_SELECTOR, '.lane-text[data-lane="nca"] .rw')[k]
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", span)
    span.click()
    assert driver.execute_script("return window.harnessReplay.time()") == delays[k]
    assert driver.execute_script("return document.getElementById('replay-audio').currentTime") * 1000 == \
        pytest.approx(delays[k], abs=1e-3)
    assert [w for w, _ in _shown(driver, "nca")] == words[: k + 1 + sum(1 for d in delays[k + 1:] if d == delays[k])]

    dots = driver.find_elements(By.CSS_SELECTOR, "svg.window circle[data-t]")
    assert len(dots) == len(words)
    j = next(i for i in range(len(delays) // 2, len(delays) - 1) if delays[i + 1] > delays[i])
    dot = dots[j]  # the last word of a write: its dot is drawn over those of the words written with it
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", dot)
    t = float(dot.get_attribute("data-t"))
    dot.click()
    assert driver.execute_script("return window.harnessReplay.time()") == t
    svg = dot.find_element(By.XPATH, "./ancestor::*[local-name()='svg']")
    cursor = svg.find_element(By.CSS_SELECTOR, "line.replay-cursor")
    assert driver.execute_script("return getComputedStyle(arguments[0]).display", cursor) != "none"
    others = svg.find_elements(By.XPATH, "//*[local-name()='line'][contains(@class, 'replay-cursor')]")
    assert sum(driver.execute_script("return getComputedStyle(arguments[0]).display", c) != "none"
               for c in others) == 1  # the cursor shows in the window of that time only
    x0, x1 = float(svg.get_attribute("data-x0")), float(svg.get_attribute("data-x1"))
    t0, t1 = float(svg.get_attribute("data-t0")), float(svg.get_attribute("data-t1"))
    assert float(cursor.get_attribute("x1")) == pytest.approx(x0 + (x1 - x0) * (t - t0) / (t1 - t0), abs=0.01)
    assert float(dot.get_attribute("cx")) == pytest.approx(float(cursor.get_attribute("x1")), abs=0.01)


def test_playing_moves_the_words_with_the_clock(sites, driver) -> None:
    """Play until the clock passed 1.5 s (a condition the page controls, not a sleep), pause, and the words shown
    are those of the paused time: with the audio, and silent on the clock in a site without audio."""
    rec = rs.records(sites["oracle"])[0]
    words = rec["prediction"].split()
    start = min(rec["delays"]) - 800
    for site in ("audio", "silent"):
        _open(driver, sites[site], "oracle-dev")
        has_audio = driver.execute_script("return !!document.getElementById('replay-audio')")
        assert has_audio == (site == "audio")
        if has_audio:
            _media_ready(driver)
        _seek(driver, start)
        driver.find_element(By.ID, "replay-play").click()
        WebDriverWait(driver, 30).until(lambda d: d.execute_script("return window.harnessReplay.time()") > start + 1500)
        driver.find_element(By.ID, "replay-play").click()  # pause
        assert not driver.execute_script("return window.harnessReplay.playing()")
        t = driver.execute_script("return window.harnessReplay.time()")
        if has_audio:
            assert driver.execute_script("return document.getElementById('replay-audio').paused")
        assert _shown(driver, "nca") == [(w, False) for w, d in zip(words, rec["delays"], strict=True) if d <= t]
        assert any(d <= t for d in rec["delays"])


def test_a_speech_instance_page_moves_its_slider_and_timeline_with_the_player(short_site, driver) -> None:
    """On a short-form instance page the replay drives the page's slider and partial output, the slider drives the
    player, and a click on a dot of the timeline moves the player to that word's moment."""
    run, site = short_site
    for rec in rs.records(run):
        words, delays = rec["prediction"].split(), rec["delays"]
        assert words == SHORT_WORDS and len(set(delays)) >= 3
        _open(driver, site, "words-dev", rec["index"])
        _media_ready(driver)
        partial, slider = driver.find_element(By.ID, "partial"), driver.find_element(By.ID, "moment")
        assert partial.text == rec["prediction"]  # before the replay is used, the page is as it always was
        for ms in _moments(delays, rec["source_length"] - 1):
            t = driver.execute_async_script(SEEK_MEDIA, ms / 1000) * 1000
            assert _shown(driver, "nca") == [(w, False) for w, d in zip(words, delays, strict=True) if d <= t]
            assert _shown(driver, "ca") == [(w, False) for w, e in zip(words, rec["elapsed"], strict=True)
                                            if e <= t]
            value = float(slider.get_attribute("value"))
            assert abs(value - t) <= 0.5  # the slider (whole ms) follows, and its partial output with it
            assert partial.text in (" ".join(w for w, d in zip(words, delays, strict=True) if d <= value),
                                    "(nothing written yet)")
        slider.send_keys(Keys.HOME)  # the slider drives the player
        assert driver.execute_script("return window.harnessReplay.time()") == 0
        assert driver.execute_script("return document.getElementById('replay-audio').currentTime") == 0
        assert _shown(driver, "nca") == [] and partial.text == "(nothing written yet)"
        dots = driver.find_elements(By.CSS_SELECTOR, "svg.timeline circle.write")
        k = max(i for i in range(len(delays)) if delays[i] < delays[-1])  # a word written before the last one
        dots[k].click()
        assert driver.execute_script("return window.harnessReplay.time()") == delays[k]
        assert [w for w, _ in _shown(driver, "nca")] == [w for w, d in zip(words, delays, strict=True)
                                                          if d <= delays[k]]


@pytest.mark.parametrize("width", [1400, 420])
def test_the_replay_fits_the_window_and_its_lanes_scroll_inside(sites, driver, width: int) -> None:
    """Side by side at 1400 px, one above the other at 420 px; the page never scrolls sideways, and the newest word
    is kept in view inside its lane, not by scrolling the page."""
    driver.set_window_size(width, 1000)
    try:
        _open(driver, sites["silent"], "oracle-dev")
        rec = rs.records(sites["oracle"])[0]
        y = driver.execute_script("return window.scrollY")
        _seek(driver, rec["source_length"] - 1)
        assert driver.execute_script("return window.scrollY") == y
        boxes = [driver.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.left, r.top];", e)
                 for e in driver.find_elements(By.CSS_SELECTOR, ".lane-text")]
        assert len(boxes) == 2 and ((boxes[0][1] == boxes[1][1]) if width == 1400 else (boxes[0][1] < boxes[1][1]))
        assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        for lane in ("nca", "ca"):  # the last word shown lies inside its lane's visible box
            inside = driver.execute_script(
                "const box = document.querySelector('.lane-text[data-lane=\"' + arguments[0] + '\"]');"
                "const shown = Array.from(box.querySelectorAll('.rw')).filter(e => !e.hidden);"
                "const w = shown[shown.length - 1].getBoundingClientRect(), b = box.getBoundingClientRect();"
                "return box.scrollHeight > box.clientHeight && w.top >= b.top && w.bottom <= b.bottom;", lane)
            assert inside, lane
    finally:
        driver.set_window_size(1366, 1000)
