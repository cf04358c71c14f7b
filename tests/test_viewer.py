"""`harness view` against a run in progress, in headless Chromium: instances appear as they land in the run log, with
a visible running state, and the state turns to finished; instance pages show the timeline; it binds 127.0.0.1,
answers GET only, and a path outside the folder is a 404. A results folder is served as the leaderboard site. A run
folder is drawn by the leaderboard's own templates: the index lists each instance's state and scores, an instance
page is the leaderboard's instance page (source, references, legend, slider) with the run's state."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.text_task import REFS, SOURCES, make_text_task
from tests.viewer_support import start_view

pytestmark = pytest.mark.browser
webdriver = pytest.importorskip("selenium.webdriver")
from tests.browser_support import chrome  # noqa: E402  (after selenium is known to be here)

By = pytest.importorskip("selenium.webdriver.common.by").By
WebDriverWait = pytest.importorskip("selenium.webdriver.support.ui").WebDriverWait
_exc = pytest.importorskip("selenium.common.exceptions")
Keys = pytest.importorskip("selenium.webdriver.common.keys").Keys

GATED = '''
import os, time
from harness.client.agent import ReadAction, TextAgent, WriteAction


class Gated(TextAgent):
    """Echo; the second instance waits until the test opens the gate (a file), so the run is seen running."""

    def policy(self, states):
        if len(states.source) == 1 and states.extra.setdefault("n", 0) == 0:
            states.extra["n"] = 1
            Gated.count = getattr(Gated, "count", 0) + 1
        while getattr(Gated, "count", 0) >= 2 and not os.path.exists(os.environ["GATE"]):
            time.sleep(0.05)
        if not states.source_finished and len(states.source) <= len(states.target):
            return ReadAction()
        if len(states.target) < len(states.source):
            return WriteAction(states.source[len(states.target)])
        return WriteAction("", finished=True)
'''


@pytest.fixture
def driver(chromium: tuple[Path, Path], tmp_path: Path) -> Iterator[object]:
    drv = chrome(chromium, tmp_path / "profile")
    yield drv
    drv.quit()


@pytest.mark.slow
def test_a_run_in_progress_shows_its_instances_as_they_land(driver, tmp_path: Path) -> None:
    sources = ["one two three", "four five", "six seven eight nine"]
    cfg = make_text_task(tmp_path, sources)
    agent = tmp_path / "gated.py"
    agent.write_text(GATED, encoding="utf-8")
    gate = tmp_path / "gate"
    run_dir = tmp_path / "run"
    run = subprocess.Popen([sys.executable, "-m", "harness", "run", "--config", str(cfg), "--dataset", "dev",
                            "--agent", str(agent), "--output", str(run_dir)], env={**os.environ, "GATE": str(gate)},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        log = run_dir / "instances.log"
        end = time.monotonic() + 120
        while not (log.exists() and log.read_text().count("\n") >= 1):
            assert run.poll() is None and time.monotonic() < end, "the first instance never landed"
            time.sleep(0.05)
        viewer, url = start_view(run_dir)
        try:
            driver.get(url)
            state = driver.find_element(By.ID, "run-state").text
            assert state.startswith("running") and "1 of 3" in state
            assert len(driver.find_elements(By.CSS_SELECTOR, "tr.instance")) == 1
            gate.touch()  # the run goes on; the page follows without being asked
            WebDriverWait(driver, 120, poll_frequency=0.2,  # the page reloads itself meanwhile
                          ignored_exceptions=[_exc.StaleElementReferenceException, _exc.NoSuchElementException]
                          ).until(lambda d: d.find_element(By.ID, "run-state").text.startswith("finished"))
            assert len(driver.find_elements(By.CSS_SELECTOR, "tr.instance")) == 3
            driver.get(url + "instances/2.html")
            assert driver.find_element(By.ID, "final-hypothesis").text == "six seven eight nine"
            assert driver.find_elements(By.CSS_SELECTOR, "svg.timeline")
            for bad in ("../task.yaml", "..%2F..%2Fetc%2Fpasswd", "instances/9.html", "static/../../task.yaml"):
                with pytest.raises(urllib.error.HTTPError) as err:
                    urllib.request.urlopen(url + bad, timeout=5)
                assert err.value.code == 404, bad
            req = urllib.request.Request(url, data=b"x", method="POST")
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(req, timeout=5)
            assert err.value.code == 405  # read-only
        finally:
            viewer.send_signal(signal.SIGTERM)
            viewer.wait(10)
    finally:
        gate.touch()
        run.wait(120)


@pytest.mark.slow
def test_it_listens_on_loopback_only_by_default(tmp_path: Path) -> None:
    cfg = make_text_task(tmp_path)
    run_dir = tmp_path / "run"
    subprocess.run([sys.executable, "-m", "harness", "run", "--config", str(cfg), "--dataset", "dev", "--agent",
                    str(Path(__file__).parent / "agents" / "echo_text.py"), "--output", str(run_dir)],
                   check=True, capture_output=True, timeout=120)
    viewer, url = start_view(run_dir)
    try:
        port = int(url.rsplit(":", 1)[1].strip("/"))
        listening = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True).stdout
        local = [line.split()[3] for line in listening.splitlines() if line.strip()]
        assert local == [f"127.0.0.1:{port}"], listening  # not 0.0.0.0, not [::]
        assert "finished" in urllib.request.urlopen(url, timeout=5).read().decode()
    finally:
        viewer.send_signal(signal.SIGTERM)
        viewer.wait(10)


@pytest.mark.slow
def test_a_simuleval_run_folder_and_a_results_folder(fixture_results, tmp_path: Path) -> None:
    from leaderboard.live import RECHECK_S, ResultsSite

    example = Path(__file__).resolve().parent.parent / "examples" / "runs" / "udhr-dev-waitk3"
    viewer, url = start_view(example)  # written by SimulEval 1.1.4
    try:
        page = urllib.request.urlopen(url, timeout=10).read().decode()
        assert page.count('class="instance"') == 40 and "finished" in page
        assert "svg" in urllib.request.urlopen(url + "instances/0.html", timeout=10).read().decode()
    finally:
        viewer.send_signal(signal.SIGTERM)
        viewer.wait(10)
    results, _ = fixture_results
    site = ResultsSite(results)
    first = site.current()
    assert (first / "index.html").is_file() and site.renders == 1
    assert site.current() == first and site.renders == 1  # no change: no new rendering
    summary = results / "summary.json"
    time.sleep(RECHECK_S)
    os.utime(summary)
    assert site.current() != first and site.renders == 2  # the results changed: rendered once more
    viewer, url = start_view(results)
    try:
        assert "All submissions" in urllib.request.urlopen(url, timeout=60).read().decode()
    finally:
        viewer.send_signal(signal.SIGTERM)
        viewer.wait(10)


@pytest.mark.slow
def test_a_scored_run_is_drawn_by_the_leaderboards_own_pages(driver, tmp_path: Path) -> None:
    import json

    cfg = make_text_task(tmp_path)
    run_dir = tmp_path / "run"
    subprocess.run([sys.executable, "-m", "harness", "run", "--config", str(cfg), "--dataset", "dev", "--agent",
                    str(Path(__file__).parent / "agents" / "echo_text.py"), "--output", str(run_dir)],
                   check=True, capture_output=True, timeout=120)
    subprocess.run([sys.executable, "-m", "harness", "score", str(run_dir)], check=True, capture_output=True,
                   timeout=120)
    scores = {r["index"]: r for r in map(json.loads, (run_dir / "instance_scores.jsonl").read_text().splitlines())}
    viewer, url = start_view(run_dir)
    try:
        driver.get(url)
        assert driver.find_element(By.ID, "run-state").text.startswith("finished")
        head = [th.text.split()[0] for th in driver.find_elements(By.CSS_SELECTOR, "table.instances thead th")]
        assert head[:2] == ["#", "state"] and "LAAL" in head and "AP" in head
        rows = driver.find_elements(By.CSS_SELECTOR, "tr.instance")
        assert len(rows) == len(SOURCES)
        for row in rows:
            cells = [td.text for td in row.find_elements(By.TAG_NAME, "td")]
            index = int(cells[0])
            assert cells[1] == "ok"
            assert cells[head.index("LAAL")] == f"{scores[index]['LAAL']:.2f}"
            assert cells[head.index("AP")] == f"{scores[index]['AP']:.2f}"
        driver.get(url + "instances/1.html")  # the leaderboard's instance page, with the run's state
        assert driver.find_element(By.ID, "source-text").text == SOURCES[1]
        references = [p.text for p in driver.find_elements(By.CSS_SELECTOR, "p.reference")]
        assert references == [f"orig {REFS['orig'][1]}", f"mono {REFS['mono'][1]}"]
        assert "Blue: the moment each target word was written" in driver.find_element(By.TAG_NAME, "main").text
        assert driver.find_element(By.ID, "run-state").text.startswith("finished")
        assert driver.find_element(By.CSS_SELECTOR, "dl.metric-grid").text  # its per-instance metrics
        partial, slider = driver.find_element(By.ID, "partial"), driver.find_element(By.ID, "moment")
        assert partial.text == SOURCES[1]  # the echo agent writes the source back
        slider.send_keys(Keys.HOME)  # the leaderboard's own script runs on the viewer's page
        assert partial.text == "(nothing written yet)"
        assert driver.find_element(By.CSS_SELECTOR, "a[rel=next]").get_attribute("href") == url + "instances/2.html"
    finally:
        viewer.send_signal(signal.SIGTERM)
        viewer.wait(10)
