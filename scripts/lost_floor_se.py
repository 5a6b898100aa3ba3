"""The noise floor's standard error: the bootstrap's against the approximation the scorecard uses without it.

Plays notebook 06's games (:func:`vrlib.experiments.lost.compare_games`) for a few settings at a profile's
sizes, keeps each setting's per-record results (``<out>/<profile>_<generator>_<n_targets>.pkl``, so a
stopped run resumes; the games' own cache makes a rerun cheap), then compares, per setting and for
subsets of its records,

* ``floor_se`` and ``excess_se`` of :func:`~vrlib.experiments.lost.summarise_rmsd` (the bootstrap's),
* with :func:`vrlib.scorecard.lost.floor_se_approx` and :func:`~vrlib.scorecard.lost.excess_se_approx`
  (the floor's se scaled from the RMSD's by normal theory, no covariance term: ``approx_*``) and with the plain
  normal-theory ``floor / sqrt(2 n)`` over the records' count (``raw_*``).

Prints one row per (setting, records) and, last, one JSON line with the ratios' summary.

Usage::

    python scripts/lost_floor_se.py --profile quick --out results/lost_floor_se [--generators synthpop baynet]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from vrlib.experiments import lost
from vrlib.scorecard import lost as card


def play(args) -> dict[str, pd.DataFrame]:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    for g in args.generators:
        path = out / f"{args.profile}_{g}_{args.n_targets}.pkl"
        if not path.exists():
            overrides = {} if args.n_targets is None else dict(n_targets=args.n_targets)
            df = lost.compare_games("adult", g, profile=args.profile, seed=args.seed, n_jobs=1, **overrides)
            df.to_pickle(path)
        results[g] = pd.read_pickle(path)
    return results


def compare(results: dict[str, pd.DataFrame], subsets=(10, 25, 50, 75), n_subsets=20, seed=0) -> pd.DataFrame:
    """Per setting, all its records and ``n_subsets`` random subsets of each size in ``subsets``."""
    rng = np.random.default_rng(seed)
    rows = []
    for g, df in results.items():
        records = df.record.unique()
        picks = [("all", records)]
        for k in subsets:
            if k < len(records):
                picks += [(f"{k} #{i}", rng.choice(records, k, replace=False)) for i in range(n_subsets)]
        for label, chosen in picks:
            s = lost.summarise_rmsd(df[df.record.isin(chosen)]).iloc[0]
            raw = s.floor / np.sqrt(2 * s.n_targets)
            rows.append(
                dict(
                    setting=g,
                    records=label,
                    n=int(s.n_targets),
                    rmsd=s.rmsd,
                    floor=s.floor,
                    rmsd_se=s.rmsd_se,
                    floor_se=s.floor_se,
                    excess_se=s.excess_se,
                    # var(r − f) = var r + var f − 2 cov: the bootstrap's correlation of the RMSD and the floor
                    corr=(s.rmsd_se**2 + s.floor_se**2 - s.excess_se**2) / (2 * s.rmsd_se * s.floor_se),
                    raw_floor_se=raw,
                    raw_excess_se=float(np.hypot(s.rmsd_se, raw)),
                    approx_floor_se=card.floor_se_approx(s.floor, s.rmsd, s.rmsd_se),
                    approx_excess_se=card.excess_se_approx(floor=s.floor, rmsd=s.rmsd, rmsd_se=s.rmsd_se),
                )
            )
    out = pd.DataFrame(rows)
    for k in ("floor", "excess"):
        out[f"raw_{k}_ratio"] = out[f"raw_{k}_se"] / out[f"{k}_se"]
        out[f"approx_{k}_ratio"] = out[f"approx_{k}_se"] / out[f"{k}_se"]
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--profile", default="quick")
    p.add_argument("--generators", nargs="+", default=["synthpop"])
    p.add_argument("--n-targets", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="results/lost_floor_se")
    args = p.parse_args()
    table = compare(play(args))
    ratios_by_n = table.groupby(["setting", "n"])[
        ["raw_floor_ratio", "approx_floor_ratio", "raw_excess_ratio", "approx_excess_ratio", "corr"]
    ].agg(["median", "min", "max"])
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        print(table[table.records == "all"].round(4).to_string(index=False))
        print("\napproximate se / bootstrap se, per setting and number of records (subsets of the records):")
        print(ratios_by_n.round(3).to_string())
    ratios = {
        c: {"min": float(table[c].min()), "median": float(table[c].median()), "max": float(table[c].max())}
        for c in ("raw_floor_ratio", "raw_excess_ratio", "approx_floor_ratio", "approx_excess_ratio", "corr")
    }
    print(json.dumps({"profile": args.profile, "settings": list(args.generators), "rows": len(table), **ratios}))


if __name__ == "__main__":
    main()
