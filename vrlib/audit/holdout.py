"""Is the holdout from the training data's population?  A two-sample classifier test, before the holdout is trusted.

Every figure of the audit compares training records with holdout records: if the two
differ as populations (a holdout of women only, another year, another region), the
training records look "remembered" by the release because the release resembles
*their* population, and the audit would present a distribution shift as a leak.

The test: a gradient-boosted classifier learns to tell training records (1) from
holdout records (0) on a balanced, seeded subsample, cross-fitted: fitted on one half
and scored on the other, then the other way round.  Each half's scores come from a model
that never saw them, so DeLong's interval (:func:`vrlib.uncertainty.delong_auc`) holds for
each half's AUC; the AUC is their mean and its standard error the mean of theirs (a bound
on the mean's, whatever their correlation).  Pooling the scores of k-fold
cross-validation instead gives intervals too narrow: its models share training records,
and on correctly split holdouts of 600 records the pooled AUC's spread was 1.4 times its
DeLong standard error, calling about one split in twenty shifted.  Without a shift the AUC
is 0.5 up to noise; the holdout is called *shifted* when the interval's lower end is
above 0.5 and the AUC is at least ``SHIFT_AUC`` (a shift too small to matter is not
called one).  Holdout rows equal to training rows (the population's own duplicates)
are kept: they carry no shift.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.audit.scores import density_view
from vrlib.data import Schema
from vrlib.parallel import derive_seed
from vrlib.uncertainty import delong_auc

__all__ = ["SHIFT_AUC", "holdout_check"]

SHIFT_AUC = 0.55
MAX_ONEHOT = 254  # categories of a column one-hot encoded for the classifier; beyond, one native categorical feature


def design(
    train: pd.DataFrame, holdout: pd.DataFrame, schema: Schema, seed: int = 0, max_rows: int = 2500
) -> tuple[np.ndarray, np.ndarray]:
    """The classifier's data: a seeded subsample of ``max_rows`` records of each table at most (the smaller
    table's size), encoded as the density attacks see records (continuous columns standardised on the
    training subsample), with labels 1 for training and 0 for holdout records.

    A categorical column with more than :data:`MAX_ONEHOT` categories (a postcode, an occupation code) is
    not one-hot encoded (thousands of columns, each seen a few times in the subsample, made the classifier
    ten times slower and taught it nothing): it is one column of codes, its :data:`MAX_ONEHOT` most frequent
    categories in the subsample and one code for all others, which the classifier treats as categorical
    (:func:`high_cardinality`).  Columns with fewer categories are encoded as before.
    """
    rng = np.random.default_rng(derive_seed(seed, "audit holdout check"))
    n = min(len(train), len(holdout), max_rows)
    parts = [df.iloc[np.sort(rng.permutation(len(df))[:n])] for df in (train, holdout)]
    cont = parts[0][list(schema.continuous)].to_numpy(np.float64)
    mean = cont.mean(axis=0) if cont.shape[1] else np.zeros(0)
    std = cont.std(axis=0) if cont.shape[1] else np.ones(0)
    std = np.where(std > 0, std, 1.0)
    wide = high_cardinality(train, schema)
    narrow = Schema([c for c in schema.categorical if c not in wide], list(schema.continuous))
    X = np.vstack([density_view(p[list(narrow.columns)], narrow, mean, std) for p in parts])
    if wide:
        pooled = pd.concat(parts, ignore_index=True)
        codes = []
        for c in wide:
            top = pooled[c].value_counts(sort=True).index[:MAX_ONEHOT]  # ties in the order of the categories
            lookup = pd.Series(np.arange(len(top), dtype=np.float64), index=top)
            codes.append(pooled[c].astype(object).map(lookup).fillna(float(len(top))).to_numpy(np.float64))
        X = np.column_stack([X, *codes])
    return X, np.r_[np.ones(n), np.zeros(n)]


def high_cardinality(train: pd.DataFrame, schema: Schema) -> list[str]:
    """The categorical columns with more than :data:`MAX_ONEHOT` categories: the last columns of :func:`design`."""
    return [c for c in schema.categorical if len(train[c].cat.categories) > MAX_ONEHOT]


def holdout_check(
    train: pd.DataFrame,
    holdout: pd.DataFrame,
    schema: Schema,
    seed: int = 0,
    level: float = 0.95,
    max_rows: int = 2500,
    folds: int = 2,
) -> dict:
    """Cross-validated AUC of a classifier telling training from holdout records, and whether that is a shift.

    Parameters
    ----------
    train, holdout : DataFrame
        With shared categories.
    schema : Schema
    seed : int
        Seeds the subsample, the folds and the classifier.
    level : float
        Coverage of the AUC's interval.
    max_rows : int
        Records drawn from each table (the smaller table's size at most).
    folds : int
        Cross-fitting folds (2: each half scored by a model fitted on the other).

    Returns
    -------
    dict
        ``auc``, ``ci_low``, ``ci_high``, ``n_each`` and ``shift`` (bool).
    """
    from scipy import stats
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import StratifiedKFold
    from threadpoolctl import threadpool_limits

    X, y = design(train, holdout, schema, seed, max_rows)
    n = len(y) // 2
    wide = len(high_cardinality(train, schema))
    # the high-cardinality columns' codes (the last ones) are categories, not numbers; without them, as before
    native = {"categorical_features": np.r_[np.zeros(X.shape[1] - wide, bool), np.ones(wide, bool)]} if wide else {}
    model = HistGradientBoostingClassifier(
        max_iter=50, random_state=derive_seed(seed, "audit holdout model") % 2**31, **native
    )
    split = StratifiedKFold(folds, shuffle=True, random_state=derive_seed(seed, "audit holdout folds") % 2**31)
    aucs, ses = [], []
    with threadpool_limits(1):  # OpenMP threads spin when the cores are shared: one is faster here
        for fit, score in split.split(X, y):
            scores = model.fit(X[fit], y[fit]).predict_proba(X[score])[:, 1]
            one = delong_auc(y[score], scores, level)
            aucs.append(one["auc"])
            ses.append(one["se"])
    auc, se = float(np.mean(aucs)), float(np.mean(ses))
    z = stats.norm.ppf(0.5 + level / 2)
    low, high = float(max(0.0, auc - z * se)), float(min(1.0, auc + z * se))
    shift = bool(low > 0.5 and auc >= SHIFT_AUC)
    return {"auc": auc, "ci_low": low, "ci_high": high, "se": se, "n_each": n, "shift": shift}
