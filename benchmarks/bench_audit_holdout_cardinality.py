"""The audit's holdout check on a high-cardinality column (postcodes): one-hot (the former design) against one
native categorical feature (:data:`vrlib.audit.holdout.MAX_ONEHOT`), in one process.

A synthetic mixed table (the validation benchmark's ``small_population``) with a ``postcode`` column of
``--categories`` values; training and holdout records of ``--rows`` each.  Two holdouts: a correct split
(no shift to find) and one whose postcodes come from half of them only (another region: a shift).  For
each encoding: the check's AUC, its interval, whether it calls a shift, and its CPU time, repeated
``--repeats`` times; the ratio of CPU times is against the one-hot design run in the same process.

Run: ``python benchmarks/bench_audit_holdout_cardinality.py [--categories 400] [--rows 5000]``; the last
line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_audit_validation import small_population  # noqa: E402


def tables(rows: int, categories: int, seed: int = 0):
    from vrlib.audit.inputs import check_tables
    from vrlib.data import Schema

    df, schema = small_population(3 * rows, seed)
    rng = np.random.default_rng(seed)
    df["postcode"] = pd.Categorical([f"P{v}" for v in rng.integers(0, categories, len(df))])
    schema = Schema([*schema.categorical, "postcode"], list(schema.continuous))
    train, holdout, release = df.iloc[:rows], df.iloc[rows : 2 * rows], df.iloc[2 * rows :]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        train, release, holdout = check_tables(train, release, holdout, schema)
    shifted = holdout.copy()
    half = [f"P{v}" for v in rng.integers(0, categories // 2, len(holdout))]
    shifted["postcode"] = pd.Categorical(half, categories=train["postcode"].cat.categories)
    return train, holdout, shifted, schema


def main(argv=None) -> int:
    from vrlib.audit import holdout as H

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--categories", type=int, default=400)
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    train, holdout, shifted, schema = tables(args.rows, args.categories)
    kept = H.MAX_ONEHOT
    results = {}
    for _ in range(args.repeats):
        for label, limit in (("onehot", 10**9), ("native", kept)):
            H.MAX_ONEHOT = limit
            try:
                for case, ho in (("correct", holdout), ("shifted", shifted)):
                    t = time.process_time()
                    res = H.holdout_check(train, ho, schema)
                    cpu = time.process_time() - t
                    row = results.setdefault(f"{label}/{case}", {**res, "cpu": []})
                    row["cpu"].append(cpu)
            finally:
                H.MAX_ONEHOT = kept
    for key, row in results.items():
        print(
            f"{key:16s} AUC {row['auc']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}] shift {row['shift']} "
            f"CPU {np.mean(row['cpu']):.2f} s",
            file=sys.stderr,
        )
    ratio = {
        case: float(np.mean(results[f"onehot/{case}"]["cpu"]) / np.mean(results[f"native/{case}"]["cpu"]))
        for case in ("correct", "shifted")
    }
    out = {
        "benchmark": "bench_audit_holdout_cardinality",
        "categories": args.categories,
        "rows": args.rows,
        "results": results,
        "cpu_ratio_onehot_over_native": ratio,
    }
    print(json.dumps(out, allow_nan=False, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
