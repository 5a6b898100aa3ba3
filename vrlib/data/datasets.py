"""The built-in tables (UCI Adult, the UK 2011 Census teaching file, California Housing) and a user's CSV.

:func:`load` reads a built-in table by name from its checked file (:mod:`vrlib.data.files`);
:func:`read_csv` reads a user's CSV with declared column types.  Each comes back as a
DataFrame and its :class:`~vrlib.data.schema.Schema`.
"""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from vrlib.data.files import find_file, search_dirs
from vrlib.data.schema import Schema, prepare
from vrlib.errors import VrlibError

__all__ = [
    "DATASETS",
    "CENSUS_VARIANTS",
    "ADULT_DOMAIN",
    "load",
    "load_adult",
    "load_census",
    "load_california",
    "read_csv",
    "train_test_split",
]

DATASETS = ("adult", "census", "california")
CENSUS_VARIANTS = ("auto", "full", "random10000", "first50000")  # the files load_census reads

ADULT_COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]
ADULT_CONTINUOUS = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]

# Adult's public domain: the range of each continuous column over the whole public release
# (adult.data + adult.test, all 48,842 rows), as metadata in the style of DataSynthesizer's
# carries it.  It is fixed before any training set is drawn, so the discretisation of a
# private generator does not depend on its training records.
ADULT_DOMAIN = {
    "age": (17.0, 90.0), "fnlwgt": (12285.0, 1490400.0), "education-num": (1.0, 16.0),
    "capital-gain": (0.0, 99999.0), "capital-loss": (0.0, 4356.0), "hours-per-week": (1.0, 99.0),
}  # fmt: skip

CALIFORNIA_COLUMNS = [
    "MedInc",
    "HouseAge",
    "AveRooms",
    "AveBedrms",
    "Population",
    "AveOccup",
    "Latitude",
    "Longitude",
    "MedHouseVal",
]


def load_adult(keep_missing: bool = False) -> tuple[pd.DataFrame, Schema]:
    """UCI Adult: Ω = the complete rows of adult.data, then those of adult.test.

    Parameters
    ----------
    keep_missing : bool
        Keep the 3,620 rows with a missing value (as NaN).  The index is then the
        position among all 48,842 rows instead of the position in Ω (45,222 rows).
    """
    parts = []
    for name, skip in (("adult.data", 0), ("adult.test", 1)):
        part = pd.read_csv(
            find_file(name),
            header=None,
            names=ADULT_COLUMNS,
            skiprows=skip,
            skipinitialspace=True,
            na_values="?",
            keep_default_na=False,
        )
        parts.append(part)
    df = pd.concat(parts, ignore_index=True)
    df["income"] = df["income"].str.rstrip(".")
    if not keep_missing:
        df = df.dropna().reset_index(drop=True)
    schema = Schema([c for c in ADULT_COLUMNS if c not in ADULT_CONTINUOUS], ADULT_CONTINUOUS, ADULT_DOMAIN)
    if keep_missing:
        return _categorise_with_nan(df, schema), schema
    return prepare(df, schema), schema


