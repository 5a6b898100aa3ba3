"""The README's *Layout* names every module and subpackage at the top of ``vrlib/``."""

from __future__ import annotations

import re

from conftest import PROJECT_ROOT


def _layout(readme: str) -> str:
    return readme.split("## Layout", 1)[1].split("\n## ", 1)[0]


def test_layout_names_every_top_level_module():
    layout = _layout((PROJECT_ROOT / "README.md").read_text())
    named = set(re.findall(r"`([a-z_]+)/?`", layout))
    package = PROJECT_ROOT / "vrlib"
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    modules |= {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    assert sorted(modules - named) == []


def test_layout_check_sees_a_missing_module():
    layout = _layout("# t\n\n## Layout\n\n`vrlib/` the package: `cli`, `data/`\n\n## Data\n\n`runs`\n")
    assert set(re.findall(r"`([a-z_]+)/?`", layout)) == {"vrlib", "cli", "data"}
