"""A newcomer's first steps from a fresh clone with ``../shared/data`` beside it, no variable set.

The clone is made with ``git clone`` of this repository into a temporary folder, with the data folder
linked in at ``../shared/data``; it reuses this checkout's venv rather than installing one (the
clone's own code is put first on the path, as an install in the clone would). The README's
command-line and Python steps are taken from the README itself and run without ``VRLIB_DATA_DIR``.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vrlib.data import search_dirs

from conftest import PROJECT_ROOT, require_real

pytestmark = [pytest.mark.slow, pytest.mark.realdata]


def _readme_steps(readme: str) -> tuple[list[str], str]:
    """The first-try ``vrlib rank --dataset`` command and the ``In Python:`` block of the README."""
    rank = re.search(r"^\.venv/bin/vrlib (rank --dataset [^#\n]*?)\s*(#.*)?$", readme, re.M)
    python = re.search(r"In Python:\n\n```python\n(.*?)```", readme, re.S)
    assert rank and python, "the README no longer shows a `vrlib rank --dataset` command and an `In Python:` block"
    return rank.group(1).split(), python.group(1)


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    require_real("adult.data", "adult.test", "uk_census2011_teaching_random10000.csv.gz")
    data = next(d for d in search_dirs() if (d / "adult.data").is_file())
    if shutil.which("git") is None or not (PROJECT_ROOT / ".git").exists():
        pytest.skip("needs git and this checkout's repository to clone")
    top = tmp_path_factory.mktemp("newcomer")
    repo = top / "vrlib"
    subprocess.run(["git", "clone", "--quiet", str(PROJECT_ROOT), str(repo)], check=True, capture_output=True)
    (top / "shared").mkdir()
    (top / "shared" / "data").symlink_to(data.resolve(), target_is_directory=True)
    return repo


def _env(repo: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("VRLIB_DATA_DIR", "PYTHONPATH")}
    env["PYTHONPATH"] = str(repo)  # the clone's code, in this checkout's venv
    env["VRLIB_CACHE_DIR"] = str(repo / ".cache" / "vrlib")
    return env


def test_readme_steps_from_a_fresh_clone(clone):
    venv_bin = Path(sys.executable).parent
    rank_args, python_block = _readme_steps((clone / "README.md").read_text())
    env = _env(clone)
    assert "VRLIB_DATA_DIR" not in env

    # The command line, from the clone's root.
    rank = subprocess.run(
        [str(venv_bin / "vrlib"), *rank_args, "--format", "csv"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert rank.returncode == 0, rank.stderr
    lines = rank.stdout.strip().splitlines()
    assert lines[0] == "index,score" and len(lines) == 11
    cli_top = [int(line.split(",")[0]) for line in lines[1:]]

    # The Python API, from notebooks/ (where Jupyter starts a notebook's kernel).
    check = (
        "\nimport vrlib.data\n"
        "assert vrlib.__file__.startswith(REPO), vrlib.__file__\n"
        "print('dirs', [str(d) for d in vrlib.data.search_dirs()])\n"
        "print('top', list(v5.sort_values(ascending=False, kind='stable').index[:10]))\n"
        "print('targets', len(targets))\n"
        "census, _ = vrlib.load('census')\n"
        "print('census', len(census))\n"
    )
    code = f"REPO = {str(clone)!r}\n" + python_block + check
    api = subprocess.run(
        [sys.executable, "-c", code], cwd=clone / "notebooks", env=env, capture_output=True, text=True, timeout=600
    )
    assert api.returncode == 0, api.stderr
    out = dict(line.split(" ", 1) for line in api.stdout.strip().splitlines())
    assert ast.literal_eval(out["dirs"])[0] == str(
        clone.parent / "shared" / "data"
    )  # found beside the clone, not in the cwd
    assert ast.literal_eval(out["top"]) == cli_top  # the command line and the API rank alike
    assert out["targets"] == "10" and out["census"] == "10000"

    # Nothing downloaded, nothing written into the clone's tracked files.
    assert sorted(p.name for p in (clone / "data").iterdir()) == ["README.md"]
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout
    assert status == ""


def _readme_audit_try(readme: str) -> tuple[str, list[str]]:
    """The Python block and the ``vrlib audit`` command (its arguments) of the README's *To try it*."""
    part = readme.split("**To try it**", 1)
    assert len(part) == 2, "the README no longer shows how to try `vrlib audit` on Adult (**To try it**)"
    python = re.search(r"```python\n(.*?)```", part[1], re.S)
    command = re.search(r"```bash\n\.venv/bin/vrlib (audit .*?)```", part[1], re.S)
    assert python and command, "**To try it** lost its Python block or its `.venv/bin/vrlib audit` command"
    return python.group(1), shlex.split(command.group(1).replace("\\\n", " "))


def test_readme_audit_try_from_a_fresh_clone(clone):
    """The README's way to try the audit without files of one's own: write them, audit them, nothing committed moves."""
    venv_bin = Path(sys.executable).parent
    python_block, audit_args = _readme_audit_try((clone / "README.md").read_text())
    env = _env(clone)
    made = subprocess.run(
        [sys.executable, "-c", python_block], cwd=clone, env=env, capture_output=True, text=True, timeout=600
    )
    assert made.returncode == 0, made.stderr
    categorical, continuous = made.stdout.split()
    assert f"--categorical {categorical}" in " ".join(audit_args)  # the columns it printed are the ones declared
    assert f"--continuous {continuous}" in " ".join(audit_args)
    audit = subprocess.run(
        [str(venv_bin / "vrlib"), *audit_args], cwd=clone, env=env, capture_output=True, text=True, timeout=600
    )
    assert audit.returncode == 0, audit.stderr
    assert re.match(r"\d[\d,]* of 3,000 training records flagged at 5% FDR", audit.stdout), audit.stdout
    out = clone / audit_args[audit_args.index("--out") + 1]
    assert sorted(p.name for p in out.iterdir()) == ["records.csv", "report.html", "summary.json"]
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout
    assert status == ""  # written under the git-ignored results/


def test_a_notebook_in_the_registered_kernel_finds_the_data(clone, monkeypatch):
    """As a notebook opened in JupyterLab: the ``vrlib`` kernel the setup registers, started in notebooks/."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec("vrlib")
    except NoSuchKernel:
        pytest.skip("no Jupyter kernel named 'vrlib': scripts/setup_env.sh registers it")
    assert Path(spec.argv[0]).exists(), f"the vrlib kernel points at a missing Python: {spec.argv[0]}"
    for name, value in _env(clone).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("VRLIB_DATA_DIR", raising=False)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import vrlib\nfrom vrlib.data import search_dirs\n"
            "census, _ = vrlib.load('census')\nprint(search_dirs()[0], len(census))"
        )
    ]
    nbclient.NotebookClient(
        nb, kernel_name="vrlib", timeout=300, resources={"metadata": {"path": str(clone / "notebooks")}}
    ).execute()
    printed = "".join(o.get("text", "") for o in nb.cells[0].outputs if o.get("name") == "stdout")
    assert printed.split() == [str(clone.parent / "shared" / "data"), "10000"]
