#!/usr/bin/env python
"""Draw committed figures again from their committed tables, with the current plotting code.

    .venv/bin/python scripts/redraw_figures.py --profile paper [--only domias_fig3b ...] [--out DIR]

A figure whose notebook draws it from a table it writes (``figures/<profile>/tables/*.csv``)
can be drawn again without running the experiment: this script reads that table and calls the
same function the notebook calls (``vrlib.experiments.*_figures``).  Without ``--out`` it writes
``figures/<profile>/<name>.png/.pdf`` and records in ``manifest.json``, for each file, the commit
of the drawing code (which must be clean: commit the code first), the time, the machine, and under
``drawn_from`` the table(s) and the manifest entry of the run that made them (notebook, commit,
time written), which stays as it was.  With ``--out DIR`` it writes the figures there and touches
no manifest (a dry run, e.g. to compare bytes).

Figures drawn from data their tables do not hold (per-target AUCs of achilles Figs. 1 and 2,
per-record risks of lost Figs. 1, 2 and 5, ...) are not in :data:`FIGURES`; their notebooks must run.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from vrlib import report  # noqa: E402
from vrlib.data import atomic_write_bytes  # noqa: E402
from vrlib.errors import VrlibError  # noqa: E402


def _achilles_fig4(tables, params):
    from vrlib.experiments import achilles_figures

    return achilles_figures.plot_fig4(tables["achilles_fig4"])


def _domias_fig3b(tables, params):
    from vrlib.experiments import domias_figures

    return domias_figures.plot_fig3b(tables["domias_fig3b"], n_mem=params.get("n_mem"))


def _domias_fig13(tables, params):
    from vrlib.experiments import domias_figures

    return domias_figures.plot_fig13(tables["domias_fig13"])


def _domias_fig6(tables, params):
    from vrlib.experiments import domias_figures, fig6_figure, fig6_runs
    from vrlib.scorecard.domias import paper_domias

    table = tables["domias_fig6"]
    own = paper_domias(table)  # as notebook 05: DOMIAS with BNAF where the table has it, else KDE
    symbol = "σ²" if params.get("noise_values_are") == "variance" else "σ"
    # as notebook 05: the noise curve's range enlarged below, the runs the table holds in the title
    fig, _, _ = fig6_figure.draw(table, own, noise_symbol=symbol, ylabel=f"{domias_figures.ATTACK_LABELS[own]} AUC",
                                 title=fig6_runs.title(table))  # fmt: skip
    return fig


def _lost_sweep(key, labels, xlabel):
    def draw(tables, params):
        from vrlib.experiments import lost_figures

        rmsd, miss = tables[f"{key}_rmsd"], tables[f"{key}_miss"]
        return lost_figures.plot_sweep(rmsd, miss, labels(rmsd), xlabel)

    return draw


def _mca_fig3(tables, params):
    from vrlib.experiments import mca_figures

    return mca_figures.plot_fig3(tables["mca_fig3"], cols=4)


# figure -> (tables it is drawn from, function(tables, the first table's manifest parameters) -> figure)
FIGURES = {
    "achilles_fig4": (["achilles_fig4"], _achilles_fig4),
    "domias_fig3b": (["domias_fig3b"], _domias_fig3b),
    "domias_fig13": (["domias_fig13"], _domias_fig13),
    "domias_fig6": (["domias_fig6"], _domias_fig6),
    "lost_fig3": (
        ["lost_fig3_rmsd", "lost_fig3_miss"],
        _lost_sweep("lost_fig3", lambda r: [f"{n:,}" for n in r.n_records], "|D|"),
    ),
    "lost_fig4": (
        ["lost_fig4_rmsd", "lost_fig4_miss"],
        _lost_sweep("lost_fig4", lambda r: ["∞ (BayNet)" if math.isinf(e) else f"{e:g}" for e in r.epsilon], "ε"),
    ),
    "mca_fig3": (["mca_fig3"], _mca_fig3),
}

_PROVENANCE_KEYS = ("notebook", "profile", "seed", "commit", "written")


def redraw(profile: str, names=None, out: Path | None = None, figures_root: Path = ROOT / "figures") -> list[Path]:
    """Draw ``names`` (default: every figure of :data:`FIGURES` whose tables exist) from the tables of ``profile``.

    Returns the files written.  Without ``out`` the files replace the committed ones and the
    manifest records the drawing (see the module's docstring); the commit must be clean.
    """
    folder = figures_root / profile
    manifest_path = folder / "manifest.json"
    if not manifest_path.exists():
        raise VrlibError(f"no {manifest_path}: is {profile!r} a profile with committed figures?")
    manifest = json.loads(manifest_path.read_text())
    unknown = sorted(set(names or ()) - set(FIGURES))
    if unknown:
        raise VrlibError(f"cannot redraw {unknown} from tables; these can: {sorted(FIGURES)}")
    commit = report.commit_id()
    if out is None and (commit == "unknown" or commit.endswith("-dirty")):
        raise VrlibError(
            f"the code is at {commit!r}: commit the plotting code first, so that the manifest can name the "
            "commit that drew the figures (or write elsewhere with --out)"
        )
    report.use_style()
    written = []
    for name in names or FIGURES:
        table_names, draw = FIGURES[name]
        paths = [folder / "tables" / f"{t}.csv" for t in table_names]
        if not all(p.exists() for p in paths):
            if names:
                raise VrlibError(f"{name}: missing {[str(p) for p in paths if not p.exists()]}")
            continue
        entries = {f"tables/{t}.csv": manifest.get(f"tables/{t}.csv") for t in table_names}
        if not all(entries.values()):
            raise VrlibError(f"{name}: the manifest has no entry for {[k for k, e in entries.items() if not e]}")
        first = entries[f"tables/{table_names[0]}.csv"]
        start = time.monotonic()
        fig = draw({t: pd.read_csv(p) for t, p in zip(table_names, paths)}, first.get("parameters", {}))
        target = Path(out) if out is not None else folder
        target.mkdir(parents=True, exist_ok=True)
        files = []
        for ext in ("png", "pdf"):
            buf = io.BytesIO()
            fig.savefig(buf, format=ext, metadata=report._METADATA[ext])
            atomic_write_bytes(target / f"{name}.{ext}", buf.getvalue())
            files.append(target / f"{name}.{ext}")
        plt.close(fig)
        if out is None:
            entry = {
                "notebook": first["notebook"],
                "profile": profile,
                "seed": first.get("seed"),
                "commit": commit,
                "written": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "drawn_s": round(time.monotonic() - start, 1),
                "machine": report.machine(),
                "parameters": first.get("parameters", {}),
                "drawn_from": {
                    "by": "scripts/redraw_figures.py",
                    "tables": {k: {key: e.get(key) for key in _PROVENANCE_KEYS} for k, e in entries.items()},
                },
            }
            report.update_manifest(folder, {f.name: entry for f in files})
        written += files
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", required=True, choices=report.COMMITTED_PROFILES)
    parser.add_argument(
        "--only", nargs="+", metavar="FIGURE", help=f"figures to draw (default: all of {sorted(FIGURES)})"
    )
    parser.add_argument("--out", type=Path, help="write the figures here and leave the manifest alone")
    args = parser.parse_args(argv)
    try:
        files = redraw(args.profile, args.only, args.out)
    except VrlibError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for f in files:
        print(f.relative_to(ROOT) if f.is_relative_to(ROOT) else f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
