"""Benchmark: what one target costs at the paper's sizes, stage by stage, and the predicted notebook times.

Stages, each timed here on this machine in CPU seconds of this process (one core; the
load of a shared machine inflates CPU time far less than wall time):

* **fits**: one generator fit + 1,000 sampled rows on 1,000 training rows (median of
  ``--repeats``), per dataset (Adult, Census as the experiments load them) and generator
  (Synthpop, BayNet); measured in full.
* **features**: the query attack's 32,767 answers (Adult, all subsets; Census, 100,000
  random ones) of 4,200 datasets, *measured on* ``--fraction`` of them and extrapolated.
* **classifier**: the query attack's forest (100 trees, depth 10) on the answers of
  4,000 shadow datasets, *measured with* ``--trees`` trees and extrapolated linearly in the
  number of trees, plus prediction of the 200 test datasets; the standard scaling the
  attack had before is timed in full, for the before figure.
* **attention**: preprocessing of 4,000 + 200 datasets (measured on ``--fraction``,
  extrapolated) and training (one epoch, extrapolated to 500), grouped (``achilles.ATTENTION_GROUP`` targets at
  once, time per target) and, for the before figure, the old per-target loop.

Datasets are bootstrap samples of real rows (the attacks' cost depends on the number and
size of the datasets, not on the generator; see ``bench_attention.py``).

Predicted wall time of a notebook under ``--profile paper`` on ``--cores`` cores, with
the game of SPEC §2 (per dataset × generator: 2,100 IN fits per target plus 2,100 OUT
fits shared by the targets; ``--targets`` distinct targets, at most 4 methods × 10):

    fits × fit time / cores  +  targets × (features + classifier / cores)         (notebook 01)
    fits × fit time / cores  +  targets × attention per target (one core)          (notebook 02)

Generator fits are spread over the cores (``vrlib.parallel``) and the forest uses all
of them; the features and the attention training run on one core (the attention
targets are grouped instead; Census is given Adult's attention cost).  Target selection (neighbour search, rankings)
and figure drawing are left out (seconds to minutes).  Notebooks 03 to 05 are not
predicted here.

Usage::

    VRLIB_DATA_DIR=... python benchmarks/bench_paper_profile.py [--cores N] [--fraction 0.1]

The last printed line is one JSON object; ``notebook_01_paper_minutes`` (predicted for
this machine's cores) is read by other tools, and so is ``notebook_01_paper_minutes_measured``:
the wall time of the committed paper-size run of notebook 01, read from
``figures/paper/manifest.json`` (its last output's ``elapsed_s``), with the commit and
cores it ran on.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core per stage: set before numpy is imported

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from bench_attention import as_batch, bootstrap_game, time_before, time_training  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from vrlib.attacks.attention import AttentionAttack, preprocess  # noqa: E402
from vrlib.attacks.query import QueryAttack  # noqa: E402
from vrlib.experiments import achilles, profile_settings  # noqa: E402
from vrlib.generators import get_generator  # noqa: E402
from vrlib.torch_setup import resolve_device  # noqa: E402

GENERATORS = ("synthpop", "baynet")
MANIFEST = Path(__file__).resolve().parents[1] / "figures" / "paper" / "manifest.json"
DATASETS = ("adult", "census")


def measured_run(notebook_prefix: str, manifest=MANIFEST) -> dict | None:
    """Wall time of the committed paper-size run of a notebook: its last output's ``elapsed_s``."""
    if not Path(manifest).exists():
        return None
    entries = [e for e in json.loads(Path(manifest).read_text()).values() if e["notebook"].startswith(notebook_prefix)]
    if not entries:
        return None
    last = max(entries, key=lambda e: e["elapsed_s"])
    return {"minutes": round(last["elapsed_s"] / 60, 1), "commit": last["commit"],
            "cores": last["machine"]["cpu_cores"], "written": last["written"]}  # fmt: skip


def median_fit_s(name, df, schema, repeats, rng) -> float:
    times = []
    for r in range(repeats + 1):
        train = df.iloc[rng.choice(len(df), size=1000, replace=False)]
        t0 = time.process_time()
        get_generator(name).fit(train, schema, seed=r).sample(1000, seed=r)
        if r:  # the first run warms imports up
            times.append(time.process_time() - t0)
    return float(np.median(times))


