"""DOMIAS experiments (van Breugel et al. 2023): attack TVAE and friends on California Housing, tidy results.

Every experiment follows the paper's protocol (SPEC §3, paper App. A): California
Housing with every column standardised (the 8 features and the target, with the
whole table's mean and standard deviation); a seeded shuffle; ``D_mem`` = its first
``n_mem`` rows, the non-members the next ``n_mem``, the reference set its last
``n_ref`` rows (so smaller reference sets are nested in larger ones); a generator
fitted on ``D_mem`` releases ``n_syn`` rows (smaller ``n_syn`` are prefixes of one
draw).  The test set is ``D_mem`` (label 1) plus the non-members (label 0).

One row per seed × setting × attack with ``auc``, ``accuracy`` (median threshold, the
paper's), ``tpr_at_1fpr`` (TPR at 1 % FPR) and ``precision_top10`` (top-10 % precision).

Work is shared and cached:

* synthetic datasets come from :func:`vrlib.synthesis.synthesize`, the synthesis path
  every experiment family shares (cached by content, namespace ``synthetic``); the
  fits of one experiment run in parallel (:func:`vrlib.parallel.run`), each on one
  torch thread, and come back to this process, which writes the cache;
* per seed and setting the generator is fitted once and every attack scores the same
  synthetic data; ``domias_*`` and ``eq1_*`` share ``p_G``, and ``p_R`` depends only
  on the seed and ``n_ref``, so it is fitted once per run and reused;
* the test scores of each attack are cached too (:mod:`vrlib.experiments.domias_scoring`,
  namespace ``domias-scores``, keyed by the exact arrays scored and the code of the attack,
  its densities and the scoring, not this module's figure code), so re-running a notebook,
  or asking for the top-q precision curves of a setting that Fig. 3a already ran, costs
  nothing.

Decisions (also in the notebook): LOGAN 0 uses a plain GAN rather than the reference
code's CTGAN; GAN-Leaks CAL uses ``D_ref`` itself rather than rows of a generator (the
reference code's evaluation samples them from a CTGAN fitted on the synthetic data); LOGAN D1
comes twice, trained correctly (``logan_d1``) and as the reference code trains it
(``logan_d1_published``: one class at the paper's sizes, see
:class:`vrlib.attacks.logan.LOGAND1Published`); the quality axis of Fig. 6 is the sliced Wasserstein-1
distance (100 random directions) to a hold-out set in standardised units, with the
per-column mean Wasserstein-1 alongside (the paper's code used a Sinkhorn divergence of
pooled min-max-scaled values, so absolute numbers differ); the Fig. 6 training set
size is 500, as in Figs. 3b and 4 (the paper does not give it); in Fig. 6 BayNet and
PrivBayes bin continuous columns at quantiles of the public reference set
(:func:`public_domain`), and the additive-noise values are read as variances, as the
paper's text calls them (:func:`noise_sigma`), σ in standardised units.  The minority study
(the paper's Fig. 5 used a private heart-failure cohort) runs on Adult: see
:func:`minority`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from vrlib import metrics, synthesis
from vrlib.audit.scores import density_view
from vrlib.data import Schema, load, quantile_domain
from vrlib.errors import VrlibError
from vrlib.experiments.domias_scoring import ATTACKS, Setting, check_attacks, score_settings
from vrlib.experiments.profiles import profile_settings, register
from vrlib.generators import wgan_ensemble
from vrlib.parallel import derive_seed
from vrlib.synthesis import SynthesisJob

FAMILY = "domias"

FIG3_ATTACKS = (
    "domias_kde",
    "domias_flow",
    "eq1_kde",
    "logan_0",
    "logan_d1",
    "logan_d1_published",
    "mc",
    "gan_leaks",
    "gan_leaks_cal",
)
FIG4_ATTACKS = ("domias_kde", "domias_flow", "eq1_kde", "eq1_flow", "logan_d1", "logan_d1_published")

# Fig. 6's generators: the paper's eight (GAN, WGAN-GP, CTGAN, TVAE, NFlow, PATE-GAN, PrivBayes,
# ADS-GAN), BayNet (ours, PrivBayes without noise) and the additive-noise baseline.
FIG6_PAPER = ("gan", "wgan_gp", "ctgan", "tvae", "nflow", "pategan", "privbayes", "adsgan")
FIG6_GENERATORS = FIG6_PAPER + ("baynet", "noise")

# BNAF as in the paper's Table 3 (5 flows × 3 layers × 32 units per dimension, lr 0.01,
# batch 50, 50 epochs), and smaller versions that fit the other profiles' budgets.
_FLOW_PAPER = dict(n_flows=5, n_layers=3, hidden_per_dim=32, epochs=50, batch_size=50, lr=1e-2, patience=10)
_FLOW_QUICK = dict(n_flows=5, n_layers=3, hidden_per_dim=16, epochs=10, batch_size=512, lr=1e-2, patience=3)
_FLOW_SMOKE = dict(n_flows=2, n_layers=2, hidden_per_dim=8, epochs=2, batch_size=256, lr=1e-2, patience=2)

register(
    FAMILY,
    {
        # CI: everything runs in about a minute; the numbers mean nothing.
        "smoke": dict(
            seeds=(0,), n_mem_grid=(50, 200), n_mem=200, tvae_epochs=30, epochs_grid=(10, 30), n_ref=1000,
            n_syn=1000, n_ref_grid=(300, 1000), n_syn_grid=(300, 1000), flow=_FLOW_SMOKE, logan_epochs=3,
            n_holdout=1000, fig6_generators=FIG6_GENERATORS,
            ctgan_epochs=10, privbayes_epsilons=(1.0,), noise_scales=(0.7, 1.9), fig6_attacks=("domias_kde",),
            gan_epochs=2, gan_batch_size=100, nflow_epochs=2, adsgan_lambdas=(0.2, 1.5), pategan_epsilon=1.0,
            pategan_delta=1e-5,
            noise_values_are="variance", domain_bins=10,
            q_grid=(0.05, 0.1, 0.5, 1.0), adult_n_mem=300, adult_n_ref=1000, adult_n_syn=1000,
            adult_epochs=20, adult_jitter=0.1, minority_attacks=("domias_kde", "eq1_kde", "gan_leaks_cal"),
        ),
        # Default: the paper's grids with smaller sizes; minutes on 2 cores.
        "quick": dict(
            seeds=(0, 1, 2), n_mem_grid=(30, 50, 100, 300, 500, 1000), n_mem=500, tvae_epochs=1000,
            epochs_grid=(100, 300, 1000, 2000), n_ref=3000, n_syn=3000, n_ref_grid=(300, 1000, 2000, 3000),
            n_syn_grid=(300, 1000, 2000, 3000), flow=_FLOW_QUICK, logan_epochs=20, n_holdout=2000,
            fig6_generators=FIG6_GENERATORS, ctgan_epochs=300,
            privbayes_epsilons=(1.0, 10.0), noise_scales=(0.7, 1.1, 1.5, 1.9, 2.5, 3.5),
            gan_epochs=300, gan_batch_size=100, nflow_epochs=100, adsgan_lambdas=(0.2, 0.7, 1.1, 1.5),
            pategan_epsilon=1.0, pategan_delta=1e-5,
            fig6_attacks=("domias_kde", "eq1_kde", "mc", "gan_leaks", "gan_leaks_cal"),
            noise_values_are="variance", domain_bins=10,
            q_grid=(0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
            adult_n_mem=1500, adult_n_ref=3000, adult_n_syn=3000, adult_epochs=1000, adult_jitter=0.1,
            minority_attacks=("domias_kde", "eq1_kde", "logan_d1", "mc", "gan_leaks", "gan_leaks_cal"),
        ),
        # The paper's sizes (App. A): TVAE 2,000 epochs, n_ref = n_syn = 10,000, 8 seeds, BNAF of Table 3.
        "paper": dict(
            seeds=tuple(range(8)), n_mem_grid=(30, 50, 100, 300, 500, 1000), n_mem=500, tvae_epochs=2000,
            epochs_grid=(100, 250, 500, 1000, 1500, 2000, 3000), n_ref=10000, n_syn=10000,
            n_ref_grid=(100, 500, 1000, 2000, 5000, 10000), n_syn_grid=(100, 500, 1000, 2000, 5000, 10000),
            flow=_FLOW_PAPER, logan_epochs=300, n_holdout=2000,
            fig6_generators=FIG6_GENERATORS, ctgan_epochs=300,
            privbayes_epsilons=(0.1, 1.0, 10.0), gan_epochs=1000, gan_batch_size=100, nflow_epochs=300,
            adsgan_lambdas=(0.2, 0.5, 0.7, 1.0, 1.1, 1.3, 1.5), pategan_epsilon=1.0, pategan_delta=1e-5,
            noise_scales=(0.7, 0.9, 1.1, 1.3, 1.5, 1.7, 1.9, 2.3, 2.5, 2.9, 3.5, 3.9), fig6_attacks=ATTACKS,
            noise_values_are="variance", domain_bins=10,
            q_grid=(0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
            adult_n_mem=2000, adult_n_ref=10000, adult_n_syn=10000, adult_epochs=2000, adult_jitter=0.1,
            minority_attacks=("domias_kde", "domias_flow", "eq1_kde", "eq1_flow", "logan_0", "logan_d1", "mc",
                              "gan_leaks", "gan_leaks_cal"),
        ),
    },
)  # fmt: skip

# Adult minority study: the attacker's view of Adult (see :func:`minority`).
ADULT_COLUMNS = (
    "age",
    "fnlwgt",
    "education-num",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "sex",
    "race",
    "income",
)
MINORITY = ("race", "Asian-Pac-Islander")


# --------------------------------------------------------------------------- data


def california() -> tuple[pd.DataFrame, Schema]:
    """California Housing with every column standardised (whole-table mean, sample std)."""
    df, schema = load("california")
    return (df - df.mean()) / df.std(), schema


def split(df: pd.DataFrame, n_mem: int, n_ref: int, seed: int, n_holdout: int = 0) -> dict[str, pd.DataFrame]:
    """The paper's split of one seeded shuffle of ``df``.

    Returns
    -------
    dict
        ``mem`` (first ``n_mem`` rows), ``non`` (next ``n_mem``), ``holdout`` (next
        ``n_holdout``) and ``ref`` (last ``n_ref``): disjoint.
    """
    n = len(df)
    if n_mem < 1 or n_ref < 2:
        raise VrlibError(f"n_mem must be ≥ 1 and n_ref ≥ 2 (got {n_mem}, {n_ref})")
    if 2 * n_mem + n_holdout + n_ref > n:
        raise VrlibError(
            f"the table has {n} rows, fewer than 2 × n_mem + n_holdout + n_ref = {2 * n_mem + n_holdout + n_ref}; "
            "lower the sizes"
        )
    order = np.random.default_rng(seed).permutation(n)
    take = lambda idx: df.iloc[idx].reset_index(drop=True)  # noqa: E731
    return {
        "mem": take(order[:n_mem]),
        "non": take(order[n_mem : 2 * n_mem]),
        "holdout": take(order[2 * n_mem : 2 * n_mem + n_holdout]),
        "ref": take(order[n - n_ref :]),
    }


# --------------------------------------------------------------------------- synthesis (cached, parallel)


def synthesize(
    jobs: list[dict], cache: bool = True, n_jobs: int | None = None, progress: bool = False, settings=None
) -> list[pd.DataFrame]:
    """Synthetic tables for ``jobs`` through :func:`vrlib.synthesis.synthesize` (cached, parallel).

    Parameters
    ----------
    jobs : list of dict
        Each with ``train`` (DataFrame), ``schema``, ``generator`` (name), ``params``
        (dict), ``n`` (rows to sample) and ``seed``; the fit and sample seeds derive
        from ``seed`` and the generator's name.
    cache : bool
        Read and write the ``synthetic`` cache.
    n_jobs : int, optional
        Worker processes (see :func:`vrlib.parallel.run`).
    settings : dict, optional
        The experiment's settings: under ``gan_trainer = "ensemble"`` (or
        ``$VRLIB_GAN_TRAINER=ensemble``, :func:`vrlib.generators.wgan_ensemble.gan_trainer`) the
        GAN, WGAN-GP and WGAN-WC fits of one shape are trained in stacks
        (:func:`vrlib.generators.wgan_ensemble.synthesize_stacked`, cached under keys of their own).
    """
    made = []
    for job in jobs:
        params = dict(job["params"])
        if job["generator"] in ("tvae", "ctgan", "gan", "wgan_gp", "adsgan", "pategan", "nflow"):
            params.setdefault("threads", 1)  # small networks: one thread each, the fits run side by side
        made.append(
            SynthesisJob(
                job["train"],
                job["schema"],
                job["generator"],
                job["n"],
                derive_seed(job["seed"], "fit", job["generator"]),
                derive_seed(job["seed"], "sample", job["generator"]),
                params=params,
            )
        )
    stacked = []
    if wgan_ensemble.gan_trainer(settings) == "ensemble":
        stacked = [i for i, job in enumerate(jobs) if job["generator"] in wgan_ensemble.GENERATORS]
    rest = [i for i in range(len(jobs)) if i not in set(stacked)]
    out = [None] * len(jobs)
    tables = synthesis.synthesize_tables(
        [made[i] for i in rest], cache=cache, n_jobs=n_jobs, desc="synthesising", progress=progress
    )
    for i, table in zip(rest, tables):
        out[i] = table
    if stacked:
        arrays = wgan_ensemble.synthesize_stacked(
            [made[i] for i in stacked], cache=cache, n_jobs=n_jobs, progress=progress
        )
        for i, a in zip(stacked, arrays):
            out[i] = made[i].decode(a)
    return out


def _metric_row(labels: np.ndarray, scored: tuple) -> dict:
    scores, seconds = scored
    if np.isnan(scores).all():  # an attack not defined on this setting
        return {
            "auc": math.nan,
            "accuracy": math.nan,
            "tpr_at_1fpr": math.nan,
            "precision_top10": math.nan,
            "seconds": seconds,
        }
    return {
        "auc": metrics.auc(labels, scores),
        "accuracy": metrics.accuracy_at_median(labels, scores),
        "tpr_at_1fpr": metrics.tpr_at_fpr(labels, scores, 0.01),
        "precision_top10": metrics.top_q_precision(labels, scores, 0.1),
        "seconds": seconds,
    }


def _test_order(n_mem: int, n_non: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A seeded order of members and non-members, and its labels.

    Members must not simply come first: wherever scores tie (MC's counts often do), a
    position-stable ranking such as top-q precision would favour them.
    """
    order = np.random.default_rng(derive_seed(seed, "test-order")).permutation(n_mem + n_non)
    return order, (order < n_mem).astype(int)


