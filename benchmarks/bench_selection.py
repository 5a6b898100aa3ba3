"""Benchmark: rank all of Adult's Ω by V_k, against the one-record-at-a-time loop of the authors' code.

The loop scores one record at a time against all others (one vectorised distance row,
then a sort), as the authors' code does; it is timed in the same run on a subsample and
extrapolated to Ω.  Both must give the same scores on the subsample.

Then the Minkowski search of Fig. 3b (``--minkowski-p``, default 3): the search by
Euclidean bounds against the float32-candidate search it replaced for that p, both
on all of Ω in the same run, both with same-profile pruning; they must return the
same distances.

Usage: ``VRLIB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_selection.py [--loop-records 300]``
The last line printed is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

import vrlib
from vrlib.distance import kneighbors
from vrlib.encoding import TableEncoder
from vrlib.selection import vulnerability_scores


def loop_scores(encoded, rows, k: int) -> np.ndarray:
    """V_k of ``rows``, one record at a time: its distance to every record, sorted."""
    h, c = encoded.onehot, encoded.continuous
    f_cat, f_cont = encoded.n_categorical, encoded.n_continuous
    f = f_cat + f_cont
    c_norm = np.linalg.norm(c, axis=1)
    out = []
    for i in rows:
        cat_sim = (h @ h[i]) / f_cat
        with np.errstate(invalid="ignore", divide="ignore"):
            cont_sim = (c @ c[i]) / (c_norm * c_norm[i])
        both_zero = (c_norm == 0) & (c_norm[i] == 0)
        cont_sim = np.where(both_zero, 1.0, np.nan_to_num(cont_sim, nan=0.0))
        d = 1 - f_cat / f * cat_sim - f_cont / f * cont_sim
        d = np.delete(d, i)  # the other records
        out.append(np.sort(d)[:k].mean())
    return np.array(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--loop-records", type=int, default=300, help="records scored by the loop (extrapolated)")
    parser.add_argument("--minkowski-p", type=float, default=3.0, help="order of the Minkowski search timed (0: skip)")
    args = parser.parse_args()

    df, schema = vrlib.load("adult")
    n = len(df)
    print(f"Adult Ω: {n} records, k = {args.k}, {os.cpu_count()} cores")

    start = time.perf_counter()
    ours = vulnerability_scores(df, schema, k=args.k).to_numpy()
    seconds = time.perf_counter() - start
    print(f"vrlib (blockwise, all {n} records): {seconds:.2f} s")

    rows = np.random.default_rng(0).choice(n, size=args.loop_records, replace=False)
    encoded = TableEncoder(schema).fit_transform(df)
    start = time.perf_counter()
    looped = loop_scores(encoded, rows, args.k)
    loop_seconds = time.perf_counter() - start
    loop_total = loop_seconds / len(rows) * n
    print(f"loop ({len(rows)} records): {loop_seconds:.2f} s -> {loop_total:.1f} s extrapolated to Ω")
    max_diff = float(np.abs(looped - ours[rows]).max())
    print(f"largest score difference on the subsample: {max_diff:.2e}")
    if max_diff > 1e-9:
        raise SystemExit("the two implementations disagree")
    ratio = loop_total / seconds
    print(f"speed-up: {ratio:.1f}x")
    figures = {
        "omega_rows": n, "k": args.k, "seconds": round(seconds, 3),
        "loop_records": len(rows), "loop_seconds_extrapolated": round(loop_total, 2),
        "ratio_vs_loop": round(ratio, 2), "max_abs_diff": max_diff,
    }  # fmt: skip
    if args.minkowski_p:
        figures.update(bench_minkowski(encoded, args.k, args.minkowski_p))
    print(json.dumps(figures))


def bench_minkowski(encoded, k: int, p: float) -> dict:
    """Wall seconds of the k-nearest search under Minkowski p, by Euclidean bounds and by float32 candidates."""
    seconds, found = {}, {}
    for bounded in (False, True):
        start = time.perf_counter()
        found[bounded], _ = kneighbors(encoded, k, metric="minkowski", p=p, bounded=bounded)
        seconds[bounded] = time.perf_counter() - start
        print(
            f"Minkowski p = {p:g}, {'Euclidean bounds' if bounded else 'float32 candidates'}: {seconds[bounded]:.1f} s"
        )
    same = bool(np.array_equal(found[True], found[False]))
    print(f"same distances: {same}; speed-up {seconds[False] / seconds[True]:.1f}x")
    if not same:
        raise SystemExit("the two Minkowski searches disagree")
    return {
        "minkowski_p": p,
        "minkowski_bounded_s": round(seconds[True], 2),
        "minkowski_candidates_s": round(seconds[False], 2),
        "minkowski_speedup": round(seconds[False] / seconds[True], 2),
    }


if __name__ == "__main__":
    main()
