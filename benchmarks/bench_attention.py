"""Benchmark: time per target of the target attention attack at the paper's size, grouped vs alone vs before.

On Adult, one target, 4,000 shadow + 200 test synthetic datasets of 1,000 records
(the paper's sizes), top_x = 100, batch 20, 500 epochs.  Three ways of training are
timed in this process on the same preprocessed data:

* ``before``: the training loop the project had before grouped training (one
  :class:`~vrlib.attacks.attention.TargetAttentionNet`, dense one-hot inputs,
  ``nn.Dropout``, a ``loss.item()`` per step), kept here as the yardstick;
* ``single``: :class:`~vrlib.attacks.attention.AttentionAttack` training one target alone;
* ``grouped``: ``--group`` targets trained together as one stacked model
  (:func:`vrlib.attacks.attention.fit_attacks`'s path), time divided by the group size.

Training runs a few epochs only (``--epochs``, ``--before-epochs``) and the time of 500
epochs is extrapolated linearly from the measured time per epoch (every epoch does the
same work: the same number of batches and one validation pass).  Everything is timed in
CPU seconds of this process (``time.process_time``, one thread), which the other work
of a shared machine inflates far less than wall time.  Preprocessing (encoder
fit + the 100 closest unique records of each shadow dataset) and prediction of the test
datasets are measured in full, once, and added to each way's training time.

The synthetic datasets are *bootstrap samples of Adult rows*, not generator output (IN:
999 rows + the target, OUT: 1,000 rows): the attack's cost depends only on the number and
size of the datasets and on ``top_x``, so this measures a game's cost without fitting
4,200 generators.  The group's targets share these datasets (with their own seeds), which
costs the same as their own datasets would.  Training uses one CPU thread (the attack's
default); the load average is printed, since other work on a shared machine slows every
figure down (the ratios are measured side by side and hold).

Usage::

    VRLIB_DATA_DIR=... python benchmarks/bench_attention.py [--epochs 3] [--before-epochs 2] [--group 16]

The last printed line is one JSON object; ``paper_s_per_target`` (grouped) and
``paper_s_per_target_single`` are read by other tools.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import time

import numpy as np
import pandas as pd
import torch
from torch import nn

import vrlib
from vrlib.attacks.attention import AttentionAttack, TargetAttentionNet
from vrlib.attacks.attention_training import train_group
from vrlib.cache import encode_table
from vrlib.games import SyntheticDatasets
from vrlib.metrics import auc
from vrlib.torch_setup import resolve_device, torch_threads

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


def train_before(attack, pre, y, train_idx, val_idx, epochs, seed):
    """The per-target training loop the project had before grouped training (the yardstick)."""
    rng = np.random.default_rng(seed)
    records, mask, target = (torch.from_numpy(v) for v in (pre.records, pre.mask, pre.target))
    y = torch.from_numpy(y.astype(np.float32))
    torch.manual_seed(seed)
    model = TargetAttentionNet(records.shape[2])
    optimiser = torch.optim.Adamax(model.parameters(), lr=attack.lr)
    loss_fn = nn.BCEWithLogitsLoss()
    val_t = torch.from_numpy(val_idx)
    best = np.inf
    for _ in range(epochs):
        model.train()
        order = torch.from_numpy(rng.permutation(train_idx))
        total = 0.0
        for i in range(0, len(order), attack.batch_size):
            batch = order[i : i + attack.batch_size]
            optimiser.zero_grad()
            loss = loss_fn(model(records[batch], mask[batch], target), y[batch])
            loss.backward()
            optimiser.step()
            total += loss.item() * len(batch)
        model.eval()
        with torch.no_grad():
            val = loss_fn(model(records[val_t], mask[val_t], target), y[val_t]).item()
        if val < best:
            best, _ = val, copy.deepcopy(model.state_dict())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-shadow", type=int, default=4000, help="shadow datasets (paper: 4,000)")
    parser.add_argument("--n-test", type=int, default=200, help="test datasets (paper: 200)")
    parser.add_argument("--records", type=int, default=1000, help="records per synthetic dataset")
    parser.add_argument("--epochs", type=int, default=3, help="epochs timed for the new ways (then extrapolated)")
    parser.add_argument("--before-epochs", type=int, default=2, help="epochs timed for the old loop")
    parser.add_argument("--group", type=int, default=16, help="targets trained together")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    df, schema = vrlib.load("adult")
    rng = np.random.default_rng(args.seed)
    target = df.iloc[[int(rng.integers(len(df)))]]
    device = resolve_device("auto")
    load_start = os.getloadavg()[0]
    print(f"Adult, target row {target.index[0]}; torch {torch.__version__}, {os.cpu_count()} CPUs, device {device}, "
          f"load average {load_start:.2f}")  # fmt: skip
    print(f"{args.n_shadow} shadow + {args.n_test} test bootstrap datasets of {args.records} records")
    shadow, y_shadow = bootstrap_game(df, target, args.n_shadow, args.records, rng)
    test, y_test = bootstrap_game(df, target, args.n_test, args.records, rng)
    shadow_batch = as_batch(shadow, y_shadow, df, schema)
    test_batch = as_batch(test, y_test, df, schema)
    del shadow, test

    # Warm-up, not timed: the first training in a process imports part of torch's compiler stack.
    warm, y_warm = bootstrap_game(df, target, 20, args.records, rng)
    AttentionAttack(schema, max_epochs=1, seed=args.seed).fit(warm, y_warm, target)

    # Preprocessing and prediction, through the public API (1 epoch of training, not used).
    attack = AttentionAttack(schema, max_epochs=1, patience=None, seed=args.seed)
    attack.fit(shadow_batch, None, target)
    t0 = time.process_time()
    prepared = attack._prepare(shadow_batch, None, target)  # encoder + preprocessing, as fit does
    preprocess_s = time.process_time() - t0
    t0 = time.process_time()
    proba = attack.predict_proba(test_batch)
    predict_s = time.process_time() - t0
    print(f"preprocessing (encoder + 100 closest of {args.n_shadow} datasets): {preprocess_s:.2f} s; "
          f"prediction of {args.n_test} test datasets: {predict_s:.2f} s")  # fmt: skip

    # Training, alone and grouped: the same preprocessed inputs for every member, each with its own seed.

    def train_s_per_epoch(group):
        nets = []
        for s in range(group):
            torch.manual_seed(s)
            nets.append(TargetAttentionNet(attack.n_features_))
        t0 = time.process_time()
        with torch_threads(1):
            train_group(nets, [prepared["inputs"]] * group, [prepared["y"]] * group, [prepared["split"]] * group,
                        [np.random.default_rng(s) for s in range(group)], list(range(group)),
                        n_onehot=prepared["n_onehot"], lr=attack.lr, batch_size=attack.batch_size,
                        max_epochs=args.epochs, patience=None, eval_batch_size=attack.eval_batch_size,
                        device=device)  # fmt: skip
        return (time.process_time() - t0) / args.epochs / group

    single_epoch_s = train_s_per_epoch(1)
    print(f"single: {single_epoch_s:.3f} s/epoch over {args.epochs} epochs")
    grouped_epoch_s = train_s_per_epoch(args.group)
    print(f"grouped ({args.group} targets): {grouped_epoch_s:.4f} s/epoch per target over {args.epochs} epochs")

    # Before: the old loop, same data, CPU, one thread.
    pre = attack.transform(shadow_batch)
    t0 = time.process_time()
    with torch_threads(1):
        train_before(attack, pre, prepared["y"], *prepared["split"], args.before_epochs, args.seed)
    before_epoch_s = (time.process_time() - t0) / args.before_epochs
    print(f"before: {before_epoch_s:.3f} s/epoch over {args.before_epochs} epochs")

    def per_target(epoch_s):
        return preprocess_s + PAPER_EPOCHS * epoch_s + predict_s

    result = {
        "data": "bootstrap samples of Adult rows (IN: 999 + target, OUT: 1000), not generator output",
        "torch": torch.__version__,
        "cpus": os.cpu_count(),
        "device": str(device),
        "torch_threads": 1,
        "n_shadow": args.n_shadow,
        "n_test": args.n_test,
        "group": args.group,
        "preprocess_s": round(preprocess_s, 3),
        "predict_s": round(predict_s, 3),
        "s_per_epoch_before": round(before_epoch_s, 4),
        "s_per_epoch_single": round(single_epoch_s, 4),
        "s_per_epoch_grouped_per_target": round(grouped_epoch_s, 5),
        "epochs_extrapolated_to": PAPER_EPOCHS,
        "paper_s_per_target_before": round(per_target(before_epoch_s), 1),
        "paper_s_per_target_single": round(per_target(single_epoch_s), 1),
        "paper_s_per_target": round(per_target(grouped_epoch_s), 1),
        "speedup_single_vs_before": round(before_epoch_s / single_epoch_s, 2),
        "speedup_grouped_vs_before": round(before_epoch_s / grouped_epoch_s, 2),
        "test_auc_bootstrap": round(auc(y_test, proba), 4),
        "load_average_start": round(load_start, 2),
        "load_average_end": round(os.getloadavg()[0], 2),
    }
    print(f"per target, 500 epochs (extrapolated): before {result['paper_s_per_target_before']} s, single "
          f"{result['paper_s_per_target_single']} s, grouped {result['paper_s_per_target']} s")  # fmt: skip
    print(json.dumps(result))


if __name__ == "__main__":
    main()
