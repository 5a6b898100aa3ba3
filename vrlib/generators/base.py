"""What every generator shares: input checks, seeds, and turning sampled codes back into a table.

A generator works on numbers (integer codes for categorical columns, floats for
continuous ones); :class:`Generator` takes care of the table around them, so that
``sample`` always returns the input's columns in the input's order, categorical
columns with exactly the input's :class:`pandas.CategoricalDtype` and continuous
columns as ``float64``.
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from vrlib.data import Schema, prepare
from vrlib.encoding import encode_values
from vrlib.errors import VrlibError
from vrlib.params import check_integer


def check_seed(seed, what: str = "seed"):
    """Return ``seed`` if it is ``None`` or a non-negative int, else raise :class:`VrlibError`."""
    return check_integer(what, seed, minimum=0, optional=True, want="a non-negative int or None")


def make_rng(seed, what: str = "seed") -> np.random.Generator:
    """``np.random.default_rng(seed)`` after checking ``seed``."""
    return np.random.default_rng(check_seed(seed, what))


def check_count(n, what: str = "n") -> int:
    """Return ``n`` as an int if it is a non-negative integer, else raise :class:`VrlibError`."""
    return check_integer(what, n, minimum=0, want="a non-negative int (number of rows)")


def _canonical_dtypes(df: pd.DataFrame, schema: Schema) -> dict | None:
    """The column dtypes of ``df`` if it already is what :func:`vrlib.data.prepare` returns
    (then it need not be copied), else None.

    Generators are fitted thousands of times on tables that are canonical already;
    this check costs a fraction of ``prepare``'s copy.
    """
    if len(df) == 0 or len(df.columns) != len(schema.columns) or set(df.columns) != set(schema.columns):
        return None
    dtypes = df.dtypes.to_dict()  # one pass: column by column, pandas would build a Series per column
    if not all(isinstance(dtypes[c], pd.CategoricalDtype) for c in schema.categorical):
        return None
    if not all(dtypes[c] == np.float64 for c in schema.continuous):
        return None
    if df.isna().to_numpy().any():  # a missing category (code -1) or a NaN
        return None
    return dtypes


class Generator:
    """Base class: ``fit(df, schema, seed) -> self``, ``sample(n, seed) -> DataFrame``.

    Subclasses implement ``_fit(df, rng)`` (``df`` already checked by
    :func:`vrlib.data.prepare`) and ``_sample(n, rng)``, which returns a dict
    mapping every column to a 1-D array: integer codes for categorical columns,
    floats for continuous ones.  Fitted attributes end with ``_``.
    """

    def fit(self, df: pd.DataFrame, schema: Schema, seed: int | None = None) -> "Generator":
        """Fit the generator on ``df``.

        Parameters
        ----------
        df : DataFrame
            The training table; every column is declared in ``schema``.
        schema : Schema
        seed : int or None
            Seed of the fit's randomness (same seed, same fitted model).

        Returns
        -------
        self
        """
        if not isinstance(schema, Schema):
            raise VrlibError(f"schema must be a vrlib.Schema, got {type(schema).__name__}")
        if not isinstance(df, pd.DataFrame):
            raise VrlibError(f"the training table must be a pandas DataFrame, got {type(df).__name__}")
        rng = make_rng(seed)
        self._check_params()
        self.fitted_ = False  # a failed refit leaves no half-fitted generator behind
        dtypes = _canonical_dtypes(df, schema)
        if dtypes is None:
            df = prepare(df, schema)
            dtypes = df.dtypes.to_dict()
        self.columns_ = list(df.columns)
        self.dtypes_ = dtypes
        self.schema_ = schema.subset(self.columns_)
        self.n_train_ = len(df)
        self._fit(df, rng)
        self.fitted_ = True
        return self

    def fit_coded(self, table, rows=None, seed: int | None = None) -> "Generator":
        """Fit on rows of a :class:`vrlib.coded.CodedTable`: the same model as ``fit(table.frame(rows), ...)``.

        Generators with a fast path (``_fit_coded``: Synthpop, BayNet, PrivBayes) read the
        table's arrays directly, without building a DataFrame; the numbers they read
        are those ``fit`` reads from the DataFrame, so the fitted model, and every
        sample drawn from it, is the same.  Other generators are fitted on the
        rebuilt DataFrame.

        Parameters
        ----------
        table : CodedTable
            The coded table (e.g. Ω, built once per game).
        rows : array of int, optional
            Positions of the training records in ``table`` (default all of them).
        seed : int or None
            Seed of the fit's randomness, as for :meth:`fit`.

        Returns
        -------
        self
        """
        from vrlib.coded import CodedTable

        if not isinstance(table, CodedTable):
            raise VrlibError(f"fit_coded needs a vrlib.coded.CodedTable, got {type(table).__name__}")
        if not callable(getattr(self, "_fit_coded", None)):
            return self.fit(table.frame(rows), table.schema, seed)
        rows = table.check_rows(rows)
        rng = make_rng(seed)
        self._check_params()
        self.fitted_ = False
        self.columns_ = list(table.columns)
        self.dtypes_ = dict(table.dtypes)
        self.schema_ = table.fit_schema
        self.n_train_ = len(rows)
        self._fit_coded(table, rows, rng)
        self.fitted_ = True
        return self

    def sample(self, n: int, seed: int | None = None) -> pd.DataFrame:
        """Draw ``n`` synthetic records.

        Parameters
        ----------
        n : int
            Number of rows.
        seed : int or None
            Seed of the sampling randomness (same fitted model and seed, same rows).

        Returns
        -------
        DataFrame
            The training table's columns, in its order, with its dtypes and category sets.
        """
        if not getattr(self, "fitted_", False):
            raise VrlibError(f"{type(self).__name__} is not fitted: call fit(df, schema) before sample(n)")
        n = check_count(n)
        rng = make_rng(seed)
        values = self._sample(n, rng)
        return self._assemble(values, n)

    def sample_encoded(self, n: int, seed: int | None = None, schema: Schema | None = None, categories=None) -> dict:
        """``vrlib.encoding.encode_table(self.sample(n, seed), schema, categories)``, without the DataFrame.

        The same rows as :meth:`sample` (the same random draws), as ``{"codes",
        "continuous"}`` arrays; thousands of datasets per game skip building and
        taking apart a table each.

        Parameters
        ----------
        n : int
        seed : int or None
        schema : Schema, optional
            Fixes the order of the arrays' columns (default the fit's schema); it must
            have the training table's columns.
        categories : mapping column -> categories, optional
            The category sets of the codes (default the training table's).
        """
        if not getattr(self, "fitted_", False):
            raise VrlibError(f"{type(self).__name__} is not fitted: call fit(df, schema) before sample(n)")
        schema = self.schema_ if schema is None else schema
        if set(schema.categorical) != set(self.schema_.categorical) or set(schema.continuous) != set(
            self.schema_.continuous
        ):
            raise VrlibError(f"schema {schema} does not describe the training table's columns {self.columns_}")
        n = check_count(n)
        values = self._sample(n, make_rng(seed))
        own = {c: self.dtypes_[c].categories for c in schema.categorical}
        return encode_values(values, own, schema, categories)

    def fit_sample(
        self, df: pd.DataFrame, schema: Schema, n: int | None = None, seed: int | None = None
    ) -> pd.DataFrame:
        """Fit on ``df`` and sample ``n`` rows (default ``len(df)``), both seeded from ``seed``."""
        seeds = np.random.SeedSequence(check_seed(seed)).generate_state(2)
        self.fit(df, schema, seed=int(seeds[0]))
        return self.sample(len(df) if n is None else n, seed=int(seeds[1]))

    # ------------------------------------------------------------------ helpers

    def _check_params(self) -> None:
        """Raise :class:`VrlibError` on a bad parameter (subclasses override)."""

    def _assemble(self, values: dict, n: int) -> pd.DataFrame:
        out = {}
        for c in self.columns_:
            dtype = self.dtypes_[c]
            v = np.asarray(values[c])
            if isinstance(dtype, pd.CategoricalDtype):
                out[c] = pd.Categorical.from_codes(v.astype(np.int64, copy=False), dtype=dtype)
            else:
                out[c] = v.astype(np.float64, copy=False)
        return pd.DataFrame(out, index=pd.RangeIndex(n), columns=self.columns_)

    def get_params(self) -> dict:
        """The constructor's parameters and their current values (scikit-learn style)."""
        import inspect

        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {p: getattr(self, p) for p in names}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


__all__ = ["Generator", "check_seed", "make_rng", "check_count"]
