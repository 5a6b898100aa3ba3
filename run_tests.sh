#!/usr/bin/env bash
# The project's tests: unit tests (pytest), then every notebook under the smoke profile.
# Creates the environment first when it is missing. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")"
export VRLIB_DATA_DIR=${VRLIB_DATA_DIR:-../shared/data}
scripts/setup_env.sh
status=0
.venv/bin/python -m pytest -q "$@" || status=$?
./run_all.sh --profile smoke || status=$?
exit $status
