"""Benchmark: time per target record of the traditional game at the paper's sizes, OUT sharing on and off.

Paper sizes (achilles, Adult): D_aux 10,000, D_test 5,000, training datasets of 1,000
records, 1,000 synthetic records each, 4,000 shadow + 200 test datasets per target,
R targets (10 per selection method).

What is measured and what is extrapolated:

* the number of generator fits each target needs at the paper's sizes is *counted
  exactly* from the game's plans (building plans costs no fit), with OUT sharing on
  (OUT datasets fitted once for all R targets, plus the extra draws the removal of
  targets needs) and off;
* the wall time per fit (fit + sample + encode + cache write, spread over ``--n-jobs``
  processes) is *measured* by running the game on a fraction of the datasets
  (``--fraction``) for a few targets, both ways;
* generation time per target = fits per target x measured time per fit
  (extrapolated);
* the query attack (features for all 32,767 subsets + random forest fit + scoring) is
  *measured* at the full paper size on stand-in datasets (bootstrap samples: the
  attack's cost does not depend on the generator).

Generator: the project's BayNet (``get_generator("baynet")``) when it is available,
otherwise a bootstrap stand-in; the output says which.

With ``--pipeline-only``, only the cost of one dataset through the synthesis pipeline
(plans → fit → sample → encode → cache write, as a game makes its datasets) is measured,
for the old code (the package of git commit ``--old``, imported beside the current one by
``benchmarks/_oldlib.py``) and the new, in this process, on the same ``--datasets`` shadow
plans of one target (BayNet, 1,000 Adult rows each, cold caches), in one process
(``--n-jobs 1``, the default there: CPU time of this process) or several; and the fit
alone (the generator on the same rows: a DataFrame for the old code, row positions of the
game's coded table for the new).  Keys ``ms_per_dataset`` and ``fit_ms``, old and new, in
CPU milliseconds; both must give the same datasets (``identical_datasets``).

Usage::

    VRLIB_DATA_DIR=... python benchmarks/bench_game.py [--targets 10] [--fraction 0.05] [--n-jobs -1]
    VRLIB_DATA_DIR=... python benchmarks/bench_game.py --pipeline-only [--datasets 200] [--old main]

The last printed line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import numpy as np

import vrlib
from vrlib.attacks.query import QueryAttack
from vrlib.cache import Cache
from vrlib.encoding import encode_table
from vrlib.games import SyntheticDatasets, TraditionalGame
from vrlib.parallel import default_n_jobs

PAPER = dict(n_aux=10_000, n_test=5_000, n_records=1000, n_synth=1000, n_shadow=4000, n_test_datasets=200)


class BootstrapStandIn:
    """Stand-in generator: a seeded bootstrap of the training rows."""

    def fit(self, df, schema, seed):
        self.df_ = df.reset_index(drop=True)
        return self

    def sample(self, n, seed):
        idx = np.random.default_rng(seed).integers(len(self.df_), size=n)
        return self.df_.iloc[idx].reset_index(drop=True)


def pick_generator(choice, df, schema):
    """``("baynet", "baynet")`` if the project's BayNet works here, else the stand-in."""
    if choice in ("auto", "baynet"):
        try:
            from vrlib.generators import get_generator

            gen = get_generator("baynet")
            gen.fit(df.iloc[:1000], schema, 0).sample(10, 1)
            return "baynet", "baynet (vrlib.generators)"
        except Exception as exc:  # noqa: BLE001 - any failure means: not available yet
            if choice == "baynet":
                raise
            print(f"BayNet unavailable ({type(exc).__name__}: {exc}); using the bootstrap stand-in")
    return BootstrapStandIn(), "bootstrap stand-in"


def distinct_fits(game, targets) -> int:
    """Generator fits needed for all targets: distinct datasets in their plans."""
    keys = set()
    for t in targets:
        keys.update(p.key for p in game.shadow_plans(t))
        keys.update(p.key for p in game.test_plans(t))
    return len(keys)


