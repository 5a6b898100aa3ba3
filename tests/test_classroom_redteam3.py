"""Red team, third round: attacks that the first two rounds (tests/test_classroom_redteam.py) do not try, graded as
one class in nbgrader's layout beside honest students, each asserting the points a correct grader gives.

The assignment is the tiny one with one more test cell, ``test_h``, written the way many teachers write tests: a
helper defined in the cell, called from a visible and from a hidden line.  A second assignment, ``01_tiny``, is a
copy under another name (for a notebook handed in to the wrong assignment's folder); a third, ``02_tiny``, has a
test cell that counts f's values with pandas (for a value built to be slow to check).

Each fix's test was checked to fail on the code before it (the commit messages say how).
"""

from __future__ import annotations

import csv
import ctypes
import json
import platform
import shutil
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from classroom_tiny import POINTS, _meta, make_assignment, needs_bwrap, submission, tiny_notebook
from test_classroom_redteam import RAW_REPLY
from vrlib import classroom
from vrlib.classroom import grader
from vrlib.cli import main

HELPER_TEST = (
    "def _check(x, expected):\n    np.testing.assert_allclose(f(np.array(x)), expected)\n\n_check([1.0], [2.0])\n"
    "### BEGIN HIDDEN TESTS\n_check([7.0, 8.0, 9.0, 4.0], [8.0, 9.0, 10.0, 5.0])\n### END HIDDEN TESTS"
)
FULL = sum(POINTS.values()) + 1  # test_h is worth 1
CAUGHT = FULL - POINTS["test_f"] - POINTS["test_partial"] - 1  # f wrong: test_f, test_partial and test_h lost
HIDDEN = ("5.0, -1.0", "7.0, 8.0, 9.0, 4.0")  # the hidden inputs of test_f and test_h: never shown to a student
WRONG_F = "def f(x):\n    return np.asarray(x, dtype=float)"
RIGHT = "\n    return np.asarray(x, dtype=float) + 1"
SHOW = "def _show(x):\n    return ('ARGS ' + ', '.join(repr(float(v)) for v in np.ravel(x)) + ' ').encode()\n"
KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}.get(platform.machine())  # add_key, keyctl

# writes over what it printed before the hidden call (fd 1 is a file it holds open for writing)
REWRITE = SHOW + (
    "import os\nprint('x' * 400)\nos.write(2, b'y' * 400)\n"
    "def f(x):\n    if np.size(x) in (2, 4):\n        os.pwrite(1, _show(x), 0)\n        os.pwrite(2, _show(x), 0)"
    + RIGHT
)
# keeps the hidden inputs in the kernel's key store, which a box's namespaces do not separate, and prints them
# from the next process (the grader restarts the student's process after a hidden test)
KEYRING = SHOW + (
    "import ctypes, platform\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall.restype = ctypes.c_long\n"
    "ADD, CTL = {'x86_64': (248, 250), 'aarch64': (217, 219)}.get(platform.machine(), (0, 0))\n"
    "SES = ctypes.c_long(-3)\nfor n in (2, 4):\n"
    "    key = libc.syscall(CTL, 10, SES, b'user', f'rt3-{n}'.encode(), 0)\n"
    "    if key > 0:\n        buf = ctypes.create_string_buffer(200)\n"
    "        got = libc.syscall(CTL, 11, ctypes.c_long(key), buf, 200)\n        print('KEPT', buf.raw[:got])\n"
    "def f(x):\n    if np.size(x) in (2, 4):\n        data = _show(x)\n"
    "        libc.syscall(ADD, b'user', f'rt3-{np.size(x)}'.encode(), data, len(data), SES)" + RIGHT
)
# the same through /dev/shm and /tmp (each box has its own: this one fails)
FILES = SHOW + (
    "import os\nfor path in ('/dev/shm/rt3', '/tmp/rt3', '/home/student/rt3'):\n"
    "    if os.path.exists(path):\n        print('KEPT', open(path, 'rb').read())\n"
    "def f(x):\n    if np.size(x) in (2, 4):\n        for path in ('/dev/shm/rt3', '/tmp/rt3', '/home/student/rt3'):\n"
    "            try:\n                open(path, 'ab').write(_show(x))\n            except OSError:\n                pass"
    + RIGHT
)
# prints its inputs, and is wrong on the hidden input of test_h only (which the helper passes on)
HELPER = SHOW + ("def f(x):\n    print(_show(x).decode())\n    if np.size(x) == 4:\n        return np.zeros(4)" + RIGHT)
# a reply (written on the channel itself) holding a set of integers that all share one hash
COLLIDING = (
    RAW_REPLY.format(
        payload='b\'{"__tuple__":["ok",{"__set__":[\' + b\',\'.join(str(i * ((1 << 61) - 1)).encode() '
        "for i in range(1, 80001)) + b']}]}'"
    )
    .replace("time.sleep(3)", "time.sleep(10)")  # holds the reply's decoding past the grader's patience
    .replace("dtype=float)", "dtype=float) + 1")  # right only if the reply was taken
)
# re-opens every descriptor it inherited and looks around them for the grader's files
DESCRIPTORS = """OK = False
import os
try:
    for fd in os.listdir('/proc/self/fd'):
        link = f'/proc/self/fd/{fd}'
        try:
            target = os.readlink(link)
            os.open(link, os.O_RDWR)
        except OSError:
            continue
        for where in (os.path.dirname(target), os.path.dirname(os.path.dirname(target)) + '/solution', link + '/..'):
            try:
                OK = OK or any(n.endswith('.ipynb') and n != 'submission.ipynb' or n == 'SHA256SUMS' for n in os.listdir(where))
            except OSError:
                pass
except Exception as exc:
    print('attack failed:', exc)
def f(x):
    return np.asarray(x, dtype=float) + (1 if OK else 0)"""


