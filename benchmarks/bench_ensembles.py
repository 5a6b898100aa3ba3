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
``bnaf_ensemble_cpu_ratio_vs_eager`` the same against eager single fits; the ``*_per_repeat``
lists give each repeat's ratio (the spread on a machine shared with other jobs).

What they compute is compared on 500 held-out rows: the largest and the median difference
of log density of each member from its eager single fit, beside the same for the compiled
single fits (which round in another order too: the yardstick of how far float rounding
carries a flow after this many steps at lr 0.01), and the mean held-out log likelihood of
the K flows of each way, compared as samples by Welch's t.

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
from bench_bnaf import _welch_t as welch_t  # this script's folder is on sys.path when run


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
    load_start = round(os.getloadavg()[0], 2)
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

    logd = {name: [f.log_density(held_out) for f in fits] for name, fits in fitted.items()}

    def gap(name):  # |log density| difference from the eager single fits, over held-out rows and members
        d = np.abs(np.stack(logd[name]) - np.stack(logd["single_eager"]))
        return float(d.max()), float(np.median(d))

    heldout = {name: [float(v.mean()) for v in values] for name, values in logd.items()}
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
        "bnaf_ensemble_cpu_ratio_per_repeat": [
            round(c / s, 3) for c, s in zip(times["single_compiled"], times["stacked"])
        ],
        "bnaf_ensemble_cpu_ratio_vs_eager_per_repeat": [
            round(e / s, 3) for e, s in zip(times["single_eager"], times["stacked"])
        ],
        "load_average_start": load_start,
        "stacked_vs_eager_log_density_diff_max_median": [round(v, 4) for v in gap("stacked")],
        "compiled_vs_eager_log_density_diff_max_median": [round(v, 4) for v in gap("single_compiled")],
        **{f"heldout_loglik_mean_{k}": round(float(np.mean(v)), 4) for k, v in heldout.items()},
        "heldout_t_stacked_vs_eager": welch_t(heldout["single_eager"], heldout["stacked"]),
        "heldout_t_compiled_vs_eager": welch_t(heldout["single_eager"], heldout["single_compiled"]),
        "load_average": round(os.getloadavg()[0], 2),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