def _test_set(parts: dict, seed: int) -> tuple[np.ndarray, np.ndarray]:
    X = np.vstack([parts["mem"].to_numpy(np.float64), parts["non"].to_numpy(np.float64)])
    order, labels = _test_order(len(parts["mem"]), len(parts["non"]), seed)
    return X[order], labels


def _tvae_params(settings: dict, epochs: int) -> dict:
    return {"epochs": int(epochs)}


def _settings(profile: str, overrides: dict) -> dict:
    return profile_settings(FAMILY, profile, **overrides)


def _tvae_sweep(settings, points, attacks, cache, n_jobs, progress):
    """Rows for a list of (seed, n_mem, epochs) points: TVAE fitted on D_mem, every attack scored."""
    df, schema = california()
    attacks = check_attacks(attacks)
    jobs, metas = [], []
    for seed, n_mem, epochs in points:
        parts = split(df, n_mem, settings["n_ref"], seed)
        jobs.append(
            dict(
                train=parts["mem"],
                schema=schema,
                generator="tvae",
                params=_tvae_params(settings, epochs),
                n=settings["n_syn"],
                seed=seed,
            )
        )
        metas.append((seed, n_mem, epochs, parts))
    tables = synthesize(jobs, cache=cache, n_jobs=n_jobs, progress=progress)
    cases = [
        _california_setting(seed, n_mem, epochs, settings["n_ref"], settings["n_syn"], parts, syn)
        for (seed, n_mem, epochs, parts), syn in zip(metas, tables)
    ]
    scored = score_settings(cases, attacks, settings, cache, n_jobs, progress)
    rows = []
    for (seed, n_mem, epochs, _), case, scores in zip(metas, cases, scored):
        for name in attacks:
            rows.append(
                {
                    "seed": seed,
                    "n_mem": n_mem,
                    "epochs": epochs,
                    "n_ref": settings["n_ref"],
                    "n_syn": settings["n_syn"],
                    "attack": name,
                    **_metric_row(case.labels, scores[name]),
                }
            )
    return pd.DataFrame(rows)