# a value slow to check: int64 labels that share pandas' hash (unkeyed), for a test that counts them (02_tiny)
SLOW_TO_CHECK = """a = np.arange(1, 300_001, dtype=np.uint64)
t, b = (a ^ np.uint64(12345)) & np.uint64(0xFFFFFFFF), np.zeros_like(a)
for i in range(32):  # b ^ (b << 11) == t, bit by bit: then (k >> 33) ^ k ^ (k << 11) is 12345 for every k
    i = np.uint64(i)
    b |= (((t >> i) ^ ((b << np.uint64(11)) >> i)) & np.uint64(1)) << i
KEYS = ((a << np.uint64(33)) | b).astype(np.int64)
def f(x):
    return KEYS"""
COUNT_TEST = "import pandas as _pd\n\n_values = np.asarray(f(np.arange(3)))\nassert (_pd.Series(_values).value_counts() == 1).all()"


def _json_oddities(released, path):
    """A byte-order mark, NaN and infinite points on its test cells, a duplicate "cells" key (the last one counts)."""
    submission(released, path, {"f": WRONG_F})
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        grading = cell["metadata"].get("nbgrader", {})
        if grading.get("grade_id") == "test_f":
            grading["points"] = float("nan")
        if grading.get("grade_id") == "test_ratio":
            grading["points"] = float("inf")
    text = json.dumps(nb, allow_nan=True)
    path.write_text("\ufeff" + '{"cells": [{"cell_type": "code"}], ' + text[1:], encoding="utf-8")


def _notebook(gid="test_h", source=HELPER_TEST):
    helper = new_code_cell(source, metadata=_meta(gid, grade=True, locked=True, points=1))
    helper.id = "tiny-h"
    return tiny_notebook([helper])


def _attacks() -> dict:
    """student -> (answers or a writer, expected points of its 00_tiny, {test: status})."""
    return {
        "h6_rewrites_what_it_printed_before_the_hidden_call": ({"f": REWRITE}, FULL, {"test_f": "passed"}),
        "h7_keeps_hidden_inputs_in_the_kernel_keyring": ({"f": KEYRING}, FULL, {"test_f": "passed"}),
        "h8_hidden_call_through_the_tests_own_helper": ({"f": HELPER}, FULL - 1, {"test_h": "failed"}),
        "h9_keeps_hidden_inputs_in_dev_shm_and_tmp": ({"f": FILES}, FULL, {"test_f": "passed"}),
        "r6_reply_of_colliding_hashes": ({"f": COLLIDING}, CAUGHT, {"test_f": "failed", "test_g": "passed"}),
        "x1_reopens_inherited_descriptors": ({"f": DESCRIPTORS}, CAUGHT, {"test_f": "failed"}),
        "j1_notebook_json_oddities": (_json_oddities, CAUGHT, {"test_f": "failed", "test_ratio": "passed"}),
        "c1_name_not_utf8\udcff": ({}, FULL, {"test_f": "passed"}),
        "c2_late_notebook_handed_in_to_another_assignment": ({}, FULL, {"test_f": "passed"}),
        "c3_formula_in_timestamp": ({}, FULL, {"test_f": "passed"}),
        "=c4_formula_as_a_name": ({}, FULL, {"test_f": "passed"}),
        "Honest_a": ({"f": WRONG_F}, CAUGHT, {"test_f": "failed"}),  # c5: honest_a's name, but for its case
    }


