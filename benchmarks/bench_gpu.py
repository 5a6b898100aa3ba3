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
* ``bnaf_fig6_fit_s``: one flow of DOMIAS Fig. 6 (10,000 rows, at most 50 epochs) within a
  stack of ``--k``: the stack's seconds per epoch (difference of a 1- and a 2-epoch fit) over
  its members, times 50 epochs, plus its set-up share (an upper bound: early stopping ends
  most fits sooner); ``bnaf_fig6_single_fit_s`` the same for one flow fitted alone.

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
    """Seconds of BNAF fits at a profile's settings: one alone and a stack of ``k``, at each length."""
    from vrlib.density import BNAF
    from vrlib.density.bnaf_ensemble import fit_bnaf_ensemble
    from vrlib.experiments import domias  # noqa: F401  (registers the DOMIAS profiles)
    from vrlib.experiments.profiles import profile_settings

    paper = dict(profile_settings("domias", profile)["flow"])
    datasets = [X_all[np.random.default_rng(m).permutation(len(X_all))[:rows]] for m in range(k)]

    def params(e):
        return {**paper, "epochs": e, "patience": e + 1, "compile": False, "device": device}

    BNAF(**params(1), seed=0).fit(datasets[0][:200])  # warm-ups
    fit_bnaf_ensemble([BNAF(**params(1), seed=m) for m in range(2)], [datasets[0][:200]] * 2, device=device)
    out = {}
    for e in epochs:
        out[("single", e)], _ = _wall(lambda: BNAF(**params(e), seed=0).fit(datasets[0]))
        out[("stack", e)], _ = _wall(
            lambda: fit_bnaf_ensemble([BNAF(**params(e), seed=m) for m in range(k)], datasets, device=device)
        )
    return out


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
    through_rows = 300 if args.tiny else 2000
    profile = "smoke" if args.tiny else "paper"  # tiny: the smoke profile's small flows
    t = bnaf_times(X_all, k, through_rows, (1,), device.type, profile)
    ratio = k * t[("single", 1)] / t[("stack", 1)]
    print(f"BNAF stack of {k}: {ratio:.1f}x the rows per second of one flow", flush=True)

    fig6_rows = 300 if args.tiny else 10_000
    t6 = bnaf_times(X_all, k, fig6_rows, (1, 2), device.type, profile)
    max_epochs = 50

    def fit_s(kind: str, members: int) -> float:
        per_epoch = max(t6[(kind, 2)] - t6[(kind, 1)], 0.0)
        setup = max(t6[(kind, 1)] - per_epoch, 0.0)
        return (setup + per_epoch * max_epochs) / members

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
        "bnaf_fig6_rows": fig6_rows,
        "bnaf_fig6_fit_s": round(fit_s("stack", k), 2),
        "bnaf_fig6_single_fit_s": round(fit_s("single", 1), 2),
        "wall_s": round(time.perf_counter() - started, 1),
        "cpu_count": os.cpu_count(),
        "machine": platform.machine(),
        "torch": torch.__version__,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
