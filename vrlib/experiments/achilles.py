"""Achilles experiments: choose targets by each method, attack them in the traditional game, tidy results.

One row per target × method × dataset × generator × setting, with the target's AUC
(and accuracy, TPR at 10 % FPR) on the test datasets.  The per-target attack result
(test labels and scores) is cached by content, so the notebooks of Figs. 1, 3 and 4
share every target they have in common and a re-run only restyles the figures.

Decisions (also stated in the notebooks):

* Census: with only the 10,000-record random subset on hand, D_aux / D_test are
  5,000 / 2,500 records (the paper's 50,000 / 25,000 of the full 569,741 rows cannot be
  scaled proportionally below the 1,000-record training datasets).
* The smoke profile runs on a 4,000-record random subset of Ω, so that CI stays fast.
* Target selection runs on the whole Ω, as in the paper; the game then removes the
  target from both pools.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np
import pandas as pd

from vrlib import metrics
from vrlib.attacks import registry
from vrlib.cache import Cache, fingerprint_table, get_or_make, make_key, source_hash
from vrlib.data import Schema, load
from vrlib.distance import kneighbors
from vrlib.encoding import TableEncoder
from vrlib.errors import VrlibError
from vrlib.experiments.profiles import profile_settings, register
from vrlib.games import TraditionalGame
from vrlib.play import GameAttack, play
from vrlib.play import attack_seed as attack_seed  # the seed stream of achilles' attacks: play's default, "attack"
from vrlib.selection import METHODS, rank_records

FAMILY = "achilles"

register(
    FAMILY,
    {
        # CI: checks that everything runs, numbers meaningless.
        "smoke": dict(omega_rows=4000, n_targets=2, n_shadow=20, n_test_datasets=10, n_records=300, n_synth=300,
                      n_queries=2000, attention_epochs=5, attention_patience=None, ks=(1, 5), ps=(1, 2),
                      epsilons=(1.0, float("inf")), datasets=("adult", "census")),
        # Default: every figure in minutes to an hour per notebook on 2 cores, from 100 shadow datasets (the
        # paper: 4,000) and one root seed; AUCs lower and noisier than the paper's.
        "quick": dict(omega_rows=None, n_targets=10, n_shadow=100, n_test_datasets=100, n_records=1000, n_synth=1000,
                      n_queries=100_000, attention_epochs=100, attention_patience=20, ks=(1, 2, 5, 10, 20, 50),
                      ps=(1, 2, 3, 4), epsilons=(1.0, 10.0, 100.0, 1000.0, float("inf")),
                      datasets=("adult", "census")),
        # The paper's sizes (SPEC §2).
        "paper": dict(omega_rows=None, n_targets=10, n_shadow=4000, n_test_datasets=200, n_records=1000, n_synth=1000,
                      n_queries=100_000, attention_epochs=500, attention_patience=None, ks=tuple(range(1, 51)),
                      ps=(1, 2, 3, 4), epsilons=(1.0, 10.0, 100.0, 1000.0, float("inf")),
                      datasets=("adult", "census")),
    },
)  # fmt: skip

# Mean ± std AUC of the paper's Table 2 (query attack) and Table 3 (target attention).
_PAPER = {
    "query": {
        ("census", "synthpop"): [(0.732, 0.046), (0.802, 0.044), (0.790, 0.041), (0.879, 0.021)],
        ("census", "baynet"): [(0.535, 0.055), (0.644, 0.086), (0.731, 0.090), (0.858, 0.040)],
        ("adult", "synthpop"): [(0.613, 0.084), (0.699, 0.113), (0.742, 0.033), (0.804, 0.072)],
        ("adult", "baynet"): [(0.618, 0.120), (0.704, 0.140), (0.787, 0.057), (0.810, 0.110)],
    },
    "attention": {
        ("census", "synthpop"): [(0.727, 0.038), (0.783, 0.030), (0.770, 0.046), (0.838, 0.041)],
        ("census", "baynet"): [(0.535, 0.035), (0.587, 0.079), (0.674, 0.085), (0.737, 0.118)],
        ("adult", "synthpop"): [(0.609, 0.112), (0.691, 0.103), (0.765, 0.027), (0.797, 0.038)],
        ("adult", "baynet"): [(0.594, 0.083), (0.638, 0.104), (0.745, 0.068), (0.763, 0.103)],
    },
}


def paper_table(attack: str = "query") -> pd.DataFrame:
    """The paper's Table 2 (``query``) or Table 3 (``attention``): method, dataset, generator, paper_mean, paper_std."""
    if attack not in _PAPER:
        raise VrlibError(f"unknown attack {attack!r}; choose one of {sorted(_PAPER)}")
    rows = [
        dict(method=m, dataset=d, generator=g, paper_mean=mean, paper_std=std)
        for (d, g), values in _PAPER[attack].items()
        for m, (mean, std) in zip(METHODS, values)
    ]
    return pd.DataFrame(rows)