def pipeline(args) -> dict:
    """CPU ms per dataset through the synthesis pipeline and per fit, old code against new (see the module doc)."""
    import importlib
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _oldlib import load_old
    from bench_lost import cpu_seconds, load_average

    old, commit = load_old(args.old)
    n_jobs = 1 if args.n_jobs is None else args.n_jobs
    result = {
        "generator": "baynet",
        "datasets": args.datasets,
        "workers": n_jobs,
        "old_commit": commit,
        "load_before": load_average(),
    }
    made = {}
    for name, lib in (("old", old), ("new", vrlib)):
        games = importlib.import_module(f"{lib.__name__}.games")
        generators = importlib.import_module(f"{lib.__name__}.generators")
        cache = importlib.import_module(f"{lib.__name__}.cache")
        df, schema = lib.load("adult")
        sizes = dict(PAPER, n_shadow=args.datasets)
        best = {}
        for repeat in range(args.repeats):
            with tempfile.TemporaryDirectory() as tmp:
                game = games.TraditionalGame(
                    "baynet",
                    **sizes,
                    seed=args.seed + repeat,
                    n_jobs=n_jobs,
                    cache=cache.Cache(tmp, "synthetic"),
                    progress=False,
                ).fit(df, schema)
                target = game.data_.index[game._pools["aux"][0]]
                plans = game.shadow_plans(target)
                game._materialise(plans[:2], "warm-up")  # imports, first calls
                c0 = cpu_seconds()
                arrays = game._materialise(plans[2:], "timed")
                pipe = (cpu_seconds() - c0) / (len(plans) - 2)
                # The fit alone, on the same rows, as each version's pipeline fits.
                c0 = cpu_seconds()
                for p in plans[2:]:
                    gen = generators.get_generator("baynet")
                    if name == "new":
                        gen.fit_coded(game.coded_, p.rows, p.fit_seed)
                    else:
                        gen.fit(game.data_.iloc[p.rows], schema, p.fit_seed)
                fit = (cpu_seconds() - c0) / (len(plans) - 2)
            best["pipe"] = min(best.get("pipe", np.inf), pipe)
            best["fit"] = min(best.get("fit", np.inf), fit)
            if repeat == 0:
                made[name] = arrays
        result[name] = {"ms_per_dataset": best["pipe"] * 1000, "fit_ms": best["fit"] * 1000}
        print(
            f"{name}: {best['pipe'] * 1000:.2f} CPU ms per dataset through the pipeline, fit {best['fit'] * 1000:.2f} ms "
            f"(best of {args.repeats})",
            flush=True,
        )
    identical = all(np.array_equal(a[k], b[k]) for a, b in zip(made["old"], made["new"]) for k in a)
    result.update(
        ms_per_dataset={"old": result["old"]["ms_per_dataset"], "new": result["new"]["ms_per_dataset"]},
        fit_ms={"old": result["old"]["fit_ms"], "new": result["new"]["fit_ms"]},
        identical_datasets=bool(identical),
        load_after=load_average(),
    )
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pipeline-only",
        action="store_true",
        help="only the cost of one dataset through the synthesis pipeline, old code against new",
    )
    parser.add_argument("--datasets", type=int, default=200, help="datasets timed with --pipeline-only")
    parser.add_argument("--repeats", type=int, default=3, help="repeats with --pipeline-only (the best counts)")
    parser.add_argument("--old", default="main", help="git commit of the old code (--pipeline-only)")
    parser.add_argument("--targets", type=int, default=10, help="R, targets sharing the OUT datasets")
    parser.add_argument("--measure-targets", type=int, default=3, help="targets in the timed runs")
    parser.add_argument("--fraction", type=float, default=0.05, help="fraction of the datasets actually generated")
    parser.add_argument("--generator", choices=["auto", "baynet", "bootstrap"], default="auto")
    parser.add_argument("--n-jobs", type=int, default=None, help="worker processes (default: all cores)")
    parser.add_argument(
        "--attack-datasets",
        type=int,
        default=PAPER["n_shadow"] + PAPER["n_test_datasets"],
        help="datasets for the attack timing (default: the paper's 4,200)",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.pipeline_only:
        print(json.dumps(pipeline(args)))
        return
    n_jobs = default_n_jobs() if args.n_jobs is None else args.n_jobs
    cores = os.cpu_count() if n_jobs < 0 else n_jobs

    df, schema = vrlib.load("adult")
    generator, gen_name = pick_generator(args.generator, df, schema)
    print(f"generator: {gen_name}; {cores} worker(s)")
    rng = np.random.default_rng(args.seed)
    targets = list(df.index[rng.choice(len(df), size=args.targets, replace=False)])

    # Exact fit counts at the paper's sizes.
    fits = {}
    for share in (True, False):
        game = TraditionalGame(generator, **PAPER, share_out=share, seed=args.seed, cache=False, progress=False)
        fits[share] = distinct_fits(game.fit(df, schema), targets)
    print(f"paper sizes, {args.targets} targets: {fits[True]} fits with OUT sharing, {fits[False]} without")

    # Measured time per fit on a fraction of the datasets.
    small = dict(
        PAPER,
        n_shadow=max(2, round(PAPER["n_shadow"] * args.fraction)),
        n_test_datasets=max(2, round(PAPER["n_test_datasets"] * args.fraction)),
    )
    measured = {}
    for share in (True, False):
        with tempfile.TemporaryDirectory() as tmp:
            game = TraditionalGame(
                generator,
                **small,
                share_out=share,
                seed=args.seed,
                n_jobs=n_jobs,
                cache=Cache(tmp, "synthetic"),
                progress=False,
            ).fit(df, schema)
            t0 = time.perf_counter()
            for _ in game.iter_targets(targets[: args.measure_targets]):
                pass
            wall = time.perf_counter() - t0
        measured[share] = (wall, game.stats_["generated"])
        print(
            f"measured ({'sharing' if share else 'no sharing'}): {game.stats_['generated']} fits for "
            f"{args.measure_targets} targets ({small['n_shadow']}+{small['n_test_datasets']} datasets each) "
            f"in {wall:.2f} s = {wall / game.stats_['generated'] * 1000:.1f} ms per fit"
        )
    s_per_fit = sum(w for w, _ in measured.values()) / sum(n for _, n in measured.values())

    # Measured attack cost at full size (stand-in datasets; the attack does not care who made them).
    cats = {c: df[c].cat.categories for c in schema.categorical}
    n_att = args.attack_datasets
    arrays = [encode_table(df.iloc[rng.integers(len(df), size=PAPER["n_synth"])], schema, cats) for _ in range(n_att)]
    labels = np.arange(n_att) % 2
    batch = SyntheticDatasets.from_arrays(arrays, labels, schema, cats, tuple(df.columns))
    n_train = min(PAPER["n_shadow"], n_att - 2)
    target = df.loc[[targets[0]]]
    t0 = time.perf_counter()
    attack = QueryAttack(schema, seed=args.seed, n_jobs=n_jobs).fit(batch.subset(np.arange(n_train)), None, target)
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    attack.predict_proba(batch.subset(np.arange(n_train, n_att)))
    t_pred = time.perf_counter() - t0
    attack_s = t_fit + t_pred
    print(
        f"query attack: fit on {n_train} datasets ({len(attack.subsets_)} queries) {t_fit:.2f} s, "
        f"scoring {n_att - n_train} datasets {t_pred:.2f} s"
    )

    gen_shared = fits[True] / args.targets * s_per_fit
    gen_unshared = fits[False] / args.targets * s_per_fit
    print(
        f"per target (extrapolated): generation {gen_shared:.1f} s with sharing, {gen_unshared:.1f} s without; "
        f"attack {attack_s:.1f} s"
    )
    result = {
        "generator": gen_name,
        "workers": cores,
        "targets": args.targets,
        "fits_per_target_shared": fits[True] / args.targets,
        "fits_per_target_unshared": fits[False] / args.targets,
        "measured_fraction": args.fraction,
        "measured_s_per_fit": s_per_fit,
        "measured_wall_s_shared": measured[True][0],
        "measured_wall_s_unshared": measured[False][0],
        "generation_s_per_target_shared": gen_shared,
        "generation_s_per_target_unshared": gen_unshared,
        "attack_s_per_target": attack_s,
        "s_per_target_shared": gen_shared + attack_s,
        "s_per_target_unshared": gen_unshared + attack_s,
        "sharing_speedup": (gen_unshared + attack_s) / (gen_shared + attack_s),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
