#!/usr/bin/env python
"""Build the project's static site into ``build/site/`` from committed files only; nothing is executed.

    .venv/bin/python scripts/build_site.py [--profiles paper,quick] [--executed notebooks/executed] [--out build/site]

Pages: the scorecard as front page (``index.html``, from :mod:`vrlib.scorecard` with the site's
links), the provenance page, the pages of ``docs/`` and one page per executed notebook, taken
from ``notebooks/executed/<profile>/`` for the first profile of ``--profiles`` that has it; a notebook
whose outputs the scorecard reads at the paper's sizes, shown from a smaller run, says so at its
top, and so does a copy whose notebook changed since its run (which cells, under which headings). The committed PNG figures are copied to ``figures/<profile>/``. Sphinx with myst-nb renders
it all (``nb_execution_mode = "off"``: the outputs are the executed notebooks' own). The site
works offline: MathJax is served from it (the ``jupyter-server-mathjax`` package's copy), and
links from the docs to executed notebooks point at their pages.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vrlib import scorecard  # noqa: E402


def _publish_notebooks():
    """``scripts/publish_notebooks.py``, whose header note says where a copy's notebook changed since its run."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("publish_notebooks", ROOT / "scripts" / "publish_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


publish_notebooks = _publish_notebooks()

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


def mathjax_dir() -> Path:
    """MathJax 2 as the ``jupyter-server-mathjax`` package ships it (a test dependency, pinned)."""
    try:
        import jupyter_server_mathjax
    except ImportError:
        raise SystemExit(
            "build_site: the site serves MathJax from the jupyter-server-mathjax package: "
            "pip install -e '.[test]' (scripts/setup_env.sh does)"
        ) from None
    return Path(jupyter_server_mathjax.__file__).parent / "static"


def paper_notebooks(root: Path = ROOT) -> set[str]:
    """Notebooks with outputs in ``figures/paper/``: the scorecard reads them at the paper's sizes."""
    path = root / "figures" / "paper" / "manifest.json"
    if not path.exists():
        return set()
    return {entry["notebook"] for entry in json.loads(path.read_text()).values()}


def paper_figures(name: str, root: Path = ROOT) -> list[str]:
    """The figures of notebook ``name`` committed at the papers' sizes (``figures/paper/*.png``, per the manifest)."""
    path = root / "figures" / "paper" / "manifest.json"
    if not path.exists():
        return []
    manifest = json.loads(path.read_text())
    return sorted(
        k for k, v in manifest.items() if isinstance(v, dict) and v.get("notebook") == name and k.endswith(".png")
    )


def smaller_run_note(name: str, profile: str, figures=()) -> str:
    """What a notebook page says when it shows a run other than the paper-profile one the scorecard reads, and
    where the paper-size outputs are (its committed figures, the scorecard's rows, the results page)."""
    # the scorecard shows a figure only beside a claim judged on it (lost's Fig. 1 is on none): name those it shows
    judged = {f"{c.figure}.png" for c in scorecard.CLAIMS if c.figure}
    on_card = [f for f in figures if f in judged]
    where = (
        "each"
        if len(on_card) == len(figures)
        else (", ".join(f"`{f}`" for f in on_card) if on_card else "none of them")
    )
    shown = (
        " Its paper-size figures are committed ("
        + ", ".join(f"`figures/paper/{f}`" for f in figures)
        + f"): the scorecard (the front page) shows {where} beside the claims it judges, and the results page "
        "gives their numbers."
        if figures
        else ""
    )
    return (
        f"> **This page shows the `{profile}` run.** The scorecard reads this notebook's outputs at the "
        f"papers' sizes (`figures/paper/`), but no executed `paper` copy of it is published, so the "
        f"numbers below are the `{profile}` profile's, not the scorecard's.{shown} Rerun it with "
        f"`./run_all.sh --profile paper --only {name[:3]}` (hours; see the runs page)."
    )


def _page(nb: dict, note: str = "") -> str:
    """The notebook ``nb`` as the site stages it, with ``note`` (if any) as a markdown cell after its header."""
    if note:
        cell = {"cell_type": "markdown", "id": "site-profile-note", "metadata": {}, "source": note}
        nb["cells"].insert(1 if nb["cells"] else 0, cell)
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def source_noted(path: Path, sources: Path, manifest: dict) -> dict:
    """The executed copy at ``path`` with its header's note on where its notebook (in ``sources``) changed since
    the run brought up to date (``publish_notebooks.with_source_note``): a copy published before a change of its
    notebook says so on its page even when the committed copy does not yet."""
    nb = json.loads(path.read_text())
    source = sources / path.name
    if source.exists():
        commits = nb.get("metadata", {}).get("vrlib", {}).get("commits", [])
        redrawn = publish_notebooks.redrawn_figures(manifest, path.stem, commits)
        publish_notebooks.with_source_note(nb, json.loads(source.read_text()), path.stem, path.parent.name, redrawn)
    return nb


def link_notebooks(text: str, published) -> str:
    """Links of a docs page to ``notebooks/executed/<profile>/<name>.ipynb`` -> the site's page of that notebook.

    A link to a notebook the site does not publish keeps its text and loses the link.
    """

    def swap(match):
        label, name = match.group(1), match.group(2)
        return f"[{label}](../notebooks/{name}.ipynb)" if name in published else label

    return re.sub(r"\[([^\]]*)\]\(\.\./notebooks/executed/[a-z]+/([^)/]+)\.ipynb\)", swap, text)


def stage(src: Path, executed: Path, profiles: list[str], sources: Path = ROOT / "notebooks") -> dict[str, Path]:
    """Write the Sphinx project into ``src``; returns the notebooks it holds. ``sources``: the notebooks as they
    are now, against which each copy's page says where its notebook changed since the run."""
    if src.exists():
        shutil.rmtree(src)
    (src / "notebooks").mkdir(parents=True)
    shutil.copy(ROOT / "docs" / "conf.py", src / "conf.py")
    shutil.copytree(mathjax_dir(), src / "_static" / "mathjax")
    shutil.copy(ROOT / "docs" / "site.css", src / "_static" / "vrlib.css")
    notebooks = pick_notebooks(executed, profiles)
    paper = paper_notebooks()
    manifests = {}
    for name, path in notebooks.items():
        profile = path.parent.name
        if profile not in manifests:
            manifest = ROOT / "figures" / profile / "manifest.json"
            manifests[profile] = json.loads(manifest.read_text()) if manifest.exists() else {}
        nb = source_noted(path, sources, manifests[profile])
        note = smaller_run_note(name, profile, paper_figures(name)) if name in paper and profile != "paper" else ""
        (src / "notebooks" / f"{name}.ipynb").write_text(_page(nb, note))
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
        (src / "docs" / page.name).write_text(link_notebooks(text, notebooks))

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
