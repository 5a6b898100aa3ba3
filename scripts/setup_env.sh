#!/usr/bin/env bash
# Create (or update) the project's Python environment in .venv and install vrlib into it.
# Re-runs the install only when pyproject.toml or constraints.txt changed since the last successful one.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${VRLIB_VENV:-.venv}
STAMP="$VENV/.vrlib-installed"
want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)

# Headless Chromium (Debian's packages) for the tests of what a person reads in a browser.
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian's chromium and chromium-driver (browser tests)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; } \
      || echo "setup: could not install chromium; the browser tests will fail in CI and be skipped elsewhere" >&2
  else
    echo "setup: chromium and chromedriver are missing; the browser tests will be skipped (install Debian's 'chromium' and 'chromium-driver')" >&2
  fi
fi

# bubblewrap (Debian's package): the classroom grader runs each submission in a bwrap sandbox and refuses
# to grade untrusted code without it (vrlib classroom grade --no-sandbox is for code the teacher trusts).
if ! command -v bwrap >/dev/null; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian's bubblewrap (the classroom grader's sandbox)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; } \
      || echo "setup: could not install bubblewrap; grading students' notebooks will stop until it is installed" >&2
  else
    echo "setup: bwrap is missing; the classroom grader needs it (install Debian's 'bubblewrap')" >&2
  fi
fi

# nbgrader starts its helpers (alembic) by name: a .pth file puts the venv's bin/ on PATH for every
# Python of the venv, so .venv/bin/nbgrader works without activating the venv.
venv_bin_on_path() {
  local site
  site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo 'import os, sys; b = os.path.join(sys.prefix, "bin"); p = os.environ.get("PATH", ""); b in p.split(os.pathsep) or os.environ.__setitem__("PATH", b + os.pathsep + p)' \
    > "$site/vrlib_venv_bin.pth"
}

# A Jupyter kernel named "vrlib" that runs the venv's Python, so that JupyterLab (.venv/bin/jupyter lab,
# or any other Jupyter once registered with --user, see the README) opens the notebooks with vrlib importable.
# Installed under the venv's prefix (nothing outside it); redone only when missing or pointing elsewhere.
register_kernel() {
  local prefix spec python
  prefix=$(cd "$VENV" && pwd -P)  # the venv folder itself, should .venv be a link
  spec="$prefix/share/jupyter/kernels/vrlib/kernel.json" python="$prefix/bin/python"
  if [[ -f "$spec" ]] && grep -qF "\"$python\"" "$spec"; then return 0; fi
  "$python" -m ipykernel install --prefix "$prefix" --name vrlib --display-name "Python (vrlib)" >/dev/null \
    && echo "setup: registered the Jupyter kernel 'vrlib' ($spec)" \
    || echo "setup: could not register the Jupyter kernel 'vrlib'; the notebooks still open with .venv/bin/jupyter lab" >&2
}

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
  venv_bin_on_path
  register_kernel
  exit 0
fi

if [[ ! -x "$VENV/bin/python" ]]; then
  # pyproject.toml asks for 3.10 or later; the committed outputs and constraints.txt come from 3.11.
  if ! py_version=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null); then
    echo "setup: '$PYTHON' does not run; install Python 3.11 or name one with PYTHON (PYTHON=python3.11 $0)" >&2
    exit 2
  fi
  case "$py_version" in
    3.11) ;;
    3.1[0-9])
      echo "setup: $PYTHON is Python $py_version; the committed outputs were made with 3.11, whose packages" \
        "constraints.txt pins (PYTHON=python3.11 $0 matches them)" >&2 ;;
    *)
      echo "setup: $PYTHON is Python $py_version; vrlib needs 3.10 or later, 3.11 to match the committed" \
        "outputs: name one with PYTHON (PYTHON=python3.11 $0)" >&2
      exit 2 ;;
  esac
  echo "setup: creating $VENV with $($PYTHON --version 2>&1)"
  "$PYTHON" -m venv "$VENV"
fi
echo "setup: installing vrlib and its dependencies into $VENV (first time: a few minutes)"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
# PyTorch first, pinned. PyPI's Linux wheels of torch, pinned or not, are CUDA builds that pull several GB of
# nvidia-* packages, so the CPU build: a torch wheel pip's own find-links already hold (no network: a machine
# that ships one), else PyTorch's CPU index. VRLIB_TORCH_INDEX names another index (a mirror, or one of the
# CUDA indexes under https://download.pytorch.org/whl/) and is then the only place asked.
torch_req="torch==${VRLIB_TORCH_VERSION:-2.13.0}"
if [[ -n "${VRLIB_TORCH_INDEX:-}" ]]; then
  "$VENV/bin/python" -m pip install --quiet --index-url "$VRLIB_TORCH_INDEX" "$torch_req"
elif ! "$VENV/bin/python" -m pip install --quiet --no-index --no-deps "$torch_req" 2>/dev/null; then
  "$VENV/bin/python" -m pip install --quiet --index-url https://download.pytorch.org/whl/cpu "$torch_req"
fi
# Every other package at the version the committed outputs were made with (constraints.txt).
"$VENV/bin/python" -m pip install --quiet -c constraints.txt -e ".[test]"
venv_bin_on_path
register_kernel
echo "$want" > "$STAMP"
echo "setup: done"
