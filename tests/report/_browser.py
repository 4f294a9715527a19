"""A real headless Chromium, driven by WebDriver, for the HTML report tests.

Debian's ``chromium`` and ``chromium-driver`` (installed by ``make test`` through
scripts/system-deps.sh); the driver's path is given explicitly so that Selenium
never tries to download one. Skipped, saying why, only where they are missing.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
MISSING = ("chromium and chromium-driver are not installed "
           "(make test installs them with apt-get: scripts/system-deps.sh)")


def available() -> bool:
    return Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """One headless Chromium per test module (and per xdist worker)."""
    if not available():
        pytest.skip(MISSING)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1600", "--disable-extensions", "--no-first-run",
                "--disable-background-networking", "--disable-component-update",
                "--disable-default-apps", "--disable-sync"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


#: The only absolute URIs an SVG written by matplotlib holds: XML namespace names, which
#: identify vocabularies and are never fetched.
NAMESPACES = {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink",
              "http://purl.org/dc/elements/1.1/", "http://creativecommons.org/ns#",
              "http://www.w3.org/1999/02/22-rdf-syntax-ns#"}


def assert_offline(page: str) -> None:
    """Nothing in the page can fetch: no external src/href, no url(), no @import, a CSP that
    forbids every fetch; the only http URIs are namespace names."""
    assert "default-src 'none'" in page
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page, re.I)
    assert not re.search(r"url\(\s*['\"]?(?:https?:)?//", page, re.I)
    assert "@import" not in page
    assert set(re.findall(r"https?://[^\s\"'<>)]+", page)) <= NAMESPACES
