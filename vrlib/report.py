"""Figures and tables out of the notebooks: one style, PNG + PDF, CSV + Markdown + LaTeX, and a manifest.

Every figure and table file a notebook writes goes through a :class:`Reporter`.  Outputs
live per profile: figures in ``<figures_dir>/<profile>/``, tables in
``<figures_dir>/<profile>/tables/``, and beside them ``manifest.json``, which records for
every file the notebook, profile, seed, commit, machine and wall time that made it.  A
rerun that writes a file byte for byte as it was leaves its manifest entry alone and records
its own provenance in ``results/<profile>/provenance.json`` (git-ignored), so reproducing the
committed outputs leaves the clone clean; a file whose bytes change gets a new entry and a
message saying so.  A run under one profile therefore never writes over another profile's outputs, however
the notebook is launched; and a ``smoke`` run never writes into the project's committed
``figures/`` at all (it goes to ``results/smoke/figures/``).  Figures are byte-for-byte
reproducible: no creation date in the PDF, and plots with random jitter seed it
(:func:`seed_jitter`).  :func:`paper_vs_ours` builds the tables that show the paper's
value beside ours.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from vrlib.data import atomic_write_bytes
from vrlib.versions import package_versions

STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "font.size": 10,
    "svg.hashsalt": "vrlib",  # fixed ids, should a figure be saved as SVG
}

METHOD_LABELS = {
    "random": "Random",
    "rare": "Rare value (Groundhog)",
    "loglik": "Log-likelihood (TAPAS)",
    "distance": "Distance (ours)",
}

PROJECT_ROOT = Path(__file__).resolve().parents[1]
COMMITTED_PROFILES = ("quick", "paper")  # profiles whose outputs may be committed under figures/
# Fixed file metadata, so that the same figure gives the same bytes on every run.
_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "Producer": None, "Creator": None}}


def use_style() -> None:
    """Apply the project's figure style (seaborn ticks + a few rcParams)."""
    import matplotlib as mpl
    import seaborn as sns

    sns.set_theme(style="ticks", palette="colorblind")
    mpl.rcParams.update(STYLE)


def seed_jitter(seed: int) -> None:
    """Seed numpy's global generator, which seaborn's strip-plot jitter draws from: call it before such a plot."""
    np.random.seed(seed)


def commit_id() -> str:
    """The current git commit (with ``-dirty`` when the tree has changes), or ``unknown``.

    Changes under ``figures/`` do not count: they are outputs (the notebooks run before
    this one in ``run_all.sh`` wrote them), not code that shapes the results.
    """
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!figures"],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("-dirty" if dirty else "")


def _cpu(torch) -> str | None:
    """The processor's model name, and the instruction set of PyTorch's CPU kernels when it is loaded.

    Floating-point results (a TVAE's training, hence its synthetic data) can differ
    between instruction sets, so a difference between two runs of one commit can be
    told from the manifests.
    """
    name = None
    try:
        with open("/proc/cpuinfo") as fh:
            name = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), None)
    except OSError:
        pass
    name = name or platform.processor() or None
    if torch is not None and name:
        try:
            name += f" ({torch.backends.cpu.get_cpu_capability()})"
        except AttributeError:
            pass
    return name


def machine() -> dict:
    """What ran the notebook: CPU cores, the process cap, the GPU when PyTorch used one, and package versions."""
    gpu = None
    torch = sys.modules.get("torch")  # only when the notebook imported it: no GPU without PyTorch here
    if torch is not None and torch.cuda.is_available():
        gpu = torch.cuda.get_device_name(0)
    return {
        "cpu_cores": os.cpu_count(),
        "cpu": _cpu(torch),
        "n_jobs_cap": os.environ.get("VRLIB_N_JOBS"),
        "gpu": gpu,
        "system": f"{platform.system()} {platform.machine()}",
        "python": platform.python_version(),
        "packages": package_versions(),
    }


