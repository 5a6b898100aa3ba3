"""Benchmark: cost of one record of the Lost in the Averages comparison (Synthpop, Adult), old code against new.

The old code is the package ``vrlib`` of a git commit (``--old``, default ``main``),
imported beside the current one by ``benchmarks/_oldlib.py``; both run here, in the same
process, on the same machine state, each with a cold cache of its own.

For each version, with the paper profile's sizes scaled by ``--fraction`` (shadow datasets
and games per record; |D| = 1,000 and the attack's 100,000 queries as in the paper):

1. ``attack_records`` on the first record of the seeded order (:func:`lost.choose_records`):
   the datasets all records share (shadow OUT, traditional test OUT, model-seeded IN) and
   that record's own datasets and attack;
2. ``attack_records`` on the second record alone: its own datasets and attack, reading
   the shared datasets from the cache: the *marginal* cost of a record.

``paper_s_per_record`` = marginal + shared / 1,000 (the cost per record of a 1,000-record
run), divided by ``--fraction`` when scaled down (costs grow linearly with the number of
datasets; the attack's query features have a part that does not, so a scaled run slightly
overstates the per-record cost).  CPU seconds count this process and its worker
processes (psutil); wall seconds depend on the machine's load, reported beside them.
Both versions must give the same scores for the same records (the datasets are the same;
``identical_scores``).

Usage::

    VRLIB_DATA_DIR=... python benchmarks/bench_lost.py [--fraction 1.0] [--n-jobs 2] [--old main]

The last printed line is one JSON object.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _oldlib import load_old  # noqa: E402

try:
    import psutil
except ImportError:  # CPU of worker processes unknown: this process only
    psutil = None


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process, its finished children and its live worker processes."""
    if psutil is None:
        return time.process_time()
    me = psutil.Process()
    t = me.cpu_times()
    total = t.user + t.system + t.children_user + t.children_system
    for child in me.children(recursive=True):
        try:
            c = child.cpu_times()
            total += c.user + c.system
        except psutil.Error:
            pass
    return total


def load_average() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def timed(fn):
    w, c = time.perf_counter(), cpu_seconds()
    out = fn()
    return out, time.perf_counter() - w, cpu_seconds() - c


def run_version(lib, settings: dict, seed: int, n_jobs: int) -> dict:
    """Shared + first record, then the second record alone, with a cold cache; times and scores."""
    lost = importlib.import_module(f"{lib.__name__}.experiments.lost")
    df, schema = lib.load("adult")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["VRLIB_CACHE_DIR"] = tmp
        # Warm-up on tiny games (numba compiles the trees in every worker; imports), not timed.
        tiny = dict(settings, n_shadow=4, n_games=4)
        warm = lost.make_game("adult", df, schema, "synthpop", None, tiny, seed + 1, n_jobs=n_jobs)
        lost.attack_records(warm, lost.choose_records(warm, 1, seed + 1), tiny, seed + 1, False)
        game = lost.make_game("adult", df, schema, "synthpop", None, settings, seed, n_jobs=n_jobs)
        records = lost.choose_records(game, 2, seed)
        first, first_wall, first_cpu = timed(lambda: lost.attack_records(game, records[:1], settings, seed, False))
        fits_first = game.stats_["generated"]
        second, wall, cpu = timed(lambda: lost.attack_records(game, records[1:], settings, seed, False))
        fits_second = game.stats_["generated"] - fits_first
    return dict(
        records=[str(r) for r in records],
        first_wall_s=first_wall,
        first_cpu_s=first_cpu,
        record_wall_s=wall,
        record_cpu_s=cpu,
        fits_first=fits_first,
        fits_record=fits_second,
        scores={**first, **second},
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--fraction", type=float, default=1.0, help="fraction of the paper's shadow datasets and games per record"
    )
    parser.add_argument("--n-jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--old", default="main", help="git commit of the old code")
    parser.add_argument("--records", type=int, default=1000, help="records sharing the shared datasets")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not 0 < args.fraction <= 1:
        parser.error("--fraction must be in (0, 1]")
    import vrlib

    old, commit = load_old(args.old)
    result = {
        "generator": "synthpop",
        "dataset": "adult",
        "workers": args.n_jobs,
        "fraction": args.fraction,
        "old_commit": commit,
        "cpu_count": os.cpu_count(),
        "load_before": load_average(),
    }
    per_record = {}
    runs = {}
    for name, lib in (("old", old), ("new", vrlib)):
        lost = importlib.import_module(f"{lib.__name__}.experiments.lost")
        paper = lost.settings_for("paper")
        settings = dict(
            paper,
            n_shadow=max(4, round(paper["n_shadow"] * args.fraction)),
            n_games=max(4, round(paper["n_games"] * args.fraction)),
        )
        run = runs[name] = run_version(lib, settings, args.seed, args.n_jobs)
        for kind in ("cpu", "wall"):
            shared = max(run[f"first_{kind}_s"] - run[f"record_{kind}_s"], 0.0)
            per_record[(name, kind)] = (run[f"record_{kind}_s"] + shared / args.records) / args.fraction
        print(
            f"{name}: shared + record 1: {run['fits_first']} fits, {run['first_cpu_s']:.1f} CPU s "
            f"({run['first_wall_s']:.1f} s wall); record 2: {run['fits_record']} fits, {run['record_cpu_s']:.1f} "
            f"CPU s ({run['record_wall_s']:.1f} s wall); paper sizes: {per_record[(name, 'cpu')]:.1f} CPU s per "
            f"record ({per_record[(name, 'wall')]:.1f} s wall)",
            flush=True,
        )
        result[name] = {k: v for k, v in run.items() if k != "scores"}
    identical = all(
        np.array_equal(runs["old"]["scores"][r][k], runs["new"]["scores"][r][k])
        for r in runs["old"]["scores"]
        for k in runs["old"]["scores"][r]
    )
    result.update(
        paper_s_per_record={"old": per_record[("old", "cpu")], "new": per_record[("new", "cpu")]},
        paper_wall_s_per_record={"old": per_record[("old", "wall")], "new": per_record[("new", "wall")]},
        cpu_ratio=per_record[("old", "cpu")] / per_record[("new", "cpu")],
        wall_ratio=per_record[("old", "wall")] / per_record[("new", "wall")],
        identical_scores=bool(identical),
        load_after=load_average(),
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
