"""Content-addressed store of expensive results: the key is a hash of everything that determines them.

A result (e.g. one synthetic dataset) is stored under ``sha256(fingerprint of the input
data, every parameter, every seed)`` as one ``.npz`` file of plain arrays plus a JSON
metadata blob; nothing is pickled, so a cache can be read by any numpy and never runs
code.  Writes are atomic (temporary file in the same folder, then :func:`os.replace`),
so a crash never leaves a half-written entry, and because each result is its own entry
an interrupted run resumes where it stopped.

Tables are stored compactly: categorical columns as small unsigned integer codes,
continuous columns as float64; :func:`decode_table` rebuilds the DataFrame with the
categories of the original data.

The root is ``$VRLIB_CACHE_DIR`` or ``.cache/vrlib`` under the project root (see
:func:`cache_dir`).
"""

from __future__ import annotations

import hashlib
import inspect
import io
import json
import os
import tempfile
import warnings
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from vrlib.data import Schema
from vrlib.errors import VrlibError

__all__ = [
    "Cache", "cache_dir", "make_key", "fingerprint_table", "serialise",
    "encode_table", "decode_table", "save_table", "load_table", "source_hash",
]  # fmt: skip

_META = "__meta__"  # name of the array holding the JSON metadata inside an entry


def cache_dir() -> Path:
    """The cache root: ``$VRLIB_CACHE_DIR`` if set, else ``<project root>/.cache/vrlib``."""
    env = os.environ.get("VRLIB_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    return Path(__file__).resolve().parents[1] / ".cache" / "vrlib"


def _canonical(value):
    """A JSON-ready form of ``value`` where equal parameters always give equal text."""
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, np.ndarray):
        return {"__array__": value.dtype.str, "shape": list(value.shape),
                "sha256": hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()}  # fmt: skip
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        # repr keeps every bit of a float, and tells 1 from 1.0.
        return {"__float__": repr(float(value))}
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Path):
        return str(value)
    raise VrlibError(
        f"cannot use a {type(value).__name__} in a cache key; pass numbers, strings, lists, dicts or arrays"
    )


