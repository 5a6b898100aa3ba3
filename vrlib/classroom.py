"""Classroom assignments: student versions generated from solution notebooks, and autograding.

The solution notebooks under ``notebooks/assignments/`` follow nbgrader's conventions
exactly (cell metadata ``nbgrader`` with ``solution`` / ``grade`` / ``locked`` /
``points`` / ``grade_id``; solution regions ``### BEGIN SOLUTION`` / ``### END
SOLUTION``; hidden tests ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS``), so a
course that runs nbgrader itself can use them as its ``source/`` notebooks unchanged.

* :func:`generate` writes the student versions with nbgrader's own preprocessors, in
  the order of ``nbgrader generate_assignment`` (less its gradebook database): cells
  locked, solutions replaced by a stub that raises ``NotImplementedError``, outputs
  cleared, checksums, hidden tests removed.  Same input, same bytes.
* :func:`grade` runs a submission the way ``nbgrader autograde`` does, without a
  course directory or database: the read-only and test cells are restored from the
  solution notebook (so the hidden tests come back and edited tests do not count),
  every cell runs with nbgrader's ``Execute`` preprocessor (errors recorded, a
  per-cell timeout that interrupts the kernel), and each test cell is scored by
  ``nbgrader.utils.determine_grade`` (an error, or anything on stderr, scores 0).
  A test cell the student deleted scores 0 and is reported as deleted; a kernel that
  dies leaves the cells after it "not run", at 0.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from vrlib.errors import VrlibError

__all__ = ["generate", "release", "grade", "GradeReport", "TestResult", "assignments", "ASSIGNMENTS_DIR"]

# Where the solution notebooks live, relative to the project root; release/ beside them.
ASSIGNMENTS_DIR = Path("notebooks") / "assignments"
PATTERN = "[0-9][0-9]_*.ipynb"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _project_root() -> Path:
    return Path(__file__).resolve().parents[1]


def assignments(source_dir=None) -> list[Path]:
    """The solution notebooks (``NN_*.ipynb``) of ``source_dir`` (default ``notebooks/assignments``)."""
    source_dir = Path(source_dir) if source_dir is not None else _project_root() / ASSIGNMENTS_DIR
    found = sorted(source_dir.glob(PATTERN))
    if not found:
        raise VrlibError(f"no assignment notebooks ({PATTERN}) in {source_dir}")
    return found


def _read(path) -> nbformat.NotebookNode:
    path = Path(path)
    if not path.is_file():
        raise VrlibError(f"{path} does not exist")
    try:
        return nbformat.read(path, as_version=4)
    except Exception as exc:  # nbformat raises several kinds for a file that is not a notebook
        raise VrlibError(f"{path} is not a readable Jupyter notebook ({type(exc).__name__}: {exc})") from None


def release(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The student version of a solution notebook (a new notebook; ``nb`` is left as it was).

    Runs nbgrader's preprocessors in the order of ``nbgrader generate_assignment``,
    without the ones that need its database or a course header.
    """
    from nbgrader.preprocessors import (
        CheckCellMetadata, ClearHiddenTests, ClearMarkScheme, ClearOutput, ClearSolutions, ComputeChecksums,
        LockCells,
    )  # fmt: skip

    out = nbformat.from_dict(nbformat.reader.reads(nbformat.writes(nb)))  # a deep copy
    resources: dict = {}
    steps = [LockCells, ClearSolutions, ClearOutput, CheckCellMetadata, ComputeChecksums, ClearHiddenTests,
             ClearMarkScheme, ComputeChecksums, CheckCellMetadata]  # fmt: skip
    for step in steps:
        out, resources = step().preprocess(out, resources)
    return out


def generate(source_dir=None, release_dir=None) -> list[Path]:
    """Write the student version of every solution notebook into ``release_dir``.

    Parameters
    ----------
    source_dir : path, optional
        Default ``notebooks/assignments`` of the project.
    release_dir : path, optional
        Default ``<source_dir>/release``.  Student versions of notebooks no longer in
        ``source_dir`` are removed, so the folder always mirrors the sources.

    Returns
    -------
    list of Path
        The files written.
    """
    sources = assignments(source_dir)
    release_dir = Path(release_dir) if release_dir is not None else sources[0].parent / "release"
    release_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sources:
        target = release_dir / path.name
        text = nbformat.writes(release(_read(path)))
        if not text.endswith("\n"):
            text += "\n"
        target.write_text(text, encoding="utf-8")
        written.append(target)
    names = {p.name for p in sources}
    for stale in release_dir.glob(PATTERN):
        if stale.name not in names:
            stale.unlink()
    return written


