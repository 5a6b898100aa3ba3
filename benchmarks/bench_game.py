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

Usage::

    VRLIB_DATA_DIR=... python benchmarks/bench_game.py [--targets 10] [--fraction 0.05] [--n-jobs -1]

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
from vrlib.cache import Cache, encode_table
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=10, help="R, targets sharing the OUT datasets")
    parser.add_argument("--measure-targets", type=int, default=3, help="targets in the timed runs")
    parser.add_argument("--fraction", type=float, default=0.05, help="fraction of the datasets actually generated")
    parser.add_argument("--generator", choices=["auto", "baynet", "bootstrap"], default="auto")
    parser.add_argument("--n-jobs", type=int, default=None, help="worker processes (default: all cores)")
    parser.add_argument("--attack-datasets", type=int, default=PAPER["n_shadow"] + PAPER["n_test_datasets"],
                        help="datasets for the attack timing (default: the paper's 4,200)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
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
    small = dict(PAPER, n_shadow=max(2, round(PAPER["n_shadow"] * args.fraction)),
                 n_test_datasets=max(2, round(PAPER["n_test_datasets"] * args.fraction)))  # fmt: skip
    measured = {}
    for share in (True, False):
        with tempfile.TemporaryDirectory() as tmp:
            game = TraditionalGame(generator, **small, share_out=share, seed=args.seed, n_jobs=n_jobs,
                                   cache=Cache(tmp, "synthetic"), progress=False).fit(df, schema)  # fmt: skip
            t0 = time.perf_counter()
            for _ in game.iter_targets(targets[: args.measure_targets]):
                pass
            wall = time.perf_counter() - t0
        measured[share] = (wall, game.stats_["generated"])
        print(f"measured ({'sharing' if share else 'no sharing'}): {game.stats_['generated']} fits for "
              f"{args.measure_targets} targets ({small['n_shadow']}+{small['n_test_datasets']} datasets each) "
              f"in {wall:.2f} s = {wall / game.stats_['generated'] * 1000:.1f} ms per fit")  # fmt: skip
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
    print(f"query attack: fit on {n_train} datasets ({len(attack.subsets_)} queries) {t_fit:.2f} s, "
          f"scoring {n_att - n_train} datasets {t_pred:.2f} s")  # fmt: skip

    gen_shared = fits[True] / args.targets * s_per_fit
    gen_unshared = fits[False] / args.targets * s_per_fit
    print(f"per target (extrapolated): generation {gen_shared:.1f} s with sharing, {gen_unshared:.1f} s without; "
          f"attack {attack_s:.1f} s")  # fmt: skip
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
