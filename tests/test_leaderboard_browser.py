"""The rendered site in a real headless Chromium (Debian's chromium + chromedriver, driven by selenium).

Every page's links and resources stay inside the site and load; one page of each kind per run loads in Chromium with
no console error and no request outside the site; headers sort; the slider moves the partial translation; `<script>`
in a team name or a hypothesis stays text. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import functools
import html.parser
import http.server
import json
import shutil
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.cli import main
from tests.leaderboard_fixture import XSS_TEAM, XSS_TEXT

pytestmark = pytest.mark.browser
webdriver = pytest.importorskip("selenium.webdriver")
from tests.browser_support import DESKTOP, chrome  # noqa: E402  (after selenium is known to be here)

By = pytest.importorskip("selenium.webdriver.common.by").By
Keys = pytest.importorskip("selenium.webdriver.common.keys").Keys

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static files of the site; remembers every path asked for and its status."""

    seen: list[tuple[str, int]] = []

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        self.seen.append((self.path, int(code) if str(code).isdigit() else 0))


def _serve(results: Path, config: Path, site: Path) -> Iterator[str]:
    """`harness leaderboard RESULTS` into `site`, served over HTTP while the caller needs it."""
    assert main(["leaderboard", str(results), "--output", str(site), "--config", str(config)]) == 0
    handler = functools.partial(_Handler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def served(fixture_results: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    results, config = fixture_results
    yield from _serve(results, config, tmp_path_factory.mktemp("browser") / "site")


LONG_DECLARED = "8x NVIDIA H100 80GB HBM3, 2x Intel(R) Xeon(R) Platinum 8480+, 2 TiB"


@pytest.fixture(scope="module")
def served_measured(fixture_results: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The fixture's results with the hardware, start-up and compute that `harness run` measured (the run.json of
    the fixture's own `harness run`) in every manifest, as `harness evaluate` writes them; one run declares long
    hardware, as a log submission does."""
    results, config = fixture_results
    root = tmp_path_factory.mktemp("measured")
    copy = root / "results"
    shutil.copytree(results, copy)
    meta = json.loads((results.parent / "runs" / "apertium-waitk2" / "run.json").read_text(encoding="utf-8"))
    for path in copy.glob("*/manifest.json"):
        manifest = json.loads(path.read_text(encoding="utf-8"))
        entry = {"status": "ok", **{k: meta[k] for k in ("hardware", "startup", "compute")}}
        manifest.update(hardware=meta["hardware"], runs={"test": entry})
        if path.parent.name == "lab-a-wait5":
            manifest.update(kind="log", hardware={"declared": LONG_DECLARED},
                            runs={"test": {"status": "ok", "hardware": {"declared": LONG_DECLARED}}})
        path.write_text(json.dumps(manifest), encoding="utf-8")
    yield from _serve(copy, config, root / "site")


@pytest.fixture(scope="module")
def driver(chromium: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[webdriver.Chrome]:
    drv = chrome(chromium, tmp_path_factory.mktemp("chromium-profile"), DESKTOP, log_requests=True)
    yield drv
    drv.quit()


def _requests(drv: webdriver.Chrome, base: str) -> list[str]:
    """URLs requested by documents of the site (the browser's own chrome:// pages are not the site's doing)."""
    urls = []
    for entry in drv.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            params = msg["params"]
            if params.get("documentURL", "").startswith(base) or params["request"]["url"].startswith(base):
                urls.append(params["request"]["url"])
    return urls


def _load(drv: webdriver.Chrome, base: str, page: str) -> None:
    """Open `page`; fail on any console message of level SEVERE/WARNING or any request outside the site."""
    drv.get_log("browser")
    drv.get_log("performance")
    drv.get(base + page)
    drv.execute_script("return document.readyState")
    problems = [e for e in drv.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert not problems, f"{page}: console: {problems}"
    outside = [u for u in _requests(drv, base) if not (u.startswith(base) or u.startswith("data:"))]
    assert not outside, f"{page}: requests outside the site: {outside}"


class _Links(html.parser.HTMLParser):
    """What a page links to or loads: `href` of `a` and `link`, `src` of anything."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value and (name == "src" or (name == "href" and tag in ("a", "link"))):
                self.urls.append(value)


def _site(base: str) -> dict[str, list[str]]:
    """Every page reachable from the index over HTTP: {page: the URLs it links to or loads, without fragments}.
    Fails on a link outside the site and on anything that does not load (the site's script makes no links)."""
    todo, pages, fetched = ["index.html"], {}, set()
    while todo:
        page = todo.pop()
        if page in pages:
            continue
        with urllib.request.urlopen(base + page) as resp:
            parser = _Links()
            parser.feed(resp.read().decode("utf-8"))
        pages[page] = [urllib.parse.urljoin(base + page, u).split("#")[0] for u in parser.urls
                       if not u.startswith("data:")]
        for url in pages[page]:
            assert url.startswith(base), f"{page}: link outside the site: {url}"
            if url.endswith(".html"):
                todo.append(url[len(base):])
            elif url not in fetched:
                fetched.add(url)
                with urllib.request.urlopen(url) as resp:
                    assert resp.status == 200, (page, url)
        assert len(pages) < 2000
    return pages


def _kinds(pages: dict[str, list[str]]) -> list[str]:
    """One page of each kind with each run's data: the index, every run's page, and every run's first and last
    instance pages (an instance page is one template filled with one instance's data)."""
    runs: dict[str, list[str]] = {}
    for page in pages:
        if "/instances/" in page:
            runs.setdefault(page.split("/instances/")[0], []).append(page)
    ends = []
    for instances in runs.values():
        instances.sort(key=lambda p: int(p.rsplit("/", 1)[1].removesuffix(".html")))
        ends += sorted({instances[0], instances[-1]})
    return ["index.html"] + sorted(p for p in pages if p.startswith("runs/") and "/instances/" not in p) + ends


@pytest.mark.slow
def test_every_page_stays_inside_the_site_and_each_kind_loads_cleanly(served: str, driver: webdriver.Chrome) -> None:
    """Crawl from the index over HTTP (bounded by the site): every link and resource of every page is inside the site
    and loads. Then Chromium opens one page of each kind with each run's data: no console message, no request outside
    the site, no failed request."""
    _Handler.seen.clear()
    pages = _site(served)
    assert any("/instances/" in p for p in pages) and any(p.endswith("-test/index.html") for p in pages)
    kinds = _kinds(pages)
    assert len(kinds) >= 1 + 2 * sum(1 for p in pages if p.endswith("-test/index.html"))
    for page in kinds:
        _load(driver, served, page)
    missing = [(p, c) for p, c in _Handler.seen if c >= 400]
    assert not missing, f"requests that failed: {missing}"


def test_clicking_a_header_sorts_the_table(served: str, driver: webdriver.Chrome) -> None:
    _load(driver, served, "index.html")
    table = max(driver.find_elements(By.CSS_SELECTOR, "table.ranking"),
                key=lambda t: len(t.find_elements(By.CSS_SELECTOR, "tbody tr")))
    heads = table.find_elements(By.CSS_SELECTOR, "thead th")
    col = next(i for i, th in enumerate(heads) if th.text.startswith("LAAL ") or th.text == "LAAL ↓")

    def column() -> list[float]:
        cells = table.find_elements(By.CSS_SELECTOR, f"tbody tr td:nth-child({col + 1})")
        return [float(c.get_attribute("data-value")) for c in cells]

    before = column()
    assert before != sorted(before)  # ranked by BLEU, not by latency
    heads[col].click()
    assert column() == sorted(before) and heads[col].get_attribute("aria-sort") == "ascending"
    heads[col].click()
    assert column() == sorted(before, reverse=True) and heads[col].get_attribute("aria-sort") == "descending"


def _record(results: Path, sub: str, index: int) -> dict:
    for line in (results / sub / "test" / "instances.log").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["index"] == index:
            return rec
    raise AssertionError(f"no instance {index} in {sub}")


@pytest.mark.parametrize("sub", ["lab-a-wait3", "flicker-retrans", "speechy-k2"])
def test_moving_the_slider_changes_the_partial_translation(served: str, driver: webdriver.Chrome, sub: str,
                                                           fixture_results: tuple[Path, Path]) -> None:
    rec = _record(fixture_results[0], sub, 1)
    _load(driver, served, f"runs/{sub}-test/instances/1.html")
    partial = driver.find_element(By.ID, "partial")
    slider = driver.find_element(By.ID, "moment")
    cursor = driver.find_element(By.CSS_SELECTOR, "svg.timeline .cursor")
    assert partial.text == rec["prediction"]
    x_end = float(cursor.get_attribute("x1"))
    slider.send_keys(Keys.HOME)
    assert partial.text == "(nothing written yet)" and float(cursor.get_attribute("x1")) < x_end
    for _ in range(12):  # a user pressing Page Up (a tenth of the range) until something appears
        slider.send_keys(Keys.PAGE_UP)
        if partial.text != "(nothing written yet)":
            break
    t = float(slider.get_attribute("value"))
    if rec.get("revisions"):
        expect = [r["text"] for r in rec["revisions"] if r["delay"] <= t][-1]
    else:
        expect = " ".join(rec["prediction"].split()[: sum(1 for d in rec["delays"] if d <= t)])
    assert partial.text == expect and 0 < t < float(slider.get_attribute("max"))
    assert len(partial.text) < len(rec["prediction"])


def test_script_tags_in_team_and_hypothesis_show_as_text(served: str, driver: webdriver.Chrome) -> None:
    for page in ("index.html", "runs/tag-team-wait2-test/index.html", "runs/tag-team-wait2-test/instances/0.html"):
        _load(driver, served, page)
        assert driver.execute_script("return window.__pwned === undefined")
        body = driver.find_element(By.TAG_NAME, "body").text
        assert XSS_TEAM in body
        if page.endswith("0.html"):
            assert driver.find_element(By.ID, "final-hypothesis").text.endswith(XSS_TEXT)
            assert driver.find_element(By.ID, "partial").text.endswith(XSS_TEXT)


@pytest.mark.slow
def test_screenshots_of_index_submission_and_instance(served: str, driver: webdriver.Chrome) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    shots = {"leaderboard-index.png": "index.html",
             "leaderboard-submission.png": "runs/flicker-retrans-test/index.html",
             "leaderboard-instance.png": "runs/flicker-retrans-test/instances/1.html",
             "leaderboard-instance-speech.png": "runs/speechy-k2-test/instances/2.html"}
    for name, page in shots.items():
        _load(driver, served, page)
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(1366, min(max(height, 800), 4000))
        target = ARTIFACTS / name
        assert driver.save_screenshot(str(target)) and target.stat().st_size > 10_000
        driver.set_window_size(1366, 1000)
    assert len({(ARTIFACTS / name).read_bytes() for name in shots}) == len(shots)  # four pages, four pictures


PHONE = (420, 900)


def test_phone_width_shows_primary_columns_and_readable_plot(served: str, driver: webdriver.Chrome) -> None:
    """At 420 px: rank, submission, BLEU and LAAL in view without scrolling; plot labels >= 11 px; no overflow."""
    driver.set_window_size(*PHONE)
    try:
        _load(driver, served, "index.html")
        width = driver.execute_script("return window.innerWidth")
        assert width <= PHONE[0]
        table = driver.find_elements(By.CSS_SELECTOR, "table.ranking")[0]
        heads = table.find_elements(By.CSS_SELECTOR, "thead th")
        texts = [h.text for h in heads]
        for name in ("#", "Submission", "BLEU", "LAAL"):
            th = next(h for h, t in zip(heads, texts, strict=True) if t == name or t.startswith(name + " "))
            rect = driver.execute_script("return arguments[0].getBoundingClientRect().toJSON()", th)
            assert 0 <= rect["left"] and rect["right"] <= width, (name, rect, width)
        sizes = driver.execute_script(
            "return Array.from(document.querySelectorAll('svg.plot text')).map(t => {"
            " const m = t.getScreenCTM();"  # rendered size: CSS font size times the plot's scale (rotation-free)
            " return [parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b), t.textContent]; })")
        assert sizes and min(sizes)[0] >= 11, sorted(sizes)[:5]
        overflow = driver.execute_script("return document.documentElement.scrollWidth")
        assert overflow <= width, f"the page is {overflow} px wide in a {width} px window"
        ARTIFACTS.mkdir(exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / "leaderboard-index-420px.png"))
    finally:
        driver.set_window_size(1366, 1000)


LINES = """const r = document.createRange(); r.selectNodeContents(arguments[0]);
const boxes = Array.from(r.getClientRects()).filter(b => b.width > 0).sort((a, b) => a.top - b.top);
let lines = 0, bottom = -Infinity;  // a box that starts below the line so far starts a new line
for (const b of boxes) { if (b.top >= bottom - 2) { lines += 1; } bottom = Math.max(bottom, b.bottom); }
return lines;"""


def test_the_ranking_fits_1400_px_with_one_line_of_hardware(served_measured: str, driver: webdriver.Chrome) -> None:
    """At 1400 px every ranking table shows all its columns (Start-up and RTF too) without scrolling sideways, and
    the hardware cell is one line on every row (the whole text is its tooltip)."""
    driver.set_window_size(1400, 1000)
    try:
        _load(driver, served_measured, "index.html")
        width = driver.execute_script("return document.documentElement.clientWidth")
        tables = driver.find_elements(By.CSS_SELECTOR, "table.ranking")
        assert tables
        for table in tables:
            wrap = driver.execute_script("return [arguments[0].scrollWidth, arguments[0].parentElement.clientWidth]",
                                         table)
            assert wrap[0] <= wrap[1], f"the table is {wrap[0]} px wide in {wrap[1]} px"
            heads = {th.text.split()[0]: th for th in table.find_elements(By.CSS_SELECTOR, "thead th") if th.text}
            for name in ("Hardware", "Start-up", "RTF"):
                rect = driver.execute_script("return arguments[0].getBoundingClientRect().toJSON()", heads[name])
                assert rect["right"] <= width, (name, rect, width)
            cells = table.find_elements(By.CSS_SELECTOR, "td.hw")
            assert cells
            for cell in cells:
                assert driver.execute_script(LINES, cell) == 1, cell.get_attribute("title")
        titles = [c.get_attribute("title") for c in driver.find_elements(By.CSS_SELECTOR, "td.hw")]
        assert LONG_DECLARED in titles and any(t.startswith("AMD") or "cores" in t for t in titles)
        startup = [c.text for c in driver.find_elements(By.CSS_SELECTOR, "table.ranking tbody td:nth-last-child(2)")]
        assert any(t.endswith(" s") for t in startup)  # measured start-up shown, not cut off
        ARTIFACTS.mkdir(exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / "leaderboard-index-1400px.png"))
    finally:
        driver.set_window_size(1366, 1000)


BOXES = """return Array.from(arguments[0].querySelectorAll(arguments[1])).map(e => {
  const b = e.getBBox(); return [b.x, b.y, b.x + b.width, b.y + b.height, e.textContent]; });"""


def _overlap(a: list, b: list) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@pytest.mark.parametrize("width", [1400, 420])
def test_every_point_of_the_plot_is_named_without_overlap(served: str, driver: webdriver.Chrome,
                                                          fixture_results: tuple[Path, Path], width: int) -> None:
    """Each point has a label (its system, or its submission id where the system name is shared), drawn with the
    page's own fonts: no two labels overlap, no label covers a point, every label stays inside the plot's frame."""
    summary = json.loads((fixture_results[0] / "summary.json").read_text(encoding="utf-8"))
    driver.set_window_size(width, 1000)
    try:
        _load(driver, served, "index.html")
        for plot in driver.find_elements(By.CSS_SELECTOR, "svg.plot"):
            track = plot.get_attribute("id").removeprefix("plot-").removesuffix("-test")
            labels = driver.execute_script(BOXES, plot, "text.point-label")
            marks = driver.execute_script(BOXES, plot, "a.point circle, a.point rect")
            frame = driver.execute_script(BOXES, plot, "rect[fill=none]")[0]
            runs = [r for r in summary["runs"] if r["track"] == track and r["scores"]]
            assert len(labels) == len(marks) == len(runs), track
            names = {lab[4] for lab in labels}
            assert {"lab-a-wait1", "lab-a-wait3", "lab-a-wait5", "offline"} <= names or track != "text-en-es"
            for i, a in enumerate(labels):
                assert frame[0] <= a[0] and a[2] <= frame[2] and frame[1] <= a[1] and a[3] <= frame[3], a
                assert not any(_overlap(a, b) for b in labels[i + 1:]), (a, [b for b in labels if _overlap(a, b)])
                assert not any(_overlap(a, m) for m in marks), a
    finally:
        driver.set_window_size(1366, 1000)
