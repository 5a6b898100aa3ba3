"""Bad input and faults outside the cache: each ends in a one-line error that says what to do, or a correct result.

The command line (``vrlib rank``) and the CSV reader, BayNet/PrivBayes memory needs,
notebook parameters, ``run_all.sh`` (arguments, environment, Ctrl-C), outputs per
profile (no run overwrites another profile's figures; the manifest keeps every entry
under concurrent writers; figures are byte-identical across runs), and downloads.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from vrlib import data, report, scorecard  # noqa: E402
from vrlib.cli import main  # noqa: E402
from vrlib.data import Schema, prepare, read_csv  # noqa: E402
from vrlib.encoding import TableEncoder  # noqa: E402
from vrlib.errors import VrlibError  # noqa: E402
from vrlib.generators.bayesnet import BayNet, PrivBayes  # noqa: E402
from vrlib.params import check_parameters, choice, integer, items, list_of, one_or_more, text  # noqa: E402
from vrlib.selection import vulnerability_scores  # noqa: E402

from conftest import PROJECT_ROOT  # noqa: E402


def rank(capsys, *argv):
    """Exit status, stdout and stderr of ``vrlib rank *argv``."""
    try:
        code = main(["rank", *map(str, argv)])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, out, err, *fragments):
    assert code == 2 and out == "", (code, out, err)
    assert err.count("\n") == 1 and err.startswith("vrlib: error:") and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def write(tmp_path, text_or_bytes, name="t.csv") -> Path:
    path = tmp_path / name
    if isinstance(text_or_bytes, bytes):
        path.write_bytes(text_or_bytes)
    else:
        path.write_text(text_or_bytes)
    return path


# --------------------------------------------------------------------------- vrlib rank, read_csv


def test_minkowski_p_inf_is_chebyshev(capsys, tmp_path):
    # V_1 under eq. 6 with p = inf, by brute force: F_cat/F = 1/3, F_cont/F = 2/3 times each block's largest difference.
    path = write(tmp_path, "a,x,y\nu,0,0\nv,1,0\nu,3,2\nv,10,4\nu,0,4\n")
    df, schema = read_csv(path, ["a"], ["x", "y"])
    enc = TableEncoder(schema).fit_transform(df)
    h, c = enc.onehot, enc.continuous
    d = np.array(
        [[np.abs(h[i] - h[j]).max() / 3 + 2 * np.abs(c[i] - c[j]).max() / 3 for j in range(5)] for i in range(5)]
    )
    np.fill_diagonal(d, np.inf)
    want = d.min(axis=1)
    got = vulnerability_scores(df, schema, k=1, metric="minkowski", p=np.inf)
    np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-12)
    assert len(set(np.round(want, 9))) > 1  # not the constant 0**0 = 1 score
    code, out, err = rank(
        capsys,
        "--csv",
        path,
        "--categorical",
        "a",
        "--continuous",
        "x,y",
        "--k",
        1,
        "--metric",
        "minkowski",
        "--p",
        "inf",
        "--top",
        5,
        "--format",
        "csv",
    )
    assert code == 0, err
    scores = pd.read_csv(pd.io.common.StringIO(out)).set_index("index")["score"]
    np.testing.assert_allclose(scores.sort_index().to_numpy(), want, rtol=1e-9)


@pytest.mark.parametrize(
    "body,fragments",
    [
        ("a,x\nu,1e308\nv,-1e308\nu,3\n", ["'x'", "row(s) 0, 1", "rescale"]),
        ("a,x\nu,1\nv,inf\nu,3\n", ["'x'", "non-finite", "row(s) 1"]),
        ("a,x\nu,1\nv,2\nu,-Infinity\n", ["'x'", "non-finite", "row(s) 2"]),
        ("a,x\nu,1\nv,nan\nu,3\n", ["'x'", "['nan']", "row(s) 1", "--na-values"]),
    ],
    ids=["overflow", "inf", "-Infinity", "nan"],
)
def test_non_finite_and_overflowing_values_are_refused(capsys, tmp_path, body, fragments):
    path = write(tmp_path, body)
    code, out, err = rank(capsys, "--csv", path, "--categorical", "a", "--continuous", "x", "--k", 1, "--top", 3)
    one_line_error(code, out, err, *fragments)


def test_json_is_strict(capsys, tmp_path):
    def strict(constant):
        raise AssertionError(f"{constant} is not JSON")

    path = write(tmp_path, "a,x\nu,1\nv,2\nu,3\nv,10\n")
    code, out, err = rank(
        capsys, "--csv", path, "--categorical", "a", "--continuous", "x", "--k", 1, "--top", 4, "--format", "json"
    )
    assert code == 0, err
    rows = json.loads(out, parse_constant=strict)
    assert sorted(r["index"] for r in rows) == [0, 1, 2, 3]
    assert {r["index"]: r["record"]["x"] for r in rows} == {0: 1.0, 1: 2.0, 2: 3.0, 3: 10.0}
    # What used to give NaN scores (an inf value) is refused instead of printed.
    path = write(tmp_path, "a,x\nu,1\nv,inf\nu,3\nv,10\n", "inf.csv")
    code, out, err = rank(
        capsys, "--csv", path, "--categorical", "a", "--continuous", "x", "--k", 1, "--top", 4, "--format", "json"
    )
    one_line_error(code, out, err, "non-finite")


def test_categories_are_text_and_missing_only_where_marked(capsys, tmp_path):
    path = write(tmp_path, "a,x\nNA,1\nNone,2\nnull,3\nnan,4\n?,5\n")
    df, _ = read_csv(path, ["a"], ["x"])
    assert len(df) == 5 and sorted(df["a"].cat.categories) == sorted(["NA", "None", "null", "nan", "?"])
    code, out, err = rank(
        capsys,
        "--csv",
        path,
        "--categorical",
        "a",
        "--continuous",
        "x",
        "--k",
        1,
        "--top",
        5,
        "--dropna",
        "--format",
        "csv",
    )
    assert code == 0 and len(out.splitlines()) == 6 and err == "", err  # nothing dropped
    code, out, err = rank(
        capsys,
        "--csv",
        path,
        "--categorical",
        "a",
        "--continuous",
        "x",
        "--k",
        1,
        "--top",
        3,
        "--na-values",
        "?,NA",
        "--dropna",
        "--format",
        "csv",
    )
    assert code == 0 and "dropped 2 of 5 row(s)" in err and "(row(s) 0, 4)" in err, err
    assert sorted(int(line.split(",")[0]) for line in out.splitlines()[1:]) == [1, 2, 3]


@pytest.mark.parametrize(
    "content,extra,fragments",
    [
        (b"", [], ["is empty"]),
        (b"a,x\n\xe9t\xe9,1\nb,2\n", [], ["not utf-8", "--encoding"]),
        (b"a,x\nu,1\nv,2\nu,3\n", ["--method", "loglik", "--bins", "-3"], ["--bins", "-3"]),
        (b"a,x\nu,1\nv,2\nu,3\n", ["--method", "random", "--seed", "-1"], ["--seed", "-1"]),
        (b"a,x\nu,1\nv,2\nu,3\n", ["--method", "rare", "--rare-threshold", "-1"], ["--rare-threshold"]),
        (b"a,x\nu,1\n", [], ["1 record(s)", "at least 2"]),
        (b"a,x,a\nu,1,w\nv,2,w\nu,3,z\n", [], ["duplicate column name(s) ['a']"]),
    ],
    ids=["empty", "latin-1", "bins", "seed", "rare-threshold", "one-row", "duplicate-columns"],
)
def test_one_line_errors(capsys, tmp_path, content, extra, fragments):
    path = write(tmp_path, content)
    code, out, err = rank(capsys, "--csv", path, "--categorical", "a", "--continuous", "x", "--top", 1, *extra)
    one_line_error(code, out, err, *fragments)
    assert "a.1" not in err


def test_other_encodings_can_be_named(capsys, tmp_path):
    path = write(tmp_path, "a,x\nété,1\nb,2\n".encode("latin-1"))
    code, out, err = rank(
        capsys,
        "--csv",
        path,
        "--categorical",
        "a",
        "--continuous",
        "x",
        "--k",
        1,
        "--top",
        1,
        "--encoding",
        "latin-1",
        "--format",
        "json",
    )
    assert code == 0 and json.loads(out)[0]["record"]["a"] in ("été", "b"), err


def test_prepare_refuses_overflow_with_rows():
    df = pd.DataFrame({"x": [1.0, 1e308, -1e308]}, index=[10, 11, 12])
    with pytest.raises(VrlibError, match=r"'x' spans more than the largest float.*row\(s\) 11, 12"):
        prepare(df, Schema([], ["x"]))


# --------------------------------------------------------------------------- BayNet / PrivBayes memory


def test_bayesnet_memory_is_checked_before_allocating():
    rng = np.random.default_rng(0)
    cats = [f"v{i:02d}" for i in range(50)]
    df = pd.DataFrame({f"c{j}": rng.choice(cats, 60) for j in range(11)})
    df.loc[:49, "c0"] = cats  # every column has all 50 values
    for c in df:
        df[c] = pd.Categorical(df[c], categories=cats)
    schema = Schema(list(df.columns), [])
    # One family of 11 columns of 50 values: 50**11 cells, about 1.5e20 bytes of tables.
    for model in (BayNet(degree=10), PrivBayes(epsilon=1.0, degree=10)):
        start = time.perf_counter()
        with pytest.raises(VrlibError, match=r"degree=10.*needs at least .* GiB.*lower degree"):
            model.fit(df, schema, seed=0)
        assert time.perf_counter() - start < 10
    BayNet(degree=2).fit(df, schema, seed=0)  # a usual degree still fits


# --------------------------------------------------------------------------- notebook parameters

NOTEBOOKS = sorted((PROJECT_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _code_cells(path):
    return [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def test_check_parameters_names_the_parameter():
    ok = {"profile": "quick", "seed": 3, "figures_dir": "../figures", "datasets": ["adult"], "n_jobs": None}
    standard = ("profile", "seed", "figures_dir", "n_jobs")
    check_parameters(dict(ok), *standard, datasets=one_or_more(["adult", "census"]))
    cases = [
        ({"seed": "abc"}, "'seed' must be an integer >= 0, got 'abc'"),
        ({"seed": -1}, "'seed' must be an integer >= 0"),
        ({"seed": True}, "'seed' must be an integer"),
        ({"profile": "quik"}, "'profile' must be one of ['smoke', 'quick', 'paper']"),
        ({"datasets": "adult"}, "'datasets' must be a non-empty list"),
        ({"datasets": ["adult", "california"]}, "['california'] unknown"),
        ({"datasets": ["adult", "adult"]}, "without repeats"),
        ({"n_jobs": 0}, "'n_jobs' must be an integer >= 1"),
        ({"figures_dir": ""}, "'figures_dir' must be a folder path"),
        ({"sed": 3}, "unknown notebook parameter(s) 'sed' (did you mean 'seed'?)"),
    ]
    for change, message in cases:
        with pytest.raises(VrlibError) as info:
            check_parameters({**ok, **change}, *standard, datasets=one_or_more(["adult", "census"]))
        assert message in str(info.value), (change, str(info.value))
    groups = list_of(items(choice(["race", "sex"]), text()), minimum_length=1)
    with pytest.raises(VrlibError, match=r"'minority_groups\[0\]\[0\]' must be one of"):
        check_parameters({"minority_groups": [["rase", "Black"]]}, minority_groups=groups)
    with pytest.raises(VrlibError, match=r"'n_targets' must be an integer >= 1 or None"):
        check_parameters({"n_targets": 0.5}, n_targets=integer(minimum=1, optional=True))


def test_injected_typo_is_found_in_ipython_history():
    # IPython's In list: the parameters cell, papermill's injected cell, then the check.
    namespace = {
        "In": ["", 'profile = "quick"\nseed = 0\n', "# Parameters\nsed = 3\n", "check_parameters(...)"],
        "profile": "quick",
        "seed": 0,
        "sed": 3,
        "results": [1],
    }
    with pytest.raises(VrlibError, match=r"unknown notebook parameter\(s\) 'sed' \(did you mean 'seed'\?\)"):
        check_parameters(namespace, "profile", "seed")
    del namespace["sed"]
    namespace["In"][2] = "# Parameters\nseed = 3\n"
    check_parameters(namespace, "profile", "seed")  # other globals (cells run out of order) are no alarm


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebook_checks_exactly_its_parameters(path):
    cells = _code_cells(path)
    declared = {node.targets[0].id for node in ast.parse("".join(cells[0]["source"])).body}
    calls = [
        n
        for n in ast.walk(ast.parse("".join(cells[1]["source"])))
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "check_parameters"
    ]
    assert len(calls) == 1, "the cell after the parameters cell must call vrlib.params.check_parameters once"
    call = calls[0]
    assert isinstance(call.args[0], ast.Call) and call.args[0].func.id == "globals"
    checked = [a.value for a in call.args[1:]] + [k.arg for k in call.keywords]
    assert sorted(checked) == sorted(declared), f"checked {sorted(checked)}, parameters {sorted(declared)}"


@pytest.mark.slow
def test_papermill_typo_and_bad_value_stop_the_notebook(tmp_path):
    papermill = pytest.importorskip("papermill")
    cells = _code_cells(PROJECT_ROOT / "notebooks" / "03_achilles_robustness.ipynb")[:2]
    nb = {
        "cells": cells
        + [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": "done",
                "metadata": {},
                "outputs": [],
                "source": ["print('ran with seed', seed)"],
            }
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    src = tmp_path / "nb.ipynb"
    src.write_text(json.dumps(nb))
    for params, message in [
        ({"sed": 3}, "'sed' (did you mean 'seed'?)"),
        ({"seed": "abc"}, "'seed' must be an integer"),
    ]:
        with pytest.raises(papermill.PapermillExecutionError) as info:
            papermill.execute_notebook(
                str(src),
                str(tmp_path / "out.ipynb"),
                parameters=params,
                kernel_name="python3",
                progress_bar=False,
                cwd=str(tmp_path),
            )
        assert message in str(info.value)
    papermill.execute_notebook(
        str(src),
        str(tmp_path / "out.ipynb"),
        parameters={"seed": 4},
        kernel_name="python3",
        progress_bar=False,
        cwd=str(tmp_path),
    )
    out = json.loads((tmp_path / "out.ipynb").read_text())
    assert "ran with seed 4" in "".join(out["cells"][-1]["outputs"][0]["text"])


# --------------------------------------------------------------------------- run_all.sh


def _notebook(source: str) -> str:
    params = 'profile = "quick"  # p\nseed = 0  # s\nfigures_dir = "f"  # f\ntables_dir = "t"  # t\n'
    cells = [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "p",
            "metadata": {"tags": ["parameters"]},
            "outputs": [],
            "source": [params],
        },
        {"cell_type": "code", "execution_count": None, "id": "b", "metadata": {}, "outputs": [], "source": [source]},
    ]
    meta = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    return json.dumps({"cells": cells, "metadata": meta, "nbformat": 4, "nbformat_minor": 5})


@pytest.fixture
def skeleton(tmp_path):
    """A copy of run_all.sh in a project of two tiny notebooks (setup is a no-op; the venv's tools on PATH)."""
    root = tmp_path / "proj"
    (root / "scripts").mkdir(parents=True)
    (root / "notebooks").mkdir()
    shutil.copy(PROJECT_ROOT / "run_all.sh", root / "run_all.sh")
    (root / "scripts" / "setup_env.sh").write_text("#!/usr/bin/env bash\nexit 0\n")
    (root / "scripts" / "setup_env.sh").chmod(0o755)
    (root / "notebooks" / "01_one.ipynb").write_text(_notebook("print(seed)"))
    (root / "notebooks" / "02_two.ipynb").write_text(_notebook("open('../second_ran', 'w').close()"))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "VRLIB_DATA_DIR": str(tmp_path)}
    return root, env


