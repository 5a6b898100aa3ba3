"""Benchmark: time per target of the target attention attack at the paper's size, new path vs previous ones.

On Adult, one target, 4,000 shadow + 200 test synthetic datasets of 1,000 records
(the paper's sizes), top_x = 100, batch 20, 500 epochs.  The ways of training timed in
this process on the same preprocessed data:

* ``grouped``: ``--group`` targets trained together as one stacked model with the
  hand-written forward and backward pass and the CPU dropout stream
  (:func:`vrlib.attacks.attention.fit_attacks`'s path), time divided by the group size;
* ``single``: the same code for one target alone (what ``AttentionAttack.fit`` does);
* ``previous``: the grouped model as it was before (autograd, torch-generator dropout
  masks: ``train_group(autograd=True, dropout_stream="torch")``), grouped and alone;
* ``before``: the training loop the project had before grouped training (one
  :class:`~vrlib.attacks.attention.TargetAttentionNet`, dense one-hot inputs,
  ``nn.Dropout``, a ``loss.item()`` per step), kept here as the first yardstick.

Training runs a few epochs only (``--epochs``, ``--before-epochs``) and the time of 500
epochs is extrapolated linearly from the measured time per epoch (every epoch does the
same work: the same number of batches and one validation pass); the set-up of a
training (stacking the inputs, listing records by category) is timed apart, by a run of
0 epochs, and counted once.  The grouped ways are timed ``--repeats`` times, alternately,
and the fastest kept (other work on a shared machine only slows a run down).
Everything is timed in CPU seconds of this process (``time.process_time``, one thread),
which the other work of a shared machine inflates far less than wall time.
Preprocessing (encoder fit + the 100 closest unique records of each shadow dataset) and
prediction of the test datasets are measured in full, once, and added to each way's
training time.

The synthetic datasets are *bootstrap samples of Adult rows*, not generator output (IN:
999 rows + the target, OUT: 1,000 rows): the attack's cost depends only on the number and
size of the datasets and on ``top_x``, so this measures a game's cost without fitting
4,200 generators.  The group's targets share these datasets (with their own seeds), which
costs the same as their own datasets would.  Training uses one CPU thread (the attack's
default); the load average is printed, since other work on a shared machine slows every
figure down (the ratios are measured side by side and hold).

``--preprocess-only`` times just the preprocessing of one target's shadow datasets (encoder
+ closest records, ``AttentionAttack._prepare`` on the CPU), the current code beside the
package of an earlier commit (``--old``, imported as ``vrlib_old`` by ``_oldlib``), alternately,
``--repeats`` times each, the fastest kept; ``preprocess_speedup_vs_old`` is their ratio.
Beside them, the closest-record search alone, numpy (the CPU's path) against the torch
path run on the CPU (the GPU's path, ``features_torch``): ``search_torch_cpu_over_numpy``.

Usage::

    VRLIB_DATA_DIR=... python benchmarks/bench_attention.py [--epochs 3] [--before-epochs 2] [--group 32]
    VRLIB_DATA_DIR=... python benchmarks/bench_attention.py --preprocess-only [--n-shadow 1000] [--old e729509]

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
from vrlib.attacks.attention import AttentionAttack, TargetAttentionNet, preprocess
from vrlib.attacks.attention.training import train_group
from vrlib.encoding import encode_table
from vrlib.experiments import achilles
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


def time_training(
    prepared, n_features, attack, group, epochs, device, clock=time.process_time, warm_up=True, **options
) -> tuple[float, float]:
    """CPU seconds of training ``group`` targets on the same preprocessed inputs, each with its own seed.

    Returns the set-up of one training (a run of 0 epochs, after one untimed unless not
    ``warm_up``) and the time of one epoch per target (a run of ``epochs`` epochs, less
    the set-up, over ``epochs * group``).  ``clock``: seconds by ``time.process_time``
    (the CPU seconds of this process), or another clock (a GPU's wall time).
    ``options`` go to :func:`~vrlib.attacks.attention.training.train_group` (e.g. the
    previous implementation: ``autograd=True, dropout_stream="torch"``).
    """

    def run(max_epochs):
        nets = []
        for s in range(group):
            torch.manual_seed(s)
            nets.append(TargetAttentionNet(n_features))
        t0 = clock()
        with torch_threads(1):
            train_group(
                nets,
                [prepared["inputs"]] * group,
                [prepared["y"]] * group,
                [prepared["split"]] * group,
                [np.random.default_rng(s) for s in range(group)],
                list(range(group)),
                n_onehot=prepared["n_onehot"],
                lr=attack.lr,
                batch_size=attack.batch_size,
                max_epochs=max_epochs,
                patience=None,
                eval_batch_size=attack.eval_batch_size,
                device=device,
                **options,
            )
        return clock() - t0

    if warm_up:
        run(0)  # a first run pays for allocations later runs reuse
    setup_s = run(0)
    return setup_s, max(run(epochs) - setup_s, 0.0) / epochs / group


def time_before(attack, pre, y, split, epochs, seed=0) -> float:
    """CPU seconds per epoch of the per-target loop the project had before grouped training (one thread)."""
    t0 = time.process_time()
    with torch_threads(1):
        train_before(attack, pre, y, *split, epochs, seed)
    return (time.process_time() - t0) / epochs


def preprocess_vs_old(batch, target, schema, old_commit: str, repeats: int) -> dict:
    """CPU seconds of one target's preprocessing, the current code and ``old_commit``'s, and how far their inputs differ."""
    import importlib
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _oldlib import load_old

    _, commit = load_old(old_commit)
    OldAttack = importlib.import_module("vrlib_old.attacks.attention").AttentionAttack
    old_schema = importlib.import_module("vrlib_old.data").Schema(schema.categorical, schema.continuous)
    old_batch = importlib.import_module("vrlib_old.games").SyntheticDatasets(
        batch.codes, batch.continuous, batch.labels, old_schema, batch.categories, batch.columns
    )
    ways = {"new": (AttentionAttack(schema), batch), "old": (OldAttack(old_schema), old_batch)}
    best, inputs = {k: np.inf for k in ways}, {}
    for _ in range(repeats):
        for name, (attack, data) in ways.items():
            t0 = time.process_time()
            with torch_threads(1):
                inputs[name] = attack._prepare(data, None, target)["inputs"]
            best[name] = min(best[name], time.process_time() - t0)
    # The search alone, numpy (the CPU's path) against the torch path (the GPU's) run on this CPU.
    encoder = ways["new"][0].encoder_
    search = {"numpy": None, "torch_cpu": "cpu"}
    search_s = {k: np.inf for k in search}
    for _ in range(repeats):
        for name, device in search.items():
            t0 = time.process_time()
            with torch_threads(1):
                preprocess(batch, target, encoder, device=device)
            search_s[name] = min(search_s[name], time.process_time() - t0)
    same = [np.array_equal(a, b) for a, b in zip(inputs["new"], inputs["old"])]
    dist_new, dist_old = inputs["new"][1][..., -1], inputs["old"][1][..., -1]
    # Records at exactly equal distances may come in another order: the old distances' float64
    # rounding depended on which attributes matched, so it broke some exact ties (by noise).
    codes_new, codes_old = inputs["new"][0], inputs["old"][0]
    differ = np.flatnonzero((codes_new != codes_old).any(axis=(1, 2)))

    def rows(codes, dense, i):  # a dataset's kept records as a set of rows
        both = np.concatenate([codes[i].astype(np.float64), dense[i].astype(np.float64)], axis=1)
        return both[np.lexsort(both.T[::-1])]

    same_sets = all(
        np.array_equal(rows(codes_new, inputs["new"][1], i), rows(codes_old, inputs["old"][1], i)) for i in differ
    )
    return {
        "old_commit": commit,
        "n_datasets": len(batch.labels),
        "preprocess_s": round(best["new"], 3),
        "preprocess_s_old": round(best["old"], 3),
        "preprocess_speedup_vs_old": round(best["old"] / best["new"], 2),
        "inputs_identical_to_old": {k: v for k, v in zip(("codes", "dense", "mask", "target"), same)},
        "max_abs_distance_change": float(np.abs(dist_new - dist_old).max()),
        "datasets_with_ties_reordered": len(differ),
        "same_records_as_old_up_to_tie_order": bool(same_sets),
        "search_s_numpy": round(search_s["numpy"], 3),
        "search_s_torch_cpu": round(search_s["torch_cpu"], 3),
        "search_torch_cpu_over_numpy": round(search_s["torch_cpu"] / search_s["numpy"], 2),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-shadow", type=int, default=4000, help="shadow datasets (paper: 4,000)")
    parser.add_argument("--n-test", type=int, default=200, help="test datasets (paper: 200)")
    parser.add_argument("--records", type=int, default=1000, help="records per synthetic dataset")
    parser.add_argument("--epochs", type=int, default=3, help="epochs timed for the new ways (then extrapolated)")
    parser.add_argument("--before-epochs", type=int, default=2, help="epochs timed for the old loop")
    parser.add_argument("--group", type=int, default=achilles.ATTENTION_GROUP, help="targets trained together")
    parser.add_argument("--repeats", type=int, default=2, help="timings of each grouped way (fastest kept)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--preprocess-only", action="store_true", help="time the preprocessing, new vs --old")
    parser.add_argument("--old", default="e729509", help="the commit whose preprocessing is the baseline")
    args = parser.parse_args(argv)

    df, schema = vrlib.load("adult")
    rng = np.random.default_rng(args.seed)
    target = df.iloc[[int(rng.integers(len(df)))]]
    device = resolve_device("auto")
    load_start = os.getloadavg()[0]
    print(
        f"Adult, target row {target.index[0]}; torch {torch.__version__}, {os.cpu_count()} CPUs, device {device}, "
        f"load average {load_start:.2f}"
    )
    print(f"{args.n_shadow} shadow + {args.n_test} test bootstrap datasets of {args.records} records")
    shadow, y_shadow = bootstrap_game(df, target, args.n_shadow, args.records, rng)
    test, y_test = bootstrap_game(df, target, args.n_test, args.records, rng)
    shadow_batch = as_batch(shadow, y_shadow, df, schema)
    test_batch = as_batch(test, y_test, df, schema)
    del shadow, test
    if args.preprocess_only:
        result = preprocess_vs_old(shadow_batch, target, schema, args.old, args.repeats)
        result.update({"data": "bootstrap samples of Adult rows", "torch_threads": 1, "cpus": os.cpu_count(),
                       "load_average": round(os.getloadavg()[0], 2)})  # fmt: skip
        print(
            f"preprocessing {result['n_datasets']} datasets: {result['preprocess_s']} s, "
            f"{result['old_commit'][:7]}: {result['preprocess_s_old']} s, x{result['preprocess_speedup_vs_old']}"
        )
        print(json.dumps(result))
        return

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
    print(
        f"preprocessing (encoder + 100 closest of {args.n_shadow} datasets): {preprocess_s:.2f} s; "
        f"prediction of {args.n_test} test datasets: {predict_s:.2f} s"
    )

    # Training, alone and grouped, new and previous: the same preprocessed inputs for every member.
    previous = dict(autograd=True, dropout_stream="torch")
    grouped, grouped_previous = [], []
    for _ in range(args.repeats):  # alternately, the fastest of each kept
        grouped.append(time_training(prepared, attack.n_features_, attack, args.group, args.epochs, device))
        grouped_previous.append(
            time_training(prepared, attack.n_features_, attack, args.group, args.epochs, device, **previous)
        )
    grouped, grouped_previous = min(grouped, key=lambda t: t[1]), min(grouped_previous, key=lambda t: t[1])
    single = time_training(prepared, attack.n_features_, attack, 1, args.epochs, device)
    single_previous = time_training(prepared, attack.n_features_, attack, 1, args.epochs, device, **previous)
    for name, (setup_s, epoch_s) in [
        (f"grouped ({args.group} targets)", grouped),
        (f"grouped, previous ({args.group} targets)", grouped_previous),
        ("single", single),
        ("single, previous", single_previous),
    ]:
        print(f"{name}: {epoch_s:.4f} s/epoch per target over {args.epochs} epochs, set-up {setup_s:.2f} s")

    # Before: the old loop, same data, CPU, one thread.
    before_epoch_s = time_before(
        attack, attack.transform(shadow_batch), prepared["y"], prepared["split"], args.before_epochs, args.seed
    )
    print(f"before: {before_epoch_s:.3f} s/epoch over {args.before_epochs} epochs")

    def per_target(timing, group):
        setup_s, epoch_s = timing
        return preprocess_s + setup_s / group + PAPER_EPOCHS * epoch_s + predict_s

    paper = {"grouped": per_target(grouped, args.group), "grouped_previous": per_target(grouped_previous, args.group),
             "single": per_target(single, 1), "single_previous": per_target(single_previous, 1),
             "before": per_target((0.0, before_epoch_s), 1)}  # fmt: skip
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
        "setup_s_grouped": round(grouped[0], 3),
        "setup_s_single": round(single[0], 3),
        "s_per_epoch_before": round(before_epoch_s, 4),
        "s_per_epoch_single": round(single[1], 4),
        "s_per_epoch_single_previous": round(single_previous[1], 4),
        "s_per_epoch_grouped_per_target": round(grouped[1], 5),
        "s_per_epoch_grouped_previous_per_target": round(grouped_previous[1], 5),
        "epochs_extrapolated_to": PAPER_EPOCHS,
        "paper_s_per_target_before": round(paper["before"], 1),
        "paper_s_per_target_single_previous": round(paper["single_previous"], 1),
        "paper_s_per_target_previous": round(paper["grouped_previous"], 1),
        "paper_s_per_target_single": round(paper["single"], 1),
        "paper_s_per_target": round(paper["grouped"], 1),
        "training_speedup_grouped_vs_previous": round(grouped_previous[1] / grouped[1], 2),
        "training_speedup_single_vs_previous": round(single_previous[1] / single[1], 2),
        "speedup_grouped_vs_previous": round(paper["grouped_previous"] / paper["grouped"], 2),
        "speedup_single_vs_previous": round(paper["single_previous"] / paper["single"], 2),
        "speedup_single_vs_before": round(paper["before"] / paper["single"], 2),
        "speedup_grouped_vs_before": round(paper["before"] / paper["grouped"], 2),
        "test_auc_bootstrap": round(auc(y_test, proba), 4),
        "load_average_start": round(load_start, 2),
        "load_average_end": round(os.getloadavg()[0], 2),
    }
    print(
        f"per target, 500 epochs (extrapolated): grouped {result['paper_s_per_target']} s "
        f"(previous {result['paper_s_per_target_previous']} s, x{result['speedup_grouped_vs_previous']}), "
        f"single {result['paper_s_per_target_single']} s (previous {result['paper_s_per_target_single_previous']} s), "
        f"before grouping {result['paper_s_per_target_before']} s"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
