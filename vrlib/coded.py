"""An integer-coded table, built once and shared by every synthetic dataset trained on its rows.

A privacy game fits a generator on thousands of subsets of one table Ω (1,000 of its
records at a time, chosen by position).  Building a DataFrame for each subset, checking
its dtypes and pickling it to a worker costs about as much as fitting a small
generator.  :class:`CodedTable` holds Ω once as arrays (categorical columns as int64
codes into Ω's category sets, continuous columns as float64), so that a training set is
just an array of row positions, and :meth:`vrlib.generators.base.Generator.fit_coded`
fits on it directly.  The generators with a fast path (Synthpop, BayNet, PrivBayes)
read exactly the numbers they would have read from the DataFrame, so their fits, and
what they sample, are identical (``tests/test_coded.py`` checks this); any other
generator gets the DataFrame, rebuilt by :meth:`CodedTable.frame`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.encoding import code_dtype
from vrlib.data import Schema, prepare
from vrlib.errors import VrlibError

__all__ = ["CodedTable"]


class CodedTable:
    """A prepared table as one integer or float array per column.

    Parameters
    ----------
    df : DataFrame
        The table (checked and given canonical dtypes by :func:`vrlib.data.prepare`);
        no missing values.
    schema : Schema

    Attributes
    ----------
    schema : Schema
    columns : tuple of str
        The prepared table's column order.
    dtypes : dict
        Column -> dtype of the prepared table (a :class:`pandas.CategoricalDtype` for
        categorical columns, ``float64`` for continuous ones).
    categories : dict
        Column -> category Index of each categorical column.
    index : Index
        The table's index labels.
    fit_schema : Schema
        ``schema.subset(columns)``: the schema a generator fitted on this table holds.
    """

    def __init__(self, df: pd.DataFrame, schema: Schema):
        if not isinstance(schema, Schema):
            raise VrlibError(f"schema must be a vrlib.Schema, got {type(schema).__name__}")
        if not isinstance(df, pd.DataFrame):
            raise VrlibError(f"a CodedTable is built from a pandas DataFrame, got {type(df).__name__}")
        data = prepare(df, schema)  # raises on missing values, undeclared columns, an empty table
        self.schema = schema
        self.columns = tuple(data.columns)
        self.dtypes = data.dtypes.to_dict()
        self.categories = {c: self.dtypes[c].categories for c in schema.categorical}
        self.index = data.index
        self.fit_schema = schema.subset(list(self.columns))  # what a fit on this table calls its schema_
        # Codes stored in the smallest unsigned type that holds them (the table travels to every
        # worker with each batch of datasets), read back as int64.
        self._values = {}
        for c in self.columns:
            if c in schema.categorical:
                self._values[c] = np.ascontiguousarray(data[c].array.codes, dtype=code_dtype(len(self.categories[c])))
            else:
                self._values[c] = data[c].to_numpy(dtype=np.float64, copy=True)

    def __len__(self) -> int:
        return len(self.index)

    def __repr__(self) -> str:
        return f"CodedTable({len(self)} rows, {len(self.columns)} columns)"

    def check_rows(self, rows) -> np.ndarray:
        """``rows`` as an int64 array of positions, or a VrlibError naming what is wrong with it.

        ``None`` means every row.
        """
        if rows is None:
            return np.arange(len(self), dtype=np.int64)
        arr = np.asarray(rows)
        if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
            raise VrlibError(
                f"rows must be a 1-D array of integer positions (got dtype {arr.dtype}, shape {arr.shape})"
            )
        if arr.size == 0:
            raise VrlibError("rows is empty; a generator needs at least one training record")
        if arr.min() < 0 or arr.max() >= len(self):
            raise VrlibError(f"rows must be positions in [0, {len(self) - 1}] (got {arr.min()} to {arr.max()})")
        return arr.astype(np.int64, copy=False)

    def column(self, c: str, rows=None) -> np.ndarray:
        """Column ``c`` at ``rows`` (a new array): int64 codes into :attr:`categories` or float64 values.

        These are the numbers ``df[c].array.codes`` / ``df[c].to_numpy(float64)`` give
        on ``df = table.iloc[rows]`` of the prepared table.
        """
        if c not in self._values:
            raise VrlibError(f"unknown column {c!r}; the columns are {list(self.columns)}")
        values = self._values[c]
        values = values.copy() if rows is None else values[self.check_rows(rows)]
        return values.astype(np.int64, copy=False) if c in self.categories else values

    def take(self, c: str, rows: np.ndarray) -> np.ndarray:
        """:meth:`column` without the checks, for ``rows`` that :meth:`check_rows` has returned
        (a generator's fit reads every column at the same checked rows)."""
        values = self._values[c][rows]
        return values.astype(np.int64, copy=False) if c in self.categories else values

    def frame(self, rows=None) -> pd.DataFrame:
        """The rows as the DataFrame ``prepare(df, schema).iloc[rows]`` (dtypes, categories and index labels)."""
        rows = self.check_rows(rows)
        out = {}
        for c in self.columns:
            v = self._values[c][rows]
            out[c] = pd.Categorical.from_codes(v.astype(np.int64), dtype=self.dtypes[c]) if c in self.categories else v
        return pd.DataFrame(out, index=self.index[rows], columns=list(self.columns))
