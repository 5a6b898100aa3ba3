#!/usr/bin/env bash
# Run every notebook with papermill under a profile and export figures, tables and HTML.
#
#   ./run_all.sh [--profile smoke|quick|paper] [--only PATTERN] [--seed S]
#
#   --profile  smoke (toy sizes, about a minute a notebook; CI), quick (the default) or paper
#              (the papers' sizes: hours to days)
#   --only     only the notebooks whose file name contains PATTERN (e.g. --only 03_)
#   --seed     the root seed (default 0)
#
# The data are looked for in $VRLIB_DATA_DIR, else in ../shared/data beside this checkout, else in
# data/, where the public ones are downloaded (see data/README.md); VRLIB_N_JOBS caps the worker
# processes and VRLIB_CACHE_DIR moves the cache (.cache/vrlib/ by default).
#
# Creates the environment first when it is missing. Executed notebooks and their HTML go
# to results/<profile>/ (git-ignored). Figures go to figures/<profile>/ and tables to
# figures/<profile>/tables/, each listed in figures/<profile>/manifest.json; the smoke
# profile writes under results/smoke/ only, never into figures/. Carries on past a
# failing notebook, lists every failure at the end and then exits non-zero. Ctrl-C stops
# everything: the running notebook, its kernel and its worker processes.
set -euo pipefail
cd "$(dirname "$0")"

profile=quick
only=""
seed=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --profile|--only|--seed)
      if [[ $# -lt 2 || "$2" == --* ]]; then
        echo "run_all.sh: $1 needs a value (see ./run_all.sh --help)" >&2; exit 2
      fi
      case "$1" in --profile) profile=$2 ;; --only) only=$2 ;; --seed) seed=$2 ;; esac
      shift 2 ;;
    # The help is the comment block at the top of this file (every '#' line after the first).
    -h|--help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
    *) echo "run_all.sh: unknown argument '$1' (see ./run_all.sh --help)" >&2; exit 2 ;;
  esac
done
case "$profile" in
  smoke|quick|paper) ;;
  *) echo "run_all.sh: unknown profile '$profile'; choose smoke, quick or paper" >&2; exit 2 ;;
esac
if [[ ! "$seed" =~ ^[0-9]+$ ]]; then
  echo "run_all.sh: --seed must be a non-negative integer, got '$seed'" >&2; exit 2
fi

# Data: vrlib looks in $VRLIB_DATA_DIR, else ../shared/data beside this checkout, else data/
# (vrlib.data.search_dirs); the same rule holds in Jupyter, so nothing is set here.
if [[ -n "${VRLIB_DATA_DIR:-}" ]]; then
  if [[ ! -d "$VRLIB_DATA_DIR" ]]; then
    echo "run_all.sh: VRLIB_DATA_DIR='$VRLIB_DATA_DIR' is not a folder; point it at the folder that holds the data files (see data/README.md), or unset it" >&2
    exit 2
  fi
  # Absolute, because notebooks run with notebooks/ as their working directory.
  VRLIB_DATA_DIR=$(cd "$VRLIB_DATA_DIR" && pwd)
  export VRLIB_DATA_DIR
fi

scripts/setup_env.sh
export PATH="$PWD/.venv/bin:$PATH"

shopt -s nullglob
all=(notebooks/[0-9][0-9]_*.ipynb)
notebooks=()
for nb in "${all[@]}"; do
  if [[ -z "$only" || "$(basename "$nb")" == *"$only"* ]]; then notebooks+=("$nb"); fi
