"""Grade a class: a folder of submissions, in parallel and resumably, into a gradebook.

Layouts :func:`discover` understands (the student's id comes from the name):

* one notebook per student: ``SUBMISSIONS/<student>.ipynb``;
* a folder per student: ``SUBMISSIONS/<student>/<NN_assignment>.ipynb`` (several assignments each);
* nbgrader's: ``SUBMISSIONS/submitted/<student>/<assignment>/<notebook>.ipynb`` (or
  ``SUBMISSIONS`` being the ``submitted`` folder itself), with nbgrader's ``timestamp.txt``.

:func:`grade_class` writes, in the gradebook folder, one JSON report per submission
(``reports/``, kept: grading again skips a submission whose notebook, solution and limits
are unchanged), ``gradebook.csv`` (one row per test: student, assignment, test, points,
max_points, status, message) and ``grades.csv`` (one row per submission, with the columns
of ``nbgrader export``'s CSV).  With ``feedback``, each graded notebook goes to
``feedback/<student>/<assignment>.ipynb``.
"""

from __future__ import annotations

import csv
import json
import os
import re
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from vrlib.classroom.grader import GradeReport, TestResult, find_source, grade
from vrlib.classroom.notebooks import sha256
from vrlib.errors import VrlibError
from vrlib.params import check_integer

__all__ = ["Submission", "discover", "grade_class", "write_gradebook", "GRADEBOOK_COLUMNS", "GRADES_COLUMNS"]

GRADEBOOK_COLUMNS = ["student", "assignment", "test", "points", "max_points", "status", "message"]
GRADES_COLUMNS = [
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
]  # nbgrader export's CSV
_SAFE = re.compile(r"[^A-Za-z0-9_.@+-]")


@dataclass
class Submission:
    """One notebook to grade: who handed it in, for which assignment, when (nbgrader's timestamp)."""

    student: str
    path: Path
    source: Path
    timestamp: str = ""

    @property
    def assignment(self) -> str:
        return self.source.stem

    @property
    def key(self) -> str:
        return f"{_SAFE.sub('_', self.student)}--{_SAFE.sub('_', self.assignment)}"


