#!/usr/bin/env python
"""Copy a run's executed notebooks into ``notebooks/executed/<profile>/``, small and clean enough to commit.

    .venv/bin/python scripts/publish_notebooks.py --profile quick [--only 03_] [--source results/quick]

From each executed notebook (``results/<profile>/NN_*.ipynb``, as ``run_all.sh`` writes them) it
drops what a reader does not need and what would bloat the repository: stderr (progress bars,
warnings), carriage-return progress lines in stdout, widget outputs and widget state, per-cell
timing metadata; it shrinks PNG figures wider than ``--max-width`` pixels; it replaces this
machine's paths (the project folder, the data and cache folders) by relative or neutral names.
It puts a first cell on top that names the profile, seed and the commit(s) that made the run's
outputs (read from the profile's ``manifest.json``), which the site shows on every page.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import re
import shlex
import sys
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BANNER_TAG = "vrlib-provenance"
WIDGET = "application/vnd.jupyter.widget-view+json"


def _clean_stream(text: str) -> str:
    """Keep what a terminal would show: for each line, the text after its last carriage return."""
    return "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))


def _shrink_png(data: str, max_width: int) -> str:
    from PIL import Image

    raw = base64.b64decode(data)
    image = Image.open(io.BytesIO(raw))
    if image.width <= max_width:
        return data
    height = round(image.height * max_width / image.width)
    out = io.BytesIO()
    image.resize((max_width, height), Image.LANCZOS).save(out, format="PNG", optimize=True)
    return base64.b64encode(out.getvalue()).decode() if out.tell() < len(raw) else data


def _manifest(profile: str, figures: Path | None, run_roots: list[Path] = ()) -> tuple[dict, str]:
    """The run's manifest and its path (relative to the checkout that holds it, where one does)."""
    candidates = (
        [figures] if figures else [ROOT / "figures" / profile, ROOT / "results" / profile / "figures" / profile]
    )
    for folder in candidates:
        path = Path(folder).resolve() / "manifest.json"
        if path.exists():
            holders = [r for r in (ROOT, *run_roots) if path.is_relative_to(r.resolve())]
            shown = path.relative_to(holders[0].resolve()) if holders else path.name
            return json.loads(path.read_text()), str(shown)
    return {}, "no manifest found"


def _during(entry: dict, start: str | None, end: str | None) -> bool:
    def naive(t):
        return datetime.fromisoformat(t.replace("Z", "+00:00")).replace(tzinfo=None)

    return bool(start and end and "written" in entry and naive(start) <= naive(entry["written"]) <= naive(end))


def _commits(manifest: dict, notebook: str, start: str | None, end: str | None) -> list[str]:
    """The commits recorded for this notebook's outputs during the run (all its outputs when the run's times are unknown)."""
    entries = [e for e in manifest.values() if e.get("notebook") == notebook]
    if start and end:
        entries = [e for e in entries if _during(e, start, end)] or entries
    return sorted({str(e.get("commit", "")) for e in entries if e.get("commit")})


def _reproduced(manifest: dict, reruns: dict, notebook: str, start: str | None, end: str | None) -> list[str]:
    """The commits of the committed outputs this run wrote again byte for byte.

    ``vrlib.report`` keeps the manifest entry of an output a run rewrites with the bytes it had, and logs
    the run in ``results/<profile>/provenance.json`` (``reruns``) instead: those outputs were made
    at their manifest commit and reproduced by this run.
    """
    return sorted({
        str(manifest[name]["commit"])
        for name, e in reruns.items()
        if e.get("notebook") == notebook and _during(e, start, end) and manifest.get(name, {}).get("commit")
    })  # fmt: skip


def _rerun_commits(reruns: dict, notebook: str, start: str | None, end: str | None) -> list[str]:
    """The commits this run ran at, as its provenance log records them for the outputs it wrote again byte for byte."""
    return sorted({
        str(e["commit"]) for e in reruns.values() if e.get("notebook") == notebook and _during(e, start, end) and e.get("commit")
    })  # fmt: skip