def _california_setting(seed, n_mem, epochs, n_ref, n_syn, parts, syn, generator="tvae", params=None) -> Setting:
    """The TVAE (or other generator) setting of one seed: its synthetic rows, last ``n_ref`` reference rows, test set."""
    X, labels = _test_set(parts, seed)
    syn = syn.to_numpy(np.float64) if isinstance(syn, pd.DataFrame) else syn
    ref = parts["ref"].to_numpy(np.float64)
    return Setting(seed, syn[:n_syn], ref[len(ref) - n_ref :], ("california", seed, n_ref), X, labels)


# --------------------------------------------------------------------------- experiments


def fig3a(
    profile: str = "quick",
    attacks=FIG3_ATTACKS,
    cache: bool = True,
    n_jobs: int | None = None,
    progress: bool = False,
    **overrides,
) -> pd.DataFrame:
    """Fig. 3a: AUC of every attack vs |D_mem| (TVAE with the profile's epochs).

    Returns
    -------
    DataFrame
        One row per seed × n_mem × attack: ``seed, n_mem, epochs, n_ref, n_syn, attack,
        auc, accuracy, tpr_at_1fpr, precision_top10``.
    """
    s = _settings(profile, overrides)
    points = [(seed, n, s["tvae_epochs"]) for seed in s["seeds"] for n in s["n_mem_grid"]]
    return _tvae_sweep(s, points, attacks, cache, n_jobs, progress)