def output_dirs(profile: str, figures_dir="figures", tables_dir=None) -> tuple[Path, Path]:
    """Where a run under ``profile`` writes its figures and its tables.

    The figures go to ``figures_dir/<profile>`` (``figures_dir`` itself when it is
    already named after the profile).  ``tables_dir`` defaults to, and when it is the
    ``tables`` folder of ``figures_dir`` becomes, ``<figures folder>/tables``; any other
    ``tables_dir`` gets its own ``<profile>`` subfolder the same way.  A profile outside
    :data:`COMMITTED_PROFILES` (``smoke``) aimed inside the project's ``figures/`` is sent
    to ``results/<profile>/figures`` instead.
    """
    root = Path(figures_dir)
    tables = None if tables_dir is None else Path(tables_dir)
    if tables is not None and tables.name == "tables" and _same(tables.parent, root):
        tables = None
    committed = PROJECT_ROOT / "figures"
    if profile not in COMMITTED_PROFILES and _inside(root, committed):
        root = PROJECT_ROOT / "results" / profile / "figures"
        if tables is not None and _inside(tables, committed):
            tables = None
    figures = root if root.name == profile else root / profile
    if tables is None:
        return figures, figures / "tables"
    if tables.name != profile and tables.parent.name != profile:
        tables = tables / profile
    return figures, tables


def _same(a: Path, b: Path) -> bool:
    return os.path.abspath(a) == os.path.abspath(b)


def _inside(path: Path, folder: Path) -> bool:
    path, folder = Path(os.path.abspath(path)), Path(os.path.abspath(folder))
    return path == folder or folder in path.parents


def _atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(Path(path), text.encode())


@contextmanager
def _locked(path: Path):
    """An exclusive lock on ``path`` (created if missing) for a read-modify-write by several processes."""
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# What differs between two runs that made the same bytes: who, when and where, not what.
VOLATILE = ("commit", "written", "elapsed_s", "machine")


def provenance_log(folder) -> Path:
    """Where reruns that reproduced ``folder``'s outputs record their provenance (never committed).

    ``results/<profile>/provenance.json`` for the project's committed ``figures/<profile>``;
    ``provenance.json`` beside the manifest for any other folder (already outside the commits).
    """
    folder = Path(folder)
    committed = PROJECT_ROOT / "figures"
    if _inside(folder, committed) and not _same(folder, committed):
        return PROJECT_ROOT / "results" / folder.name / "provenance.json"
    return folder / "provenance.json"


def _same_result(old: dict | None, new: dict) -> bool:
    """Whether two manifest entries record the same output apart from the run's volatile provenance."""
    if old is None:
        return False
    # Through JSON, as the manifest stores them (tuples become lists).
    strip = lambda e: json.loads(json.dumps({k: v for k, v in e.items() if k not in VOLATILE}))  # noqa: E731
    return strip(old) == strip(new)


def update_manifest(folder, entries: dict, unchanged=()) -> list[str]:
    """Add ``{relative path: entry}`` to ``folder/manifest.json`` under a lock, so concurrent writers lose nothing.

    Parameters
    ----------
    folder : path-like
    entries : dict
        Relative path -> manifest entry.
    unchanged : collection of str
        The relative paths just rewritten with the bytes they already had.  Such a file
        keeps its manifest entry when the entry records the same notebook, profile,
        seed and parameters; the new entry goes to :func:`provenance_log` instead.

    Returns
    -------
    list of str
        The relative paths whose entries were kept.  The manifest file is rewritten
        only when an entry changed.
    """
    folder = Path(folder)
    path = folder / "manifest.json"
    with _locked(folder / ".manifest.lock"):
        manifest = json.loads(path.read_text()) if path.exists() else {}
        kept = [name for name, e in entries.items() if name in unchanged and _same_result(manifest.get(name), e)]
        fresh = {name: e for name, e in entries.items() if name not in kept}
        if fresh or not path.exists():
            manifest.update(fresh)
            _atomic_write_text(path, json.dumps(dict(sorted(manifest.items())), indent=1) + "\n")
        if kept:
            log = provenance_log(folder)
            log.parent.mkdir(parents=True, exist_ok=True)
            reruns = json.loads(log.read_text()) if log.exists() else {}
            reruns.update({name: entries[name] for name in kept})
            _atomic_write_text(log, json.dumps(dict(sorted(reruns.items())), indent=1) + "\n")
    return kept


def _write_if_changed(path: Path, data: bytes) -> str:
    """Write ``data`` to ``path`` atomically; ``"same"``, ``"changed"`` or ``"new"`` as against what was there."""
    try:
        before = path.read_bytes()
    except FileNotFoundError:
        before = None
    if before == data:
        return "same"
    atomic_write_bytes(path, data)
    return "new" if before is None else "changed"


