"""Releases of Adult to audit (notebook 08 and ``benchmarks/bench_audit.py``): a custodian's split and generator.

:func:`adult_release` plays the custodian: a seeded split of Adult's complete records
into training records and a holdout, one generator fitted on the training records and
a release sampled from it (through :func:`vrlib.synthesis.synthesize`, so the release is
cached).  :func:`planted_release` and :func:`null_release` build the two releases the
audit's calibration is checked on: one that leaks chosen training records into a
release made from other data, and one made from data disjoint from the training records.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.data import load
from vrlib.errors import VrlibError
from vrlib.parallel import derive_seed
from vrlib.synthesis import SynthesisJob, synthesize_tables

__all__ = ["PROFILES", "adult_release", "null_release", "planted_release", "split_rows"]

# Sizes per profile: training records, holdout records, released records, releases audited
PROFILES = {
    "smoke": {"n_train": 2000, "n_holdout": 1000, "n_synth": 2000,
              "generators": [("synthpop", None)]},
    "quick": {"n_train": 30000, "n_holdout": 15000, "n_synth": 30000,
              "generators": [("synthpop", None), ("baynet", None), ("privbayes", {"epsilon": 1.0}),
                             ("privbayes", {"epsilon": 10.0})]},
    "paper": {"n_train": 30000, "n_holdout": 15000, "n_synth": 30000,
              "generators": [("synthpop", None), ("baynet", None), ("privbayes", {"epsilon": 1.0}),
                             ("privbayes", {"epsilon": 10.0}), ("tvae", None)]},
}  # fmt: skip


def split_rows(n_rows: int, sizes, seed: int) -> list[np.ndarray]:
    """Disjoint seeded random positions: one sorted array per requested size."""
    if sum(sizes) > n_rows:
        raise VrlibError(f"the parts ({list(sizes)}) need {sum(sizes)} records; the data has {n_rows}")
    order = np.random.default_rng(derive_seed(seed, "audit split")).permutation(n_rows)
    bounds = np.cumsum([0, *sizes])
    return [np.sort(order[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def _release(df, schema, rows, generator, params, n_synth, seed, cache, progress) -> pd.DataFrame:
    job = SynthesisJob(df, schema, generator, n_synth, fit_seed=seed, sample_seed=seed + 1, rows=rows, params=params)
    (table,) = synthesize_tables([job], cache=cache, n_jobs=1, progress=progress)
    return table


def adult_release(
    generator: str = "synthpop",
    params: dict | None = None,
    n_train: int = 30000,
    n_holdout: int = 15000,
    n_synth: int = 30000,
    seed: int = 0,
    cache: bool = True,
    progress: bool = False,
):
    """A custodian's Adult release: ``(train, synthetic, holdout, schema)``.

    Parameters
    ----------
    generator : str
        A name of :func:`vrlib.generators.get_generator` (e.g. ``"synthpop"``, ``"privbayes"``).
    params : dict, optional
        Its parameters (e.g. ``{"epsilon": 1.0}``).
    n_train, n_holdout, n_synth : int
        Training records, holdout records (disjoint from them) and released records.
    seed : int
        Seeds the split and the generator.
    cache : bool
        Keep the release in vrlib's cache.
    progress : bool

    Returns
    -------
    train, synthetic, holdout : DataFrame
        The holdout less the records with a categorical value absent from ``train``
        (:func:`_seen_in`; at most a handful).
    schema : Schema
    """
    df, schema = load("adult")
    train_rows, hold_rows = split_rows(len(df), (n_train, n_holdout), seed)
    synthetic = _release(df, schema, train_rows, generator, params, n_synth, seed, cache, progress)
    train = df.iloc[train_rows].reset_index(drop=True)
    return train, synthetic, _seen_in(df.iloc[hold_rows], train, schema), schema


def _seen_in(holdout: pd.DataFrame, train: pd.DataFrame, schema) -> pd.DataFrame:
    """The holdout without the records whose categorical values the training records never have.

    A custodian's files hold only observed values, and the audit refuses a holdout value
    unseen in training (a rare category such as one native country may fall in the
    holdout only); the few such records are dropped, as a custodian would.
    """
    keep = np.ones(len(holdout), dtype=bool)
    for c in schema.categorical:
        keep &= holdout[c].isin(train[c].unique()).to_numpy()
    return holdout[keep].reset_index(drop=True)


def null_release(
    generator: str = "synthpop",
    n_train: int = 10000,
    n_holdout: int = 10000,
    n_synth: int = 10000,
    seed: int = 0,
    cache: bool = True,
):
    """A release of Adult made from records disjoint from both the training records and the holdout.

    Returns ``(train, synthetic, holdout, schema)``; every training record is a non-member
    of the generator's data, so an audit should find nothing.
    """
    df, schema = load("adult")
    n_other = len(df) - n_train - n_holdout
    train_rows, hold_rows, other_rows = split_rows(len(df), (n_train, n_holdout, n_other), seed)
    synthetic = _release(df, schema, other_rows, generator, None, n_synth, seed, cache, False)
    train = df.iloc[train_rows].reset_index(drop=True)
    return train, synthetic, _seen_in(df.iloc[hold_rows], train, schema), schema


def planted_release(
    train: pd.DataFrame, synthetic: pd.DataFrame, schema, n_planted: int = 50, seed: int = 0, perturb: float = 0.5
):
    """``synthetic`` with ``n_planted`` training records planted in it: which, and the leaking release.

    Half of the planted records are copied verbatim; the other half are perturbed: each
    continuous value moved by Gaussian noise of ``perturb`` % of its column's standard
    deviation (categorical values kept), so they are near, not equal.  The planted records
    replace released records at random positions (the release keeps its size).

    Returns
    -------
    planted : ndarray of int
        Positions of the planted records in ``train``.
    release : DataFrame
    """
    rng = np.random.default_rng(derive_seed(seed, "audit planted"))
    planted = np.sort(rng.permutation(len(train))[:n_planted])
    leak = train.iloc[planted].reset_index(drop=True).copy()
    perturbed = np.arange(len(leak)) % 2 == 1
    for c in schema.continuous:
        sd = float(train[c].std()) or 1.0
        leak.loc[perturbed, c] = leak.loc[perturbed, c] + rng.normal(
            scale=perturb / 100 * sd, size=int(perturbed.sum())
        )
    release = synthetic.copy()
    where = rng.permutation(len(release))[:n_planted]
    release.iloc[where] = leak.to_numpy()
    for c in schema.categorical:
        release[c] = pd.Categorical(release[c].astype(object), categories=synthetic[c].cat.categories)
    for c in schema.continuous:
        release[c] = release[c].astype(np.float64)
    return planted, release