def _neutral_paths(text: str, replacements: list[tuple[str, str]]) -> str:
    for old, new in replacements:
        text = text.replace(old, new)
    return text


def publish(
    path: Path,
    dest: Path,
    profile: str,
    manifest: tuple[dict, str],
    max_width: int,
    run_roots: tuple[Path, ...] | list[Path] = (),
    reruns: dict | None = None,
) -> Path:
    """Write a clean copy of the executed notebook ``path`` into ``dest``; paths inside this checkout
    and the ``run_roots`` (other checkouts that ran it) become relative.  ``reruns``: the run's
    ``provenance.json`` (outputs it rewrote with the bytes they had)."""
    reruns = reruns or {}
    import nbformat

    nb = nbformat.read(path, as_version=4)
    name = path.stem
    pm = nb.metadata.get("papermill", {})
    params = pm.get("parameters", {})
    for cell in nb.cells:
        for key in ("execution", "papermill", "collapsed", "scrolled"):
            cell.metadata.pop(key, None)
        if cell.cell_type != "code":
            continue
        kept = []
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                if out.name == "stderr":
                    continue
                out.text = _clean_stream(out.text)
                if not out.text.strip():
                    continue
            if out.output_type in ("display_data", "execute_result"):
                data = out.get("data", {})
                if WIDGET in data:
                    continue
                data.pop("application/pdf", None)
                if "image/png" in data:
                    data["image/png"] = _shrink_png(data["image/png"], max_width)
            kept.append(out)
        cell.outputs = kept
    nb.metadata.pop("widgets", None)
    pm = {k: v for k, v in pm.items() if k in ("parameters", "start_time", "end_time", "duration", "version")}
    nb.metadata["papermill"] = pm

    manifest, manifest_path = manifest
    start, end = pm.get("start_time"), pm.get("end_time")
    wrote = any(e.get("notebook") == name and _during(e, start, end) for e in manifest.values())
    ran_at = _rerun_commits(reruns, name, start, end)
    if ran_at and not wrote:
        # every output reproduced: the run's own commit (from its provenance log), then the outputs' commits
        commits = ran_at
        reproduced = [c for c in _reproduced(manifest, reruns, name, start, end) if c not in commits]
    else:
        commits = _commits(manifest, name, start, end)
        reproduced = [c for c in _reproduced(manifest, reruns, name, start, end) if c not in commits]
    when = (pm.get("end_time") or "")[:10] or "unknown date"
    nb.cells = [c for c in nb.cells if BANNER_TAG not in c.metadata.get("tags", [])]
    commit_text = ", ".join(f"`{c}`" for c in commits) if commits else "not recorded"
    if reproduced:
        commit_text += (f"; its {'other ' if wrote else ''}outputs are byte for byte those committed at "
                        f"{', '.join(f'`{c}`' for c in reproduced)}, which the manifest keeps")  # fmt: skip
    banner = nbformat.v4.new_markdown_cell(
        f"> **Executed notebook.** Profile `{params.get('profile', profile)}`, seed {params.get('seed', '?')}, "
        f"run {when}; commit {commit_text} (from `{manifest_path}`). "
        f"Source without outputs: `notebooks/{name}.ipynb`; {_rerun(name, params, profile)}.",
        metadata={"tags": [BANNER_TAG]},
    )
    nb.cells.insert(0, banner)
    nb.metadata["vrlib"] = {"profile": params.get("profile", profile), "seed": params.get("seed"), "commits": commits}
    if reproduced:
        nb.metadata["vrlib"]["reproduced"] = reproduced

    replacements = []
    for root in (*run_roots, ROOT):  # the checkout that ran the notebook may be another clone
        # The data folder beside the checkout, where vrlib finds the data unless VRLIB_DATA_DIR is set.
        shared = Path(root).parent / "shared" / "data"
        replacements += [(str(shared.resolve()), "../shared/data"), (str(shared), "../shared/data")]
        replacements += [(str(root) + "/", ""), (str(root), ".")]
    for var, label in (("VRLIB_DATA_DIR", "$VRLIB_DATA_DIR"), ("VRLIB_CACHE_DIR", "$VRLIB_CACHE_DIR")):
        value = os.environ.get(var)
        if value:
            replacements.insert(0, (str(Path(value).resolve()), label))
            replacements.insert(0, (value, label))
    replacements.append((str(Path.home()), "~"))
    text = _neutral_paths(nbformat.writes(nb), replacements)
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / f"{name}.ipynb"
    out.write_text(text)
    left = sorted(set(re.findall(r"(?<![\w.~$])/(?:home|work|tmp|root|Users|mnt)/[^\s\"'\\]*", text)))
    if left:
        print(f"   warning: {out.name} still names absolute paths: {left[:3]}", file=sys.stderr)
    return out


