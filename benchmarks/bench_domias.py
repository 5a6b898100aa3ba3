"""Benchmark of the DOMIAS attacks and experiments: wall time of each attack, and of the quick profile.

Each attack is fitted on n_syn = n_ref = 10,000 rows and scores 2,000 test points
(California Housing, standardised; the "synthetic" rows are real rows plus Gaussian
noise of 0.1, since only the time matters here).  DOMIAS-KDE is compared with the
reference implementation's approach, two ``scipy.stats.gaussian_kde`` evaluated at the
test points, timed in the same run.

The BNAF flow is timed twice: with the quick profile's settings, fitted to the end
(early stopping included), and with the paper's settings (Table 3: batch 50, 50 epochs,
32 units per dimension) for ``--paper-flow-epochs`` epochs, extrapolated linearly to
50 epochs (an upper bound: early stopping can end sooner).  Both are labelled as such.

TVAE, the generator of every DOMIAS figure, is fitted to the quick profile's |D_mem| rows
(``--tvae-epochs`` epochs, one thread, CPU time) through ``ctgan.TVAE.fit`` and through
the project's lean fit, interleaved, with a check that both give the same parameters bit
for bit.

Then the experiment functions of the quick profile run end to end in a fresh cache
(``--profile quick``; ``--skip-profile`` to leave it out).

The last line printed is one JSON object with every figure.

Run: ``VRLIB_DATA_DIR=... python benchmarks/bench_domias.py``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _tvae_fit_cpu_seconds(cls, data, epochs: int, seed: int):
    from vrlib.torch_setup import torch_threads

    model = cls(epochs=epochs, enable_gpu=False)
    model.set_random_state(seed)
    start = time.process_time()
    with torch_threads(1):
        model.fit(data, discrete_columns=[])
    seconds = time.process_time() - start
    return seconds, [p.detach().clone() for p in model.decoder.parameters()]


def bench_tvae(df, n_mem: int, epochs: int, repeats: int) -> dict:
    """ctgan's TVAE fit against the lean one on ``n_mem`` rows of ``df``, interleaved."""
    import ctgan
    import torch

    from vrlib.experiments import domias as E
    from vrlib.generators.neural import _lean_tvae_class

    data = E.split(df, n_mem, 2, seed=0)["mem"]
    times = {"ctgan": [], "lean": []}
    same = True
    for r in range(repeats):
        t_before, p_before = _tvae_fit_cpu_seconds(ctgan.TVAE, data, epochs, seed=r)
        t_lean, p_lean = _tvae_fit_cpu_seconds(_lean_tvae_class(), data, epochs, seed=r)
        times["ctgan"].append(t_before)
        times["lean"].append(t_lean)
        same &= all(torch.equal(a, b) for a, b in zip(p_before, p_lean))
    before, lean = float(np.median(times["ctgan"])), float(np.median(times["lean"]))
    print(
        f"TVAE fit, {n_mem} rows, {epochs} epochs, one thread (CPU s, median of {repeats}): ctgan {before:.2f}, "
        f"lean {lean:.2f} ({before / lean:.2f}x); same parameters bit for bit: {same}",
        flush=True,
    )
    return {
        "tvae_rows": n_mem,
        "tvae_epochs": epochs,
        "tvae_fit_cpu_s": round(lean, 3),
        "tvae_fit_cpu_s_before": round(before, 3),
        "tvae_speedup": round(before / lean, 2),
        "tvae_same_parameters": bool(same),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="n_syn = n_ref")
    parser.add_argument("--n-test", type=int, default=2_000)
    parser.add_argument("--paper-flow-epochs", type=int, default=1, help="epochs of the paper-size flow to time")
    parser.add_argument("--tvae-epochs", type=int, default=200, help="epochs of the timed TVAE fits")
    parser.add_argument("--tvae-repeats", type=int, default=3)
    parser.add_argument("--skip-attacks", action="store_true", help="time TVAE (and the profile) only")
    parser.add_argument("--profile", default="quick", help="experiment profile to time end to end")
    parser.add_argument("--skip-profile", action="store_true")
    parser.add_argument(
        "--cache-dir",
        help="an empty folder for the profile's cache, kept afterwards (default: a "
        "temporary one); point VRLIB_CACHE_DIR at it to run the notebook from the same results",
    )
    args = parser.parse_args()

    import torch

    from vrlib.experiments import domias as E

    df, _ = E.california()
    X = df.to_numpy(np.float64)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(X))
    syn = X[order[: args.n]] + rng.normal(scale=0.1, size=(args.n, X.shape[1]))
    ref = X[order[len(X) - args.n :]]
    test = np.vstack([X[order[: args.n_test // 2]], X[order[args.n : args.n + args.n_test // 2]]])

    result = {"n_syn": args.n, "n_ref": args.n, "n_test": len(test), "cpu_count": os.cpu_count(),
              "torch": torch.__version__, "python": platform.python_version()}  # fmt: skip
    quick = E.profile_settings(E.FAMILY, "quick")
    result.update(bench_tvae(df, quick["n_mem"], args.tvae_epochs, args.tvae_repeats))
    if not args.skip_attacks:
        bench_attacks(args, result, quick, syn, ref, test)
    if not args.skip_profile:
        bench_profile(args, result)
    print(json.dumps(result))


def bench_attacks(args, result, quick, syn, ref, test) -> None:
    import scipy.stats as st

    from vrlib.attacks.domias import get_attack
    from vrlib.density import BNAF
    from vrlib.experiments import domias as E

    flow_quick = dict(quick["flow"])
    attacks = {}
    for name in ("domias_kde", "eq1_kde", "logan_0", "logan_d1", "mc", "gan_leaks", "gan_leaks_cal", "domias_flow"):
        params = {}
        if name == "domias_flow":
            params = {"density_params": flow_quick}
        if name == "logan_0":
            params = {"epochs": quick["logan_epochs"]}
        seconds, _ = _timed(lambda: get_attack(name, **params).fit(syn, ref).score(test))
        attacks[name] = round(seconds, 3)
        print(f"{name:15s} fit+score {seconds:8.2f} s", flush=True)
    result["attack_seconds"] = attacks
    result["logan_0_epochs"] = quick["logan_epochs"]
    result["domias_flow_settings"] = "quick profile: " + json.dumps(flow_quick)

    # the reference implementation's DOMIAS-KDE: two scipy KDEs, densities and their ratio
    def scipy_domias():
        p_g = st.gaussian_kde(syn.T)
        p_r = st.gaussian_kde(ref.T)
        return p_g(test.T) / (p_r(test.T) + 1e-20)

    scipy_s, _ = _timed(scipy_domias)
    ours_s, _ = _timed(lambda: get_attack("domias_kde").fit(syn, ref).score(test))
    result["scipy_gaussian_kde_domias_seconds"] = round(scipy_s, 3)
    result["domias_kde_seconds_same_run"] = round(ours_s, 3)
    print(f"scipy gaussian_kde DOMIAS {scipy_s:.3f} s, ours {ours_s:.3f} s", flush=True)

    # paper-size BNAF: time a few epochs of one density, extrapolate to 50 epochs × 2 densities
    e = args.paper_flow_epochs
    paper = dict(E._FLOW_PAPER, epochs=e, patience=10**6)
    seconds, flow = _timed(lambda: BNAF(**paper).fit(syn))
    per_epoch = seconds / len(flow.history_)
    result["paper_flow_seconds_per_epoch"] = round(per_epoch, 3)
    result["paper_flow_epochs_timed"] = len(flow.history_)
    result["domias_flow_paper_extrapolated_seconds"] = round(2 * 50 * per_epoch, 1)
    print(
        f"paper BNAF: {per_epoch:.2f} s per epoch on {args.n} rows -> DOMIAS (2 flows × 50 epochs) "
        f"≈ {2 * 50 * per_epoch:.0f} s (extrapolated)",
        flush=True,
    )


def bench_profile(args, result) -> None:
    from vrlib.experiments import domias as E

    timings = {}
    with contextlib.ExitStack() as stack:
        if args.cache_dir:
            folder = Path(args.cache_dir)
            if folder.exists() and any(folder.iterdir()):
                raise SystemExit(f"--cache-dir {folder} is not empty: the timing needs a cold cache")
            folder.mkdir(parents=True, exist_ok=True)
        else:
            folder = stack.enter_context(tempfile.TemporaryDirectory())
        os.environ["VRLIB_CACHE_DIR"] = str(folder)  # a cold cache: every fit and every score is computed
        for fn in ("fig3a", "fig3b", "fig4", "fig6", "precision_curves", "minority"):
            seconds, _ = _timed(lambda: getattr(E, fn)(args.profile))
            timings[fn] = round(seconds, 1)
            print(f"{args.profile} {fn}: {seconds:.1f} s (measured, cold cache)", flush=True)
    result[f"{args.profile}_profile_seconds"] = timings
    result[f"{args.profile}_profile_total_seconds"] = round(sum(timings.values()), 1)


if __name__ == "__main__":
    main()
