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
* a value of the release or the holdout that the training data spells otherwise (``1.0``
  for ``1``, ``true`` for ``True``) is read as the training spelling, counted and warned about;
* columns that look like identifiers are named in a warning, and so are categorical columns
  almost every value of which is one record's own (``NEAR_UNIQUE``);
* holdout rows equal to training rows (the population's own duplicates) are kept and
  counted, with a warning; far more of them than the training data's own repeats explain
  give another warning (the holdout holds training records themselves);
* files may order their columns differently, use ``;``, tabs or ``|`` instead of commas,
  put a blank after each separator, begin with an unnamed row index (as pandas writes
  them) and hold columns left out with ``ignore``; a column one file lacks or leaves empty
  in every row is refused with ``ignore`` as the advice;
* booleans may be written ``True`` / ``true`` / ``1`` in one file and ``False`` / ``0`` in
  another (read as the training spelling, as other respellings are);
* each table is large enough for the attacks (the holdout is split in two halves of at
  least ``MIN_HALF`` records: one is the attacks' reference data, the other the null).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from vrlib.attacks.collision import count_in, occurs_in
from vrlib.data import Schema, prepare, read_csv
from vrlib.errors import VrlibError

__all__ = ["MIN_HALF", "MIN_TRAIN", "MIN_RELEASE", "AuditWarning", "read_tables", "check_tables"]

MIN_HALF = 10  # records in each half of the holdout
MIN_TRAIN = 10
MIN_RELEASE = 10
# A categorical column with at least this share of distinct values in the training data is named in a
# near_unique_column warning: a 93 %-distinct date column hid all 15 planted copies of Adult records, while
# no real categorical column of Adult or Census reaches 0.66 in 200 random samples of 20 records (0.28 of 50)
NEAR_UNIQUE = 0.9
ROLES = ("training data", "release", "holdout")
# prepare()'s and read_csv()'s advice names the options of `vrlib rank`; `vrlib audit` keeps every row
# (row i = record i) and refuses missing values, so naming a spelling with --na-values makes it missing
_ADVICE = (
    (
        "drop those rows (--dropna, or dropna=True) or fill them first",
        "fill or remove those rows in the file first (the audit keeps every row, so that row i is record i; "
        "a spelling named with --na-values is missing too); in a categorical column a missing value can be a "
        "category of its own: write it as a word such as 'missing' in all three files",
    ),
    (
        "declare it categorical, clean it, or name its missing-value spellings (na_values / --na-values)",
        "declare it categorical or clean it (the audit refuses missing values, so these cannot be left out "
        "with --na-values)",
    ),
    ("or leave it out with ignore (`vrlib rank --ignore`)", "or leave it out with --ignore (ignore=...)"),
)
_SEPARATORS = (";", "\t", "|")


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
    train,
    synthetic,
    holdout,
    categorical,
    continuous,
    na_values=(),
    encoding="utf-8",
    check: bool = True,
    info=None,
    ignore=(),
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
    ignore : sequence of str
        Columns to leave out of whichever files hold them (an identifier, a column one file
        alone has); each must be in at least one file.

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
    _check_names(categorical, continuous)
    both = sorted(set(ignore) & (set(categorical) | set(continuous)))
    if both:
        raise VrlibError(f"column(s) {both} are both declared and ignored (--ignore); name each column once")
    tables, found = [], set()
    for role, path, enc in zip(ROLES, (train, synthetic, holdout), encodings):
        header = _header(path, enc)
        sep = _separator(header)  # a file written with ';' (spreadsheets in many locales), tabs or '|'
        names = _columns_of(header, sep)
        present = [c for c in ignore if c in names]
        found |= set(present)
        # a first column without a name is a row index (pandas' to_csv writes one by default): not a record value
        index = {"index_col": 0} if len(names) > 1 and names[0] == "" else {}
        try:
            # skipinitialspace: a file written with ", " between fields (as the UCI Adult files are) is read
            # as one written with "," (its header's names and its values without the blank)
            df, schema = read_csv(
                path,
                categorical,
                continuous,
                na_values=na_values,
                encoding=enc,
                ignore=present,
                sep=sep,
                skipinitialspace=True,
                **index,
            )
        except VrlibError as exc:
            if " has no column " in str(exc):  # a column this file lacks: a typo, or one the generator left out
                raise VrlibError(
                    f"{role} ({path}): {_advice(exc)}; if this file really lacks a column that the others have "
                    "(a column the generator did not release), leave it out of the audit: take it out of "
                    "--categorical / --continuous and name it in --ignore"
                ) from None
            if "missing values" in str(exc):  # a column with no value at all is one the file does not really have
                _refuse_empty_columns(
                    f"{role} ({path})",
                    _text_table(path, enc, sep, na_values, index, present),
                    "leave it out of the audit: take it out of --categorical / --continuous and name it in "
                    "--ignore (ignore=...)",
                )
            raise VrlibError(f"{role} ({path}): {_advice(exc)}") from None
        except LookupError:
            raise VrlibError(f"{role} ({path}): unknown text encoding {enc!r} (e.g. utf-8, latin-1, cp1252)") from None
        tables.append(df.reset_index(drop=True))
    absent = [c for c in ignore if c not in found]
    if absent:
        raise VrlibError(f"--ignore names column(s) {absent} that none of the three files has")
    if not check:
        return (*tables, schema)
    return (*check_tables(*tables, schema, info=info), schema)


def _text_table(path, encoding, sep, na_values, index, ignore) -> pd.DataFrame:
    """The file as text, empty fields and ``na_values`` missing (as :func:`vrlib.data.read_csv` reads it)."""
    import gzip
    from pathlib import Path

    opener = gzip.open if Path(path).suffix == ".gz" else open
    with opener(path, "rt", encoding=encoding, newline="") as fh:
        df = pd.read_csv(fh, dtype=str, keep_default_na=False, na_values=sorted(set(na_values)), sep=sep, **index)
    df = df.drop(columns=[c for c in ignore if c in df.columns])
    return df.mask(df.apply(lambda col: col.str.strip() == ""))


def _refuse_empty_columns(role: str, df: pd.DataFrame, remedy: str) -> None:
    """Refuse a table with a column that holds no value in any row, saying to leave the column out.

    Such a column (a generator that did not release it, an export that lost it) is not a few
    missing values: removing its rows would remove every row.
    """
    if not len(df):
        return
    empty = [str(c) for c in df.columns if df[c].isna().all()]
    if empty:
        raise VrlibError(
            f"the {role} has no value at all in column(s) {empty} (every one of its {len(df)} rows is empty there): "
            f"a column one table does not really have cannot be audited; {remedy}, so that all three tables are "
            "audited on the columns they share"
        )


def _advice(exc) -> str:
    text = str(exc)
    for rank, audit in _ADVICE:
        text = text.replace(rank, audit)
    return text


def _check_names(categorical, continuous) -> None:
    """Refuse a column named twice in one list (both lists at once is refused by :class:`Schema`)."""
    for option, names in (("--categorical", categorical), ("--continuous", continuous)):
        twice = sorted({str(c) for c in names if list(names).count(c) > 1})
        if twice:
            raise VrlibError(f"column(s) {twice} are named more than once in {option}; name each column once")


def _header(path, encoding: str) -> str:
    """The first line of a CSV file (empty when it cannot be read: read_csv then says why)."""
    import gzip
    from pathlib import Path

    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding=encoding, newline="") as fh:
            return fh.readline()
    except (OSError, UnicodeDecodeError, LookupError, EOFError):
        return ""


def _separator(header: str) -> str:
    """``,`` unless the header holds no comma but another usual separator (``;``, tab, ``|``)."""
    if "," in header:
        return ","
    counts = {sep: header.count(sep) for sep in _SEPARATORS}
    best = max(counts, key=counts.get)
    return best if counts[best] else ","


def _columns_of(header: str, sep: str) -> list[str]:
    import csv

    return next(csv.reader([header.lstrip("\ufeff").rstrip("\r\n")], delimiter=sep, skipinitialspace=True), [])


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
    _check_names(schema.categorical, schema.continuous)
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
        _refuse_empty_columns(role, df[list(schema.columns)], "drop it from the tables and the schema")
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
    synthetic, holdout, respelled = _respell(train, synthetic, holdout, schema)
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
    where = [
        f"the {role} in {sum(unseen[role].values())} row-column(s) ("
        + ", ".join(f"{c}: {n}" for c, n in unseen[role].items())
        + ")"
        for role in ("release", "holdout")
        if unseen[role]
    ]
    # a column none of whose release or holdout values the training data has is most likely spelled otherwise
    # throughout (M / male, 1 / yes): every copy of a training record then hides behind it; not an identifier,
    # whose values no other table shares by design (identifier_column says so)
    disjoint = [
        f"the {role}'s {c!r}"
        for role, df in (("release", synthetic), ("holdout", holdout))
        for c, n in unseen[role].items()
        if n == len(df) and c not in _identifiers(train, schema) and c not in _near_unique(train, schema)
    ]
    if where:  # one warning (one code) for both tables
        warnings.warn(
            AuditWarning(
                "unseen_categories",
                f"values the training data never has, in {' and '.join(where)}; they are audited as categories "
                "of their own"
                + (
                    f"; no value of {', '.join(disjoint)} is one the training data has: if they are the training "
                    "data's categories spelled otherwise, write them as the training data does (as they are, no "
                    "record can match a training record there and copies are hidden)"
                    if disjoint
                    else ""
                ),
            ),
            stacklevel=2,
        )
    _warn_identifiers(train, schema)
    _warn_near_unique(train, schema)
    _warn_out_of_range(train, synthetic, holdout, schema)
    overlap = occurs_in(holdout, train, schema)
    repeated = count_in(train, train, schema) > 1  # the population's own repeats, seen inside the training data
    info["unseen_categories"] = {role: counts for role, counts in unseen.items() if counts}
    info["respelled_categories"] = respelled
    info["n_holdout_in_train"] = int(overlap.sum())
    info["n_train_repeated"] = int(repeated.sum())
    if _warn_overlap(int(overlap.sum()), len(holdout), int(repeated.sum()), len(train)):
        pass  # said: these are not the population's own duplicates
    elif overlap.any():
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


_BOOLEAN = {"true": 1.0, "false": 0.0}


def _spelling(value):
    """What two spellings of one category share: the number for numbers (``1``, ``1.0``, ``01``) and for
    booleans (``True`` is ``1``, ``false`` is ``0``: exports and generators write booleans either way), else
    the text without case or surrounding blanks (``Male``, ``male``)."""
    text = str(value).strip()
    if text.casefold() in _BOOLEAN:
        return ("number", _BOOLEAN[text.casefold()])
    try:
        number = float(text)
    except ValueError:
        return ("text", text.casefold())
    return ("number", number) if np.isfinite(number) else ("text", text.casefold())


def _respell(train, synthetic, holdout, schema):
    """Read a release or holdout value that the training data spells otherwise as the training spelling.

    A generator or an export often writes category ``1`` as ``1.0`` or ``True`` as ``true``;
    audited as categories of their own, such values would match no training record and hide
    every copy.  A value the training data never has is read as the training category with
    the same :func:`_spelling`, when exactly one training category has it; the rows are
    counted and a ``respelled_categories`` warning names the spellings.

    Returns
    -------
    synthetic, holdout : DataFrame
    respelled : dict
        ``{role: {column: rows}}``, only columns with such rows.
    """
    respelled = {"release": {}, "holdout": {}}
    examples = []
    tables = {"release": synthetic, "holdout": holdout}
    for c in schema.categorical:
        known = list(train[c].cat.categories)
        keys = {}
        for value in known:
            keys.setdefault(_spelling(value), []).append(value)
        for role, df in tables.items():
            values = df[c].astype(object)
            unknown = pd.unique(values[~values.isin(known)])
            mapping = {v: keys[_spelling(v)][0] for v in unknown if len(keys.get(_spelling(v), ())) == 1}
            if not mapping:
                continue
            hit = values.isin(list(mapping))
            respelled[role][c] = int(hit.sum())
            examples += [f"{c}: {v!r} as {t!r}" for v, t in list(mapping.items())[:3]]
            df = df.copy()
            df[c] = values.where(~hit, values.map(mapping))
            tables[role] = df
    respelled = {role: counts for role, counts in respelled.items() if counts}
    if respelled:
        where = "; ".join(
            f"the {role}: " + ", ".join(f"{c} in {n} row(s)" for c, n in counts.items())
            for role, counts in respelled.items()
        )
        warnings.warn(
            AuditWarning(
                "respelled_categories",
                f"categories spelled otherwise than in the training data were read as the training spelling "
                f"({where}; e.g. {', '.join(examples[:5])}); if they are distinct categories, spell them apart",
            ),
            stacklevel=3,
        )
    return tables["release"], tables["holdout"], respelled


def _identifiers(train: pd.DataFrame, schema: Schema) -> list[str]:
    """The categorical columns with a different category in every training record (of at least 20)."""
    if len(train) < 2 * MIN_HALF:
        return []
    return [c for c in schema.categorical if train[c].nunique() == len(train)]


def _warn_identifiers(train: pd.DataFrame, schema: Schema) -> None:
    """Warn about columns that look like identifiers: they make every record unique and hide every copy."""
    if len(train) < 2 * MIN_HALF:
        return
    found = [f"{c!r} (a different category in every training record)" for c in _identifiers(train, schema)]
    for c in schema.continuous:
        x = train[c].to_numpy()
        if np.all(x == np.round(x)) and len(np.unique(x)) == len(x) and x.max() - x.min() == len(x) - 1:
            found.append(f"{c!r} (the consecutive whole numbers {x.min():.0f} to {x.max():.0f}, a row number)")
    if found:
        warnings.warn(
            AuditWarning(
                "identifier_column",
                f"column(s) {', '.join(found)} look like identifiers: a release cannot share them with the "
                "training records by chance or by leak alike, so they make every record look unique and hide "
                "copies; leave them out (--ignore, or drop them from the tables) unless the generator "
                "releases them",
            ),
            stacklevel=3,
        )


def _near_unique(train: pd.DataFrame, schema: Schema) -> dict[str, float]:
    """The categorical columns whose share of distinct training values is at least :data:`NEAR_UNIQUE`, with it.

    Columns with a different value in every record are left out: ``identifier_column`` names them.
    Continuous columns are never named: many are near-unique by nature (Adult's ``fnlwgt``,
    California's coordinates) and are compared by distance, not by equality.
    """
    if len(train) < 2 * MIN_HALF:
        return {}
    shares = {c: train[c].nunique() / len(train) for c in schema.categorical}
    return {c: share for c, share in shares.items() if NEAR_UNIQUE <= share < 1}


def _warn_near_unique(train: pd.DataFrame, schema: Schema) -> None:
    """Warn about categorical columns almost every value of which is a training record's own.

    Such a column (dates of birth, a record number with a few repeats) is nearly an identifier:
    almost no two records share its value, so every record looks isolated, the holdout records
    that share one with a released record by chance make a heavy tail, and copies are not
    flagged.  ``identifier_column`` names only columns with a different value in every record.
    """
    found = _near_unique(train, schema)
    if not found:
        return
    names = ", ".join(f"{c!r} ({share:.1%} of its {len(train)} training values distinct)" for c, share in found.items())
    warnings.warn(
        AuditWarning(
            "near_unique_column",
            f"categorical column(s) {names} are nearly unique: almost no two records share a value there, so every "
            "record looks isolated, chance matches of holdout records make a heavy tail, and copies may not be "
            "flagged; unless the generator must release them, leave them out (vrlib audit: take them out of "
            f"--categorical and name them in --ignore, e.g. --ignore {','.join(found)}; vrlib.audit: drop them from "
            "the three tables and the schema) or code them coarser (a year for a date)",
        ),
        stacklevel=3,
    )


def _warn_out_of_range(train, synthetic, holdout, schema: Schema) -> None:
    """Warn about a continuous column none of whose release or holdout values lies within the training data's range.

    The continuous counterpart of a column spelled otherwise throughout: another unit or coding
    (thousands for units, a year stamped on the release), under which every released record
    differs from every training record and copies are hidden.
    """
    found = []
    for c in schema.continuous:
        low, high = train[c].min(), train[c].max()
        for role, df in (("release", synthetic), ("holdout", holdout)):
            x = df[c].to_numpy()
            if not ((x >= low) & (x <= high)).any():
                found.append(f"the {role}'s {c!r} ({x.min():g} to {x.max():g}; training data {low:g} to {high:g})")
    if found:
        warnings.warn(
            AuditWarning(
                "values_out_of_range",
                f"no value of {', '.join(found)} lies within the training data's range: if the column is written "
                "in another unit or coding there, write it as the training data does (as it is, every such record "
                "differs from every training record in it, and copies are hidden)",
            ),
            stacklevel=3,
        )


def _warn_overlap(n_shared: int, n_holdout: int, n_repeated: int, n_train: int, alpha: float = 1e-6) -> bool:
    """Warn when more holdout rows equal training rows than the population's own repeats explain.

    A holdout record drawn apart from the training records equals one of them about as often
    as a training record equals one of the others (``n_repeated`` of ``n_train``); far more
    shared rows (one-sided binomial test at ``alpha``, and more than twice that rate) say that
    the holdout holds training records themselves (the same file given twice, a split made
    after training), which hides every leak: the membership figures then compare training
    records with training records.  Returns whether it warned.
    """
    from scipy.stats import binom

    rate = (n_repeated + 1) / (n_train + 1)
    if n_shared <= 2 * rate * n_holdout or binom.sf(n_shared - 1, n_holdout, rate) >= alpha:
        return False
    warnings.warn(
        AuditWarning(
            "holdout_overlap",
            f"{n_shared} of the holdout's {n_holdout} rows equal a training row, where the training data's own "
            f"repeats ({n_repeated} of its {n_train} records equal another) lead to expect about "
            f"{rate * n_holdout:.0f}: the holdout seems to hold training records themselves (the same file twice, "
            "or a split made after training), and then the audit compares training records with training records "
            "and cannot see a leak; give records that were not used for training (if the training data was "
            "deduplicated, its repeats understate the population's and this warning may be wrong)",
        ),
        stacklevel=3,
    )
    return True
