"""The board's additions of issue 35 in a real headless Chromium (selenium): the plot's domain switch shows one
plot at a time and works without JavaScript (pure CSS radio buttons); rank clusters and regime flags explain
themselves in tooltips."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.board_support import domain_file, harness, text_config, text_submission

pytestmark = [pytest.mark.browser, pytest.mark.slow]
webdriver = pytest.importorskip("selenium.webdriver")
from tests.browser_support import DESKTOP, chrome  # noqa: E402  (after selenium is known to be here)

By = pytest.importorskip("selenium.webdriver.common.by").By



@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A batch with domains (yodas optional), served over HTTP."""
    root = tmp_path_factory.mktemp("board-browser")
    listed = domain_file(root / "test.domains", {"1-10": "acl", "11-16": "asharq", "17-20": "yodas"})
    config = text_config(root, {"file": str(listed), "optional": ["yodas"]})
    subs = root / "subs"
    text_submission(subs / "x", team="xteam", k=1, drop_every=4, drop_lines=(1, 10))
    text_submission(subs / "y", team="yteam", k=1, drop_every=4, drop_lines=(11, 20))
    text_submission(subs / "z", team="zteam", k=4, drop_every=3)
    out = harness("evaluate", str(subs), "--config", str(config), "--output", str(root / "results"), "--dataset",
                  "test")
    assert out.returncode == 0, out.stdout + out.stderr
    made = harness("leaderboard", str(root / "results"), "--config", str(config), "--output", str(root / "site"))
    assert made.returncode == 0, made.stderr
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root / "site"))
    handler.log_message = lambda *a, **k: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


def _driver(chromium: tuple[Path, Path], profile: Path, javascript: bool) -> webdriver.Chrome:
    return chrome(chromium, profile, DESKTOP, javascript=javascript)


@pytest.mark.parametrize("javascript", [True, False])
def test_the_plot_switches_between_the_main_ranking_and_each_domain(site: str, chromium: tuple[Path, Path],
                                                                   tmp_path: Path, javascript: bool) -> None:
    drv = _driver(chromium, tmp_path / "profile", javascript)
    try:
        drv.get(site + "index.html")
        plots = {p.get_attribute("data-domain"): p for p in drv.find_elements(By.CSS_SELECTOR, ".domain-plot")}
        assert list(plots) == ["main", "acl", "asharq", "yodas"]

        def shown() -> list[str]:
            return [name for name, p in plots.items() if p.is_displayed()]

        assert shown() == ["main"]
        for name in ("yodas", "acl", "main"):
            drv.find_element(By.CSS_SELECTOR, f'.domain-switch input[value="{name}"] + label').click()
            assert shown() == [name]
            svg = plots[name].find_element(By.CSS_SELECTOR, "svg.plot")
            assert svg.size["width"] > 300 and svg.get_attribute("id").endswith(
                "" if name == "main" else f"--{name}")
    finally:
        drv.quit()


def test_rank_clusters_and_regime_flags_have_tooltips(site: str, chromium: tuple[Path, Path], tmp_path: Path) -> None:
    drv = _driver(chromium, tmp_path / "profile", True)
    try:
        drv.get(site + "index.html")
        ranks = drv.find_elements(By.CSS_SELECTOR, "table.ranking td.rank")
        shared = [r for r in ranks if "–" in r.text]
        assert [r.text for r in shared] == ["1–2", "1–2"]
        assert all("Rank cluster 1 (ranks 1–2)" in (r.get_attribute("title") or "") for r in shared)
    finally:
        drv.quit()


PHONE = (420, 900)
#: the height of an element's text (a Range over its contents) and its computed line height, in px
TEXT_HEIGHT = """const e = arguments[0]; const r = document.createRange(); r.selectNodeContents(e);
const s = getComputedStyle(e);
return [r.getBoundingClientRect().height, parseFloat(s.lineHeight),
        parseFloat(s.paddingTop) + parseFloat(s.paddingBottom), e.getBoundingClientRect().height];"""


def _phone(chromium: tuple[Path, Path], profile: Path) -> webdriver.Chrome:
    drv = _driver(chromium, profile, True)
    drv.set_window_size(*PHONE)
    return drv


def test_at_420_px_a_rank_cluster_is_one_line_and_the_submission_column_sticks_beside_it(
        site: str, chromium: tuple[Path, Path], tmp_path: Path) -> None:
    drv = _phone(chromium, tmp_path / "profile")
    try:
        drv.get(site + "index.html")
        assert drv.execute_script("return window.innerWidth") <= PHONE[0]
        ranks = drv.find_elements(By.CSS_SELECTOR, "table.ranking td.rank")
        assert "1–2" in [r.text for r in ranks]
        for cell in ranks:
            text, line, _, _ = drv.execute_script(TEXT_HEIGHT, cell)
            assert text < 1.5 * line, f"rank {cell.text!r}: {text:.0f} px of text, a line is {line:.0f} px"
        row = drv.find_element(By.CSS_SELECTOR, "table.ranking tbody tr")
        wrap = row.find_element(By.XPATH, "ancestor::div[@class='table-wrap']")
        drv.execute_script("arguments[0].scrollLeft = 200", wrap)
        first, second = (drv.execute_script("return arguments[0].getBoundingClientRect().toJSON()", c)
                         for c in row.find_elements(By.CSS_SELECTOR, "td")[:2])
        assert second["left"] >= first["right"] - 1, (first, second)  # scrolled: the name never covers the rank
    finally:
        drv.quit()


def test_at_420_px_a_score_row_is_as_tall_as_its_content(site: str, chromium: tuple[Path, Path],
                                                        tmp_path: Path) -> None:
    """Each row of a submission page's scores is one line: no cell wraps (the signature neither: the table
    scrolls sideways), so the row is as tall as its metric's name and padding, not a column of signature pieces."""
    drv = _phone(chromium, tmp_path / "profile")
    try:
        drv.get(site + "runs/x-test/index.html")
        rows = drv.find_elements(By.CSS_SELECTOR, "table.scores tbody tr")
        assert rows
        for row in rows:
            name = row.find_element(By.CSS_SELECTOR, "th")
            text, line, padding, height = drv.execute_script(TEXT_HEIGHT, name)
            assert height <= 1.25 * (max(text, line) + padding), f"{name.text}: a {height:.0f} px row for one line"
            for cell in row.find_elements(By.CSS_SELECTOR, "td"):
                text, line, _, _ = drv.execute_script(TEXT_HEIGHT, cell)
                assert text < 1.5 * line, f"{name.text}: {cell.text[:40]!r} wraps ({text:.0f} px)"
    finally:
        drv.quit()
