"""Choosing target records: the vulnerability score V_k and the three baselines, behind one interface.

* ``distance`` (achilles): V_k(x) = mean distance to the k nearest *other* records
  (eq. 5 or eq. 6); the highest V_k are the most at risk.
* ``rare`` (Groundhog): records with a rare categorical value (relative frequency
  below ``rare_threshold``) or a continuous value above the 95th percentile; the
  targets are drawn at random among them.
* ``loglik`` (TAPAS): negative log-likelihood under independent empirical marginals,
  continuous columns cut into percentile bins; the least likely are the most at risk.
  The paper's sentence ("sample target records having the lowest log-likelihood",
  continuous columns "discretised according to percentiles") admits several readings,
  all offered as parameters: the number of percentile bins (``bins``), continuous
  columns used or not (``columns``), and the R lowest (default) or R sampled at random
  among the lowest fraction q of records (``sample_from=q``).
* ``random``: a uniform random order.

:func:`rank_records` orders every record from highest to lowest risk and gives each
method's own score; :func:`select_targets` takes the top of that order.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.data import Schema
from vrlib.distance import kneighbors
from vrlib.encoding import TableEncoder, category_codes
from vrlib.errors import VrlibError
from vrlib.params import check_integer, check_number

METHODS = ("random", "rare", "loglik", "distance")


def vulnerability_scores(
    df: pd.DataFrame,
    schema: Schema,
    k: int = 5,
    metric: str = "cosine",
    p: float | None = None,
    include_self: bool = False,
) -> pd.Series:
    """V_k of every record: the mean distance to its k nearest other records.

    Parameters
    ----------
    df : DataFrame
        The table (categorical columns categorical, continuous float64).
    schema : Schema
    k : int
        Number of neighbours; duplicates of a record count, at distance 0.
    metric : {"cosine", "minkowski"}
        Eq. 5 (generalised cosine) or eq. 6 (Minkowski of order ``p``).
    p : float, optional
        Minkowski order (p >= 1); required for ``metric="minkowski"``.
    include_self : bool
        Count the record's own zero distance among the k (the authors' code).

    Returns
    -------
    Series
        V_k indexed like ``df``.
    """
    encoded = TableEncoder(schema).fit_transform(df)
    distances, _ = kneighbors(encoded, k, metric=metric, p=p, include_self=include_self)
    return pd.Series(distances.mean(axis=1), index=df.index, name=f"V_{k}")


def rare_value_counts(
    df: pd.DataFrame, schema: Schema, rare_threshold: float = 0.05, percentile: float = 95.0
) -> pd.Series:
    """Number of rare values of every record (Groundhog's outlier rule).

    A categorical value is rare when its relative frequency in ``df`` is below
    ``rare_threshold``; a continuous value is rare when it is strictly above the
    ``percentile``-th percentile of its column.
    """
    counts = np.zeros(len(df), dtype=np.int64)
    for c in schema.categorical:
        freq = df[c].map(df[c].value_counts(normalize=True)).to_numpy(dtype=float)
        counts += freq < rare_threshold
    for c in schema.continuous:
        x = df[c].to_numpy()
        counts += x > np.percentile(x, percentile)
    return pd.Series(counts, index=df.index, name="rare_values")


def _percentile_bins(x: np.ndarray, bins: int) -> np.ndarray:
    """Bin codes for right-closed percentile bins (e_{i-1}, e_i]; repeated edges merge.

    Right-closed bins keep a value above a heavily repeated one (capital-gain above 0)
    out of that value's bin.
    """
    edges = np.unique(np.quantile(x, np.linspace(0, 1, bins + 1))[1:-1])
    return np.searchsorted(edges, x, side="left")


LOGLIK_COLUMNS = ("all", "categorical")


def negative_log_likelihood(df: pd.DataFrame, schema: Schema, bins: int = 10, columns: str = "all") -> pd.Series:
    """-Σ_f log p̂_f(x_f) under independent empirical marginals (TAPAS), continuous columns in percentile bins.

    Parameters
    ----------
    bins : int
        Percentile bins per continuous column (repeated edges merge, so a column with a
        heavy repeated value gets fewer).
    columns : {"all", "categorical"}
        ``categorical`` leaves the continuous columns out (TAPAS's own definition).
    """
    if columns not in LOGLIK_COLUMNS:
        raise VrlibError(f"columns must be one of {LOGLIK_COLUMNS} (got {columns!r})")
    check_integer("bins", bins, minimum=1)
    nll = np.zeros(len(df))
    columns = list(schema.categorical) + (list(schema.continuous) if columns == "all" else [])
    for c in columns:
        codes = category_codes(df, [c])[:, 0] if c in schema.categorical else _percentile_bins(df[c].to_numpy(), bins)
        freq = np.bincount(codes) / len(df)
        nll -= np.log(freq[codes])
    return pd.Series(nll, index=df.index, name="neg_log_likelihood")


def rank_records(df: pd.DataFrame, schema: Schema, method: str = "distance", seed: int = 0, **params) -> pd.Series:
    """Every record's score under ``method``, ordered from highest to lowest risk.

    Parameters
    ----------
    df : DataFrame
    schema : Schema
    method : {"random", "rare", "loglik", "distance"}
    seed : int
        For ``random`` and for the random order among ``rare`` records.
    **params
        ``distance``: ``k``, ``metric``, ``p``, ``include_self``;
        ``rare``: ``rare_threshold``, ``percentile``; ``loglik``: ``bins``, ``columns``
        (see :func:`negative_log_likelihood`) and ``sample_from``: None for the strict
        order (lowest likelihood first), or a fraction q in (0, 1]: the ``ceil(q n)``
        least likely records first, in random order, then the others by likelihood.

    Returns
    -------
    Series
        Indexed by the records' labels in risk order.  Its values are V_k
        (``distance``), the negative log-likelihood (``loglik``), the number of
        rare values (``rare``; records with at least one come first, in random
        order) or the uniform random key (``random``).  Ties keep table order.
    """
    if method not in METHODS:
        raise VrlibError(f"unknown method {method!r}; choose one of {METHODS}")
    allowed = {
        "random": set(),
        "rare": {"rare_threshold", "percentile"},
        "loglik": {"bins", "columns", "sample_from"},
        "distance": {"k", "metric", "p", "include_self"},
    }[method]
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise VrlibError(f"method {method!r} takes no parameter(s) {unknown}; it takes {sorted(allowed) or 'none'}")
    rng = np.random.default_rng(seed)
    if method == "distance":
        scores = vulnerability_scores(df, schema, **params)
        order = np.argsort(-scores.to_numpy(), kind="stable")
    elif method == "loglik":
        sample_from = params.pop("sample_from", None)
        scores = negative_log_likelihood(df, schema, **params)
        order = np.argsort(-scores.to_numpy(), kind="stable")
        if sample_from is not None:
            check_number("sample_from", sample_from, above=0, maximum=1, optional=True)
            m = int(np.ceil(sample_from * len(df)))
            order = np.concatenate([rng.permutation(order[:m]), order[m:]])
    elif method == "rare":
        scores = rare_value_counts(df, schema, **params)
        key = rng.random(len(df))
        # Rare records first, in random order; then the others, in random order.
        order = np.lexsort((key, scores.to_numpy() == 0))
    else:
        scores = pd.Series(rng.random(len(df)), index=df.index, name="random_key")
        order = np.argsort(-scores.to_numpy(), kind="stable")
    return scores.iloc[order]


def select_targets(
    df: pd.DataFrame, schema: Schema, method: str = "distance", n_targets: int = 10, seed: int = 0, **params
) -> list:
    """The ``n_targets`` records most at risk under ``method``, highest risk first (index labels).

    See :func:`rank_records` for the methods and their parameters.  For ``rare``,
    it is an error to ask for more targets than there are records with a rare value.
    """
    check_integer("n_targets", n_targets, minimum=1)
    if n_targets > len(df):
        raise VrlibError(f"asked for {n_targets} targets but the table has only {len(df)} records")
    ranked = rank_records(df, schema, method, seed=seed, **params)
    if method == "rare":
        eligible = int((ranked > 0).sum())
        if n_targets > eligible:
            raise VrlibError(
                f"only {eligible} records have a rare value; ask for at most {eligible} targets or raise rare_threshold"
            )
    return list(ranked.index[:n_targets])
