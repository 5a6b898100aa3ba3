"""Figures and tables out of the notebooks: one style, PNG + PDF, CSV + Markdown + LaTeX, and a manifest.

Every figure and table file a notebook writes goes through a :class:`Reporter`, which
records in ``manifest.json`` (beside the figures) which notebook, profile, seed and
commit made it.  :func:`paper_vs_ours` builds the tables that show the paper's value
beside ours.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "font.size": 10,
}

METHOD_LABELS = {
    "random": "Random",
    "rare": "Rare value (Groundhog)",
    "loglik": "Log-likelihood (TAPAS)",
    "distance": "Distance (ours)",
}


def use_style() -> None:
    """Apply the project's figure style (seaborn ticks + a few rcParams)."""
    import matplotlib as mpl
    import seaborn as sns

    sns.set_theme(style="ticks", palette="colorblind")
    mpl.rcParams.update(STYLE)


def commit_id() -> str:
    """The current git commit (with ``-dirty`` when the tree has changes), or ``unknown``."""
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("-dirty" if dirty else "")


def _atomic_write_text(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


class Reporter:
    """Writes a notebook's figures and tables and records them in the manifest.

    Parameters
    ----------
    notebook : str
        The notebook's name (e.g. ``01_achilles_record_identification``).
    profile : str
    seed : int
    figures_dir, tables_dir : path-like
        Where figures (PNG + PDF) and tables (CSV + MD + TeX) go; created if missing.
    """

    def __init__(self, notebook: str, profile: str, seed: int, figures_dir="figures", tables_dir="figures/tables"):
        self.notebook = notebook
        self.profile = profile
        self.seed = seed
        self.figures_dir = Path(figures_dir)
        self.tables_dir = Path(tables_dir)
        self.figures_dir.mkdir(parents=True, exist_ok=True)
        self.tables_dir.mkdir(parents=True, exist_ok=True)
        self.commit = commit_id()

    def _record(self, files: list[Path], params: dict | None) -> None:
        manifest_path = self.figures_dir / "manifest.json"
        manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
        entry = {
            "notebook": self.notebook,
            "profile": self.profile,
            "seed": self.seed,
            "commit": self.commit,
            "written": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        if params:
            entry["parameters"] = params
        for f in files:
            manifest[os.path.relpath(f, self.figures_dir)] = entry
        _atomic_write_text(manifest_path, json.dumps(dict(sorted(manifest.items())), indent=1) + "\n")

    def savefig(self, fig, name: str, params: dict | None = None) -> list[Path]:
        """Save ``fig`` as ``name``.png and ``name``.pdf."""
        paths = [self.figures_dir / f"{name}.{ext}" for ext in ("png", "pdf")]
        for path in paths:
            fig.savefig(path)
        self._record(paths, params)
        return paths

    def write_table(self, df: pd.DataFrame, name: str, params: dict | None = None, float_format: str = "%.3f") -> list[Path]:
        """Write ``df`` as ``name``.csv (full precision), .md and .tex (rounded)."""
        csv, md, tex = (self.tables_dir / f"{name}.{ext}" for ext in ("csv", "md", "tex"))
        df.to_csv(csv, index=False)
        rounded = df.copy()
        for c in rounded.columns:
            if pd.api.types.is_float_dtype(rounded[c]):
                rounded[c] = rounded[c].map(lambda v: "" if pd.isna(v) else float_format % v)
        _atomic_write_text(md, _markdown(rounded) + "\n")
        _atomic_write_text(tex, rounded.to_latex(index=False, escape=True))
        self._record([csv, md, tex], params)
        return [csv, md, tex]


def _markdown(df: pd.DataFrame) -> str:
    """A GitHub Markdown table (pandas' to_markdown needs the optional tabulate package)."""
    header = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "| " + " | ".join("---" for _ in df.columns) + " |"
    rows = ["| " + " | ".join(map(str, row)) + " |" for row in df.itertuples(index=False)]
    return "\n".join([header, rule, *rows])


def paper_vs_ours(ours: pd.DataFrame, paper: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Join our ``auc_mean``/``auc_std`` with the paper's ``paper_mean``/``paper_std`` on ``keys``, plus the difference."""
    table = ours.merge(paper, on=keys, how="left")
    table["difference"] = table["auc_mean"] - table["paper_mean"]
    return table


def format_mean_std(mean, std, digits: int = 3) -> str:
    """``0.804 ± 0.072`` (empty when the mean is missing)."""
    if mean is None or (isinstance(mean, float) and np.isnan(mean)):
        return ""
    return f"{mean:.{digits}f} ± {std:.{digits}f}"
