#!/usr/bin/env python
"""What keeping the hidden tests' inputs from the student costs: each solution notebook graded with and without it.

    .venv/bin/python scripts/bench_hidden_restart.py [--repeats 2] [--timeout 120]

After a test cell whose hidden lines called the student's code, the grader stops the student's
process, so the next call starts a fresh one that knows nothing of the hidden inputs
(:func:`vrlib.classroom.grader._grade_test`).  This grades each assignment's solution notebook
``--repeats`` times with that restart and as often without it (the baseline: the process kept),
alternately, one at a time, in this process, and prints the median seconds of each and their
ratio as one JSON line, last.  Needs ``bwrap`` (and no data files).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=2, help="gradings of each notebook in each mode (default 2)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per cell or call (default 120)")
    args = parser.parse_args(argv)

    from vrlib import classroom
    from vrlib.classroom import fence

    restart = fence.Fence.forget_since

    def keep(self, mark):  # the baseline: the student's process goes on after hidden calls
        pass

    times: dict[str, list[float]] = {"restart": [], "baseline": []}
    classroom.grade(classroom.assignments()[0], timeout=args.timeout)  # warm up: the box's vrlib copy, caches
    for rep in range(args.repeats):
        for source in classroom.assignments():
            for mode in ("restart", "baseline") if rep % 2 == 0 else ("baseline", "restart"):
                fence.Fence.forget_since = restart if mode == "restart" else keep
                start = time.monotonic()
                report = classroom.grade(source, source=source, timeout=args.timeout)
                times[mode].append(time.monotonic() - start)
                if report.points != report.max_points:
                    print(report.format(), file=sys.stderr)
                    return 1
                print(f"{mode:8} {source.stem:34} {times[mode][-1]:6.2f} s", file=sys.stderr)
    fence.Fence.forget_since = restart
    median = {k: statistics.median(v) for k, v in times.items()}
    print(
        json.dumps(
            {
                "gradings_each": len(times["restart"]),
                "median_s_restart": round(median["restart"], 2),
                "median_s_baseline": round(median["baseline"], 2),
                "ratio": round(median["restart"] / median["baseline"], 3),
                "extra_s_per_notebook": round(median["restart"] - median["baseline"], 2),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
