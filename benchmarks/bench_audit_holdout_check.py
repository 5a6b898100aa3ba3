"""The audit's holdout check on every scenario of the validation benchmark: cross-fitted against the former pooled check.

``vrlib audit`` first asks whether the holdout is a sample of the training data's population
(:func:`vrlib.audit.holdout.holdout_check`); a shift gives the ``holdout_shift`` warning and
withholds every flag.  The check reads the training records and the holdout only, never the
release, so it can be rerun on the validation benchmark's scenarios
(``benchmarks/bench_audit_validation.py``) without making a single release: each scenario's
builder is called as the benchmark calls it (same functions, same seeds, same splits), with its
releases replaced by real records of the generator's data (the scenario's ``make_release``
with no generator).  Its training records and holdout are then checked as :func:`vrlib.audit`
checks them (:func:`vrlib.audit.inputs.check_tables`, then the holdout check at seed 0).

Per scenario: the cross-fitted check (the audit's: a model fitted on each half scores the
other, the mean of the two halves' AUCs with the mean of their DeLong standard errors) and the
former check (5-fold cross-validation, the scores pooled into one DeLong interval; the audit's
until commit fdd323d, recomputed here from the same subsample, encoding, model and folds' seed),
each with its AUC, interval and whether it calls the holdout shifted (interval above 0.5 and
AUC at least ``SHIFT_AUC``), and the codes of the input warnings ``check_tables`` gives.
A training/holdout pair shared by several scenarios is checked once.

``--heldout`` checks instead the training/holdout pairs of the held-out scenarios of
``docs/audit.md`` (not in the benchmark): Adult's split 0 (the benchmark's, with BayNet and TVAE
releases and other planting fractions) and split 7, each 10,000 / 10,000; Census's 10,000-record
random subset (``load("census", variant="random10000")``) split 3,000 / 3,000 (4,000 other
records) with seeds 0 and 5; every split by :func:`vrlib.experiments.audit.split_rows`, the
release from the other records (here: those records themselves); and the split of the cost run
(:func:`vrlib.experiments.audit.adult_release` at 30,000 / 15,222, seed 0, its holdout less the
records with a category its training records lack, the release here the training records).
``--null-splits N`` checks instead ``N`` further random splits of each dataset at the benchmark's
sizes (split seeds 100 to 99 + N): the calibration of both checks where the holdout is correct
(per dataset: the AUC's standard deviation over the splits against the mean standard error, and
how many intervals lie above or below 0.5 and how many splits are called shifted).
``--small`` runs the validation benchmark's small version (a synthetic mixed table, seconds).
The last line printed is one JSON object.

Run: ``VRLIB_DATA_DIR=... python benchmarks/bench_audit_holdout_check.py [--small] [--heldout | --null-splits N] [--only adult,census]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_audit_validation as validation  # noqa: E402

SEED = 0  # the validation benchmark audits at seed 0
LEVEL = 0.95


def pooled_check(train, holdout, schema, seed: int = 0, level: float = LEVEL, max_rows: int = 2500, folds: int = 5):
    """The former holdout check: ``folds``-fold cross-validated scores pooled into one DeLong interval.

    The subsample, encoding, model and folds' seed are the audit's (:func:`vrlib.audit.holdout.holdout_check`
    before commit fdd323d), so it differs from the cross-fitted check only in how the folds' scores are used.
    """
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from threadpoolctl import threadpool_limits

    from vrlib.audit.holdout import SHIFT_AUC, design
    from vrlib.parallel import derive_seed
    from vrlib.uncertainty import delong_auc

    X, y = design(train, holdout, schema, seed, max_rows)  # the same subsample and encoding as the audit's
    model = HistGradientBoostingClassifier(max_iter=50, random_state=derive_seed(seed, "audit holdout model") % 2**31)
    split = StratifiedKFold(folds, shuffle=True, random_state=derive_seed(seed, "audit holdout folds") % 2**31)
    with threadpool_limits(1):
        scores = cross_val_predict(model, X, y, cv=split, method="predict_proba")[:, 1]
    auc = delong_auc(y, scores, level)
    shift = bool(auc["ci_low"] > 0.5 and auc["auc"] >= SHIFT_AUC)
    return {"auc": auc["auc"], "ci_low": auc["ci_low"], "ci_high": auc["ci_high"], "se": auc["se"], "shift": shift}


@contextmanager
def real_releases():
    """The validation benchmark's releases replaced by real records of the generator's data (no fit, no cache)."""
    original = validation.make_release

    def stand_in(df, schema, rows, generator, n, seed, small):
        return original(df, schema, rows, None, n, seed, small)

    validation.make_release = stand_in
    try:
        yield
    finally:
        validation.make_release = original


def _fingerprint(train: pd.DataFrame, holdout: pd.DataFrame) -> tuple:
    return tuple(int(pd.util.hash_pandas_object(t, index=False).sum()) & (2**63 - 1) for t in (train, holdout))


def check_pair(train, release, holdout, schema) -> dict:
    """Both checks on the tables as the audit sees them (after :func:`vrlib.audit.inputs.check_tables`)."""
    from vrlib.audit.holdout import holdout_check
    from vrlib.audit.inputs import AuditWarning, check_tables

    info = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train, release, holdout = check_tables(train, release, holdout, schema, info=info)
    codes = sorted({w.message.code for w in caught if isinstance(w.message, AuditWarning)})
    out = {"input_warnings": codes, "n_holdout_in_train": info["n_holdout_in_train"]}
    for name, fn in (("cross_fitted", holdout_check), ("pooled", pooled_check)):
        start = time.perf_counter()
        res = fn(train, holdout, schema, seed=SEED, level=LEVEL)
        out[name] = {k: res[k] for k in ("auc", "ci_low", "ci_high", "se", "shift")} | {
            "seconds": time.perf_counter() - start
        }
    out["n_each"] = min(len(train), len(holdout), 2500)
    return out


def heldout():
    """``(dataset, scenario, kind, builder, schema)`` for the held-out scenarios' training/holdout pairs."""
    from vrlib.data import load
    from vrlib.experiments.audit import split_rows

    def pair(df, sizes, seed):
        n_other = len(df) - sizes["train"] - sizes["holdout"]
        tr, ho, ot = split_rows(len(df), (sizes["train"], sizes["holdout"], n_other), seed)
        rel = validation.make_release(df, None, ot, None, sizes["release"], seed, False)
        return df.iloc[tr].reset_index(drop=True), rel, df.iloc[ho].reset_index(drop=True), np.array([], int)

    df, schema = load("adult")
    sizes = {"train": 10000, "holdout": 10000, "release": 10000}
    for seed in (0, 7):
        yield "adult", f"split {seed}", "null", lambda seed=seed: pair(df, sizes, seed), schema

    def cost_run():
        from vrlib.experiments.audit import _seen_in

        tr, ho = split_rows(len(df), (30000, 15222), 0)
        train = df.iloc[tr].reset_index(drop=True)
        return train, train, _seen_in(df.iloc[ho], train, schema), np.array([], int)

    yield "adult", "cost run: 30,000 / 15,222, split 0", "null", cost_run, schema
    dfc, schc = load("census", variant="random10000")
    sizes_c = {"train": 3000, "holdout": 3000, "release": 4000}
    for seed in (0, 5):
        yield (
            "census",
            f"random10000, 3,000 / 3,000, split {seed}",
            "null",
            lambda seed=seed: pair(dfc, sizes_c, seed),
            schc,
        )


