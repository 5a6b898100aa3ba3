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

Notebook 05 (``notebook05`` part) is predicted by its own cost model, as its cost cell
calls it: ``domias_cost.measure_notebook_cost`` for every section at the paper profile
(root seed 0, BNAF included, no attack excluded, an empty cache), which measures each kind
of unit in this process for 1 epoch and ``--cost-fraction`` of its epochs and
extrapolates; ``notebook05_paper_cpu_hours`` is the sum, with the CPU hours per section
(``notebook05_sections``) and per attack group (``notebook05_groups``).

The whole paper profile (``profile`` part), notebook by notebook, in hours on ``--cores``
cores (``paper_profile_hours_2_cores`` on 2): 01-04 predicted from the stage costs above
where this run measured them, else the wall time of their recorded paper runs; 05 its
CPU hours / cores, a lower bound (the units spread over the cores at best); 06, 07 and 08
the wall times of their recorded paper runs (``docs/run_times.csv``; where a run had
several sittings and not all are timed there, the sum of those that are, or else the
longest sitting in ``figures/paper/manifest.json``, each called a lower bound). A notebook
with neither is named under ``missing`` and left out of the sum. The recorded runs were
on 2 cores: for other ``--cores`` they are listed as they are.

Notebook 06 (``notebook06`` part): its own cost model under ``paper`` as its cost cell calls
it (``lost.measure_notebook_cost``, Adult and Census, ``--lost-cost-fraction`` of the games,
then ``lost.predicted_cost``): ``notebook06_paper_cpu_hours``; the 2-core profile keeps
notebook 06's recorded run, ``gpu_box.py`` uses this.

Parts (``--only``, comma-separated): ``notebooks01_04`` (the stages of 01-04),
``notebook05``, ``notebook06``, ``profile``; all by default. ``--only notebook05,profile`` takes a few
minutes: 01-04 are then their recorded runs.

On a machine with a GPU (``benchmarks/gpu_box.py`` says how the two are put together):
``--cpu-only`` hides the GPU before PyTorch is imported, so that every stage above is a
CPU cost; the JSON records ``gpu_visible``.  ``--without ctgan,zuko`` (or their absence)
leaves the kinds of notebook 05's units that need them unmeasured (TVAE and CTGAN fits:
``ctgan``; NFlow fits: ``zuko``), named under ``notebook05_skipped``; without TVAE the
attacks run on ``n_syn`` real rows as synthetic data (their cost depends on the sizes),
and ``notebook05_paper_cpu_hours`` is then not given (``notebook05_measured_cpu_hours``
is, for the units measured).  The JSON carries what ``gpu_box.py`` needs: the stages of
01-04 in minutes on ``--cores`` (``notebook_stage_minutes``), notebook 05's units
(``notebook05_units``: kind, data, training rows, size, epochs, count, batch) and their
measured CPU seconds (``notebook05_measured``).  ``--out PATH`` writes that last line to a
file too; ``--gpu-costs PATH`` (``bench_gpu.py``'s output on this machine, with
``--cpu-fallback PATH``: a JSON of this script from another machine, for the units this one
could not measure) adds ``paper_profile_hours_gpu_box`` and its breakdown
(``paper_profile_gpu_box``) at the end.
"""

from __future__ import annotations

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core per stage: set before numpy is imported
if "--cpu-only" in sys.argv:  # CPU costs on a machine with a GPU: hide it before torch is imported
    os.environ["CUDA_VISIBLE_DEVICES"] = ""

import argparse  # noqa: E402
import csv  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
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
ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "figures" / "paper" / "manifest.json"
RUN_TIMES = ROOT / "docs" / "run_times.csv"
NOTEBOOKS = ("01", "02", "03", "04", "05", "06", "07", "08")
PARTS = ("notebooks01_04", "notebook05", "notebook06", "profile")
DATASETS = ("adult", "census")
SEED = 0  # the notebooks' root seed
NB03 = ("adult", "synthpop")  # notebook 03's `dataset` and `generator` defaults
NB04_DATASETS = ("census", "adult")  # notebook 04's `datasets` default
NB04_INTERVAL_SEEDS = (0, 1, 2, 3)  # notebook 04's `interval_seeds` default


def measured_run(notebook_prefix: str, manifest=MANIFEST) -> dict | None:
    """Wall time of the committed paper-size run of a notebook: its last output's ``elapsed_s``."""
    if not Path(manifest).exists():
        return None
    entries = [
        e
        for e in json.loads(Path(manifest).read_text()).values()
        if e["notebook"].startswith(notebook_prefix) and e.get("elapsed_s") is not None  # redrawn figures have none
    ]
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


