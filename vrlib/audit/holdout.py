"""Is the holdout from the training data's population?  A two-sample classifier test, before the holdout is trusted.

Every figure of the audit compares training records with holdout records: if the two
differ as populations (a holdout of women only, another year, another region), the
training records look "remembered" by the release because the release resembles
*their* population, and the audit would present a distribution shift as a leak.

The test: a gradient-boosted classifier learns to tell training records (1) from
holdout records (0) on a balanced, seeded subsample; its cross-validated scores give an
AUC with DeLong's interval (:func:`vrlib.uncertainty.delong_auc`).  Without a shift the AUC
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


def holdout_check(
    train: pd.DataFrame,
    holdout: pd.DataFrame,
    schema: Schema,
    seed: int = 0,
    level: float = 0.95,
    max_rows: int = 2500,
    folds: int = 5,
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
        Cross-validation folds.

    Returns
    -------
    dict
        ``auc``, ``ci_low``, ``ci_high``, ``n_each`` and ``shift`` (bool).
    """
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(derive_seed(seed, "audit holdout check"))
    n = min(len(train), len(holdout), max_rows)
    parts = [df.iloc[np.sort(rng.permutation(len(df))[:n])] for df in (train, holdout)]
    cont = parts[0][list(schema.continuous)].to_numpy(np.float64)
    mean = cont.mean(axis=0) if cont.shape[1] else np.zeros(0)
    std = cont.std(axis=0) if cont.shape[1] else np.ones(0)
    std = np.where(std > 0, std, 1.0)
    X = np.vstack([density_view(p, schema, mean, std) for p in parts])
    y = np.r_[np.ones(n), np.zeros(n)]
    model = HistGradientBoostingClassifier(max_iter=50, random_state=derive_seed(seed, "audit holdout model") % 2**31)
    split = StratifiedKFold(folds, shuffle=True, random_state=derive_seed(seed, "audit holdout folds") % 2**31)
    with threadpool_limits(1):  # OpenMP threads spin when the cores are shared: one is faster here
        scores = cross_val_predict(model, X, y, cv=split, method="predict_proba")[:, 1]
    auc = delong_auc(y, scores, level)
    shift = bool(auc["ci_low"] > 0.5 and auc["auc"] >= SHIFT_AUC)
    return {"auc": auc["auc"], "ci_low": auc["ci_low"], "ci_high": auc["ci_high"], "n_each": n, "shift": shift}
