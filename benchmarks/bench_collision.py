"""Benchmark of the membership-collision indicator (eq. 4), its ground truth and the TableGAN-MCA attack.

The release has 31,655 records (the size of the paper's Adult training split): the
pre-processed Adult training split resampled with replacement, so that it has the
duplicates a real release has.  Each vrlib function is timed against a straightforward
pandas implementation of the same computation, in the same run, and both results are
checked to be equal:

* indicator: ``record_frequency`` vs ``DataFrame.groupby(all columns).transform("size")``;
* ground truth: ``occurs_in`` vs ``DataFrame.merge(..., indicator=True)`` on all columns;
* attack: ``TableGanMCA`` (fit + score) vs the same steps (same shadow generator, same MLP)
  with the frequencies and shadow labels computed by the pandas functions above.  The
  shadow generator is BayNet (fast), so that the attack's own work is what is timed; the
  MLP's training dominates both, so their ratio is near 1 whatever the indicator costs.

Best of ``--repeat`` runs for the two small functions, one run for the attack.  The last
line printed is one JSON object.

Run: ``VRLIB_DATA_DIR=... python benchmarks/bench_collision.py``
"""

from __future__ import annotations

import argparse
import json
import platform
import time
import warnings

import numpy as np
import pandas as pd


def best_of(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def pandas_frequency(df: pd.DataFrame) -> np.ndarray:
    """The straightforward pandas indicator: group by every column, size of each row's group."""
    cols = list(df.columns)
    return df.groupby(cols, observed=True, sort=False)[cols[0]].transform("size").to_numpy()


def pandas_occurs_in(records: pd.DataFrame, reference: pd.DataFrame) -> np.ndarray:
    """Whether each record occurs in ``reference``: a left merge on every column with an indicator."""
    ref = reference.drop_duplicates()
    merged = records.reset_index(drop=True).merge(ref, how="left", on=list(records.columns), indicator=True)
    return (merged["_merge"] == "both").to_numpy()


def pandas_attack(release, schema, seed):
    """TableGAN-MCA with pandas for frequencies and labels (the same generator and classifier as vrlib's)."""
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from vrlib.generators import get_generator

    def features(df):
        cols = [df[c].cat.codes.to_numpy(float) if c in schema.categorical else df[c].to_numpy(float) for c in schema.columns]
        return np.column_stack([*cols, pandas_frequency(df).astype(float)])

    from vrlib.attacks.collision import match_precision

    shadow = get_generator("baynet").fit(release, schema, seed=seed).sample(len(release), seed=seed + 1)
    shadow = match_precision(shadow, release, schema)  # the release's format, as TableGanMCA does
    y = pandas_occurs_in(shadow, release)
    clf = make_pipeline(StandardScaler(), MLPClassifier((100,), max_iter=200, random_state=seed))
    clf.fit(features(shadow), y)
    return clf.predict_proba(features(release))[:, 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=31_655, help="records in the release")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")

    from vrlib.attacks.collision import TableGanMCA, occurs_in, record_frequency
    from vrlib.experiments import mca

    train, _, schema = mca.data(0)
    rng = np.random.default_rng(0)
    release = train.iloc[rng.integers(0, len(train), args.n)].reset_index(drop=True)

    t_ours, f_ours = best_of(lambda: record_frequency(release, schema), args.repeat)
    t_pd, f_pd = best_of(lambda: pandas_frequency(release), args.repeat)
    assert np.array_equal(f_ours, f_pd), "frequencies differ"
    print(f"indicator: vrlib {t_ours * 1e3:.1f} ms, pandas groupby {t_pd * 1e3:.1f} ms, ratio {t_pd / t_ours:.2f}")

    t_occ, o_ours = best_of(lambda: occurs_in(release, train, schema), args.repeat)
    t_occ_pd, o_pd = best_of(lambda: pandas_occurs_in(release, train), args.repeat)
    assert np.array_equal(o_ours, o_pd), "ground truth differs"
    print(f"occurs_in: vrlib {t_occ * 1e3:.1f} ms, pandas merge {t_occ_pd * 1e3:.1f} ms, ratio {t_occ_pd / t_occ:.2f}")

    start = time.perf_counter()
    attack = TableGanMCA(shadow_generator="baynet", seed=0).fit(release, schema)
    scores = attack.score(release)
    t_attack = time.perf_counter() - start
    start = time.perf_counter()
    pandas_attack(release, schema, 0)
    t_attack_pd = time.perf_counter() - start
    print(f"attack (fit + score, BayNet shadow): vrlib {t_attack:.2f} s, pandas steps {t_attack_pd:.2f} s, "
          f"ratio {t_attack_pd / t_attack:.2f}; MLP iterations {attack.classifier_[-1].n_iter_}, "
          f"shadow records labelled members {attack.shadow_positive_rate_:.3f}")

    result = {
        "benchmark": "collision", "n_release": args.n, "repeat": args.repeat, "python": platform.python_version(),
        "indicator_vrlib_s": round(t_ours, 5), "indicator_pandas_s": round(t_pd, 5), "indicator_ratio": round(t_pd / t_ours, 2),
        "occurs_in_vrlib_s": round(t_occ, 5), "occurs_in_pandas_s": round(t_occ_pd, 5),
        "occurs_in_ratio": round(t_occ_pd / t_occ, 2),
        "attack_vrlib_s": round(t_attack, 3), "attack_pandas_s": round(t_attack_pd, 3),
        "attack_ratio": round(t_attack_pd / t_attack, 2), "attack_scores_finite": bool(np.isfinite(scores).all()),
        "attack_mlp_iterations": int(attack.classifier_[-1].n_iter_),
    }  # fmt: skip
    print(json.dumps(result))


if __name__ == "__main__":
    main()
