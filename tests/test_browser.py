"""The browser check itself: it must tell a loaded image from a broken one."""

from __future__ import annotations

import base64

from browser import render

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
