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

Each submission is graded by :func:`grade`, in a process of its own stopped
:data:`vrlib.classroom.grader.OVERRUN` seconds past its time cap: the test cells run in the grader
on the student's values, which the time cap does not bound.
"""

from __future__ import annotations

import csv
import json
import os
import re
import stat
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from vrlib.classroom.grader import GradeReport, TestResult, clean_text, find_source, grade, not_graded
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
_NUMBER = re.compile(r"-?[0-9.]+(e[+-]?[0-9]+)?|-?inf|nan")  # the points columns, as written with :g


@dataclass
class Submission:
    """One notebook to grade: who handed it in, for which assignment, when (nbgrader's timestamp)."""

    student: str
    path: Path
    source: Path
    timestamp: str = ""
    error: str = ""  # why it cannot be graded (found while discovering)
    note: str = ""  # said in its report (e.g. which of two copies was graded)

    @property
    def assignment(self) -> str:
        return self.source.stem

    @property
    def key(self) -> str:
        return f"{_safe(self.student)}--{_safe(self.assignment)}"


def _safe(name: str) -> str:
    """``name`` as a file name, one to one: when characters had to be replaced, a hash of the name follows.

    Without the hash "ann b" and "ann_b" were one key: one student's report, feedback and row in
    the gradebook stood for both; and "ann--x"'s feedback went into ann's feedback folder.  A name
    with capitals gets the hash too: on a file system that ignores case (macOS's, Windows', a USB
    disk's) "Ann" and "ann" were one report and one feedback folder.
    """
    safe = _SAFE.sub("_", name).replace("--", "__")  # "--" parts a key: "ann--x" would file into ann's folder
    if safe == name and not name.startswith(".") and name == name.lower():
        return name
    import hashlib

    return f"{safe.lstrip('.')}~{hashlib.sha256(name.encode('utf-8', 'surrogateescape')).hexdigest()[:10]}"


def _notebooks(folder: Path) -> list[Path]:
    """The notebooks of a folder, symbolic links included (:func:`discover` refuses those, saying so)."""
    return sorted(p for p in folder.glob("*.ipynb") if (p.is_file() or p.is_symlink()) and not p.name.startswith("."))


def _timestamp(stamp: Path) -> str:
    """nbgrader's ``timestamp.txt``: its first line, at most 100 bytes (a link or a huge file gives nothing)."""
    try:
        fd = os.open(stamp, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return ""
        text = f.read(100).decode("utf-8", errors="replace")
    return text.splitlines()[0].strip() if text.strip() else ""


def _linked(path: Path, root: Path) -> Path | None:
    """The first symbolic link on the way from ``root`` (excluded) to ``path``, or None."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return path if path.is_symlink() else None
    here = root
    for part in parts:
        here = here / part
        if here.is_symlink():
            return here
    return None


def discover(submissions, source_dir=None) -> list[Submission]:
    """The submissions under ``submissions`` (a notebook or a folder, see the module's layouts)."""
    root = Path(submissions)
    if root.is_file():  # one notebook: read as a submission (a link is refused when it is graded, saying so)
        return [Submission(root.stem, root, find_source(root, source_dir))]
    if not root.is_dir():
        raise VrlibError(f"{root} does not exist")
    found: list[tuple[str, Path, str]] = []
    # nbgrader's layout when submitted/ holds students' folders; one holding notebooks is a student named so
    # (before, a student folder named "submitted" turned the class into an empty nbgrader layout: no one was graded)
    nested = (root / "submitted").is_dir() and not _notebooks(root / "submitted")
    nbgrader_root = root / "submitted" if nested else (root if root.name == "submitted" else None)
    folder_of: dict[Path, str] = {}  # nbgrader's layout: the assignment folder each notebook was handed in to
    if nbgrader_root is not None:
        for student in sorted(p for p in nbgrader_root.iterdir() if p.is_dir()):
            for assignment in sorted(p for p in student.iterdir() if p.is_dir()):
                stamp = assignment / "timestamp.txt"
                when = _timestamp(stamp)
                found += [(student.name, nb, when) for nb in _notebooks(assignment)]
                folder_of.update((nb, assignment.name) for nb in _notebooks(assignment))
    else:
        for entry in sorted(root.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.suffix == ".ipynb" and (entry.is_file() or entry.is_symlink()):
                found.append((entry.stem, entry, ""))
            elif entry.is_dir():
                found += [(entry.name, nb, "") for nb in _notebooks(entry)]
    if not found:
        raise VrlibError(f"no notebooks (*.ipynb) in {root}: see `vrlib classroom grade --help` for the layouts")
    out = []
    for student, path, when in found:
        link = _linked(path, nbgrader_root or root)  # below the layout's base: the teacher may link that
        try:
            if link is not None:  # it may name the solution or a classmate's notebook: the grader can read both
                raise VrlibError(
                    f"{link.relative_to(root) if link != path else path.name} is a symbolic link; "
                    "hand in the notebook itself"
                )
            source = find_source(path, source_dir)
            folder = folder_of.get(path)
            if folder is not None and folder != source.stem and folder in _stems(source_dir):
                # handed in to another assignment (one still open, or one that sorts first): as nbgrader
                # does, an assignment's folder holds that assignment only, so it cannot replace the
                # notebook handed in on time, nor carry the other folder's timestamp
                raise _Misfiled(
                    f"{path.name} is a notebook of {source.stem} handed in to the folder of {folder}; "
                    f"hand it in to {source.stem}"
                )
        except _Misfiled as exc:
            out.append(Submission(student, path, source, when, error=str(exc)))
            continue
        except Exception as exc:  # noqa: BLE001 (reported in the gradebook, never fatal to the class)
            why = str(exc) if isinstance(exc, VrlibError) else f"it cannot be read ({type(exc).__name__}: {exc})"
            out.append(Submission(student, path, _guess_source(path, source_dir), when, error=why))
            continue
        out.append(Submission(student, path, source, when))
    return _one_per_assignment(out)


class _Misfiled(VrlibError):
    """A notebook in nbgrader's layout handed in to another assignment's folder."""


def _stems(source_dir) -> set[str]:
    from vrlib.classroom.notebooks import assignments

    return {p.stem for p in assignments(source_dir)}


def _guess_source(path: Path, source_dir) -> Path:
    """The solution a notebook that cannot be read was meant for (by its file name), or a placeholder."""
    from vrlib.classroom.notebooks import assignments

    try:
        candidates = assignments(source_dir)
        for candidate in candidates:
            if path.stem == candidate.stem or path.stem.startswith(candidate.stem):
                return candidate
        if len(candidates) == 1:  # a course of one assignment: that one (its max_score in the gradebook)
            return candidates[0]
    except VrlibError:
        pass
    return Path(f"unknown-{path.stem}.ipynb")


def _one_per_assignment(subs: list[Submission]) -> list[Submission]:
    """One notebook per student and assignment.

    The rule, when a student's folder holds several notebooks of one assignment (a Jupyter
    ``-Copy1``, a renamed copy): the one named exactly like the assignment's notebook is
    graded; failing that, the first by file name.  The graded one's report names the others.
    """
    groups: dict[tuple[str, str], list[Submission]] = {}
    for sub in subs:
        groups.setdefault((sub.student, sub.assignment), []).append(sub)
    out = []
    for sub in subs:
        group = groups[(sub.student, sub.assignment)]
        if len(group) == 1:
            out.append(sub)
            continue
        if sub is not group[0]:
            continue
        exact = [s for s in group if s.path.name == s.source.name and not s.error]
        chosen = exact[0] if exact else sorted(group, key=lambda s: (bool(s.error), s.path.name))[0]
        names = [s.path.name for s in group]
        shown = {
            id(s): s.path.name if names.count(s.path.name) == 1 else f"{s.path.parent.name}/{s.path.name}"
            for s in group
        }
        others = ", ".join(shown[id(s)] for s in group if s is not chosen)
        chosen.note = (
            f"{len(group)} notebooks of this assignment: graded {shown[id(chosen)]}, not {others} "
            "(rule: the notebook named like the assignment, else the first by name)"
        )
        out.append(chosen)
    return out


def _not_graded(sub: Submission, why: str) -> GradeReport:
    return not_graded(sub.path, sub.source, why)


def _grade_one(sub: Submission, options: dict, feedback_dir, hidden) -> dict:
    """One submission's report; whatever goes wrong stays this student's ("not graded: why")."""
    feedback = None if feedback_dir is None else Path(feedback_dir) / sub.key.replace("--", os.sep, 1)
    if feedback is not None:
        feedback = feedback.with_suffix(".ipynb")
    try:
        report = grade(sub.path, source=sub.source, feedback=feedback, hidden=hidden, **options)  # stopped past its cap
    except VrlibError as exc:
        if type(exc).__name__ == "SandboxUnavailable":
            raise
        report = _not_graded(sub, str(exc))
    except Exception as exc:  # noqa: BLE001 (one notebook never stops the class)
        report = _not_graded(sub, f"the grader failed on it ({type(exc).__name__}: {exc})")
    if sub.note:
        report.notes.append(sub.note)
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
    if options.get("sandbox", True):
        from vrlib.classroom.sandbox import require_bwrap

        require_bwrap()  # stop before grading anyone, naming the package to install
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
        if sub.error:
            done[sub.key] = _not_graded(sub, sub.error)
            if sub.note:
                done[sub.key].notes.append(sub.note)
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
        broken = _pool(todo, jobs, options, feedback_dir, hidden, keep)
        # A grading process that died (the machine's memory, a crash) takes the pool with it: the
        # submissions it held are graded again, each alone, so only the one that kills its process
        # ends up "not graded".
        for item in broken:
            for again in _pool([item], 1, options, feedback_dir, hidden, keep):
                sub, stamp, saved = again
                keep(sub, stamp, saved, _not_graded(sub, "its grading process died (twice)").to_dict())
    results = [(sub, done[sub.key]) for sub in subs]
    write_gradebook(results, book)
    return results


def _pool(todo, jobs: int, options: dict, feedback_dir, hidden, keep) -> list:
    """Grade ``todo`` in a pool of ``jobs`` processes, keeping each report; return those whose process died."""
    from concurrent.futures.process import BrokenProcessPool

    broken = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {
            pool.submit(_grade_one, sub, options, feedback_dir, hidden): (sub, stamp, saved)
            for sub, stamp, saved in todo
        }
        for future in as_completed(futures):
            sub = futures[future][0]
            try:
                data = future.result()
            except VrlibError:
                raise
            except BrokenProcessPool:
                broken.append(futures[future])
                continue
            except Exception as exc:  # noqa: BLE001 (this student only)
                data = _not_graded(sub, f"its grading process failed ({type(exc).__name__}: {exc})").to_dict()
            keep(*futures[future], data)
    return broken


def write_gradebook(results, folder) -> tuple[Path, Path]:
    """Write ``gradebook.csv`` (per test) and ``grades.csv`` (per submission, nbgrader's columns).

    Each file is written whole beside its place and then renamed into it: a reader sees the
    old table or the new one, never half of one.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    per_test, per_submission = folder / "gradebook.csv", folder / "grades.csv"
    rows = []
    for sub, report in results:
        tests = report.tests or [TestResult("(notebook)", 0.0, 0.0, "not graded", "; ".join(report.notes))]
        for t in tests:
            message = t.message if t.message or t.status != "not graded" else "; ".join(report.notes)
            rows.append(
                [
                    clean_text(sub.student),
                    clean_text(sub.assignment),
                    clean_text(t.grade_id),
                    f"{t.points:g}",
                    f"{t.max_points:g}",
                    t.status,
                    clean_text(message),
                ]
            )
    _write_csv(per_test, GRADEBOOK_COLUMNS, rows)
    rows = [
        [
            clean_text(sub.assignment),
            "",
            clean_text(sub.timestamp),
            clean_text(sub.student),
            "",
            "",
            "",
            f"{report.points:g}",
            "0",
            f"{report.points:g}",
            f"{report.max_points:g}",
        ]
        for sub, report in results
    ]
    _write_csv(per_submission, GRADES_COLUMNS, rows)
    return per_test, per_submission


def _inert(cell: str) -> str:
    """A text cell a spreadsheet shows as text: one starting like a formula gets a leading ``'``.

    Spreadsheets run a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a formula (links,
    other cells, once programs); a student's name and nbgrader's ``timestamp.txt``, which the
    student's side of nbgrader writes, are the student's text.
    """
    return "'" + cell if cell[:1] in ("=", "+", "-", "@") else cell


def _write_csv(path: Path, header: list, rows: list) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows([[_inert(cell) if not _NUMBER.fullmatch(cell) else cell for cell in row] for row in rows])
    os.replace(tmp, path)
