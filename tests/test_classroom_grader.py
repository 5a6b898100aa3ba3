"""The grader against each class of fault, on a tiny assignment made here: one class of submissions is
graded once (in parallel, into a gradebook), then each test checks one submission's grade."""

from __future__ import annotations

import csv
import json
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from classroom_tiny import POINTS, make_assignment, needs_bwrap, submission, tiny_notebook
from vrlib import classroom
from vrlib.classroom.fence import StudentError, loads_untrusted, parse_size, plain
from vrlib.classroom.grader import _score
from vrlib.errors import VrlibError

FULL = sum(POINTS.values())
TIMEOUT = 8  # seconds per cell or call: the loops below run into it


def _all_but(*tests):
    return FULL - sum(POINTS[t] for t in tests)


WRONG_F = "def f(x):\n    return np.asarray(x, dtype=float)"
LOOP_F = "def f(x):\n    while True:\n        pass"


def _cases(source):
    """student -> (answers, edit, expected points, {test: status}); each one class of fault."""
    solution = str(source)
    set_test = lambda gid, text: (
        lambda nb: [
            setattr(c, "source", text)
            for c in nb.cells  # noqa: E731
            if c.metadata.get("nbgrader", {}).get("grade_id") == gid
        ]
    )
    return {
        "correct": ({}, None, FULL, {}),
        "different_but_correct": (
            {
                "f": "def f(x):\n    return np.array([v + 1.0 for v in np.ravel(x)])",
                "my_auc": "from scipy.stats import rankdata\n"
                "def my_auc(y, s):\n    r = rankdata(s); y = np.asarray(y) == 1\n"
                "    return (r[y].sum() - y.sum() * (y.sum() + 1) / 2) / (y.sum() * (~y).sum())",
            },
            None,
            FULL,
            {},
        ),
        "stub": (None, None, 0, {"test_f": "failed"}),
        "wrong_f": ({"f": WRONG_F}, None, _all_but("test_f", "test_partial"), {"test_g": "passed"}),
        "exit_in_function": (
            {"f": "def f(x):\n    import os\n    os._exit(3)"},
            None,
            _all_but("test_f", "test_partial"),
            {"test_f": "process ended", "test_g": "passed"},
        ),
        "exit_at_top_level": (
            {"g": "import sys\nsys.stdout.flush()\nimport os\nos._exit(0)"},
            None,
            _all_but("test_g"),
            {"test_g": "failed", "test_f": "passed"},
        ),
        "infinite_loop": (
            {"f": LOOP_F},
            None,
            _all_but("test_f", "test_partial"),
            {"test_f": "timed out", "test_partial": "timed out"},
        ),
        "swallowed_interrupt": (
            {
                "f": "import time\ndef f(x):\n    while True:\n        try:\n            time.sleep(10)\n"
                "        except BaseException:\n            pass"
            },
            None,
            _all_but("test_f", "test_partial"),
            {"test_f": "timed out"},
        ),
        "raises_interrupt": (
            {"f": "def f(x):\n    raise KeyboardInterrupt"},
            None,
            _all_but("test_f", "test_partial"),
            {"test_f": "failed", "test_g": "passed"},
        ),
        "starts_a_program": (
            {
                "f": "def f(x):\n    import subprocess\n    subprocess.run(['true'])\n"
                "    return np.asarray(x, dtype=float) + 1"
            },
            None,
            FULL,  # a program started inside the box is contained (and dies with it): allowed, not cheating
            {"test_f": "passed"},
        ),
        "calls_back_forever": (
            {"g": "def g(x):\n    while True:\n        f(x)"},
            None,
            _all_but("test_g"),
            {"test_g": "timed out", "test_f": "passed"},
        ),
        "loop_at_top_level": (
            {"ratio": "while True:\n    pass"},
            None,
            _all_but("test_ratio"),
            {"test_ratio": "failed"},
        ),
        "rebinds_np_testing": (
            {"f": "np.testing.assert_allclose = lambda *a, **k: None\nnp.allclose = lambda *a, **k: True\n" + WRONG_F},
            None,
            _all_but("test_f", "test_partial"),
            {"test_f": "failed"},
        ),
        "rebinds_the_reference": (
            {"my_auc": "import vrlib.metrics\nvrlib.metrics.auc = lambda y, s: 0.5\ndef my_auc(y, s):\n    return 0.5"},
            None,
            _all_but("test_auc"),
            {"test_auc": "failed"},
        ),
        "calls_the_reference": (
            {"my_auc": "from vrlib.metrics import auc\ndef my_auc(y, s):\n    return auc(y, s)"},
            None,
            _all_but("test_auc"),
            {"test_auc": "failed"},
        ),
        "input_transformer": (
            {"f": "get_ipython().input_transformers_post.append(lambda lines: ['pass\\n'])\n" + WRONG_F},
            None,
            _all_but("test_f", "test_partial"),
            {"test_f": "failed"},
        ),
        "reads_the_solution": (
            {"f": f"def f(x):\n    open({solution!r}).read()\n    return np.asarray(x, dtype=float) + 1"},
            None,
            _all_but("test_f", "test_partial"),
            {"test_f": "failed"},
        ),
        "rewrites_the_solution": (
            {"f": f"with open({solution!r}, 'w') as fh:\n    fh.write('{{}}')\n" + WRONG_F},
            None,
            _all_but("test_f", "test_partial"),
            {"test_f": "failed"},
        ),
        "edits_a_test_to_huge_points": (
            {"f": WRONG_F},
            set_test("test_partial", "10 ** 12"),
            _all_but("test_f", "test_partial"),
            {"test_partial": "failed"},
        ),
        "output_flood": (
            {"f": "def f(x):\n    print('spam ' * 1_000_000)\n    return np.asarray(x, dtype=float) + 1"},
            None,
            FULL,
            {"test_f": "passed"},
        ),
        "runtime_warning_only": (
            {
                "ratio": "def ratio(a, b):\n    import warnings\n    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)\n"
                "    warnings.warn('careful', RuntimeWarning)\n    q = a / b\n"
                "    return np.where(np.isnan(q), 0.0, q)"
            },
            None,
            FULL,
            {"test_ratio": "passed"},
        ),
        "memory_hog": (
            {"f": "def f(x):\n    big = np.ones(2 ** 31)\n    return np.asarray(x, dtype=float) + 1"},
            None,
            _all_but("test_f", "test_partial"),
            {"test_f": "failed"},
        ),
        "claims_to_equal_everything": (
            {
                "f": "class Anything:\n    def __eq__(self, other):\n        return True\n"
                "    def __array__(self, *a, **k):\n        return np.array([1.0, 2.0, 3.0])\n"
                "def f(x):\n    return Anything()"
            },
            None,
            _all_but("test_f", "test_partial"),
            {"test_f": "failed"},
        ),
        "deletes_a_test": (
            {},
            lambda nb: nb.cells.__setitem__(
                slice(None), [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "test_ratio"]
            ),
            _all_but("test_ratio"),
            {"test_ratio": "deleted"},
        ),
    }


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("class")
    source, released = make_assignment(tmp)
    sums_before = (source.parent / "SHA256SUMS").read_text()
    cases = _cases(source)
    for student, (answers, edit, _, _) in cases.items():
        path = tmp / "submissions" / f"{student}.ipynb"
        if answers is None:
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(released.read_bytes())
        else:
            submission(released, path, answers, edit)
    (tmp / "submissions" / "unreadable.ipynb").write_text("{ not a notebook")
    start = time.monotonic()
    results = classroom.grade_class(
        tmp / "submissions",
        tmp / "book",
        source_dir=source.parent,
        jobs=2,
        timeout=TIMEOUT,
        time_cap=90,
        memory_cap="1G",
    )
    seconds = time.monotonic() - start
    assert (source.parent / "SHA256SUMS").read_text() == sums_before
    return {s.student: r for s, r in results}, cases, tmp, seconds, source