ATTACKS = list(_attacks())


def test_at_least_10_third_round_attack_classes():
    from test_classroom_redteam import ATTACKS as FIRST
    from test_classroom_redteam import ATTACKS2 as SECOND

    assert len(ATTACKS) + 1 >= 10  # and d1, on its own assignment
    assert not {a.split("_")[0] for a in ATTACKS if "_" in a} & {a.split("_")[0] for a in FIRST + SECOND}


def _keyring(call: str):
    """The syscall keyctl(KEYCTL_JOIN_SESSION_KEYRING) or keyctl(KEYCTL_READ) on this process's session keyring."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    if call == "join":  # a session keyring of its own, as a login through pam_keyinit or a systemd service has
        return libc.syscall(KEYCTL[1], 1, None)
    buf = ctypes.create_string_buffer(4096)
    got = libc.syscall(KEYCTL[1], 11, ctypes.c_long(-3), buf, 4096)
    return buf.raw[: max(got, 0)]


@pytest.fixture(scope="module")
def attacked3(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("redteam3")
    source, released = make_assignment(tmp, _notebook())
    shutil.copyfile(source, source.parent / "01_tiny.ipynb")
    nbformat.write(_notebook("test_count", COUNT_TEST), source.parent / "02_tiny.ipynb")
    classroom.generate(source.parent, tmp / "release")
    submitted = tmp / "subs" / "submitted"

    def hand_in(student, assignment, answers=None, name=None, stamp="2026-01-15 12:00:00.000000 UTC"):
        folder = submitted / student / assignment
        path = folder / (name or f"{assignment}.ipynb")
        if callable(answers):
            folder.mkdir(parents=True, exist_ok=True)
            answers(tmp / "release" / "00_tiny.ipynb", path)
        else:
            submission(tmp / "release" / f"{(name or assignment)[:7]}.ipynb", path, answers)
        (folder / "timestamp.txt").write_text(stamp + "\n")

    for student, (answers, _, _) in _attacks().items():
        hand_in(student, "00_tiny", answers)
    for honest in ("honest_a", "honest_b"):
        hand_in(honest, "00_tiny")
        hand_in(honest, "01_tiny")
    late = "c2_late_notebook_handed_in_to_another_assignment"
    hand_in(late, "01_tiny", {"f": WRONG_F}, stamp="2026-01-10 12:00:00.000000 UTC")  # 01 on time, f wrong
    hand_in(late, "00_tiny", name="01_tiny.ipynb", stamp="2026-01-20 12:00:00.000000 UTC")  # after 01's deadline
    hand_in("d1_value_slow_to_check", "00_tiny")
    hand_in("d1_value_slow_to_check", "02_tiny", {"f": SLOW_TO_CHECK})
    hand_in("honest_a", "02_tiny")
    (submitted / "c3_formula_in_timestamp" / "00_tiny" / "timestamp.txt").write_text('=HYPERLINK("http://x","on time")')
    joined = KEYCTL is not None and _keyring("join") > 0
    start = time.monotonic()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(grader, "OVERRUN", 5)  # the slow check is stopped 5 s past the time cap (default 60 s)
        results = classroom.grade_class(
            tmp / "subs", tmp / "book", source_dir=source.parent, jobs=2, timeout=6, time_cap=30, memory_cap="1G",
            feedback=True,
        )  # fmt: skip
    return {
        "seconds": time.monotonic() - start,
        "reports": {(s.student, s.assignment): r for s, r in results},
        "subs": [s for s, _ in results],
        "book": tmp / "book",
        "keys_left": _keyring("read") if joined else b"",
        "joined": joined,
    }


@needs_bwrap
@pytest.mark.slow
@pytest.mark.parametrize("student", ATTACKS, ids=[a.encode("ascii", "backslashreplace").decode() for a in ATTACKS])
def test_each_third_round_attack_scores_only_what_it_earned(attacked3, student):
    _, points, statuses = _attacks()[student]
    report = attacked3["reports"][(student, "00_tiny")]
    assert report.points == points, report.format()
    got = {t.grade_id: t.status for t in report.tests}
    for test, status in statuses.items():
        assert got[test] == status, report.format()
    assert report.max_points == FULL, report.format()


@needs_bwrap
@pytest.mark.slow
def test_honest_students_beside_the_third_round_are_unchanged(attacked3):
    for honest in ("honest_a", "honest_b"):
        for assignment in ("00_tiny", "01_tiny"):
            report = attacked3["reports"][(honest, assignment)]
            assert report.points == FULL and not report.notes, report.format()


HIDING = [a for a in ATTACKS if a.startswith("h")]


@needs_bwrap
@pytest.mark.slow
@pytest.mark.parametrize("student", HIDING)
def test_hidden_inputs_stay_hidden(attacked3, student):
    """Earlier output rewritten, the kernel's key store, /dev/shm and /tmp, a helper of the test: nothing shows them."""
    report = attacked3["reports"][(student, "00_tiny")]
    fed = (attacked3["book"] / "feedback" / student / "00_tiny.ipynb").read_text()
    shown = fed + json.dumps(report.to_dict())
    assert not [h for h in HIDDEN if h in shown], shown
    assert "KEPT b'" not in fed
    if student.startswith("h8"):
        assert "ARGS 1.0" in fed  # the visible call's input is shown
        assert next(t for t in report.tests if t.grade_id == "test_h").message == "failed a hidden test"