def query_stages(df, schema, settings, fraction, trees, rng) -> dict:
    n_shadow, n_test = settings["n_shadow"], settings["n_test_datasets"]
    target = df.iloc[[int(rng.integers(len(df)))]]
    attack = QueryAttack(schema, n_queries=settings["n_queries"], seed=0, n_jobs=1)
    # Features on a fraction of the 4,200 datasets.
    n_part = max(20, int(fraction * (n_shadow + n_test)))
    part, y_part = bootstrap_game(df, target, n_part, 1000, rng)
    batch = as_batch(part, y_part, df, schema)
    attack.fit(batch, None, target)  # sets target_ and subsets_ (tiny forest, not timed)
    t0 = time.process_time()
    attack.features(batch)
    features_s = (time.process_time() - t0) * (n_shadow + n_test) / n_part
    # The forest on the answers of 4,000 shadow datasets (all computed: ties and distinct
    # values shape the forest's cost), made in chunks to bound memory.
    parts, y = [], []
    for start in range(0, n_shadow, 500):
        frames, labels = bootstrap_game(df, target, min(500, n_shadow - start), 1000, rng)
        parts.append(attack.features(as_batch(frames, labels, df, schema)))
        y.append(labels)
    X, y = np.concatenate(parts), np.concatenate(y)
    del parts
    keep = X.max(axis=0) != X.min(axis=0)
    Xk = X[:, keep].astype(np.float32)
    t0 = time.process_time()
    scaler = StandardScaler().fit(Xk)
    scaler.transform(Xk)
    scaler_s = time.process_time() - t0
    t0 = time.process_time()
    forest = RandomForestClassifier(n_estimators=trees, max_depth=10, random_state=0, n_jobs=1).fit(Xk, y)
    forest.predict_proba(Xk[:n_test])
    classifier_s = (time.process_time() - t0) * 100 / trees
    return {"features_s": features_s, "classifier_s": classifier_s, "scaler_s": scaler_s,
            "n_features_kept": int(keep.sum())}  # fmt: skip


