"""The audit's three tables: read them, check them against one schema, and say what to fix when they disagree.

A custodian gives the training records (``TRAIN``), the synthetic release made from
them (``RELEASE``) and a holdout of records from the same population that were *not*
used for training (``HOLDOUT``).  Everything the attacks assume about these tables is
checked here, so that an attack never fails deep inside on a bad input:

* the three tables have exactly the declared columns;
* no missing values, continuous columns numeric and finite (:func:`vrlib.data.prepare`);
* every category of the release and of the holdout occurs in the training data (a
  release with a value the training data never had is a different schema, and the
  attacks' encodings would differ);
* the holdout is not the training data: at most ``max_overlap`` of its rows may be
  equal to a training row (real tables hold a few natural duplicates);
* each table is large enough for the attacks (the holdout is split in two halves of at
  least ``MIN_HALF`` records: one is the attacks' reference data, the other the null).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from vrlib.attacks.collision import occurs_in
from vrlib.data import Schema, prepare, read_csv
from vrlib.errors import VrlibError

__all__ = ["MIN_HALF", "MIN_TRAIN", "MIN_RELEASE", "read_tables", "check_tables"]

MIN_HALF = 10  # records in each half of the holdout
MIN_TRAIN = 10
MIN_RELEASE = 10
ROLES = ("training data", "release", "holdout")


def _rows(index, limit: int = 5) -> str:
    labels = [str(i) for i in index[:limit]]
    more = f" and {len(index) - limit} more" if len(index) > limit else ""
    return ", ".join(labels) + more


def read_tables(train, synthetic, holdout, categorical, continuous, na_values=(), encoding: str = "utf-8"):
    """Read the three CSV files with declared column types and check them (:func:`check_tables`).

    Parameters
    ----------
    train, synthetic, holdout : path-like
        CSV files whose first line names the columns.
    categorical, continuous : sequence of str
        Every column in exactly one of them.
    na_values : sequence of str
        Spellings of a missing value (missing values are refused, with their rows).
    encoding : str
        Text encoding of the files.

    Returns
    -------
    train, synthetic, holdout : DataFrame
        Checked, with categorical columns sharing the training data's categories and a
        0-based ``RangeIndex`` (row ``i`` of the file, header excluded).
    schema : Schema
    """
    if not categorical and not continuous:
        raise VrlibError("declare the column types with --categorical and/or --continuous (comma-separated names)")
    tables = []
    for role, path in zip(ROLES, (train, synthetic, holdout)):
        try:
            df, schema = read_csv(path, categorical, continuous, na_values=na_values, encoding=encoding)
        except VrlibError as exc:
            raise VrlibError(f"{role} ({path}): {exc}") from None
        tables.append(df.reset_index(drop=True))
    return (*check_tables(*tables, schema), schema)


def check_tables(
    train: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame, schema: Schema, max_overlap: float = 0.05
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Check the three tables against ``schema`` and each other; return them with shared categories.

    Parameters
    ----------
    train, synthetic, holdout : DataFrame
        Columns of ``schema``.
    schema : Schema
    max_overlap : float
        Largest share of holdout rows allowed to equal a training row (more is an error:
        the holdout must be records the generator never saw).

    Returns
    -------
    train, synthetic, holdout : DataFrame
        Canonical dtypes, categorical columns with the training data's categories, and
        a fresh 0-based index.

    Raises
    ------
    VrlibError
        Naming the table, the column and the rows at fault, and what to do.
    """
    if not isinstance(schema, Schema):
        raise VrlibError(f"schema must be a vrlib.Schema, got {type(schema).__name__}")
    checked = []
    for role, df in zip(ROLES, (train, synthetic, holdout)):
        if not isinstance(df, pd.DataFrame):
            raise VrlibError(f"the {role} must be a pandas DataFrame, got {type(df).__name__}")
        extra = [str(c) for c in df.columns if c not in schema.columns]
        missing = [c for c in schema.columns if c not in df.columns]
        if extra or missing:
            raise VrlibError(
                f"the {role}'s columns differ from the declared ones (undeclared: {extra}; missing: {missing}); "
                "give all three files the same columns and declare each as categorical or continuous"
            )
        try:
            df = prepare(df[list(schema.columns)].reset_index(drop=True), schema)
        except VrlibError as exc:
            raise VrlibError(f"the {role}: {exc}") from None
        checked.append(df)
    train, synthetic, holdout = checked
    for role, df, least in zip(ROLES, checked, (MIN_TRAIN, MIN_RELEASE, 2 * MIN_HALF)):
        if len(df) < least:
            raise VrlibError(
                f"the {role} has {len(df)} record(s); the audit needs at least {least} "
                + ("(the holdout is split into a reference half and a null half)" if role == "holdout" else "")
            )
    for role, df in zip(ROLES[1:], (synthetic, holdout)):
        for c in schema.categorical:
            known = train[c].cat.categories
            values = df[c].astype(object)
            unseen = ~values.isin(known)
            if unseen.any():
                examples = sorted({str(v) for v in values[unseen]})[:5]
                raise VrlibError(
                    f"the {role}'s column {c!r} has value(s) {examples} that the training data never has "
                    f"(row(s) {_rows(df.index[unseen])}); recode them to training categories or drop those rows"
                )
    out = [train]
    for df in (synthetic, holdout):
        df = df.copy()
        for c in schema.categorical:
            df[c] = pd.Categorical(df[c].astype(object), categories=train[c].cat.categories)
        out.append(df)
    train, synthetic, holdout = out
    overlap = occurs_in(holdout, train, schema)
    share = float(overlap.mean())
    if share > max_overlap:
        raise VrlibError(
            f"{int(overlap.sum())} of the holdout's {len(holdout)} rows ({share:.1%}; e.g. row(s) "
            f"{_rows(np.flatnonzero(overlap))}) are equal to training rows: the holdout must be records that were "
            "NOT used to train the generator (split the data before training, and give the unused part)"
        )
    if overlap.any():
        warnings.warn(
            f"{int(overlap.sum())} holdout row(s) equal a training row (natural duplicates?); they stay in the holdout",
            UserWarning,
            stacklevel=2,
        )
    return train, synthetic, holdout
