"""Benchmark of the BNAF flow at the DOMIAS paper's settings: the current code against an earlier commit's.

BNAF is most of what notebook 05 costs under ``paper`` (see docs/runs.md), and at the
paper's batch of 50 most of a training step does not depend on the batch: the
weight normalisation of every layer and the optimiser's update, over ~680,000
parameters.  This times one epoch of each implementation on the same rows (CPU
seconds, one thread, interleaved ``--repeats`` times, best of them), on California
Housing standardised (``--rows`` rows, the first of a seeded shuffle).

The current code is timed twice: as it runs eagerly (``compile=False``) and through
``torch.compile`` (``compile=True``, what the paper's settings use), after a warm-up that
pays the compile.

It also checks that they compute the same thing:

* the same untrained flow (same seed, so the same weights) gives the same log density
  at every row, up to float32 rounding (``init_max_abs_diff``);
* trained flows (``--fits`` seeds each, ``--fit-epochs`` epochs, early stopping as in
  the paper's settings) have the same mean held-out log likelihood, up to the spread
  between seeds: their training takes different rounding paths, so they are compared as
  samples, by Welch's t statistic (``heldout_t`` old against new, ``compiled_heldout_t``
  eager against compiled; |t| well below 2 expected).

Run: ``VRLIB_DATA_DIR=... python benchmarks/bench_bnaf.py [--old COMMIT]``; the last line
printed is one JSON object.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _epoch_seconds(make, X, epochs: int, seed: int) -> float:
    """CPU seconds per epoch of one fit that runs all ``epochs`` (no early stop)."""
    start = time.process_time()
    make(epochs=epochs, patience=epochs + 1, seed=seed, threads=1).fit(X)
    return (time.process_time() - start) / epochs


def _welch_t(a, b):
    """Welch's t of ``b`` against ``a``; None without two values a side or without any spread."""
    a, b = np.asarray(a), np.asarray(b)
    se = float(np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))) if min(len(a), len(b)) > 1 else 0.0
    return round(float(b.mean() - a.mean()) / se, 3) if se > 0 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # the last commit before the faster epoch (diagonal-only exp, gain on the output, fused Adam)
    parser.add_argument("--old", default="5b500b1", help="the commit whose BNAF is the baseline")
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--epochs", type=int, default=2, help="epochs per timed fit")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--fits", type=int, default=4, help="seeds per implementation in the held-out check")
    parser.add_argument("--fit-epochs", type=int, default=8)
    args = parser.parse_args()

    import torch

    from _oldlib import load_old
    from vrlib.data import load_california
    from vrlib.density import bnaf as new_bnaf

    _, commit = load_old(args.old)
    old_bnaf = importlib.import_module("vrlib_old.density.bnaf")
    OldBNAF, BNAF = old_bnaf.BNAF, new_bnaf.BNAF
    makers = {
        "old": OldBNAF,
        "new": lambda **kw: BNAF(compile=False, **kw),
        "compiled": lambda **kw: BNAF(compile=True, **kw),
    }

    X_all = load_california()[0].to_numpy(dtype=float)
    X_all = X_all[np.random.default_rng(0).permutation(len(X_all))]
    X, held_out = X_all[: args.rows], X_all[args.rows : 2 * args.rows]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    held_out = (held_out - X_all[: args.rows].mean(axis=0)) / X_all[: args.rows].std(axis=0)

    # the same weights in both: the same seed draws them in the same order
    torch.set_num_threads(1)
    defaults = BNAF()  # the paper's architecture
    arch = (X.shape[1], defaults.n_flows, defaults.n_layers, defaults.hidden_per_dim)
    flow_a = old_bnaf._build_bnaf(*arch, torch.Generator().manual_seed(3))
    flow_b = new_bnaf._build_bnaf(*arch, torch.Generator().manual_seed(3))
    t = torch.as_tensor(X, dtype=torch.float32)
    with torch.no_grad():
        init_diff = float((flow_a(t) - flow_b(t)).abs().max())

    for make in makers.values():  # warm up each (first-call costs, the compile) before anything is timed
        _epoch_seconds(make, X[:200], 1, seed=0)
    times = {name: [] for name in makers}
    for r in range(args.repeats):
        for name, make in makers.items():
            times[name].append(_epoch_seconds(make, X, args.epochs, seed=r))
        print(
            f"repeat {r}: " + ", ".join(f"{k} {v[-1]:.3f}" for k, v in times.items()) + " CPU s per epoch", flush=True
        )

    heldout = {name: [] for name in makers}
    for s in range(args.fits):
        for name, make in makers.items():
            flow = make(epochs=args.fit_epochs, seed=100 + s, threads=1).fit(X)
            heldout[name].append(float(flow.log_density(held_out).mean()))

    best = {name: min(v) for name, v in times.items()}
    result = {
        "benchmark": "bench_bnaf",
        "old_commit": commit,
        "rows": args.rows,
        "epochs_per_fit": args.epochs,
        "repeats": args.repeats,
        "old_cpu_s_per_epoch": round(best["old"], 4),
        "new_cpu_s_per_epoch": round(best["new"], 4),
        "compiled_cpu_s_per_epoch": round(best["compiled"], 4),
        "speedup": round(best["old"] / best["new"], 3),
        "compile_speedup": round(best["new"] / best["compiled"], 3),
        "speedup_from_old_compiled": round(best["old"] / best["compiled"], 3),
        "init_max_abs_diff": init_diff,
        **{f"heldout_loglik_{name}": [round(v, 4) for v in heldout[name]] for name in makers},
        "heldout_t": _welch_t(heldout["old"], heldout["new"]),
        "compiled_heldout_t": _welch_t(heldout["new"], heldout["compiled"]),
        "load_average": round(os.getloadavg()[0], 2),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