def attention_stages(df, schema, settings, fraction, group, rng) -> dict:
    n_shadow, n_test = settings["n_shadow"], settings["n_test_datasets"]
    target = df.iloc[[int(rng.integers(len(df)))]]
    n_part = max(40, int(fraction * (n_shadow + n_test)))
    part, y_part = bootstrap_game(df, target, n_part, 1000, rng)
    attack = AttentionAttack(schema, max_epochs=1, seed=0)
    batch = as_batch(part, y_part, df, schema)
    t0 = time.process_time()
    prepared = attack._prepare(batch, None, target)
    preprocess_s = (time.process_time() - t0) * (n_shadow + n_test) / n_part
    # One epoch on 4,000 datasets: the fraction's inputs tiled (same cost per dataset).
    reps = -(-n_shadow // n_part)
    codes, dense, mask, tgt = prepared["inputs"]
    inputs = (np.tile(codes, (reps, 1, 1))[:n_shadow], np.tile(dense, (reps, 1, 1))[:n_shadow],
              np.tile(mask, (reps, 1))[:n_shadow], tgt)  # fmt: skip
    y = np.tile(prepared["y"], reps)[:n_shadow]
    tiled = dict(prepared, inputs=inputs, y=y, split=attack._split(y, np.random.default_rng(0)))
    setup_s, epoch_s = time_training(tiled, attack.n_features_, attack, group, 1, resolve_device("auto"))
    pre = preprocess(batch, target, attack.encoder_, attack.top_x)
    pre_full = type(pre)(np.tile(pre.records, (reps, 1, 1))[:n_shadow], np.tile(pre.mask, (reps, 1))[:n_shadow],
                         pre.target, pre.n_unique)  # fmt: skip
    before_epoch_s = time_before(attack, pre_full, y, tiled["split"], 1)
    epochs = settings["attention_epochs"]
    return {"preprocess_s": preprocess_s, "grouped_s": preprocess_s + setup_s / group + epochs * epoch_s,
            "before_s": preprocess_s + epochs * before_epoch_s, "group": group}  # fmt: skip


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=os.cpu_count(), help="cores of the machine to predict for")
    parser.add_argument("--targets", type=int, default=40, help="distinct targets per dataset x generator")
    parser.add_argument("--fraction", type=float, default=0.1, help="share of the 4,200 datasets timed")
    parser.add_argument("--trees", type=int, default=10, help="trees timed (extrapolated to 100)")
    parser.add_argument("--group", type=int, default=achilles.ATTENTION_GROUP, help="attention targets trained together")
    parser.add_argument("--repeats", type=int, default=5, help="generator fits timed per setting")
    parser.add_argument("--skip-attention", action="store_true")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", message="the full UK Census teaching file is absent")
    settings = profile_settings(achilles.FAMILY, "paper")
    rng = np.random.default_rng(0)
    load_start = os.getloadavg()[0]
    print(f"{os.cpu_count()} CPUs, load average {load_start:.2f}; predicting for {args.cores} cores, "
          f"{args.targets} targets per dataset x generator")  # fmt: skip
    fits_per_game = (settings["n_shadow"] + settings["n_test_datasets"]) // 2 * (args.targets + 1)

    stages, nb01, nb01_before, nb02, nb02_before = {}, 0.0, 0.0, 0.0, 0.0
    for d in DATASETS:
        df, schema = achilles.load_omega(d, settings["omega_rows"], 0)
        q = query_stages(df, schema, settings, args.fraction, args.trees, rng)
        stages[d] = {"query": {k: round(v, 3) for k, v in q.items()}}
        print(f"[{d}] features {q['features_s']:.1f} s, classifier {q['classifier_s']:.1f} s (1 core), "
              f"scaler (before) {q['scaler_s']:.1f} s, per target")  # fmt: skip
        if not args.skip_attention and d == "adult":
            a = attention_stages(df, schema, settings, args.fraction, args.group, rng)
            stages[d]["attention"] = {k: round(v, 2) for k, v in a.items()}
            print(f"[{d}] attention per target: grouped {a['grouped_s']:.0f} s, before {a['before_s']:.0f} s "
                  f"(preprocessing {a['preprocess_s']:.1f} s)")  # fmt: skip
        for g in GENERATORS:
            fit_s = median_fit_s(g, df, schema, args.repeats, rng)
            stages[d][f"fit_{g}_s"] = round(fit_s, 4)
            print(f"[{d}] {g}: {1000 * fit_s:.0f} ms per fit + sample")
            fits = fits_per_game * fit_s / args.cores
            nb01 += fits + args.targets * (q["features_s"] + q["classifier_s"] / args.cores)
            nb01_before += fits + args.targets * (q["features_s"] + (q["classifier_s"] + q["scaler_s"]) / args.cores)
            att = stages["adult"].get("attention")
            if att:  # Census: Adult's per-target attention cost (the same datasets' sizes)
                nb02 += fits + args.targets * att["grouped_s"]
                nb02_before += fits + args.targets * att["before_s"]

    result = {
        "note": "stages measured on a fraction (features, preprocessing), fewer trees, one epoch; extrapolated",
        "cores": args.cores,
        "cpus": os.cpu_count(),
        "targets_per_game": args.targets,
        "fits_per_game": fits_per_game,
        "stages": stages,
        "notebook_01_paper_minutes": round(nb01 / 60, 1),
        "notebook_01_paper_minutes_before": round(nb01_before / 60, 1),
        "load_average_start": round(load_start, 2),
        "load_average_end": round(os.getloadavg()[0], 2),
    }
    measured = measured_run("01_")
    if measured:
        result["notebook_01_paper_minutes_measured"] = measured["minutes"]
        result["notebook_01_paper_measured_run"] = measured
        print(f"measured: notebook 01 took {measured['minutes']} min on {measured['cores']} cores "
              f"(commit {measured['commit']}, {measured['written']})")  # fmt: skip
    if nb02:
        result["notebook_02_paper_minutes"] = round(nb02 / 60, 1)
        result["notebook_02_paper_minutes_before"] = round(nb02_before / 60, 1)
    print(f"predicted on {args.cores} cores: notebook 01 {result['notebook_01_paper_minutes']} min "
          f"(before {result['notebook_01_paper_minutes_before']})"
          + (f", notebook 02 {result['notebook_02_paper_minutes']} min (before {result['notebook_02_paper_minutes_before']})"
             if nb02 else ""))  # fmt: skip
    print(json.dumps(result))


if __name__ == "__main__":
    main()