def _rerun(name: str, params: dict, profile: str) -> str:
    """How to run the notebook again as this run did: ``run_all.sh``, or papermill where the run set more parameters."""
    profile, seed = params.get("profile", profile), params.get("seed", 0)
    extra = {k: v for k, v in params.items() if k not in ("profile", "seed", "figures_dir", "tables_dir")}
    if not extra:
        return f"rerun it with `./run_all.sh --profile {profile} --only {name[:3]}`"
    # papermill reads each -y value as YAML, of which JSON is a subset: any parameter's type survives.
    given = " ".join(f"-y {shlex.quote(f'{k}: {json.dumps(v)}')}" for k, v in extra.items())
    said = ", ".join(f"{k} = {v!r}" for k, v in extra.items())
    return (
        f"this run set {said} besides the profile, so rerun it with "
        f"`mkdir -p results/{profile} && papermill notebooks/{name}.ipynb results/{profile}/{name}.ipynb "
        f"--cwd notebooks -p profile {profile} -p seed {seed} {given}` "
        f"(`./run_all.sh --profile {profile} --only {name[:3]}` runs it with the notebook's defaults)"
    )


def _run_roots(source: Path) -> list[Path]:
    """The checkout whose ``results/<profile>/`` holds the notebooks, when it is not this one."""
    root = source.resolve().parent.parent
    return [root] if source.resolve().parent.name == "results" and root != ROOT.resolve() else []


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="quick", help="the run's profile (default quick)")
    parser.add_argument("--source", default=None, help="folder of executed notebooks (default results/PROFILE)")
    parser.add_argument("--dest", default=None, help="where to write (default notebooks/executed/PROFILE)")
    parser.add_argument(
        "--figures",
        default=None,
        help="folder with the run's manifest.json (default figures/PROFILE, else results/PROFILE/figures/PROFILE)",
    )
    parser.add_argument("--only", default="", help="publish only notebooks whose name contains this")
    parser.add_argument("--max-width", type=int, default=1200, help="widest PNG kept, in pixels (default 1200)")
    args = parser.parse_args(argv)
    source = Path(args.source) if args.source else ROOT / "results" / args.profile
    dest = Path(args.dest) if args.dest else ROOT / "notebooks" / "executed" / args.profile
    found = sorted(p for p in source.glob("[0-9][0-9]_*.ipynb") if args.only in p.name)
    if not found:
        print(
            f"publish_notebooks: no executed notebook in {source}{' matching ' + args.only if args.only else ''}; "
            f"run ./run_all.sh --profile {args.profile} first",
            file=sys.stderr,
        )
        return 2
    run_roots = _run_roots(source)
    manifest = _manifest(args.profile, Path(args.figures) if args.figures else None, run_roots)
    log = source / "provenance.json"
    reruns = json.loads(log.read_text()) if log.exists() else {}
    for path in found:
        out = publish(path, dest, args.profile, manifest, args.max_width, run_roots=run_roots, reruns=reruns)
        print(
            f"{path.name}: {path.stat().st_size / 1e3:,.0f} kB -> {out.stat().st_size / 1e3:,.0f} kB ({out.parent.name}/)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
