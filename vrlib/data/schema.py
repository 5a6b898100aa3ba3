"""A table's schema: which columns are categorical and which continuous, their public domains, and the checks.

A table is a pandas DataFrame plus a :class:`Schema` naming its categorical and
continuous columns.  Categorical columns are pandas ``category`` columns (sorted
categories), continuous ones ``float64``; :func:`prepare` enforces this and rejects
NaNs, so every module downstream can rely on it.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from vrlib.errors import VrlibError

__all__ = ["Schema", "prepare", "quantile_domain"]


@dataclass(frozen=True)
class Schema:
    """Which columns of a table are categorical and which continuous, and their public domains.

    Parameters
    ----------
    categorical, continuous : sequence of str
        Column names; every column of the table is in exactly one of them.
    domains : mapping str -> sequence of float, optional
        Public domains of continuous columns: metadata known without looking at the
        training data, which generators that discretise (BayNet, PrivBayes) use instead
        of the training data's range.  Either ``(low, high)`` bounds, which the
        generator cuts into its own number of equal-width bins, or the full sequence of
        bin edges (three or more increasing values).  Stored as a tuple of
        ``(column, edges)`` pairs, so the schema stays hashable; read it with
        :meth:`domain`.
    """

    categorical: tuple[str, ...] = ()
    continuous: tuple[str, ...] = ()
    domains: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "categorical", tuple(self.categorical))
        object.__setattr__(self, "continuous", tuple(self.continuous))
        both = sorted(set(self.categorical) & set(self.continuous))
        if both:
            raise VrlibError(f"column(s) {both} are declared both categorical and continuous; declare each column once")
        pairs = self.domains.items() if isinstance(self.domains, dict) else self.domains
        clean = []
        for column, edges in pairs:
            if column not in self.continuous:
                raise VrlibError(f"a domain is given for {column!r}, which is not a continuous column of the schema")
            edges = tuple(float(e) for e in edges)
            if len(edges) < 2 or not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
                raise VrlibError(
                    f"the domain of {column!r} must be (low, high) bounds or increasing bin edges, all finite; "
                    f"got {edges}"
                )
            clean.append((column, edges))
        object.__setattr__(self, "domains", tuple(sorted(clean)))

    def domain(self, column: str):
        """The public domain of ``column`` (a tuple of floats), or ``None`` when it has none."""
        return dict(self.domains).get(column)

    def with_domains(self, domains) -> "Schema":
        """This schema with ``domains`` (a mapping column -> bounds or edges) added or replaced."""
        return Schema(self.categorical, self.continuous, {**dict(self.domains), **dict(domains)})

    @property
    def columns(self) -> tuple[str, ...]:
        return self.categorical + self.continuous

    def is_categorical(self, column: str) -> bool:
        return column in self.categorical

    def subset(self, columns) -> "Schema":
        """The schema of a table restricted to ``columns`` (kept in their order)."""
        columns = list(columns)
        return Schema(
            [c for c in columns if c in self.categorical],
            [c for c in columns if c in self.continuous],
            {c: e for c, e in self.domains if c in columns},
        )


def prepare(df: pd.DataFrame, schema: Schema, dropna: bool = False) -> pd.DataFrame:
    """Check ``df`` against ``schema`` and return it with canonical dtypes.

    Categorical columns become ``category`` with sorted categories (unless they
    already are categorical, whose category set is kept); continuous columns
    become ``float64``.

    Parameters
    ----------
    df : DataFrame
    schema : Schema
    dropna : bool
        Drop rows with missing values (with a warning saying how many) instead of raising.

    Raises
    ------
    VrlibError
        A column in neither list, a declared column that is absent, missing values
        (unless ``dropna``), non-numeric or non-finite values in a continuous column,
        a continuous column whose range overflows float64 (both named with their
        rows), or an empty table.
    """
    declared = set(schema.columns)
    undeclared = [c for c in df.columns if c not in declared]
    if undeclared:
        raise VrlibError(
            f"column(s) {undeclared} are neither categorical nor continuous; "
            "declare each column in exactly one list (or drop it)"
        )
    absent = [c for c in schema.columns if c not in df.columns]
    if absent:
        raise VrlibError(f"declared column(s) {absent} are not in the table (columns: {list(df.columns)})")
    nan_counts = df.isna().sum()
    nan_counts = nan_counts[nan_counts > 0]
    if len(nan_counts):
        if not dropna:
            where = ", ".join(f"{c}: {n}" for c, n in nan_counts.items())
            rows = int(df.isna().any(axis=1).sum())
            raise VrlibError(
                f"the table has missing values in {rows} row(s) ({where}); "
                "drop those rows (--dropna, or dropna=True) or fill them first"
            )
        dropped = df.isna().any(axis=1)
        warnings.warn(
            f"dropped {int(dropped.sum())} of {len(df)} row(s) with missing values (row(s) {_rows(df.index[dropped])})",
            UserWarning,
            stacklevel=2,
        )
        df = df.loc[~dropped]
    if len(df) == 0:
        raise VrlibError("the table has no rows")
    out = {}
    for c in df.columns:
        col = df[c]
        if c in schema.categorical:
            if isinstance(col.dtype, pd.CategoricalDtype):
                out[c] = col
            else:
                out[c] = col.astype(pd.CategoricalDtype(sorted(col.unique(), key=_sort_key)))
        else:
            numbers = pd.to_numeric(col, errors="coerce")
            bad = numbers.isna() & col.notna()
            if bad.any():
                examples = sorted({str(v) for v in col[bad]})[:5]
                raise VrlibError(
                    f"continuous column {c!r} has non-numeric values {examples} in row(s) {_rows(col.index[bad])}"
                    f"{_numeric_hint(col[bad])}; "
                    "declare it categorical, clean it, or name its missing-value spellings (na_values / --na-values)"
                )
            out[c] = numbers.astype("float64")
            _check_finite(c, out[c])
    return pd.DataFrame(out, index=df.index)


_DATE = re.compile(
    r"^\s*(\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})([ T]\d{1,2}:\d{2}(:\d{2})?)?\s*$"
)
_COMMA_NUMBER = re.compile(r"^\s*[-+]?\d*(,\d+)+(\.\d+)?\s*$")  # 1,234.5 (thousands) or 0,5 (decimal comma)


def _numeric_hint(values: pd.Series) -> str:
    """Why values a person reads as numbers are not numbers here (dates, commas in numbers), and what to do."""
    text = values.astype(str)
    if text.str.match(_DATE).all():
        return (
            " (they look like dates: write them as numbers in every file, e.g. the year or the days since a fixed date)"
        )
    if text.str.match(_COMMA_NUMBER).all():
        return (
            " (numbers written with a comma, as thousands separators (1,234.5) or decimal commas (0,5): write them "
            "without thousands separators and with a decimal point in every file)"
        )
    return ""


def _rows(labels, limit: int = 10) -> str:
    labels = list(labels)
    shown = ", ".join(str(v) for v in labels[:limit])
    return shown + (f" and {len(labels) - limit} more" if len(labels) > limit else "")


def _check_finite(column: str, values: pd.Series) -> None:
    """Refuse inf / NaN spellings and values whose range overflows float64 (it would scale the column to 0)."""
    x = values.to_numpy()
    bad = ~np.isfinite(x)
    if bad.any():
        raise VrlibError(
            f"continuous column {column!r} has non-finite values (inf or nan) in row(s) {_rows(values.index[bad])}; "
            "remove or fix those rows (to treat a spelling such as nan as missing, name it with na_values / --na-values)"
        )
    with np.errstate(over="ignore"):
        span = x.max() - x.min() if len(x) else 0.0
    if not np.isfinite(span):
        extreme = values.index[(x == x.max()) | (x == x.min())]
        raise VrlibError(
            f"continuous column {column!r} spans more than the largest float ({x.min():g} to {x.max():g}, "
            f"row(s) {_rows(extreme)}); rescale the column (e.g. divide it by 1e300) or remove those rows"
        )


def _sort_key(value):
    # Sort numbers numerically and strings alphabetically, numbers first.
    return (0, float(value), "") if isinstance(value, (int, float, np.number)) else (1, 0.0, str(value))


def quantile_domain(
    reference: pd.DataFrame, columns, bins: int = 10, trim: float = 0.01
) -> dict[str, tuple[float, ...]]:
    """Bin edges at the quantiles of a public reference sample: ``{column: edges}`` for :meth:`Schema.with_domains`.

    For data whose only public knowledge is a sample of the population disjoint from
    the training set (DOMIAS's reference set ``D_ref``): ``bins`` bins of about equal
    reference mass (edges that coincide, at heavily repeated values, are merged).
    Equal-width bins between public bounds would put almost every record of a
    heavy-tailed column in one bin.  The outer edges are the ``trim`` and ``1 - trim``
    quantiles rather than the extremes: values beyond them fall in the end bins, and
    a generator that samples uniformly inside a bin does not spread the end bins'
    records over a heavy tail's whole range.

    Parameters
    ----------
    reference : DataFrame
        The public sample (never the training data).
    columns : sequence of str
        Continuous columns of ``reference``.
    bins : int
    """
    if bins < 1:
        raise VrlibError(f"bins must be >= 1, got {bins}")
    if not 0 <= trim < 0.5 / bins:
        raise VrlibError(f"trim must be in [0, 0.5 / bins) = [0, {0.5 / bins:g}), got {trim}")
    probs = np.linspace(0, 1, bins + 1)
    probs[0], probs[-1] = trim, 1 - trim
    out = {}
    for c in columns:
        x = reference[c].to_numpy(dtype=np.float64)
        edges = np.unique(np.quantile(x, probs))
        if len(edges) < 2:
            raise VrlibError(f"column {c!r} is constant in the reference sample: it has no range to cut into bins")
        out[c] = tuple(edges.tolist())
    return out