def _notebooks(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.ipynb") if p.is_file() and not p.name.startswith("."))


def discover(submissions, source_dir=None) -> list[Submission]:
    """The submissions under ``submissions`` (a notebook or a folder, see the module's layouts)."""
    root = Path(submissions)
    if root.is_file():
        return [Submission(root.stem, root, find_source(root, source_dir))]
    if not root.is_dir():
        raise VrlibError(f"{root} does not exist")
    found: list[tuple[str, Path, str]] = []
    nbgrader_root = (
        root / "submitted" if (root / "submitted").is_dir() else (root if root.name == "submitted" else None)
    )
    if nbgrader_root is not None:
        for student in sorted(p for p in nbgrader_root.iterdir() if p.is_dir()):
            for assignment in sorted(p for p in student.iterdir() if p.is_dir()):
                stamp = assignment / "timestamp.txt"
                when = stamp.read_text(encoding="utf-8", errors="replace").strip() if stamp.is_file() else ""
                found += [(student.name, nb, when) for nb in _notebooks(assignment)]
    else:
        for entry in sorted(root.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.is_file() and entry.suffix == ".ipynb":
                found.append((entry.stem, entry, ""))
            elif entry.is_dir():
                found += [(entry.name, nb, "") for nb in _notebooks(entry)]
    if not found:
        raise VrlibError(f"no notebooks (*.ipynb) in {root}: see `vrlib classroom grade --help` for the layouts")
    out = []
    for student, path, when in found:
        try:
            source = find_source(path, source_dir)
        except VrlibError as exc:  # reported in the gradebook, not fatal to the class
            source = Path(f"unknown-{path.stem}.ipynb")
            out.append(Submission(student, path, source, when))
            out[-1].error = str(exc)  # type: ignore[attr-defined]
            continue
        out.append(Submission(student, path, source, when))
    keys = [s.key for s in out]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    if dupes:
        raise VrlibError(f"two notebooks of the same student and assignment: {', '.join(dupes)}")
    return out


def _grade_one(sub: Submission, options: dict, feedback_dir, hidden) -> dict:
    feedback = None if feedback_dir is None else Path(feedback_dir) / sub.key.replace("--", os.sep, 1)
    if feedback is not None:
        feedback = feedback.with_suffix(".ipynb")
    try:
        report = grade(sub.path, source=sub.source, feedback=feedback, hidden=hidden, **options)
    except VrlibError as exc:
        report = GradeReport(str(sub.path), str(sub.source), notes=[f"not graded: {exc}"])
    return report.to_dict()


def grade_class(
    submissions, gradebook, source_dir=None, jobs: int = 1, feedback: bool = False, progress=None, **options
) -> list[tuple[Submission, GradeReport]]:
    """Grade every submission under ``submissions`` into the folder ``gradebook``.

    Parameters
    ----------
    submissions : path
        A notebook or a folder (see :func:`discover`).
    gradebook : path
        Where ``reports/``, ``gradebook.csv``, ``grades.csv`` (and ``feedback/``) go.
    source_dir : path, optional
        The solution notebooks (default ``notebooks/assignments``).
    jobs : int
        Submissions graded at once (each in its own processes).
    feedback : bool
        Also write each graded notebook under ``gradebook/feedback/``.
    progress : callable, optional
        Called with each (submission, report) when it is done.
    **options
        Passed to :func:`vrlib.classroom.grade` (``timeout``, ``time_cap``, ``memory_cap``, ``output_cap``).

    Returns
    -------
    list of (Submission, GradeReport)
    """
    check_integer("jobs", jobs, minimum=1)
    subs = discover(submissions, source_dir)
    book = Path(gradebook)
    reports_dir = book / "reports"
    reports_dir.mkdir(parents=True, exist_ok=True)
    hidden = [
        str(Path(submissions).resolve() if Path(submissions).is_dir() else Path(submissions).resolve().parent),
        str(book.resolve()),
    ]
    settings = json.dumps(sorted((k, str(v)) for k, v in options.items()))
    done: dict[str, GradeReport] = {}
    todo = []
    for sub in subs:
        if getattr(sub, "error", None):
            done[sub.key] = GradeReport(str(sub.path), "", notes=[f"not graded: {sub.error}"])
            continue
        stamp = f"{sha256(sub.path)} {sha256(sub.source)} {settings} {feedback}"
        saved = reports_dir / f"{sub.key}.json"
        if saved.is_file():
            try:
                data = json.loads(saved.read_text(encoding="utf-8"))
                if data.get("stamp") == stamp:
                    done[sub.key] = GradeReport.from_dict(data["report"])
                    continue
            except (ValueError, KeyError, TypeError):
                pass
        todo.append((sub, stamp, saved))
    feedback_dir = book / "feedback" if feedback else None

    def keep(sub, stamp, saved, data):
        tmp = saved.with_suffix(".json.tmp")
        tmp.write_text(json.dumps({"stamp": stamp, "report": data}, indent=1), encoding="utf-8")
        tmp.replace(saved)  # a report is there whole or not at all: grading can resume
        done[sub.key] = GradeReport.from_dict(data)
        if progress is not None:
            progress(sub, done[sub.key])

    if jobs == 1 or len(todo) <= 1:
        for sub, stamp, saved in todo:
            keep(sub, stamp, saved, _grade_one(sub, options, feedback_dir, hidden))
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {
                pool.submit(_grade_one, sub, options, feedback_dir, hidden): (sub, stamp, saved)
                for sub, stamp, saved in todo
            }
            for future in as_completed(futures):
                keep(*futures[future], future.result())
    results = [(sub, done[sub.key]) for sub in subs]
    write_gradebook(results, book)
    return results


def write_gradebook(results, folder) -> tuple[Path, Path]:
    """Write ``gradebook.csv`` (per test) and ``grades.csv`` (per submission, nbgrader's columns)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    per_test, per_submission = folder / "gradebook.csv", folder / "grades.csv"
    with open(per_test, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(GRADEBOOK_COLUMNS)
        for sub, report in results:
            tests = report.tests or [TestResult("(notebook)", 0.0, 0.0, "not graded", "; ".join(report.notes))]
            for t in tests:
                writer.writerow(
                    [sub.student, sub.assignment, t.grade_id, f"{t.points:g}", f"{t.max_points:g}", t.status, t.message]
                )
    with open(per_submission, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(GRADES_COLUMNS)
        for sub, report in results:
            writer.writerow(
                [
                    sub.assignment,
                    "",
                    sub.timestamp,
                    sub.student,
                    "",
                    "",
                    "",
                    f"{report.points:g}",
                    "0",
                    f"{report.points:g}",
                    f"{report.max_points:g}",
                ]
            )
    return per_test, per_submission