def load_omega(
    dataset: str, omega_rows: int | None = None, seed: int = 0, census_variant: str = "auto"
) -> tuple[pd.DataFrame, Schema]:
    """Ω of ``dataset`` (``adult`` or ``census``) as the experiments use it.

    ``omega_rows`` keeps a seeded random subset of that many records (the smoke
    profile's way to stay fast); the index keeps the records' labels in the full Ω.
    ``census_variant`` picks the census file (:func:`vrlib.data.load_census`).
    """
    if dataset not in ("adult", "census"):
        raise VrlibError(f"achilles experiments use 'adult' or 'census', not {dataset!r}")
    df, schema = load(dataset, variant=census_variant) if dataset == "census" else load(dataset)
    if omega_rows is not None and omega_rows < len(df):
        df = df.sample(n=omega_rows, random_state=seed).sort_index()
    return df, schema


def pool_sizes(dataset: str, n_rows: int) -> tuple[int, int]:
    """Sizes of D_aux and D_test: the paper's for the full Adult and Census, else half and a quarter of Ω."""
    if dataset == "adult" and n_rows == 45_222:
        return 10_000, 5_000
    if dataset == "census" and n_rows >= 569_741:
        return 50_000, 25_000
    return n_rows // 2, n_rows // 4


def neighbour_distances(
    df: pd.DataFrame, schema: Schema, metric: str = "cosine", p: float | None = None, k_max: int = 50
) -> np.ndarray:
    """Sorted distances of every record of Ω to its ``k_max`` nearest others, cached by content.

    V_k for any k <= k_max is the mean of the first k columns, so one search serves
    every k of Fig. 3a and the k = 5 of the other figures.
    """
    k_max = min(k_max, len(df) - 1)
    key = make_key(
        omega=fingerprint_table(df, schema), metric=metric, p=p, k_max=k_max, code=source_hash(kneighbors, TableEncoder)
    )

    def check(arrays, meta):
        d = arrays["distances"]
        if d.shape != (len(df), k_max) or d.dtype.kind != "f":
            raise ValueError(f"distances of shape {d.shape}, expected {(len(df), k_max)}")
        return d

    def make():
        distances, _ = kneighbors(TableEncoder(schema).fit_transform(df), k_max, metric=metric, p=p)
        return {"distances": distances}, {"kind": "neighbours"}

    return get_or_make(Cache(namespace="neighbours"), key, make, check)


def top_by_vk(df: pd.DataFrame, distances: np.ndarray, k: int, n_targets: int, include_self: bool = False) -> list:
    """The ``n_targets`` records with the highest V_k, from :func:`neighbour_distances`.

    With ``include_self`` the record's own zero is one of the k: V_k = sum of the k-1 nearest others / k.
    """
    if k > distances.shape[1] + include_self:
        raise VrlibError(f"k={k} exceeds the {distances.shape[1]} neighbours computed")
    v = distances[:, : k - 1].sum(axis=1) / k if include_self else distances[:, :k].mean(axis=1)
    return list(df.index[np.argsort(-v, kind="stable")[:n_targets]])


def choose_targets(
    df: pd.DataFrame,
    schema: Schema,
    methods=METHODS,
    n_targets: int = 10,
    seed: int = 0,
    distance_params: dict | None = None,
) -> dict[str, list]:
    """The ``n_targets`` targets of each method, highest risk first (V_k from the cached neighbours)."""
    params = dict(k=5, metric="cosine", p=None, include_self=False) | dict(distance_params or {})
    chosen = {}
    for method in methods:
        if method == "distance":
            distances = neighbour_distances(df, schema, params["metric"], params["p"], k_max=max(50, params["k"]))
            chosen[method] = top_by_vk(df, distances, params["k"], n_targets, params["include_self"])
        else:
            chosen[method] = list(rank_records(df, schema, method, seed=seed).index[:n_targets])
    return chosen


