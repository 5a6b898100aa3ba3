"""Benchmark: what one target costs at the paper's sizes, stage by stage, and the predicted notebook times.

Stages, each timed here on this machine in CPU seconds of this process (one core; the
load of a shared machine inflates CPU time far less than wall time):

* **fits**: one generator fit + 1,000 sampled rows on 1,000 training rows (median of
  ``--repeats``), per dataset (Adult, Census as the experiments load them) and generator
  (Synthpop, BayNet, and PrivBayes at every finite ε of the profile, with the schema's
  public domains as the experiments pass them); measured in full.  PrivBayes costs about
  what BayNet does at every ε (the noise is a few Laplace draws per family table).
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
and figure drawing are left out (seconds to minutes).

Notebooks 03 and 04 (query attack only) are predicted from the same stage costs, game
by game, each game costing ``fits(T) × fit time / cores + T × (features + classifier /
cores)`` for its ``T`` *distinct* targets (a target chosen by several methods or settings
is attacked once, its result cached by content), with ``fits(T) = 2,100 T + 2,100``
(``vrlib.games``: n_shadow/2 + n_test/2 IN fits per target, the OUT fits shared):

* **notebook 03** (Fig. 3, its defaults: Adult, Synthpop, seed 0): one game
  (``achilles.robustness``) over the union of the top 10 by V_k for every k of the
  profile (1..50) and by the Minkowski distances p = 1..4 (k = 5; cosine k = 5 is one
  of the k's).
* **notebook 04** (Fig. 4, its defaults: Census and Adult, seed 0): per dataset, one
  game (``achilles.record_identification``, all four methods) per ε of the profile
  (PrivBayes at 1, 10, 100, 1000; BayNet at ∞), plus the games at the smallest ε under
  the other root seeds of ``interval_seeds`` (1, 2, 3; seed 0's game is cached by then):
  16 games.

The distinct targets are counted exactly, with the notebooks' own selection code on the
real data (``achilles.choose_targets`` for each dataset and seed; for 03 the cosine search
and the four Minkowski searches, about 2 CPU minutes on Adult when not cached, then read
from the content cache the notebooks share), or, with ``--bound-targets``, bounded
without any search (4 × 10 per game for 04; 10 per k and per p for 03), which the output
then calls an upper bound.  Both figures are for a stand-alone run on a cold cache:
notebook 04's BayNet games are notebook 01's (the same calls), and notebook 03's game is
notebook 01's Adult/Synthpop game (same OUT datasets, same cached targets where they
overlap), so after notebook 01 both take less.  Also left out: the extra OUT fits that
rejection of draws containing a target adds (about 2,000/(1 - 1,000/n_aux) + 100/(1 -
1,000/n_test) - 2,100 per game: some 250 on Adult, 570 on Census's 10,000-record Ω,
under 1 % of the fits of these games), target selection, the interval and figure cells.

Usage::

    VRLIB_DATA_DIR=... python benchmarks/bench_paper_profile.py [--cores N] [--fraction 0.1]

The last printed line is one JSON object; ``notebook_01_paper_minutes`` (predicted for
this machine's cores) is read by other tools, and so is ``notebook_01_paper_minutes_measured``:
the wall time of the committed paper-size run of notebook 01, read from
``figures/paper/manifest.json`` (its last output's ``elapsed_s``), with the commit and
cores it ran on.  ``notebook_03_paper_minutes`` and ``notebook_04_paper_minutes`` are the
predictions above (``notebooks_03_04`` gives their games, targets and fits, and whether
the targets were counted or bounded), with ``..._measured`` beside them once the manifest
holds a paper-size run of them.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core per stage: set before numpy is imported

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
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
from vrlib.selection import METHODS  # noqa: E402
from vrlib.torch_setup import resolve_device  # noqa: E402

GENERATORS = ("synthpop", "baynet")
MANIFEST = Path(__file__).resolve().parents[1] / "figures" / "paper" / "manifest.json"
DATASETS = ("adult", "census")
SEED = 0  # the notebooks' root seed
NB03 = ("adult", "synthpop")  # notebook 03's `dataset` and `generator` defaults
NB04_DATASETS = ("census", "adult")  # notebook 04's `datasets` default
NB04_INTERVAL_SEEDS = (0, 1, 2, 3)  # notebook 04's `interval_seeds` default


def measured_run(notebook_prefix: str, manifest=MANIFEST) -> dict | None:
    """Wall time of the committed paper-size run of a notebook: its last output's ``elapsed_s``."""
    if not Path(manifest).exists():
        return None
    entries = [e for e in json.loads(Path(manifest).read_text()).values() if e["notebook"].startswith(notebook_prefix)]
    if not entries:
        return None
    last = max(entries, key=lambda e: e["elapsed_s"])
    return {
        "minutes": round(last["elapsed_s"] / 60, 1),
        "commit": last["commit"],
        "cores": last["machine"]["cpu_cores"],
        "written": last["written"],
    }