def fig3b(
    profile: str = "quick",
    attacks=FIG3_ATTACKS,
    cache: bool = True,
    n_jobs: int | None = None,
    progress: bool = False,
    **overrides,
) -> pd.DataFrame:
    """Fig. 3b: AUC vs TVAE training epochs at |D_mem| = ``n_mem`` (500). Rows as :func:`fig3a`."""
    s = _settings(profile, overrides)
    points = [(seed, s["n_mem"], e) for seed in s["seeds"] for e in s["epochs_grid"]]
    return _tvae_sweep(s, points, attacks, cache, n_jobs, progress)


def fig4(
    profile: str = "quick",
    attacks=FIG4_ATTACKS,
    cache: bool = True,
    n_jobs: int | None = None,
    progress: bool = False,
    **overrides,
) -> pd.DataFrame:
    """Fig. 4: DOMIAS ablations, AUC vs n_ref (n_syn fixed) and vs n_syn (n_ref fixed), KDE vs flow, Eq. 1 vs 2.

    |D_mem| = ``n_mem`` (500), TVAE with the profile's epochs.  Smaller reference sets
    are the last rows of the shuffle (nested); smaller synthetic sets are prefixes of
    one draw of ``n_syn`` rows.

    Returns
    -------
    DataFrame
        ``ablation`` ("n_ref" or "n_syn"), ``seed, n_mem, epochs, n_ref, n_syn, attack`` and the metrics.
    """
    s = _settings(profile, overrides)
    attacks = check_attacks(attacks)
    if max(s["n_syn_grid"]) > s["n_syn"] or max(s["n_ref_grid"]) > s["n_ref"]:
        raise VrlibError("n_syn_grid and n_ref_grid must not exceed n_syn and n_ref (smaller sets are subsets)")
    df, schema = california()
    n_mem, epochs = s["n_mem"], s["tvae_epochs"]
    parts_by_seed = {seed: split(df, n_mem, s["n_ref"], seed) for seed in s["seeds"]}
    jobs = [
        dict(
            train=parts_by_seed[seed]["mem"],
            schema=schema,
            generator="tvae",
            params=_tvae_params(s, epochs),
            n=s["n_syn"],
            seed=seed,
        )
        for seed in s["seeds"]
    ]
    tables = synthesize(jobs, cache=cache, n_jobs=n_jobs, progress=progress)
    grid = [("n_ref", k, s["n_syn"]) for k in s["n_ref_grid"]] + [("n_syn", s["n_ref"], k) for k in s["n_syn_grid"]]
    cases, metas = [], []
    for seed, syn in zip(s["seeds"], tables):
        for ablation, n_ref, n_syn in grid:  # smaller sets: last rows of the reference, prefixes of the draw
            cases.append(_california_setting(seed, n_mem, epochs, n_ref, n_syn, parts_by_seed[seed], syn))
            metas.append((ablation, seed, n_ref, n_syn))
    scored = score_settings(cases, attacks, s, cache, n_jobs, progress)
    rows = []
    for (ablation, seed, n_ref, n_syn), case, scores in zip(metas, cases, scored):
        for name in attacks:
            rows.append(
                {
                    "ablation": ablation,
                    "seed": seed,
                    "n_mem": n_mem,
                    "epochs": epochs,
                    "n_ref": n_ref,
                    "n_syn": n_syn,
                    "attack": name,
                    **_metric_row(case.labels, scores[name]),
                }
            )
    return pd.DataFrame(rows)