def _run_all(skeleton, *args, env=None, timeout=120):
    root, base_env = skeleton
    return subprocess.run(
        ["bash", str(root / "run_all.sh"), *args], env=env or base_env, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.parametrize(
    "args,message",
    [
        (["--only", "nope"], "no notebook matches --only 'nope'; the notebooks are: 01_one 02_two"),
        (["--seed", "abc"], "--seed must be a non-negative integer, got 'abc'"),
        (["--seed", "-1"], "--seed must be a non-negative integer, got '-1'"),
        (["--only"], "run_all.sh: --only needs a value (see ./run_all.sh --help)"),
        (["--profile"], "run_all.sh: --profile needs a value (see ./run_all.sh --help)"),
        (["--seed", "--only", "01"], "run_all.sh: --seed needs a value (see ./run_all.sh --help)"),
        (["--profile", "fast"], "run_all.sh: unknown profile 'fast'; choose smoke, quick or paper"),
    ],
)
def test_run_all_refuses_bad_arguments(skeleton, args, message):
    proc = _run_all(skeleton, *args)
    assert proc.returncode == 2 and message in proc.stderr, (proc.returncode, proc.stdout, proc.stderr)
    assert not (skeleton[0] / "results").exists()


def test_run_all_help_is_its_leading_comment(skeleton):
    proc = _run_all(skeleton, "--help")
    lines = (skeleton[0] / "run_all.sh").read_text().splitlines()
    comment = [line[2:] if line.startswith("# ") else line[1:] for line in lines[1 : lines.index("set -euo pipefail")]]
    assert proc.returncode == 0 and proc.stdout.splitlines() == comment, proc.stdout
    assert "./run_all.sh [--profile smoke|quick|paper] [--only PATTERN] [--seed S]" in proc.stdout


def test_run_all_names_a_missing_data_folder(skeleton, tmp_path):
    env = {**skeleton[1], "VRLIB_DATA_DIR": str(tmp_path / "my data")}
    proc = _run_all(skeleton, "--only", "01", env=env)
    assert proc.returncode == 2 and f"VRLIB_DATA_DIR='{tmp_path / 'my data'}' is not a folder" in proc.stderr, (
        proc.stderr
    )


_SPAWN_WORKERS = textwrap.dedent(
    """
    import os, time
    from joblib import Parallel, delayed
    open("../kernel.pid", "w").write(str(os.getpid()))
    def work(i):
        open(f"../worker{i}.pid", "w").write(str(os.getpid()))
        time.sleep(600)
    Parallel(n_jobs=2, backend="loky")(delayed(work)(i) for i in range(2))
    """
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "zombie" in status.read_text())


@pytest.mark.slow
def test_ctrl_c_stops_the_notebook_its_kernel_and_workers(skeleton):
    root, env = skeleton
    (root / "notebooks" / "01_one.ipynb").write_text(_notebook(_SPAWN_WORKERS))
    # Ctrl-C as in a terminal: when pytest itself was started in the background (cmd &), bash made it
    # ignore SIGINT, its children would inherit that, and run_all.sh could not trap the signal.
    proc = subprocess.Popen(
        ["bash", str(root / "run_all.sh"), "--profile", "smoke"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    pid_files = [root / "kernel.pid", root / "worker0.pid", root / "worker1.pid"]
    deadline = time.monotonic() + 300  # kernel and loky workers start slowly on a loaded machine
    while not all(f.exists() and f.read_text() for f in pid_files):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.2)
    pids = [int(f.read_text()) for f in pid_files]
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=300)  # generous: the run is slow on a loaded machine; a hang lasts 600 s
    except subprocess.TimeoutExpired:
        proc.kill()
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        pytest.fail("run_all.sh kept running after Ctrl-C")
    time.sleep(1)
    alive = [pid for pid in pids if _alive(pid)]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 130 and "interrupted" in err, (proc.returncode, err)
    assert not alive, f"processes {alive} outlived Ctrl-C"
    assert not (root / "second_ran").exists(), "the next notebook started after Ctrl-C"


# --------------------------------------------------------------------------- outputs per profile


def _digests(folder: Path) -> dict:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _one_figure(rep, name="demo"):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    rep.savefig(fig, name)
    plt.close(fig)
    rep.write_table(pd.DataFrame({"a": [1.0]}), name)


def test_no_profile_writes_over_another_profiles_outputs(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "PROJECT_ROOT", tmp_path, raising=False)
    figures = tmp_path / "figures"
    quick = report.Reporter("01_x", "quick", 0, figures, figures / "tables")
    _one_figure(quick)
    assert quick.figures_dir == figures / "quick" and quick.tables_dir == figures / "quick" / "tables"
    before = _digests(figures)
    # As papermill -p profile smoke (or paper) would run it: the notebook's default folders.
    smoke = report.Reporter("01_x", "smoke", 0, figures, figures / "tables")
    _one_figure(smoke)
    assert smoke.figures_dir == tmp_path / "results" / "smoke" / "figures" / "smoke"
    paper = report.Reporter("01_x", "paper", 0, figures, figures / "tables")
    _one_figure(paper)
    assert paper.figures_dir == figures / "paper"
    after = _digests(figures)
    assert {k: v for k, v in after.items() if k.startswith("quick/")} == before
    assert not any(k.startswith("smoke") for k in after)  # smoke never writes into figures/
    # A folder already named after the profile is used as it is.
    assert report.output_dirs("quick", figures / "quick", figures / "quick" / "tables") == (
        figures / "quick",
        figures / "quick" / "tables",
    )


def test_committed_outputs_live_per_profile():
    committed = PROJECT_ROOT / "figures"
    # Beside the profiles' folders only the pages the scorecard generates from them.
    generated = {p.name for p in scorecard.outputs(PROJECT_ROOT) if p.parent == committed}
    assert generated == {"SCORECARD.md", "PROVENANCE.md"}
    loose = {p.name for p in committed.iterdir() if p.is_file()}
    assert loose <= generated, f"figures/ holds one folder per profile, not {sorted(loose - generated)}"
    for folder in (p for p in committed.iterdir() if p.is_dir()):
        manifest = json.loads((folder / "manifest.json").read_text())
        assert {e["profile"] for e in manifest.values()} == {folder.name}
        assert all((folder / name).is_file() for name in manifest), "every manifest entry names a committed file"


_WRITER = """
import sys
from pathlib import Path
from vrlib.report import Reporter
rep = Reporter(sys.argv[2], "quick", 0, sys.argv[1], Path(sys.argv[1]) / "tables")
for i in range(450):
    rep._record([rep.figures_dir / f"{sys.argv[2]}_{i}.png"], None)
"""


def test_concurrent_manifest_writers_keep_every_entry(tmp_path):
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), name]) for name in ("a", "b")]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    rep = report.Reporter("c", "quick", 0, tmp_path, tmp_path / "tables")
    manifest = json.loads((rep.figures_dir / "manifest.json").read_text())
    assert len(manifest) == 900


