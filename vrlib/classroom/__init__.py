"""Classroom assignments: student versions generated from solution notebooks, fenced autograding.

* :mod:`vrlib.classroom.notebooks`: the notebooks, their nbgrader metadata, the student
  release (byte-identical to nbgrader's ``generate_assignment``) and ``SHA256SUMS``;
* :mod:`vrlib.classroom.fence`: the separate process the student's code runs in (time,
  output and memory caps, an audit hook keeping it out of the solutions; not a security
  boundary);
* :mod:`vrlib.classroom.grader`: one submission, hidden tests in the grader's process;
* :mod:`vrlib.classroom.batch`: a class, in parallel and resumably, into a gradebook.
"""

from vrlib.classroom.batch import discover, grade_class
from vrlib.classroom.grader import GradeReport, TestResult, find_source, grade
from vrlib.classroom.notebooks import ASSIGNMENTS_DIR, assignments, check_sums, generate, release, write_sums

__all__ = ["generate", "release", "grade", "grade_class", "discover", "GradeReport", "TestResult", "find_source",
           "assignments", "check_sums", "write_sums", "ASSIGNMENTS_DIR"]  # fmt: skip
