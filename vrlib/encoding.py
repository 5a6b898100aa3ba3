"""Tables as numbers: one-hot categorical blocks, min-max scaled continuous blocks, integer codes.

:class:`TableEncoder` learns the category sets and the min / max of a table and turns
any table of the same schema into dense float arrays (achilles §2: one-hot, then
min-max to [0, 1] with the min and max of the dataset the score is computed on).
:func:`category_codes` gives the integer codes that the generators and the counting
queries work on.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from vrlib.data import Schema
from vrlib.errors import VrlibError


@dataclass(frozen=True)
class EncodedTable:
    """A table as two dense blocks: ``onehot`` (n, sum of category counts) and ``continuous`` (n, F_cont)."""

    onehot: np.ndarray
    continuous: np.ndarray
    n_categorical: int  # F_cat: number of categorical attributes (not one-hot columns)

    @property
    def n_continuous(self) -> int:
        return self.continuous.shape[1]

    def __len__(self) -> int:
        return self.onehot.shape[0]


def category_codes(df: pd.DataFrame, columns) -> np.ndarray:
    """Integer codes (n, len(columns)) of categorical columns, in their dtype's category order."""
    columns = list(columns)
    out = np.empty((len(df), len(columns)), dtype=np.int64)
    for j, c in enumerate(columns):
        col = df[c]
        if not isinstance(col.dtype, pd.CategoricalDtype):
            raise VrlibError(f"column {c!r} is not categorical; pass the table through vrlib.data.prepare first")
        out[:, j] = col.array.codes
    if (out < 0).any():
        raise VrlibError("categorical columns contain missing values or values outside their category set")
    return out


class TableEncoder:
    """One-hot + min-max encoder (scikit-learn style: ``fit`` returns self).

    Parameters
    ----------
    schema : Schema
    dtype : numpy dtype
        Of the output arrays.
    """

    def __init__(self, schema: Schema, dtype=np.float64):
        self.schema = schema
        self.dtype = dtype

    def fit(self, df: pd.DataFrame) -> "TableEncoder":
        """Learn the category sets and each continuous column's min and max.

        A constant continuous column is scaled to 0 everywhere, with a warning.
        """
        self.categories_ = [df[c].cat.categories for c in self.schema.categorical]
        cont = df[list(self.schema.continuous)].to_numpy(dtype=np.float64)
        self.min_ = cont.min(axis=0) if len(cont) else np.zeros(0)
        self.max_ = cont.max(axis=0) if len(cont) else np.zeros(0)
        span = self.max_ - self.min_
        constant = [c for c, s in zip(self.schema.continuous, span) if s == 0]
        if constant:
            warnings.warn(
                f"continuous column(s) {constant} are constant: they are scaled to 0 and carry no information",
                UserWarning,
                stacklevel=2,
            )
        self.scale_ = np.where(span > 0, span, 1.0)  # constant columns: (x - min) / 1 = 0
        return self

    def transform(self, df: pd.DataFrame) -> EncodedTable:
        """Encode ``df`` with what :meth:`fit` learned (values outside the fitted range are not clipped)."""
        if not hasattr(self, "categories_"):
            raise VrlibError("TableEncoder is not fitted: call fit(df) first")
        n = len(df)
        widths = [len(c) for c in self.categories_]
        onehot = np.zeros((n, sum(widths)), dtype=self.dtype)
        offset = 0
        rows = np.arange(n)
        for c, cats, w in zip(self.schema.categorical, self.categories_, widths):
            codes = pd.Categorical(df[c], categories=cats).codes
            if (codes < 0).any():
                raise VrlibError(f"column {c!r} has values unseen when the encoder was fitted")
            onehot[rows, offset + codes] = 1
            offset += w
        cont = df[list(self.schema.continuous)].to_numpy(dtype=np.float64)
        cont = ((cont - self.min_) / self.scale_).astype(self.dtype, copy=False)
        return EncodedTable(onehot, cont, len(self.schema.categorical))

    def fit_transform(self, df: pd.DataFrame) -> EncodedTable:
        return self.fit(df).transform(df)
