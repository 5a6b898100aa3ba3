"""Real tables and their schema: where the files are, how they are checked and read.

A table is a pandas DataFrame plus a :class:`Schema` naming its categorical and
continuous columns.  Categorical columns are pandas ``category`` columns (sorted
categories), continuous ones ``float64``; :func:`prepare` enforces this and rejects
NaNs, so every module downstream can rely on it.

Files are looked for in ``$VRLIB_DATA_DIR``, then in the project's ``data/`` folder;
a missing file is downloaded from its public source when the network allows.  Every
file is checked against its SHA-256 (or, for the full census file, its git blob id)
before it is read.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
import tempfile
import urllib.request
import warnings
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from vrlib.errors import VrlibError

DATASETS = ("adult", "census", "california")


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
            f"dropped {int(dropped.sum())} of {len(df)} row(s) with missing values ({_rows(df.index[dropped])})",
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
                    f"continuous column {c!r} has non-numeric values {examples} in row(s) {_rows(col.index[bad])}; "
                    "declare it categorical, clean it, or name its missing-value spellings (na_values / --na-values)"
                )
            out[c] = numbers.astype("float64")
            _check_finite(c, out[c])
    return pd.DataFrame(out, index=df.index)


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


# --------------------------------------------------------------------------- files


@dataclass(frozen=True)
class DataFile:
    """A real file: its name, checksum and public source."""

    name: str
    sha256: str | None
    url: str | None
    member: str | None = None  # path inside the downloaded archive
    git_blob: str | None = None  # alternative check (git hash-object) when no SHA-256 is known


FILES = {
    f.name: f
    for f in [
        DataFile(
            "adult.data",
            "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
            "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.data",
        ),
        DataFile(
            "adult.test",
            "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
            "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.test",
        ),
        DataFile(
            "cal_housing.data",
            "a2b44dcc7e1c9091b43c4f458b25cbd1f7e8068d08edd26bc4703108d3fa6214",
            # The StatLib archive as scikit-learn fetches it.
            "https://ndownloader.figshare.com/files/5976036",
            member="CaliforniaHousing/cal_housing.data",
        ),
        DataFile(
            "2011 Census Microdata Teaching File.csv",
            None,
            "https://www.ons.gov.uk/file?uri=/census/2011census/2011censusdata/censusmicrodata/"
            "microdatateachingfile/rft-teaching-file.zip",
            member="2011 Census Microdata Teaching File.csv",
            git_blob="7cee9ce199213a9af59f052af6c62bcc0d5250e9",
        ),
        DataFile(
            "uk_census2011_teaching_random10000.csv.gz",
            "f8d1cf2195ee82980e35a80cadd3ccb23fc9bd3c105cdcc0e150589fbf0896e0",
            None,
        ),
        DataFile(
            "uk_census2011_teaching_first50000.csv.gz",
            "5b6b961adba57009d5123d5afca619cb5cf6b898665cf152d61c941b93a75ad2",
            None,
        ),
    ]
}


def project_data_dir() -> Path:
    """The project's own ``data/`` folder (git-ignored apart from its README)."""
    return Path(__file__).resolve().parents[1] / "data"


def search_dirs() -> list[Path]:
    """Folders searched for data files, in order: ``$VRLIB_DATA_DIR``, then ``data/``."""
    dirs = []
    env = os.environ.get("VRLIB_DATA_DIR")
    if env:
        dirs.append(Path(env).expanduser())
    dirs.append(project_data_dir())
    return dirs


_verified: set[tuple] = set()  # (path, size, mtime, expected checksum) already checked in this process


def _mismatch(data: bytes, spec: DataFile) -> str | None:
    """None when ``data`` has the checksum of ``spec``, else what was found against what was expected."""
    if spec.sha256 is not None:
        got, want, kind = hashlib.sha256(data).hexdigest(), spec.sha256, "SHA-256"
    elif spec.git_blob is not None:
        got, want, kind = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest(), spec.git_blob, "git blob id"
    else:
        return None
    return None if got == want else f"{kind} is {got}, expected {want}"


def _where_to_get(spec: DataFile) -> str:
    if spec.url is None:
        return (
            "this file has no public download: it comes with the project's shared data folder, "
            "so copy it again from there into VRLIB_DATA_DIR (see data/README.md)"
        )
    return f"delete it and fetch it again ({spec.url})"


