"""Grade one submission: the student's code in a sandbox, the hidden tests in the grader.

How a submission is graded (:func:`grade`):

1. The solution notebook is checked against ``SHA256SUMS`` (written by ``vrlib classroom
   generate``) and copied, read-only, into a private temporary folder; everything the
   grader trusts comes from that pristine copy.  The submission is read once, as untrusted
   input (:func:`vrlib.classroom.notebooks.read_submission`: no symbolic links, bounded
   before parsing, cells of the expected shape), and the box gets those bytes.
2. Every cell's role comes from the solution, by ``grade_id`` (:func:`_restore`); the
   submission's metadata decides nothing.  Test and read-only cells are the solution's
   (hidden tests come back, edited tests do not count); a deleted test cell scores 0
   (nbgrader's rule) and is reported as deleted; a deleted read-only cell is put back,
   with a note; any cell that is not the solution's (added, re-tagged, without a
   ``grade_id``) is the student's code.
3. The student's cells up to the last test cell (answer cells, the read-only cells
   between them, any cell the student added) run one by one in a separate process in a
   bubblewrap box (:mod:`vrlib.classroom.sandbox`, :class:`vrlib.classroom.fence.Fence`):
   capped in time, memory, CPU, processes and output, with no view of the solutions, the
   other submissions, the gradebook, other processes or the grader's environment.  A cell
   that fails, runs past the time limit or ends the process is reported and skipped; the
   ungraded cells after the last test (the real-data part) are not run.
4. The solution's read-only and test cells run in the grader's own process, where the
   functions the student wrote are stand-ins that call the student's process.  Only
   plain data (numbers, strings, lists, numpy arrays) comes back, in a typed, bounded
   format that is never unpickled (:mod:`vrlib.classroom.wire`).  The references the
   tests compare with live only in the grader (in the box they are stubs).  A test cell
   that rebinds one of the student's names (``kde_log_density = reference``) grades the
   others with that reference: the student's code then calls back into the grader for it,
   which computes it in a child process under the student's memory cap, killed at the
   call's deadline (:func:`vrlib.classroom.fence._capped_call`).
5. Each test cell scores its points when it finishes without an error, 0 otherwise, with
   the reason (the first line of the error, a timeout, the end of the student's process,
   the submission's time cap).  A test cell whose last line is a number scores that
   number (nbgrader's partial credit), clamped to ``[0, points]``.  A malformed test cell
   (bad ``points``, a syntax error) scores 0 and is reported.  Warnings never cost points.
   Messages are stripped of control characters and terminal escape sequences.
6. What the hidden tests show the student's code stays out of the student's sight: a failure
   on a hidden line says "failed a hidden test"; after a test cell whose hidden lines called
   the student's code, the student's process is stopped and what it printed since is
   dropped, so no later call or printout carries the hidden inputs (:func:`_grade_test`).
7. The time cap bounds the student's process, not the grader's work on what it returned: the
   grading runs in a child process, stopped :data:`OVERRUN` seconds past the time cap
   (:func:`_grade_capped`); the submission is then "not graded", its note saying why.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import math
import os
import re
import select
import shutil
import signal
import stat
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

from vrlib.classroom.fence import Fence, StudentDied, StudentError, StudentTimeout, parse_size, write_all
from vrlib.classroom.notebooks import (
    assignments,
    check_sums,
    is_locked,
    sha256,
    is_solution,
    is_test,
    meta,
    read,
    read_submission,
    solution_names,
)
from vrlib.errors import VrlibError
from vrlib.params import check_number

__all__ = ["grade", "GradeReport", "TestResult", "find_source"]

MESSAGE_CAP = 300  # characters of a test's message in the report
START_TIMEOUT = 60  # seconds the student's process may take to start (Python, numpy, pandas)


@dataclass
class TestResult:
    """The grade of one test cell.

    ``status`` is one of ``passed``, ``partial``, ``failed``, ``timed out``, ``process ended``,
    ``deleted``, ``malformed`` or ``not run`` (the submission's time cap was used up).
    """

    grade_id: str
    points: float
    max_points: float
    status: str
    message: str = ""


@dataclass
class GradeReport:
    """The grades of a submission, test by test, and what went wrong elsewhere."""

    submission: str
    source: str
    tests: list[TestResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    output: str = ""

    @property
    def points(self) -> float:
        return float(sum(t.points for t in self.tests))

    @property
    def max_points(self) -> float:
        return float(sum(t.max_points for t in self.tests))

    def to_dict(self) -> dict:
        """The report as JSON-ready data (the student's printed output left out)."""
        return {
            "submission": self.submission,
            "source": self.source,
            "points": self.points,
            "max_points": self.max_points,
            "seconds": round(self.seconds, 2),
            "tests": [{**asdict(t), "message": _short(t.message)} for t in self.tests],
            "notes": [_short(n) for n in self.notes],
        }

    @classmethod
    def from_dict(cls, data: dict) -> GradeReport:
        """The inverse of :meth:`to_dict`."""
        return cls(
            data["submission"],
            data["source"],
            [TestResult(**t) for t in data["tests"]],
            list(data.get("notes", [])),
            float(data.get("seconds", 0.0)),
        )

    def format(self) -> str:
        """A plain-text report: one line per test, then the notes and the total."""
        width = max([len(t.grade_id) for t in self.tests] + [4])
        lines = [f"grading {self.submission} (tests from {self.source})"]
        for t in self.tests:
            line = f"  {t.grade_id:<{width}}  {_num(t.points):>5} / {_num(t.max_points):<5} {t.status}"
            lines.append(line + (f": {t.message}" if t.message else ""))
        lines = [clean_text(line) for line in lines]
        lines += [f"  note: {_short(n)}" for n in self.notes]
        lines.append(f"total: {_num(self.points)} / {_num(self.max_points)}")
        return "\n".join(lines)


def _num(x: float) -> str:
    return f"{x:g}"


_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


_SURROGATES = re.compile("[\ud800-\udfff]")


def _escape_surrogate(match) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def clean_text(text, keep_lines: bool = False) -> str:
    """``text`` without terminal escape sequences, control and bidirectional-override characters.

    A lone surrogate (a file name's byte that is not UTF-8, as Python decodes it) becomes its
    escape (``\\xff``): no UTF-8 file can hold it, so one such name stopped the class's gradebook.
    """
    text = _SURROGATES.sub(_escape_surrogate, _CONTROLS.sub("?", _ESCAPES.sub("", str(text))))
    return text if keep_lines else text.replace("\n", " ").replace("\t", " ")


def _short(text: str) -> str:
    text = " ".join(clean_text(text).split())
    return text if len(text) <= MESSAGE_CAP else text[: MESSAGE_CAP - 3] + "..."


def _first_line(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        text = ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    name = type(exc).__name__
    return _short(f"{name}: {' '.join(lines[:3])}" if lines else name)


def find_source(submission: Path, source_dir=None) -> Path:
    """The solution notebook of a submission: same file name, else the one sharing its grade ids."""
    sources = assignments(source_dir)
    for path in sources:
        if path.name == Path(submission).name:
            return path
    ids = {_grade_id(c) for c in read_submission(submission)[0].cells}  # text ids only: the student's are anything
    ids.discard(None)
    best = max(sources, key=lambda p: len(ids & {_grade_id(c) for c in read(p).cells}))
    if not ids & {_grade_id(c) for c in read(best).cells}:
        raise VrlibError(
            f"cannot tell which assignment {Path(submission).name} is (no file of that name and no nbgrader "
            "cell shared with one); pass the solution notebook with --source"
        )
    return best


def _grade_id(cell):
    gid = meta(cell).get("grade_id")
    return gid if isinstance(gid, str) and gid else None


def _restore(submitted, solution, notes: list[str]):
    """The cells to run: their roles taken from the solution by ``grade_id``, never from the submission.

    * a cell whose ``grade_id`` is one of the solution's test or read-only cells is the
      solution's cell (hidden tests restored, edits undone);
    * a cell whose ``grade_id`` is one of the solution's answer cells is the student's
      source with the solution's metadata;
    * any other cell (no ``grade_id``, an unknown one, a copy) is the student's code,
      whatever its metadata says: it runs only in the student's process;
    * a read-only cell the student deleted is put back from the solution (with a note).

    Returns the cells and the grade ids of the test cells the submission lacks.
    """
    by_id = {_grade_id(c): c for c in solution.cells if _grade_id(c)}
    seen: set = set()
    cells = []
    forged = 0
    for cell in submitted.cells:
        gid = _grade_id(cell)
        original = by_id.get(gid) if gid is not None else None
        if original is not None and gid in seen:
            notes.append(f"cell {gid!r} appears twice; the copy was ignored")
            continue
        if original is None:  # the student's own cell: its metadata decides nothing
            if meta(cell) and (meta(cell).get("grade") or meta(cell).get("locked") or meta(cell).get("solution")):
                forged += 1
            cell = nbformat.from_dict({k: v for k, v in dict(cell).items() if k != "metadata"})
            cell.metadata = {}
        else:
            seen.add(gid)
            if is_test(original) or is_locked(original):
                cell = original  # hidden tests restored, edits undone
            else:
                if is_solution(original) and cell.get("cell_type") != "code":
                    notes.append(f"solution cell {gid!r} was turned into {cell.get('cell_type')}; it was not run")
                cell = _with_meta(cell, original)
        cells.append(nbformat.from_dict(dict(cell)))
    if forged:
        notes.append(
            f"{forged} cell(s) carry grading metadata the assignment does not have; they ran as the student's code"
        )
    # read-only cells the student deleted: back where the solution has them (after the cell before them)
    order = [_grade_id(c) for c in solution.cells]
    for i, original in enumerate(solution.cells):
        gid = order[i]
        if gid is None or gid in seen or not is_locked(original):
            continue
        before = [g for g in order[:i] if g is not None and g in seen]
        at = 0
        if before:
            at = max(j for j, c in enumerate(cells) if _grade_id(c) == before[-1]) + 1
        cells.insert(at, nbformat.from_dict(dict(original)))
        seen.add(gid)
        if original.get("cell_type") == "code":
            notes.append(f"read-only cell {gid!r} was deleted; it was restored from the assignment")
    missing = [gid for gid, c in by_id.items() if is_test(c) and gid not in seen]
    for gid, c in by_id.items():
        if gid not in seen and is_solution(c):
            notes.append(f"solution cell {gid!r} was deleted")
    for cell in cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return cells, missing


def _with_meta(cell, original):
    """The student's ``cell`` (its source and type) with the solution cell's metadata."""
    out = nbformat.from_dict(dict(cell))
    out.metadata = nbformat.from_dict(dict(original.get("metadata", {})))
    return out


class _Runner:
    """The student's process, restarted (and its cells run again) after a timeout or its end."""

    def __init__(
        self, fence: Fence, cells: list[tuple[str, str]], timeout: float, cap_deadline: float, notes: list[str]
    ):
        self.fence, self.cells, self.timeout, self.cap_deadline, self.notes = fence, cells, timeout, cap_deadline, notes
        self.skipped: set[int] = set()
        self.broken: dict[str, str] = {}  # function name -> why later calls fail at once
        self.errors: dict[str, str] = {}  # cell name -> what went wrong
        self.first_run = True
        self.hidden: tuple[str, set] | None = None  # the test cell running now and its hidden lines
        self.mark = None  # where the output stood at the first call from a hidden test (Fence.mark)

    def deadline(self) -> float:
        return min(time.monotonic() + self.timeout, self.cap_deadline)

    def out_of_time(self) -> bool:
        return time.monotonic() >= self.cap_deadline

    def ensure(self) -> None:
        """Start the process and run the student's cells, skipping those that stalled or ended it."""
        if self.fence.alive:
            return
        if self.out_of_time():
            raise _CapReached()
        for attempt in range(len(self.cells) + 1):
            try:  # starting Python and numpy is not the student's time: a minute at least, within the cap
                self.fence.start(min(time.monotonic() + max(self.timeout, START_TIMEOUT), self.cap_deadline))
            except (StudentTimeout, StudentDied) as exc:
                if self.out_of_time():
                    raise _CapReached() from None
                raise _Broken("the student's process", f"did not start ({exc or 'too slow'})", first=True) from None
            restart = False
            for i, (name, source) in enumerate(self.cells):
                if i in self.skipped:
                    continue
                try:
                    self.fence.run_cell(source, name, self.deadline())
                except StudentError as exc:
                    if self.first_run:
                        self.errors[name] = f"raised {_short(str(exc))}"
                except (StudentTimeout, StudentDied) as exc:
                    if self.out_of_time():
                        raise _CapReached() from None
                    why = (
                        f"ran past the time limit ({self.timeout:g} s)"
                        if isinstance(exc, StudentTimeout)
                        else f"ended the student's process ({exc})"
                    )
                    self.errors[name] = why + "; it was skipped"
                    self.skipped.add(i)
                    restart = True
                    break
            if not restart:
                self.first_run = False
                return
        raise _CapReached()

    def call(self, name: str, args, kwargs, overrides, on_callback, hidden: bool = False):
        if name in self.broken:
            raise _Broken(name, self.broken[name])
        self.ensure()
        if hidden and self.mark is None:  # from here on, what the process prints or keeps may hold hidden inputs
            self.mark = self.fence.mark()
        try:
            return self.fence.call(name, args, kwargs, self.deadline(), overrides, on_callback)
        except StudentTimeout:
            if self.out_of_time():
                raise _CapReached() from None
            self.broken[name] = f"ran past the time limit ({self.timeout:g} s)"
            raise _Broken(name, self.broken[name], first=True) from None
        except StudentDied as exc:
            # the exit status and the signal are the student's to choose: on hidden inputs they could carry them
            why = "in a hidden test" if hidden else f"({exc})"
            self.broken[name] = f"ended the student's process {why}"
            raise _Broken(name, self.broken[name], first=True) from None


class _CapReached(Exception):
    """The submission's total time cap is used up."""


class _Broken(Exception):
    """A call to a student's function that timed out or ended the process (now or earlier)."""

    def __init__(self, name: str, why: str, first: bool = False):
        super().__init__(f"{name} {why}" + ("" if first else " (on an earlier call)"))
        self.status = "timed out" if "time limit" in why else "process ended"


class _StudentRaised(Exception):
    """The student's function raised: its message, prefixed with the function's name."""


class _Proxy:
    """Stands for a function of the student's in the grader: calls it in the student's process."""

    def __init__(self, name: str, runner: _Runner, namespace: dict, proxies: dict):
        self.__name__ = self._name = name
        self._runner, self._namespace, self._proxies = runner, namespace, proxies

    def __call__(self, *args, **kwargs):
        overrides = [n for n, p in self._proxies.items() if n != self._name and self._namespace.get(n) is not p]

        def on_callback(name, cargs, ckwargs):
            if name not in overrides:
                raise NameError(name)
            return self._namespace[name](*cargs, **ckwargs)

        try:
            return self._runner.call(self._name, args, kwargs, overrides, on_callback, self._from_hidden())
        except StudentError as exc:
            message = f"your {self._name} raised {exc}"
            if "is not defined" in str(exc) and self._runner.errors:  # say why: the cell that defines it failed
                cell, why = next(iter(self._runner.errors.items()))
                message = f"your {self._name} is not defined: cell {cell!r} {why}"
            raise _StudentRaised(message) from None

    def _from_hidden(self) -> bool:
        """Whether this call comes from a hidden line of the test cell running now (through any helper).

        Every frame of the cell on the way counts, not only the innermost: a helper the cell
        defines on a visible line and calls from a hidden one has the cell's name too.
        """
        import sys

        if self._runner.hidden is None:
            return False
        name, lines = self._runner.hidden
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == name and frame.f_lineno in lines:
                return True
            frame = frame.f_back
        return False

    def __repr__(self) -> str:
        return f"<the student's {self._name}>"


def _hidden_lines(source: str) -> set[int]:
    """Line numbers (1-based) inside the ``### BEGIN HIDDEN TESTS`` … ``### END HIDDEN TESTS`` regions."""
    lines, hiding = set(), False
    for number, line in enumerate(source.splitlines(), 1):
        if "### BEGIN HIDDEN TESTS" in line:
            hiding = True
        elif "### END HIDDEN TESTS" in line:
            hiding = False
        elif hiding:
            lines.add(number)
    return lines


def _failed_at(exc: BaseException, name: str, hidden: set | frozenset = frozenset()) -> int | None:
    """The line of the test cell ``name`` where ``exc`` was raised: the outermost frame of that cell on a
    ``hidden`` line if there is one (a helper the cell defines, called from a hidden line), else the innermost."""
    line, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == name:
            if tb.tb_lineno in hidden:
                return tb.tb_lineno
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _hint(source: str, line: int) -> str:
    """The teacher's own message of an ``assert x, "message"`` (a plain string) at ``line``, else ''."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if isinstance(node.msg, ast.Constant) and isinstance(node.msg.value, str):
                return node.msg.value
    return ""


def _points_of(cell) -> float | None:
    try:
        value = float(meta(cell).get("points", 0) or 0)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _run_teacher_cell(source: str, name: str, namespace: dict):
    """Run a cell of the solution notebook in the grader; the value of its last line (or None)."""
    tree = ast.parse(source, filename=name)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, name, "exec"), namespace)
    return eval(compile(last, name, "eval"), namespace) if last is not None else None


def _score(value, max_points: float) -> tuple[float, str]:
    """Points of a test cell that finished: its last value when it is a number (clamped), else all."""
    import numbers

    import numpy as np

    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.reshape(()).item()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return max_points, ""
    value = float(value)
    if not math.isfinite(value):
        return 0.0, f"the test cell's value {value} is not a number of points"
    if value > max_points:
        return max_points, f"the test cell's value {value:g} is above its {max_points:g} points; clamped"
    if value < 0:
        return 0.0, f"the test cell's value {value:g} is negative; clamped to 0"
    return value, ""


def _grade_test(cell, namespace: dict, runner: _Runner) -> TestResult:
    """Grade one test cell; what its hidden lines show the student's code stays out of the student's sight.

    A call from a hidden line sees the hidden inputs: the student's code could print them, put
    them in an error message or keep them for a later call.  So the message of a failure on a
    hidden line says only "failed a hidden test" (and the teacher's own ``assert`` message), and
    after the cell the student's process is stopped and what it printed since its first hidden
    call is dropped: the next call starts a fresh process, which knows nothing of them.
    """
    gid = meta(cell).get("grade_id", "?")
    hidden = _hidden_lines(cell.source)
    runner.hidden, runner.mark = (gid, hidden), None
    try:
        result = _grade_test_cell(cell, namespace, runner, gid)
    finally:
        runner.hidden = None
        if runner.mark is not None:
            runner.fence.forget_since(runner.mark)
            runner.mark = None
    return result


def _grade_test_cell(cell, namespace: dict, runner: _Runner, gid: str) -> TestResult:
    hidden = runner.hidden[1] if runner.hidden else set()

    def failed(status: str, message: str, exc: BaseException) -> TestResult:
        line = _failed_at(exc, gid, hidden)
        if line is not None and line in hidden:
            hint = _hint(cell.source, line)
            message = "failed a hidden test" + (f": {hint}" if hint else "")
        return TestResult(gid, 0.0, max_points, status, _short(message))

    max_points = _points_of(cell)
    if max_points is None:
        return TestResult(
            gid, 0.0, 0.0, "malformed", _short(f"its points {meta(cell).get('points')!r} are not a number")
        )
    try:
        ast.parse(cell.source)
    except SyntaxError as exc:
        return TestResult(
            gid, 0.0, max_points, "malformed", _short(f"the test cell does not parse ({exc.msg}, line {exc.lineno})")
        )
    if runner.out_of_time():
        return TestResult(gid, 0.0, max_points, "not run", "the submission's time cap was used up")
    sink = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            warnings.simplefilter("ignore")
            value = _run_teacher_cell(cell.source, gid, namespace)
    except _CapReached:
        return TestResult(gid, 0.0, max_points, "not run", "the submission's time cap was used up")
    except _Broken as exc:
        return failed(exc.status, str(exc), exc)
    except _StudentRaised as exc:
        return failed("failed", str(exc), exc)
    except Exception as exc:  # an assertion, or the teacher's code on a wrong answer
        return failed("failed", _first_line(exc), exc)
    points, why = _score(value, max_points)
    status = "passed" if points == max_points else ("partial" if points > 0 else "failed")
    return TestResult(gid, points, max_points, status, why)


def _pristine(source: Path, workdir: Path) -> Path:
    """Check ``source`` against its ``SHA256SUMS`` and copy it read-only into ``workdir``."""
    check_sums(source)
    folder = workdir / "solution"
    folder.mkdir()
    copy = folder / source.name
    shutil.copyfile(source, copy)
    if sha256(copy) != check_sums(source):
        raise VrlibError(f"{source} changed while it was copied; grade again")
    copy.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    return copy


def grade(
    submission,
    source=None,
    source_dir=None,
    timeout: float = 120,
    time_cap: float = 600,
    memory_cap="4G",
    output_cap: int = 100_000,
    feedback=None,
    hidden=(),
    sandbox: bool = True,
) -> GradeReport:
    """Grade one submission (see the module's description).

    Parameters
    ----------
    submission : path
        The student's notebook (a released notebook, filled in).
    source : path, optional
        Its solution notebook (listed in the ``SHA256SUMS`` beside it); default the one of
        the same file name in ``source_dir`` (or, failing that, the one sharing its cells).
    source_dir : path, optional
        Default ``notebooks/assignments`` of the project.
    timeout : float
        Seconds one cell, or one call of a student's function, may run.
    time_cap : float
        Seconds the whole submission may use (its cells, restarts and calls).
    memory_cap : int or str
        Address space of the student's process (``"4G"``, ``"512M"``, bytes).
    output_cap : int
        Bytes of the student's printed output kept.
    feedback : path, optional
        Where to write the graded notebook, each test cell followed by its result.
    hidden : list of path
        Without the sandbox: more folders the student's code may not open (the other
        submissions, the gradebook).  A sandbox holds none of them anyway.
    sandbox : bool
        Run the student's code in a bubblewrap box (default).  False only for code you
        trust: without it the student's process runs as your user.

    Returns
    -------
    GradeReport
        A submission whose grading ran :data:`OVERRUN` seconds past ``time_cap`` is stopped
        (:func:`_grade_capped`): all its tests score 0 ("not graded"), and a note says why.
    """
    for name, value in (("timeout", timeout), ("time_cap", time_cap)):
        check_number(name, value, above=0, allow_inf=True, want="a positive number of seconds")
    memory_cap = parse_size(memory_cap)
    start = time.monotonic()
    submission = Path(submission)
    submitted = read_submission(submission)
    source = Path(source) if source is not None else find_source(submission, source_dir)
    limits = (timeout, time_cap, memory_cap, output_cap)
    return _grade_capped(
        submission,
        source,
        time_cap,
        sandbox,
        lambda: _grade(submission, submitted, source, limits, feedback, hidden, sandbox, start),
    )


OVERRUN = 60  # seconds a submission's grading may run past its time cap before it is stopped


def _grade_capped(submission: Path, source: Path, time_cap: float, sandbox: bool, grade_it) -> GradeReport:
    """``grade_it()``, in a child process stopped at ``time_cap`` plus :data:`OVERRUN` seconds.

    The time cap bounds the student's process, not the test cells, which run in the grader on the
    values the student's code returned: a value built to be slow to check (integers sharing pandas'
    hash, for a test that counts them) held the grading process for hours, and a class's gradebook
    with it.  Killed, the child takes its box with it (``--die-with-parent``) and its callbacks (its
    process group); its temporary files are in a folder this process removes.  A :class:`VrlibError`
    in the child is raised here; any other error becomes a "not graded" report.
    """
    if not math.isfinite(float(time_cap)) or not hasattr(os, "fork"):
        return grade_it()
    if sandbox:  # the box's copy of vrlib, made here once (a class: once, not once per child)
        try:
            vrlib_meta = read(source).metadata.get("vrlib", {})
            _library(vrlib_meta.get("withheld", []) if isinstance(vrlib_meta, dict) else [])
        except Exception:  # noqa: BLE001 (the child says what is wrong)
            pass
    scratch = Path(tempfile.mkdtemp(prefix="vrlib-grading-"))
    read_fd, write_fd = os.pipe()
    began = time.monotonic()
    deadline = began + time_cap + OVERRUN
    pid = os.fork()
    if pid == 0:  # the child: grade, send the report, end without the parent's exit handlers
        code = 0
        try:
            os.close(read_fd)
            os.setpgid(0, 0)  # its callbacks' processes in its group: killed with it
            tempfile.tempdir = str(scratch)
            try:
                report = grade_it()
                message = {"report": asdict(report)}  # whole: the printed output and long notes too
            except VrlibError as exc:
                message = {"vrlib": str(exc), "kind": type(exc).__name__}
            except Exception as exc:  # noqa: BLE001
                message = {"error": f"{type(exc).__name__}: {exc}"}
            write_all(write_fd, json.dumps(message).encode("utf-8", "backslashreplace"))
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            os._exit(code)
    os.close(write_fd)
    chunks, status = [], None
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read_fd], [], [], left)[0]:
                break
            chunk = os.read(read_fd, 2**16)
            if not chunk:
                status = "ended"
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        _, code = os.waitpid(pid, 0)
        for folder in scratch.rglob("*"):  # the grader's copy of the solution is read-only
            if folder.is_dir() and not folder.is_symlink():
                folder.chmod(stat.S_IRWXU)
        shutil.rmtree(scratch, ignore_errors=True)
    if status is None:
        report = not_graded(
            submission,
            source,
            f"its grading was stopped: it ran past the time cap ({time_cap:g} s) by more than {OVERRUN} s, in the "
            "test cells, which run in the grader on what its code returned (the time cap bounds its code only)",
        )
        report.seconds = time.monotonic() - began
        return report
    try:
        message = json.loads(b"".join(chunks).decode("utf-8"))
    except ValueError:
        return not_graded(submission, source, f"its grading process died ({_status(code)})")
    if "report" in message:
        data = message["report"]
        return GradeReport(**{**data, "tests": [TestResult(**t) for t in data["tests"]]})
    if "vrlib" in message:
        if message.get("kind") == "SandboxUnavailable":
            from vrlib.classroom.sandbox import SandboxUnavailable

            raise SandboxUnavailable(message["vrlib"])
        raise VrlibError(message["vrlib"])
    return not_graded(submission, source, f"the grader failed on it ({message.get('error', 'unknown')})")


def _status(code: int) -> str:
    if os.WIFSIGNALED(code):
        return f"killed by signal {os.WTERMSIG(code)}"
    return f"exit status {os.WEXITSTATUS(code)}"


def not_graded(submission, source, why: str) -> GradeReport:
    """The report of a submission that was not graded: each of the assignment's tests at 0, a note saying why."""
    tests = _max_points(Path(source))
    for t in tests:
        t.message = clean_text(why)[:MESSAGE_CAP]
    return GradeReport(str(submission), str(source), tests, notes=[f"not graded: {why}"])


def _max_points(source: Path) -> list[TestResult]:
    """The assignment's tests, each at 0 of its points: the report of a submission that was not graded."""
    try:
        nb = read(source)
    except VrlibError:
        return []
    tests = []
    for cell in nb.cells:
        if is_test(cell):
            try:
                points = float(meta(cell).get("points", 0) or 0)
            except (TypeError, ValueError):
                points = 0.0
            tests.append(TestResult(str(meta(cell).get("grade_id") or "?"), 0.0, points, "not graded", ""))
    return tests


def _grade(submission: Path, submitted, source: Path, limits, feedback, hidden, sandbox: bool, start: float):
    """:func:`grade`'s work, on the submission as read (``submitted``: the notebook and its bytes)."""
    timeout, time_cap, memory_cap, output_cap = limits
    submitted, submitted_bytes = submitted
    report = GradeReport(str(submission), str(source))
    with tempfile.TemporaryDirectory(prefix="vrlib-grade-") as tmp:
        work = Path(tmp)
        try:
            solution = read(_pristine(source, work))
            # the box gets the bytes that were checked and parsed, not the path again (which could change)
            checked = work / "submission.ipynb"
            checked.write_bytes(submitted_bytes)
            if sandbox:
                from vrlib.classroom.sandbox import require_bwrap

                require_bwrap()  # bad input reported first; then a clear stop, naming the package
            cells, missing = _restore(submitted, solution, report.notes)
            last_test = max((i for i, c in enumerate(cells) if is_test(c)), default=-1)
            student = [
                (_grade_id(c) or f"cell {i + 1}", c.source)
                for i, c in enumerate(cells[:last_test])
                if c.cell_type == "code" and not is_test(c)
            ]
            scratch = work / "scratch"
            folders = [source.parent.resolve(), (work / "solution").resolve()] + [Path(h).resolve() for h in hidden]
            folders = [f for f in folders if not str(scratch.resolve()).startswith(str(f) + "/")]
            withheld = (
                solution.metadata.get("vrlib", {}).get("withheld", [])
                if isinstance(solution.metadata.get("vrlib"), dict)
                else []
            )
            fence = Fence(
                scratch,
                folders,
                memory_cap,
                output_cap,
                withheld,
                sandbox=sandbox,
                library=_library(withheld) if sandbox else None,
                submission=checked if sandbox else None,
                cpu_cap=time_cap + max(timeout, START_TIMEOUT) if math.isfinite(time_cap) else None,
            )
            runner = _Runner(fence, student, timeout, start + time_cap, report.notes)
            namespace: dict = {"__name__": "__main__"}
            proxies: dict = {}
            for name in solution_names(solution):
                proxies[name] = _Proxy(name, runner, namespace, proxies)
            results = {}
            try:
                for i, cell in enumerate(cells[: last_test + 1]):
                    if cell.cell_type != "code":
                        continue
                    if is_test(cell):
                        namespace.update(proxies)  # the student's functions, never the test's rebindings
                        results[_grade_id(cell) or f"cell {i + 1}"] = _grade_test(cell, namespace, runner)
                    elif is_locked(cell):
                        try:
                            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                                warnings.simplefilter("ignore")
                                _run_teacher_cell(cell.source, meta(cell).get("grade_id", ""), namespace)
                        except Exception as exc:
                            report.notes.append(
                                f"the assignment's cell {meta(cell).get('grade_id')!r} raised {_first_line(exc)}"
                            )
                try:
                    if not runner.fence.alive and not results and student:
                        runner.ensure()  # nothing called the student: still say what the cells did
                except _CapReached:
                    pass
            finally:
                fence.close()  # the box is gone before anything is read or written
                report.output = fence.output()
            for name, why in runner.errors.items():
                report.notes.append(f"cell {name!r} {why}")
            if runner.out_of_time():
                report.notes.append(f"the submission used up its time cap ({time_cap:g} s)")
            for cell in solution.cells:
                if not is_test(cell):
                    continue
                gid = _grade_id(cell) or "?"
                if gid in missing:
                    points = _points_of(cell) or 0.0
                    report.tests.append(
                        TestResult(gid, 0.0, points, "deleted", "the test cell was removed from the notebook")
                    )
                else:
                    report.tests.append(
                        results.get(gid) or TestResult(gid, 0.0, _points_of(cell) or 0.0, "not run", "")
                    )
            if feedback is not None:
                _write_feedback(cells, results, report, feedback)
        finally:
            for folder in (work / "solution",):
                if folder.exists():
                    folder.chmod(stat.S_IRWXU)
    report.seconds = time.monotonic() - start
    return report


_LIBRARIES: dict = {}


def _library(withheld) -> Path:
    """The box's copy of vrlib with ``withheld`` stubbed, made once per grading process."""
    import atexit
    from multiprocessing import util

    from vrlib.classroom.sandbox import prepare_library

    key = tuple(sorted(withheld))
    if key not in _LIBRARIES:
        folder = Path(tempfile.mkdtemp(prefix="vrlib-box-lib-"))
        atexit.register(shutil.rmtree, folder, True)
        util.Finalize(None, shutil.rmtree, args=(folder, True), exitpriority=0)  # a pool's process skips atexit
        _LIBRARIES[key] = prepare_library(folder, key)
    return _LIBRARIES[key]


def _without_hidden_tests(source: str) -> str:
    """``source`` without its ``### BEGIN HIDDEN TESTS`` … ``### END HIDDEN TESTS`` regions."""
    kept, hiding = [], False
    for line in source.splitlines():
        if "### BEGIN HIDDEN TESTS" in line:
            hiding = True
        elif "### END HIDDEN TESTS" in line:
            hiding = False
        elif not hiding:
            kept.append(line)
    return "\n".join(kept)


def _write_feedback(cells, results: dict, report: GradeReport, path) -> None:
    """The graded notebook: each test cell (hidden tests left out) followed by its points and message."""
    nb = nbformat.v4.new_notebook()
    for cell in cells:
        cell = nbformat.from_dict(dict(cell))
        result = results.get(meta(cell).get("grade_id"))
        if is_test(cell):  # students see the tests as they were released: hidden tests stay hidden
            cell.source = _without_hidden_tests(cell.source)
        if result is not None and is_test(cell):
            text = f"{_num(result.points)} / {_num(result.max_points)} points: {result.status}"
            text += f" ({result.message})\n" if result.message else "\n"
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        nb.cells.append(cell)
    summary = [f"**Total: {_num(report.points)} / {_num(report.max_points)}**"] + [f"* {n}" for n in report.notes]
    nb.cells.append(nbformat.v4.new_markdown_cell("\n".join(summary)))
    if report.output:
        nb.cells.append(
            nbformat.v4.new_markdown_cell(
                "What your code printed while it was graded:\n\n```\n"
                + clean_text(report.output, keep_lines=True).replace("```", "'''")
                + "\n```"
            )
        )
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
