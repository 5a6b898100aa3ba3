"""Benchmark: cost per record of the traditional + model-seeded comparison (Lost in the Averages), quick and paper sizes.

Each record needs: its shadow IN datasets, its traditional test IN datasets, its
model-seeded OUT datasets (D - x + reference), one attack fit and the scoring of both
games' test datasets.  Shared by all records of D: the shadow OUT datasets, the
traditional test OUT datasets and the model-seeded IN datasets (D itself, only the seed
varies).  The baseline, run in the same process, is the same computation with the
model-seeded IN side fitted again for every record (what a per-record game would do).

What is measured and what is extrapolated:

* fits per record are *counted exactly* from the games' plans for ``--count-records``
  records (plans cost no fit) and split into per-record and shared fits; the cost per
  record for R records is per-record + shared / R;
* the wall time per fit (Synthpop on Adult, fit + sample + encode) is *measured* by
  running :func:`vrlib.experiments.lost.attack_records` on ``--fraction`` of the datasets
  for ``--measure-records`` records at |D| = 1,000 (this also times the attack end to end);
* the query attack (features of all 32,767 subsets, forest fit, scoring of both games)
  is *measured* at each profile's full size on stand-in datasets (bootstrap samples:
  its cost does not depend on the generator);
* seconds per record = fits per record x measured time per fit + attack (extrapolated).

Usage::

    VRLIB_DATA_DIR=... python benchmarks/bench_lost.py [--fraction 0.1] [--measure-records 2] [--n-jobs 1]

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
from vrlib.cache import encode_table
from vrlib.experiments import lost
from vrlib.games import SyntheticDatasets, TraditionalGame
from vrlib.parallel import default_n_jobs


def count_fits(game, records) -> dict:
    """Distinct datasets the records need, split into record-specific and shared ones (model-seeded IN apart)."""
    uses: dict[str, int] = {}
    seeded_in = set()
    for r in records:
        keys = {p.key for p in game.shadow_plans(r) + TraditionalGame.test_plans(game, r)}
        seeded = game.test_plans(r)
        seeded_in.update(p.key for p in seeded if p.label == 1)
        keys |= {p.key for p in seeded}
        for k in keys:
            uses[k] = uses.get(k, 0) + 1
    shared = {k for k, n in uses.items() if n > 1}
    return dict(per_record=(len(uses) - len(shared)) / len(records), shared_in=len(seeded_in),
                shared_other=len(shared - seeded_in))  # fmt: skip


def attack_seconds(df, schema, settings, rng, n_jobs) -> float:
    """Measured: attack fit on n_shadow stand-in datasets + scoring of both games' test datasets."""
    cats = {c: df[c].cat.categories for c in schema.categorical}
    n_train, n_score = settings["n_shadow"], 2 * settings["n_games"] * settings["n_runs"]
    arrays = [encode_table(df.iloc[rng.integers(len(df), size=settings["n_synth"])], schema, cats)
              for _ in range(n_train + n_score)]  # fmt: skip
    batch = SyntheticDatasets.from_arrays(arrays, np.arange(len(arrays)) % 2, schema, cats, tuple(df.columns))
    t0 = time.perf_counter()
    attack = QueryAttack(schema, n_queries=settings["n_queries"], n_jobs=n_jobs).fit(
        batch.subset(np.arange(n_train)), None, df.iloc[[0]])
    attack.predict_proba(batch.subset(np.arange(n_train, n_train + n_score)))
    return time.perf_counter() - t0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fraction", type=float, default=0.1, help="fraction of the quick datasets actually generated")
    parser.add_argument("--measure-records", type=int, default=2, help="records in the timed run")
    parser.add_argument("--count-records", type=int, default=10, help="records whose plans are counted")
    parser.add_argument("--n-jobs", type=int, default=None, help="worker processes (default: all cores)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    n_jobs = default_n_jobs() if args.n_jobs is None else args.n_jobs
    cores = os.cpu_count() if n_jobs < 0 else n_jobs
    df, schema = vrlib.load("adult")
    rng = np.random.default_rng(args.seed)
    result = {"generator": "synthpop", "workers": cores, "fraction": args.fraction}

    # Measured: time per fit and end-to-end per record, on a fraction of the quick sizes.
    quick = lost.settings_for("quick")
    small = dict(quick, n_shadow=max(4, round(quick["n_shadow"] * args.fraction)),
                 n_games=max(4, round(quick["n_games"] * args.fraction)))  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["VRLIB_CACHE_DIR"] = tmp  # a cold cache: everything is generated
        game = lost.make_game("adult", df, schema, "synthpop", None, small, args.seed, n_jobs=n_jobs)
        records = lost.choose_records(game, args.measure_records, args.seed)
        t0 = time.perf_counter()
        lost.attack_records(game, records, small, args.seed, progress=False)
        wall = time.perf_counter() - t0
    fits = game.stats_["generated"]
    small_attack = attack_seconds(df, schema, small, rng, n_jobs)
    s_per_fit = max(wall - args.measure_records * small_attack, 0.0) / fits
    print(f"measured: {fits} Synthpop fits + {args.measure_records} attacks ({small['n_shadow']} shadow, "
          f"{small['n_games']} x {small['n_runs']} games per side pair) in {wall:.1f} s; {s_per_fit * 1000:.0f} ms per fit")
    result.update(measured_wall_s=wall, measured_fits=fits, measured_s_per_fit=s_per_fit)

    for profile in ("quick", "paper"):
        settings = lost.settings_for(profile)
        n_records = settings["n_targets"]
        game = lost.make_game("adult", df, schema, "synthpop", None, settings, args.seed)
        counted = count_fits(game, lost.choose_records(game, args.count_records, args.seed))
        shared_fits = (counted["shared_in"] + counted["shared_other"]) / n_records
        with_sharing = counted["per_record"] + shared_fits
        without = with_sharing + counted["shared_in"] * (1 - 1 / n_records)  # IN side fitted for every record
        attack_s = attack_seconds(df, schema, settings, rng, n_jobs)
        per_record = with_sharing * s_per_fit + attack_s
        per_record_without = without * s_per_fit + attack_s
        print(f"{profile} ({n_records} records, {settings['n_shadow']} shadow, {settings['n_games']} games x "
              f"{settings['n_runs']} runs): {with_sharing:.1f} fits per record with the shared IN side, "
              f"{without:.1f} without; attack {attack_s:.1f} s; {per_record:.1f} s per record "
              f"({per_record * n_records / 3600:.2f} h for all), {per_record_without:.1f} s without sharing "
              f"(extrapolated)")  # fmt: skip
        result[profile] = dict(records=n_records, fits_per_record_shared=with_sharing,
                               fits_per_record_unshared=without, attack_s_per_record=attack_s,
                               s_per_record_shared=per_record, s_per_record_unshared=per_record_without,
                               hours_all_records_shared=per_record * n_records / 3600,
                               sharing_speedup=per_record_without / per_record)  # fmt: skip
    print(json.dumps(result))


if __name__ == "__main__":
    main()