def make_attack(attack: str, schema: Schema, settings: dict, seed: int, n_jobs: int | None = None):
    """The attack of a privacy game from :mod:`vrlib.attacks.registry`, configured by the profile
    (``n_jobs``: threads of the query attack's forest)."""
    if attack == "query":
        params = dict(n_queries=settings["n_queries"], n_jobs=n_jobs)
    elif attack == "attention":
        params = dict(max_epochs=settings["attention_epochs"], patience=settings["attention_patience"])
    else:
        raise VrlibError(f"unknown attack {attack!r}; choose 'query' or 'attention'")
    return registry.make_attack(attack, schema=schema, seed=seed, **params)


def attack_identity(attack: str, schema: Schema, settings: dict) -> dict:
    """What determines an attack's scores besides the data and its seed: the profile's parameters and the code
    (the attack's, and :func:`make_attack`'s, which turns the profile into the attack)."""
    model = make_attack(attack, schema, settings, seed=0)
    if attack == "query":
        params = {"n_queries": settings["n_queries"]}
    else:
        params = {"epochs": settings["attention_epochs"], "patience": settings["attention_patience"]}
    return {"params": params, "source": source_hash(type(model), make_attack)}


def make_game(
    dataset: str,
    df: pd.DataFrame,
    schema: Schema,
    generator: str,
    generator_params: dict | None,
    settings: dict,
    seed: int,
    n_jobs=None,
    share_out: bool = True,
) -> TraditionalGame:
    """The traditional game of SPEC §2 on Ω with the profile's sizes (OUT datasets shared unless ``share_out=False``)."""
    n_aux, n_test = pool_sizes(dataset, len(df))
    game = TraditionalGame(
        generator,
        generator_params,
        n_aux=n_aux,
        n_test=n_test,
        n_records=settings["n_records"],
        n_synth=settings["n_synth"],
        n_shadow=settings["n_shadow"],
        n_test_datasets=settings["n_test_datasets"],
        share_out=share_out,
        seed=seed,
        n_jobs=n_jobs,
        progress=False,  # one bar over the targets (attack_targets)
    )
    return game.fit(df, schema)


ATTENTION_GROUP = 32  # attention targets trained together as one stacked model (memory grows with it)


def game_attack(attack: str, schema: Schema, settings: dict) -> GameAttack:
    """The attack of the traditional game as :func:`vrlib.play.play` takes it (:func:`make_attack` with the profile).

    Attention attacks are trained :data:`ATTENTION_GROUP` targets at a time
    (:func:`vrlib.attacks.attention.fit_attacks`: each target's result is what training it alone gives).
    """
    spec = GameAttack(attack, partial(make_attack, attack, schema, settings), attack_identity(attack, schema, settings))
    if attack != "attention":
        return spec
    from vrlib.attacks.attention import fit_attacks

    return replace(spec, fit_together=partial(fit_attacks, max_group=ATTENTION_GROUP), group=ATTENTION_GROUP)


def attack_targets(
    game: TraditionalGame, targets, attack: str, settings: dict, seed: int | None = None, progress: bool = True
) -> dict:
    """Test labels and attack scores of each target, read from the cache or computed (:func:`vrlib.play.play`).

    Each target's attack is seeded by :func:`attack_seed` from the game's seed; the
    results are cached per target in the namespace ``achilles-attacks``, and the
    synthetic datasets of every target in ``synthetic`` (notebooks attacking the same
    targets with another attack reuse them).

    Parameters
    ----------
    seed : int, optional
        The game's seed, if given (the attacks are seeded from ``game.seed``; a different
        value is an error rather than a cache key that describes neither).

    Returns
    -------
    dict
        target label -> (labels, scores) on the test datasets.
    """
    if seed is not None and seed != game.seed:
        raise VrlibError(f"seed={seed} differs from the game's seed {game.seed}; the attacks are seeded by the game")
    spec = game_attack(attack, game.schema_, settings)
    results = play(game, spec, targets, namespace="achilles-attacks", progress=progress)
    return {t: sides["test"] for t, sides in results.items()}


def _score_row(labels, scores) -> dict:
    return dict(
        auc=metrics.auc(labels, scores),
        accuracy=metrics.accuracy(labels, np.asarray(scores) > 0.5),
        tpr_at_fpr_10=metrics.tpr_at_fpr(labels, scores, 0.1),
    )