done
if [[ ${#notebooks[@]} -eq 0 ]]; then
  names=$(for nb in "${all[@]}"; do basename "$nb" .ipynb; done | tr '\n' ' ')
  echo "run_all.sh: no notebook matches${only:+ --only '$only'}; the notebooks are: ${names:-none}" >&2
  exit 2
fi

# The Reporter puts each run's outputs in a <profile> folder inside figures_dir.
results="$PWD/results/$profile"
if [[ "$profile" == smoke ]]; then
  figures="$results/figures"
else
  figures="$PWD/figures"
fi
mkdir -p "$results"

# Ctrl-C (or kill): stop the running notebook with its kernel and workers, and run no more.
descendants() {
  local p
  for p in $(ps -o pid= --ppid "$1" 2>/dev/null); do descendants "$p"; echo "$p"; done
}
child=""
stop() {
  trap - INT TERM
  echo "run_all.sh: interrupted; stopping the running notebook, its kernel and its workers" >&2
  if [[ -n "$child" ]]; then
    local pids
    pids="$(descendants "$child") $child"
    kill -TERM $pids 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      kill -0 $pids 2>/dev/null || break
      sleep 0.5
    done
    kill -KILL $pids 2>/dev/null || true
  fi
  exit 130
}
trap stop INT TERM

# Progress bars only on a terminal: in a log (CI, a redirected run) they are noise.
progress=()
if [[ ! -t 1 ]]; then progress=(--no-progress-bar); fi
# Two known, harmless messages, each filtered by its exact text: the kernel's notice that its local
# ZeroMQ sockets are unencrypted (papermill's own kernel on this machine), and, under smoke only, the
# TableGAN-MCA attack's notice that a 300-record release has no collisions to learn from (expected
# at that size; at quick and paper sizes it would mean something, so it stays).
quiet_kernel() { grep -v --line-buffered -F 'Kernel is running over TCP without encryption' >&2 || true; }
if [[ "$profile" == smoke ]]; then
  export PYTHONWARNINGS="${PYTHONWARNINGS:+$PYTHONWARNINGS,}ignore:every shadow record is labelled a non-member:RuntimeWarning:vrlib.experiments.mca"
fi

failures=()
total_start=$SECONDS
i=0
for nb in "${notebooks[@]}"; do
  i=$((i + 1))
  name=$(basename "$nb" .ipynb)
  echo "[$i/${#notebooks[@]}] $name (profile $profile, seed $seed) ..."
  start=$SECONDS
  # In the background, so that the trap runs at once on Ctrl-C.
  papermill "$nb" "$results/$name.ipynb" --cwd notebooks -k python3 --log-level WARNING "${progress[@]}" \
      -p profile "$profile" -p seed "$seed" \
      -p figures_dir "$figures" -p tables_dir "$figures/tables" 2> >(quiet_kernel) &
  child=$!
  if wait "$child"; then
    jupyter nbconvert --log-level WARN --to html "$results/$name.ipynb" --output-dir "$results" >/dev/null 2>&1 \
      || echo "   (HTML export failed; the executed notebook is in $results)"
    echo "   ok in $((SECONDS - start)) s -> $results/$name.ipynb"
  else
    echo "   FAILED after $((SECONDS - start)) s: see $results/$name.ipynb" >&2
    failures+=("$name")
  fi
done

echo "run_all.sh: ${#notebooks[@]} notebook(s) in $((SECONDS - total_start)) s; figures in $figures/$profile"
# Committed outputs: say whether this run reproduced them (files rewritten byte for byte keep their
# manifest entries; the run's own provenance is in results/$profile/provenance.json).
if [[ "$profile" != smoke ]] && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  changed=$(git status --porcelain --untracked-files=all -- "figures/$profile")
  if [[ -n "$changed" ]]; then
    echo "run_all.sh: this run changed $(wc -l <<<"$changed") committed output file(s) under figures/$profile (see git status / git diff):"
    sed 's/^/   /' <<<"$changed"
  else
    echo "run_all.sh: every output under figures/$profile is as committed (git status clean there)"
  fi
fi
if [[ ${#failures[@]} -gt 0 ]]; then
  echo "run_all.sh: ${#failures[@]} failed: ${failures[*]}" >&2
  exit 1
fi