def median_fit_s(name, df, schema, repeats, rng, params=None) -> float:
    times = []
    for r in range(repeats + 1):
        train = df.iloc[rng.choice(len(df), size=1000, replace=False)]
        t0 = time.process_time()
        get_generator(name, **(params or {})).fit(train, schema, seed=r).sample(1000, seed=r)
        if r:  # the first run warms imports up
            times.append(time.process_time() - t0)
    return float(np.median(times))


def game_fits(settings, n_targets: int) -> int:
    """Generator fits of a traditional game (``vrlib.games``, OUT shared) with ``n_targets`` distinct targets."""
    n_in = settings["n_shadow"] // 2 + settings["n_test_datasets"] // 2  # per target
    return n_in * n_targets + settings["n_shadow"] + settings["n_test_datasets"] - n_in


def game_s(settings, n_targets: int, fit_s: float, query: dict, cores: int) -> float:
    """Predicted wall seconds of one query-attack game: fits and forest over the cores, features on one."""
    return game_fits(settings, n_targets) * fit_s / cores + n_targets * (
        query["features_s"] + query["classifier_s"] / cores
    )


def nb04_targets(settings, exact: bool) -> dict:
    """Distinct targets of notebook 04's games: ``{(dataset, seed): count}`` (all methods' top 10, overlaps once)."""
    n, out = settings["n_targets"], {}
    for d in NB04_DATASETS:
        for s in dict.fromkeys((SEED, *NB04_INTERVAL_SEEDS)):
            if exact:
                df, schema = achilles.load_omega(d, settings["omega_rows"], s)
                chosen = achilles.choose_targets(df, schema, METHODS, n, s)
                out[d, s] = len({t for ts in chosen.values() for t in ts})
            else:
                out[d, s] = len(METHODS) * n
    return out


