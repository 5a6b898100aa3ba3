"""Content-addressed store of expensive results: the key is a hash of everything that determines them.

A result (e.g. one synthetic dataset) is stored under ``sha256(fingerprint of the input
data, every parameter, every seed)`` as one ``.npz`` file of plain arrays plus a JSON
metadata blob; nothing is pickled, so a cache can be read by any numpy and never runs
code.  Writes are atomic (temporary file in the same folder, then :func:`os.replace`),
so a crash never leaves a half-written entry, and because each result is its own entry
an interrupted run resumes where it stopped.

Each entry also records the versions of the packages that made it
(:mod:`vrlib.versions`); one made under other versions is treated as missing and made
again, so a run never mixes results of two environments (a newer scikit-learn can move
a TVAE, hence every AUC after it).  The versions are not part of the key, so an upgrade
renews entries in place instead of leaving the old ones beside the new.  Entries written
before this record are read as they are.

There is one way to read: :meth:`Cache.get` returns the entry or None.  An entry that
cannot be read (torn by a power cut, damaged on disk) is reported with its path, moved
aside, and made again by the caller; nothing tests for an entry and then loads it.
:func:`get_or_make` (one result) and :func:`get_or_make_many` (many, made in parallel)
are the one way to cache: read, check, make what is missing, save.  Workers never touch
the cache: they return results, and the process that asked for them writes the
entries, so a cluster needs no disk shared with the client.

Tables are stored compactly (:func:`save_table`, :func:`get_table`) with the codec of
:mod:`vrlib.encoding`: categorical columns as small unsigned integer codes, continuous
columns as float64, rebuilt with the categories of the original data.

The root is ``$VRLIB_CACHE_DIR`` or ``.cache/vrlib`` under the project root (see
:func:`cache_dir`).
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import io
import json
import os
import tempfile
import warnings
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from vrlib import parallel
from vrlib.data import Schema
from vrlib.encoding import decode_table, encode_table
from vrlib.errors import VrlibError
from vrlib.versions import package_versions

__all__ = [
    "Cache",
    "cache_dir",
    "make_key",
    "fingerprint_table",
    "serialise",
    "get_or_make",
    "get_or_make_many",
    "save_table",
    "get_table",
    "source_hash",
    "CacheWarning",
]

_META = "__meta__"  # name of the array holding the JSON metadata inside an entry
_MADE_WITH = "__made_with__"  # name of the array holding the package versions that made an entry
_RESERVED = (_META, _MADE_WITH)


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
        return {
            "__array__": value.dtype.str,
            "shape": list(value.shape),
            "sha256": hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest(),
        }
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
    """A content hash of a table: its schema (public domains included), index, column names, category sets, codes and values."""
    h = hashlib.sha256()
    # the public domains too: the Bayesian networks' bins come from them
    h.update(
        json.dumps(
            _canonical(
                {
                    "categorical": schema.categorical,
                    "continuous": schema.continuous,
                    "columns": [str(c) for c in df.columns],
                    "domains": schema.domains,
                }
            )
        ).encode()
    )
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


def serialise(arrays: Mapping[str, np.ndarray], meta: Mapping | None = None, compress: bool = True) -> bytes:
    """One cache entry as bytes: an ``.npz`` archive of ``arrays`` plus the JSON ``meta``.

    Readable with ``np.load(..., allow_pickle=False)``.  Compression uses zlib level 1,
    which gets most of the size reduction for a fraction of the default level's time, and
    skips arrays that a sample shows do not compress.

    Raises
    ------
    VrlibError
        For object arrays (they would need pickle) or metadata that is not JSON.
    """
    payload = {}
    for name, arr in arrays.items():
        if name in _RESERVED:
            raise VrlibError(f"{name!r} is a reserved name in a cache entry")
        arr = np.asarray(arr)
        if arr.dtype.hasobject:
            raise VrlibError(f"array {name!r} has dtype object; store numbers or fixed-width strings (no pickle)")
        payload[name] = arr
    try:
        payload[_META] = _json_bytes(dict(meta or {}))
    except TypeError as exc:
        raise VrlibError(f"cache metadata must be JSON-serialisable ({exc})") from None
    payload[_MADE_WITH] = _json_bytes(package_versions())
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, arr in payload.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, arr, allow_pickle=False)
            data = member.getbuffer()
            info = zipfile.ZipInfo(f"{name}.npy")  # fixed date: the same arrays give the same bytes
            info.compress_type = zipfile.ZIP_DEFLATED if compress and _compressible(arr, data) else zipfile.ZIP_STORED
            zf.writestr(info, data, compresslevel=1)
    return buf.getvalue()


def _compressible(arr: np.ndarray, data, probe: int = 4096) -> bool:
    """Whether to deflate ``data`` (the bytes of ``arr``): yes, unless floats whose sample shrinks by under 15 %.

    Floats drawn at random (BayNet's values inside a bin) barely compress, and deflating
    them costs more than the rest of a small dataset's fit; codes and repeated values do.
    """
    if arr.dtype.kind != "f":
        return True
    sample = bytes(data[:probe])
    return len(zlib.compress(sample, 1)) < 0.85 * len(sample)


def _write_all(fh, payload: bytes) -> None:
    fh.write(payload)


class CacheWarning(RuntimeWarning):
    """A cache entry cannot be used (unreadable, so set aside; or made under other package versions) and will be computed again."""


def _json_bytes(value) -> np.ndarray:
    """``value`` as JSON (keys sorted: the same value gives the same bytes), one byte per array element."""
    return np.frombuffer(json.dumps(value, sort_keys=True).encode(), dtype=np.uint8)


def _read_entry(fh) -> tuple[dict[str, np.ndarray], dict, dict | None]:
    """``(arrays, meta, made_with)`` of an entry made by :func:`serialise`; raises on any damage or missing metadata.

    ``made_with`` is None for an entry written before entries recorded their package versions.
    """
    with np.load(fh, allow_pickle=False) as npz:
        if not isinstance(npz, np.lib.npyio.NpzFile):
            raise ValueError("not an .npz archive")
        arrays = {name: npz[name] for name in npz.files}  # reads every member: zip CRCs are checked
    if _META not in arrays:
        raise ValueError("the entry has no metadata")
    meta = json.loads(arrays.pop(_META).tobytes().decode())
    if not isinstance(meta, dict):
        raise ValueError(f"metadata is a {type(meta).__name__}, not an object")
    made_with = json.loads(arrays.pop(_MADE_WITH).tobytes().decode()) if _MADE_WITH in arrays else None
    return arrays, meta, made_with


_WARNED_VERSIONS: set[Path] = set()  # folders whose other-version entries were reported


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
        There is no fsync: a file torn by a power cut is unreadable, and :meth:`get`
        sets unreadable entries aside and treats them as missing, so they are made again.
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

    def get(self, key: str, decode: Callable | None = None):
        """The entry ``key``: ``(arrays, meta)``, or ``decode(arrays, meta)``; None when absent or unreadable.

        This is the one way to read the cache.  An entry that cannot be read or
        decoded (a torn write after a power cut, a damaged disk, a foreign file: any
        exception while reading, parsing the metadata or running ``decode``) is
        reported once with a :class:`CacheWarning` naming its file, moved aside to
        ``<file>.corrupt`` (so it is neither read again nor lost for inspection), and
        treated as missing, so the caller computes the result again.  Every entry
        carries its metadata; one without it is unreadable too.  An entry made under
        other package versions is missing as well (said once per folder with a
        :class:`CacheWarning`) and is overwritten when made again.

        Parameters
        ----------
        key : str
        decode : callable, optional
            ``decode(arrays, meta)`` builds the caller's object (e.g. a table) from
            the entry; its errors count as an unreadable entry.
        """
        path = self.path(key)
        try:
            fh = open(path, "rb")
        except FileNotFoundError:
            return None
        with fh:
            seen = os.fstat(fh.fileno())
            try:
                arrays, meta, made_with = _read_entry(fh)
                if made_with is not None and made_with != package_versions():
                    self._other_versions(path, made_with)
                    return None
                return (arrays, meta) if decode is None else decode(arrays, meta)
            except Exception as exc:  # any damage, whatever layer notices it
                reason = f"{type(exc).__name__}: {exc}"
        self._set_aside(path, seen, reason)
        return None

    def _other_versions(self, path: Path, made_with: dict) -> None:
        """Say, once per folder, that entries made under other package versions are made again."""
        if self.folder in _WARNED_VERSIONS:
            return
        _WARNED_VERSIONS.add(self.folder)
        now = package_versions()
        differ = ", ".join(
            f"{k} {made_with.get(k)} (now {now.get(k)})"
            for k in sorted(set(now) | set(made_with))
            if made_with.get(k) != now.get(k)
        )
        warnings.warn(
            f"cache entries in {self.folder} were made with other package versions ({differ}), e.g. {path.name}; "
            "they are computed again with these (see constraints.txt for the versions of the committed outputs)",
            CacheWarning,
            stacklevel=3,
        )

    def _set_aside(self, path: Path, seen: os.stat_result, reason: str) -> None:
        """Move an unreadable entry to ``<file>.corrupt`` and say so (once: it is gone from its place)."""
        where = path.with_name(path.name + ".corrupt")
        try:
            now = os.stat(path)
            # Another process may have replaced the damaged file by a good one since we opened it.
            if (now.st_ino, now.st_size, now.st_mtime_ns) != (seen.st_ino, seen.st_size, seen.st_mtime_ns):
                return
            os.replace(path, where)
            moved = f"moved to {where.name}"
        except FileNotFoundError:  # another reader moved it first
            moved = "moved aside by another process"
        except OSError as exc:
            moved = f"could not be moved aside ({exc})"
        warnings.warn(
            f"unreadable cache entry {path} ({reason[:200]}); {moved}, computing it again", CacheWarning, stacklevel=3
        )

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


def get_or_make(cache: Cache | None, key: str, make: Callable, decode: Callable | None = None):
    """The value of the entry ``key``: read from ``cache``, else made by ``make``, saved, and returned.

    The one way to cache a single result (:func:`get_or_make_many` makes many in parallel).

    Parameters
    ----------
    cache : Cache or None
        None: nothing is read or saved, ``make`` runs.
    key : str
        From :func:`make_key`, holding everything that determines the result.
    make : callable
        ``make()`` returns the entry, ``(arrays, meta)`` as :meth:`Cache.save` takes them.
    decode : callable, optional
        ``decode(arrays, meta)`` builds the value and checks it (an entry it refuses is
        unreadable, see :meth:`Cache.get`); a fresh entry goes through it too, so the value
        is the same whether it was read or made.  Default: ``(arrays, meta)``.
    """
    if cache is not None:
        value = cache.get(key, decode)
        if value is not None:
            return value
    arrays, meta = make()
    if cache is not None:
        cache.save(key, arrays, meta)
    return (arrays, meta) if decode is None else decode(arrays, meta)


def get_or_make_many(
    cache: Cache | None,
    keys: Sequence[str],
    make: Callable,
    plan: Callable,
    *,
    decode: Callable | Sequence[Callable] | None = None,
    n_jobs: int | None = None,
    scheduler=None,
    desc: str | None = None,
    progress: bool = True,
) -> list:
    """The value of every entry of ``keys``: read from ``cache``, else made in parallel and saved as each task returns.

    Equal keys are read or made once (and share their value).  The missing entries are
    made by :func:`vrlib.parallel.run`, and each task's entries are saved by this process
    as soon as the task returns, so an interrupted run keeps every finished task and the
    workers need no disk shared with this process.

    Parameters
    ----------
    cache : Cache or None
        None: nothing is read or saved, every entry is made.
    keys : sequence of str
    make : callable
        ``make(task)`` runs one task (in a worker: a module-level function) and returns
        its entries, one per position it makes (in the order :obj:`plan` gave them).  An
        entry is ``(arrays, meta)``, saved with :meth:`Cache.save`, or ``(arrays, meta,
        payload)`` with ``payload`` the entry as :func:`serialise` makes it in the worker
        (so compression runs there), written as it is, or None for a result not worth
        keeping (returned, never saved).
    plan : callable
        ``plan(missing)`` returns the tasks that make the missing entries, as a list of
        ``(task, positions)``; ``missing`` lists the positions in ``keys`` of the entries
        to make (the first of equal keys), each of which must be in one task.
    decode : callable or sequence of callables, optional
        ``decode(arrays, meta)`` builds and checks the value (as in :func:`get_or_make`);
        one for every key, or a sequence with one per key.  Default: ``(arrays, meta)``.
    n_jobs, scheduler, desc, progress
        Where and how the tasks run (see :func:`vrlib.parallel.run`).

    Returns
    -------
    list
        The value of every key, in the order of ``keys``.
    """
    keys = list(keys)
    decoders = list(decode) if isinstance(decode, Sequence) else [decode] * len(keys)
    if len(decoders) != len(keys):
        raise VrlibError(f"{len(decoders)} decoders for {len(keys)} keys; give one decoder, or one per key")
    first: dict[str, int] = {}
    for i, key in enumerate(keys):
        first.setdefault(key, i)
    values: dict[str, object] = {}
    for key, i in first.items():
        value = cache.get(key, decoders[i]) if cache is not None else None
        if value is not None:
            values[key] = value
    missing = [i for key, i in first.items() if key not in values]
    tasks = plan(missing) if missing else []
    planned = sorted(i for _, positions in tasks for i in positions)
    if planned != sorted(missing):
        raise VrlibError("plan must put every missing entry in exactly one task")

    def keep(t: int, entries) -> None:
        positions = tasks[t][1]
        entries = list(entries)
        if len(entries) != len(positions):
            raise VrlibError(f"a task returned {len(entries)} entries for {len(positions)} positions")
        for i, entry in zip(positions, entries):
            arrays, meta, *payload = entry
            if cache is not None:
                if not payload:
                    cache.save(keys[i], arrays, meta)
                elif payload[0] is not None:
                    cache.write(keys[i], payload[0])
            values[keys[i]] = (arrays, meta) if decoders[i] is None else decoders[i](arrays, meta)

    parallel.run(
        make,
        [task for task, _ in tasks],
        n_jobs=n_jobs,
        scheduler=scheduler,
        desc=desc,
        progress=progress,
        on_result=keep,
    )
    return [values[key] for key in keys]


def save_table(cache: Cache, key: str, df: pd.DataFrame, schema: Schema, categories=None, meta=None) -> Path:
    """Store a table under ``key`` as integer codes + float64 (see :func:`vrlib.encoding.encode_table`)."""
    meta = dict(meta or {})
    meta["columns"] = [str(c) for c in df.columns]
    return cache.save(key, encode_table(df, schema, categories), meta)


def get_table(cache: Cache, key: str, schema: Schema, categories: Mapping) -> pd.DataFrame | None:
    """The table stored by :func:`save_table`, rebuilt with ``categories``; None when absent or unreadable."""

    def decode(arrays, meta):
        return decode_table(arrays["codes"], arrays["continuous"], schema, categories, columns=meta["columns"])

    return cache.get(key, decode)


def source_hash(*code) -> str:
    """SHA-256 of the code in the source files that define ``code`` (classes, functions or modules).

    A class counts with the files of all its bases (those without a source file, such
    as builtins, are skipped) and of the modules it lists in a ``source_dependencies``
    attribute (code it calls from elsewhere); a function or a method with its module's file.  Put it
    in the key of every cached result the code shapes, so that editing the code
    invalidates the results it made before.

    Each file counts by its syntax tree (:func:`ast.dump` of :func:`ast.parse`), not its
    bytes: any change to code, constants or docstrings gives a new hash, while comments,
    line breaks, spacing and quotes do not, so that reformatting the code keeps its
    results.  The tree's layout belongs to the Python version, which may change it.
    """
    files = set()
    for obj in code:
        items = (*obj.__mro__, *getattr(obj, "source_dependencies", ())) if inspect.isclass(obj) else (obj,)
        for item in items:
            if item is object:
                continue
            try:
                f = inspect.getsourcefile(item)
            except (TypeError, OSError):
                continue
            if f:
                files.add(f)
    h = hashlib.sha256()
    for path in sorted(files, key=lambda f: Path(f).name + f):
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue
        h.update(_tree_digest(data).encode())
    return h.hexdigest()


_TREE_DIGESTS: dict[str, str] = {}  # sha256 of a file's bytes -> sha256 of its syntax tree (parsing is the slow part)


def _tree_digest(data: bytes) -> str:
    """SHA-256 of the syntax tree of the Python source ``data`` (of the bytes, if it does not parse)."""
    raw = hashlib.sha256(data).hexdigest()
    digest = _TREE_DIGESTS.get(raw)
    if digest is None:
        try:
            text = ast.dump(ast.parse(data)).encode()
        except (SyntaxError, ValueError):
            text = data
        digest = _TREE_DIGESTS[raw] = hashlib.sha256(text).hexdigest()
    return digest
