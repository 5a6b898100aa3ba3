"""The model-seeded game (lost §4) for chosen training records, and an empirical ε lower bound.

With ``--generator NAME`` the custodian says which generator made the release; the
audit then plays the game that fits a given release: the training data D is fixed and
only the generator's randomness varies.  For a target record t of D:

* IN worlds: the generator fitted on D with a fresh seed (shared by every target);
* OUT worlds: fitted on D without t plus a fixed reference record r (a holdout record),
  fresh seeds;

and an attacker who knows everything but the target bit (D without t, r, the
generator) scores each synthetic dataset by how close its records come to t: minus the
mean eq. 6 distance from t to its ``n_neighbors`` nearest synthetic records (the
``closeness`` attack of :mod:`vrlib.attacks.registry`).

The targets are the ``n_targets`` records of highest V_k plus as many random controls.
D is the training data, or a seeded subsample of ``n_records`` of it that holds every
target (refitting the generator on 30,000 records hundreds of times is what makes the
game slow); the summary says which.

Per target: the attack's AUC over the games with DeLong's interval (the risk), and an
**empirical ε lower bound**: the first half of the games chooses a threshold, the
second half gives TPR and FPR with Clopper–Pearson bounds, and
``ε >= max(log(TPR_low / FPR_high), log((1 - FPR)_low / (1 - TPR)_high))``.  For an
ε-DP generator the bound holds below ε with probability at least ``level``
simultaneously for all targets (each bound at level ``1 - (1 - level) / (2 R)`` for R
targets).  Reported: the largest bound over targets.

PrivBayes and BayNet need public bin edges for continuous columns: unless the schema
has domains, they are quantiles of the holdout (:func:`vrlib.data.quantile_domain`),
which no world's training data influences.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from vrlib.attacks.registry import make_attack
from vrlib.data import Schema, quantile_domain
from vrlib.encoding import TableEncoder
from vrlib.errors import VrlibError
from vrlib.parallel import derive_seed
from vrlib.synthesis import SynthesisJob, synthesize_tables
from vrlib.uncertainty import clopper_pearson, delong_auc

__all__ = ["play", "epsilon_lower_bound"]


def epsilon_lower_bound(in_scores, out_scores, level: float = 0.95) -> float:
    """Empirical ε lower bound of a threshold attack (0 when the games show no separation).

    An ε-DP generator gives, for the set S = {score >= t}, ``TPR <= e^ε FPR`` and, for its
    complement, ``1 - FPR <= e^ε (1 - TPR)``.  The first half of each side chooses the
    threshold t; the second half, independent of that choice, gives Clopper–Pearson
    bounds ``TPR_low`` and ``FPR_high`` (two-sided intervals at ``level``: each one-sided
    bound fails with probability at most ``(1 - level) / 2``, so both hold with
    probability at least ``level``), and

    ``ε >= max(0, log(TPR_low / FPR_high), log((1 - FPR_high) / (1 - TPR_low)))``.

    Parameters
    ----------
    in_scores, out_scores : array-like
        The attack's score on IN and OUT worlds (higher = IN), at least 4 of each.
    level : float
        Probability that the bound is valid.
    """
    a, b = np.asarray(in_scores, float), np.asarray(out_scores, float)
    if len(a) < 4 or len(b) < 4:
        raise VrlibError("an ε bound needs at least 4 IN and 4 OUT games")
    a1, a2, b1, b2 = a[: len(a) // 2], a[len(a) // 2 :], b[: len(b) // 2], b[len(b) // 2 :]

    def estimate(t):
        tpr = ((a1 >= t).sum() + 0.5) / (len(a1) + 1)
        fpr = ((b1 >= t).sum() + 0.5) / (len(b1) + 1)
        return max(math.log(tpr / fpr), math.log((1 - fpr) / (1 - tpr)))

    values = np.unique(np.r_[a1, b1])
    candidates = (values[:-1] + values[1:]) / 2 if len(values) > 1 else values  # midway: robust to new scores
    threshold = max(candidates, key=estimate)
    tpr_low, _ = clopper_pearson(int((a2 >= threshold).sum()), len(a2), level)
    _, fpr_high = clopper_pearson(int((b2 >= threshold).sum()), len(b2), level)
    bounds = [0.0]
    if tpr_low > 0:
        bounds.append(math.log(tpr_low / fpr_high))
    if fpr_high < 1:
        bounds.append(math.log((1 - fpr_high) / (1 - tpr_low)))
    return float(max(bounds))


def play(
    train: pd.DataFrame,
    holdout: pd.DataFrame,
    schema: Schema,
    generator: str,
    vulnerability,
    epsilon: float | None = None,
    generator_params: dict | None = None,
    n_targets: int = 5,
    n_records: int | None = 1000,
    n_synth: int | None = None,
    n_games: int = 100,
    n_neighbors: int = 5,
    seed: int = 0,
    level: float = 0.95,
    n_jobs: int | None = None,
    cache: bool = False,
) -> dict:
    """Play the model-seeded game for the most vulnerable records and random controls.

    Parameters
    ----------
    train, holdout : DataFrame
        Checked tables (:func:`vrlib.audit.inputs.check_tables`).
    schema : Schema
    generator : str
        A name of :func:`vrlib.generators.get_generator`.
    vulnerability : array-like
        V_k of every training record.
    epsilon : float, optional
        The declared ε (PrivBayes: its ``epsilon`` parameter unless ``generator_params`` has one).
    generator_params : dict, optional
    n_targets : int
        Most vulnerable records; as many random controls are added.
    n_records : int, optional
        Size of D (a seeded subsample of the training data holding every target); ``None``: all.
    n_synth : int, optional
        Records per synthetic dataset (default ``len(D)``).
    n_games : int
        Games per target, half IN (shared) and half OUT.
    n_neighbors : int
        Synthetic records the attack averages over.
    seed : int
    level : float
        Coverage of the intervals; the ε bound holds for all targets at once with this probability.
    n_jobs : int, optional
        Generator fits in parallel (:func:`vrlib.parallel.run`).
    cache : bool
        Keep the synthetic datasets in vrlib's cache.

    Returns
    -------
    dict
        ``generator``, ``epsilon`` (declared), ``epsilon_lower`` (largest bound over targets),
        ``epsilon_respected`` (bound <= declared ε, or None), ``targets`` (one dict per target:
        ``index``, ``group``, ``vk``, ``auc``, ``ci_low``, ``ci_high``, ``epsilon_lower``),
        ``groups`` (mean AUC per group), the sizes and a ``sentence``.
    """
    params = dict(generator_params or {})
    if generator == "privbayes":
        if epsilon is None and "epsilon" not in params:
            raise VrlibError("PrivBayes needs its ε: give --epsilon (the ε the release was made with)")
        params.setdefault("epsilon", epsilon)
        epsilon = params["epsilon"] if epsilon is None else epsilon
        if params["epsilon"] != epsilon:
            raise VrlibError(f"--epsilon {epsilon} differs from the generator's epsilon {params['epsilon']}")
    if n_games < 16 or n_targets < 1:
        raise VrlibError(f"the game needs n_games >= 16 and n_targets >= 1 (got {n_games}, {n_targets})")
    missing = [c for c in schema.continuous if schema.domain(c) is None]
    if generator in ("privbayes", "baynet") and missing:
        # bins from the holdout, never from the training records, so that PrivBayes stays ε-DP in every world
        schema = schema.with_domains(quantile_domain(holdout, missing))
    vk = np.asarray(vulnerability, float)
    rng = np.random.default_rng(derive_seed(seed, "audit game"))
    top = list(np.lexsort((np.arange(len(vk)), -vk))[:n_targets])
    rest = np.setdiff1d(np.arange(len(train)), top)
    controls = list(rng.choice(rest, size=min(n_targets, len(rest)), replace=False))
    targets = top + controls
    n_d = len(train) if n_records is None else min(n_records, len(train))
    if n_d < len(targets) + 2:
        raise VrlibError(f"n_records={n_d} is too small for {len(targets)} targets")
    others = rng.permutation(np.setdiff1d(np.arange(len(train)), targets))[: n_d - len(targets)]
    d_rows = np.sort(np.r_[targets, others]).astype(np.int64)
    reference_row = int(rng.integers(len(holdout)))
    table = pd.concat([train.iloc[d_rows], holdout.iloc[[reference_row]]], ignore_index=True)
    ref_pos = len(d_rows)
    position = {int(r): i for i, r in enumerate(d_rows)}
    n_synth = n_synth or n_d
    n_in, n_out = n_games // 2, n_games - n_games // 2
    jobs = [
        SynthesisJob(
            table,
            schema,
            generator,
            n_synth,
            derive_seed(seed, "game in fit", k),
            derive_seed(seed, "game in sample", k),
            rows=np.arange(n_d),
            params=params or None,
        )
        for k in range(n_in)
    ]
    for t in targets:
        rows = np.r_[np.delete(np.arange(n_d), position[int(t)]), ref_pos]
        jobs += [
            SynthesisJob(
                table,
                schema,
                generator,
                n_synth,
                derive_seed(seed, "game out fit", int(t), k),
                derive_seed(seed, "game out sample", int(t), k),
                rows=rows,
                params=params or None,
            )
            for k in range(n_out)
        ]
    frames = synthesize_tables(jobs, cache=cache, n_jobs=n_jobs, progress=False)
    encoder = TableEncoder(schema).fit(pd.concat([table, *frames[:1]], ignore_index=True))
    target_level = 1 - (1 - level) / len(targets)
    attack = make_attack("closeness", schema=schema, n_neighbors=n_neighbors, encoder=encoder)
    labels = np.r_[np.ones(n_in), np.zeros(n_out)]
    rows = []
    for j, t in enumerate(targets):
        datasets = frames[:n_in] + frames[n_in + j * n_out : n_in + (j + 1) * n_out]
        scores = attack.fit(datasets, labels, train.iloc[[int(t)]]).score(datasets)  # nothing learnt: no leak
        s_in, s_out = scores[:n_in], scores[n_in:]
        auc = delong_auc(labels, scores, level)
        rows.append(
            {
                "index": int(t),
                "group": "most vulnerable" if j < len(top) else "random control",
                "vk": float(vk[int(t)]),
                "auc": auc["auc"],
                "ci_low": auc["ci_low"],
                "ci_high": auc["ci_high"],
                "epsilon_lower": epsilon_lower_bound(s_in, s_out, target_level),
            }
        )
    per = pd.DataFrame(rows)
    groups = (
        per.groupby("group", sort=False)
        .agg(n=("auc", "size"), mean_auc=("auc", "mean"), max_epsilon_lower=("epsilon_lower", "max"))
        .reset_index()
    )
    eps_low = float(per["epsilon_lower"].max())
    respected = None if epsilon is None else bool(eps_low <= epsilon)
    sentence = (
        f"Model-seeded game with {generator} on D = {n_d} training records, {n_games} games per target: "
        f"mean AUC {groups['mean_auc'].iloc[0]:.3f} for the {len(top)} most vulnerable records"
        + (f", {groups['mean_auc'].iloc[1]:.3f} for {len(controls)} random controls" if len(groups) > 1 else "")
        + f"; empirical ε lower bound {eps_low:.3f} (holds with probability {level:.0%})"
        + ("" if epsilon is None else f", declared ε = {epsilon:g}")
        + "."
    )
    return {
        "generator": generator,
        "generator_params": params,
        "epsilon": epsilon,
        "epsilon_lower": eps_low,
        "epsilon_respected": respected,
        "n_records": n_d,
        "n_synth": n_synth,
        "n_games": n_games,
        "level": level,
        "targets": rows,
        "groups": groups.to_dict(orient="records"),
        "sentence": sentence,
    }