def precision_curves(
    profile: str = "quick",
    attacks=ATTACKS,
    cache: bool = True,
    n_jobs: int | None = None,
    progress: bool = False,
    **overrides,
) -> pd.DataFrame:
    """App. D: top-q precision vs q for every attack (California, |D_mem| = ``n_mem``, TVAE).

    The setting is that of Fig. 3a at ``n_mem``, so with the cache on its scores are reused.

    Returns
    -------
    DataFrame
        ``seed, n_mem, attack, q, precision``.
    """
    s = _settings(profile, overrides)
    attacks = check_attacks(attacks)
    df, schema = california()
    rows = []
    parts_by_seed = {seed: split(df, s["n_mem"], s["n_ref"], seed) for seed in s["seeds"]}
    jobs = [
        dict(
            train=parts_by_seed[seed]["mem"],
            schema=schema,
            generator="tvae",
            params=_tvae_params(s, s["tvae_epochs"]),
            n=s["n_syn"],
            seed=seed,
        )
        for seed in s["seeds"]
    ]
    tables = synthesize(jobs, cache=cache, n_jobs=n_jobs, progress=progress)
    cases = [
        _california_setting(seed, s["n_mem"], s["tvae_epochs"], s["n_ref"], s["n_syn"], parts_by_seed[seed], syn)
        for seed, syn in zip(s["seeds"], tables)
    ]
    scored = score_settings(cases, attacks, s, cache, n_jobs, progress)
    for seed, case, scores in zip(s["seeds"], cases, scored):
        for name in attacks:
            for q in s["q_grid"]:
                rows.append(
                    {
                        "seed": seed,
                        "n_mem": s["n_mem"],
                        "attack": name,
                        "q": q,
                        "precision": metrics.top_q_precision(case.labels, scores[name][0], q),
                    }
                )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- Fig. 6


def noise_sigma(value: float, values_are: str = "variance") -> float:
    """The additive-noise σ (standardised units) for one of the paper's noise values.

    The paper (§5.3) varies the "noise variance" of the additive-noise baseline over
    0.7 … 3.9 (App. C); its public code does not contain that baseline, so its text is
    all there is: ``values_are="variance"`` reads the values as σ², ``"std"`` as σ.
    """
    if values_are not in ("variance", "std"):
        raise VrlibError(f"noise values are 'variance' or 'std', got {values_are!r}")
    if not value >= 0:
        raise VrlibError(f"a noise value must be >= 0, got {value}")
    return math.sqrt(value) if values_are == "variance" else float(value)


