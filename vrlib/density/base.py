"""What every density estimator of :mod:`vrlib.density` shares: its input check and the not-fitted error."""

from __future__ import annotations

import math

import numpy as np

from vrlib.errors import VrlibError

__all__ = ["check_matrix"]

LOG_2PI = math.log(2 * math.pi)


def check_matrix(X, name: str = "X", n_features: int | None = None, min_rows: int = 1) -> np.ndarray:
    """``X`` as a C-contiguous float64 matrix (n, d), or a :class:`VrlibError` saying what is wrong.

    Parameters
    ----------
    X : array-like or DataFrame
        Numeric; a 1-D array is one column.
    name : str
        How the error messages call ``X``.
    n_features : int, optional
        Required number of columns.
    min_rows : int
        Required number of rows.
    """
    if hasattr(X, "dtypes") and hasattr(X, "columns"):  # a DataFrame: every column numeric
        import pandas as pd

        bad = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c]) or pd.api.types.is_bool_dtype(X[c])]
        if bad:
            raise VrlibError(
                f"{name} has non-numeric column(s) {bad}; encode categorical columns as numbers first "
                "(e.g. one-hot plus a small jitter)"
            )
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise VrlibError(f"{name} must be numeric; could not convert it to floats ({exc})") from None
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise VrlibError(f"{name} must be a 2-D table (rows × columns), got an array of shape {arr.shape}")
    if arr.shape[0] < min_rows:
        raise VrlibError(f"{name} has {arr.shape[0]} row(s); at least {min_rows} needed")
    if arr.shape[1] == 0:
        raise VrlibError(f"{name} has no columns")
    if n_features is not None and arr.shape[1] != n_features:
        raise VrlibError(f"{name} has {arr.shape[1]} column(s) but the estimator was fitted on {n_features}")
    if not np.isfinite(arr).all():
        rows = np.flatnonzero(~np.isfinite(arr).all(axis=1))
        raise VrlibError(
            f"{name} contains NaN or infinite values (in {len(rows)} row(s), first at row {rows[0]}); "
            "drop or impute them first"
        )
    return np.ascontiguousarray(arr)


def _not_fitted(obj, attr: str) -> None:
    if not hasattr(obj, attr):
        raise VrlibError(f"{type(obj).__name__} is not fitted: call fit(X) first")