def record_identification(
    dataset: str,
    generator: str,
    methods=METHODS,
    profile: str = "quick",
    seed: int = 0,
    attack: str = "query",
    generator_params: dict | None = None,
    distance_params: dict | None = None,
    n_jobs=None,
    progress: bool = True,
    share_out: bool = True,
    census_variant: str = "auto",
    **overrides,
) -> pd.DataFrame:
    """Attack the targets chosen by each method; one row per target × method.

    Parameters
    ----------
    dataset : {"adult", "census"}
    generator : str
        A generator name (``synthpop``, ``baynet``, ``privbayes``, ...).
    methods : sequence of str
        Target-selection methods.
    profile : {"smoke", "quick", "paper"}
    seed : int
        Seeds the split, the games, the generators, the attack and the random baselines.
    attack : {"query", "attention"}
    generator_params : dict, optional
        E.g. ``{"epsilon": 10.0}`` for PrivBayes.
    distance_params : dict, optional
        ``k``, ``metric``, ``p``, ``include_self`` of the distance method (default k=5, cosine).
    share_out : bool
        Share the OUT datasets between targets (default: nearly halves the generator fits,
        and correlates the targets' AUCs; see :mod:`vrlib.games`).
    census_variant : {"auto", "full", "random10000", "first50000"}
        The census file Ω is read from (:func:`vrlib.data.load_census`).
    **overrides
        Profile settings to change (e.g. ``n_shadow=500``).

    Returns
    -------
    DataFrame
        Columns ``dataset, generator, attack, method, rank, target, auc, accuracy, tpr_at_fpr_10``
        plus the setting (``profile``, ``seed``, ``n_shadow``, ``n_test_datasets``).
    """
    settings = profile_settings(FAMILY, profile, **overrides)
    df, schema = load_omega(dataset, settings["omega_rows"], seed, census_variant)
    chosen = choose_targets(df, schema, methods, settings["n_targets"], seed, distance_params)
    game = make_game(dataset, df, schema, generator, generator_params, settings, seed, n_jobs, share_out)
    results = attack_targets(game, [t for ts in chosen.values() for t in ts], attack, settings, progress=progress)
    rows = [
        dict(
            dataset=dataset,
            generator=generator,
            attack=attack,
            method=method,
            rank=r + 1,
            target=t,
            **_score_row(*results[t]),
        )
        for method, targets in chosen.items()
        for r, t in enumerate(targets)
    ]
    out = pd.DataFrame(rows)
    out["omega"] = omega_label(dataset, len(df), census_variant)
    out["profile"], out["seed"] = profile, seed
    out["n_shadow"], out["n_test_datasets"] = settings["n_shadow"], settings["n_test_datasets"]
    return out


def robustness(
    dataset: str,
    generator: str,
    selections: dict,
    profile: str = "quick",
    seed: int = 0,
    attack: str = "query",
    n_jobs=None,
    progress: bool = True,
    **overrides,
) -> pd.DataFrame:
    """Attack several target sets at once (e.g. the top records for each k); one row per setting × target.

    Parameters
    ----------
    selections : dict
        Setting label -> list of target labels.  Targets shared by several settings
        are attacked once.
    """
    settings = profile_settings(FAMILY, profile, **overrides)
    df, schema = load_omega(dataset, settings["omega_rows"], seed)
    game = make_game(dataset, df, schema, generator, None, settings, seed, n_jobs)
    results = attack_targets(game, [t for ts in selections.values() for t in ts], attack, settings, progress=progress)
    rows = [
        dict(setting=label, rank=r + 1, target=t, **_score_row(*results[t]))
        for label, targets in selections.items()
        for r, t in enumerate(targets)
    ]
    out = pd.DataFrame(rows)
    out["dataset"], out["generator"], out["attack"], out["profile"], out["seed"] = (
        dataset,
        generator,
        attack,
        profile,
        seed,
    )
    out["omega"] = omega_label(dataset, len(df))
    return out


# Readings of the paper's log-likelihood baseline ("sample target records having the lowest
# log-likelihood", continuous columns "discretised according to percentiles"): name -> parameters
# of vrlib.selection.rank_records(method="loglik").  The first is the one of Table 2.
LOGLIK_READINGS = {
    "lowest, 10 bins": dict(bins=10),
    "lowest, 5 bins": dict(bins=5),
    "lowest, 20 bins": dict(bins=20),
    "lowest, 100 bins": dict(bins=100),
    "lowest, categorical only": dict(columns="categorical"),
    "sampled in lowest 1 %": dict(bins=10, sample_from=0.01),
    "sampled in lowest 5 %": dict(bins=10, sample_from=0.05),
}


