"""Render a page in headless Chromium (Debian's package) and report what a reader would see.

Used by the tests of everything a person reads in a browser (the site, the audit report).
Chromium and its driver come from the system's packages (``scripts/setup_env.sh`` installs
them when missing); the tests skip with a reason where neither is installed and fail in CI.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import urllib.parse
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
# and the number of tables: what "no broken figure" means on the page. Also every link and image
# source (resolved), the formulas MathJax rendered, and what runs past the text column: printed
# lines that do not wrap, tables wider than their column that do not scroll, a page wider than
# the window.
_INSPECT = """
const imgs = Array.from(document.images);
const wide = e => e.scrollWidth > e.clientWidth + 1;
const scrolls = e => ["auto", "scroll"].includes(getComputedStyle(e).overflowX);
const column = document.querySelector("div.body") || document.body;
return {
  title: document.title,
  text: document.body ? document.body.innerText : "",
  n_images: imgs.length,
  broken_images: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.currentSrc || i.src),
  n_tables: document.querySelectorAll("table").length,
  links: Array.from(document.querySelectorAll("a[href]")).map(a => a.href)
    .concat(imgs.map(i => i.src)),
  n_math: document.querySelectorAll(".MathJax, .MathJax_Display, .MathJax_SVG, mjx-container").length,
  unwrapped_lines: Array.from(document.querySelectorAll("div.cell_output pre, div.output pre"))
    .filter(p => wide(p)).map(p => p.innerText.slice(0, 80)),
  tables_past_column: Array.from(document.querySelectorAll("table"))
    .filter(t => t.getBoundingClientRect().right > column.getBoundingClientRect().right + 1)
    .filter(t => !(scrolls(t) || (t.parentElement && scrolls(t.parentElement) && !wide(t.parentElement.parentElement))))
    .map(t => t.innerText.slice(0, 80)),
  page_wider_than_window: document.documentElement.scrollWidth > window.innerWidth,
};
"""

# Once MathJax (2's Hub, or 3's startup promise) has typeset the page, or at once without it.
_MATH_DONE = """
const done = arguments[arguments.length - 1];
if (window.MathJax && window.MathJax.Hub) { window.MathJax.Hub.Queue(() => done()); }
else if (window.MathJax && window.MathJax.startup) { window.MathJax.startup.promise.then(() => done()); }
else { done(); }
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


@contextlib.contextmanager
def chromium(timeout_s: float = 30.0):
    """A headless Chromium driver (fresh profile, no network use), quit on exit."""
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
            driver.set_script_timeout(timeout_s)
            yield driver
        finally:
            driver.quit()


def _inspect(driver, url: str) -> dict:
    driver.get(url)
    # Images below the fold load lazily in some themes: scroll through the page first.
    driver.execute_script("window.scrollTo(0, document.body.scrollHeight);")
    driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "Promise.all(Array.from(document.images).map(i => i.complete ? null :"
        " new Promise(r => { i.onload = i.onerror = r; }))).then(() => done());"
    )
    driver.execute_async_script(_MATH_DONE)
    page = driver.execute_script(_INSPECT)
    page["console_errors"] = [entry["message"] for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]
    return page


def render(url: str, screenshot: Path | None = None, *, timeout_s: float = 30.0) -> dict:
    """Open ``url`` (``file://`` or ``http://``) in headless Chromium once it has loaded.

    Returns a dict with the page's ``title``, its visible ``text``, ``n_images``, the
    ``broken_images`` (sources of images that did not load), ``n_tables``, every ``links``
    target (``<a href>`` and ``<img src>``, resolved), ``n_math`` (formulas MathJax rendered),
    ``unwrapped_lines`` and ``tables_past_column`` (what runs past the text column) and
    ``page_wider_than_window``; the page's console errors are in ``console_errors``. Saves a
    PNG screenshot when ``screenshot`` is given.
    """
    with chromium(timeout_s) as driver:
        page = _inspect(driver, url)
        if screenshot is not None:
            driver.execute_script("window.scrollTo(0, 0);")
            Path(screenshot).parent.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(screenshot))
    return page


def render_all(urls, *, timeout_s: float = 30.0) -> dict[str, dict]:
    """:func:`render` for many pages in one browser: ``{url: what render returns}`` (no screenshots)."""
    with chromium(timeout_s) as driver:
        return {url: _inspect(driver, url) for url in urls}


def broken_links(pages: dict[str, dict]) -> dict[str, list[str]]:
    """``{page: [links that do not resolve]}`` among the ``file://`` links of rendered ``pages``.

    A link resolves when its file exists and, when it names an anchor in an HTML page, that
    page has an element with that id. Links to other schemes (``http``, ``mailto``) are not
    followed: the site is checked offline.
    """
    ids: dict[Path, set[str]] = {}
    bad: dict[str, list[str]] = {}
    for page, seen in pages.items():
        for link in seen["links"]:
            parts = urllib.parse.urlsplit(link)
            if parts.scheme != "file":
                continue
            path = Path(urllib.parse.unquote(parts.path))
            problem = not path.exists()
            if not problem and parts.fragment and path.suffix == ".html":
                if path not in ids:
                    ids[path] = set(re.findall(r"""\bid=["']([^"']+)["']""", path.read_text(errors="replace")))
                problem = urllib.parse.unquote(parts.fragment) not in ids[path]
            if problem:
                bad.setdefault(page, []).append(link)
    return bad