def test_manifest_records_machine_and_wall_time(tmp_path):
    rep = report.Reporter("01_x", "quick", 0, tmp_path, tmp_path / "tables")
    _one_figure(rep)
    entry = json.loads((rep.figures_dir / "manifest.json").read_text())["demo.png"]
    assert entry["machine"]["cpu_cores"] == os.cpu_count() and "gpu" in entry["machine"]
    assert (
        entry["machine"]["packages"]["numpy"] == np.__version__
        and entry["machine"]["packages"]["pandas"] == pd.__version__
    )
    assert 0 <= entry["elapsed_s"] < 60


def test_figures_are_byte_identical_across_runs(tmp_path, monkeypatch):
    import seaborn as sns

    data = pd.DataFrame({"method": ["a", "b"] * 30, "auc": np.linspace(0, 1, 60)})
    digests = []
    for run, epoch in enumerate(("1000000000", "1700000000")):
        monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)  # a different date for each run
        np.random.seed(run)  # whatever drew from numpy's generator before
        rep = report.Reporter("01_x", "quick", 0, tmp_path / f"run{run}", tmp_path / f"run{run}" / "tables")
        fig, ax = plt.subplots()
        report.seed_jitter(0)
        sns.stripplot(data=data, x="method", y="auc", ax=ax)
        digests.append([hashlib.sha256(p.read_bytes()).hexdigest() for p in rep.savefig(fig, "fig1")])
        plt.close(fig)
    assert digests[0] == digests[1]


