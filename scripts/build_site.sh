#!/usr/bin/env bash
# Build the static site into build/site/ (front page build/site/index.html: the reproduction scorecard).
#
#   scripts/build_site.sh [--profiles paper,quick] [--executed DIR] [--out DIR]
#
# Reads only committed files (the executed notebooks in notebooks/executed/<profile>/, the tables,
# figures and manifests under figures/, docs/); executes nothing. Creates the environment first
# when it is missing (Sphinx and myst-nb are in the test extra, pinned in constraints.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup_env.sh
exec .venv/bin/python scripts/build_site.py "$@"