def game_parts(settings, n_targets: int, fit_s: float, query: dict, cores: int) -> dict:
    """Predicted wall seconds of one query-attack game's stages: fits and forest over the cores, features on one."""
    return {
        "fits": game_fits(settings, n_targets) * fit_s / cores,
        "features": n_targets * query["features_s"],
        "forest": n_targets * query["classifier_s"] / cores,
    }


def game_s(settings, n_targets: int, fit_s: float, query: dict, cores: int) -> float:
    """Predicted wall seconds of one query-attack game (the sum of :func:`game_parts`)."""
    return sum(game_parts(settings, n_targets, fit_s, query, cores).values())


def add_parts(total: dict, part: dict) -> dict:
    """``total`` with ``part``'s seconds added, key by key."""
    return {k: total.get(k, 0.0) + v for k, v in part.items()}


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


_UNITS_H = {"s": 1 / 3600, "min": 1 / 60, "h": 1.0}
_COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_SITTING = re.compile(r"\bthe (?:first|second|third|fourth|fifth|sixth|last) ([\d,]+(?:\.\d+)?) s\b")


def recorded_paper_run(notebook: str, run_times=RUN_TIMES, manifest=MANIFEST, profile: str = "paper") -> dict | None:
    """Wall hours of a notebook's recorded ``--profile paper`` run (or ``profile``'s), or None when none is recorded.

    From its ``paper`` row of ``run_times`` (``notebook,profile,time,commit,how``): a time
    such as ``5,225 s``, ``87 min`` or ``about 3.9 h``; for a run in ``N sittings`` whose
    time is not given, the sum of the sittings the ``how`` column times (``the second
    3,856 s``), a lower bound when fewer than ``N``; else the longest of the notebook's
    ``elapsed_s`` in ``manifest`` (one sitting: a lower bound).

    Returns
    -------
    dict or None
        ``hours``, ``lower_bound`` (bool) and ``source`` (what the figure is, in words).
    """
    row = None
    if Path(run_times).exists():
        with open(run_times, newline="") as f:
            row = next((r for r in csv.DictReader(f) if r["notebook"] == notebook and r["profile"] == profile), None)
    if row:
        where = f"{Path(run_times).name}, commit {row['commit'] or '?'}: {row['how']}"
        m = re.fullmatch(r"(about )?([\d,]+(?:\.\d+)?) (s|min|h)", row["time"].strip())
        if m:
            hours = float(m[2].replace(",", "")) * _UNITS_H[m[3]]
            return {"hours": hours, "lower_bound": False, "source": f"{row['time']} ({where})"}
        n = re.fullmatch(r"(\w+) sittings", row["time"].strip())
        timed = [float(x.replace(",", "")) for x in _SITTING.findall(row["how"])]
        if n and timed:
            total = len(timed) if n[1] not in _COUNTS else _COUNTS[n[1]]
            return {
                "hours": sum(timed) / 3600,
                "lower_bound": len(timed) < total,
                "source": f"{len(timed)} of {total} sittings timed, {sum(timed):,.0f} s ({where})",
            }
    measured = measured_run(f"{notebook}_", manifest) if profile == "paper" else None  # the paper runs' manifest
    if measured:
        return {
            "hours": measured["minutes"] / 60,
            "lower_bound": True,
            "source": f"longest sitting in {Path(manifest).name}: {measured['minutes']} min at {measured['commit']}"
            + (f" ({Path(run_times).name}: {row['time']})" if row else ""),
        }
    return None