def null_splits(small: bool, n: int):
    """``(dataset, scenario, kind, builder, schema)`` for ``n`` further random splits of each dataset (seeds 100 on)."""
    from vrlib.experiments.audit import split_rows

    def pair(df, sizes, seed):
        n_other = len(df) - sizes["train"] - sizes["holdout"]
        tr, ho, ot = split_rows(len(df), (sizes["train"], sizes["holdout"], n_other), seed)
        rel = validation.make_release(df, None, ot, None, sizes["release"], seed, False)
        return df.iloc[tr].reset_index(drop=True), rel, df.iloc[ho].reset_index(drop=True), np.array([], int)

    for name, df, schema, sizes, _, _ in validation.datasets(small):
        for seed in range(100, 100 + n):
            yield (
                name,
                f"null split {seed}",
                "null split",
                lambda df=df, sizes=sizes, seed=seed: pair(df, sizes, seed),
                schema,
            )


def calibration(rows) -> dict:
    """Per dataset and check, over the null splits: the AUC's spread against its standard error, and the calls."""
    out = {}
    for name in sorted({r["dataset"] for r in rows}):
        for check in ("cross_fitted", "pooled"):
            res = [r[check] for r in rows if r["dataset"] == name]
            auc = np.array([x["auc"] for x in res])
            se = np.array([x["se"] for x in res])
            out[f"{name} {check}"] = {
                "n_splits": len(res),
                "auc_mean": float(auc.mean()),
                "auc_sd": float(auc.std(ddof=1)) if len(res) > 1 else None,
                "se_mean": float(se.mean()),
                "sd_over_se": float(auc.std(ddof=1) / se.mean()) if len(res) > 1 else None,
                "sd_of_z": float(np.std((auc - 0.5) / se, ddof=1)) if len(res) > 1 else None,
                "ci_low_above_half": int(sum(x["ci_low"] > 0.5 for x in res)),
                "ci_high_below_half": int(sum(x["ci_high"] < 0.5 for x in res)),
                "called_shifted": int(sum(x["shift"] for x in res)),
            }
    return out


