"""Benchmark: K BNAF fits at DOMIAS's paper settings one by one against one stacked fit of the same K.

DOMIAS fits many flows of one shape (Table 3: 5 flows, 3 layers, 32 units per dimension,
batch 50, lr 0.01).  This fits ``--k`` of them, each on its own ``--rows`` California rows
(the first of a seeded shuffle per member, as DOMIAS's seeds draw their own sets), for
``--epochs`` epochs with early stopping out of reach, three ways, in this process, one
torch thread, CPU seconds (``time.process_time``):

* ``single eager``: :meth:`BNAF.fit` with ``compile=False`` (what fits below 2,000 steps run);
* ``single compiled``: :meth:`BNAF.fit` with ``compile=True`` (what a paper-size fit of 50
  epochs runs), after one warm-up fit that pays the compile;
* ``stacked``: :func:`vrlib.density.bnaf_ensemble.fit_bnaf_ensemble` on all K at once.

The three are interleaved ``--repeats`` times (best of them).  ``bnaf_ensemble_cpu_ratio``
is the CPU of K single fits as a paper run trains them (compiled) over the stack's;
``bnaf_ensemble_cpu_ratio_vs_eager`` the same against eager single fits.  The stack's
members are checked against the eager single fits: the largest difference of log density
over held-out rows (``max_abs_log_density_diff``; float rounding in another order).

Run: ``VRLIB_DATA_DIR=... python benchmarks/bench_ensembles.py``; the last line printed is
one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings

import numpy as np


def _cpu(make):
    start = time.process_time()
    out = make()
    return time.process_time() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=16, help="flows per stack")
    parser.add_argument("--rows", type=int, default=2000, help="rows per flow")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=FutureWarning)

    import torch

    from vrlib.data import load_california
    from vrlib.density import BNAF
    from vrlib.density.bnaf_ensemble import fit_bnaf_ensemble
    from vrlib.experiments import domias  # noqa: F401  (registers the profiles of the DOMIAS family)
    from vrlib.experiments.profiles import profile_settings

    torch.set_num_threads(1)
    paper = dict(profile_settings("domias", "paper")["flow"])
    paper.update(epochs=args.epochs, patience=args.epochs + 1, threads=1)
    X_all = load_california()[0].to_numpy(dtype=float)
    datasets = [X_all[np.random.default_rng(k).permutation(len(X_all))[: args.rows]] for k in range(args.k)]
    held_out = X_all[np.random.default_rng(1000).permutation(len(X_all))[:500]]

    def singles(compile_):
        return [BNAF(**paper, seed=k, compile=compile_).fit(X) for k, X in enumerate(datasets)]

    def stacked():
        return fit_bnaf_ensemble([BNAF(**paper, seed=k) for k in range(args.k)], datasets)

    # warm-ups: the compile, and the first calls of each path
    BNAF(**{**paper, "epochs": 1}, seed=0, compile=True).fit(datasets[0][:300])
    BNAF(**{**paper, "epochs": 1}, seed=0, compile=False).fit(datasets[0][:300])
    fit_bnaf_ensemble([BNAF(**{**paper, "epochs": 1}, seed=k) for k in range(2)], [datasets[0][:300]] * 2)

    times = {"single_eager": [], "single_compiled": [], "stacked": []}
    fitted = {}
    for r in range(args.repeats):
        for name, make in (("single_eager", lambda: singles(False)), ("single_compiled", lambda: singles(True)),
                           ("stacked", stacked)):  # fmt: skip
            seconds, fitted[name] = _cpu(make)
            times[name].append(seconds)
        print(f"repeat {r}: " + ", ".join(f"{k} {v[-1]:.2f}" for k, v in times.items()) + " CPU s", flush=True)

    diff = max(
        float(np.abs(a.log_density(held_out) - b.log_density(held_out)).max())
        for a, b in zip(fitted["single_eager"], fitted["stacked"])
    )
    best = {k: min(v) for k, v in times.items()}
    result = {
        "benchmark": "bench_ensembles",
        "k": args.k,
        "rows_per_fit": args.rows,
        "epochs": args.epochs,
        "repeats": args.repeats,
        "flow": {k: paper[k] for k in ("n_flows", "n_layers", "hidden_per_dim", "batch_size", "lr")},
        "n_features": int(X_all.shape[1]),
        **{f"{k}_cpu_s": round(v, 3) for k, v in best.items()},
        "bnaf_ensemble_cpu_ratio": round(best["single_compiled"] / best["stacked"], 3),
        "bnaf_ensemble_cpu_ratio_vs_eager": round(best["single_eager"] / best["stacked"], 3),
        "max_abs_log_density_diff": diff,
        "load_average": round(os.getloadavg()[0], 2),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
