"""Headless Chromium for the browser tests (Debian's chromium and chromium-driver), started one way everywhere."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

#: what every browser test runs Chromium with (no sandbox as root, no GPU, nothing fetched in the background)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
#: a desktop-sized window without Chromium's first-run and update traffic (the pages' layout and request tests)
DESKTOP = ["--disable-component-update", "--no-first-run", "--disable-sync", "--window-size=1366,1000"]


def chrome(chromium: tuple[Path, Path], profile: Path, flags: Sequence[str] = (), *, log_requests: bool = False,
           javascript: bool = True, script_timeout: float | None = None) -> webdriver.Chrome:
    """A headless Chromium with its own profile folder; `log_requests` keeps the browser's and network logs."""
    binary, chromedriver = chromium
    opts = webdriver.ChromeOptions()
    opts.binary_location = str(binary)
    for flag in [*FLAGS, *flags, f"--user-data-dir={profile}"]:
        opts.add_argument(flag)
    if log_requests:
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    if not javascript:
        opts.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    drv = webdriver.Chrome(options=opts, service=Service(str(chromedriver)))
    drv.set_page_load_timeout(30)
    if script_timeout is not None:
        drv.set_script_timeout(script_timeout)
    return drv
