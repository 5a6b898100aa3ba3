#!/usr/bin/env python
"""Build the project's static site into ``build/site/`` from committed files only; nothing is executed.

    .venv/bin/python scripts/build_site.py [--profiles paper,quick] [--executed notebooks/executed] [--out build/site]

Pages: the scorecard as front page (``index.html``, from :mod:`vrlib.scorecard` with the site's
links), the provenance page, the pages of ``docs/`` and one page per executed notebook, taken
from ``notebooks/executed/<profile>/`` for the first profile of ``--profiles`` that has it. The
committed PNG figures are copied to ``figures/<profile>/``. Sphinx with myst-nb renders it all
(``nb_execution_mode = "off"``: the outputs are the executed notebooks' own).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vrlib import scorecard  # noqa: E402

DOC_LINKS = {"../figures/SCORECARD.md": "../index.md", "../figures/PROVENANCE.md": "../provenance.md"}


def pick_notebooks(executed: Path, profiles: list[str]) -> dict[str, Path]:
    """Notebook name -> its executed copy from the first profile that has one."""
    chosen = {}
    for name in scorecard.NOTEBOOKS.values():
        for profile in profiles:
            path = executed / profile / f"{name}.ipynb"
            if path.exists():
                chosen[name] = path
                break
    return chosen


def stage(src: Path, executed: Path, profiles: list[str]) -> dict[str, Path]:
    """Write the Sphinx project into ``src``; returns the notebooks it holds."""
    if src.exists():
        shutil.rmtree(src)
    (src / "notebooks").mkdir(parents=True)
    shutil.copy(ROOT / "docs" / "conf.py", src / "conf.py")
    notebooks = pick_notebooks(executed, profiles)
    for name, path in notebooks.items():
        shutil.copy(path, src / "notebooks" / f"{name}.ipynb")
    for profile in scorecard.PROFILES:
        folder = ROOT / "figures" / profile
        if folder.is_dir():
            dest = src / "_extra" / "figures" / profile
            dest.mkdir(parents=True)
            for png in folder.glob("*.png"):
                shutil.copy(png, dest / png.name)
    docs = sorted(p for p in (ROOT / "docs").glob("*.md"))
    (src / "docs").mkdir()
    for page in docs:
        text = page.read_text()
        for old, new in DOC_LINKS.items():
            text = text.replace(old, new)
        (src / "docs" / page.name).write_text(text)

    links = scorecard.Links(site=True, published=frozenset(notebooks))
    card = scorecard.scorecard_markdown(ROOT, links)
    toc = [
        "",
        "```{toctree}",
        ":hidden:",
        ":caption: Pages",
        "",
        "provenance",
        *[f"docs/{p.stem}" for p in docs],
        "```",
        "",
        "```{toctree}",
        ":caption: Executed notebooks",
        ":maxdepth: 1",
        "",
        *[f"notebooks/{name}" for name in notebooks],
        "```",
        "",
    ]
    if not notebooks:
        toc += ["No executed notebook is published yet: run `scripts/publish_notebooks.py` after a run.", ""]
    (src / "index.md").write_text(card + "\n" + "\n".join(toc))
    (src / "provenance.md").write_text(scorecard.provenance_markdown(ROOT).replace("](../docs/", "](docs/") + "\n")
    return notebooks


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--profiles",
        default="paper,quick",
        help="profiles to take executed notebooks from, first wins (default paper,quick)",
    )
    parser.add_argument(
        "--executed", default=str(ROOT / "notebooks" / "executed"), help="executed notebooks, one folder per profile"
    )
    parser.add_argument("--out", default=str(ROOT / "build" / "site"), help="where the site goes (default build/site)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    src = out.parent / f"{out.name}-src"
    notebooks = stage(src, Path(args.executed), [p for p in args.profiles.split(",") if p])
    if out.exists():
        shutil.rmtree(out)
    run = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E", str(src), str(out)], capture_output=True, text=True
    )
    warnings = [line for line in run.stderr.splitlines() if line.strip()]
    for line in warnings:
        print(re.sub(re.escape(str(src)) + "/?", "", line), file=sys.stderr)
    if run.returncode:
        print(f"build_site: Sphinx failed (exit {run.returncode})", file=sys.stderr)
        return run.returncode
    print(
        f"build_site: {len(notebooks)} notebook(s) ({', '.join(sorted({p.parent.name for p in notebooks.values()})) or 'none'}), "
        f"{len(warnings)} warning line(s) -> {out / 'index.html'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