def assemble_profile(predicted_minutes: dict, notebook05_cpu_hours, recorded: dict, cores: int) -> dict:
    """Hours of every notebook 01-08 under the paper profile on ``cores`` cores, and their sum.

    Parameters
    ----------
    predicted_minutes : dict
        ``{"01": minutes, ...}``: notebooks 01-04 predicted from stage costs (those absent fall back
        to their recorded run).
    notebook05_cpu_hours : float or None
        Notebook 05's CPU hours from its cost model; its hours are these / ``cores``, a lower bound.
    recorded : dict
        ``{"06": recorded_paper_run("06"), ...}`` (None where no run is recorded).
    cores : int

    Returns
    -------
    dict
        ``notebooks`` (per notebook: ``hours``, ``how`` one of "predicted", "predicted, lower
        bound", "measured", "measured, lower bound", and ``from``), ``hours`` (their sum),
        ``lower_bound`` (whether any part is one), ``missing`` (notebooks with neither, left out).
    """
    if cores < 1:
        raise ValueError(f"cores must be at least 1 (got {cores})")
    rows, missing = {}, []
    for nb in NOTEBOOKS:
        if nb in predicted_minutes:
            rows[nb] = {
                "hours": predicted_minutes[nb] / 60,
                "how": "predicted",
                "from": f"stage costs measured in this run ({predicted_minutes[nb]} min on {cores} cores)",
            }
        elif nb == "05" and notebook05_cpu_hours is not None:
            rows[nb] = {
                "hours": notebook05_cpu_hours / cores,
                "how": "predicted, lower bound",
                "from": f"its cost model: {notebook05_cpu_hours:.2f} CPU h / {cores} cores (units spread over the cores at best)",
            }
        elif recorded.get(nb):
            r = recorded[nb]
            rows[nb] = {
                "hours": r["hours"],
                "how": "measured, lower bound" if r["lower_bound"] else "measured",
                "from": r["source"],
            }
        else:
            missing.append(nb)
    return {
        "notebooks": {nb: {**r, "hours": round(r["hours"], 3)} for nb, r in rows.items()},
        "hours": sum(r["hours"] for r in rows.values()),
        "lower_bound": any("lower bound" in r["how"] for r in rows.values()),
        "missing": missing,
    }


def absent_packages(pretend=()) -> dict:
    """``{kind: package}`` for notebook 05's kinds whose package this machine lacks (or ``pretend`` names)."""
    import importlib.util

    from gpu_box import NEEDS

    return {k: p for k, p in NEEDS.items() if p in set(pretend) or importlib.util.find_spec(p) is None}


def unit_batch(kind: str, settings: dict) -> int:
    """The batch of a generator unit of notebook 05: Fig. 6's setting for its GANs, else the generator's default."""
    from vrlib.experiments import domias

    for _, g, params, _ in domias.fig6_configs(settings):
        if g == kind and "batch_size" in params:
            return int(params["batch_size"])
    return int(get_generator(kind).get_params().get("batch_size", 0))


def notebook05_cost(fraction: float, cores: int, without=()):
    """Notebook 05's cost model at the paper profile, every section, as its cost cell calls it (root seed 0).

    Kinds whose package is absent (``ctgan``: TVAE, CTGAN; ``zuko``: NFlow; or named in
    ``without``) are not measured, and the attacks then run on real rows as synthetic data
    (``domias_cost.measure_units(synthetic="real")``).

    Returns
    -------
    cost : DataFrame
        :func:`vrlib.experiments.domias_cost.predicted_cost` of the units measured, with a
        "nothing new" row per section that adds nothing (as ``measure_notebook_cost``).
    extra : dict
        ``units`` (every unit kind × data × variant × size × length, with its count and batch),
        ``measured`` (:func:`~vrlib.experiments.domias_cost.measure_units`' rows), ``skipped``
        (kind: the absent package), ``cpu_s`` and ``wall_s`` of the measurement.
    """
    from vrlib.experiments import domias_cost

    settings = profile_settings("domias", "paper")
    settings = {**settings, "seeds": tuple(SEED + k for k in settings["seeds"])}  # the notebook's seeds at root seed 0
    skipped = absent_packages(without)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    units = domias_cost.notebook_units(settings, domias_cost.SECTIONS, True, ())
    kept = units[~units.kind.isin(list(skipped))]
    synthetic = "real" if "tvae" in skipped else "tvae"
    measured = domias_cost.measure_units(settings, kept, fraction, SEED, synthetic=synthetic)
    cost = domias_cost.predicted_cost(kept, measured, cores)
    nothing = [
        dict(section=s, what="nothing new", units=0, unit_cpu_s=0.0, cpu_hours=0.0, hours_on_workers=0.0)
        for s in domias_cost.empty_sections(units, domias_cost.SECTIONS)
    ]
    if nothing:
        order = {s: i for i, s in enumerate(domias_cost.SECTIONS)}
        cost = pd.concat([cost, pd.DataFrame(nothing)], ignore_index=True)
        cost = cost.sort_values("section", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)
    grouped = units.groupby(["section", "kind", "data", "variant", "size", "length"], sort=False).size()
    batches = {k: unit_batch(k, settings) for k in units.kind.unique() if k in domias_cost.GENERATORS}
    extra = {
        "units": [
            dict(
                section=sec,
                kind=k,
                data=d,
                variant=int(v),
                size=int(z),
                length=float(n),
                count=int(c),
                batch=batches.get(k, 0),
            )
            for (sec, k, d, v, z, n), c in grouped.items()
        ],  # fmt: skip
        "measured": [
            {**r, "lengths": [float(x) for x in r["lengths"]], "cpu_s": [float(x) for x in r["cpu_s"]]}
            for r in measured.to_dict("records")
        ],
        "skipped": skipped,
        "synthetic": synthetic,
        "cpu_s": time.process_time() - cpu0,
        "wall_s": time.perf_counter() - wall0,
    }
    return cost, extra