CASES = list(_cases("SOLUTION"))


@needs_bwrap
@pytest.mark.parametrize("student", CASES)
def test_each_fault_gets_its_grade(graded, student):
    reports, cases, _, _, _ = graded
    _, _, points, statuses = cases[student]
    report = reports[student]
    assert report.points == points, report.format()
    for test, status in statuses.items():
        assert {t.grade_id: t.status for t in report.tests}[test] == status, report.format()
    assert all(0 <= t.points <= t.max_points for t in report.tests)


@needs_bwrap
def test_the_solution_is_untouched_and_unread(graded):
    reports, _, tmp, _, source = graded
    classroom.check_sums(source)  # the rewrite did not reach it
    # the solution's folder is not in the box at all
    assert "FileNotFoundError" in {t.grade_id: t for t in reports["reads_the_solution"].tests}["test_f"].message
    assert any("FileNotFoundError" in n for n in reports["rewrites_the_solution"].notes), reports[
        "rewrites_the_solution"
    ].format()


@needs_bwrap
def test_a_loop_costs_its_timeout_once(graded):
    reports, _, _, _, _ = graded
    report = reports["infinite_loop"]
    assert report.seconds < 4 * TIMEOUT + 20, report.format()
    assert "earlier call" in {t.grade_id: t for t in report.tests}["test_partial"].message


