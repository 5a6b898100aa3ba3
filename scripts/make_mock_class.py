#!/usr/bin/env python
"""Build a mock class of about 30 submissions of the four assignments, and (``--check``) grade it.

    .venv/bin/python scripts/make_mock_class.py [--out DIR] [--check] [--jobs 2] [--timeout 20] [--compare]

The submissions sit in nbgrader's layout, ``DIR/submitted/<student>/<assignment>/<notebook>.ipynb``:
the solutions; correct answers written differently (one of them emitting a ``RuntimeWarning``);
the empty release; plausible wrong answers; and hostile ones: code that ends its process, loops,
swallows the interrupt, floods its output, exhausts memory, rebinds vrlib's reference or
``numpy.testing``, calls the reference, installs an IPython input transformer, reads or rewrites
the solution notebook, edits a test to print a huge number of points, deletes a test.  Each
student's expected points are listed below.  With ``--check`` the class is graded with
``vrlib classroom grade`` into ``DIR/gradebook`` and the script exits 1 unless every submission
got its expected points and the solutions still match their ``SHA256SUMS``.  Needs no data
files (the tests of the assignments make their own data).  Each submission runs in a
bubblewrap sandbox; ``--compare`` grades the class a second time without it (``--no-sandbox``),
in the same process, and prints the sandbox's cost as one JSON line, last.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
if _VENV_PYTHON.exists() and Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
    os.execv(str(_VENV_PYTHON), [str(_VENV_PYTHON), *sys.argv])  # run with the project's environment

import nbformat  # noqa: E402

from vrlib.classroom.notebooks import fill_solutions, solution_sources  # noqa: E402

SOURCE_DIR = ROOT / "notebooks" / "assignments"
RELEASE_DIR = SOURCE_DIR / "release"
WRONG_DIR = ROOT / "tests" / "classroom_wrong"
A1, A2, A3, A4 = "01_vulnerable_records", "02_privacy_game", "03_domias", "04_traditional_vs_model_seeded"

COSINE_DIFFERENT = '''def generalised_cosine(a, b):
    """Eq. 5 as a weighted sum of the two parts' distances."""
    f = a.n_categorical + a.n_continuous
    out = np.zeros((len(a), len(b)))
    if a.n_categorical:
        out += (a.n_categorical / f) * (1 - (a.onehot @ b.onehot.T) / a.n_categorical)
    if a.n_continuous:
        na = np.linalg.norm(a.continuous, axis=1)[:, None]
        nb = np.linalg.norm(b.continuous, axis=1)[None, :]
        cos = (a.continuous @ b.continuous.T) / (na * nb)  # 0/0 where a vector is zero: a RuntimeWarning
        cos = np.where((na == 0) & (nb == 0), 1.0, np.where((na == 0) | (nb == 0), 0.0, cos))
        out += (a.n_continuous / f) * (1 - cos)
    return out'''
VK_DIFFERENT = """def v_k(distances, k):
    d = np.asarray(distances, dtype=float) + np.diag(np.full(len(distances), np.inf))
    return np.sort(d, axis=1)[:, :k].mean(axis=1)"""
SETS_DIFFERENT = """def training_sets(pool, target, n_records, n_datasets, rng):
    pool = np.asarray(pool)
    labels = np.r_[np.ones(n_datasets // 2, dtype=int), np.zeros(n_datasets - n_datasets // 2, dtype=int)]
    sets = []
    for label in labels:
        picked = pool[rng.permutation(len(pool))[: n_records - label]]
        sets.append(np.concatenate([picked, [target]]) if label else picked)
    return sets, labels"""
QUERIES_DIFFERENT = """def query_features(synthetic, target, schema, subsets):
    cols = list(schema.columns)
    match = np.column_stack([
        synthetic[c].astype(object).to_numpy() == target[c] if c in schema.categorical
        else synthetic[c].to_numpy(dtype=float) <= float(target[c])
        for c in cols
    ])
    answers = []
    for s in np.asarray(subsets):
        chosen = np.array([(int(s) >> j) & 1 for j in range(len(cols))], dtype=bool)
        answers.append(int(match[:, chosen].all(axis=1).sum()))
    return np.array(answers)"""
KDE_DIFFERENT = """from scipy.stats import gaussian_kde

def kde_log_density(data, points):
    data, points = np.asarray(data, dtype=float), np.asarray(points, dtype=float)
    return gaussian_kde(data.T).logpdf(points.T)"""
DOMIAS_DIFFERENT = """def domias_score(synthetic, reference, points):
    p_g, p_r = kde_log_density(synthetic, points), kde_log_density(reference, points)
    return np.subtract(p_g, p_r)"""
SEEDED_DIFFERENT = """def model_seeded_sets(dataset, target, reference, n_games):
    dataset = np.asarray(dataset)
    out = np.concatenate([np.setdiff1d(dataset, [target]), [reference]])
    labels = [1 if i < n_games // 2 else 0 for i in range(n_games)]
    return [dataset.copy() if label else out.copy() for label in labels], np.array(labels)"""

SOLUTION_PATH = "__import__('pathlib').Path(__import__('vrlib').__file__).parents[1] / 'notebooks' / 'assignments'"


def _wrong(assignment: str) -> tuple[str, str]:
    path = next(WRONG_DIR.glob(f"{assignment}.*.py"))
    return path.name.split(".")[1], path.read_text()


def _delete(grade_id):
    def edit(nb):
        nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != grade_id]

    return edit


def _set_test(grade_id, text):
    def edit(nb):
        for c in nb.cells:
            if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
                c.source = text

    return edit


def students() -> dict:
    """student -> (assignment, {grade_id: answer} or None for the empty release, edit, expected points)."""
    w1, w2, w3, w4 = (_wrong(a) for a in (A1, A2, A3, A4))
    return {
        "sol_a1": (A1, {}, None, 5),
        "sol_a2": (A2, {}, None, 5),
        "sol_a3": (A3, {}, None, 5),
        "sol_a4": (A4, {}, None, 5),
        "diff_a1_warns": (A1, {"a1_distance": COSINE_DIFFERENT, "a1_vk": VK_DIFFERENT}, None, 5),
        "diff_a2": (A2, {"a2_training_sets": SETS_DIFFERENT, "a2_query_features": QUERIES_DIFFERENT}, None, 5),
        "diff_a3": (A3, {"a3_kde": KDE_DIFFERENT, "a3_domias": DOMIAS_DIFFERENT}, None, 5),
        "diff_a4": (A4, {"a4_model_seeded_sets": SEEDED_DIFFERENT}, None, 5),
        "empty_a1": (A1, None, None, 0),
        "empty_a2": (A2, None, None, 0),
        "empty_a3": (A3, None, None, 0),
        "empty_a4": (A4, None, None, 0),
        "wrong_a1": (A1, {w1[0]: w1[1]}, None, 2),
        "wrong_a2": (A2, {w2[0]: w2[1]}, None, 2),
        "wrong_a3_kde_only": (A3, {w3[0]: w3[1]}, None, 2),
        "wrong_a4": (A4, {w4[0]: w4[1]}, None, 0),
        "wrong_a1_vk_counts_self": (
            A1,
            {"a1_vk": "def v_k(distances, k):\n    return np.sort(distances, axis=1)[:, :k].mean(axis=1)"},
            None,
            3,
        ),
        "kills_kernel_a1": (
            A1,
            {"a1_distance": "def generalised_cosine(a, b):\n    import os\n    os._exit(1)"},
            None,
            2,
        ),
        "infinite_loop_a2": (
            A2,
            {
                "a2_query_features": "def query_features(synthetic, target, schema, subsets):\n"
                "    while True:\n        pass"
            },
            None,
            2,
        ),
        "swallows_interrupt_a3": (
            A3,
            {
                "a3_domias": "import time\ndef domias_score(synthetic, reference, points):\n"
                "    while True:\n        try:\n            time.sleep(5)\n"
                "        except BaseException:\n            pass"
            },
            None,
            3,
        ),
        "output_flood_a3": (A3, {"a3_kde": "print('x' * 50_000_000)\n" + KDE_DIFFERENT}, None, 5),
        "memory_hog_a2": (
            A2,
            {
                "a2_training_sets": "def training_sets(pool, target, n_records, n_datasets, rng):\n"
                "    hog = np.ones((2**20, 2**12))\n    return hog, hog"
            },
            None,
            3,
        ),
        "rebinds_reference_a1": (
            A1,
            {
                "a1_distance": "import vrlib.distance\nvrlib.distance.pairwise_distances = "
                "lambda a, b=None: np.zeros((len(a), len(a if b is None else b)))\n"
                "def generalised_cosine(a, b):\n    return np.zeros((len(a), len(b)))"
            },
            None,
            2,
        ),
        "calls_reference_a1": (
            A1,
            {
                "a1_distance": "from vrlib.distance import pairwise_distances\n"
                "def generalised_cosine(a, b):\n    return pairwise_distances(a, b)"
            },
            None,
            2,
        ),
        "rebinds_np_testing_a3": (
            A3,
            {"a3_kde": "np.testing.assert_allclose = lambda *a, **k: None\n" + w3[1]},
            None,
            2,
        ),
        "input_transformer_a4": (
            A4,
            {
                "a4_model_seeded_sets": "get_ipython().input_transformers_post.append("
                "lambda lines: ['pass\\n'])\n" + w4[1]
            },
            None,
            0,
        ),
        "reads_solution_a2": (
            A2,
            {"a2_query_features": f"exec(open({SOLUTION_PATH} / '{A2}.ipynb').read())\n" + w2[1]},
            None,
            2,
        ),
        "rewrites_solution_a4": (
            A4,
            {"a4_model_seeded_sets": f"open({SOLUTION_PATH} / '{A4}.ipynb', 'w').write('{{}}')\n" + w4[1]},
            None,
            0,
        ),
        "huge_points_a1": (A1, {"a1_distance": w1[1]}, _set_test("a1_test_distance", "10 ** 12"), 2),
        "deletes_test_a4": (A4, {}, _delete("a4_test_small"), 3),
    }


def build(out: Path) -> dict:
    """Write every student's submission under ``out/submitted``; return the expected points."""
    expected = {}
    for student, (assignment, answers, edit, points) in students().items():
        nb = nbformat.read(RELEASE_DIR / f"{assignment}.ipynb", as_version=4)
        if answers is not None:
            solution = nbformat.read(SOURCE_DIR / f"{assignment}.ipynb", as_version=4)
            fill_solutions(nb, {**solution_sources(solution), **answers})
        if edit is not None:
            edit(nb)
        folder = out / "submitted" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / f"{assignment}.ipynb")
        (folder / "timestamp.txt").write_text("2026-01-15 12:00:00.000000 UTC\n")
        expected[(student, assignment)] = points
    return expected


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=None, help="where to build the class (default: a temporary folder)")
    parser.add_argument("--check", action="store_true", help="grade the class and check every expected grade")
    parser.add_argument("--jobs", type=int, default=2, help="submissions graded at once (default 2)")
    parser.add_argument("--timeout", type=float, default=20, help="seconds per cell or call (default 20)")
    parser.add_argument("--no-sandbox", action="store_true", help="grade without the bwrap sandbox")
    parser.add_argument(
        "--compare", action="store_true", help="with --check: grade again without the sandbox; print the cost as JSON"
    )
    parser.add_argument(
        "--bench",
        type=int,
        default=0,
        metavar="N",
        help="grade each assignment's solution N times with and N times without the sandbox, alternately, "
        "one at a time; print the sandbox's cost per notebook as JSON (last line)",
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from vrlib import classroom

    if args.bench:
        return _bench(classroom, args.bench, args.timeout)

    with tempfile.TemporaryDirectory(prefix="vrlib-mock-class-") as tmp:
        out = Path(args.out) if args.out else Path(tmp)
        expected = build(out)
        print(f"built {len(expected)} submissions under {out / 'submitted'}")
        if not args.check:
            return 0
        bad, seconds, results = _grade_and_check(classroom, out, "gradebook", expected, args, not args.no_sandbox)
        print(
            f"graded {len(results)} submissions in {seconds:.0f} s with --jobs {args.jobs}"
            f"{' without the sandbox' if args.no_sandbox else ' (each in a bwrap sandbox)'}; "
            f"{len(results) - bad} as expected, {bad} not; gradebook in {out / 'gradebook'}"
        )
        if args.compare:
            bad_plain, plain_seconds, _ = _grade_and_check(classroom, out, "gradebook-plain", expected, args, False)
            bad += bad_plain
            print(
                json.dumps(
                    {
                        "submissions": len(results),
                        "jobs": args.jobs,
                        "seconds_sandbox": round(seconds, 1),
                        "seconds_no_sandbox": round(plain_seconds, 1),
                        "ratio": round(seconds / plain_seconds, 3),
                        "added_seconds_per_notebook": round((seconds - plain_seconds) * args.jobs / len(results), 2),
                    }
                )
            )
        return 1 if bad else 0


def _bench(classroom, repeats: int, timeout: float) -> int:
    """Seconds to grade each solution notebook with and without the sandbox, alternately, in this process."""
    import statistics

    with tempfile.TemporaryDirectory(prefix="vrlib-bench-") as tmp:
        times: dict[bool, list[float]] = {True: [], False: []}
        for name in (A1, A2, A3, A4):
            copy = Path(tmp) / f"{name}.ipynb"
            copy.write_bytes((SOURCE_DIR / f"{name}.ipynb").read_bytes())
            classroom.grade(copy, timeout=timeout)  # warm: imports, the sandbox's copy of vrlib
            for _ in range(repeats):
                for sandbox in (True, False):
                    start = time.monotonic()
                    report = classroom.grade(copy, timeout=timeout, sandbox=sandbox)
                    times[sandbox].append(time.monotonic() - start)
                    if report.points != report.max_points:
                        print(report.format())
                        return 1
        boxed, plain = statistics.median(times[True]), statistics.median(times[False])
        print(
            json.dumps(
                {
                    "notebooks": 4,
                    "repeats": repeats,
                    "median_seconds_sandbox": round(boxed, 3),
                    "median_seconds_no_sandbox": round(plain, 3),
                    "ratio": round(boxed / plain, 3),
                    "added_seconds_per_notebook": round(boxed - plain, 3),
                }
            )
        )
    return 0


def _grade_and_check(classroom, out: Path, book: str, expected: dict, args, sandbox: bool):
    """Grade the class into ``out/book``; print each grade against the expected one; (wrong, seconds, results)."""
    start = time.monotonic()
    results = classroom.grade_class(
        out, out / book, jobs=args.jobs, timeout=args.timeout, time_cap=300, memory_cap="4G", sandbox=sandbox
    )
    seconds = time.monotonic() - start
    bad = 0
    for sub, report in results:
        want = expected[(sub.student, sub.assignment)]
        ok = report.points == want
        bad += not ok
        statuses = ", ".join(f"{t.grade_id} {t.status}" for t in report.tests)
        print(
            f"{'ok ' if ok else 'BAD'} {sub.student:<26} {report.points:>3g} / {report.max_points:g}"
            f" (expected {want:g}; {report.seconds:.0f} s) {statuses}"
        )
        if not ok:
            print("    " + report.format().replace("\n", "\n    "))
    for path in classroom.assignments(SOURCE_DIR):
        classroom.check_sums(path)  # raises if a submission rewrote a solution
    return bad, seconds, results


if __name__ == "__main__":
    sys.exit(main())
