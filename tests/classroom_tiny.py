"""A tiny assignment made by the tests (numpy only, graded in about a second), and its submissions."""

from __future__ import annotations

import os

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from vrlib import classroom
from vrlib.classroom.notebooks import fill_solutions
from vrlib.classroom.sandbox import bwrap_path

# Grading runs each submission in a bubblewrap box: skipped where bwrap is missing, except in CI (where
# scripts/setup_env.sh installs it, so a missing bwrap fails loudly there).
needs_bwrap = pytest.mark.skipif(
    bwrap_path() is None and not os.environ.get("CI"),
    reason="bubblewrap (bwrap) is not installed: scripts/setup_env.sh installs Debian's 'bubblewrap' as root",
)

F_SOLUTION = "def f(x):\n    ### BEGIN SOLUTION\n    return np.asarray(x, dtype=float) + 1\n    ### END SOLUTION"
G_SOLUTION = "def g(x):\n    ### BEGIN SOLUTION\n    return f(x) * 2\n    ### END SOLUTION"
RATIO_SOLUTION = (
    "def ratio(a, b):\n    ### BEGIN SOLUTION\n    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)\n"
    "    return np.where(b == 0, 0.0, a / b)\n    ### END SOLUTION"
)
AUC_SOLUTION = (
    "def my_auc(y, s):\n    ### BEGIN SOLUTION\n    y, s = np.asarray(y), np.asarray(s, dtype=float)\n"
    "    pos, neg = s[y == 1], s[y == 0]\n"
    "    return float(((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])).mean())\n"
    "    ### END SOLUTION"
)
SOLUTIONS = {"f": F_SOLUTION, "g": G_SOLUTION, "ratio": RATIO_SOLUTION, "my_auc": AUC_SOLUTION}
POINTS = {"test_f": 2, "test_g": 1, "test_ratio": 1, "test_auc": 2, "test_partial": 2}


def _meta(gid, **kw):
    return {
        "nbgrader": {
            "grade": False,
            "grade_id": gid,
            "locked": False,
            "schema_version": 3,
            "solution": False,
            "task": False,
            **kw,
        }
    }


def tiny_notebook(extra_tests=()):
    """The solution notebook: f(x) = x + 1, g = 2 f, a 0/0-safe ratio, an AUC; five test cells."""
    nb = new_notebook(
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "vrlib": {"withheld": ["vrlib.metrics:auc"]},
        }
    )
    test = lambda gid, src: new_code_cell(src, metadata=_meta(gid, grade=True, locked=True, points=POINTS.get(gid, 1)))  # noqa: E731
    nb.cells = [
        new_markdown_cell("# A tiny assignment", metadata=_meta("intro", locked=True)),
        new_code_cell("import numpy as np", metadata=_meta("setup", locked=True)),
        new_code_cell("n = 3  # yours to change"),
        new_code_cell(F_SOLUTION, metadata=_meta("f", solution=True)),
        test(
            "test_f",
            "np.testing.assert_allclose(f(np.arange(3)), [1.0, 2.0, 3.0])\n### BEGIN HIDDEN TESTS\n"
            "np.testing.assert_allclose(f(np.array([5.0, -1.0])), [6.0, 0.0])\n### END HIDDEN TESTS",
        ),
        new_code_cell(G_SOLUTION, metadata=_meta("g", solution=True)),
        test(
            "test_g",
            "_your_f = f\nf = lambda x: np.asarray(x, dtype=float) + 1  # g is graded with the reference f\n"
            "try:\n    np.testing.assert_allclose(g([0, 1]), [2.0, 4.0])\nfinally:\n    f = _your_f",
        ),
        new_code_cell(RATIO_SOLUTION, metadata=_meta("ratio", solution=True)),
        test("test_ratio", "np.testing.assert_allclose(ratio([1.0, 0.0], [2.0, 0.0]), [0.5, 0.0])"),
        new_code_cell(AUC_SOLUTION, metadata=_meta("my_auc", solution=True)),
        test(
            "test_auc",
            "from vrlib.metrics import auc as _auc\n\ny, s = [0, 1, 1, 0, 1], [0.1, 0.8, 0.3, 0.3, 0.9]\n"
            "assert abs(my_auc(y, s) - _auc(y, s)) < 1e-12",
        ),
        test(
            "test_partial",
            "# one point per value right (nbgrader's partial credit)\n"
            "sum(float(np.allclose(f(np.array([v])), [v + 1])) for v in (0.0, 10.0))",
        ),
        *extra_tests,
        new_markdown_cell("The end.", metadata=_meta("outro", locked=True)),
    ]
    for i, cell in enumerate(nb.cells):
        cell.id = f"tiny-{i}"
    return nb


def make_assignment(folder, nb=None):
    """Write the solution notebook ``00_tiny.ipynb`` into ``folder/source`` and its release; return both paths."""
    source_dir = folder / "source"
    source_dir.mkdir(parents=True, exist_ok=True)
    source = source_dir / "00_tiny.ipynb"
    nbformat.write(nb if nb is not None else tiny_notebook(), source)
    released = classroom.generate(source_dir, folder / "release")[0]
    return source, released


def submission(released, path, answers=None, edit=None):
    """The released notebook with solution cells filled in: ``answers`` by grade id (default the solutions)."""
    nb = nbformat.read(released, as_version=4)
    fill_solutions(nb, {**SOLUTIONS, **(answers or {})})
    if edit is not None:
        edit(nb)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path