def todo(args):
    """``(dataset, scenario, kind, builder, schema)`` of every scenario to check."""
    if args.heldout:
        yield from heldout()
        return
    if args.null_splits:
        yield from null_splits(args.small, args.null_splits)
        return
    for name, df, schema, sizes, shift, generators in validation.datasets(args.small):
        for scenario, kind, _, builder in validation.scenarios(name, df, schema, sizes, shift, generators, args.small):
            yield name, scenario, kind, builder, schema


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="store_true", help="the validation benchmark's small version")
    parser.add_argument(
        "--heldout", action="store_true", help="the held-out scenarios' and the cost run's splits instead"
    )
    parser.add_argument(
        "--null-splits", type=int, default=0, help="instead: this many further random splits of each dataset"
    )
    parser.add_argument("--only", default=None, help="run only the datasets named (comma-separated)")
    args = parser.parse_args(argv)
    rows, done, start = [], {}, time.perf_counter()
    if args.heldout and (args.small or args.null_splits):
        parser.error("--heldout excludes --small and --null-splits")
    if args.null_splits < 0:
        parser.error("--null-splits must be 0 or more")
    first = {}
    with real_releases():
        for name, scenario, kind, builder, schema in todo(args):
            if args.only and name not in args.only.split(","):
                continue
            train, release, holdout, _ = builder()
            first.setdefault(name, train)
            key = (name, *_fingerprint(train, holdout))
            if key not in done:
                done[key] = check_pair(train, release, holdout, schema)
            res = done[key]
            rows.append(
                {
                    "dataset": name,
                    "scenario": scenario,
                    "kind": kind,
                    "n_train": len(train),
                    "n_holdout": len(holdout),
                    # planting changes the release only: these scenarios' training records are the first one's
                    "train_as_first_scenario": bool(train.equals(first[name])),
                    **res,
                }
            )
            cf, po = res["cross_fitted"], res["pooled"]
            print(
                f"{name:9s} {scenario:48s} cross-fitted {cf['auc']:.4f} [{cf['ci_low']:.3f}, {cf['ci_high']:.3f}]"
                f"{' SHIFT' if cf['shift'] else '      '}  pooled {po['auc']:.4f} [{po['ci_low']:.3f}, "
                f"{po['ci_high']:.3f}]{' SHIFT' if po['shift'] else ''}",
                file=sys.stderr,
                flush=True,
            )
    print("| dataset | scenario | cross-fitted AUC [95 %] | shift | pooled 5-fold AUC [95 %] | shift |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        cf, po = r["cross_fitted"], r["pooled"]
        print(
            f"| {r['dataset']} | {r['scenario']} | {cf['auc']:.3f} [{cf['ci_low']:.3f}, {cf['ci_high']:.3f}] | "
            f"{'yes' if cf['shift'] else 'no'} | {po['auc']:.3f} [{po['ci_low']:.3f}, {po['ci_high']:.3f}] | "
            f"{'yes' if po['shift'] else 'no'} |"
        )
    summary = {
        "n_scenarios": len(rows),
        "n_pairs_checked": len(done),
        "disagreements": [
            f"{r['dataset']}: {r['scenario']}" for r in rows if r["cross_fitted"]["shift"] != r["pooled"]["shift"]
        ],
        "shift_scenarios_called_shifted": all(r["cross_fitted"]["shift"] for r in rows if r["kind"] == "shift"),
        "others_called_shifted": [
            f"{r['dataset']}: {r['scenario']}" for r in rows if r["kind"] != "shift" and r["cross_fitted"]["shift"]
        ],
    }
    if args.null_splits:
        summary["calibration"] = calibration(rows)
    out = {
        "benchmark": "bench_audit_holdout_check",
        "small": args.small,
        "heldout": args.heldout,
        "null_splits": args.null_splits,
        "rows": rows,
        "summary": summary,
        "seconds": time.perf_counter() - start,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
    }
    print(json.dumps(out, allow_nan=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