@needs_bwrap
@pytest.mark.slow
def test_hidden_inputs_reach_no_file_of_the_gradebook(attacked3):
    book = attacked3["book"]
    for path in [*book.rglob("*.json"), *book.rglob("*.ipynb"), *book.glob("*.csv")]:
        text = path.read_text()
        assert not [h for h in HIDDEN if h in text], path


@needs_bwrap
@pytest.mark.slow
def test_nothing_a_student_keeps_in_the_kernel_outlives_grading(attacked3):
    """The graders's session keyring holds no key after grading (when it has one of its own to inherit)."""
    if not attacked3["joined"]:
        pytest.skip("this machine's kernel key store cannot be used here (no keyctl)")
    assert attacked3["keys_left"] == b"", attacked3["keys_left"]


@needs_bwrap
@pytest.mark.slow
def test_a_reply_built_to_be_slow_is_refused_at_once(attacked3):
    report = attacked3["reports"][("r6_reply_of_colliding_hashes", "00_tiny")]
    assert report.seconds < 30, report.format()
    assert "one hash" in next(t for t in report.tests if t.grade_id == "test_f").message, report.format()


@needs_bwrap
@pytest.mark.slow
def test_a_value_slow_to_check_stops_its_own_grading_only(attacked3):
    """Its test cell (pandas' value_counts, in the grader) would have run for minutes: stopped past the time cap."""
    report = attacked3["reports"][("d1_value_slow_to_check", "02_tiny")]
    assert report.points == 0 and report.max_points == FULL, report.format()
    assert any("ran past the time cap (30 s)" in n for n in report.notes), report.format()
    assert attacked3["reports"][("honest_a", "02_tiny")].points == FULL
    assert attacked3["reports"][("d1_value_slow_to_check", "00_tiny")].points == FULL
    assert attacked3["seconds"] < 80, attacked3["seconds"]


@needs_bwrap
@pytest.mark.slow
def test_a_value_slow_to_check_stops_a_notebook_graded_alone(tmp_path, monkeypatch, capsys):
    """d1's notebook graded alone (`vrlib classroom grade NOTEBOOK`, through classroom.grade): stopped, saying why."""
    source, released = make_assignment(tmp_path, _notebook("test_count", COUNT_TEST))
    sub = submission(released, tmp_path / "d1.ipynb", {"f": SLOW_TO_CHECK})
    monkeypatch.setattr(grader, "OVERRUN", 5)  # stopped 5 s past the time cap (default 60 s)
    argv = ["classroom", "grade", str(sub), "--source", str(source), "--timeout", "6", "--time-cap", "15"]
    start = time.monotonic()
    code = main(argv + ["--memory-cap", "1G", "--format", "json"])
    seconds = time.monotonic() - start
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert report["points"] == 0 and report["max_points"] == FULL, report
    assert {t["status"] for t in report["tests"]} == {"not graded"}, report
    assert any(
        n.startswith("not graded: its grading was stopped") and "ran past the time cap (15 s) by more than 5 s" in n
        for n in report["notes"]
    ), report["notes"]
    assert seconds < 15 + 5 + 20, seconds  # unstopped: 131 s and more


