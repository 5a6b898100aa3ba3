"""The static site (scripts/build_site.sh): it builds from committed files, and a browser sees its figures and the scorecard."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from browser import render
from conftest import PROJECT_ROOT

SITE = PROJECT_ROOT / "build" / "site"
INPUTS = ("notebooks/executed", "figures", "docs", "vrlib/scorecard", "scripts/build_site.py")


def _newest_input() -> float:
    times = []
    for name in INPUTS:
        path = PROJECT_ROOT / name
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()] if path.exists() else []
        times += [p.stat().st_mtime for p in files]
    return max(times, default=0.0)


@pytest.fixture(scope="module")
def site() -> Path:
    """``build/site``, built again unless it is newer than everything it is built from."""
    pytest.importorskip("myst_nb", reason="Sphinx and myst-nb are test dependencies (pip install -e '.[test]')")
    index = SITE / "index.html"
    if not index.exists() or index.stat().st_mtime < _newest_input():
        run = subprocess.run(
            [sys.executable, str(PROJECT_ROOT / "scripts" / "build_site.py")],
            capture_output=True,
            text=True,
            cwd=PROJECT_ROOT,
        )
        assert run.returncode == 0, run.stdout + run.stderr
    assert index.exists()
    return SITE


def _notebook_pages(site: Path) -> list[Path]:
    return sorted((site / "notebooks").glob("*.html"))


def test_front_page_is_the_scorecard(site):
    page = render((site / "index.html").as_uri(), site / "screenshot_index.png")
    assert page["broken_images"] == [], f"broken images on the front page: {page['broken_images']}"
    assert page["n_images"] >= 1
    assert page["n_tables"] >= 4  # one table per paper
    assert "Reproduction scorecard" in page["text"]
    for paper in ("achilles", "domias", "lost", "mca"):
        assert f"{paper}:" in page["text"]
    assert re.search(r"holds|does not hold|not run", page["text"])
    assert (site / "screenshot_index.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_notebook_page_shows_its_figures_profile_and_commit(site):
    pages = _notebook_pages(site)
    assert pages, "no executed notebook on the site: publish some with scripts/publish_notebooks.py"
    # The page with the most figures, so that the check has images to look at.
    page_path = max(pages, key=lambda p: p.read_text().count("<img"))
    page = render(page_path.as_uri(), site / "screenshot_notebook.png")
    assert page["broken_images"] == [], f"broken images on {page_path.name}: {page['broken_images']}"
    assert page["n_images"] >= 1
    assert re.search(r"Executed notebook\. Profile \w+, seed \d+, run [\d-]+; commit", page["text"])


def test_every_notebook_page_names_profile_and_commit(site):
    for path in _notebook_pages(site):
        text = re.sub(r"<[^>]+>", "", path.read_text())
        assert re.search(r"Executed notebook\. Profile \w+, seed \d+, run [\d-]+; commit (\w+|not recorded)", text), (
            path.name
        )


def test_scorecard_links_reach_their_sections(site):
    index = (site / "index.html").read_text()
    links = set(re.findall(r'href="(notebooks/[^"#]+\.html)#([^"]+)"', index))
    figures = set(re.findall(r'(?:href|src)="(figures/[^"]+\.png)"', index))
    assert figures, "the front page links no figure"
    for path in figures:
        assert (site / path).exists(), path
    for page, anchor in links:
        assert f'id="{anchor}"' in (site / page).read_text(), f"{page} has no section #{anchor}"
