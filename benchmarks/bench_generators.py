"""Benchmark: fit + sample time and marginal quality of every generator, against DataSynthesizer.

For 1,000 training rows of Adult and of Census (a seeded sample), each generator is
fitted and 1,000 rows sampled, several times with different seeds; the median
time of fit + sample (ours: CPU seconds of this process, on one thread, which a shared
machine's load inflates far less than wall time) is reported with the mean 1-way and 2-way marginal
total-variation distance of the output to the training rows (``vrlib.metrics.
marginal_distance``).  As a yardstick of "no worse beyond noise", the same distances
are given for 1,000 *other real rows* (a hold-out sample): sampling noise alone.

BayNet and PrivBayes are also run through DataSynthesizer 0.1.13 (the
implementation behind the achilles authors' reprosyn), from the same DataFrame to a
DataFrame (CSV and JSON round trips included, as the package needs them), with the
ratio of the median times.  DataSynthesizer is an optional dependency
(``pip install DataSynthesizer==0.1.13``); without it the benchmark says so and
reports ours.  Note that DataSynthesizer's structure search uses a process pool over
all cores, while ours runs on one thread (BLAS / OpenMP / PyTorch threads are set to
1 below); TVAE and CTGAN run few epochs and report the time per epoch, measured as
the difference between a 1-epoch and an ``--epochs`` fit.  For Synthpop and BayNet, the
path a privacy game takes is timed too: fit + sample straight to the arrays it caches
against the way through a DataFrame, and writing the cache entry against deflating every
array (what ``vrlib.cache.serialise`` did before it stored incompressible floats as they are).

Usage::

    VRLIB_DATA_DIR=... python benchmarks/bench_generators.py [--repeats 7] [--ds-repeats 1]
        [--ds-degrees 2] [--epochs 10] [--datasets adult census]

The last printed line is one JSON object with every figure; ``synthpop_ms`` (Synthpop,
1,000 Adult rows, fit + sample, median) is read by other tools.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core for ours: set before numpy is imported

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
import zipfile  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import vrlib  # noqa: E402
from vrlib.cache import serialise  # noqa: E402
from vrlib.encoding import encode_table  # noqa: E402
from vrlib.generators import get_generator  # noqa: E402
from vrlib.metrics import marginal_distance  # noqa: E402

# Ours: label -> (registry name, parameters).  PrivBayes at epsilon = 1 (achilles Fig. 4's smallest).
OURS = {
    "synthpop": ("synthpop", {}),
    "baynet_k1": ("baynet", {"degree": 1}),
    "baynet_k2": ("baynet", {"degree": 2}),
    "privbayes_k1_eps1": ("privbayes", {"degree": 1, "epsilon": 1.0}),
    "privbayes_k2_eps1": ("privbayes", {"degree": 2, "epsilon": 1.0}),
    # DataSynthesizer's Laplace noise on counts is (d - k)/eps2, half of PrivBayes's 2(d - k)/eps2:
    # our epsilon = 2 has its noise on the marginals at epsilon = 1 (and twice its structure budget).
    "privbayes_k2_eps2": ("privbayes", {"degree": 2, "epsilon": 2.0}),
    "noise": ("noise", {"scale": 1.0, "resample_prob": 0.1}),
}
NEURAL = ("tvae", "ctgan")


def quality(train, out, schema) -> dict:
    return {
        "tvd1": marginal_distance(train, out, schema, way=1),
        "tvd2": marginal_distance(train, out, schema, way=2),
    }


def summarise(times, qualities) -> dict:
    return {
        "median_s": float(np.median(times)),
        "runs": len(times),
        "tvd1": float(np.mean([q["tvd1"] for q in qualities])),
        "tvd2": float(np.mean([q["tvd2"] for q in qualities])),
    }


def run_ours(name, params, train, schema, n, repeats) -> dict:
    times, quals = [], []
    get_generator(name, **params).fit(train, schema, seed=999).sample(n, seed=999)  # warm-up (imports, caches)
    for r in range(repeats):
        start = time.process_time()  # CPU time: what a shared machine's load inflates least
        out = get_generator(name, **params).fit(train, schema, seed=r).sample(n, seed=r)
        times.append(time.process_time() - start)
        quals.append(quality(train, out, schema))
    return summarise(times, quals)


def deflate_every_array(arrays: dict, meta: dict) -> bytes:
    """A cache entry as ``vrlib.cache.serialise`` wrote it before: every array deflated (zlib level 1)."""
    payload = {**arrays, "__meta__": np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8)}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for key, arr in payload.items():
            with zf.open(f"{key}.npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, arr, allow_pickle=False)
    return buf.getvalue()


def run_to_arrays(name, train, schema, n, repeats) -> dict:
    """Fit + sample to the arrays a game caches: through a DataFrame (before) and straight (sample_encoded).

    Then the cache entry made of those arrays: every array deflated (before) against
    ``serialise``, which stores the arrays a sample shows do not compress (BayNet's floats).
    """
    times = {"table": [], "direct": [], "entry_before": [], "entry": []}
    sizes = {}
    get_generator(name).fit(train, schema, seed=999).sample_encoded(n, seed=999)  # warm-up
    for r in range(repeats):
        for way in ("table", "direct"):
            start = time.process_time()
            gen = get_generator(name).fit(train, schema, seed=r)
            if way == "table":
                encode_table(gen.sample(n, seed=r), schema)
            else:
                arrays = gen.sample_encoded(n, seed=r, schema=schema)
            times[way].append(time.process_time() - start)
        for way, write in (("entry_before", deflate_every_array), ("entry", serialise)):
            start = time.process_time()
            for _ in range(10):  # an entry takes about a millisecond: time ten
                sizes[way] = len(write(arrays, {"kind": "synthetic"}))
            times[way].append((time.process_time() - start) / 10)
    med = {way: float(np.median(t)) for way, t in times.items()}
    return {
        "via_table_s": med["table"],
        "direct_s": med["direct"],
        "speedup": med["table"] / med["direct"],
        "entry_before_s": med["entry_before"],
        "entry_s": med["entry"],
        "entry_speedup": med["entry_before"] / med["entry"],
        "entry_before_bytes": sizes["entry_before"],
        "entry_bytes": sizes["entry"],
    }


def run_neural(name, train, schema, n, epochs) -> dict:
    common = {"device": "cpu", "threads": 1}
    get_generator(name, epochs=1, **common).fit(train, schema, seed=0)  # warm-up: imports PyTorch
    start = time.perf_counter()
    get_generator(name, epochs=1, **common).fit(train, schema, seed=1)
    one = time.perf_counter() - start
    start = time.perf_counter()
    gen = get_generator(name, epochs=epochs, **common).fit(train, schema, seed=1)
    out = gen.sample(n, seed=1)
    total = time.perf_counter() - start
    return {
        "median_s": total,
        "runs": 1,
        "epochs": epochs,
        "per_epoch_s": (gen.fit_seconds_ - one) / (epochs - 1) if epochs > 1 else float("nan"),
        **quality(train, out, schema),
    }


# --------------------------------------------------------------------------- DataSynthesizer


def datasynthesizer():
    """The DataSynthesizer classes, or the reason they cannot be used."""
    try:
        np.set_printoptions(legacy="1.25")  # under numpy 2 it round-trips numpy scalars through repr
        from DataSynthesizer.DataDescriber import DataDescriber
        from DataSynthesizer.DataGenerator import DataGenerator
    except Exception as exc:  # noqa: BLE001 - any failure means "not available"
        return None, f"{type(exc).__name__}: {exc} (pip install DataSynthesizer==0.1.13)"
    return (DataDescriber, DataGenerator), None


def ds_fit_sample(classes, train, schema, n, epsilon, degree, bins, seed, folder) -> pd.DataFrame:
    """DataSynthesizer's correlated attribute mode (PrivBayes; epsilon=0 turns the noise off)."""
    describer_cls, generator_cls = classes
    csv = os.path.join(folder, "train.csv")
    description = os.path.join(folder, "description.json")
    # Categories as non-numeric labels: DataSynthesizer reads the CSV back with pandas,
    # and a "String" attribute whose values parse as numbers fails (KeyError) in its encoder.
    coded = train.copy()
    for c in schema.categorical:
        coded[c] = "c" + train[c].cat.codes.astype(str)
    coded.to_csv(csv, index=False)
    is_categorical = {c: c in schema.categorical for c in train.columns}
    datatype = {
        c: "String" if c in schema.categorical else ("Integer" if np.all(train[c] == np.round(train[c])) else "Float")
        for c in train.columns
    }
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        describer = describer_cls(histogram_bins=bins, category_threshold=10**6)
        describer.describe_dataset_in_correlated_attribute_mode(
            csv,
            k=degree,
            epsilon=epsilon,
            attribute_to_is_categorical=is_categorical,
            attribute_to_datatype=datatype,
            seed=seed,
        )
        describer.save_dataset_description_to_file(description)
        generator = generator_cls()
        generator.generate_dataset_in_correlated_attribute_mode(n, description, seed=seed)
    return generator.synthetic_dataset


def to_schema(raw: pd.DataFrame, train: pd.DataFrame, schema) -> tuple[pd.DataFrame, int]:
    """DataSynthesizer's output with our dtypes; also the number of values outside the category sets."""
    out, unknown = {}, 0
    for c in train.columns:
        if c in schema.categorical:
            codes = pd.to_numeric(raw[c].astype(str).str[1:], errors="coerce")  # "c<code>" -> code
            ok = codes.notna() & codes.between(0, len(train[c].cat.categories) - 1)
            unknown += int((~ok).sum())
            out[c] = pd.Categorical.from_codes(np.where(ok, codes.fillna(0), 0).astype(int), dtype=train[c].dtype)
        else:
            out[c] = pd.to_numeric(raw[c], errors="coerce").astype(np.float64)
    return pd.DataFrame(out), unknown


def run_ds(classes, train, schema, n, epsilon, degree, bins, repeats) -> dict:
    times, quals, unknown = [], [], 0
    with tempfile.TemporaryDirectory() as folder:
        for r in range(repeats):
            start = time.perf_counter()
            raw = ds_fit_sample(classes, train, schema, n, epsilon, degree, bins, r, folder)
            out, bad = to_schema(raw, train, schema)
            times.append(time.perf_counter() - start)
            unknown += bad
            # Values outside the real category sets (none expected) count as unseen cells.
            quals.append(quality(train, out.fillna({c: train[c].iloc[0] for c in schema.continuous}), schema))
    return {**summarise(times, quals), "unknown_values": unknown}


# --------------------------------------------------------------------------- main


def load(name: str):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df, schema = vrlib.load(name)
    notes = [str(w.message) for w in caught]
    return df, schema, notes


def fmt(v, unit=""):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v * 1000:.1f} ms" if unit == "ms" else f"{v:.4f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["adult", "census"])
    parser.add_argument("--rows", type=int, default=1000, help="training rows, and rows sampled")
    parser.add_argument("--repeats", type=int, default=7, help="timed fits of each of our generators")
    parser.add_argument("--ds-repeats", type=int, default=1, help="timed DataSynthesizer fits (about 10 s each)")
    parser.add_argument(
        "--ds-degrees",
        type=int,
        nargs="*",
        default=[2],
        help="network degrees run through DataSynthesizer (2: the peer figure; add 1 for the authors' setting)",
    )
    parser.add_argument("--epochs", type=int, default=10, help="TVAE / CTGAN epochs")
    parser.add_argument("--no-ds", action="store_true", help="skip DataSynthesizer")
    parser.add_argument("--seed", type=int, default=0, help="seed of the training sample")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    classes, reason = (None, "skipped (--no-ds)") if args.no_ds else datasynthesizer()
    if classes is None:
        print(f"DataSynthesizer not available: {reason}; reporting ours only")
    results = {
        "rows": args.rows,
        "repeats": args.repeats,
        "ds_repeats": args.ds_repeats,
        "datasynthesizer": reason or "0.1.13",
        "datasets": {},
    }
    for name in args.datasets:
        df, schema, notes = load(name)
        for note in notes:
            print(f"note ({name}): {note}")
        rng = np.random.default_rng(args.seed)
        rows = rng.permutation(len(df))
        train = df.iloc[rows[: args.rows]].reset_index(drop=True)
        holdout = df.iloc[rows[args.rows : 2 * args.rows]].reset_index(drop=True)
        res = {"holdout": quality(train, holdout, schema), "ours": {}, "datasynthesizer": {}}
        print(
            f"\n== {name}: {args.rows} training rows, {len(schema.categorical)} categorical + "
            f"{len(schema.continuous)} continuous columns =="
        )
        print(f"{'generator':<22}{'fit+sample':>12}{'per epoch':>11}{'TVD 1-way':>11}{'TVD 2-way':>11}")
        print(
            f"{'(real hold-out rows)':<22}{'':>12}{'':>11}{fmt(res['holdout']['tvd1']):>11}{fmt(res['holdout']['tvd2']):>11}"
        )
        for label, (gen, params) in OURS.items():
            r = run_ours(gen, params, train, schema, args.rows, args.repeats)
            res["ours"][label] = r
            print(f"{label:<22}{fmt(r['median_s'], 'ms'):>12}{'':>11}{fmt(r['tvd1']):>11}{fmt(r['tvd2']):>11}")
        # The way Synthpop grew its trees before: scikit-learn's CART on one-hot columns.
        r = res["synthpop_before"] = run_ours("synthpop", {"trees": "sklearn"}, train, schema, args.rows, args.repeats)
        r["speedup"] = r["median_s"] / res["ours"]["synthpop"]["median_s"]
        print(
            f"{'synthpop (sklearn)':<22}{fmt(r['median_s'], 'ms'):>12}{'':>11}{fmt(r['tvd1']):>11}"
            f"{fmt(r['tvd2']):>11}   ours {r['speedup']:.1f}x faster"
        )
        for gen in ("synthpop", "baynet"):  # the fits of a privacy game, as the arrays it caches
            r = res[f"{gen}_to_arrays"] = run_to_arrays(gen, train, schema, args.rows, args.repeats)
            print(
                f"{gen + ' to arrays':<22}{fmt(r['direct_s'], 'ms'):>12}   through a DataFrame "
                f"{fmt(r['via_table_s'], 'ms')}: {r['speedup']:.2f}x"
            )
            print(
                f"{gen + ' cache entry':<22}{fmt(r['entry_s'], 'ms'):>12}   every array deflated "
                f"{fmt(r['entry_before_s'], 'ms')}: {r['entry_speedup']:.2f}x; "
                f"{r['entry_bytes'] / 1000:.0f} kB against {r['entry_before_bytes'] / 1000:.0f} kB"
            )
        for gen in NEURAL:
            r = run_neural(gen, train, schema, args.rows, args.epochs)
            res["ours"][f"{gen}_{args.epochs}ep"] = r
            print(
                f"{gen + f' ({args.epochs} epochs)':<22}{fmt(r['median_s'], 'ms'):>12}"
                f"{fmt(r['per_epoch_s'], 'ms'):>11}{fmt(r['tvd1']):>11}{fmt(r['tvd2']):>11}"
            )
        if classes is not None:
            for degree in args.ds_degrees:
                for kind, eps_ds, ours_label in (
                    ("baynet", 0, f"baynet_k{degree}"),
                    ("privbayes_eps1", 1.0, f"privbayes_k{degree}_eps1"),
                ):
                    label = f"{kind}_k{degree}" if kind == "baynet" else f"privbayes_k{degree}_eps1"
                    try:
                        r = run_ds(classes, train, schema, args.rows, eps_ds, degree, 10, args.ds_repeats)
                    except Exception as exc:  # noqa: BLE001 - report and go on with ours
                        print(f"DataSynthesizer {label} failed: {type(exc).__name__}: {exc}")
                        res["datasynthesizer"][label] = {"error": f"{type(exc).__name__}: {exc}"}
                        continue
                    if ours_label not in res["ours"]:
                        gen, params = "baynet" if kind == "baynet" else "privbayes", {"degree": degree}
                        if kind != "baynet":
                            params["epsilon"] = 1.0
                        res["ours"][ours_label] = run_ours(gen, params, train, schema, args.rows, args.repeats)
                    ours = res["ours"][ours_label]
                    r["speedup"] = r["median_s"] / ours["median_s"]
                    res["datasynthesizer"][label] = r
                    print(
                        f"{'DS ' + label:<22}{fmt(r['median_s'], 'ms'):>12}{'':>11}{fmt(r['tvd1']):>11}"
                        f"{fmt(r['tvd2']):>11}   ours {r['speedup']:.0f}x faster"
                    )
        results["datasets"][name] = res
    results["total_s"] = time.perf_counter() - started
    if "adult" in results["datasets"]:  # read by other tools: Synthpop fit + sample of 1,000 Adult rows, median
        results["synthpop_ms"] = round(1000 * results["datasets"]["adult"]["ours"]["synthpop"]["median_s"], 2)
        results["synthpop_ms_before"] = round(1000 * results["datasets"]["adult"]["synthpop_before"]["median_s"], 2)
        results["synthpop_speedup"] = round(results["datasets"]["adult"]["synthpop_before"]["speedup"], 2)
        results["synthpop_to_arrays_ms"] = round(
            1000 * results["datasets"]["adult"]["synthpop_to_arrays"]["direct_s"], 2
        )
        entry = results["datasets"]["adult"]["baynet_to_arrays"]  # a BayNet dataset's cache entry, before / now
        results["baynet_entry_ms"], results["baynet_entry_ms_before"] = (
            round(1000 * entry[k], 3) for k in ("entry_s", "entry_before_s")
        )
    print(
        "\nPrivBayes eps=2 (ours) adds the Laplace noise DataSynthesizer adds at eps=1 (it uses half of "
        "PrivBayes's scale)."
    )
    print(
        f"\ntotal benchmark time {results['total_s']:.0f} s; load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores"
    )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
