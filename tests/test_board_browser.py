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
