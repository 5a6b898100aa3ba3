#!/usr/bin/env python
"""Copy a run's executed notebooks into ``notebooks/executed/<profile>/``, small and clean enough to commit.

    .venv/bin/python scripts/publish_notebooks.py --profile quick [--only 03_] [--source results/quick]

From each executed notebook (``results/<profile>/NN_*.ipynb``, as ``run_all.sh`` writes them) it
drops what a reader does not need and what would bloat the repository: stderr (progress bars,
warnings), carriage-return progress lines in stdout, widget outputs and widget state, per-cell
timing metadata; it shrinks PNG figures wider than ``--max-width`` pixels; it replaces this
machine's paths (the project folder, the data and cache folders) by relative or neutral names.
It puts a first cell on top that names the profile, seed and the commit(s) that made the run's
outputs (read from the profile's ``manifest.json``), which the site shows on every page. Where the
notebook's source (``notebooks/NN_*.ipynb``) no longer has the cells the run ran, that cell says so
too: how many cells differ, under which headings, and that the outputs are those of the run's code.

    .venv/bin/python scripts/publish_notebooks.py --profile paper --note-source-changes

writes no copy: it brings that note up to date in the committed copies (their first cell only).
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
from typing import NamedTuple
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BANNER_TAG = "vrlib-provenance"
WIDGET = "application/vnd.jupyter.widget-view+json"
RUN_ONLY_TAGS = (BANNER_TAG, "injected-parameters")  # cells the publisher and papermill add to a run
SOURCE_NOTE = "**Its notebook has changed since this run.**"


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
    source: Path | None = None,
) -> Path:
    """Write a clean copy of the executed notebook ``path`` into ``dest``; paths inside this checkout
    and the ``run_roots`` (other checkouts that ran it) become relative.  ``reruns``: the run's
    ``provenance.json`` (outputs it rewrote with the bytes they had). ``source``: the notebook as it is
    now (default ``notebooks/<name>.ipynb`` of this checkout); where the run's cells differ from it, the
    header says so (:func:`with_source_note`)."""
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
    source = Path(source) if source is not None else ROOT / "notebooks" / f"{name}.ipynb"
    if source.exists():  # the copy as published against the notebook as it is now
        nb = nbformat.reads(text, as_version=4)
        redrawn = redrawn_figures(manifest, name, commits)
        with_source_note(nb, json.loads(source.read_text()), name, params.get("profile", profile), redrawn)
        text = nbformat.writes(nb)
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / f"{name}.ipynb"
    out.write_text(text)
    left = sorted(set(re.findall(r"(?<![\w.~$])/(?:home|work|tmp|root|Users|mnt)/[^\s\"'\\]*", text)))
    if left:
        print(f"   warning: {out.name} still names absolute paths: {left[:3]}", file=sys.stderr)
    return out


# --------------------------------------------------------------------------- the copy against its notebook's source


class CellChange(NamedTuple):
    """One run of cells where an executed copy differs from its notebook's source (one of difflib's opcodes).

    ``kind`` is ``"changed"`` (the copy's cells stand where the source has others), ``"removed"`` (in the copy
    only) or ``"added"`` (in the source only). Positions count a notebook's cells from its title (1), without
    the publisher's header. ``types`` and ``sections`` go with ``copy_cells`` (with ``source_cells`` for added
    cells): each cell's type and the heading of the copy it is under (``""`` above the first heading).
    """

    kind: str
    copy_cells: tuple[int, ...]
    source_cells: tuple[int, ...]
    types: tuple[str, ...]
    sections: tuple[str, ...]


def _text(cell) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def _tags(cell) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def _headings(cell) -> list[str]:
    if cell.get("cell_type") != "markdown":
        return []
    return [line.lstrip("#").strip() for line in _text(cell).splitlines() if line.startswith("#")]


def source_changes(copy: dict, source: dict) -> list[CellChange]:
    """Where the cells of an executed ``copy`` differ from those of its notebook's ``source``; ``[]`` when the
    copy shows the source as it is.

    Cells are compared by type and text, matched in order by :class:`difflib.SequenceMatcher`; the cells a
    run and its publishing add (the header, papermill's injected parameters) are left out, and outputs are
    not compared (the source has none).
    """
    import difflib

    shown = [c for c in copy["cells"] if BANNER_TAG not in _tags(c)]
    ran = [(i + 1, c) for i, c in enumerate(shown) if not _tags(c) & set(RUN_ONLY_TAGS)]
    now = [c for c in source["cells"] if not _tags(c) & set(RUN_ONLY_TAGS)]
    # the heading each cell of the copy is under: its own when it opens with one, else the last one above it
    # and the heading in force after it (for cells the source added below it)
    under, after, last = [], [], ""
    for cell in shown:
        heads = _headings(cell)
        under.append(heads[0] if heads and _text(cell).startswith("#") else last)
        last = heads[-1] if heads else last
        after.append(last)

    def key(cell):
        return cell.get("cell_type"), _text(cell)

    kinds = {"replace": "changed", "delete": "removed", "insert": "added"}
    matcher = difflib.SequenceMatcher(None, [key(c) for _, c in ran], [key(c) for c in now], autojunk=False)
    changes = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        copy_cells = tuple(p for p, _ in ran[i1:i2])
        if op == "insert":  # under the heading of the copy's cell that the new cells follow
            section = after[ran[i1 - 1][0] - 1] if i1 else ""
            types = tuple(c.get("cell_type") for c in now[j1:j2])
            sections = (section,) * (j2 - j1)
        else:
            types = tuple(c.get("cell_type") for _, c in ran[i1:i2])
            sections = tuple(under[p - 1] for p in copy_cells)
        changes.append(CellChange(kinds[op], copy_cells, tuple(range(j1 + 1, j2 + 1)), types, sections))
    return changes


def _cells(positions) -> str:
    first, last = positions[0], positions[-1]
    return f"cell {first}" if first == last else f"cells {first}–{last}"


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _kinds(types) -> str:
    return ", ".join(f"{types.count(t)} {t}" for t in dict.fromkeys(types))


def redrawn_figures(manifest: dict, name: str, commits) -> dict[str, str]:
    """``{figure: commit}``: the PNG figures of notebook ``name`` that the manifest records as drawn again from
    their tables (``scripts/redraw_figures.py``) at a commit other than the run's ``commits``."""
    ran = {str(c)[:7] for c in commits}
    return {
        k: str(e["commit"])
        for k, e in manifest.items()
        if isinstance(e, dict) and e.get("notebook") == name and k.endswith(".png") and "drawn_from" in e
        and str(e.get("commit"))[:7] not in ran
    }  # fmt: skip


def source_note(copy: dict, source: dict, name: str, profile: str, redrawn: dict | None = None) -> str:
    """What an executed copy says under its header when its notebook's source has changed since the run:
    how many cells differ, where (positions and headings), that the outputs are those of the run's code and
    how to run it again; ``""`` when the copy shows the source as it is (:func:`source_changes`).
    ``redrawn``: the figures drawn again since from the run's tables (:func:`redrawn_figures`), which it names."""
    changes = source_changes(copy, source)
    if not changes:
        return ""
    meta = copy.get("metadata", {})
    commits = meta.get("vrlib", {}).get("commits", [])
    at = "commit " + ", ".join(f"`{c}`" for c in commits) if commits else "a commit not recorded"
    params = meta.get("papermill", {}).get("parameters", {})
    differ = [t for c in changes if c.kind != "added" for t in c.types]
    added = [t for c in changes if c.kind == "added" for t in c.types]
    source_now = f"`notebooks/{name}.ipynb` as it is now"
    lacks = f"{_count(len(added), 'cell')} this copy lacks ({_kinds(added)})"
    if differ:
        count = f"{len(differ)} of this copy's cells ({_kinds(differ)}) differ from {source_now}"
        count += f", which also has {lacks}" if added else ""
    else:
        count = f"{source_now} has {lacks}"
    parts = []
    for c in changes:
        if c.kind == "added":
            parts.append(f"{_kinds(c.types)} cell{'s' * (len(c.types) > 1)} added ({_cells(c.source_cells)} of the source), "
                         + (f"under “{c.sections[0]}”" if c.sections[0] else "above the first heading"))  # fmt: skip
            continue
        verb = "changed" if c.kind == "changed" else "no longer in the source"
        start = 0
        for end in range(1, len(c.copy_cells) + 1):  # one part per heading the run spans
            if end == len(c.copy_cells) or c.sections[end] != c.sections[start]:
                where = f"under “{c.sections[start]}”" if c.sections[start] else "above the first heading"
                parts.append(f"{_cells(c.copy_cells[start:end])} ({', '.join(c.types[start:end])}) {verb}, {where}")
                start = end
    return (
        f"{SOURCE_NOTE} {count}: "
        f"{'; '.join(parts)} (cells counted from the title). The prose, code and outputs below are the run's: "
        f"the outputs shown are those of the code at {at}, which is the code shown here, and a sentence here may "
        f"say what the notebook no longer says.{_redrawn_text(redrawn or {}, profile)} For the current notebook's "
        f"outputs, {_rerun(name, params, profile)}."
    )


def _redrawn_text(redrawn: dict, profile: str) -> str:
    if not redrawn:
        return ""
    names = ", ".join(f"`figures/{profile}/{k}` (commit `{c}`)" for k, c in sorted(redrawn.items()))
    return f" Drawn again since from the same tables, as the notebook draws them now: {names}."


def with_source_note(copy: dict, source: dict | None, name: str, profile: str, redrawn: dict | None = None) -> str:
    """Put :func:`source_note` into the header cell of ``copy`` (in place), after the header's own text, in
    place of any earlier note; returns the note (``""`` when the copy shows its ``source`` as it is, or there is
    no source, and then the header keeps no note). Only the header cell changes: nothing the run wrote."""
    note = source_note(copy, source, name, profile, redrawn) if source is not None else ""
    banner = next((c for c in copy["cells"] if BANNER_TAG in _tags(c)), None)
    if banner is None:
        if not note:
            return ""
        raise ValueError(
            f"{name}: the copy has no header cell (tag {BANNER_TAG!r}) to carry the note that its notebook changed; "
            "publish it with scripts/publish_notebooks.py"
        )
    text = _text(banner).split(f"\n>\n> {SOURCE_NOTE}")[0]
    banner["source"] = f"{text}\n>\n> {note}" if note else text
    return note


def note_source_changes(dest: Path, sources: Path = ROOT / "notebooks", manifest: dict | None = None) -> dict[str, str]:
    """Bring the note of :func:`with_source_note` up to date in the executed copies in ``dest`` (their header
    cell only; a copy whose header already says it is left as it is). ``manifest``: the profile's, for the
    figures drawn again since (default ``figures/<dest's name>/manifest.json``). Returns ``{name: note}``."""
    import nbformat

    if manifest is None:
        path = ROOT / "figures" / dest.name / "manifest.json"
        manifest = json.loads(path.read_text()) if path.exists() else {}
    notes = {}
    for path in sorted(dest.glob("[0-9][0-9]_*.ipynb")):
        text = path.read_text()
        nb = nbformat.reads(text, as_version=4)
        source = sources / path.name
        source_nb = json.loads(source.read_text()) if source.exists() else None
        profile = nb.metadata.get("vrlib", {}).get("profile", dest.name)
        redrawn = redrawn_figures(manifest, path.stem, nb.metadata.get("vrlib", {}).get("commits", []))
        notes[path.stem] = with_source_note(nb, source_nb, path.stem, profile, redrawn)
        new = nbformat.writes(nb)
        if new != text:
            path.write_text(new)
    return notes


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
    parser.add_argument(
        "--note-source-changes",
        action="store_true",
        help="publish nothing: bring up to date, in the copies already in --dest, the note saying where their "
        "notebook changed since the run (their header cell only)",
    )
    args = parser.parse_args(argv)
    source = Path(args.source) if args.source else ROOT / "results" / args.profile
    dest = Path(args.dest) if args.dest else ROOT / "notebooks" / "executed" / args.profile
    if args.note_source_changes:
        figures = Path(args.figures) if args.figures else ROOT / "figures" / args.profile
        path = figures / "manifest.json"
        notes = note_source_changes(dest, manifest=json.loads(path.read_text()) if path.exists() else {})
        for name, note in notes.items():
            print(f"{name}: {'differs from its notebook, noted' if note else 'shows its notebook as it is'}")
        return 0
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
