"""Render a page in headless Chromium (Debian's package) and report what a reader would see.

Used by the tests of everything a person reads in a browser (the site, the audit report).
Chromium and its driver come from the system's packages (``scripts/setup_env.sh`` installs
them when missing); the tests skip with a reason where neither is installed and fail in CI.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

# Chromium is started as on a machine without network: no background connections, no sandbox
# (tests may run as root), a fresh profile each time.
_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,1600",
)

# Every <img> that finished loading with no pixels, every <object>/<embed> whose data failed,
# and the number of tables: what "no broken figure" means on the page.
_INSPECT = """
const imgs = Array.from(document.images);
return {
  title: document.title,
  text: document.body ? document.body.innerText : "",
  n_images: imgs.length,
  broken_images: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.currentSrc || i.src),
  n_tables: document.querySelectorAll("table").length,
};
"""


def _find(names: tuple[str, ...]) -> str | None:
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium_paths() -> tuple[str, str]:
    """The Chromium binary and its driver, or skip (fail in CI) when either is missing."""
    browser = _find(("chromium", "chromium-browser", "google-chrome"))
    driver = _find(("chromedriver",))
    if browser and driver:
        return browser, driver
    message = (
        "headless Chromium not found: install Debian's 'chromium' and 'chromium-driver' "
        "(scripts/setup_env.sh does so when run as root)"
    )
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def render(url: str, screenshot: Path | None = None, *, timeout_s: float = 30.0) -> dict:
    """Open ``url`` (``file://`` or ``http://``) in headless Chromium once it has loaded.

    Returns a dict with the page's ``title``, its visible ``text``, ``n_images``, the
    ``broken_images`` (sources of images that did not load) and ``n_tables``; the page's
    console errors are in ``console_errors``. Saves a PNG screenshot when ``screenshot`` is given.
    """
    pytest.importorskip("selenium", reason="selenium is a test dependency (pip install -e '.[test]')")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver_path = chromium_paths()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in _FLAGS:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    with tempfile.TemporaryDirectory(prefix="vrlib-chromium-") as profile:
        options.add_argument(f"--user-data-dir={profile}")
        driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
        try:
            driver.set_page_load_timeout(timeout_s)
            driver.get(url)
            # Images below the fold load lazily in some themes: scroll through the page first.
            driver.execute_script("window.scrollTo(0, document.body.scrollHeight);")
            driver.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                "Promise.all(Array.from(document.images).map(i => i.complete ? null :"
                " new Promise(r => { i.onload = i.onerror = r; }))).then(() => done());"
            )
            page = driver.execute_script(_INSPECT)
            page["console_errors"] = [
                entry["message"] for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"
            ]
            if screenshot is not None:
                driver.execute_script("window.scrollTo(0, 0);")
                Path(screenshot).parent.mkdir(parents=True, exist_ok=True)
                driver.save_screenshot(str(screenshot))
        finally:
            driver.quit()
    return page
