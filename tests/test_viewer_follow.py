"""`harness view` follows a run folder over real HTTP: `harness run` writes the per-instance scores its pages show,
an instance page shown before `harness score` shows the scores after it without a restart, and the breadcrumbs
and titles of a plain run folder (no track, no system) have no empty part."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.text_task import make_text_task
from tests.viewer_support import start_view

pytestmark = pytest.mark.slow  # real runs and a real viewer (seconds each)
ROOT = Path(__file__).resolve().parents[1]
ECHO = ROOT / "tests" / "agents" / "echo_text.py"
SIMULEVAL_RUN = ROOT / "examples" / "runs" / "udhr-dev-waitk3"  # written by SimulEval 1.1.4, never scored by us


class _Crumbs(HTMLParser):
    """The title, the crumbs' links and the h1 of a page, as text."""

    def __init__(self) -> None:
        super().__init__()
        self.title = self.h1 = ""
        self.links: list[str] = []
        self.crumbs = ""
        self._in: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        cls = dict(attrs).get("class") or ""
        if tag == "p" and "crumbs" in cls:
            self._in.append("crumbs")
        elif tag in ("title", "h1"):
            self._in.append(tag)
        elif tag == "a" and self._in[-1:] == ["crumbs"]:
            self.links.append("")
            self._in.append("a")
        elif tag == "span" and "pager" in cls and "crumbs" in self._in:
            self._in.append("pager")

    def handle_endtag(self, tag: str) -> None:
        if self._in and (tag == self._in[-1] or (tag == "p" and self._in[-1] == "crumbs")
                         or (tag == "span" and self._in[-1] == "pager")):
            self._in.pop()

    def handle_data(self, data: str) -> None:
        if "pager" in self._in:
            return
        if "title" in self._in:
            self.title += data
        if "h1" in self._in:
            self.h1 += data
        if "crumbs" in self._in:
            self.crumbs += data
            if self._in[-1] == "a":
                self.links[-1] += data


def _get(url: str) -> str:
    return urllib.request.urlopen(url, timeout=30).read().decode("utf-8")


def _parts(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"[·›]", " ".join(text.split()))]


def test_a_fresh_run_shows_its_per_instance_scores_and_names_no_empty_crumb(tmp_path: Path) -> None:
    cfg = make_text_task(tmp_path)
    run_dir = tmp_path / "run"
    subprocess.run([sys.executable, "-m", "harness", "run", "--config", str(cfg), "--dataset", "dev", "--agent",
                    str(ECHO), "--output", str(run_dir)], check=True, capture_output=True, timeout=120)
    assert (run_dir / "instance_scores.jsonl").is_file()  # `harness run` writes what the viewer shows
    viewer, url = start_view(run_dir)
    try:
        index = _get(url)
        assert "No per-instance scores yet" not in index and ">LAAL <" in index
        page = _Crumbs()
        page.feed(_get(url + "instances/1.html"))
        assert page.links and all(link.strip() for link in page.links), page.links
        for text in (page.title, page.crumbs, page.h1):
            assert all(_parts(text)), f"an empty part in {text!r}"
        assert _parts(page.crumbs)[-1] == "instance 1" and "run" in _parts(page.crumbs)
        assert '<dl class="metric-grid">' in _get(url + "instances/1.html")
    finally:
        viewer.send_signal(signal.SIGTERM)
        viewer.wait(10)


def test_an_instance_page_shows_the_scores_of_a_later_harness_score(tmp_path: Path) -> None:
    run_dir = tmp_path / "simuleval-run"
    shutil.copytree(SIMULEVAL_RUN, run_dir)
    assert not (run_dir / "instance_scores.jsonl").exists()
    viewer, url = start_view(run_dir)
    try:
        before = _get(url + "instances/3.html")
        assert "No per-instance metrics" in before and "metric-grid" not in before
        assert "No per-instance scores yet" in _get(url)
        subprocess.run([sys.executable, "-m", "harness", "score", str(run_dir)], check=True, capture_output=True,
                       timeout=120)
        after = _get(url + "instances/3.html")  # the same viewer, not restarted
        assert "No per-instance metrics" not in after and '<dl class="metric-grid">' in after
        assert re.search(r"<dt>LAAL <span", after)
        assert "No per-instance scores yet" not in _get(url)
    finally:
        viewer.send_signal(signal.SIGTERM)
        viewer.wait(10)


def test_a_results_folder_page_shows_the_scores_of_a_later_harness_score(tmp_path: Path) -> None:
    """A results folder is served as the leaderboard site, rendered again when a run of it is scored anew."""
    cfg = make_text_task(tmp_path)
    results = tmp_path / "results"
    run_dir = results / "echo" / "dev"
    subprocess.run([sys.executable, "-m", "harness", "run", "--config", str(cfg), "--dataset", "dev", "--agent",
                    str(ECHO), "--output", str(run_dir)], check=True, capture_output=True, timeout=120)
    (run_dir / "instance_scores.jsonl").unlink()  # as a run scored before per-instance scores were written
    run = {"submission": "echo", "team": "t", "system": "echo", "track": "text-en-es", "dataset": "dev",
           "status": "ok", "scores": json.loads((run_dir / "scores.json").read_text(encoding="utf-8"))}
    (results / "summary.json").write_text(json.dumps({"config_sha256": None, "runs": [run]}), encoding="utf-8")
    viewer, url = start_view(results)
    page = url + "runs/echo-dev/instances/1.html"
    try:
        assert "No per-instance metrics" in _get(page)
        subprocess.run([sys.executable, "-m", "harness", "score", str(run_dir)], check=True, capture_output=True,
                       timeout=120)
        end = time.monotonic() + 60  # the viewer looks at the folder at most once a second: ask until it has
        while "No per-instance metrics" in (html := _get(page)):
            assert time.monotonic() < end, "the page never showed the new per-instance scores"
            time.sleep(0.2)
        assert '<dl class="metric-grid">' in html
    finally:
        viewer.send_signal(signal.SIGTERM)
        viewer.wait(10)