def fig6_configs(s: dict) -> list[tuple[str, str, dict, float]]:
    """(label, generator name, params, privacy parameter) for every point of Fig. 6, from a profile's settings.

    The paper's eight generators with ADS-GAN at each λ of ``adsgan_lambdas`` (its privacy
    parameter: λ), PATE-GAN at (``pategan_epsilon``, ``pategan_delta``), PrivBayes at each ε of
    ``privbayes_epsilons``; BayNet; the additive-noise baseline at each level of
    ``noise_scales``.  The paper gives no other hyper-parameters ("recommended settings"): the
    GANs train ``gan_epochs`` passes of ``gan_batch_size`` rows with their modules' defaults
    (WGAN-GP's gradient penalty 10, as the paper says), NFlow ``nflow_epochs``, TVAE
    ``tvae_epochs``, CTGAN ``ctgan_epochs``.  A point's settings are its synthetic dataset's
    cache key, so a point whose settings did not change keeps its key.
    """
    out = []
    values_are = s["noise_values_are"]
    symbol = "σ²" if values_are == "variance" else "σ"
    for g in s["fig6_generators"]:
        if g in ("gan", "wgan_gp", "pategan", "adsgan"):  # read only where a GAN is asked for
            gan = {"epochs": s["gan_epochs"], "batch_size": s["gan_batch_size"]}
        if g == "tvae":
            out.append(("TVAE", "tvae", {"epochs": s["tvae_epochs"]}, math.nan))
        elif g == "ctgan":
            out.append(("CTGAN", "ctgan", {"epochs": s["ctgan_epochs"]}, math.nan))
        elif g == "privbayes":
            out += [
                (f"PrivBayes ε={e:g}", "privbayes", {"epsilon": float(e)}, float(e)) for e in s["privbayes_epsilons"]
            ]
        elif g == "baynet":
            out.append(("BayNet", "baynet", {}, math.nan))
        elif g == "gan":
            out.append(("GAN", "gan", dict(gan), math.nan))
        elif g == "wgan_gp":
            out.append(("WGAN-GP", "wgan_gp", {**gan, "gp_weight": 10.0}, math.nan))
        elif g == "nflow":
            out.append(("NFlow", "nflow", {"epochs": s["nflow_epochs"]}, math.nan))
        elif g == "pategan":
            eps, delta = float(s["pategan_epsilon"]), float(s["pategan_delta"])
            out.append((f"PATE-GAN ε={eps:g}", "pategan", {**gan, "epsilon": eps, "delta": delta}, eps))
        elif g == "adsgan":
            out += [(f"ADS-GAN λ={v:g}", "adsgan", {**gan, "lamda": float(v)}, float(v)) for v in s["adsgan_lambdas"]]
        elif g == "noise":
            # σ in the table's (standardised) units, never rescaled by the training set's own spread
            out += [
                (
                    f"noise {symbol}={v:g}",
                    "noise",
                    {"scale": noise_sigma(v, values_are), "training_std": False},
                    float(v),
                )
                for v in s["noise_scales"]
            ]
        else:
            raise VrlibError(f"unknown Fig. 6 generator {g!r}; choose from {', '.join(FIG6_GENERATORS)}")
    return out


def public_domain(reference: pd.DataFrame, schema: Schema, bins: int) -> dict:
    """California's public domain for the Bayesian networks: ``bins`` quantile bins of the reference set.

    California Housing has no published bounds (``cal_housing.domain`` only says every
    attribute is continuous), and equal-width bins between any bounds put nearly all of
    AveOccup, AveRooms, AveBedrms and Population in one bin (heavy tails).  The reference
    set ``D_ref`` is the attacker's public sample, disjoint from ``D_mem``; its
    quantiles cut each column into bins of about equal population mass, and the
    discretisation is the same whatever the training records are.  The outer edges are
    the reference set's 1st and 99th percentiles (:func:`vrlib.data.quantile_domain`).
    """
    return quantile_domain(reference, schema.continuous, bins)


