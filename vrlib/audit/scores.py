"""Membership scores of records from the release alone (no access to the generator).

Each score is higher for a record the release "remembers" more.  All of them are
computed alike for the training records (candidates) and for the null half of the
holdout (known non-members), so that their p-values (:mod:`vrlib.audit.pvalues`)
compare like with like.  The *reference* half of the holdout is the attacker's
sample of the population; no scored record is in it.

========== ================== ================================================================
score      attack             of a record x
========== ================== ================================================================
copies     ``copies``         how many records of the release are equal to x (verbatim copies,
                              "collisions")
distance   ``distance_ratio`` ``log((d_ref(x) + δ) / (d_syn(x) + δ))``: distance to the nearest
                              reference record over distance to the nearest released record
                              (achilles eq. 6, Minkowski p = 2, on one-hot and min-max scaled
                              columns); δ is 1e-3 of the null records' median reference distance
domias     ``domias_kde``     DOMIAS: ``log p_G(x) - log p_R(x)``, Gaussian KDEs fitted on the
                              release and on the reference half, in the view of :func:`density_view`
logan      ``logan_d1``       LOGAN D1: logit of an MLP trained to tell released records (1) from
                              reference records (0), in the same view
========== ================== ================================================================

The attacks are those of :mod:`vrlib.attacks.registry` (:data:`REGISTRY_NAMES`); this
module only prepares what they read and scores both sets alike.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.attacks.registry import make_attack
from vrlib.data import Schema
from vrlib.encoding import TableEncoder
from vrlib.errors import VrlibError
from vrlib.parallel import derive_seed

__all__ = ["ATTACKS", "REGISTRY_NAMES", "density_view", "membership_scores"]

# the audit's score -> the attack of vrlib.attacks.registry that computes it
REGISTRY_NAMES = {"copies": "copies", "distance": "distance_ratio", "domias": "domias_kde", "logan": "logan_d1"}
ATTACKS = tuple(REGISTRY_NAMES)


def density_view(
    df: pd.DataFrame, schema: Schema, mean: np.ndarray, std: np.ndarray, jitter: float = 0.0, seed: int = 0
) -> np.ndarray:
    """The attacks' numeric view of a table: standardised continuous columns, then one-hot blocks.

    Parameters
    ----------
    df : DataFrame
        Categorical columns with the training data's categories.
    schema : Schema
    mean, std : ndarray
        Of the continuous columns (the same for every table, so all are encoded alike).
    jitter : float
        Standard deviation of Gaussian noise added to the one-hot columns (a kernel
        density on 0/1 columns has a singular covariance; 0 = none).
    seed : int
        Seeds the jitter.

    Returns
    -------
    ndarray of shape (len(df), F_cont + one-hot width)
    """
    cont = (df[list(schema.continuous)].to_numpy(np.float64) - mean) / std
    blocks = [cont]
    for c in schema.categorical:
        codes = df[c].cat.codes.to_numpy()
        onehot = np.zeros((len(df), len(df[c].cat.categories)))
        onehot[np.arange(len(df)), codes] = 1.0
        blocks.append(onehot)
    X = np.hstack(blocks)
    if jitter > 0:
        X[:, cont.shape[1] :] += np.random.default_rng(seed).normal(
            scale=jitter, size=(len(X), X.shape[1] - cont.shape[1])
        )
    return X


def membership_scores(
    train: pd.DataFrame,
    null: pd.DataFrame,
    synthetic: pd.DataFrame,
    reference: pd.DataFrame,
    schema: Schema,
    seed: int = 0,
    attacks=ATTACKS,
    max_density_rows: int = 10_000,
    jitter: float = 0.1,
    logan_epochs: int = 100,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every attack's score for the training records and for the null records.

    Parameters
    ----------
    train : DataFrame
        The candidate members (training records).
    null : DataFrame
        Known non-members scored alike (the null half of the holdout).
    synthetic : DataFrame
        The release.
    reference : DataFrame
        The attacker's population sample (the other half of the holdout).
    schema : Schema
    seed : int
        Seeds the subsamples, the jitter and the classifier.
    attacks : sequence of str
        A subset of :data:`ATTACKS`.
    max_density_rows : int
        The KDE of the release is fitted on at most this many released records (a seeded
        subsample): its cost grows with scored × fitted records.
    jitter : float
        One-hot jitter of the density view (see :func:`density_view`).
    logan_epochs : int
        Most epochs of the LOGAN D1 classifier.

    Returns
    -------
    train_scores, null_scores : DataFrame
        One column per attack, rows aligned with ``train`` and ``null``.
    """
    unknown = [a for a in attacks if a not in ATTACKS]
    if unknown or not len(attacks):
        raise VrlibError(f"unknown attack(s) {unknown}; choose among {list(ATTACKS)}")
    out_train, out_null = {}, {}
    if "copies" in attacks:
        model = make_attack("copies", schema=schema).fit(synthetic)
        out_train["copies"], out_null["copies"] = model.score(train), model.score(null)
    if "distance" in attacks:
        # one scaling for every table; δ from the known non-members, then the same δ for the candidates
        encoder = TableEncoder(schema).fit(pd.concat([train, null, synthetic, reference], ignore_index=True))
        model = make_attack("distance_ratio", schema=schema, encoder=encoder).fit(synthetic, reference)
        out_null["distance"] = model.score(null)
        out_train["distance"] = model.set_params(delta=model.delta_).score(train)
    if "domias" in attacks or "logan" in attacks:
        cont = reference[list(schema.continuous)].to_numpy(np.float64)
        mean = cont.mean(axis=0) if cont.shape[1] else np.zeros(0)
        std = cont.std(axis=0) if cont.shape[1] else np.ones(0)
        std = np.where(std > 0, std, 1.0)
        views = {
            name: density_view(df, schema, mean, std)
            for name, df in (("train", train), ("null", null), ("synthetic", synthetic), ("reference", reference))
        }
    if "domias" in attacks:
        rng = np.random.default_rng(derive_seed(seed, "audit density rows"))
        rows = np.sort(rng.permutation(len(synthetic))[:max_density_rows])
        jittered = {
            name: density_view(df, schema, mean, std, jitter, derive_seed(seed, "audit jitter", name))
            for name, df in (("synthetic", synthetic.iloc[rows]), ("reference", reference))
        }
        model = make_attack("domias_kde", seed=seed).fit(jittered["synthetic"], jittered["reference"])
        out_train["domias"] = model.score(views["train"])
        out_null["domias"] = model.score(views["null"])
    if "logan" in attacks:
        model = make_attack("logan_d1", epochs=logan_epochs, seed=derive_seed(seed, "audit logan"))
        model = model.fit(views["synthetic"], views["reference"])
        out_train["logan"] = model.score(views["train"])
        out_null["logan"] = model.score(views["null"])
    order = [a for a in ATTACKS if a in attacks]
    return (pd.DataFrame(out_train, index=train.index)[order], pd.DataFrame(out_null, index=null.index)[order])
