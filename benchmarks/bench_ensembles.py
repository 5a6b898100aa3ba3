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

GANs (:func:`gan_ensemble_part`): ``--gan-k`` WGAN-GP fits one by one (:meth:`WGANGP.fit`)
against one stack of the same fits (:func:`vrlib.generators.wgan_ensemble.fit_wgan_ensemble`),
at two sizes: DOMIAS's Fig. 6 (500 standardised California rows, batch 100, one fit per seed)
and TableGAN-MCA's (31,655 pre-processed Adult rows, batch 500, the shadow GANs), for a few
epochs, interleaved ``--gan-repeats`` times (best of them), one torch thread, CPU seconds.  The
stack runs with each member's own randomness (``rng="member"``, the CPU default: each member
is its single fit up to rounding; the largest difference of their losses is printed) and with
one shared stream (``rng="shared"``, the same in distribution).  ``gan_ensemble_cpu_ratio`` is
the smaller of the two sizes' ratios (K single fits' CPU ÷ the stack's) with the default
randomness.

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


def gan_ensemble_part(ks: tuple[int, int], repeats: int, epochs_: tuple[int, int]) -> dict:
    """CPU of K single WGAN-GP fits over one stack of them, at DOMIAS's and TableGAN-MCA's sizes (``ks``, ``epochs_``)."""
    from vrlib.experiments import domias, mca
    from vrlib.generators.wgan import WGANGP
    from vrlib.generators.wgan_ensemble import fit_wgan_ensemble

    california, cal_schema = domias.california()
    adult, _, adult_schema = mca.data(0, None, True, "seeded")
    (k_domias, k_mca), (e_domias, e_mca) = ks, epochs_
    sizes = {
        # one training set per seed, as Fig. 6 draws them; the shadow GANs of the releases see the same table
        "domias": ([domias.split(california, 500, 1000, m)["mem"] for m in range(k_domias)], cal_schema, 100, e_domias),
        "mca": ([adult.reset_index(drop=True)] * k_mca, adult_schema, 500, e_mca),
    }
    out = {}
    for size, (tables, schema, batch, epochs) in sizes.items():
        params = dict(epochs=epochs, batch_size=batch, device="cpu")

        def singles():
            return [WGANGP(**params, threads=1).fit(t, schema, m) for m, t in enumerate(tables)]

        def stack(rng):
            return fit_wgan_ensemble([WGANGP(**params) for _ in tables], tables, schema, range(len(tables)), rng=rng)

        fit_wgan_ensemble([WGANGP(**{**params, "epochs": 1})], [tables[0].iloc[:300]], schema, [0])  # warm-up
        ways = {"single": singles, "stacked_member": lambda: stack("member"), "stacked_shared": lambda: stack("shared")}
        times = {name: [] for name in ways}
        fitted = {}
        for r in range(repeats):
            for name, make in ways.items():
                seconds, fitted[name] = _cpu(make)
                times[name].append(seconds)
            print(f"GAN {size}, repeat {r}: " + ", ".join(f"{n} {v[-1]:.2f}" for n, v in times.items()) + " CPU s",
                  flush=True)  # fmt: skip
        best = {name: min(v) for name, v in times.items()}
        loss_gap = max(
            float(np.abs(a.losses_.to_numpy() - b.losses_.to_numpy()).max())
            for a, b in zip(fitted["single"], fitted["stacked_member"])
        )
        out.update(
            {
                f"gan_{size}_k": len(tables),
                f"gan_{size}_rows": len(tables[0]),
                f"gan_{size}_batch_size": batch,
                f"gan_{size}_epochs": epochs,
                **{f"gan_{size}_{name}_cpu_s": round(v, 3) for name, v in best.items()},
                f"gan_ensemble_cpu_ratio_{size}": round(best["single"] / best["stacked_member"], 3),
                f"gan_ensemble_cpu_ratio_{size}_shared": round(best["single"] / best["stacked_shared"], 3),
                f"gan_{size}_member_vs_single_loss_diff_max": loss_gap,
            }
        )
    out["gan_ensemble_cpu_ratio"] = min(out["gan_ensemble_cpu_ratio_domias"], out["gan_ensemble_cpu_ratio_mca"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=16, help="flows per stack")
    parser.add_argument("--rows", type=int, default=2000, help="rows per flow")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--gan-k", type=int, nargs=2, default=(8, 4), help="WGAN-GP fits per stack: DOMIAS, MCA")
    parser.add_argument("--gan-repeats", type=int, default=2)
    parser.add_argument("--gan-epochs", type=int, nargs=2, default=(20, 1), help="epochs at DOMIAS's and MCA's size")
    parser.add_argument("--only", choices=("bnaf", "gan"), help="run one part")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=FutureWarning)
    if args.only == "gan":
        import torch

        torch.set_num_threads(1)
        gan = gan_ensemble_part(args.gan_k, args.gan_repeats, args.gan_epochs)
        print(json.dumps({"benchmark": "bench_ensembles", **gan, "load_average": round(os.getloadavg()[0], 2)}))
        return

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
    if args.only != "bnaf":
        result.update(gan_ensemble_part(args.gan_k, args.gan_repeats, args.gan_epochs))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
