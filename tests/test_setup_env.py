"""``scripts/setup_env.sh``: which packages a first install asks pip for, with pip and Python faked.

The venv's ``python`` is a script that logs its arguments, so the test installs nothing and needs no
network; ``chromium``, ``chromedriver`` and ``bwrap`` are faked too, so the setup never reaches apt-get.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import PROJECT_ROOT

FAKE_PYTHON = """#!/usr/bin/env bash
echo "$*" >> "$SETUP_LOG"
if [[ "$1" == "-c" ]]; then echo "$SETUP_SITE"; fi
# SETUP_LOCAL_TORCH=0: pip's find-links hold no torch wheel, so an install without an index fails
if [[ "$*" == *--no-index* && "${SETUP_LOCAL_TORCH:-1}" == 0 ]]; then exit 1; fi
"""


# The system's python3: says its version, and makes a venv whose python is FAKE_PYTHON.
FAKE_SYSTEM_PYTHON = """#!/usr/bin/env bash
case "$1" in
  -c) echo "$SETUP_PY_VERSION" ;;
  --version) echo "Python $SETUP_PY_VERSION.0" ;;
  -m) mkdir -p "$3/bin" && cp "$SETUP_VENV_PYTHON" "$3/bin/python" ;;
esac
"""


def _setup(tmp_path: Path, venv: bool = True, **env) -> tuple[subprocess.CompletedProcess, Path, Path]:
    """Run a copy of setup_env.sh; ``venv=False`` starts without .venv, so that it is made."""
    root = tmp_path / "proj"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(PROJECT_ROOT / "scripts" / "setup_env.sh", root / "scripts" / "setup_env.sh")
    for name in ("pyproject.toml", "constraints.txt"):
        (root / name).write_text(f"# {name}\n")
    (tmp_path / "venv_python").write_text(FAKE_PYTHON)
    (tmp_path / "venv_python").chmod(0o755)
    (tmp_path / "python3").write_text(FAKE_SYSTEM_PYTHON)
    (tmp_path / "python3").chmod(0o755)
    if venv:
        (root / ".venv" / "bin").mkdir(parents=True)
        shutil.copy(tmp_path / "venv_python", root / ".venv" / "bin" / "python")
    tools = tmp_path / "tools"
    tools.mkdir()
    for tool in ("chromium", "chromedriver", "bwrap"):
        (tools / tool).write_text("#!/bin/sh\nexit 0\n")
        (tools / tool).chmod(0o755)
    site = tmp_path / "site"
    site.mkdir()
    log = tmp_path / "pip.log"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("VRLIB_", "PIP_"))}
    run_env = {
        **base,
        "PATH": f"{tools}:{base['PATH']}",
        "PYTHON": str(tmp_path / "python3"),
        "SETUP_PY_VERSION": "3.11",
        "SETUP_VENV_PYTHON": str(tmp_path / "venv_python"),
        "SETUP_LOG": str(log),
        "SETUP_SITE": str(site),
        **env,
    }
    proc = subprocess.run(
        ["bash", str(root / "scripts" / "setup_env.sh")], env=run_env, capture_output=True, text=True, timeout=60
    )
    return proc, root, log


def _first_install(tmp_path: Path, **env) -> list[str]:
    proc, root, log = _setup(tmp_path, **env)
    assert proc.returncode == 0, proc.stderr
    assert (root / ".venv" / ".vrlib-installed").exists()
    return log.read_text().splitlines()


def _torch_installs(calls: list[str]) -> list[str]:
    return [c for c in calls if c.startswith("-m pip install") and "torch==" in c]


def test_a_torch_wheel_already_at_hand_is_taken_without_any_index(tmp_path):
    # a machine that ships the CPU wheel in pip's find-links: no network, no other index asked
    (line,) = _torch_installs(_first_install(tmp_path))
    assert "--no-index" in line.split() and "torch==2.13.0" in line.split() and "--index-url" not in line


def test_else_torch_comes_from_the_cpu_index(tmp_path):
    # PyPI's Linux torch wheels are CUDA builds, several GB of nvidia-* packages: the pin alone is not enough
    local, remote = _torch_installs(_first_install(tmp_path, SETUP_LOCAL_TORCH="0"))
    assert "--no-index" in local.split()
    assert "--index-url https://download.pytorch.org/whl/cpu" in remote and "torch==2.13.0" in remote.split()


@pytest.mark.parametrize("version", ["2.13.0", "2.5.1"])
def test_torch_index_and_version_can_be_named(tmp_path, version):
    calls = _first_install(tmp_path, VRLIB_TORCH_INDEX="file:///mirror/torch", VRLIB_TORCH_VERSION=version)
    (line,) = _torch_installs(calls)  # the named index alone
    line = line.split()
    assert line[line.index("--index-url") + 1] == "file:///mirror/torch" and f"torch=={version}" in line
    # everything else from the usual index, at the versions of constraints.txt
    (rest,) = [c for c in calls if "-e .[test]" in c]
    assert "--index-url" not in rest and "-c constraints.txt" in rest


@pytest.mark.parametrize(
    "version, status, says",
    [
        ("3.11", 0, None),
        ("3.12", 0, "the committed outputs were made with 3.11"),
        ("3.9", 2, "vrlib needs 3.10 or later"),
    ],
)
def test_the_python_of_a_new_venv_is_checked(tmp_path, version, status, says):
    proc, root, _ = _setup(tmp_path, venv=False, SETUP_PY_VERSION=version)
    assert proc.returncode == status, proc.stderr
    assert (root / ".venv" / "bin" / "python").exists() == (status == 0)
    if says is None:
        assert "Python 3" not in proc.stderr
    else:
        assert f"is Python {version}; " in proc.stderr and says in proc.stderr and "PYTHON=python3.11" in proc.stderr


def test_a_python_that_does_not_run_is_named(tmp_path):
    proc, root, _ = _setup(tmp_path, venv=False, PYTHON=str(tmp_path / "no-such-python"))
    assert proc.returncode == 2 and "does not run; install Python 3.11 or name one with PYTHON" in proc.stderr
    assert not (root / ".venv").exists()