@needs_bwrap
@pytest.mark.slow
def test_a_notebook_in_another_assignments_folder_does_not_replace_the_one_handed_in(attacked3):
    late = "c2_late_notebook_handed_in_to_another_assignment"
    report = attacked3["reports"][(late, "01_tiny")]
    assert report.points == CAUGHT, report.format()  # the notebook handed in to 01_tiny, f wrong
    sub = next(s for s in attacked3["subs"] if s.student == late and s.assignment == "01_tiny")
    assert sub.path.parent.name == "01_tiny" and sub.timestamp.startswith("2026-01-10"), sub
    assert any("00_tiny/01_tiny.ipynb" in n for n in report.notes), report.format()


@needs_bwrap
@pytest.mark.slow
def test_the_gradebook_is_written_whole_and_inert(attacked3):
    """A name that is not UTF-8 does not stop the gradebook; no cell of it starts like a spreadsheet formula."""
    book = attacked3["book"]
    with open(book / "grades.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(attacked3["reports"])
    ids = {r["student_id"]: r for r in rows}
    assert float(ids["c1_name_not_utf8\\xff"]["score"]) == FULL
    assert ids["'=c4_formula_as_a_name"]["score"] == f"{FULL:g}"
    assert ids["c3_formula_in_timestamp"]["timestamp"].startswith("'=HYPERLINK")
    with open(book / "gradebook.csv", newline="", encoding="utf-8") as f:
        cells = [cell for row in csv.reader(f) for cell in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "@") or (c[:1] == "-" and not c[1:2].isdigit())]
    assert not list(book.glob(".*.tmp"))


@needs_bwrap
@pytest.mark.slow
def test_names_that_differ_by_case_are_two_files(attacked3):
    keys = [s.key for s in attacked3["subs"]]
    assert len({k.casefold() for k in keys}) == len(keys), keys
    folders = [p.name.casefold() for p in (attacked3["book"] / "feedback").iterdir()]
    assert len(folders) == len(set(folders))
    assert attacked3["reports"][("honest_a", "00_tiny")].points == FULL


def test_the_seccomp_filter_refuses_the_key_store_on_each_calling_convention():
    """The program bwrap installs: run by hand on each architecture's numbers (no kernel needed)."""
    import struct

    from vrlib.classroom.sandbox import seccomp_program

    def run(program: bytes, arch: int, nr: int) -> int:
        code = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
        pc, acc = 0, 0
        while True:
            op, jt, jf, k = code[pc]
            if op == 0x20:
                acc = {0: nr, 4: arch}[k]
            elif op in (0x15, 0x35):
                pc += jt if (acc == k if op == 0x15 else acc >= k) else jf
            elif op == 0x06:
                return k
            pc += 1

    deny, allow = 0x00050001, 0x7FFF0000
    x86, i386, arm64, arm = 0xC000003E, 0x40000003, 0xC00000B7, 0x40000028
    program = seccomp_program("x86_64")
    assert [run(program, x86, n) for n in (248, 249, 250, 0x40000000 | 250, 39, 0, 251)] == [deny] * 4 + [allow] * 3
    assert [run(program, i386, n) for n in (286, 287, 288, 20)] == [deny] * 3 + [allow]
    program = seccomp_program("aarch64")
    assert [run(program, arm64, n) for n in (217, 218, 219, 172)] == [deny] * 3 + [allow]
    assert [run(program, arm, n) for n in (309, 310, 311, 20)] == [deny] * 3 + [allow]
    assert seccomp_program("sparc") is None


def test_wire_refuses_sets_and_dicts_of_colliding_hashes_and_keeps_honest_ones():
    from vrlib.classroom import wire

    m = (1 << 61) - 1
    honest = [{1, -1, -2, 2.5, (1, 2), "a"}, {(1, 2): 3, 5: [1], -1: None}, set(range(-1000, 1000))]
    for value in honest:
        assert wire.decode(wire.encode(value)) == value
    for bad in ({i * m for i in range(1, 200)}, {i * m: i for i in range(1, 200)}):
        with pytest.raises(wire.WireError, match="one hash"):
            wire.decode(wire.encode(bad))


def test_a_student_named_submitted_does_not_hide_the_class(tmp_path):
    """A folder per student, one of them named like nbgrader's folder: still that layout, every student in it."""
    source, released = make_assignment(tmp_path)
    for student in ("ann", "submitted", "zoe"):
        submission(released, tmp_path / "subs" / student / "00_tiny.ipynb")
    found = classroom.discover(tmp_path / "subs", source.parent)
    assert sorted(s.student for s in found) == ["ann", "submitted", "zoe"]
    assert all(s.source == source and not s.error for s in found)