# --------------------------------------------------------------------------- grading


@dataclass
class TestResult:
    """The grade of one test cell."""

    grade_id: str
    points: float
    max_points: float
    status: str  # "passed", "failed", "timed out", "deleted", "not run"
    message: str = ""


@dataclass
class GradeReport:
    """The grades of a submission, test by test, and what went wrong elsewhere."""

    submission: str
    source: str
    tests: list[TestResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def points(self) -> float:
        return float(sum(t.points for t in self.tests))

    @property
    def max_points(self) -> float:
        return float(sum(t.max_points for t in self.tests))

    def to_dict(self) -> dict:
        return {
            "submission": self.submission, "source": self.source, "points": self.points,
            "max_points": self.max_points, "tests": [vars(t) for t in self.tests], "notes": self.notes,
        }  # fmt: skip

    def format(self) -> str:
        """A plain-text report: one line per test, then the notes and the total."""
        width = max([len(t.grade_id) for t in self.tests] + [4])
        lines = [f"grading {self.submission} (tests from {self.source})"]
        for t in self.tests:
            line = f"  {t.grade_id:<{width}}  {_num(t.points):>5} / {_num(t.max_points):<5} {t.status}"
            lines.append(line + (f": {t.message}" if t.message else ""))
        lines += [f"  note: {n}" for n in self.notes]
        lines.append(f"total: {_num(self.points)} / {_num(self.max_points)}")
        return "\n".join(lines)


def _num(x: float) -> str:
    return f"{x:g}"


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _is_test(cell) -> bool:
    m = _meta(cell)
    return bool(m.get("grade")) and not m.get("solution") and cell.get("cell_type") == "code"


def _find_source(submission: Path, source_dir) -> Path:
    """The solution notebook of a submission: same file name, else the one sharing its grade ids."""
    sources = assignments(source_dir)
    for path in sources:
        if path.name == submission.name:
            return path
    ids = {_meta(c).get("grade_id") for c in _read(submission).cells if _meta(c)}
    ids.discard(None)
    best = max(sources, key=lambda p: len(ids & {_meta(c).get("grade_id") for c in _read(p).cells}))
    if not ids & {_meta(c).get("grade_id") for c in _read(best).cells}:
        raise VrlibError(
            f"cannot tell which assignment {submission.name} is (no file of that name and no nbgrader cell "
            f"shared with one); pass the solution notebook with --source"
        )
    return best


def _error_text(cell) -> str:
    """One line saying what went wrong in an executed cell ('' when nothing did)."""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            name, value = out.get("ename", "Error"), _ANSI.sub("", str(out.get("evalue", ""))).strip()
            return f"{name}: {value.splitlines()[0]}" if value else name
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream" and out.get("name") == "stderr":
            text = _ANSI.sub("", "".join(out.get("text", ""))).strip()
            return "wrote to stderr: " + (text.splitlines()[-1] if text else "")
    return ""


def _restore(submitted: nbformat.NotebookNode, solution: nbformat.NotebookNode, notes: list[str]):
    """The submission with its locked and test cells replaced by the solution's (nbgrader's OverwriteCells).

    Returns the notebook to run and the grade ids of the test cells it lacks.
    """
    by_id = {_meta(c)["grade_id"]: c for c in solution.cells if _meta(c).get("grade_id")}
    seen: set = set()
    cells = []
    for cell in submitted.cells:
        gid = _meta(cell).get("grade_id")
        if gid is not None and gid in seen:
            notes.append(f"cell {gid!r} appears twice; the copy was ignored")
            continue
        if gid is not None:
            seen.add(gid)
        original = by_id.get(gid)
        if original is not None and (_is_test(original) or _meta(original).get("locked") and not _meta(original).get("solution")):
            cell = nbformat.from_dict(dict(original))  # hidden tests restored, edits undone
        cells.append(cell)
    missing_tests = [gid for gid, c in by_id.items() if _is_test(c) and gid not in seen]
    for gid, c in by_id.items():
        if gid not in seen and not _is_test(c) and _meta(c).get("solution"):
            notes.append(f"solution cell {gid!r} was deleted")
    run = nbformat.v4.new_notebook(metadata=solution.metadata)
    run.cells = cells
    for cell in run.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return run, missing_tests


def _execute(nb: nbformat.NotebookNode, timeout: int, notes: list[str]) -> None:
    """Run every cell in place with nbgrader's Execute preprocessor (errors and timeouts recorded)."""
    from nbgrader.preprocessors import Execute

    with tempfile.TemporaryDirectory(prefix="vrlib-grade-") as workdir:
        executor = Execute(timeout=timeout, kernel_name=nb.metadata.get("kernelspec", {}).get("name", "python3"))
        try:
            executor.preprocess(nb, {"metadata": {"path": workdir}})
        except Exception as exc:  # a dead kernel, an unresponsive one: report, grade what ran
            text = _ANSI.sub("", str(exc)).strip().splitlines()
            notes.append(f"execution stopped: {type(exc).__name__}: {text[0] if text else ''}")


def grade(submission, source=None, source_dir=None, timeout: int = 120, executed=None) -> GradeReport:
    """Run a submission with its hidden tests restored and score its test cells.

    Parameters
    ----------
    submission : path
        The student's notebook (a released notebook, filled in).
    source : path, optional
        Its solution notebook; default the one of the same file name in ``source_dir``
        (or, failing that, the one sharing its graded cells).
    source_dir : path, optional
        Default ``notebooks/assignments`` of the project.
    timeout : int
        Seconds each cell may run before the kernel is interrupted (the cell then fails).
    executed : path, optional
        Where to write the graded notebook with its outputs (for feedback).

    Returns
    -------
    GradeReport
    """
    if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 1:
        raise VrlibError(f"timeout must be a positive number of seconds, got {timeout!r}")
    submission = Path(submission)
    submitted = _read(submission)
    source = Path(source) if source is not None else _find_source(submission, source_dir)
    solution = _read(source)
    report = GradeReport(str(submission), str(source))
    run, missing = _restore(submitted, solution, report.notes)
    data_dir = os.environ.get("VRLIB_DATA_DIR")
    if data_dir and not os.path.isabs(data_dir):  # the kernel runs in a scratch folder
        os.environ["VRLIB_DATA_DIR"] = os.path.abspath(data_dir)
    _execute(run, timeout, report.notes)
    if executed is not None:
        nbformat.write(run, executed)
    from nbgrader.utils import determine_grade

    ran = {_meta(c)["grade_id"]: c for c in run.cells if _is_test(c)}
    for cell in solution.cells:
        if not _is_test(cell):
            continue
        gid, max_points = _meta(cell)["grade_id"], float(_meta(cell).get("points", 0))
        if gid in missing:
            report.tests.append(TestResult(gid, 0.0, max_points, "deleted", "the test cell was removed from the notebook"))
            continue
        done = ran[gid]
        if done.get("execution_count") is None and not done.get("outputs"):
            report.tests.append(TestResult(gid, 0.0, max_points, "not run", "execution stopped before this cell"))
            continue
        points, _ = determine_grade(done)
        error = _error_text(done)
        if error.startswith("CellTimeoutError") or "KeyboardInterrupt" in error:
            status, error = "timed out", f"interrupted after {timeout} s"
        else:
            status = "passed" if points == max_points else "failed"
        report.tests.append(TestResult(gid, float(points or 0.0), max_points, status, "" if status == "passed" else error))
    for cell in run.cells:  # say why, when a solution cell itself failed
        if _meta(cell).get("solution") and cell.cell_type == "code":
            error = _error_text(cell)
            if error.startswith("CellTimeoutError") or "KeyboardInterrupt" in error:
                report.notes.append(f"solution cell {_meta(cell).get('grade_id')!r} timed out after {timeout} s")
            elif error and not error.startswith("wrote to stderr"):
                report.notes.append(f"solution cell {_meta(cell).get('grade_id')!r} raised {error}")
    return report