def make_key(**parts) -> str:
    """The hex SHA-256 of the canonical JSON of ``parts`` (order of keywords does not matter)."""
    text = json.dumps(_canonical(parts), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def fingerprint_table(df: pd.DataFrame, schema: Schema) -> str:
    """A content hash of a table: its index, column names, category sets, codes and values."""
    h = hashlib.sha256()
    h.update(json.dumps(_canonical({"categorical": schema.categorical, "continuous": schema.continuous,
                                    "columns": [str(c) for c in df.columns]})).encode())  # fmt: skip
    h.update(pd.util.hash_pandas_object(df.index, index=False).to_numpy().tobytes())
    for c in schema.categorical:
        col = df[c]
        if not isinstance(col.dtype, pd.CategoricalDtype):
            raise VrlibError(f"column {c!r} is not categorical; pass the table through vrlib.data.prepare first")
        h.update(json.dumps([str(v) for v in col.cat.categories]).encode())
        h.update(col.cat.codes.to_numpy().astype(np.int64).tobytes())
    for c in schema.continuous:
        h.update(np.ascontiguousarray(df[c].to_numpy(dtype=np.float64)).tobytes())
    return h.hexdigest()


def _code_dtype(n_categories: int):
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
    codes = np.empty((len(df), len(schema.categorical)), dtype=_code_dtype(width))
    for j, c in enumerate(schema.categorical):
        col = df[c].array
        if isinstance(col, pd.Categorical) and (col.categories is cats[c] or col.categories.equals(cats[c])):
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
    return {c: categories[c] if isinstance(categories[c], pd.Index) else pd.Index(categories[c])
            for c in schema.categorical}  # fmt: skip


def serialise(arrays: Mapping[str, np.ndarray], meta: Mapping | None = None, compress: bool = True) -> bytes:
    """One cache entry as bytes: an ``.npz`` archive of ``arrays`` plus the JSON ``meta``.

    Readable with ``np.load(..., allow_pickle=False)``.  Compression uses zlib level 1,
    which gets most of the size reduction for a fraction of the default level's time.

    Raises
    ------
    VrlibError
        For object arrays (they would need pickle) or metadata that is not JSON.
    """
    payload = {}
    for name, arr in arrays.items():
        if name == _META:
            raise VrlibError(f"{_META!r} is reserved for the metadata")
        arr = np.asarray(arr)
        if arr.dtype.hasobject:
            raise VrlibError(f"array {name!r} has dtype object; store numbers or fixed-width strings (no pickle)")
        payload[name] = arr
    try:
        text = json.dumps(dict(meta or {}), sort_keys=True)
    except TypeError as exc:
        raise VrlibError(f"cache metadata must be JSON-serialisable ({exc})") from None
    payload[_META] = np.frombuffer(text.encode(), dtype=np.uint8)
    buf = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(buf, "w", compression=method, compresslevel=1 if compress else None) as zf:
        for name, arr in payload.items():
            with zf.open(f"{name}.npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, arr, allow_pickle=False)
    return buf.getvalue()


def _write_all(fh, payload: bytes) -> None:
    fh.write(payload)


class Cache:
    """A folder of content-addressed entries, each one ``.npz`` file of arrays plus JSON metadata.

    Parameters
    ----------
    root : path-like, optional
        Folder of the store; default :func:`cache_dir` at construction time.
    namespace : str
        Sub-folder, so that different kinds of results can be listed or cleared apart.
    compress : bool
        Store entries zip-compressed (about 4x smaller for synthetic Adult datasets,
        about 1.5 ms per entry).
    """

    def __init__(self, root=None, namespace: str = "results", compress: bool = True):
        if not namespace or "/" in namespace or namespace.startswith("."):
            raise VrlibError(f"namespace must be a plain folder name (got {namespace!r})")
        self.root = Path(root).expanduser() if root is not None else cache_dir()
        self.namespace = namespace
        self.compress = compress

    @property
    def folder(self) -> Path:
        return self.root / self.namespace

    def path(self, key: str) -> Path:
        """Where the entry ``key`` lives (two-character fan-out keeps folders small)."""
        if not isinstance(key, str) or len(key) < 8 or not all(ch in "0123456789abcdef" for ch in key):
            raise VrlibError(f"cache keys are hex digests from make_key (got {key!r})")
        return self.folder / key[:2] / f"{key}.npz"

    def __contains__(self, key: str) -> bool:
        return self.path(key).is_file()

    def save(self, key: str, arrays: Mapping[str, np.ndarray], meta: Mapping | None = None) -> Path:
        """Store ``arrays`` (and JSON-able ``meta``) under ``key``, atomically.

        Raises
        ------
        VrlibError
            For object arrays (they would need pickle) or metadata that is not JSON.
        """
        return self.write(key, serialise(arrays, meta, self.compress))

    def write(self, key: str, payload: bytes) -> Path:
        """Store an entry made by :func:`serialise` (e.g. in a worker process) under ``key``, atomically.

        The bytes go to a temporary file in the entry's folder, which is then renamed
        over the entry: readers see no entry or the whole entry, never part of one.
        There is no fsync: a file torn by a power cut is unreadable, and :meth:`load`
        treats unreadable entries as missing, so they are simply made again.
        """
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".npz")
        try:
            with os.fdopen(fd, "wb") as fh:
                _write_all(fh, payload)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
        return path

    def load(self, key: str) -> tuple[dict[str, np.ndarray], dict]:
        """``(arrays, meta)`` stored under ``key``.

        Raises
        ------
        KeyError
            When there is no (readable) entry for ``key``.
        """
        path = self.path(key)
        try:
            with np.load(path, allow_pickle=False) as npz:
                arrays = {name: npz[name] for name in npz.files}
        except FileNotFoundError:
            raise KeyError(key) from None
        except (zipfile.BadZipFile, ValueError, EOFError, OSError) as exc:
            # Cannot come from our atomic writes; a damaged disk or a foreign file: recompute.
            warnings.warn(f"ignoring unreadable cache entry {path} ({exc})", RuntimeWarning, stacklevel=2)
            raise KeyError(key) from None
        meta = json.loads(arrays.pop(_META, np.zeros(0, np.uint8)).tobytes().decode() or "{}")
        return arrays, meta

    def get(self, key: str, default=None):
        """``(arrays, meta)`` for ``key``, or ``default`` when absent."""
        try:
            return self.load(key)
        except KeyError:
            return default

    def keys(self) -> Iterator[str]:
        """Keys of the complete entries (temporary files of interrupted writes are skipped)."""
        if not self.folder.is_dir():
            return
        for p in sorted(self.folder.glob("??/*.npz")):
            if not p.name.startswith("."):
                yield p.stem

    def __len__(self) -> int:
        return sum(1 for _ in self.keys())

    def remove_temporary(self) -> int:
        """Delete leftovers of interrupted writes; returns how many were removed."""
        n = 0
        for p in self.folder.glob("??/.tmp-*"):
            p.unlink(missing_ok=True)
            n += 1
        return n

    def __repr__(self) -> str:
        return f"Cache(root={str(self.root)!r}, namespace={self.namespace!r})"


def save_table(cache: Cache, key: str, df: pd.DataFrame, schema: Schema, categories=None, meta=None) -> Path:
    """Store a table under ``key`` as integer codes + float64 (see :func:`encode_table`)."""
    meta = dict(meta or {})
    meta["columns"] = [str(c) for c in df.columns]
    return cache.save(key, encode_table(df, schema, categories), meta)


def load_table(cache: Cache, key: str, schema: Schema, categories: Mapping) -> pd.DataFrame:
    """The table stored by :func:`save_table`, rebuilt with ``categories``.

    Raises
    ------
    KeyError
        When there is no entry for ``key``.
    """
    arrays, meta = cache.load(key)
    return decode_table(arrays["codes"], arrays["continuous"], schema, categories, columns=meta.get("columns"))


def source_hash(cls) -> str:
    """SHA-256 of the source files defining ``cls`` and its bases (classes without a source file are skipped).

    Part of the key of results computed by ``cls``, so that editing the code invalidates them.
    """
    h = hashlib.sha256()
    files = set()
    for klass in cls.__mro__:
        if klass is object:
            continue
        try:
            files.add(inspect.getsourcefile(klass))
        except (TypeError, OSError):
            continue
    for path in sorted(f for f in files if f):
        try:
            h.update(Path(path).read_bytes())
        except OSError:
            continue
    return h.hexdigest()
