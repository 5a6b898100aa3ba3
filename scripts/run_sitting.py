#!/usr/bin/env python
"""Run one sitting of a long experiment: make the parts not yet saved, save each as it finishes, stop in time.

    .venv/bin/python scripts/run_sitting.py domias_fig6 --profile paper --budget-min 120 [--n-jobs N]
    .venv/bin/python scripts/run_sitting.py domias_fig6 --profile paper --status

The parts go to ``figures/<profile>/parts/<experiment>/`` (a ``smoke`` run's to
``results/smoke/figures/…``): commit them after the sitting, and the next sitting, on this
machine or a fresh clone, continues from them.  A saved part made by other code or settings,
or edited since, is made again.  The sitting starts the next parts only while the time they are
expected to take (from the saved parts' own times) fits in the budget, then prints what is
left.  Once every part is saved, the experiment's notebook draws the figure from the parts
(``05_domias`` for ``domias_fig6``).  Exit status: 0 when every part is saved, 3 when parts are
left, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vrlib.errors import VrlibError  # noqa: E402
from vrlib.experiments import PROFILES  # noqa: E402

EXPERIMENTS = ("domias_fig6",)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiment", choices=EXPERIMENTS)
    parser.add_argument("--profile", choices=PROFILES, required=True)
    parser.add_argument(
        "--budget-min", type=float, default=None, help="minutes this sitting may take (default: no limit)"
    )
    parser.add_argument(
        "--n-jobs", type=int, default=None, help="worker processes (default: all cores or $VRLIB_N_JOBS)"
    )
    parser.add_argument("--max-parts", type=int, default=None, help="stop after making this many parts")
    parser.add_argument(
        "--no-cache", action="store_true", help="do not read or write the cache of synthetic data and scores"
    )
    parser.add_argument(
        "--figures-dir", default=None, help="figures folder holding <profile>/parts (default: the project's)"
    )
    parser.add_argument("--status", action="store_true", help="only say how many parts are saved and which are left")
    args = parser.parse_args(argv)
    if args.budget_min is not None and not args.budget_min > 0:
        parser.error("--budget-min must be > 0")
    if args.max_parts is not None and args.max_parts < 1:
        parser.error("--max-parts must be ≥ 1")

    from vrlib.experiments import domias_parts

    try:
        if args.status:
            st = domias_parts.status(args.profile, args.figures_dir)
            print(f"{args.experiment} ({args.profile}): {st['done']} of {st['total']} parts saved in {st['folder']}")
            if st["left"]:
                print("left, in order: " + ", ".join(st["left"]))
            return 0 if not st["left"] else 3
        result = domias_parts.run_sitting(
            args.profile,
            budget_min=args.budget_min,
            figures_dir=args.figures_dir,
            n_jobs=args.n_jobs,
            cache=not args.no_cache,
            max_parts=args.max_parts,
        )
    except VrlibError as exc:
        print(f"run_sitting: {exc}", file=sys.stderr)
        return 2
    if result["left"]:
        print(f"next: {', '.join(result['left'][:5])}{' …' if len(result['left']) > 5 else ''}")
    print(f"{result['done']} of {result['total']} parts saved; commit the parts folder to keep them")
    return 0 if not result["left"] else 3


if __name__ == "__main__":
    sys.exit(main())