# --------------------------------------------------------------------------- downloads


class _Response:
    def __init__(self, payload):
        self.payload = payload

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def read(self):
        return self.payload


@pytest.fixture
def offline_project(tmp_path, monkeypatch):
    monkeypatch.setenv("VRLIB_DATA_DIR", str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    monkeypatch.setattr(data.files, "project_data_dir", lambda: tmp_path / "project")
    return tmp_path / "project"


def test_download_with_wrong_checksum_leaves_nothing(offline_project, monkeypatch):
    spec = data.DataFile("toy.csv", hashlib.sha256(b"the right bytes").hexdigest(), "https://example.org/toy.csv")
    monkeypatch.setitem(data.FILES, "toy.csv", spec)
    monkeypatch.setattr(data.files.urllib.request, "urlopen", lambda *a, **k: _Response(b"<html>moved</html>"))
    with pytest.raises(VrlibError, match=r"not the expected 'toy.csv'.*nothing was saved"):
        data.find_file("toy.csv")
    assert not offline_project.exists() or not list(offline_project.iterdir())


@pytest.mark.parametrize(
    "payload", [b"PK\x03\x04 not really a zip", b"neither zip nor tar", b""], ids=["bad-zip", "garbage", "empty"]
)
def test_unreadable_archive_is_a_friendly_error(offline_project, monkeypatch, payload):
    spec = data.DataFile("inner.csv", "0" * 64, "https://example.org/a.zip", member="inner.csv")
    monkeypatch.setitem(data.FILES, "inner.csv", spec)
    monkeypatch.setattr(data.files.urllib.request, "urlopen", lambda *a, **k: _Response(payload))
    with pytest.raises(
        VrlibError, match=r"downloading it from https://example.org/a.zip failed.*archive could not be read"
    ):
        data.find_file("inner.csv")
    assert not offline_project.exists() or not list(offline_project.iterdir())


def test_damaged_census_subset_says_where_to_get_it(tmp_path, monkeypatch):
    name = "uk_census2011_teaching_random10000.csv.gz"
    (tmp_path / name).write_bytes(b"damaged")
    monkeypatch.setenv("VRLIB_DATA_DIR", str(tmp_path))
    with pytest.raises(VrlibError) as info:
        data.find_file(name)
    assert "no public download" in str(info.value) and "shared data folder" in str(info.value)
    assert "fetch it again" not in str(info.value)


def _offline(*args, **kwargs):
    raise OSError("no network")


@pytest.mark.parametrize(
    "name, fragment",
    [
        ("adult.data", "download it by hand into {project}, or copy it into VRLIB_DATA_DIR ({env})"),
        (
            "cal_housing.data",
            "download it by hand into {project} (the URL gives an archive: take 'CaliforniaHousing/cal_housing.data' "
            "out of it, named 'cal_housing.data'), or copy it into VRLIB_DATA_DIR ({env})",
        ),
    ],
)
def test_failed_download_says_where_to_put_the_file(offline_project, monkeypatch, name, fragment):
    monkeypatch.setattr(data.files.urllib.request, "urlopen", _offline)
    with pytest.raises(VrlibError) as error:
        data.find_file(name)
    message = str(error.value)
    assert "failed (no network)" in message and "one of those folders" not in message
    # the folder set searched first, not ../shared/data, which VRLIB_DATA_DIR replaces
    assert fragment.format(project=offline_project, env=offline_project.parent / "empty") in message, message
    assert "put the shared data folder at" not in message


@pytest.mark.parametrize(
    "env_set, advice, not_advice",
    [
        (True, "copy it into VRLIB_DATA_DIR ({tmp})", "put the shared data folder at"),
        (
            False,
            "put the shared data folder at {tmp}/shared/data, or set VRLIB_DATA_DIR",
            "copy it into VRLIB_DATA_DIR",
        ),
    ],
    ids=["data-folder-set", "no-data-folder-set"],
)
def test_missing_file_advice_names_the_folder_searched_first(tmp_path, monkeypatch, env_set, advice, not_advice):
    """With VRLIB_DATA_DIR set, ../shared/data is not searched: the advice names the folder that is."""
    if env_set:
        monkeypatch.setenv("VRLIB_DATA_DIR", str(tmp_path))
    else:
        monkeypatch.delenv("VRLIB_DATA_DIR", raising=False)
    monkeypatch.setattr(data.files, "shared_data_dir", lambda: tmp_path / "shared" / "data")
    monkeypatch.setattr(data.files, "project_data_dir", lambda: tmp_path / "project")
    with pytest.raises(VrlibError) as error:
        data.find_file("uk_census2011_teaching_first50000.csv.gz")
    message = str(error.value)
    assert advice.format(tmp=tmp_path) in message, message
    assert not_advice not in message


def test_missing_data_folder_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("VRLIB_DATA_DIR", str(tmp_path / "my data"))
    monkeypatch.setattr(data.files, "project_data_dir", lambda: tmp_path / "project")
    with pytest.raises(VrlibError, match=r"VRLIB_DATA_DIR='.*my data' is not a folder.*no public download"):
        data.find_file("uk_census2011_teaching_first50000.csv.gz")


def test_commit_id_is_dirty_for_code_changes_not_for_figures(tmp_path, monkeypatch):
    """A notebook run after others in run_all.sh finds their figures changed: still the clean commit."""
    from vrlib import report

    git = lambda *a: subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True)  # noqa: E731
    git("init", "-q")
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "fig.png").write_text("old")
    (tmp_path / "code.py").write_text("x = 1")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    monkeypatch.setattr(report, "PROJECT_ROOT", tmp_path)
    clean = report.commit_id()
    assert len(clean) == 12 and not clean.endswith("-dirty")
    (tmp_path / "figures" / "fig.png").write_text("new")
    assert report.commit_id() == clean
    (tmp_path / "code.py").write_text("x = 2")
    assert report.commit_id() == clean + "-dirty"


