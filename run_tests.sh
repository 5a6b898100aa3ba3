#!/usr/bin/env bash
# The project's tests: unit tests (pytest), every notebook under the smoke profile, then the linter and the formatter's check (ruff).
# Creates the environment first when it is missing. Extra arguments go to pytest (e.g. tests/test_cli.py, -k NAME);
# the smoke notebooks and ruff run all the same.
set -euo pipefail
cd "$(dirname "$0")"
# Its own help (pytest's would be printed and every smoke notebook run after it).
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
  echo "(pytest's own options: .venv/bin/python -m pytest --help)"
  exit 0
fi
if [[ -z "${VRLIB_DATA_DIR:-}" && -d ../shared/data ]]; then
  export VRLIB_DATA_DIR=../shared/data
fi
if [[ -n "${VRLIB_DATA_DIR:-}" && ! -d "$VRLIB_DATA_DIR" ]]; then
  echo "run_tests.sh: VRLIB_DATA_DIR='$VRLIB_DATA_DIR' is not a folder; point it at the folder that holds the data files (see data/README.md), or unset it" >&2
  exit 2
fi
scripts/setup_env.sh
status=0
.venv/bin/python -m pytest -q "$@" || status=$?
# pytest exits 2 when interrupted (Ctrl-C) or misused: stop there rather than start the notebooks.
if [[ $status -eq 2 ]]; then exit 2; fi
./run_all.sh --profile smoke || status=$?
# The linter (pyflakes and pycodestyle) and the formatter's check, configured in pyproject.toml:
# seconds, and each names what it finds (`.venv/bin/ruff format .` rewrites the files it lists).
.venv/bin/ruff check . || status=1
.venv/bin/ruff format --check . || status=1
exit $status