def _categorise_with_nan(df: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    df = df.copy()
    for c in schema.categorical:
        df[c] = df[c].astype(pd.CategoricalDtype(sorted(df[c].dropna().unique())))
    for c in schema.continuous:
        df[c] = df[c].astype("float64")
    return df


def load_census(variant: str = "auto") -> tuple[pd.DataFrame, Schema]:
    """UK 2011 Census teaching file: 17 categorical columns, Person ID dropped.

    Parameters
    ----------
    variant : {"auto", "full", "random10000", "first50000"}
        ``auto`` reads the full ONS file (569,741 rows) when it is present and
        otherwise the 10,000 random-record subset, with a warning.  The index is
        always the record's position in the full file.
    """
    if variant not in CENSUS_VARIANTS:
        raise VrlibError(f"unknown census variant {variant!r}; choose one of {CENSUS_VARIANTS}")
    full = "2011 Census Microdata Teaching File.csv"
    if variant == "auto":
        try:
            find_file(full, download=False)
            variant = "full"
        except VrlibError:
            variant = "random10000"
            warnings.warn(
                "the full UK Census teaching file is absent: using its 10,000 random-record subset "
                f"(put {full!r} in {search_dirs()[0]} for the full 569,741 rows)",
                UserWarning,
                stacklevel=2,
            )
    if variant == "full":
        df = pd.read_csv(find_file(full), header=1, dtype=str)
    elif variant == "random10000":
        df = pd.read_csv(find_file("uk_census2011_teaching_random10000.csv.gz"), index_col=0, dtype=str)
        df.index = df.index.astype(int)
    else:
        df = pd.read_csv(find_file("uk_census2011_teaching_first50000.csv.gz"), dtype=str)
    df = df.drop(columns=["Person ID"])
    df.index.name = None
    schema = Schema(list(df.columns), [])
    df = prepare(df, schema)
    for c in df.columns:  # integer codes sort numerically (-9 first), region codes alphabetically
        cats = sorted(df[c].cat.categories, key=lambda v: (0, int(v), "") if _is_int(v) else (1, 0, v))
        df[c] = df[c].cat.reorder_categories(cats)
    return df, schema


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def load_california() -> tuple[pd.DataFrame, Schema]:
    """California Housing in scikit-learn's form: 8 features plus MedHouseVal (all continuous).

    Derived from the original StatLib file exactly as ``fetch_california_housing`` does.
    """
    raw = np.loadtxt(find_file("cal_housing.data"), delimiter=",")
    lon, lat, age, rooms, bedrooms, pop, households, income, value = raw.T
    df = pd.DataFrame(
        {
            "MedInc": income,
            "HouseAge": age,
            "AveRooms": rooms / households,
            "AveBedrms": bedrooms / households,
            "Population": pop,
            "AveOccup": pop / households,
            "Latitude": lat,
            "Longitude": lon,
            "MedHouseVal": value / 100000.0,
        }
    )
    return df, Schema([], CALIFORNIA_COLUMNS)


def load(name: str, **kwargs) -> tuple[pd.DataFrame, Schema]:
    """Load a built-in dataset by name: ``adult``, ``census`` or ``california``.

    Keyword arguments go to :func:`load_adult` (``keep_missing``) or
    :func:`load_census` (``variant``).

    Returns
    -------
    df : DataFrame
        Categorical columns as ``category``, continuous ones as ``float64``.
    schema : Schema
    """
    loaders = {"adult": load_adult, "census": load_census, "california": load_california}
    if name not in loaders:
        raise VrlibError(f"unknown dataset {name!r}; choose one of {list(loaders)} or read your own CSV with read_csv")
    return loaders[name](**kwargs)


def train_test_split(df: pd.DataFrame, test_size: float = 0.3, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A seeded random split into training and test rows (``ceil(test_size · n)`` test rows, as scikit-learn).

    TableGAN-MCA splits Adult's 45,222 complete rows 70/30: 31,655 / 13,567.
    """
    if not 0 < test_size < 1:
        raise VrlibError(f"test_size must be in (0, 1), got {test_size!r}")
    n = len(df)
    n_test = int(np.ceil(test_size * n))
    if n_test < 1 or n_test >= n:
        raise VrlibError(f"cannot split {n} rows with test_size={test_size}: both parts need at least one row")
    order = np.random.default_rng(seed).permutation(n)
    return df.iloc[np.sort(order[n_test:])], df.iloc[np.sort(order[:n_test])]


def read_csv(
    path,
    categorical=(),
    continuous=(),
    dropna: bool = False,
    na_values=(),
    encoding: str = "utf-8",
    ignore=(),
    **read_kwargs,
) -> tuple[pd.DataFrame, Schema]:
    """Read a user's CSV with declared column types.

    Every field is read as text first: categorical values keep their spelling
    (``01``, ``NA``, ``None`` and ``null`` are categories like any other), and a
    value is missing only when its field is empty or it is one of ``na_values``.

    Parameters
    ----------
    path : path-like
        A CSV file (``.gz`` compressed or not) whose first line names the columns.
    categorical, continuous : sequence of str
        Every column of the file in exactly one of them, or in ``ignore``.
    dropna : bool
        Drop rows with missing values (with a warning saying how many) instead of
        raising an error naming them.
    na_values : sequence of str
        Spellings that mark a missing value, in any column (e.g. ``["NA", "?"]``).
    encoding : str
        The file's text encoding.
    ignore : sequence of str
        Columns of the file to leave out (an identifier, free text).
    **read_kwargs
        Passed to :func:`pandas.read_csv` (e.g. ``sep``).

    Raises
    ------
    VrlibError
        For a missing, empty, undecodable or malformed file, duplicate column names,
        a named column the file does not have (named, with the nearest spelling), a
        column of the file named nowhere, and everything :func:`prepare` refuses (non-numeric or non-finite values in a
        continuous column, undeclared columns, missing values without ``dropna``).
    """
    path = Path(path)
    if not path.is_file():
        raise VrlibError(f"CSV file {str(path)!r} not found")
    schema = Schema(categorical, continuous)
    na = set(na_values)
    options = dict(dtype=str, keep_default_na=False, na_values=sorted(na), header=0, **read_kwargs)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding=encoding, newline="") as fh:
            df = pd.read_csv(fh, **options)
        with opener(path, "rt", encoding=encoding, newline="") as fh:
            header = pd.read_csv(fh, **{**options, "header": None, "nrows": 1, "na_values": []}).iloc[0].tolist()
    except pd.errors.EmptyDataError:
        raise VrlibError(f"CSV file {str(path)!r} is empty; its first line must name the columns") from None
    except UnicodeDecodeError as exc:
        raise VrlibError(
            f"CSV file {str(path)!r} is not {encoding} text (byte {exc.object[exc.start : exc.start + 1]!r} at "
            f"position {exc.start}); give its encoding (--encoding latin-1, or encoding=...) or convert it to UTF-8"
        ) from None
    except (pd.errors.ParserError, OSError, EOFError) as exc:
        raise VrlibError(f"CSV file {str(path)!r} could not be read: {str(exc).strip()}") from None
    duplicated = sorted({str(c) for c in header if header.count(c) > 1})
    if duplicated:
        raise VrlibError(
            f"CSV file {str(path)!r} has duplicate column name(s) {duplicated}; give every column its own name"
        )
    _check_named_columns(path, [str(c) for c in header], categorical, continuous, ignore)
    df = df.drop(columns=list(ignore))
    df = df.mask(df.apply(lambda col: col.str.strip() == ""))  # an empty field holds no value
    return prepare(df, schema, dropna=dropna), schema


def _check_named_columns(path: Path, header: list[str], categorical, continuous, ignore) -> None:
    """Name every column given that the file lacks (with its nearest spelling), then every column given nowhere."""
    import difflib

    problems = []
    for option, names in (("categorical", categorical), ("continuous", continuous), ("ignore", ignore)):
        for name in names:
            if name not in header:
                near = difflib.get_close_matches(name, header, n=1, cutoff=0.5)
                problems.append(f"{name!r} ({option})" + (f", did you mean {near[0]!r}?" if near else ""))
    if problems:
        raise VrlibError(f"CSV file {str(path)!r} has no column {'; '.join(problems)}; its columns are {header}")
    named = set(categorical) | set(continuous) | set(ignore)
    left = [c for c in header if c not in named]
    if left:
        raise VrlibError(
            f"column(s) {left} are neither categorical nor continuous (in {str(path)!r}): declare each in "
            "categorical or continuous (--categorical, --continuous), or leave it out with ignore "
            "(`vrlib rank --ignore`)"
        )
    both = sorted(set(ignore) & (set(categorical) | set(continuous)))
    if both:
        raise VrlibError(f"column(s) {both} are both declared and ignored; name each column once")
