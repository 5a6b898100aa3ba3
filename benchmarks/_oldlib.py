"""The vrlib of an earlier commit, importable beside the current one, so that a benchmark times both in one process.

:func:`load_old` extracts the package ``vrlib/`` of a git commit (``git archive``) into a
temporary folder, renames it ``vrlib_old`` (its own imports rewritten to match) and
imports it (its folder stays on ``sys.path`` and ``PYTHONPATH``, for worker processes,
until the process exits).  Only the package is taken: the data come from ``VRLIB_DATA_DIR`` as for the
current code, and the cache is wherever ``VRLIB_CACHE_DIR`` points (benchmarks point it at
a temporary folder).  The old code's cache keys differ from the current ones (they hash
source text, and the rewritten imports are part of it), so the two never share entries.
"""

from __future__ import annotations

import atexit
import importlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = "vrlib_old"
_IMPORT = re.compile(r"^(\s*)(from|import) vrlib\b", re.MULTILINE)
_DOTTED = re.compile(r"\bvrlib(?=\.[A-Za-z_])")


def _rewrite(text: str) -> str:
    return _DOTTED.sub(NAME, _IMPORT.sub(rf"\1\2 {NAME}", text))


def load_old(commit: str = "HEAD"):
    """Import the package ``vrlib`` as it is at ``commit`` (any name git understands) as ``vrlib_old``.

    Returns
    -------
    (module, str)
        The imported package and the full hash of the commit it came from.

    Raises
    ------
    RuntimeError
        When git cannot find the commit, or it has no package ``vrlib``.
    """
    if NAME in sys.modules:
        raise RuntimeError(f"{NAME} is already imported; call load_old once per process")
    try:
        full = subprocess.run(
            ["git", "rev-parse", "--verify", f"{commit}^{{commit}}"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        archive = subprocess.run(
            ["git", "archive", "--format=tar", full, "vrlib"], cwd=ROOT, check=True, capture_output=True
        ).stdout
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"git cannot give the package vrlib of commit {commit!r}: {exc.stderr!s}") from None
    where = Path(tempfile.mkdtemp(prefix="vrlib-old-"))
    atexit.register(shutil.rmtree, where, ignore_errors=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(where, filter="data")
    (where / "vrlib").rename(where / NAME)
    for path in (where / NAME).rglob("*.py"):
        path.write_text(_rewrite(path.read_text()))
    sys.path.insert(0, str(where))
    # Worker processes (joblib's) unpickle the old code's functions: they must find it too.
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(where), os.environ.get("PYTHONPATH", "")) if p)
    return importlib.import_module(NAME), full
