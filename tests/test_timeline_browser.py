"""The decoding timeline of a speech instance in headless Chromium, at 1400 and 420 px (SimulEval paper, Figure 3).

A real run (`harness run` on two espeak-ng sentences at 22.05 kHz) by an agent that reads the whole recording, then
writes twelve words, computing 0.15 s before each: every word is written at the recording's end (whose length is not
a multiple of 10 ms) and its computation-aware time lies beyond it. `harness view` serves the run folder on the
leaderboard's instance page. The slider reaches every word, every word's dot lies inside the plot's frame, the
dashed computation-aware line is drawn where its times are (both axes cover what is drawn), and at 420 px the
labels stay at least 11 px while the plot scrolls inside its box, not the page.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.speech_task import make_task
from tests.viewer_support import start_view

pytestmark = [pytest.mark.browser, pytest.mark.espeak, pytest.mark.slow]
webdriver = pytest.importorskip("selenium.webdriver")
from tests.browser_support import chrome  # noqa: E402  (after selenium is known to be here)

By = pytest.importorskip("selenium.webdriver.common.by").By
Keys = pytest.importorskip("selenium.webdriver.common.keys").Keys

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
WORDS = "uno dos tres cuatro cinco seis siete ocho nueve diez once doce".split()
AGENT = f'''
import time
from harness.client.agent import ReadAction, SpeechAgent, WriteAction

WORDS = {WORDS!r}


class AtTheEnd(SpeechAgent):
    """Reads the whole recording, then writes twelve words, computing 0.15 s before each."""

    def policy(self, states):
        if not states.source_finished:
            return ReadAction()
        if len(states.target) < len(WORDS):
            time.sleep(0.15)
            return WriteAction(WORDS[len(states.target)])
        return WriteAction("", finished=True)
'''


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("timeline")
    config = make_task(root)
    agent = root / "at_the_end.py"
    agent.write_text(AGENT, encoding="utf-8")
    out = root / "run"
    subprocess.run([sys.executable, "-m", "harness", "run", "--config", str(config), "--dataset", "dev", "--agent",
                    str(agent), "--output", str(out)], check=True, capture_output=True, timeout=180)
    return out


@pytest.fixture(scope="module")
def viewer(run_dir: Path) -> Iterator[str]:
    proc, url = start_view(run_dir)
    try:
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)


@pytest.fixture(scope="module")
def driver(chromium: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    drv = chrome(chromium, tmp_path_factory.mktemp("profile"))
    yield drv
    drv.quit()


def _record(run_dir: Path, index: int) -> dict:
    for line in (run_dir / "instances.log").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["index"] == index:
            return rec
    raise AssertionError(f"no instance {index}")


RIGHT = "const b = arguments[0].getBBox(); return b.x + b.width;"  # in plot units
RECT = "const r = arguments[0].getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom];"


def _inside(inner: list[float], outer: list[float], slack: float = 0.5) -> bool:
    return (inner[0] >= outer[0] - slack and inner[1] >= outer[1] - slack and inner[2] <= outer[2] + slack
            and inner[3] <= outer[3] + slack)


@pytest.mark.parametrize("width", [1400, 420])
def test_every_word_shows_at_its_moment_inside_axes_that_cover_it(run_dir: Path, viewer: str, driver,
                                                                   width: int) -> None:
    rec = _record(run_dir, 0)
    assert rec["prediction"].split() == WORDS and rec["source_length"] % 10  # not a multiple of the old 10 ms step
    assert max(rec["elapsed"]) > rec["source_length"] + 1000  # computation-aware times beyond the audio's end
    driver.set_window_size(width, 1000)
    try:
        driver.get(viewer + "instances/0.html")
        slider = driver.find_element(By.ID, "moment")
        partial = driver.find_element(By.ID, "partial")
        slider.send_keys(Keys.HOME)
        assert partial.text == "(nothing written yet)"
        slider.send_keys(Keys.END)  # the slider's end: every word written, also those written at the very end
        assert float(slider.get_attribute("value")) >= max(rec["delays"])
        assert partial.text == rec["prediction"]

        svg = driver.find_element(By.CSS_SELECTOR, "svg.timeline")
        frame = driver.execute_script(RECT, svg.find_element(By.CSS_SELECTOR, "rect.frame"))
        dots = svg.find_elements(By.CSS_SELECTOR, "circle.write")
        assert len(dots) == len(WORDS)
        for dot in dots:  # inside the frame (a dot's box reaches its radius, 3.5 plot units, past its centre)
            box = driver.execute_script(RECT, dot)
            centre = [(box[0] + box[2]) / 2, (box[1] + box[3]) / 2] * 2
            assert _inside(centre, frame), (dot.get_attribute("cy"), frame)

        # the dashed computation-aware line ends where the last computation-aware time is, inside the frame
        x0, x1 = float(svg.get_attribute("data-x0")), float(svg.get_attribute("data-x1"))
        top = float(svg.get_attribute("data-max"))
        assert top >= max(rec["elapsed"])  # the x axis covers every computation-aware time
        ca_right = driver.execute_script(RIGHT, svg.find_element(By.CSS_SELECTOR, "path.elapsed"))
        assert ca_right == pytest.approx(x0 + (x1 - x0) * max(rec["elapsed"]) / top, abs=0.6)
        writes_right = driver.execute_script(RIGHT, svg.find_element(By.CSS_SELECTOR, "path.delays"))
        assert ca_right > writes_right + 10  # not the non-computation-aware path again
        assert _inside(driver.execute_script(RECT, svg.find_element(By.CSS_SELECTOR, "path.elapsed")), frame, 2)

        sizes = driver.execute_script(
            "return Array.from(document.querySelectorAll('svg.timeline text')).map(t => {"
            " const m = t.getScreenCTM();"
            " return [parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b), t.textContent]; })")
        assert sizes and min(sizes)[0] >= 11, sorted(sizes)[:3]
        page_width = driver.execute_script("return document.documentElement.scrollWidth")
        inner = driver.execute_script("return window.innerWidth")
        assert page_width <= inner, f"the page is {page_width} px wide in a {inner} px window"
        ARTIFACTS.mkdir(exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / f"timeline-speech-{width}px.png"))
    finally:
        driver.set_window_size(1366, 1000)
