"""Classroom assignments: the committed release is what the generator writes (and SHA256SUMS the
solutions' checksums), the sizes are editable, the tests reach vrlib's references under private names
only; graded together, every solution gets full points, every released stub none, and a deliberately
wrong answer per assignment loses points.  (The grader's faults: tests/test_classroom_grader.py.)"""

from __future__ import annotations

import json
import os
import re
import time

import nbformat
import pytest

from conftest import PROJECT_ROOT
from vrlib import classroom
from vrlib.classroom.notebooks import fill_solutions, solution_sources

SOURCE_DIR = PROJECT_ROOT / "notebooks" / "assignments"
RELEASE_DIR = SOURCE_DIR / "release"
WRONG_DIR = PROJECT_ROOT / "tests" / "classroom_wrong"
ASSIGNMENTS = classroom.assignments(SOURCE_DIR)
TIMEOUT = 120  # per cell or call, generous: CI machines are shared


def _nbgrader(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def _tests(nb) -> list:
    return [c for c in nb.cells if _nbgrader(c).get("grade") and not _nbgrader(c).get("solution")]


# --------------------------------------------------------------------------- static checks (fast)


def test_four_assignments():
    assert [p.name[:2] for p in ASSIGNMENTS] == ["01", "02", "03", "04"]


def test_release_reproduces_the_committed_files(tmp_path):
    written = classroom.generate(SOURCE_DIR, tmp_path)
    committed = sorted(RELEASE_DIR.glob("*.ipynb"))
    assert [p.name for p in committed] == [p.name for p in written], "run `vrlib classroom generate` and commit"
    for path in written:
        assert path.read_bytes() == (RELEASE_DIR / path.name).read_bytes(), (
            f"release/{path.name} differs from what the generator writes: run `vrlib classroom generate` and commit"
        )


@pytest.mark.parametrize("path", ASSIGNMENTS, ids=lambda p: p.stem)
def test_solution_notebook_follows_nbgrader(path):
    nb = nbformat.read(path, as_version=4)
    ids = [_nbgrader(c)["grade_id"] for c in nb.cells if _nbgrader(c)]
    assert len(ids) == len(set(ids)), "grade ids must be unique"
    assert sum(float(_nbgrader(c)["points"]) for c in _tests(nb)) > 0
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, "commit the solutions without outputs"
        if _nbgrader(cell).get("solution"):
            assert "### BEGIN SOLUTION" in cell.source and "### END SOLUTION" in cell.source
    assert any("### BEGIN HIDDEN TESTS" in c.source for c in _tests(nb)), "each assignment keeps some tests hidden"


@pytest.mark.parametrize("path", ASSIGNMENTS, ids=lambda p: p.stem)
def test_release_hides_solutions_and_hidden_tests(path):
    text = (RELEASE_DIR / path.name).read_text()
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
        assert marker not in text
    nb = nbformat.read(RELEASE_DIR / path.name, as_version=4)
    solutions = [c for c in nb.cells if _nbgrader(c).get("solution")]
    assert solutions and all("raise NotImplementedError()" in c.source for c in solutions)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    assert [_nbgrader(c)["points"] for c in _tests(nb)] == [
        _nbgrader(c)["points"] for c in _tests(nbformat.read(path, as_version=4))
    ]


def test_sha256sums_match_the_solutions():
    for path in ASSIGNMENTS:
        classroom.check_sums(path)  # raises when a solution changed without `vrlib classroom generate`
    listed = [line.split()[1] for line in (SOURCE_DIR / "SHA256SUMS").read_text().splitlines()]
    assert listed == [p.name for p in ASSIGNMENTS]
    assert not (RELEASE_DIR / "SHA256SUMS").exists(), "the release is what students get: no solution files in it"


@pytest.mark.parametrize("path", ASSIGNMENTS, ids=lambda p: p.stem)
def test_sizes_are_editable_and_references_private(path):
    nb = nbformat.read(RELEASE_DIR / path.name, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    sizes = code[1]
    assert "seed = " in sizes.source and not _nbgrader(sizes), "the second code cell holds the sizes, editable"
    assert sizes.metadata.get("editable", True) and sizes.metadata.get("deletable", True)
    for cell in code:
        if _nbgrader(cell).get("locked"):
            assert "seed = " not in cell.source and not re.search(r"^n_\w+ = ", cell.source, re.M), (
                "a size in a read-only cell cannot be changed by a student"
            )
    solution = nbformat.read(path, as_version=4)
    withheld = solution.metadata.get("vrlib", {}).get("withheld", [])
    setup = code[0].source
    for spec in withheld:
        name = spec.split(":")[1]
        assert not re.search(rf"\b{name}\b", setup), f"the setup cell must not hand {name} to the student"
        assert any(f"as _{name}" in c.source for c in _tests(solution)), f"the tests import {name} under a private name"


# --------------------------------------------------------------------------- the real assignments, graded as a class


def _wrong_submission(path, wrong, out):
    """The release filled in with the solutions, one of them replaced by the wrong answer."""
    grade_id = wrong.name.split(".")[1]
    solutions = solution_sources(nbformat.read(path, as_version=4))
    assert grade_id in solutions, f"{wrong.name} names no solution cell of {path.name}"
    nb = fill_solutions(
        nbformat.read(RELEASE_DIR / path.name, as_version=4), {**solutions, grade_id: wrong.read_text()}
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)
    return out


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """Every solution, every stub and every wrong answer, graded in one call (a folder per 'student')."""
    tmp = tmp_path_factory.mktemp("assignments")
    for path in ASSIGNMENTS:
        (tmp / "subs" / "solution").mkdir(parents=True, exist_ok=True)
        (tmp / "subs" / "stub").mkdir(exist_ok=True)
        (tmp / "subs" / "solution" / path.name).write_bytes(path.read_bytes())
        (tmp / "subs" / "stub" / path.name).write_bytes((RELEASE_DIR / path.name).read_bytes())
        wrong = sorted(WRONG_DIR.glob(f"{path.stem}.*.py"))
        assert len(wrong) == 1, f"keep one wrong answer for {path.name} in {WRONG_DIR}"
        _wrong_submission(path, wrong[0], tmp / "subs" / "wrong" / path.name)
    start = time.monotonic()
    results = classroom.grade_class(tmp / "subs", tmp / "book", jobs=2, timeout=TIMEOUT, time_cap=600)
    print(f"graded {len(results)} submissions in {time.monotonic() - start:.0f} s")
    return {(s.student, s.assignment): r for s, r in results}


@pytest.mark.slow
@pytest.mark.parametrize("path", ASSIGNMENTS, ids=lambda p: p.stem)
def test_solution_gets_full_points(graded_class, path):
    report = graded_class[("solution", path.stem)]
    assert report.points == report.max_points > 0, report.format()
    assert not report.notes, report.format()


@pytest.mark.slow
@pytest.mark.parametrize("path", ASSIGNMENTS, ids=lambda p: p.stem)
def test_released_stub_gets_zero_points(graded_class, path):
    report = graded_class[("stub", path.stem)]
    for test in report.tests:
        assert test.points == 0 and test.status == "failed" and "NotImplementedError" in test.message, report.format()


@pytest.mark.slow
@pytest.mark.parametrize("path", ASSIGNMENTS, ids=lambda p: p.stem)
def test_wrong_answer_loses_points(graded_class, path):
    report = graded_class[("wrong", path.stem)]
    failed = [t for t in report.tests if t.status == "failed"]
    assert failed and report.points < report.max_points, report.format()
    assert json.dumps(report.to_dict())  # the report serialises


@pytest.mark.slow
def test_questions_are_graded_on_their_own(graded_class):
    """A wrong KDE costs the KDE's points only: domias_score is graded with vrlib's KDE."""
    tests = {t.grade_id: t for t in graded_class[("wrong", "03_domias")].tests}
    assert tests["a3_test_kde"].status == "failed" and tests["a3_test_domias"].status == "passed"


@pytest.mark.slow
@pytest.mark.realdata
@pytest.mark.skipif(
    os.environ.get("VRLIB_CLASSROOM_E2E") != "1", reason="set VRLIB_CLASSROOM_E2E=1 (minutes, real data)"
)
@pytest.mark.parametrize("path", ASSIGNMENTS, ids=lambda p: p.stem)
def test_solution_notebook_runs_end_to_end(path, tmp_path):
    """The whole solution notebook, real-data part included, in a Jupyter kernel (what a student runs)."""
    from nbclient import NotebookClient

    from conftest import require_real

    require_real(*{"03": ("cal_housing.data",)}.get(path.name[:2], ("adult.data", "adult.test")))
    nb = nbformat.read(path, as_version=4)
    start = time.monotonic()
    NotebookClient(nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    print(f"{path.name}: {time.monotonic() - start:.0f} s")
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