def nb03_targets(settings, exact: bool) -> int:
    """Distinct targets of notebook 03's game: the top 10 by V_k for every k and by each Minkowski p (k = 5)."""
    n, ks, ps = settings["n_targets"], list(settings["ks"]), list(settings["ps"])
    if not exact:
        return n * (len(ks) + len(ps) + (5 not in ks))
    df, schema = achilles.load_omega(NB03[0], settings["omega_rows"], SEED)
    cosine = achilles.neighbour_distances(df, schema, "cosine", k_max=max(50, *ks))  # as the notebook does
    chosen = {t for k in {*ks, 5} for t in achilles.top_by_vk(df, cosine, k, n)}
    for p in ps:
        minkowski = achilles.neighbour_distances(df, schema, "minkowski", p, k_max=5)
        chosen.update(achilles.top_by_vk(df, minkowski, 5, n))
    return len(chosen)


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
    return {
        "features_s": features_s,
        "classifier_s": classifier_s,
        "scaler_s": scaler_s,
        "n_features_kept": int(keep.sum()),
    }


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
    inputs = (
        np.tile(codes, (reps, 1, 1))[:n_shadow],
        np.tile(dense, (reps, 1, 1))[:n_shadow],
        np.tile(mask, (reps, 1))[:n_shadow],
        tgt,
    )
    y = np.tile(prepared["y"], reps)[:n_shadow]
    tiled = dict(prepared, inputs=inputs, y=y, split=attack._split(y, np.random.default_rng(0)))
    setup_s, epoch_s = time_training(tiled, attack.n_features_, attack, group, 1, resolve_device("auto"))
    pre = preprocess(batch, target, attack.encoder_, attack.top_x)
    pre_full = type(pre)(
        np.tile(pre.records, (reps, 1, 1))[:n_shadow], np.tile(pre.mask, (reps, 1))[:n_shadow], pre.target, pre.n_unique
    )
    before_epoch_s = time_before(attack, pre_full, y, tiled["split"], 1)
    epochs = settings["attention_epochs"]
    return {
        "preprocess_s": preprocess_s,
        "grouped_s": preprocess_s + setup_s / group + epochs * epoch_s,
        "before_s": preprocess_s + epochs * before_epoch_s,
        "group": group,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=os.cpu_count(), help="cores of the machine to predict for")
    parser.add_argument("--targets", type=int, default=40, help="distinct targets per dataset x generator")
    parser.add_argument("--fraction", type=float, default=0.1, help="share of the 4,200 datasets timed")
    parser.add_argument("--trees", type=int, default=10, help="trees timed (extrapolated to 100)")
    parser.add_argument(
        "--group", type=int, default=achilles.ATTENTION_GROUP, help="attention targets trained together"
    )
    parser.add_argument("--repeats", type=int, default=5, help="generator fits timed per setting")
    parser.add_argument("--skip-attention", action="store_true")
    parser.add_argument(
        "--bound-targets",
        action="store_true",
        help="bound the distinct targets of notebooks 03-04 instead of choosing them (no neighbour search)",
    )
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", message="the full UK Census teaching file is absent")
    settings = profile_settings(achilles.FAMILY, "paper")
    rng = np.random.default_rng(0)
    load_start = os.getloadavg()[0]
    print(
        f"{os.cpu_count()} CPUs, load average {load_start:.2f}; predicting for {args.cores} cores, "
        f"{args.targets} targets per dataset x generator"
    )
    fits_per_game = game_fits(settings, args.targets)
    epsilons = [e for e in settings["epsilons"] if not math.isinf(e)]  # PrivBayes; math.inf is BayNet
    rng_eps = np.random.default_rng(1)  # its own stream: the other stages draw what they drew before

    stages, nb01, nb01_before, nb02, nb02_before = {}, 0.0, 0.0, 0.0, 0.0
    for d in DATASETS:
        df, schema = achilles.load_omega(d, settings["omega_rows"], 0)
        q = query_stages(df, schema, settings, args.fraction, args.trees, rng)
        stages[d] = {"query": {k: round(v, 3) for k, v in q.items()}}
        print(
            f"[{d}] features {q['features_s']:.1f} s, classifier {q['classifier_s']:.1f} s (1 core), "
            f"scaler (before) {q['scaler_s']:.1f} s, per target"
        )
        if not args.skip_attention and d == "adult":
            a = attention_stages(df, schema, settings, args.fraction, args.group, rng)
            stages[d]["attention"] = {k: round(v, 2) for k, v in a.items()}
            print(
                f"[{d}] attention per target: grouped {a['grouped_s']:.0f} s, before {a['before_s']:.0f} s "
                f"(preprocessing {a['preprocess_s']:.1f} s)"
            )
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
        for eps in epsilons:
            fit_s = median_fit_s("privbayes", df, schema, args.repeats, rng_eps, {"epsilon": eps})
            stages[d][f"fit_privbayes_eps{eps:g}_s"] = round(fit_s, 4)
            print(f"[{d}] privbayes eps={eps:g}: {1000 * fit_s:.0f} ms per fit + sample")

    # Notebooks 03 and 04: the distinct targets of each game, then the games' costs from the stages above.
    exact = not args.bound_targets
    t0 = time.process_time()
    t03, t04 = nb03_targets(settings, exact), nb04_targets(settings, exact)
    selection_s = time.process_time() - t0
    word = "" if exact else "at most "
    print(
        f"notebook 03: one game, {word}{t03} distinct targets (the top {settings['n_targets']} for "
        f"{len(settings['ks'])} values of k and {len(settings['ps'])} of p); notebook 04, distinct targets per game: "
        + ", ".join(f"{d} seed {s}: {word}{t}" for (d, s), t in t04.items())
        + (f" (selection {selection_s:.0f} s)" if exact else "")
    )

    def fit_of(d, eps):
        return stages[d]["fit_baynet_s"] if math.isinf(eps) else stages[d][f"fit_privbayes_eps{eps:g}_s"]

    q_of = {d: stages[d]["query"] for d in DATASETS}
    nb03 = game_s(settings, t03, stages[NB03[0]][f"fit_{NB03[1]}_s"], q_of[NB03[0]], args.cores)
    games04 = [(d, eps, SEED) for d in NB04_DATASETS for eps in settings["epsilons"]]
    games04 += [(d, min(settings["epsilons"]), s) for d in NB04_DATASETS for s in NB04_INTERVAL_SEEDS if s != SEED]
    nb04 = sum(game_s(settings, t04[d, s], fit_of(d, eps), q_of[d], args.cores) for d, eps, s in games04)
    nb04_after_01 = nb04 - sum(
        game_s(settings, t04[d, s], fit_of(d, eps), q_of[d], args.cores) for d, eps, s in games04 if math.isinf(eps)
    )

    result = {
        "note": "stages measured on a fraction (features, preprocessing), fewer trees, one epoch; extrapolated",
        "cores": args.cores,
        "cpus": os.cpu_count(),
        "targets_per_game": args.targets,
        "fits_per_game": fits_per_game,
        "stages": stages,
        "notebook_01_paper_minutes": round(nb01 / 60, 1),
        "notebook_01_paper_minutes_before": round(nb01_before / 60, 1),
        "notebook_03_paper_minutes": round(nb03 / 60, 1),
        "notebook_04_paper_minutes": round(nb04 / 60, 1),
        "notebooks_03_04": {
            "targets": "counted" if exact else "upper bound",
            "notebook_03": {"games": 1, "targets": t03, "fits": game_fits(settings, t03)},
            "notebook_04": {
                "games": len(games04),
                "targets": sum(t04[d, s] for d, _, s in games04),
                "fits": sum(game_fits(settings, t04[d, s]) for d, _, s in games04),
                "targets_per_game": {f"{d}/seed{s}": t for (d, s), t in t04.items()},
                "minutes_if_01_ran_first": round(nb04_after_01 / 60, 1),
            },
            "cold_cache": True,
        },
        "load_average_start": round(load_start, 2),
        "load_average_end": round(os.getloadavg()[0], 2),
    }
    measured = measured_run("01_")
    if measured:
        result["notebook_01_paper_minutes_measured"] = measured["minutes"]
        result["notebook_01_paper_measured_run"] = measured
        print(
            f"measured: notebook 01 took {measured['minutes']} min on {measured['cores']} cores "
            f"(commit {measured['commit']}, {measured['written']})"
        )
    for nb in ("03", "04"):
        measured = measured_run(f"{nb}_")
        if measured:
            result[f"notebook_{nb}_paper_minutes_measured"] = measured["minutes"]
            result[f"notebook_{nb}_paper_measured_run"] = measured
    if nb02:
        result["notebook_02_paper_minutes"] = round(nb02 / 60, 1)
        result["notebook_02_paper_minutes_before"] = round(nb02_before / 60, 1)
    print(
        f"predicted on {args.cores} cores: notebook 01 {result['notebook_01_paper_minutes']} min "
        f"(before {result['notebook_01_paper_minutes_before']})"
        + (
            f", notebook 02 {result['notebook_02_paper_minutes']} min (before {result['notebook_02_paper_minutes_before']})"
            if nb02
            else ""
        )
        + f", notebook 03 {word}{result['notebook_03_paper_minutes']} min, notebook 04 {word}"
        f"{result['notebook_04_paper_minutes']} min (stand-alone, cold cache)"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