@needs_bwrap
def test_output_is_capped(graded):
    reports, _, tmp, _, _ = graded
    data = json.loads((tmp / "book" / "reports" / "output_flood--00_tiny.json").read_text())
    assert data["report"]["points"] == FULL
    assert len((tmp / "book" / "reports" / "output_flood--00_tiny.json").read_bytes()) < 50_000


@needs_bwrap
def test_gradebook_and_grades_csv(graded):
    reports, cases, tmp, _, _ = graded
    with open(tmp / "book" / "gradebook.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["student", "assignment", "test", "points", "max_points", "status", "message"]
    # the unreadable notebook too has a row per test: in a course of one assignment, it is that one's
    assert len(rows) == (len(cases) + 1) * len(POINTS)
    unreadable = [r for r in rows if r["student"] == "unreadable"]
    assert len(unreadable) == len(POINTS) and {r["status"] for r in unreadable} == {"not graded"}
    assert all("not a readable Jupyter notebook" in r["message"] for r in unreadable)
    with open(tmp / "book" / "grades.csv", newline="") as f:
        grades = {r["student_id"]: r for r in csv.DictReader(f)}
    assert list(next(iter(grades.values()))) == [
        "assignment",
        "duedate",
        "timestamp",
        "student_id",
        "last_name",
        "first_name",
        "email",
        "raw_score",
        "late_submission_penalty",
        "score",
        "max_score",
    ]
    assert float(grades["correct"]["score"]) == FULL and float(grades["stub"]["score"]) == 0
    assert grades["correct"]["assignment"] == "00_tiny"
    assert float(grades["unreadable"]["score"]) == 0 and float(grades["unreadable"]["max_score"]) == FULL


@needs_bwrap
def test_grading_again_resumes(graded):
    _, _, tmp, _, source = graded
    start = time.monotonic()
    again = classroom.grade_class(
        tmp / "submissions",
        tmp / "book",
        source_dir=source.parent,
        jobs=2,
        timeout=TIMEOUT,
        time_cap=90,
        memory_cap="1G",
    )
    assert time.monotonic() - start < 10  # nothing changed: every report is reused
    assert {s.student: r.points for s, r in again}["correct"] == FULL


# --------------------------------------------------------------------------- single cases and parts


@needs_bwrap
def test_points_are_clamped_and_malformed_cells_reported(tmp_path):
    extra = [new_code_cell("10 ** 9", metadata={"nbgrader": {"grade": True, "grade_id": "test_huge", "locked": True,
                                                             "points": 1, "schema_version": 3, "solution": False,
                                                             "task": False}}),
             new_code_cell("-3.5", metadata={"nbgrader": {"grade": True, "grade_id": "test_negative", "locked": True,
                                                          "points": 1, "schema_version": 3, "solution": False,
                                                          "task": False}}),
             new_code_cell("assert (", metadata={"nbgrader": {"grade": True, "grade_id": "test_syntax", "locked": True,
                                                              "points": 1, "schema_version": 3, "solution": False,
                                                              "task": False}})]  # fmt: skip
    source, released = make_assignment(tmp_path, tiny_notebook(extra))
    report = classroom.grade(submission(released, tmp_path / "s.ipynb"), source=source, timeout=20)
    tests = {t.grade_id: t for t in report.tests}
    assert (tests["test_huge"].points, tests["test_huge"].status) == (1, "passed") and "clamped" in tests[
        "test_huge"
    ].message
    assert (tests["test_negative"].points, tests["test_negative"].status) == (0, "failed")
    assert tests["test_syntax"].status == "malformed" and tests["test_syntax"].points == 0
    assert _score(float("nan"), 2)[0] == 0 and _score(1.5, 2) == (1.5, "") and _score("text", 2)[0] == 2


def test_a_changed_solution_is_refused(tmp_path):
    source, released = make_assignment(tmp_path)
    nb = nbformat.read(source, as_version=4)
    nb.cells[4].source = "pass  # every test passes"
    nbformat.write(nb, source)
    with pytest.raises(VrlibError, match="differs from its checksum"):
        classroom.grade(released, source=source)
    (source.parent / "SHA256SUMS").unlink()
    with pytest.raises(VrlibError, match="SHA256SUMS is missing"):
        classroom.grade(released, source=source)


@needs_bwrap
def test_feedback_notebook(tmp_path):
    source, released = make_assignment(tmp_path)
    sub = submission(released, tmp_path / "s.ipynb", {"f": WRONG_F})
    report = classroom.grade(sub, source=source, timeout=20, feedback=tmp_path / "fb.ipynb")
    text = (tmp_path / "fb.ipynb").read_text()
    assert "0 / 2 points: failed" in text and f"Total: {report.points:g} / {FULL}" in text
    assert "HIDDEN TESTS" not in text and "[5.0, -1.0]" not in text  # hidden tests stay hidden
    assert "f(np.arange(3))" in text


def test_the_wire_accepts_plain_data_only():
    import pickle

    import numpy as np
    import pandas as pd

    from vrlib.classroom import wire

    value = plain((pd.Series([1, 2]), [np.float64(2.5), {"a": np.arange(3)}], np.array(["x", None], dtype=object)))
    back = loads_untrusted(wire.encode(value))
    assert type(back[0]) is np.ndarray and back[1][0] == 2.5 and list(back[2]) == ["x", None]

    class Evil:
        def __reduce__(self):
            return (print, ("owned",))

    with pytest.raises(StudentError, match="cannot read"):  # a pickle is not read at all
        loads_untrusted(pickle.dumps(Evil()))
    with pytest.raises(wire.WireError, match="cannot be sent"):
        wire.encode(Evil())
    assert parse_size("4G") == 4 * 2**30 and parse_size("100k") == 102400
    with pytest.raises(VrlibError):
        parse_size("lots")


def test_bad_arguments(tmp_path):
    bad = tmp_path / "01_vulnerable_records.ipynb"
    bad.write_text("this is not json")
    with pytest.raises(VrlibError, match="not a readable Jupyter notebook"):
        classroom.grade(bad)
    with pytest.raises(VrlibError, match="timeout"):
        classroom.grade(bad, timeout=0)
    with pytest.raises(VrlibError, match="jobs"):
        classroom.grade_class(tmp_path, tmp_path / "book", jobs=0)