class Reporter:
    """Writes a notebook's figures and tables and records them in the manifest.

    Parameters
    ----------
    notebook : str
        The notebook's name (e.g. ``01_achilles_record_identification``).
    profile : str
    seed : int
    figures_dir, tables_dir : path-like
        The notebook's parameters: the outputs go to the ``<profile>`` folder inside
        them (see :func:`output_dirs`); created if missing.  The resolved folders are
        the attributes ``figures_dir`` and ``tables_dir``.

    Notes
    -----
    Each manifest entry holds the notebook, profile, seed, commit, the time written,
    ``elapsed_s`` (seconds since this Reporter was made, i.e. the run's wall time up to
    that file), the :func:`machine` and the parameters passed with the file.  A file
    rewritten with the bytes it had keeps its entry (see :func:`update_manifest`).
    """

    def __init__(self, notebook: str, profile: str, seed: int, figures_dir="figures", tables_dir=None):
        self.notebook = notebook
        self.profile = profile
        self.seed = seed
        self.figures_dir, self.tables_dir = output_dirs(profile, figures_dir, tables_dir)
        if not _same(Path(figures_dir), self.figures_dir) and not _same(Path(figures_dir) / profile, self.figures_dir):
            print(f"profile {profile!r} never writes into figures/: its outputs go to {self.figures_dir}")
        self.figures_dir.mkdir(parents=True, exist_ok=True)
        self.tables_dir.mkdir(parents=True, exist_ok=True)
        self.commit = commit_id()
        self._started = time.monotonic()
        self.tables_written: list[str] = []  # names of the tables this Reporter wrote, in order

    def _record(self, files: list[Path], params: dict | None, status: dict | None = None) -> None:
        """Record ``files`` in the manifest; ``status`` maps each to what :func:`_write_if_changed` said."""
        entry = {
            "notebook": self.notebook,
            "profile": self.profile,
            "seed": self.seed,
            "commit": self.commit,
            "written": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "elapsed_s": round(time.monotonic() - self._started, 1),
            "machine": machine(),
        }
        if params:
            entry["parameters"] = params
        status = status or {}
        names = {os.path.relpath(f, self.figures_dir): f for f in files}
        unchanged = {n for n, f in names.items() if status.get(f) == "same"}
        update_manifest(self.figures_dir, dict.fromkeys(names, entry), unchanged)
        changed = [n for n, f in names.items() if status.get(f) == "changed"]
        if changed:
            print(
                f"changed since the last run in {self.figures_dir}: {', '.join(changed)} "
                "(manifest.json updated; `git diff` shows what moved)"
            )

    def savefig(self, fig, name: str, params: dict | None = None) -> list[Path]:
        """Save ``fig`` as ``name``.png and ``name``.pdf (no dates inside: the same figure gives the same bytes)."""
        import io

        paths = [self.figures_dir / f"{name}.{ext}" for ext in ("png", "pdf")]
        status = {}
        for path in paths:
            ext = path.suffix[1:]
            buf = io.BytesIO()
            fig.savefig(buf, format=ext, metadata=_METADATA[ext])
            status[path] = _write_if_changed(path, buf.getvalue())
        self._record(paths, params, status)
        return paths

    def write_table(
        self, df: pd.DataFrame, name: str, params: dict | None = None, float_format: str = "%.3f"
    ) -> list[Path]:
        """Write ``df`` as ``name``.csv (full precision), .md and .tex (rounded)."""
        csv, md, tex = (self.tables_dir / f"{name}.{ext}" for ext in ("csv", "md", "tex"))
        rounded = df.copy()
        for c in rounded.columns:
            if pd.api.types.is_float_dtype(rounded[c]):
                rounded[c] = rounded[c].map(lambda v: "" if pd.isna(v) else float_format % v)
        texts = {
            csv: df.to_csv(index=False),
            md: _markdown(rounded) + "\n",
            tex: rounded.to_latex(index=False, escape=True),
        }
        status = {path: _write_if_changed(path, text.encode()) for path, text in texts.items()}
        self._record([csv, md, tex], params, status)
        self.tables_written.append(name)
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
