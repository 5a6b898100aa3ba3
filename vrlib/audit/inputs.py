"""The audit's three tables: read them, check them against one schema, and say what to fix when they disagree.

A custodian gives the training records (``TRAIN``), the synthetic release made from
them (``RELEASE``) and a holdout of records from the same population that were *not*
used for training (``HOLDOUT``).  Everything the attacks assume about these tables is
checked here, so that an attack never fails deep inside on a bad input:

* the three tables have exactly the declared columns;
* no missing values, continuous columns numeric and finite (:func:`vrlib.data.prepare`);
* a category of the release or the holdout that the training data never has (a generator
  with a public or differentially private domain produces them) is kept and counted: every
  table then shares the training categories followed by the unseen ones, in sorted order;
* holdout rows equal to training rows (the population's own duplicates) are kept and
  counted, with a warning;
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

__all__ = ["MIN_HALF", "MIN_TRAIN", "MIN_RELEASE", "AuditWarning", "read_tables", "check_tables"]

MIN_HALF = 10  # records in each half of the holdout
MIN_TRAIN = 10
MIN_RELEASE = 10
ROLES = ("training data", "release", "holdout")
# prepare()'s advice names the options of `vrlib rank`; `vrlib audit` keeps every row (row i = record i)
_RANK_ADVICE = "drop those rows (--dropna, or dropna=True) or fill them first"
_AUDIT_ADVICE = (
    "fill or remove those rows in the file first (the audit keeps every row, so that row i is record i), "
    "or name the spellings of a missing value with --na-values"
)


class AuditWarning(UserWarning):
    """A warning of the audit, with a ``code`` that ``summary.json``'s ``warnings`` list repeats."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def _rows(index, limit: int = 5) -> str:
    labels = [str(i) for i in index[:limit]]
    more = f" and {len(index) - limit} more" if len(index) > limit else ""
    return ", ".join(labels) + more


def read_tables(
    train, synthetic, holdout, categorical, continuous, na_values=(), encoding="utf-8", check: bool = True, info=None
):
    """Read the three CSV files with declared column types and check them (:func:`check_tables`).

    Parameters
    ----------
    train, synthetic, holdout : path-like
        CSV files whose first line names the columns.
    categorical, continuous : sequence of str
        Every column in exactly one of them.
    na_values : sequence of str
        Spellings of a missing value (missing values are refused, with their rows).
    encoding : str or sequence of three str
        Text encoding of the files: one for all, or one per file (train, release, holdout).
    check : bool
        Check the tables against each other (:func:`check_tables`); False leaves that to
        :func:`vrlib.audit.audit`, which checks them anyway (so its warnings are given once).
    info : dict, optional
        Filled by :func:`check_tables`.

    Returns
    -------
    train, synthetic, holdout : DataFrame
        With a 0-based ``RangeIndex`` (row ``i`` of the file, header excluded); checked, and
        with categorical columns sharing one category set, when ``check``.
    schema : Schema
    """
    if not categorical and not continuous:
        raise VrlibError("declare the column types with --categorical and/or --continuous (comma-separated names)")
    encodings = [encoding] * 3 if isinstance(encoding, str) else list(encoding)
    if len(encodings) != 3:
        raise VrlibError(
            f"give one text encoding for all three files or one per file (train, release, holdout), got {encodings}"
        )
    tables = []
    for role, path, enc in zip(ROLES, (train, synthetic, holdout), encodings):
        try:
            df, schema = read_csv(path, categorical, continuous, na_values=na_values, encoding=enc)
        except VrlibError as exc:
            raise VrlibError(f"{role} ({path}): {_advice(exc)}") from None
        except LookupError:
            raise VrlibError(f"{role} ({path}): unknown text encoding {enc!r} (e.g. utf-8, latin-1, cp1252)") from None
        tables.append(df.reset_index(drop=True))
    if not check:
        return (*tables, schema)
    return (*check_tables(*tables, schema, info=info), schema)


def _advice(exc) -> str:
    return str(exc).replace(_RANK_ADVICE, _AUDIT_ADVICE)


def check_tables(
    train: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame, schema: Schema, info: dict | None = None
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Check the three tables against ``schema`` and each other; return them with shared categories.

    Parameters
    ----------
    train, synthetic, holdout : DataFrame
        Columns of ``schema``.
    schema : Schema
    info : dict, optional
        Filled with ``unseen_categories`` (``{"release": {column: rows}, "holdout": {...}}``,
        only columns with such rows) and ``n_holdout_in_train`` (holdout rows equal to a
        training row).

    Returns
    -------
    train, synthetic, holdout : DataFrame
        Canonical dtypes, categorical columns sharing the training data's categories
        followed by the unseen ones, and a fresh 0-based index.

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
            raise VrlibError(f"the {role}: {_advice(exc)}") from None
        checked.append(df)
    train, synthetic, holdout = checked
    for role, df, least in zip(ROLES, checked, (MIN_TRAIN, MIN_RELEASE, 2 * MIN_HALF)):
        if len(df) < least:
            raise VrlibError(
                f"the {role} has {len(df)} record(s); the audit needs at least {least} "
                + ("(the holdout is split into a reference half and a null half)" if role == "holdout" else "")
            )
    info = {} if info is None else info
    unseen = {"release": {}, "holdout": {}}
    categories = {}
    for c in schema.categorical:
        known = train[c].cat.categories
        extra = set()
        for role, df in zip(("release", "holdout"), (synthetic, holdout)):
            values = df[c].astype(object)
            new = ~values.isin(known)
            if new.any():
                unseen[role][c] = int(new.sum())
                extra |= set(values[new])
        categories[c] = pd.Index([*known, *sorted(extra, key=str)]) if extra else known
    out = []
    for df in (train, synthetic, holdout):
        df = df.copy()
        for c in schema.categorical:
            df[c] = pd.Categorical(df[c].astype(object), categories=categories[c])
        out.append(df)
    train, synthetic, holdout = out
    for role in ("release", "holdout"):
        if unseen[role]:
            counts = ", ".join(f"{c}: {n}" for c, n in unseen[role].items())
            warnings.warn(
                AuditWarning(
                    "unseen_categories",
                    f"the {role} has values the training data never has, in {sum(unseen[role].values())} "
                    f"row-column(s) ({counts}); they are audited as categories of their own",
                ),
                stacklevel=2,
            )
    overlap = occurs_in(holdout, train, schema)
    info["unseen_categories"] = {role: counts for role, counts in unseen.items() if counts}
    info["n_holdout_in_train"] = int(overlap.sum())
    if overlap.any():
        warnings.warn(
            AuditWarning(
                "holdout_duplicates",
                f"{int(overlap.sum())} of the holdout's {len(holdout)} rows ({overlap.mean():.1%}; e.g. row(s) "
                f"{_rows(np.flatnonzero(overlap))}) equal a training row; they are kept, as the population's own "
                "duplicates (if the holdout overlaps the training data itself, split the data before training)",
            ),
            stacklevel=2,
        )
    return train, synthetic, holdout
