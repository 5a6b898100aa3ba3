#!/usr/bin/env bash
# Run every notebook with papermill under a profile and export figures, tables and HTML.
#
#   ./run_all.sh [--profile smoke|quick|paper] [--only PATTERN] [--seed S]
#
# Creates the environment first when it is missing. Executed notebooks and their HTML go
# to results/<profile>/ (git-ignored). Figures go to figures/ and tables to figures/tables/,
# except under the smoke profile, which writes under results/smoke/ only so that it never
# overwrites the committed figures. Carries on past a failing notebook, lists every
# failure at the end and then exits non-zero.
set -euo pipefail
cd "$(dirname "$0")"

profile=quick
only=""
seed=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --profile) profile=${2:?--profile needs a value}; shift 2 ;;
    --only) only=${2:?--only needs a pattern}; shift 2 ;;
    --seed) seed=${2:?--seed needs a value}; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run_all.sh: unknown argument '$1' (see ./run_all.sh --help)" >&2; exit 2 ;;
  esac
done
case "$profile" in
  smoke|quick|paper) ;;
  *) echo "run_all.sh: unknown profile '$profile'; choose smoke, quick or paper" >&2; exit 2 ;;
esac

if [[ -z "${VRLIB_DATA_DIR:-}" && -d ../shared/data ]]; then
  export VRLIB_DATA_DIR=../shared/data
fi
# Absolute, because notebooks run with notebooks/ as their working directory.
[[ -n "${VRLIB_DATA_DIR:-}" ]] && export VRLIB_DATA_DIR=$(cd "$VRLIB_DATA_DIR" && pwd)

scripts/setup_env.sh
export PATH="$PWD/.venv/bin:$PATH"

shopt -s nullglob
notebooks=()
for nb in notebooks/[0-9][0-9]_*.ipynb; do
  if [[ -z "$only" || "$(basename "$nb")" == *$only* ]]; then notebooks+=("$nb"); fi
done
if [[ ${#notebooks[@]} -eq 0 ]]; then
  echo "run_all.sh: no notebooks to run${only:+ matching '$only'}"
  exit 0
fi

results="$PWD/results/$profile"
if [[ "$profile" == smoke ]]; then
  figures="$results/figures"
else
  figures="$PWD/figures"
fi
mkdir -p "$results" "$figures/tables"

failures=()
total_start=$SECONDS
i=0
for nb in "${notebooks[@]}"; do
  i=$((i + 1))
  name=$(basename "$nb" .ipynb)
  echo "[$i/${#notebooks[@]}] $name (profile $profile, seed $seed) ..."
  start=$SECONDS
  if papermill "$nb" "$results/$name.ipynb" --cwd notebooks -k python3 --log-level WARNING \
      -p profile "$profile" -p seed "$seed" \
      -p figures_dir "$figures" -p tables_dir "$figures/tables"; then
    jupyter nbconvert --log-level WARN --to html "$results/$name.ipynb" --output-dir "$results" >/dev/null 2>&1 \
      || echo "   (HTML export failed; the executed notebook is in $results)"
    echo "   ok in $((SECONDS - start)) s -> $results/$name.ipynb"
  else
    echo "   FAILED after $((SECONDS - start)) s: see $results/$name.ipynb" >&2
    failures+=("$name")
  fi
done

echo "run_all.sh: ${#notebooks[@]} notebook(s) in $((SECONDS - total_start)) s; figures in $figures"
if [[ ${#failures[@]} -gt 0 ]]; then
  echo "run_all.sh: ${#failures[@]} failed: ${failures[*]}" >&2
  exit 1
fi
