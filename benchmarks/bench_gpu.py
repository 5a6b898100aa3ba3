"""Benchmark for a machine with a GPU, prepared to run as it is in a few minutes: WGAN-GP and BNAF, one model and stacks.

Everything runs on the GPU when there is one (``device="auto"``), wall seconds
(``time.perf_counter``; every timed fit ends by reading its results back to the host, so
the GPU's queue is drained inside the timing):

* ``wgan_gp_single_300_epochs_wall_min``: :class:`vrlib.generators.wgan.WGANGP` with its defaults
  (batch 500) on 31,655 Adult rows, fitted for ``e1`` and ``e2`` epochs; the time of an epoch
  is the difference over ``e2 - e1`` (the set-up counted once), times 300 epochs, in minutes.
* ``wgan_gp_300_epochs_wall_min``: the same per fit within a stack of ``--gan-k`` fits
  (:func:`vrlib.generators.wgan_ensemble.fit_wgan_ensemble`, seeds 0 … k-1, the same rows):
  the stack's seconds per epoch (difference of a 1- and a 3-epoch stack) over its fits, times
  300 epochs; ``wgan_gp_ensemble_cuda_graph`` says whether its step ran as a CUDA graph.
* ``ensemble_throughput_ratio``: BNAF at DOMIAS's paper settings (Table 3, batch 50) on
  California rows, rows trained per second by a stack of ``--k`` flows
  (:func:`vrlib.density.bnaf_ensemble.fit_bnaf_ensemble`, members × rows ÷ seconds) over one
  flow fitted alone (:meth:`BNAF.fit`, eager), the same rows and epochs each.
* ``attention_s_per_target``: the target attention attack at the paper's size, its
  preprocessing and its training per target (:func:`attention_seconds`).
* ``bnaf_fig6_fit_s``: one flow of DOMIAS Fig. 6 (10,000 rows, at most 50 epochs) within a
  stack of ``--k``: the stack's seconds per epoch (difference of a 1- and a 2-epoch fit) over
  its members, times 50 epochs, plus its set-up share (an upper bound: early stopping ends
  most fits sooner); ``bnaf_fig6_single_fit_s`` the same for one flow fitted alone.
* The stacks run with each step replayed from a captured CUDA graph (the default on CUDA);
  ``ensemble_throughput_ratio_no_graphs`` and ``bnaf_fig6_fit_s_no_graphs`` are the same
  without (on a CPU the two are the same code).  ``bnaf_wall_s``: the BNAF parts' seconds.

``--tiny`` shrinks every size (a few hundred rows, the smoke profile's small flows, stacks
of 3, batches of 100 for the GAN) so
that the whole script runs on a CPU in well under a minute: a test runs it end to end.
Its numbers then mean nothing.  Run: ``VRLIB_DATA_DIR=... python benchmarks/bench_gpu.py``;
the last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings

import numpy as np


def _wall(make):
    start = time.perf_counter()
    out = make()
    return time.perf_counter() - start, out


def adult_rows(rows: int):
    """The first ``rows`` of a seeded shuffle of Adult, and its schema (the rows every WGAN-GP timing trains on)."""
    import vrlib

    df, schema = vrlib.load("adult")
    return df.iloc[np.random.default_rng(0).permutation(len(df))[:rows]].reset_index(drop=True), schema


def wgan_minutes(rows: int, epochs: tuple[int, int], device: str, batch_size: int = 500) -> tuple[float, float]:
    """Minutes of a 300-epoch WGAN-GP fit on ``rows`` Adult rows, and the seconds per epoch."""
    from vrlib.generators.wgan import WGANGP

    train, schema = adult_rows(rows)
    threads = 1 if device == "cpu" else None  # on a CPU (the tiny mode): one thread, as the flows train

    def fit(epochs_, rows_=train):
        return WGANGP(epochs=epochs_, batch_size=batch_size, device=device, threads=threads).fit(rows_, schema, seed=0)

    fit(1, train.iloc[:200])  # warm-up: first calls, kernels
    t1, _ = _wall(lambda: fit(epochs[0]))
    t2, _ = _wall(lambda: fit(epochs[1]))
    per_epoch = max(t2 - t1, 0.0) / (epochs[1] - epochs[0])
    return per_epoch * 300 / 60, per_epoch


def wgan_ensemble_minutes(
    df, schema, k: int, epochs: tuple[int, int], device: str, batch_size: int = 500
) -> tuple[float, float, bool]:
    """Minutes of a 300-epoch WGAN-GP fit within a stack of ``k`` on ``df``, seconds per epoch of the stack, graph used."""
    import warnings as warnings_

    from vrlib.generators.wgan import WGANGP
    from vrlib.generators.wgan_ensemble import fit_wgan_ensemble

    threads = 1 if device == "cpu" else None

    def fit(epochs_, rows=df, members=k):
        made = [WGANGP(epochs=epochs_, batch_size=batch_size, device=device) for _ in range(members)]
        return fit_wgan_ensemble(made, [rows] * members, schema, list(range(members)), device=device, threads=threads)

    with warnings_.catch_warnings(record=True) as caught:
        warnings_.simplefilter("always")
        fit(1, df.iloc[:200], 2)  # warm-up: first calls, kernels, a first capture
        t1, _ = _wall(lambda: fit(epochs[0]))
        t2, _ = _wall(lambda: fit(epochs[1]))
    fell_back = any("CUDA graph" in str(w.message) for w in caught)
    for w in caught:
        print(f"warning: {w.message}", flush=True)
    per_epoch = max(t2 - t1, 0.0) / (epochs[1] - epochs[0])
    return per_epoch / k * 300 / 60, per_epoch, device == "cuda" and not fell_back


def bnaf_times(X_all, k: int, rows: int, epochs: tuple[int, int], device: str, profile: str = "paper") -> dict:
    """Seconds of BNAF fits at a profile's settings: one alone and a stack of ``k``, at each length.

    The stack is timed with CUDA graphs (``"stack"``) and without (``"stack_no_graphs"``; on a
    CPU the two are the same code).
    """
    from vrlib.density import BNAF
    from vrlib.density.bnaf_ensemble import fit_bnaf_ensemble
    from vrlib.experiments import domias  # noqa: F401  (registers the DOMIAS profiles)
    from vrlib.experiments.profiles import profile_settings

    paper = dict(profile_settings("domias", profile)["flow"])
    datasets = [X_all[np.random.default_rng(m).permutation(len(X_all))[:rows]] for m in range(k)]

    def params(e):
        return {**paper, "epochs": e, "patience": e + 1, "compile": False, "device": device}

    def stack(e, graphs, data=datasets):
        flows = [BNAF(**params(e), seed=m) for m in range(len(data))]
        return fit_bnaf_ensemble(flows, data, device=device, graphs=graphs)

    BNAF(**params(1), seed=0).fit(datasets[0][:200])  # warm-ups
    for graphs in (True, False):
        stack(1, graphs, [datasets[0][:200]] * 2)
    out = {}
    for e in epochs:
        out[("single", e)], _ = _wall(lambda: BNAF(**params(e), seed=0).fit(datasets[0]))
        out[("stack", e)], _ = _wall(lambda: stack(e, True))
        out[("stack_no_graphs", e)], _ = _wall(lambda: stack(e, False))
    return out


# The target attention attack on the GPU: targets trained together (the paper's size: Adult,
# 4,000 shadow + 200 test datasets of 1,000 records, top_x 100, batch 20, 500 epochs).
ATTENTION_GROUP = 128
ATTENTION_COMPARE_GROUP = ATTENTION_GROUP  # the two ways of computing gradients, side by side, at the size trained


def bootstrap_batch(df, schema, target_pos: int, n_datasets: int, n_records: int, rng):
    """A game's coded batch of bootstrap datasets, as ``bench_attention.bootstrap_game`` makes them, in arrays.

    Half IN (``n_records - 1`` rows drawn with replacement + the target last), half OUT
    (``n_records`` rows); built by indexing the encoded table, without a DataFrame per dataset.
    """
    from vrlib.encoding import encode_table
    from vrlib.games import SyntheticDatasets

    cats = {c: df[c].cat.categories for c in schema.categorical}
    table = encode_table(df, schema, cats)
    labels = rng.permutation(np.arange(n_datasets) % 2)
    rows = rng.integers(len(df), size=(n_datasets, n_records))
    rows[labels == 1, -1] = target_pos
    return SyntheticDatasets(table["codes"][rows], table["continuous"][rows], labels, schema, cats, tuple(df.columns))


def attention_seconds(device, tiny: bool = False) -> dict:
    """Seconds per target of the target attention attack at the paper's size, preprocessing and training.

    * ``attention_preprocess_s_per_target``: one target's encoder fit and closest-record
      search over its 4,000 shadow datasets (``AttentionAttack._prepare``, as ``fit``
      does) plus that of its 200 test datasets (``transform``, as ``predict_proba``
      does), on the attack's device (on a GPU: :mod:`vrlib.attacks.attention.features_torch`);
      the mean of two timed runs after one untimed.  Beside it, the numpy path (the CPU's)
      on a tenth of the datasets, scaled to all of them (its cost is linear in their number).
    * ``attention_train_s_per_target``: ``ATTENTION_GROUP`` targets trained as one grouped
      model (the attack's default gradients on the device) for ``epochs`` epochs and for
      0 (the set-up); per target: (the set-up + 500 × the time of an epoch over
      ``epochs``) / the group, the group's targets sharing one target's inputs (the
      same cost as their own).  ``attention_train_autograd_speedup``: the hand-written
      backward pass's time per epoch over autograd's, at ``ATTENTION_COMPARE_GROUP`` targets.
    * ``attention_s_per_target``: their sum.
    * Checks: ``attention_preprocess_matches_numpy`` (the device's inputs for the tenth are
      bitwise the numpy path's) and ``attention_host_syncs_per_epoch`` (counted by
      ``torch.cuda.set_sync_debug_mode`` over one epoch of 2 targets, beside
      ``attention_steps_per_epoch``).

    Wall seconds; the GPU's queue is drained before each clock reading.  On an H200 the
    section should take well under two minutes (from issue 42's figures: about 4 s of the
    GPU per epoch of 128 targets at most, a few seconds of set-up per training, the
    numpy path's tenth about 1 s).
    """
    import sys
    from pathlib import Path

    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import vrlib
    from bench_attention import PAPER_EPOCHS, time_training
    from vrlib.attacks.attention import AttentionAttack

    started = time.perf_counter()
    if tiny:
        n_shadow, n_test, n_records, group, compare, epochs = 40, 10, 60, 3, 2, 1
    else:
        n_shadow, n_test, n_records, group, compare, epochs = (
            4000,
            200,
            1000,
            ATTENTION_GROUP,
            ATTENTION_COMPARE_GROUP,
            4,
        )

    def clock():
        if device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter()

    df, schema = vrlib.load("adult")
    rng = np.random.default_rng(0)
    pos = int(rng.integers(len(df)))
    target = df.iloc[[pos]]
    shadow = bootstrap_batch(df, schema, pos, n_shadow, n_records, rng)
    test = bootstrap_batch(df, schema, pos, n_test, n_records, rng)
    warm = bootstrap_batch(df, schema, pos, 20, 50, rng)
    AttentionAttack(schema, max_epochs=1, device=device).fit(warm, None, target)  # first calls, kernels

    def preprocess_once(attack, shadow_part, test_part):
        t0 = clock()
        prepared = attack._prepare(shadow_part, None, target)
        attack.transform(test_part)
        return clock() - t0, prepared

    attack = AttentionAttack(schema, max_epochs=1, device=device).fit(warm, None, target)  # fitted: transform works
    preprocess_once(attack, shadow, test)
    runs = [preprocess_once(attack, shadow, test) for _ in range(2)]
    preprocess_s, prepared = float(np.mean([t for t, _ in runs])), runs[-1][1]

    tenth = max(2, n_shadow // 10)
    on_cpu = AttentionAttack(schema, max_epochs=1, device="cpu").fit(warm, None, target)
    part = type(shadow)(shadow.codes[:tenth], shadow.continuous[:tenth], shadow.labels[:tenth],
                        schema, shadow.categories, shadow.columns)  # fmt: skip
    test_part = type(test)(test.codes[: max(1, tenth // 20)], test.continuous[: max(1, tenth // 20)],
                           test.labels[: max(1, tenth // 20)], schema, test.categories, test.columns)  # fmt: skip
    numpy_s, numpy_part = preprocess_once(on_cpu, part, test_part)
    numpy_s *= (n_shadow + n_test) / (tenth + max(1, tenth // 20))
    # The device's search keeps exactly the numpy path's records (inputs compared bitwise).
    device_part = AttentionAttack(schema, max_epochs=1, device=device)._prepare(part, None, target)
    same = all(np.array_equal(a, b) for a, b in zip(numpy_part["inputs"], device_part["inputs"]))

    def train(g, e, warm_up=False, **options):
        setup_s, epoch_s = time_training(
            prepared, attack.n_features_, attack, g, e, device, clock=clock, warm_up=warm_up, **options
        )
        return setup_s, epoch_s

    # Warm-up, counting the host synchronisations of an epoch (there should be a few per epoch, none per step).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if device.type == "cuda":
            torch.cuda.set_sync_debug_mode("warn")
        try:
            time_training(prepared, attack.n_features_, attack, 2, 1, device, clock=lambda: 0.0, warm_up=False)
        finally:
            if device.type == "cuda":
                torch.cuda.set_sync_debug_mode("default")
    syncs = sum("synchroniz" in str(w.message).lower() for w in caught)
    setup_s, epoch_s = train(group, epochs)
    train_s = setup_s / group + PAPER_EPOCHS * epoch_s
    # each way warmed up on its own first: without it the set-up run paid for the way's first allocations and
    # could take longer than the run it is subtracted from (an epoch of 0 s and a ratio of 0 on one H200)
    _, autograd_epoch_s = train(compare, 1 if tiny else epochs, warm_up=True, autograd=True)
    _, handwritten_epoch_s = train(compare, 1 if tiny else epochs, warm_up=True, autograd=False)
    if device.type == "cuda":
        torch.cuda.empty_cache()  # give the cached blocks back to the sections after this one
    return {
        "attention_group": group,
        "attention_epochs_timed": epochs,
        "attention_preprocess_s_per_target": round(preprocess_s, 3),
        "attention_preprocess_numpy_s_per_target": round(numpy_s, 3),
        "attention_preprocess_speedup": round(numpy_s / preprocess_s, 1),
        "attention_train_s_per_target": round(train_s, 3),
        "attention_train_setup_s": round(setup_s, 2),
        "attention_s_per_target": round(preprocess_s + train_s, 3),
        # None when an epoch was not measurable (its run no longer than the set-up's)
        "attention_train_autograd_speedup": (
            round(handwritten_epoch_s / autograd_epoch_s, 2)
            if handwritten_epoch_s > 0 and autograd_epoch_s > 0
            else None
        ),
        "attention_preprocess_matches_numpy": bool(same),
        "attention_host_syncs_per_epoch": syncs if device.type == "cuda" else None,
        "attention_steps_per_epoch": -(-len(prepared["split"][0]) // attack.batch_size),
        "attention_section_s": round(time.perf_counter() - started, 1),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="tiny sizes, for a test on a CPU")
    parser.add_argument("--k", type=int, default=64, help="flows per stack")
    parser.add_argument("--gan-k", type=int, default=32, help="WGAN-GP fits per stack")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=FutureWarning)

    import torch

    from vrlib.data import load_california
    from vrlib.torch_setup import resolve_device

    device = resolve_device("auto")
    k = 3 if args.tiny else args.k
    started = time.perf_counter()

    wgan_rows, wgan_epochs, wgan_batch = (200, (1, 2), 100) if args.tiny else (31_655, (1, 4), 500)
    wgan_min, wgan_epoch_s = wgan_minutes(wgan_rows, wgan_epochs, str(device.type), wgan_batch)
    print(f"WGAN-GP on {wgan_rows} Adult rows: {wgan_epoch_s:.2f} s per epoch, {wgan_min:.2f} min per 300", flush=True)
    gan_k, gan_epochs = (3, (1, 2)) if args.tiny else (args.gan_k, (1, 3))
    adult, adult_schema = adult_rows(wgan_rows)
    stack_min, stack_epoch_s, graphed = wgan_ensemble_minutes(
        adult, adult_schema, gan_k, gan_epochs, str(device.type), wgan_batch
    )
    print(f"WGAN-GP stack of {gan_k}: {stack_epoch_s:.2f} s per epoch, {stack_min:.2f} min per 300 a fit", flush=True)

    X_all = load_california()[0].to_numpy(dtype=float)
    bnaf_started = time.perf_counter()
    through_rows = 300 if args.tiny else 2000
    profile = "smoke" if args.tiny else "paper"  # tiny: the smoke profile's small flows
    t = bnaf_times(X_all, k, through_rows, (1,), device.type, profile)
    ratio = k * t[("single", 1)] / t[("stack", 1)]
    ratio_no_graphs = k * t[("single", 1)] / t[("stack_no_graphs", 1)]
    print(
        f"BNAF stack of {k}: {ratio:.1f}x the rows per second of one flow ({ratio_no_graphs:.1f}x without CUDA graphs)",
        flush=True,
    )

    fig6_rows = 300 if args.tiny else 10_000
    t6 = bnaf_times(X_all, k, fig6_rows, (1, 2), device.type, profile)
    max_epochs = 50

    def fit_s(kind: str, members: int) -> float:
        per_epoch = max(t6[(kind, 2)] - t6[(kind, 1)], 0.0)
        setup = max(t6[(kind, 1)] - per_epoch, 0.0)
        return (setup + per_epoch * max_epochs) / members

    bnaf_wall = time.perf_counter() - bnaf_started
    try:
        attention = attention_seconds(device, args.tiny)
        print(f"attention: {attention['attention_s_per_target']} s per target", flush=True)
    except Exception as exc:  # noqa: BLE001  (one rare run: keep the other sections' numbers, say what failed)
        import traceback

        traceback.print_exc()
        attention = {"attention_error": f"{type(exc).__name__}: {exc}"}

    result = {
        "benchmark": "bench_gpu",
        "tiny": args.tiny,
        "device": str(device),
        "gpu": torch.cuda.get_device_name(0) if device.type == "cuda" else None,
        "wgan_gp_rows": wgan_rows,
        "wgan_gp_batch_size": wgan_batch,
        "bnaf_profile": profile,
        "wgan_gp_single_s_per_epoch": round(wgan_epoch_s, 4),
        "wgan_gp_single_300_epochs_wall_min": round(wgan_min, 3),
        "wgan_gp_ensemble_k": gan_k,
        "wgan_gp_ensemble_s_per_epoch": round(stack_epoch_s, 4),
        "wgan_gp_ensemble_cuda_graph": graphed,
        "wgan_gp_300_epochs_wall_min": round(stack_min, 3),
        "ensemble_k": k,
        "ensemble_rows_per_flow": through_rows,
        "ensemble_throughput_ratio": round(ratio, 2),
        "ensemble_throughput_ratio_no_graphs": round(ratio_no_graphs, 2),
        "bnaf_fig6_rows": fig6_rows,
        "bnaf_fig6_fit_s": round(fit_s("stack", k), 2),
        "bnaf_fig6_fit_s_no_graphs": round(fit_s("stack_no_graphs", k), 2),
        "bnaf_fig6_single_fit_s": round(fit_s("single", 1), 2),
        "bnaf_wall_s": round(bnaf_wall, 1),
        "wall_s": round(time.perf_counter() - started, 1),
        "cpu_count": os.cpu_count(),
        "machine": platform.machine(),
        "torch": torch.__version__,
    }
    result.update(attention)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
