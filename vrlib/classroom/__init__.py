"""Classroom assignments: student versions generated from solution notebooks, sandboxed autograding.

* :mod:`vrlib.classroom.notebooks`: the notebooks, their nbgrader metadata, the student
  release (byte-identical to nbgrader's ``generate_assignment``) and ``SHA256SUMS``;
* :mod:`vrlib.classroom.sandbox`: the bubblewrap box each submission runs in (namespaces,
  a read-only system, a private scratch folder, an allow-listed environment);
* :mod:`vrlib.classroom.fence`: the student's process in its box (time, output, memory,
  CPU, file and process limits) and the channel to it;
* :mod:`vrlib.classroom.wire`: the typed, bounded format of the student's replies;
* :mod:`vrlib.classroom.grader`: one submission, cell roles from the solution, hidden tests
  in the grader's process;
* :mod:`vrlib.classroom.batch`: a class, in parallel and resumably, into a gradebook.
"""

import importlib

_WHERE = {
    "discover": "batch",
    "grade_class": "batch",
    "GradeReport": "grader",
    "TestResult": "grader",
    "find_source": "grader",
    "grade": "grader",
    "ASSIGNMENTS_DIR": "notebooks",
    "assignments": "notebooks",
    "check_sums": "notebooks",
    "generate": "notebooks",
    "release": "notebooks",
    "write_sums": "notebooks",
}


def __getattr__(name):
    # Imported on first use: the student's process imports vrlib.classroom.fence alone, and quickly.
    if name in _WHERE:
        return getattr(importlib.import_module(f"vrlib.classroom.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'vrlib.classroom' has no attribute {name!r}")


__all__ = [
    "generate",
    "release",
    "grade",
    "grade_class",
    "discover",
    "GradeReport",
    "TestResult",
    "find_source",
    "assignments",
    "check_sums",
    "write_sums",
    "ASSIGNMENTS_DIR",
]
