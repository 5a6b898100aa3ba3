"""The browser check itself: it must tell a loaded image from a broken one."""

from __future__ import annotations

import base64
from pathlib import Path

from browser import broken_links, render, render_all
from conftest import PROJECT_ROOT

# A 1x1 PNG, so the good image needs no file of the project.
_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def test_render_tells_loaded_from_broken_images(tmp_path):
    (tmp_path / "ok.png").write_bytes(_PNG)
    page = tmp_path / "page.html"
    page.write_text(
        "<html><head><title>t</title></head><body><p>hello</p>"
        "<img src='ok.png'><img src='missing.png'><table><tr><td>1</td></tr></table></body></html>"
    )
    shot = tmp_path / "shot.png"
    seen = render(page.as_uri(), shot)
    assert seen["title"] == "t"
    assert "hello" in seen["text"]
    assert seen["n_images"] == 2
    assert len(seen["broken_images"]) == 1 and seen["broken_images"][0].endswith("missing.png")
    assert seen["n_tables"] == 1
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_broken_links_tells_good_from_broken(tmp_path):
    (tmp_path / "ok.png").write_bytes(_PNG)
    (tmp_path / "other.html").write_text("<html><body><h1 id='here'>x</h1></body></html>")
    page = tmp_path / "page.html"
    page.write_text(
        "<html><body><a href='other.html'>a</a><a href='other.html#here'>b</a><a href='#top' id='top'>c</a>"
        "<a href='https://example.org/'>d</a><img src='ok.png'>"
        "<a href='missing.html'>e</a><a href='other.html#nowhere'>f</a><img src='gone.png'></body></html>"
    )
    pages = render_all([page.as_uri()])
    bad = broken_links(pages)
    assert sorted(Path(link).name for link in bad[page.as_uri()]) == ["gone.png", "missing.html", "other.html#nowhere"]


def test_render_sees_what_runs_past_the_column(tmp_path):
    """A long printed line and a wide table overflow without the site's CSS, and fit with it."""
    css = (PROJECT_ROOT / "docs" / "site.css").read_text()
    body = (
        "<div class='body' style='width:600px'><div class='cell_output'><pre>"
        + "x" * 400
        + "</pre></div><table><tr>"
        + "".join(f"<td>column_{i}_value</td>" for i in range(40))
        + "</tr></table></div>"
    )
    (tmp_path / "raw.html").write_text(f"<html><body>{body}</body></html>")
    (tmp_path / "styled.html").write_text(f"<html><head><style>{css}</style></head><body>{body}</body></html>")
    pages = render_all([(tmp_path / n).as_uri() for n in ("raw.html", "styled.html")])
    raw, styled = pages[(tmp_path / "raw.html").as_uri()], pages[(tmp_path / "styled.html").as_uri()]
    assert len(raw["unwrapped_lines"]) == 1 and len(raw["tables_past_column"]) == 1
    assert styled["unwrapped_lines"] == [] and styled["tables_past_column"] == []