def verify(path: Path, spec: DataFile) -> None:
    """Raise :class:`VrlibError` unless ``path`` has the checksum of ``spec``."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns, spec.sha256, spec.git_blob)
    if key in _verified:
        return
    problem = _mismatch(path.read_bytes(), spec)
    if problem:
        raise VrlibError(
            f"checksum mismatch for {path}: {problem}; the file is corrupt or a different version: "
            + _where_to_get(spec)
        )
    _verified.add(key)


def find_file(name: str, download: bool = True) -> Path:
    """Path of the verified data file ``name``, downloading it when it is missing.

    Raises
    ------
    VrlibError
        When the file is in none of :func:`search_dirs` and cannot be downloaded.
    """
    spec = FILES.get(name)
    if spec is None:
        raise VrlibError(f"unknown data file {name!r}; known files: {sorted(FILES)}")
    for folder in search_dirs():
        path = folder / name
        if path.is_file():
            verify(path, spec)
            return path
    where = " or ".join(str(d) for d in search_dirs())
    env = os.environ.get("VRLIB_DATA_DIR")
    if env and not Path(env).expanduser().is_dir():
        where += f" (VRLIB_DATA_DIR={env!r} is not a folder)"
    if not download or spec.url is None:
        source = (
            "it has no public download: it comes with the project's shared data folder"
            if spec.url is None
            else f"its public source is {spec.url}"
        )
        raise VrlibError(
            f"data file {name!r} not found in {where}; set VRLIB_DATA_DIR to the folder that holds it "
            f"({source}; see data/README.md)"
        )
    target = project_data_dir() / name
    try:
        _download(spec, target)
    except OSError as exc:
        raise VrlibError(
            f"data file {name!r} not found in {where}, and downloading it from {spec.url} failed ({exc}); "
            "download it by hand into one of those folders, or set VRLIB_DATA_DIR (see data/README.md)"
        ) from None
    verify(target, spec)
    return target


def _download(spec: DataFile, target: Path) -> None:
    """Fetch ``spec``, check it, then move it into ``target`` (nothing unchecked or partial ever lands).

    Raises
    ------
    OSError
        When the download or the extraction fails.
    VrlibError
        When the payload does not have the expected checksum (nothing is written).
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    with urllib.request.urlopen(spec.url, timeout=30) as response:
        payload = response.read()
    if spec.member is not None:
        payload = _extract(payload, spec.member)
    problem = _mismatch(payload, spec)
    if problem:
        raise VrlibError(
            f"the file downloaded from {spec.url} is not the expected {spec.name!r} ({problem}); "
            f"nothing was saved: the source may have changed, so get {spec.name!r} by hand (see data/README.md) "
            "and put it in VRLIB_DATA_DIR"
        )
    atomic_write_bytes(target, payload)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder, then rename:
    readers see the old file or the new one, never half of it; the temporary goes on failure."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _extract(payload: bytes, member: str) -> bytes:
    """``member`` of a downloaded zip or tar archive; any archive error becomes an OSError."""
    buf = io.BytesIO(payload)
    try:
        if zipfile.is_zipfile(buf):
            with zipfile.ZipFile(buf) as zf:
                names = [n for n in zf.namelist() if n.endswith(member)]
                if not names:
                    raise OSError(f"{member} not in the downloaded archive")
                return zf.read(names[0])
        buf.seek(0)
        with tarfile.open(fileobj=buf) as tf:
            fh = tf.extractfile(member)
            if fh is None:
                raise OSError(f"{member} not in the downloaded archive")
            return fh.read()
    except (zipfile.BadZipFile, tarfile.TarError, KeyError, EOFError, zlib.error, ValueError) as exc:
        raise OSError(f"the downloaded archive could not be read ({type(exc).__name__}: {exc})") from None


