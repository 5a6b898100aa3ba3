"""Classroom assignments: the committed release is what the generator writes, every solution gets
full points, every released stub none, a deliberately wrong answer loses points, and the grader
reports (does not crash on) submissions that raise, loop, kill their kernel or delete a test."""

from __future__ import annotations

import json
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from conftest import PROJECT_ROOT, require_real
from vrlib import classroom
from vrlib.cli import main
from vrlib.errors import VrlibError

SOURCE_DIR = PROJECT_ROOT / "notebooks" / "assignments"
RELEASE_DIR = SOURCE_DIR / "release"
WRONG_DIR = PROJECT_ROOT / "tests" / "classroom_wrong"
ASSIGNMENTS = classroom.assignments(SOURCE_DIR)
ADULT, CALIFORNIA = ("adult.data", "adult.test"), ("cal_housing.data",)
DATA = {"01": ADULT, "02": ADULT, "03": CALIFORNIA, "04": ADULT}
TIMEOUT = 600  # per cell, generous: CI machines are shared


def _nbgrader(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def _tests(nb) -> list:
    return [c for c in nb.cells if _nbgrader(c).get("grade") and not _nbgrader(c).get("solution")]


# --------------------------------------------------------------------------- static checks (fast)


def test_four_assignments():
    assert len(ASSIGNMENTS) >= 4
    assert {p.name[:2] for p in ASSIGNMENTS} == set(DATA), "add the new assignment's data files to DATA"


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


# --------------------------------------------------------------------------- the grader on a tiny assignment


def _tiny_source(path):
    """A two-test assignment: f(n) = n + 1."""
    meta = lambda gid, **kw: {"nbgrader": {"grade": False, "grade_id": gid, "locked": False, "schema_version": 3,  # noqa: E731
                                           "solution": False, "task": False, **kw}}  # fmt: skip
    nb = new_notebook(metadata={"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}})
    nb.cells = [
        new_code_cell("offset = 1", metadata=meta("setup", locked=True)),
        new_code_cell("def f(n):\n    ### BEGIN SOLUTION\n    return n + offset\n    ### END SOLUTION",
                      metadata=meta("f", solution=True)),  # fmt: skip
        new_code_cell("assert f(1) == 2\n### BEGIN HIDDEN TESTS\nassert f(5) == 6\n### END HIDDEN TESTS",
                      metadata=meta("test_one", grade=True, locked=True, points=2)),  # fmt: skip
        new_code_cell("assert f(0) == 1", metadata=meta("test_two", grade=True, locked=True, points=1)),
    ]
    for i, cell in enumerate(nb.cells):
        cell.id = f"tiny-{i}"
    nbformat.write(nb, path)
    return path


def _submission(released, path, solution_source, drop_tests=()):
    nb = nbformat.read(released, as_version=4)
    for cell in nb.cells:
        if _nbgrader(cell).get("solution"):
            cell.source = solution_source
    nb.cells = [c for c in nb.cells if _nbgrader(c).get("grade_id") not in drop_tests]
    nbformat.write(nb, path)
    return path


@pytest.fixture
def tiny(tmp_path):
    (tmp_path / "source").mkdir()
    source = _tiny_source(tmp_path / "source" / "00_tiny.ipynb")
    released = classroom.generate(source.parent, tmp_path / "release")[0]
    return source, released, tmp_path


def _by_id(report):
    return {t.grade_id: t for t in report.tests}


@pytest.mark.slow
def test_grader_full_and_zero_points(tiny):
    source, released, _ = tiny
    assert "raise NotImplementedError()" in released.read_text() and "f(5)" not in released.read_text()
    full = classroom.grade(source, source=source, timeout=30)
    assert (full.points, full.max_points) == (3, 3), full.format()
    stub = classroom.grade(released, source=source, timeout=30)
    assert stub.points == 0 and {t.status for t in stub.tests} == {"failed"}, stub.format()
    assert "NotImplementedError" in _by_id(stub)["test_one"].message


@pytest.mark.slow
def test_grader_restores_hidden_and_edited_tests(tiny):
    source, released, tmp = tiny
    # Passes the visible test only, and the student emptied the second test cell: both are restored.
    sub = _submission(released, tmp / "sub.ipynb", "def f(n):\n    return {1: 2, 0: 1}[n]")
    nb = nbformat.read(sub, as_version=4)
    nb.cells[-1].source = "pass"
    nbformat.write(nb, sub)
    report = classroom.grade(sub, source=source, timeout=30)
    tests = _by_id(report)
    assert tests["test_one"].points == 0 and "KeyError" in tests["test_one"].message, report.format()
    assert tests["test_two"].points == 1


@pytest.mark.slow
def test_grader_reports_raise_and_deleted_test(tiny):
    source, released, tmp = tiny
    sub = _submission(released, tmp / "sub.ipynb", "def f(n):\n    raise ValueError('boom')", drop_tests=["test_two"])
    report = classroom.grade(sub, source=source, timeout=30)
    tests = _by_id(report)
    assert (tests["test_one"].status, tests["test_one"].message) == ("failed", "ValueError: boom")
    assert tests["test_two"].status == "deleted" and tests["test_two"].points == 0
    assert report.points == 0 and "deleted" in report.format()


@pytest.mark.slow
def test_grader_interrupts_a_loop(tiny):
    source, released, tmp = tiny
    sub = _submission(released, tmp / "sub.ipynb", "def f(n):\n    while True:\n        pass")
    start = time.monotonic()
    report = classroom.grade(sub, source=source, timeout=3)
    assert time.monotonic() - start < 60
    assert [t.status for t in report.tests] == ["timed out", "timed out"], report.format()
    assert report.points == 0


@pytest.mark.slow
def test_grader_survives_a_dead_kernel(tiny):
    source, released, tmp = tiny
    sub = _submission(released, tmp / "sub.ipynb", "import os\nos._exit(1)")
    report = classroom.grade(sub, source=source, timeout=30)
    assert report.points == 0
    assert {t.status for t in report.tests} == {"not run"}, report.format()
    assert any("execution stopped" in n for n in report.notes)


def test_grader_rejects_what_is_not_a_notebook(tmp_path):
    bad = tmp_path / "01_vulnerable_records.ipynb"
    bad.write_text("this is not json")
    with pytest.raises(VrlibError, match="not a readable Jupyter notebook"):
        classroom.grade(bad)
    with pytest.raises(VrlibError, match="timeout"):
        classroom.grade(bad, timeout=0)


def test_cli(tmp_path, capsys):
    assert main(["classroom", "grade", str(tmp_path / "missing.ipynb")]) == 2
    assert "does not exist" in capsys.readouterr().err
    source = _tiny_source(tmp_path / "00_tiny.ipynb")
    assert main(["classroom", "generate", "--source-dir", str(tmp_path), "--release-dir", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / source.name).is_file()


# --------------------------------------------------------------------------- the real assignments (slow, real data)


@pytest.mark.slow
@pytest.mark.realdata
@pytest.mark.parametrize("path", ASSIGNMENTS, ids=lambda p: p.stem)
def test_solution_gets_full_points(path, tmp_path):
    require_real(*DATA[path.name[:2]])
    start = time.monotonic()
    report = classroom.grade(path, source=path, timeout=TIMEOUT, executed=tmp_path / path.name)
    print(f"{path.name}: graded in {time.monotonic() - start:.0f} s")
    assert report.points == report.max_points > 0, report.format()
    assert not report.notes, report.format()


@pytest.mark.slow
@pytest.mark.realdata
@pytest.mark.parametrize("path", ASSIGNMENTS, ids=lambda p: p.stem)
def test_released_stub_gets_zero_points(path):
    require_real(*DATA[path.name[:2]])
    report = classroom.grade(RELEASE_DIR / path.name, source=path, timeout=TIMEOUT)
    for test in report.tests:
        assert test.points == 0 and test.status == "failed", report.format()


def _wrong_submission(path, wrong, out):
    """The release filled in with the solutions, one of them replaced by the wrong answer.

    The ungraded cells after the last test cell (the real-data part) are left out, as a
    student may: what is checked is that the tests catch the mistake, and that costs
    seconds instead of a full run.
    """
    grade_id = wrong.name.split(".")[1]
    solutions = {_nbgrader(c)["grade_id"]: c.source for c in nbformat.read(path, as_version=4).cells
                 if _nbgrader(c).get("solution")}  # fmt: skip
    assert grade_id in solutions, f"{wrong.name} names no solution cell of {path.name}"
    nb = nbformat.read(RELEASE_DIR / path.name, as_version=4)
    for cell in nb.cells:
        gid = _nbgrader(cell).get("grade_id")
        if gid in solutions:
            cell.source = wrong.read_text() if gid == grade_id else solutions[gid]
    last_test = max(i for i, c in enumerate(nb.cells) if _nbgrader(c).get("grade") and not _nbgrader(c).get("solution"))
    nb.cells = nb.cells[: last_test + 1]
    nbformat.write(nb, out)
    return out


@pytest.mark.slow
@pytest.mark.realdata
@pytest.mark.parametrize("path", ASSIGNMENTS, ids=lambda p: p.stem)
def test_wrong_answer_loses_points(path, tmp_path):
    require_real(*DATA[path.name[:2]])
    wrong = sorted(WRONG_DIR.glob(f"{path.stem}.*.py"))
    assert len(wrong) == 1, f"keep one wrong answer for {path.name} in {WRONG_DIR}"
    report = classroom.grade(_wrong_submission(path, wrong[0], tmp_path / path.name), source=path, timeout=TIMEOUT)
    print(report.format())
    failed = [t for t in report.tests if t.status == "failed"]
    assert failed and report.points < report.max_points, report.format()
    assert json.dumps(report.to_dict())  # the report serialises


@pytest.mark.slow
def test_cli_grades_a_solution_that_loops_at_top_level(tiny, capsys):
    source, released, tmp = tiny
    sub = _submission(released, tmp / "sub.ipynb", "while True:\n    pass")
    assert main(["classroom", "grade", str(sub), "--source", str(source), "--timeout", "3", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["points"] == 0 and report["max_points"] == 3
    assert report["notes"] == ["solution cell 'f' timed out after 3 s"]
    assert all("NameError" in t["message"] for t in report["tests"])