def fig6(
    profile: str = "quick",
    attacks=None,
    cache: bool = True,
    n_jobs: int | None = None,
    progress: bool = False,
    points=None,
    **overrides,
) -> pd.DataFrame:
    """Fig. 6: privacy (attack AUC) vs quality (distance to a hold-out set) for several generators.

    Every generator is fitted on the same D_mem (|D_mem| = ``n_mem``) per seed;
    quality is the sliced Wasserstein-1 distance (``wd_sliced``) and the per-column mean
    Wasserstein-1 distance (``wd_columns``) between the ``n_syn`` synthetic rows and
    ``n_holdout`` hold-out rows, in standardised units.  ``points``, a collection of
    ``(seed, label)`` pairs (labels as :func:`fig6_configs` gives them), restricts the run to
    those points, which come out as they do in a full run (the sittings of
    :mod:`vrlib.experiments.domias_parts` run a few at a time).

    Returns
    -------
    DataFrame
        ``seed, family, generator, privacy_param, wd_sliced, wd_columns, attack`` and the metrics.
    """
    s = _settings(profile, overrides)
    attacks = check_attacks(attacks if attacks is not None else s["fig6_attacks"])
    df, schema = california()
    configs = fig6_configs(s)
    if points is not None:
        points = {(int(seed), label) for seed, label in points}
        unknown = points - {(seed, c[0]) for seed in s["seeds"] for c in configs}
        if unknown:
            raise VrlibError(f"no Fig. 6 point(s) {sorted(unknown)} under these settings; see fig6_configs")
    parts_by_seed = {seed: split(df, s["n_mem"], s["n_ref"], seed, n_holdout=s["n_holdout"]) for seed in s["seeds"]}
    jobs, metas = [], []
    # public bins for BayNet / PrivBayes: quantiles of the reference set, never of D_mem
    publics = {
        seed: schema.with_domains(public_domain(parts_by_seed[seed]["ref"], schema, s["domain_bins"]))
        for seed in s["seeds"]
    }
    for seed in s["seeds"]:
        for label, gen, params, priv in configs:
            if points is not None and (seed, label) not in points:
                continue
            public = publics[seed]
            jobs.append(
                dict(
                    train=parts_by_seed[seed]["mem"],
                    schema=public if gen in ("baynet", "privbayes") else schema,
                    generator=gen,
                    params=params,
                    n=s["n_syn"],
                    seed=seed,
                )
            )
            metas.append((seed, label, gen, params, priv))
    tables = synthesize(jobs, cache=cache, n_jobs=n_jobs, progress=progress, settings=s)
    cases, quality = [], []
    for (seed, label, gen, params, priv), syn in zip(metas, tables):
        syn = syn.to_numpy(np.float64)
        hold = parts_by_seed[seed]["holdout"].to_numpy(np.float64)
        quality.append(
            {
                "wd_sliced": metrics.sliced_wasserstein(syn, hold, seed=seed),
                "wd_columns": metrics.column_wasserstein(syn, hold),
            }
        )
        epochs = params.get("epochs", 0)
        # the Bayesian networks' synthetic data also depend on the public domain: part of the setting's key
        key_params = {**params, "domains": publics[seed].domains} if gen in ("baynet", "privbayes") else params
        cases.append(
            _california_setting(
                seed,
                s["n_mem"],
                epochs,
                s["n_ref"],
                s["n_syn"],
                parts_by_seed[seed],
                syn,
                generator=gen,
                params=key_params,
            )
        )
    scored = score_settings(cases, attacks, s, cache, n_jobs, progress)
    rows = []
    for (seed, label, gen, params, priv), q, case, scores in zip(metas, quality, cases, scored):
        for name in attacks:
            rows.append(
                {
                    "seed": seed,
                    "family": gen,
                    "generator": label,
                    "privacy_param": priv,
                    **q,
                    "attack": name,
                    **_metric_row(case.labels, scores[name]),
                }
            )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- minority group (Fig. 5 idea)


def encode_adult(
    df: pd.DataFrame, schema: Schema, mean: pd.Series, std: pd.Series, jitter: float, seed: int
) -> np.ndarray:
    """The attacker's continuous view of Adult: standardised continuous columns + jittered one-hot blocks.

    One-hot columns get Gaussian noise of standard deviation ``jitter`` so that densities
    exist (a KDE on 0/1 columns has a singular covariance); ``mean`` and ``std`` are the
    population's (Ω's), so every table is encoded alike.  The audit's numeric view
    (:func:`vrlib.audit.scores.density_view`), bit for bit.
    """
    return density_view(df, schema, np.asarray(mean, np.float64), np.asarray(std, np.float64), jitter, seed)