# --------------------------------------------------------------------------- loaders

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
    variants = ("auto", "full", "random10000", "first50000")
    if variant not in variants:
        raise VrlibError(f"unknown census variant {variant!r}; choose one of {variants}")
    full = "2011 Census Microdata Teaching File.csv"
    if variant == "auto":
        try:
            find_file(full, download=False)
            variant = "full"
        except VrlibError:
            variant = "random10000"
            warnings.warn(
                "the full UK Census teaching file is absent: using its 10,000 random-record subset "
                f"(put {full!r} in VRLIB_DATA_DIR for the full 569,741 rows)",
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


# --------------------------------------------------------------------------- TableGAN-MCA pre-processing

MCA_MARRIED = ("Married-civ-spouse", "Married-AF-spouse")  # -> "Couple"; every other status -> "Single"
MCA_CAPITAL_HIGH = {"capital-gain": 7647.23, "capital-loss": 1874.19}  # above: "high"; 0: "zero"; else "low"
MCA_HOURS_BINS = 45


def preprocess_adult_mca(df: pd.DataFrame, schema: Schema) -> tuple[pd.DataFrame, Schema]:
    """Adult as Hu et al. (TableGAN-MCA, §5.2) pre-processed it: 1 continuous column, 11 categorical, the label.

    The authors' public pre-processing, written again from its description:

    * ``age`` stays continuous (whole years);
    * ``fnlwgt`` and ``education`` are dropped (``education-num`` carries the same
      information), ``education-num`` becomes categorical (16 levels);
    * ``capital-gain`` / ``capital-loss`` become 3 levels: ``zero``, ``low``, ``high``
      (above 7,647.23 and 1,874.19 respectively);
    * ``marital-status`` becomes 2 levels: ``Couple`` (married, spouse present or in
      the armed forces) and ``Single`` (every other status);
    * ``native-country`` becomes 2 levels: ``US`` and ``Non-US``;
    * ``hours-per-week`` falls into 45 equal-width bins between its minimum and
      maximum (the bin index is the category);
    * ``income`` is the label.

    The paper counts "1 numerical feature, 12 categorical features and 1 binary label";
    the authors' code has 13 columns: age plus 12 categorical ones, the label among them.

    Parameters
    ----------
    df, schema : the output of :func:`load_adult` (complete rows)

    Returns
    -------
    df : DataFrame
        13 columns, in the authors' order; index kept.
    schema : Schema
    """
    needed = [
        "age",
        "workclass",
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
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise VrlibError(f"preprocess_adult_mca needs Adult's columns; missing {missing} (load it with load('adult'))")
    if df[needed].isna().any().any():
        raise VrlibError("preprocess_adult_mca needs complete rows: load Adult without keep_missing")
    out = pd.DataFrame(index=df.index)
    out["age"] = df["age"].astype("float64")
    out["workclass"] = df["workclass"].astype(str)
    out["education-num"] = df["education-num"].astype(int)
    out["marital-status"] = np.where(df["marital-status"].astype(str).isin(MCA_MARRIED), "Couple", "Single")
    for c in ("occupation", "relationship", "race", "sex"):
        out[c] = df[c].astype(str)
    for c, high in MCA_CAPITAL_HIGH.items():
        v = df[c].to_numpy(dtype=np.float64)
        out[c] = np.where(v == 0, "zero", np.where(v > high, "high", "low"))
    hours = df["hours-per-week"].to_numpy(dtype=np.float64)
    edges = np.linspace(hours.min(), hours.max(), MCA_HOURS_BINS + 1)
    out["hours-per-week"] = np.searchsorted(edges[1:-1], hours, side="right")
    out["native-country"] = np.where(df["native-country"].astype(str) == "United-States", "US", "Non-US")
    out["income"] = df["income"].astype(str)
    # age keeps the input schema's public domain, so PrivBayes stays ε-DP on the pre-processed table.
    new_schema = Schema([c for c in out.columns if c != "age"], ["age"], dict(schema.subset(["age"]).domains))
    return prepare(out, new_schema), new_schema


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
    path, categorical=(), continuous=(), dropna: bool = False, na_values=(), encoding: str = "utf-8", **read_kwargs
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
        Every column of the file in exactly one of them.
    dropna : bool
        Drop rows with missing values (with a warning saying how many) instead of
        raising an error naming them.
    na_values : sequence of str
        Spellings that mark a missing value, in any column (e.g. ``["NA", "?"]``).
    encoding : str
        The file's text encoding.
    **read_kwargs
        Passed to :func:`pandas.read_csv` (e.g. ``sep``).

    Raises
    ------
    VrlibError
        For a missing, empty, undecodable or malformed file, duplicate column names,
        and everything :func:`prepare` refuses (non-numeric or non-finite values in a
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
    df = df.mask(df.apply(lambda col: col.str.strip() == ""))  # an empty field holds no value
    return prepare(df, schema, dropna=dropna), schema


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


__all__ = [
    "DATASETS",
    "Schema",
    "prepare",
    "load",
    "load_adult",
    "load_census",
    "load_california",
    "quantile_domain",
    "ADULT_DOMAIN",
    "read_csv",
    "find_file",
    "search_dirs",
    "verify",
    "atomic_write_bytes",
    "FILES",
    "DataFile",
    "preprocess_adult_mca",
    "train_test_split",
]