def loglik_study(
    dataset: str,
    generators,
    profile: str = "quick",
    seed: int = 0,
    readings: dict | None = None,
    n_jobs=None,
    progress: bool = True,
    **overrides,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Attack the targets of each reading of the log-likelihood baseline, and distance's, with each generator.

    A target chosen by several readings (or by Table 2) is attacked once per generator
    (the per-target results are cached).

    Returns
    -------
    results : DataFrame
        One row per generator × setting × target (``setting`` = reading name or ``distance``),
        as :func:`robustness` returns.
    targets : DataFrame
        One row per setting: its targets, the number shared with distance's and with
        Table 2's reading.
    """
    readings = dict(LOGLIK_READINGS if readings is None else readings)
    settings = profile_settings(FAMILY, profile, **overrides)
    df, schema = load_omega(dataset, settings["omega_rows"], seed)
    n = settings["n_targets"]
    selections = {
        name: list(rank_records(df, schema, "loglik", seed=seed, **params).index[:n])
        for name, params in readings.items()
    }
    selections["distance"] = choose_targets(df, schema, ["distance"], n, seed)["distance"]
    first = next(iter(readings))
    targets = pd.DataFrame(
        [
            dict(
                setting=name,
                targets=", ".join(map(str, ts)),
                shared_with_distance=len(set(ts) & set(selections["distance"])),
                shared_with_first=len(set(ts) & set(selections[first])),
            )
            for name, ts in selections.items()
        ]
    )
    results = pd.concat(
        [
            robustness(
                dataset, g, selections, profile=profile, seed=seed, n_jobs=n_jobs, progress=progress, **overrides
            )
            for g in generators
        ],
        ignore_index=True,
    )
    return results, targets


PAPER_OMEGA = {"adult": 45_222, "census": 569_741}  # records of Ω in the paper


def omega_label(dataset: str, n_rows: int, census_variant: str = "auto") -> str:
    """What Ω is, in words, for a table of ``n_rows`` records of ``dataset`` (e.g. a column beside the numbers)."""
    if dataset not in PAPER_OMEGA:
        raise VrlibError(f"achilles experiments use 'adult' or 'census', not {dataset!r}")
    paper = PAPER_OMEGA[dataset]
    if n_rows >= paper:
        return f"all {n_rows:,} records, as the paper"
    if dataset == "census" and census_variant == "first50000":
        # The file is ordered by region: its first rows are not a random sample.
        return f"{n_rows:,} records of the first 50,000 rows of the UK Census teaching file (paper: all {paper:,})"
    name = "the UK Census teaching file" if dataset == "census" else "Adult"
    return f"a {n_rows:,}-record random subset of {name} (paper: all {paper:,})"


def omega_note(dataset: str, omega_rows: int | None = None, seed: int = 0, census_variant: str = "auto") -> str:
    """One sentence saying what Ω is for ``dataset`` under a profile (to print beside every table of its numbers)."""
    if dataset not in PAPER_OMEGA:
        raise VrlibError(f"achilles experiments use 'adult' or 'census', not {dataset!r}")
    df, _ = load_omega(dataset, omega_rows, seed, census_variant)
    return f"{dataset}: Ω is {omega_label(dataset, len(df), census_variant)}."


def summarise(results: pd.DataFrame, by) -> pd.DataFrame:
    """Mean ± std (ddof=0) AUC over targets per group, with the number of targets."""
    grouped = results.groupby(list(by), sort=False)["auc"]
    out = grouped.agg(auc_mean="mean", auc_std=lambda a: float(np.std(a)), n_targets="count").reset_index()
    return out


def table_vs_paper(results: pd.DataFrame, attack: str = "query") -> pd.DataFrame:
    """Table 2 / 3: ``method,dataset,generator,auc_mean,auc_std,paper_mean,paper_std,n_targets,omega``.

    ``omega`` says what Ω is (e.g. the census subset), beside the numbers.
    """
    ours = summarise(results, ["method", "dataset", "generator"])
    table = ours.merge(paper_table(attack), on=["method", "dataset", "generator"], how="left")
    columns = ["method", "dataset", "generator", "auc_mean", "auc_std", "paper_mean", "paper_std", "n_targets"]
    if "omega" in results:
        table = table.merge(results.groupby("dataset", sort=False).omega.first().reset_index(), on="dataset")
        columns.append("omega")
    return table[columns]