def minority(
    profile: str = "quick",
    attacks=None,
    group=MINORITY,
    cache: bool = True,
    n_jobs: int | None = None,
    progress: bool = False,
    **overrides,
) -> pd.DataFrame:
    """The minority-group idea of Fig. 5 on a public subgroup: Adult, race = Asian-Pac-Islander by default.

    The paper's Fig. 5 used a private heart-failure cohort whose minority (patients on
    ARB medication) is a small, distinct cluster.  On Adult a rare category plays that
    part: Asian-Pac-Islander is 2.9 % of the 45,222 complete records, and in the
    attacker's one-hot view it is a separate cluster.  TVAE is fitted on D_mem of the
    table restricted to ``ADULT_COLUMNS`` (6 continuous columns and sex, race, income),
    categorical columns as categories; the attacks see every table through
    :func:`encode_adult` (standardised continuous, one-hot + Gaussian jitter ``adult_jitter``).
    Metrics are computed on the whole test set and on the records inside / outside the
    group; accuracy uses the median score of the whole test set as threshold (the
    paper's sample-weighting).

    The generator may also *drop* a rare group instead of overfitting it (TVAE often
    does): ``share_in_training`` and ``share_in_synthetic`` say how much of the group each
    table holds.

    Returns
    -------
    DataFrame
        ``seed, subgroup, group, share_in_training, share_in_synthetic, n_members,
        n_nonmembers, attack, accuracy, seconds, auc``.
    """
    s = _settings(profile, overrides)
    attacks = check_attacks(attacks if attacks is not None else s["minority_attacks"])
    column, value = group
    full, full_schema = load("adult")
    schema = full_schema.subset(ADULT_COLUMNS)
    if column not in schema.categorical:
        raise VrlibError(f"the group column {column!r} must be one of the categorical columns {schema.categorical}")
    df = full[list(ADULT_COLUMNS)]
    if value not in df[column].cat.categories:
        raise VrlibError(f"{value!r} is not a value of {column!r}; choose one of {list(df[column].cat.categories)}")
    mean, std = df[list(schema.continuous)].mean(), df[list(schema.continuous)].std()
    parts_by_seed = {seed: split(df, s["adult_n_mem"], s["adult_n_ref"], seed) for seed in s["seeds"]}
    jobs = [
        dict(
            train=parts_by_seed[seed]["mem"],
            schema=schema,
            generator="tvae",
            params={"epochs": s["adult_epochs"]},
            n=s["adult_n_syn"],
            seed=seed,
        )
        for seed in s["seeds"]
    ]
    tables = synthesize(jobs, cache=cache, n_jobs=n_jobs, progress=progress)
    cases, tests = [], []
    for seed, syn in zip(s["seeds"], tables):
        parts = parts_by_seed[seed]
        order, labels = _test_order(len(parts["mem"]), len(parts["non"]), seed)
        test = pd.concat([parts["mem"], parts["non"]], ignore_index=True).iloc[order].reset_index(drop=True)
        enc = lambda t, name: encode_adult(t, schema, mean, std, s["adult_jitter"], derive_seed(seed, "jitter", name))  # noqa: E731
        cases.append(
            Setting(
                seed,
                enc(syn, "syn"),
                enc(parts["ref"], "ref"),
                ("adult", seed, s["adult_n_ref"]),
                enc(test, "test"),
                labels,
            )
        )
        tests.append((test, float((syn[column] == value).mean()), float((parts["mem"][column] == value).mean())))
    scored = score_settings(cases, attacks, s, cache, n_jobs, progress)
    rows = []
    for case, (test, syn_share, mem_share), scores in zip(cases, tests, scored):
        inside = (test[column] == value).to_numpy()
        for name in attacks:
            sc, seconds = scores[name]
            predicted = (sc > np.median(sc)).astype(int)  # one threshold for the whole test set
            for gname, mask in (("all", np.ones(len(sc), bool)), ("minority", inside), ("majority", ~inside)):
                lab = case.labels[mask]
                row = {
                    "seed": case.seed,
                    "subgroup": f"{column}={value}",
                    "group": gname,
                    "share_in_training": mem_share,
                    "share_in_synthetic": syn_share,
                    "n_members": int(lab.sum()),
                    "n_nonmembers": int((1 - lab).sum()),
                    "attack": name,
                    "accuracy": metrics.accuracy(lab, predicted[mask]),
                    "seconds": seconds,
                }
                row["auc"] = metrics.auc(lab, sc[mask]) if 0 < lab.sum() < len(lab) else math.nan
                rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- summaries


def summarise(results: pd.DataFrame, by, metric: str = "auc") -> pd.DataFrame:
    """Mean, standard deviation (population, as the papers' ±) and number of seeds of ``metric`` per group.

    Returns
    -------
    DataFrame
        The ``by`` columns, then ``{metric}_mean``, ``{metric}_std``, ``n_seeds``.
    """
    by = [by] if isinstance(by, str) else list(by)
    rows = []
    for keys, g in results.groupby(by, sort=False, dropna=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        values = g[metric].dropna().to_numpy()
        mean, std = metrics.mean_std(values) if len(values) else (math.nan, math.nan)
        rows.append({**dict(zip(by, keys)), f"{metric}_mean": mean, f"{metric}_std": std, "n_seeds": int(len(values))})
    return pd.DataFrame(rows)


__all__ = [
    "ATTACKS",
    "FIG3_ATTACKS",
    "FIG4_ATTACKS",
    "Setting",
    "california",
    "split",
    "synthesize",
    "score_settings",
    "fig3a",
    "fig3b",
    "fig4",
    "fig6",
    "fig6_configs",
    "FIG6_PAPER",
    "FIG6_GENERATORS",
    "precision_curves",
    "minority",
    "encode_adult",
    "noise_sigma",
    "public_domain",
    "summarise",
]