def notebook06_cost(fraction: float, cores: int):
    """Notebook 06's own cost model under ``paper``, as its cost cell calls it (Adult, Census too, root seed 0).

    Returns :func:`vrlib.experiments.lost.predicted_cost` on ``cores`` workers and the CPU
    and wall seconds of the measurement.
    """
    from vrlib.experiments import lost

    cpu0, wall0 = time.process_time(), time.perf_counter()
    costs = lost.measure_notebook_cost("paper", "adult", census=True, fraction=fraction, seed=SEED)
    parts = lost.notebook_parts(lost.settings_for("paper"), "adult", True)
    cost = lost.predicted_cost(parts, costs, workers=cores)
    return cost, time.process_time() - cpu0, time.perf_counter() - wall0


def notebooks01_04(args, settings, rng, load_start) -> dict:
    """Notebooks 01-04: their stages measured here and their paper-profile minutes predicted (the JSON's keys)."""
    fits_per_game = game_fits(settings, args.targets)
    epsilons = [e for e in settings["epsilons"] if not math.isinf(e)]  # PrivBayes; math.inf is BayNet
    rng_eps = np.random.default_rng(1)  # its own stream: the other stages draw what they drew before

    stages, nb01, nb01_before, nb02, nb02_before = {}, 0.0, 0.0, 0.0, 0.0
    parts01, fits02, targets02 = {}, 0.0, 0  # notebook 01's stages; notebook 02's fits and targets (for gpu_box.py)
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
            parts01 = add_parts(parts01, game_parts(settings, args.targets, fit_s, q, args.cores))
            fits02, targets02 = fits02 + fits, targets02 + args.targets
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
    parts03 = game_parts(settings, t03, stages[NB03[0]][f"fit_{NB03[1]}_s"], q_of[NB03[0]], args.cores)
    parts04 = {}
    for d, eps, s in games04:
        parts04 = add_parts(parts04, game_parts(settings, t04[d, s], fit_of(d, eps), q_of[d], args.cores))
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
        # each notebook's stages in minutes on --cores (what gpu_box.py reads)
        "notebook_stage_minutes": {
            "01": {k: round(v / 60, 3) for k, v in parts01.items()},
            "02": {
                "fits": round(fits02 / 60, 3),
                "targets": targets02,
                "attention_cpu_s": stages["adult"].get("attention", {}).get("grouped_s"),
            },
            "03": {k: round(v / 60, 3) for k, v in parts03.items()},
            "04": {k: round(v / 60, 3) for k, v in parts04.items()},
        },
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
    return result


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
    parser.add_argument(
        "--only",
        default=",".join(PARTS),
        help=f"comma-separated parts to run, of {', '.join(PARTS)} (default: all)",
    )
    parser.add_argument(
        "--cost-fraction", type=float, default=0.02, help="share of the epochs notebook 05's cost model runs"
    )
    parser.add_argument(
        "--lost-cost-fraction", type=float, default=0.05, help="share of the games notebook 06's cost model plays"
    )
    parser.add_argument(
        "--cpu-only",
        action="store_true",
        help="hide the GPU (CUDA_VISIBLE_DEVICES=''), so that every cost is a CPU cost (on a machine with a GPU)",
    )
    parser.add_argument(
        "--without",
        default="",
        help="packages to treat as absent (ctgan, zuko): their kinds of notebook 05's units are not measured",
    )
    parser.add_argument("--out", help="also write the last line (the JSON object) to this file")
    parser.add_argument(
        "--gpu-costs",
        help="bench_gpu.py's output on this machine: also predict the profile with its GPU (gpu_box.py)",
    )
    parser.add_argument(
        "--cpu-fallback",
        help="with --gpu-costs: a bench_paper_profile.py JSON from another machine for what this one lacks",
    )
    args = parser.parse_args(argv)
    if args.cpu_only and os.environ.get("CUDA_VISIBLE_DEVICES") != "":
        parser.error("--cpu-only must be on the command line (it hides the GPU before PyTorch is imported)")
    without = [p.strip() for p in args.without.split(",") if p.strip()]
    from gpu_box import NEEDS

    if set(without) - set(NEEDS.values()):
        parser.error(
            f"--without: unknown package(s) {sorted(set(without) - set(NEEDS.values()))}; choose from ctgan, zuko"
        )
    if args.cpu_fallback and not args.gpu_costs:
        parser.error("--cpu-fallback goes with --gpu-costs")
    if args.gpu_costs:  # read first: a bad file fails before the measurements, not after
        import gpu_box

        gpu = gpu_box.last_json(args.gpu_costs)
        fallback = gpu_box.last_json(args.cpu_fallback) if args.cpu_fallback else None
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = [p for p in parts if p not in PARTS]
    if unknown or not parts:
        parser.error(f"--only: unknown part(s) {unknown}; choose from {', '.join(PARTS)}")
    warnings.filterwarnings("ignore", message="the full UK Census teaching file is absent")
    settings = profile_settings(achilles.FAMILY, "paper")
    rng = np.random.default_rng(0)
    load_start = os.getloadavg()[0]
    print(
        f"{os.cpu_count()} CPUs, load average {load_start:.2f}; predicting for {args.cores} cores, "
        f"{args.targets} targets per dataset x generator"
    )
    wall_start = time.perf_counter()
    import torch

    result = {
        "benchmark": "bench_paper_profile",
        "cores": args.cores,
        "cpus": os.cpu_count(),
        "parts": parts,
        "gpu_visible": bool(torch.cuda.is_available()),
        "load_average_start": round(load_start, 2),
    }
    predicted = {}
    if "notebooks01_04" in parts:
        result.update(notebooks01_04(args, settings, rng, load_start))
        predicted = {nb: result[f"notebook_{nb}_paper_minutes"] for nb in ("01", "02", "03", "04")
                     if f"notebook_{nb}_paper_minutes" in result}  # fmt: skip
    cpu05 = None
    if "notebook05" in parts:
        cost, extra = notebook05_cost(args.cost_fraction, args.cores, without)
        cost_cpu_s, cost_wall_s = extra["cpu_s"], extra["wall_s"]
        cpu05 = float(cost.cpu_hours.sum())
        for kind, package in extra["skipped"].items():
            print(f"  not measured: {kind} (no {package} here); notebook 05's CPU hours below leave it out")
        if extra["skipped"]:
            print("  attacks measured on real rows as synthetic data (no TVAE), same sizes")
            cpu05 = None  # not the notebook's: the 2-core profile leaves 05 to its recorded runs
        sections = cost.groupby("section", sort=False).cpu_hours.sum()
        groups = cost[cost.units > 0].groupby("what", sort=False).cpu_hours.sum().sort_values(ascending=False)
        print(
            f"notebook 05 under paper (its cost model, {args.cost_fraction:g} of the epochs measured; "
            f"{cost_cpu_s:.0f} CPU s, {cost_wall_s:.0f} s wall):"
        )
        for r in cost.itertuples(index=False):
            print(f"  {r.section:6s} {r.what}: {r.units} units, {r.unit_cpu_s:.1f} CPU s each, {r.cpu_hours:.2f} CPU h")
        for section, h in sections.items():
            print(f"  section {section}: {h:.2f} CPU h")
        for what, h in groups.items():
            print(f"  group {what}: {h:.2f} CPU h")
        measured_h = float(cost.cpu_hours.sum())
        word = "the units measured" if extra["skipped"] else "notebook 05"
        print(f"  {word}: {measured_h:.2f} CPU h, at least {measured_h / args.cores:.2f} h on {args.cores} cores")
        if not extra["skipped"]:
            result.update(
                notebook05_paper_cpu_hours=round(measured_h, 3),
                notebook05_paper_hours_on_cores=round(measured_h / args.cores, 3),
            )
        result.update(
            notebook05_measured_cpu_hours=round(measured_h, 3),
            notebook05_units=extra["units"],
            notebook05_measured=extra["measured"],
            notebook05_skipped=extra["skipped"],
            notebook05_synthetic=extra["synthetic"],
            notebook05_sections={s: round(h, 3) for s, h in sections.items()},
            notebook05_groups={w: round(h, 3) for w, h in groups.items()},
            notebook05_cost_fraction=args.cost_fraction,
            notebook05_measure_cpu_s=round(cost_cpu_s, 1),
            notebook05_measure_wall_s=round(cost_wall_s, 1),
        )
    if "notebook06" in parts:
        cost06, cpu_s06, wall_s06 = notebook06_cost(args.lost_cost_fraction, args.cores)
        cpu06 = float(cost06.cpu_hours.sum())
        print(
            f"notebook 06 under paper (its cost model, {args.lost_cost_fraction:g} of the games measured; "
            f"{cpu_s06:.0f} CPU s, {wall_s06:.0f} s wall): {cpu06:.2f} CPU h, at least {cpu06 / args.cores:.2f} h "
            f"on {args.cores} cores"
        )
        for r in cost06.itertuples(index=False):
            print(f"  {r.part}: {r.new_records} new records, {r.cpu_hours:.2f} CPU h")
        result.update(
            notebook06_paper_cpu_hours=round(cpu06, 3),
            notebook06_parts={r.part: round(r.cpu_hours, 3) for r in cost06.itertuples(index=False)},
            notebook06_cost_fraction=args.lost_cost_fraction,
            notebook06_measure_cpu_s=round(cpu_s06, 1),
            notebook06_measure_wall_s=round(wall_s06, 1),
        )
    if "profile" in parts:
        recorded = {nb: recorded_paper_run(nb) for nb in NOTEBOOKS}
        prof = assemble_profile(predicted, cpu05, recorded, args.cores)
        print(f"paper profile on {args.cores} cores, notebook by notebook:")
        for nb, r in prof["notebooks"].items():
            print(f"  {nb}: {r['hours']:.2f} h, {r['how']}, from {r['from']}")
        for nb in prof["missing"]:
            print(f"  {nb}: no recorded paper run and no prediction: left out of the sum")
        word = "at least " if prof["lower_bound"] else ""
        print(
            f"  all: {word}{prof['hours']:.2f} h"
            + (f" (without {', '.join(prof['missing'])})" if prof["missing"] else "")
        )
        result[f"paper_profile_hours_{args.cores}_cores"] = round(prof["hours"], 2)
        result["paper_profile"] = prof
    if args.gpu_costs:
        recorded = {nb: recorded_paper_run(nb) for nb in NOTEBOOKS}
        recorded["08 quick"] = recorded_paper_run("08", profile="quick")
        try:
            box = gpu_box.assemble_gpu_box(result, gpu, recorded, args.cores, fallback)
        except ValueError as exc:  # the measurements above still reach the JSON
            print(f"no GPU-box profile: {exc}")
            result["paper_profile_gpu_box_error"] = str(exc)
        else:
            gpu_box.print_profile(box)
            result["paper_profile_hours_gpu_box"] = round(box["hours"], 2)
            result["paper_profile_gpu_box"] = box
    result["load_average_end"] = round(os.getloadavg()[0], 2)
    result["wall_s"] = round(time.perf_counter() - wall_start, 1)
    line = json.dumps(result)
    if args.out:
        Path(args.out).write_text(line + "\n")
    print(line)


if __name__ == "__main__":
    main()