# --------------------------------------------------------------------------- the library's parameter checks


@pytest.mark.parametrize(
    "value, minimum, maximum, ok",
    [
        (3, 1, None, True),
        (np.int64(3), 1, None, True),
        (1, 1, 1, True),
        (0, 1, None, False),
        (4, 1, 3, False),
        (True, 0, None, False),
        (2.0, 0, None, False),
        ("2", 0, None, False),
        (None, 0, None, False),
    ],
)
def test_check_integer_accepts_integers_in_range_only(value, minimum, maximum, ok):
    from vrlib.params import check_integer, is_integer

    assert is_integer(value, minimum, maximum) is ok
    if ok:
        got = check_integer("k", value, minimum, maximum)
        assert got == int(value) and type(got) is int
    else:
        with pytest.raises(VrlibError, match=r"^k must be an integer .*, got "):
            check_integer("k", value, minimum, maximum)


def test_check_number_bounds_and_words():
    from vrlib.params import check_number, check_probability, is_number

    assert check_number("x", np.float32(0.25), above=0, below=1) == 0.25
    assert check_number("x", None, optional=True) is None
    assert check_number("eps", float("inf"), above=0, allow_inf=True) == float("inf")
    cases = [  # value, bounds, message
        (0.0, dict(above=0), "x must be a number > 0, got 0.0"),
        (1.0, dict(above=0, below=1), "x must be a number in (0, 1), got 1.0"),
        (-0.1, dict(minimum=0, maximum=1), "x must be a number in [0, 1], got -0.1"),
        (1.0, dict(minimum=0, below=1), "x must be a number in [0, 1), got 1.0"),
        (float("inf"), dict(minimum=0), "x must be a number >= 0 (finite), got inf"),
        (float("nan"), {}, "x must be a number, got nan"),
        (True, {}, "x must be a number, got True"),
        ("1", dict(above=0), "x must be a number > 0, got '1'"),
    ]
    for value, bounds, message in cases:
        assert not is_number(value, **{k: v for k, v in bounds.items()})
        with pytest.raises(VrlibError) as info:
            check_number("x", value, **bounds)
        assert str(info.value) == message
    with pytest.raises(VrlibError, match=r"^p must be a probability in \[0, 1\], got 1.5$"):
        check_probability("p", 1.5)
    assert check_probability("p", 1) == 1.0


