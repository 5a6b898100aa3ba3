"""Benchmark: counting-query answers per second, zeta transform vs a straightforward pandas loop.

On Adult (F = 15, all 32,767 attribute subsets), synthetic datasets of 1,000 records
(bootstrap samples of Ω, which is all the counting cares about), one target record.
The zeta approach answers every subset for every dataset; the pandas loop answers a
random sample of subsets on one dataset, one boolean filter per query, and is timed in
the same run.  The answers of the sampled subsets are checked to agree.

Usage::

    VRLIB_DATA_DIR=... python benchmarks/bench_queries.py [--datasets 200] [--loop-queries 300]

The last printed line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pandas as pd

import vrlib
from vrlib.attacks.query import choose_subsets, query_answers, subset_columns
from vrlib.encoding import encode_table
from vrlib.games import SyntheticDatasets


def pandas_loop(df: pd.DataFrame, target: pd.Series, schema, subsets) -> np.ndarray:
    """One filter per query: the obvious implementation the zeta transform replaces."""
    out = np.empty(len(subsets), dtype=np.int64)
    for k, mask in enumerate(subsets):
        keep = pd.Series(True, index=df.index)
        for c in subset_columns(int(mask), schema):
            keep &= (df[c] == target[c]) if c in schema.categorical else (df[c] <= target[c])
        out[k] = int(keep.sum())
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=200, help="synthetic datasets for the zeta approach")
    parser.add_argument("--records", type=int, default=1000, help="records per synthetic dataset")
    parser.add_argument("--loop-queries", type=int, default=300, help="queries timed with the pandas loop")
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats (best is kept)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    df, schema = vrlib.load("adult")
    rng = np.random.default_rng(args.seed)
    frames = [df.iloc[rng.integers(len(df), size=args.records)].reset_index(drop=True) for _ in range(args.datasets)]
    target = df.iloc[[int(rng.integers(len(df)))]]
    n_subsets = (1 << len(schema.columns)) - 1
    print(f"Adult: F={len(schema.columns)}, {n_subsets} subsets, {args.datasets} datasets of {args.records} records")

    def best(fn):
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            result = fn()
            times.append(time.perf_counter() - t0)
        return min(times), result

    t_frames, answers = best(lambda: query_answers(frames, target, schema))
    cats = {c: df[c].cat.categories for c in schema.categorical}
    batch = SyntheticDatasets.from_arrays(
        [encode_table(f, schema, cats) for f in frames], np.zeros(len(frames)), schema, cats, tuple(df.columns)
    )
    t_encoded, answers_enc = best(lambda: query_answers(batch, target, schema))
    assert np.array_equal(answers, answers_enc)
    n_answers = answers.size
    print(f"zeta, list of DataFrames: {t_frames:.3f} s for {n_answers:,} answers")
    print(f"zeta, encoded batch:      {t_encoded:.3f} s for {n_answers:,} answers")

    loop_subsets = choose_subsets(len(schema.columns), args.loop_queries, seed=args.seed)
    t0 = time.perf_counter()
    loop = pandas_loop(frames[0], target.iloc[0], schema, loop_subsets)
    t_loop = time.perf_counter() - t0
    assert np.array_equal(loop, answers[0, loop_subsets - 1]), "the loop and the zeta transform disagree"
    print(f"pandas loop: {t_loop:.3f} s for {len(loop_subsets)} answers (agree with the zeta answers)")

    result = {
        "answers_per_s": n_answers / t_frames,
        "encoded_answers_per_s": n_answers / t_encoded,
        "loop_answers_per_s": len(loop_subsets) / t_loop,
        "ratio_vs_loop": (n_answers / t_frames) / (len(loop_subsets) / t_loop),
        "n_datasets": args.datasets,
        "n_records": args.records,
        "n_subsets": n_subsets,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
