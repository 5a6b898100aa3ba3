"""The static site (scripts/build_site.sh): it builds from committed files, and a browser sees its figures and the scorecard."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from browser import broken_links, render, render_all
from conftest import PROJECT_ROOT
from test_executed_current import KNOWN_OLDER_THAN_SOURCE

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


def _build_site_module():
    spec = importlib.util.spec_from_file_location("build_site", PROJECT_ROOT / "scripts" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def seen(site) -> dict[str, dict]:
    """Every page of the site as headless Chromium renders it, offline."""
    return render_all([p.as_uri() for p in sorted(site.rglob("*.html"))])


def test_no_broken_link_or_image(site, seen):
    assert len(seen) >= 10
    bad = broken_links(seen)
    assert bad == {}, f"links or images that do not resolve: {bad}"
    for url, page in seen.items():
        assert page["broken_images"] == [], url


def test_works_offline_with_rendered_formulas(site, seen):
    for path in site.rglob("*.html"):
        remote = re.findall(r'<(?:script|link)\b[^>]*(?:src|href)="(https?:[^"]+)"', path.read_text())
        assert remote == [], f"{path.name} loads {remote}"
    assert (site / "_static" / "mathjax" / "MathJax.js").exists()
    with_math = [url for url, page in seen.items() if page["n_math"] > 0]
    assert any("07_mca" in url for url in with_math), "notebook 07's formulas were not typeset"
    for url in with_math:
        assert "\\(" not in seen[url]["text"], f"raw TeX left on {url}"


def test_long_lines_wrap_and_wide_tables_scroll(seen):
    for url, page in seen.items():
        assert page["unwrapped_lines"] == [], f"{url}: printed lines past the column: {page['unwrapped_lines'][:2]}"
        assert page["tables_past_column"] == [], f"{url}: tables past the column: {page['tables_past_column'][:2]}"
        assert not page["page_wider_than_window"], url


def test_pages_show_the_paper_run_where_the_scorecard_reads_paper(site):
    build = _build_site_module()
    paper = build.paper_notebooks()
    assert paper, "figures/paper/manifest.json names no notebook"
    for name in paper:
        text = re.sub(r"<[^>]+>", "", (site / "notebooks" / f"{name}.html").read_text())
        if (PROJECT_ROOT / "notebooks" / "executed" / "paper" / f"{name}.ipynb").exists():
            assert "Profile paper" in text and "This page shows the" not in text, name
            # a copy older than its notebook says so on its page (tests/test_executed_current.py lists them)
            older = f"paper/{name}" in KNOWN_OLDER_THAN_SOURCE
            assert ("Its notebook has changed since this run." in text) == older, name
        else:
            assert "This page shows the quick run" in text, name


def test_a_missing_paper_copy_is_said_on_the_page(tmp_path):
    """Staged without notebook 05's paper copy: the quick run is shown, and says so; with it, the paper run."""
    build = _build_site_module()
    assert "05_domias" in build.paper_notebooks()
    executed = tmp_path / "executed"
    for profile in ("quick", "paper"):
        (executed / profile).mkdir(parents=True)
    header = {"cell_type": "markdown", "id": "h", "metadata": {"tags": ["vrlib-provenance"]},
              "source": "> **Executed notebook.** Profile `quick`"}  # fmt: skip
    nb = {"cells": [header], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (executed / "quick" / "05_domias.ipynb").write_text(json.dumps(nb))
    notebooks = build.stage(tmp_path / "src", executed, ["paper", "quick"])
    assert notebooks["05_domias"].parent.name == "quick"
    staged = json.loads((tmp_path / "src" / "notebooks" / "05_domias.ipynb").read_text())
    assert "This page shows the `quick` run" in staged["cells"][1]["source"]
    # and it points at the paper-size figures that are committed (the scorecard's), each by name
    figures = build.paper_figures("05_domias")
    assert "domias_fig3a.png" in figures and all(f.endswith(".png") for f in figures)
    assert all(f"`figures/paper/{f}`" in staged["cells"][1]["source"] for f in figures)
    assert "figures/paper/domias" not in build.smaller_run_note("05_domias", "quick")  # none named: none claimed
    # the scorecard shows a figure beside the claims judged on it: 05's noise trace is on no row, so the note
    # names the figures it shows instead of "each"; with only figures on rows it says "each"
    judged = {f"{c.figure}.png" for c in build.scorecard.CLAIMS if c.figure}
    on_card = [f for f in figures if f in judged]
    assert "domias_fig6.png" in on_card and "domias_fig6_noise_trace.png" in figures
    assert "domias_fig6_noise_trace.png" not in on_card
    assert f"shows {', '.join(f'`{f}`' for f in on_card)} beside the claims" in staged["cells"][1]["source"]
    assert "shows each beside the claims" in build.smaller_run_note("05_domias", "quick", on_card)
    # lost's Fig. 1 is on no row of the scorecard: the note names the ones it shows, not "each"
    note = build.smaller_run_note("06_lost_model_seeded", "quick", ["lost_fig1.png", "lost_fig2.png"])
    assert "`figures/paper/lost_fig1.png`" in note and "shows `lost_fig2.png` beside" in note, note
    assert "shows none of them" in build.smaller_run_note("06_lost_model_seeded", "quick", ["lost_fig1.png"])
    (executed / "paper" / "05_domias.ipynb").write_text(json.dumps(nb))
    build.stage(tmp_path / "src", executed, ["paper", "quick"])
    staged = json.loads((tmp_path / "src" / "notebooks" / "05_domias.ipynb").read_text())
    assert len(staged["cells"]) == 1


def test_a_page_says_where_its_notebook_changed_since_the_run(tmp_path):
    """Staged from copies made here: one whose markdown changed since, one whose code changed, one as its source
    is; the first two say so in their header, naming the cell, even though the committed copy did not yet."""
    build = _build_site_module()
    executed, sources = tmp_path / "executed", tmp_path / "sources"
    (executed / "paper").mkdir(parents=True)
    sources.mkdir()

    def cell(kind, text, **meta):
        extra = {"outputs": [], "execution_count": None} if kind == "code" else {}
        return {"cell_type": kind, "id": f"c{abs(hash(text)) % 10**8}", "metadata": meta, "source": text, **extra}

    header = cell("markdown", "> **Executed notebook.** Profile `paper`", tags=["vrlib-provenance"])
    ran = [cell("markdown", "# Title\n\nBest method per ε."), cell("code", "print(1)")]
    now = {"prose": [cell("markdown", "# Title\n\nOne root seed cannot test that."), ran[1]],
           "code": [ran[0], cell("code", "print(2)")], "same": ran}  # fmt: skip
    names = dict(zip(now, list(build.scorecard.NOTEBOOKS.values())[:3]))
    for what, name in names.items():
        meta = {"vrlib": {"commits": ["abc1234"], "profile": "paper", "seed": 0}}
        copy = {"cells": [header, *ran], "metadata": meta, "nbformat": 4, "nbformat_minor": 5}
        (executed / "paper" / f"{name}.ipynb").write_text(json.dumps(copy))
        source = {"cells": now[what], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        (sources / f"{name}.ipynb").write_text(json.dumps(source))
    build.stage(tmp_path / "src", executed, ["paper"], sources=sources)

    def staged(what):
        nb = json.loads((tmp_path / "src" / "notebooks" / f"{names[what]}.ipynb").read_text())
        assert len(nb["cells"]) == 3 and nb["cells"][1:] == ran  # the run's cells as they were
        return nb["cells"][0]["source"]

    assert "cell 1 (markdown) changed, under “Title”" in staged("prose")
    assert "the outputs shown are those of the code at commit `abc1234`" in staged("prose")
    assert "cell 2 (code) changed, under “Title”" in staged("code")
    assert staged("same") == header["source"]


def test_docs_links_to_executed_notebooks_point_at_their_pages():
    build = _build_site_module()
    text = "see [the run](../notebooks/executed/paper/01_x.ipynb) and [that](../notebooks/executed/quick/09_y.ipynb)"
    assert build.link_notebooks(text, {"01_x"}) == "see [the run](../notebooks/01_x.ipynb) and that"


def test_a_reader_sees_that_a_copy_is_older_than_its_notebook(seen):
    """In the browser, the page of each paper copy older than its notebook shows the note, in its header."""
    older = [k.split("/")[1] for k in KNOWN_OLDER_THAN_SOURCE if k.startswith("paper/")]
    for name in older:
        url = next(u for u in seen if u.endswith(f"/notebooks/{name}.html"))
        text = seen[url]["text"]
        assert "Its notebook has changed since this run." in text, name
        assert text.index("Executed notebook.") < text.index("Its notebook has changed since this run."), name