def test_library_and_notebook_checks_say_the_same_rule():
    from vrlib.params import check_integer, number

    with pytest.raises(VrlibError, match=r"^n_jobs must be an integer >= 1, got 0$"):
        check_integer("n_jobs", 0, minimum=1)
    with pytest.raises(VrlibError, match=r"^notebook parameter 'n_jobs' must be an integer >= 1, got 0$"):
        integer(minimum=1)("n_jobs", 0)
    with pytest.raises(VrlibError, match=r"'f' must be a number in \[0.001, 1.0\], got 2"):
        number(minimum=0.001, maximum=1.0)("f", 2)


def test_lost_sizes_are_checked_by_one_rule_in_the_library_and_notebook_06(monkeypatch):
    from vrlib.experiments import lost
    from vrlib.params import optional

    for check in (
        lambda v: lost.settings_for("smoke", n_games=v),
        lambda v: check_parameters({"n_games": v}, n_games=optional(lost.check_setting)),
    ):
        with pytest.raises(VrlibError, match="n_games=3 gives fewer than 2 games per side"):
            check(3)
        check(4)
    check_parameters({"n_games": None}, n_games=optional(lost.check_setting))  # None: the profile's
    with pytest.raises(VrlibError, match=r"n_shadow must be an integer >= 4, got 2"):
        check_parameters({"n_shadow": 2}, n_shadow=optional(lost.check_setting))
    monkeypatch.setitem(lost.LEAST, "n_games", 6)  # one place decides for both
    with pytest.raises(VrlibError, match="use n_games >= 6"):
        lost.settings_for("smoke", n_games=4)
    with pytest.raises(VrlibError, match="use n_games >= 6"):
        check_parameters({"n_games": 4}, n_games=optional(lost.check_setting))


def test_run_tests_help_runs_nothing(tmp_path):
    """``./run_tests.sh --help`` prints its own help: not pytest's, followed by every smoke notebook."""
    root = tmp_path / "proj"
    (root / "scripts").mkdir(parents=True)
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "bin" / "python").symlink_to(sys.executable)
    shutil.copy(PROJECT_ROOT / "run_tests.sh", root / "run_tests.sh")
    for script, body in (("scripts/setup_env.sh", "exit 0"), ("run_all.sh", "touch notebooks_ran")):
        (root / script).write_text(f"#!/usr/bin/env bash\n{body}\n")
        (root / script).chmod(0o755)
    proc = subprocess.run(
        ["bash", str(root / "run_tests.sh"), "--help"], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("The project's tests: unit tests (pytest), every notebook under the smoke profile")
    assert not (root / "notebooks_ran").exists()
