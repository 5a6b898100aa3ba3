"""Benchmark of TableGAN-MCA's costs: the generators at the paper's training, the indicator (eq. 4), the attack.

**Generators** (``--part generators``): what one fit of WGAN-GP, WGAN-WC, CTGAN and TVAE
costs at the paper's training (300 epochs, batch 500) on the 31,655 pre-processed Adult
training rows (the authors' split), one PyTorch thread each as the mca profiles run them.
Each is fitted twice, for 1 and for ``1 + e`` epochs (``e`` from :data:`EXTRA_EPOCHS` times
``--scale``, about 10 CPU seconds of training); the difference gives the cost of an epoch, the rest the fixed cost (CTGAN's and TVAE's mode-specific normalisation of
age, a Bayesian Gaussian mixture, is most of it), and ``fixed + 300 × epoch`` the 300-epoch
fit, in CPU and in wall minutes (keys ``<generator>_300_epochs_min`` (CPU) and
``<generator>_300_epochs_wall_min``).  The old way is timed in the same process: CTGAN with
ctgan's own row sampler (one ``np.random.choice`` per row), TVAE with ``ctgan.TVAE``'s own
``fit``; the faster paths give the same fitted models bit for bit
(``tests/test_generators.py``).  The row sampler alone is also timed over one epoch of
batches (``ctgan_row_sampling_s_per_epoch_*``).  From the fit costs the benchmark predicts
what notebook 07 costs under ``--profile paper`` (``paper_profile_gan_fits_cpu_min``: every
GAN fit it makes, see :func:`vrlib.experiments.mca.paper_profile_fits`).

**Indicator and attack** (``--part indicator``):

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
line printed is one JSON object (the keys of the parts that ran).

Run: ``VRLIB_DATA_DIR=... python benchmarks/bench_collision.py [--part generators|indicator|all]``
"""

from __future__ import annotations

import argparse
import contextlib
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
        cols = [
            df[c].cat.codes.to_numpy(float) if c in schema.categorical else df[c].to_numpy(float)
            for c in schema.columns
        ]
        return np.column_stack([*cols, pandas_frequency(df).astype(float)])

    from vrlib.attacks.collision import match_precision

    shadow = get_generator("baynet").fit(release, schema, seed=seed).sample(len(release), seed=seed + 1)
    shadow = match_precision(shadow, release, schema)  # the release's format, as TableGanMCA does
    y = pandas_occurs_in(shadow, release)
    clf = make_pipeline(StandardScaler(), MLPClassifier((100,), max_iter=200, random_state=seed))
    clf.fit(features(shadow), y)
    return clf.predict_proba(features(release))[:, 1]


GENERATORS = (("wgan_gp", "WGAN-GP"), ("wgan_wc", "WGAN-WC"), ("ctgan", "CTGAN"), ("tvae", "TVAE"))
# extra epochs of the second fit: about 10 CPU seconds each, well above the spread of the fixed cost
EXTRA_EPOCHS = {"wgan_gp": 4, "wgan_wc": 4, "ctgan": 3, "tvae": 20}


def timed_fit(name, train, schema, epochs, old=False):
    """(CPU s, wall s) of one fit of generator ``name`` for ``epochs`` epochs, batch 500, one thread."""
    from unittest import mock

    import ctgan

    from vrlib.generators import get_generator
    from vrlib.generators.neural import CTGAN, TVAE

    gen = get_generator(name, epochs=epochs, batch_size=500, threads=1, device="cpu")
    with contextlib.ExitStack() as stack:
        if old and name == "ctgan":
            stack.enter_context(mock.patch.object(CTGAN, "_plain_sampler", True))
        if old and name == "tvae":
            stack.enter_context(mock.patch.object(TVAE, "_model_class", lambda self: ctgan.TVAE))
        cpu, wall = time.process_time(), time.perf_counter()
        gen.fit(train, schema, seed=0)
        return time.process_time() - cpu, time.perf_counter() - wall


def fit_costs(name, train, schema, epochs, old=False) -> dict:
    """Fixed and per-epoch cost (CPU and wall) from fits of 1 and 1 + ``epochs`` epochs; the 300-epoch fit."""
    c1, w1 = timed_fit(name, train, schema, 1, old)
    c2, w2 = timed_fit(name, train, schema, 1 + epochs, old)
    out = {}
    for kind, t1, t2 in (("cpu", c1, c2), ("wall", w1, w2)):
        epoch = max(t2 - t1, 0.0) / epochs
        fixed = max(t1 - epoch, 0.0)
        out[kind] = {"epoch_s": epoch, "fixed_s": fixed, "300_epochs_min": (fixed + 300 * epoch) / 60}
    return out


def sampler_seconds(train, schema, fast: bool, epochs: int = 3) -> float:
    """CPU seconds per epoch of CTGAN's real-row sampling alone (63 batches of 500 conditional rows)."""
    from ctgan.data_sampler import DataSampler
    from ctgan.data_transformer import DataTransformer
    from joblib import parallel_config

    from vrlib.generators.neural import _fast_sampler_class

    data = pd.DataFrame(
        {c: (train[c].cat.codes.to_numpy() if c in schema.categorical else train[c].to_numpy()) for c in train.columns}
    )
    transformer = DataTransformer()
    with parallel_config(backend="sequential"):
        transformer.fit(data, list(schema.categorical))
        matrix = transformer.transform(data)
    cls = _fast_sampler_class() if fast else DataSampler
    sampler = cls(matrix, transformer.output_info_list, True)
    np.random.seed(0)
    steps = len(train) // 500
    start = time.process_time()
    for _ in range(epochs * steps):
        _, _, col, opt = sampler.sample_condvec(500)
        sampler.sample_data(matrix, 500, col, opt)
    return (time.process_time() - start) / epochs


