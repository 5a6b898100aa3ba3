"""Benchmark: time per target of the target attention attack (preprocessing, training, prediction).

Two sizes, on Adult with synthetic datasets of 1,000 records:

* quick: 500 shadow + 100 test datasets, trained for ``--quick-epochs`` epochs (default
  the paper's 500, measured in full, no early stopping);
* paper: 4,000 shadow + 200 test datasets; preprocessing and prediction are measured in
  full, training for ``--paper-epochs`` epochs only (default 5) and the time of 500
  epochs extrapolated linearly from the measured time per epoch (each epoch does the
  same work: the same batches and one validation pass).

The synthetic datasets are *bootstrap samples of Adult rows*, not generator output: an
IN dataset is 999 rows drawn with replacement plus the target, an OUT dataset 1,000
rows drawn with replacement.  The attack's cost depends only on the number of datasets,
their size and ``top_x`` (not on the generator), so this measures what a game would
cost without fitting 4,800 generators.  The AUC printed is that of this (very leaky)
bootstrap "generator", a sanity check only (the copied target is at distance 0, the
nearest OUT record typically at ~0.003, a small gap in the raw distance feature).

Preprocessing is timed both from lists of DataFrames and from the integer-coded batches
that :mod:`vrlib.games` produces (``SyntheticDatasets``).  Training uses one CPU thread
(the attack's default); the load average of the machine is reported, since other work
on a shared machine slows every figure down.

Usage::

    VRLIB_DATA_DIR=... python benchmarks/bench_attention.py [--quick-epochs 500] [--paper-epochs 5]

The last printed line is one JSON object of the measured figures.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
import pandas as pd
import torch

import vrlib
from vrlib.attacks.attention import AttentionAttack, preprocess
from vrlib.cache import encode_table
from vrlib.games import SyntheticDatasets
from vrlib.metrics import auc

PAPER_EPOCHS = 500


def bootstrap_game(df, target, n_datasets, n_records, rng):
    """Half IN (n-1 bootstrap rows + the target), half OUT (n bootstrap rows), shuffled."""
    labels = rng.permutation(np.arange(n_datasets) % 2)
    frames = []
    for label in labels:
        rows = rng.integers(len(df), size=n_records - int(label))
        frame = df.iloc[rows]
        if label:
            frame = pd.concat([frame, target])
        frames.append(frame.reset_index(drop=True))
    return frames, labels


def as_batch(frames, labels, df, schema):
    cats = {c: df[c].cat.categories for c in schema.categorical}
    arrays = [encode_table(f, schema, cats) for f in frames]
    return SyntheticDatasets.from_arrays(arrays, labels, schema, cats, tuple(df.columns))


def run_size(name, df, schema, target, n_shadow, n_test, epochs, args, rng):
    print(f"\n[{name}] {n_shadow} shadow + {n_test} test datasets of {args.records} records, {epochs} epochs")
    shadow, y_shadow = bootstrap_game(df, target, n_shadow, args.records, rng)
    test, y_test = bootstrap_game(df, target, n_test, args.records, rng)
    shadow_batch = as_batch(shadow, y_shadow, df, schema)
    test_batch = as_batch(test, y_test, df, schema)

    attack = AttentionAttack(schema, max_epochs=epochs, patience=None, lr=args.lr, seed=args.seed)
    t0 = time.perf_counter()
    attack.fit(shadow_batch, None, target)
    fit_s = time.perf_counter() - t0
    pre_fit = attack.timings_["preprocess"]  # encoder fit + preprocessing of the shadow datasets
    train_s = attack.timings_["train"]
    per_epoch = train_s / attack.n_epochs_

    # Preprocessing alone, both input forms, with the fitted encoder (shadow datasets).
    t0 = time.perf_counter()
    pre_frames = preprocess(shadow, target, attack.encoder_, attack.top_x)
    pre_frames_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    pre_batch = preprocess(shadow_batch, target, attack.encoder_, attack.top_x)
    pre_batch_s = time.perf_counter() - t0
    assert np.array_equal(pre_frames.records, pre_batch.records), "the two input forms disagree"

    t0 = time.perf_counter()
    attack.transform(test_batch)
    pre_test_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    proba = attack.predict_proba(test_batch)
    predict_s = time.perf_counter() - t0
    test_auc = auc(y_test, proba)

    extrapolated = epochs < PAPER_EPOCHS
    train_500 = per_epoch * PAPER_EPOCHS
    out = {
        "n_shadow": n_shadow,
        "n_test": n_test,
        "records_per_dataset": args.records,
        "n_features": attack.n_features_,
        "device": str(attack.device_),
        "fit_preprocess_s": round(pre_fit, 3),
        "preprocess_shadow_frames_s": round(pre_frames_s, 3),
        "preprocess_shadow_batch_s": round(pre_batch_s, 3),
        "preprocess_ms_per_dataset_frames": round(1000 * pre_frames_s / n_shadow, 3),
        "preprocess_ms_per_dataset_batch": round(1000 * pre_batch_s / n_shadow, 3),
        "epochs_measured": attack.n_epochs_,
        "train_measured_s": round(train_s, 3),
        "s_per_epoch": round(per_epoch, 4),
        "train_500_epochs_s": round(train_500, 1),
        "train_500_epochs_extrapolated": extrapolated,
        "preprocess_test_s": round(pre_test_s, 3),
        "predict_test_s": round(predict_s, 3),
        "per_target_500_epochs_s": round(pre_fit + train_500 + predict_s, 1),
        "test_auc_bootstrap": round(test_auc, 4),
    }
    how = "extrapolated from" if extrapolated else "measured over"
    print(f"  fit total {fit_s:.2f} s: encoder + preprocessing {pre_fit:.2f} s, training {train_s:.2f} s "
          f"({attack.n_epochs_} epochs, {per_epoch:.3f} s/epoch)")  # fmt: skip
    print(f"  preprocessing alone: {out['preprocess_ms_per_dataset_frames']} ms/dataset from DataFrames, "
          f"{out['preprocess_ms_per_dataset_batch']} ms/dataset from an encoded batch")  # fmt: skip
    print(f"  500 epochs of training: {train_500:.1f} s ({how} {attack.n_epochs_} epochs)")
    print(f"  prediction of {n_test} test datasets: {predict_s:.2f} s (of which preprocessing {pre_test_s:.2f} s)")
    print(f"  per target with 500 epochs: {out['per_target_500_epochs_s']} s; bootstrap AUC {test_auc:.3f}")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1000, help="records per synthetic dataset")
    parser.add_argument("--quick-epochs", type=int, default=PAPER_EPOCHS, help="epochs trained at the quick size")
    parser.add_argument("--paper-epochs", type=int, default=5, help="epochs trained at the paper size (then extrapolated)")
    parser.add_argument("--skip-paper", action="store_true", help="only the quick size")
    parser.add_argument("--lr", type=float, default=1e-3, help="Adamax learning rate (the attack's default 1e-3)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    df, schema = vrlib.load("adult")
    rng = np.random.default_rng(args.seed)
    target = df.iloc[[int(rng.integers(len(df)))]]
    load_before = os.getloadavg()
    print(f"Adult, target row {target.index[0]}; torch {torch.__version__}, {os.cpu_count()} CPUs, "
          f"load average {load_before[0]:.2f}")  # fmt: skip

    result = {
        "data": "bootstrap samples of Adult rows (IN: 999 + target, OUT: 1000), not generator output",
        "torch": torch.__version__,
        "cpus": os.cpu_count(),
        "torch_threads": 1,
        "top_x": 100,
        "lr": args.lr,
        "load_average_start": round(load_before[0], 2),
    }
    # Warm-up, not timed: the first training in a process imports part of torch's
    # compiler stack (torch.use_deterministic_algorithms), a one-off cost of seconds.
    t0 = time.perf_counter()
    warm, y_warm = bootstrap_game(df, target, 20, args.records, rng)
    AttentionAttack(schema, max_epochs=1, seed=args.seed).fit(warm, y_warm, target)
    result["warm_up_s"] = round(time.perf_counter() - t0, 3)
    print(f"warm-up (one-off imports, 20 datasets, 1 epoch): {result['warm_up_s']} s")
    result["quick"] = run_size("quick", df, schema, target, 500, 100, args.quick_epochs, args, rng)
    if not args.skip_paper:
        result["paper"] = run_size("paper", df, schema, target, 4000, 200, args.paper_epochs, args, rng)
    result["load_average_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
