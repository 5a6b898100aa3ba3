"""Tables as numbers: one-hot categorical blocks, min-max scaled continuous blocks, integer codes.

:class:`TableEncoder` learns the category sets and the min / max of a table and turns
any table of the same schema into dense float arrays (achilles §2: one-hot, then
min-max to [0, 1] with the min and max of the dataset the score is computed on).
:func:`category_codes` gives the integer codes that the generators and the counting
queries work on.

:func:`encode_table` stores a table compactly, as the cache and the synthetic datasets
hold it: categorical columns as small unsigned integer codes into given category sets,
continuous columns as float64; :func:`decode_table` rebuilds the DataFrame with those
categories, and :func:`encode_values` makes the same arrays from columns as arrays.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
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
            # pandas stores codes as int8 for up to 127 categories: widen before adding the offset
            codes = pd.Categorical(df[c], categories=cats).codes.astype(np.int64)
            if (codes < 0).any():
                raise VrlibError(f"column {c!r} has values unseen when the encoder was fitted")
            onehot[rows, offset + codes] = 1
            offset += w
        cont = df[list(self.schema.continuous)].to_numpy(dtype=np.float64)
        cont = ((cont - self.min_) / self.scale_).astype(self.dtype, copy=False)
        return EncodedTable(onehot, cont, len(self.schema.categorical))

    def fit_transform(self, df: pd.DataFrame) -> EncodedTable:
        return self.fit(df).transform(df)


# --------------------------------------------------------------------------- tables as codes


def code_dtype(n_categories: int):
    """The smallest unsigned integer dtype that holds codes of ``n_categories`` categories."""
    return np.uint8 if n_categories <= 256 else np.uint16 if n_categories <= 65536 else np.uint32


def encode_table(df: pd.DataFrame, schema: Schema, categories: Mapping | None = None) -> dict[str, np.ndarray]:
    """A table as ``{"codes": (n, F_cat) unsigned ints, "continuous": (n, F_cont) float64}``.

    Parameters
    ----------
    df : DataFrame
    schema : Schema
    categories : mapping column -> categories, optional
        The category sets the codes refer to (e.g. those of the real data the
        table was synthesised from); default the columns' own.

    Raises
    ------
    VrlibError
        When a categorical value is not in its category set.
    """
    cats = _categories(df, schema, categories)
    width = max((len(cats[c]) for c in schema.categorical), default=1)
    codes = np.empty((len(df), len(schema.categorical)), dtype=code_dtype(width))
    for j, c in enumerate(schema.categorical):
        col = df[c].array
        if isinstance(col, pd.Categorical) and _same_categories(col.categories, cats[c]):
            code = col.codes
        else:  # recode by value against the reference categories
            code = pd.Categorical(col, categories=cats[c]).codes
        if (code < 0).any():
            bad = pd.unique(np.asarray(col, dtype=object)[code < 0])[:5]
            raise VrlibError(
                f"column {c!r} has value(s) {list(bad)} outside its category set (or missing); "
                "a generator must only produce values of its training data's categories"
            )
        codes[:, j] = code
    continuous = np.ascontiguousarray(df[list(schema.continuous)].to_numpy(dtype=np.float64))
    return {"codes": codes, "continuous": continuous.reshape(len(df), len(schema.continuous))}


def encode_values(
    values: Mapping[str, np.ndarray], own: Mapping, schema: Schema, categories: Mapping | None = None
) -> dict[str, np.ndarray]:
    """What :func:`encode_table` makes of a table, from its columns as arrays (no DataFrame built).

    Parameters
    ----------
    values : mapping column -> 1-D array
        Integer codes into ``own[c]`` for categorical columns, numbers for continuous ones.
    own : mapping column -> categories
        The category set each categorical column's codes refer to.
    schema : Schema
    categories : mapping column -> categories, optional
        The category sets of the result's codes (default ``own``).

    Raises
    ------
    VrlibError
        When a code is missing (negative) or its value is not in the result's category set.
    """
    cats = own if categories is None else _categories(None, schema, categories)
    width = max((len(cats[c]) for c in schema.categorical), default=1)
    n = len(values[schema.columns[0]]) if schema.columns else 0
    codes = np.empty((n, len(schema.categorical)), dtype=code_dtype(width))
    for j, c in enumerate(schema.categorical):
        code = np.asarray(values[c], dtype=np.int64)
        mine = own[c]
        if (code < 0).any() or (code >= len(mine)).any():
            raise VrlibError(
                f"column {c!r} has missing or out-of-range codes; a generator must only produce "
                "values of its training data's categories"
            )
        if not _same_categories(mine, cats[c]):  # recode against the reference
            code = pd.Index(cats[c]).get_indexer(mine)[code]
            if (code < 0).any():
                bad = pd.unique(np.asarray(pd.Index(mine), dtype=object)[np.asarray(values[c])[code < 0]])[:5]
                raise VrlibError(
                    f"column {c!r} has value(s) {list(bad)} outside its category set (or missing); "
                    "a generator must only produce values of its training data's categories"
                )
        codes[:, j] = code
    continuous = np.empty((n, len(schema.continuous)), dtype=np.float64)
    for j, c in enumerate(schema.continuous):
        continuous[:, j] = values[c]
    return {"codes": codes, "continuous": continuous}


def _same_categories(a, b) -> bool:
    """Whether two category sets are equal (the same object, or equal values in the same order)."""
    if a is b:
        return True
    a = a if isinstance(a, pd.Index) else pd.Index(a)
    return len(a) == len(b) and a.equals(b if isinstance(b, pd.Index) else pd.Index(b))


def decode_table(codes, continuous, schema: Schema, categories: Mapping, columns=None, index=None) -> pd.DataFrame:
    """Rebuild the DataFrame that :func:`encode_table` encoded.

    Parameters
    ----------
    codes, continuous : ndarray
        As returned by :func:`encode_table`.
    schema : Schema
    categories : mapping column -> categories
        The category sets the codes refer to.
    columns : sequence of str, optional
        Column order of the result (default ``schema.columns``).
    index : array-like, optional
        Index of the result (default a RangeIndex).
    """
    codes = np.asarray(codes)
    continuous = np.asarray(continuous, dtype=np.float64)
    if codes.shape[1:] != (len(schema.categorical),) or continuous.shape[1:] != (len(schema.continuous),):
        raise VrlibError(
            f"arrays of shape {codes.shape} / {continuous.shape} do not fit the schema "
            f"({len(schema.categorical)} categorical, {len(schema.continuous)} continuous columns)"
        )
    out = {}
    for j, c in enumerate(schema.categorical):
        out[c] = pd.Categorical.from_codes(codes[:, j].astype(np.int64), dtype=pd.CategoricalDtype(categories[c]))
    for j, c in enumerate(schema.continuous):
        out[c] = continuous[:, j]
    df = pd.DataFrame(out, index=index)
    return df[list(columns)] if columns is not None else df[list(schema.columns)]


def _categories(df, schema, categories):
    if categories is None:
        cats = {}
        for c in schema.categorical:
            if not isinstance(df[c].dtype, pd.CategoricalDtype):
                raise VrlibError(f"column {c!r} is not categorical; pass the table through vrlib.data.prepare first")
            cats[c] = df[c].cat.categories
        return cats
    missing = [c for c in schema.categorical if c not in categories]
    if missing:
        raise VrlibError(f"no category set given for column(s) {missing}")
    return {
        c: categories[c] if isinstance(categories[c], pd.Index) else pd.Index(categories[c]) for c in schema.categorical
    }