def bench_generators(args) -> dict:
    from vrlib.experiments import mca

    train, _, schema = mca.data(0, split="authors")
    print(f"generators: {len(train):,} training rows, batch 500, one thread; fits of 1 and 1 + e epochs")
    result, per_300 = {}, {}
    for name, label in GENERATORS:
        extra = max(1, round(EXTRA_EPOCHS[name] * args.scale))
        new = fit_costs(name, train, schema, extra)
        per_300[name] = new["cpu"]["300_epochs_min"]
        result[f"{name}_300_epochs_min"] = round(new["cpu"]["300_epochs_min"], 2)
        result[f"{name}_300_epochs_wall_min"] = round(new["wall"]["300_epochs_min"], 2)
        result[f"{name}_epoch_cpu_s"] = round(new["cpu"]["epoch_s"], 3)
        result[f"{name}_fixed_cpu_s"] = round(new["cpu"]["fixed_s"], 2)
        line = (
            f"  {label} (e = {extra}): epoch {new['cpu']['epoch_s']:.2f} s CPU ({new['wall']['epoch_s']:.2f} s wall), fixed "
            f"{new['cpu']['fixed_s']:.1f} s; 300 epochs {new['cpu']['300_epochs_min']:.1f} min CPU "
            f"({new['wall']['300_epochs_min']:.1f} min wall)"
        )
        if name in ("ctgan", "tvae"):
            old = fit_costs(name, train, schema, extra, old=True)
            result[f"{name}_300_epochs_min_old"] = round(old["cpu"]["300_epochs_min"], 2)
            result[f"{name}_epoch_cpu_s_old"] = round(old["cpu"]["epoch_s"], 3)
            ratio = old["cpu"]["300_epochs_min"] / new["cpu"]["300_epochs_min"]
            result[f"{name}_300_epochs_ratio"] = round(ratio, 2)
            line += (
                f"; old way {old['cpu']['300_epochs_min']:.1f} min CPU (epoch {old['cpu']['epoch_s']:.2f} s), "
                f"ratio {ratio:.2f}"
            )
        print(line)
    slow, fast = sampler_seconds(train, schema, False), sampler_seconds(train, schema, True)
    print(
        f"  CTGAN row sampling alone: {slow:.3f} s CPU per epoch with ctgan's sampler, {fast:.3f} s with one randint "
        f"per batch (ratio {slow / fast:.1f})"
    )
    result.update(
        ctgan_row_sampling_s_per_epoch_old=round(slow, 4),
        ctgan_row_sampling_s_per_epoch=round(fast, 4),
        ctgan_row_sampling_ratio=round(slow / fast, 1),
    )
    fits = mca.paper_profile_fits()
    total = sum(n * per_300[name] for name, n in fits.items())
    result["paper_profile_gan_fits"] = fits
    result["paper_profile_gan_fits_cpu_min"] = round(total, 1)
    print(
        f"  notebook 07 under --profile paper makes {fits} 300-epoch fits: {total:.0f} CPU minutes, "
        f"about {total / 2:.0f} wall minutes on 2 free cores"
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("all", "generators", "indicator"), default="all")
    parser.add_argument(
        "--scale", type=float, default=1.0, help="times the extra epochs of the second fit (generators)"
    )
    parser.add_argument("--n", type=int, default=31_655, help="records in the release (indicator)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    result = {"benchmark": "collision", "part": args.part, "python": platform.python_version()}
    if args.part in ("all", "generators"):
        result.update(bench_generators(args))
    if args.part in ("all", "indicator"):
        result.update(bench_indicator(args))
    print(json.dumps(result))


def bench_indicator(args) -> dict:
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
    print(
        f"attack (fit + score, BayNet shadow): vrlib {t_attack:.2f} s, pandas steps {t_attack_pd:.2f} s, "
        f"ratio {t_attack_pd / t_attack:.2f}; MLP iterations {attack.classifier_[-1].n_iter_}, "
        f"shadow records labelled members {attack.shadow_positive_rate_:.3f}"
    )

    return {
        "n_release": args.n,
        "repeat": args.repeat,
        "indicator_vrlib_s": round(t_ours, 5),
        "indicator_pandas_s": round(t_pd, 5),
        "indicator_ratio": round(t_pd / t_ours, 2),
        "occurs_in_vrlib_s": round(t_occ, 5),
        "occurs_in_pandas_s": round(t_occ_pd, 5),
        "occurs_in_ratio": round(t_occ_pd / t_occ, 2),
        "attack_vrlib_s": round(t_attack, 3),
        "attack_pandas_s": round(t_attack_pd, 3),
        "attack_ratio": round(t_attack_pd / t_attack, 2),
        "attack_scores_finite": bool(np.isfinite(scores).all()),
        "attack_mlp_iterations": int(attack.classifier_[-1].n_iter_),
    }


if __name__ == "__main__":
    main()
