"""Synthetic data, made in one place: fit a generator on a table with a seed, sample n rows, cached, spread.

Every experiment family (the privacy games of achilles and lost, the DOMIAS
experiments, the collision attacks) asks :func:`synthesize` for its synthetic datasets.
A :class:`SynthesisJob` says what one dataset is: the training table (or some rows of
a larger one), the generator and its parameters, the fit and sample seeds and the
number of rows.  Its :attr:`~SynthesisJob.key` hashes exactly that, plus the source
code of the generator and of this module, so two jobs that would make the same
dataset share one cache entry, and editing a generator invalidates what it made.

Work goes through :func:`vrlib.parallel.run` (joblib processes or a Dask cluster).
Workers only fit and sample: they return the encoded dataset, and the serialised
cache entry, to the calling process, which writes the cache.  So a Dask cluster
needs no disk shared with the client, and an interrupted run keeps every dataset
that was finished (each is written as soon as it arrives).
"""

from __future__ import annotations

import copy
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from importlib import import_module

import numpy as np
import pandas as pd

from vrlib import parallel
from vrlib.cache import Cache, fingerprint_table, get_or_make_many, make_key, serialise, source_hash
from vrlib.coded import CodedTable
from vrlib.data import Schema
from vrlib.encoding import decode_table, encode_table
from vrlib.errors import VrlibError
from vrlib.generators.base import Generator

__all__ = [
    "GeneratorSpec",
    "SynthesisJob",
    "synthesize",
    "synthesize_tables",
    "dataset_key",
    "resolve_cache",
    "NAMESPACE",
]

NAMESPACE = "synthetic"  # where synthetic datasets live in the cache


class GeneratorSpec:
    """A generator to build afresh for every dataset (in any worker); picklable; knows its cache identity.

    Parameters
    ----------
    generator : str or generator instance
        A name for :func:`vrlib.generators.get_generator`, or an unfitted object with
        ``fit(df, schema, seed)`` and ``sample(n, seed)`` (deep-copied for each dataset;
        its ``get_params()``, or else its public attributes, enter the identity).
    params : dict, optional
        Constructor parameters of a generator given by name.

    Attributes
    ----------
    identity : dict
        Name (or class), parameters and a hash of the source files of the
        generator's class hierarchy: part of every dataset key.
    """

    def __init__(self, generator, params: Mapping | None = None):
        if isinstance(generator, GeneratorSpec):
            if params:
                raise VrlibError("params are for a generator given by name; this one is already specified")
            self.name, self.params, self.prototype, self.identity = (
                generator.name,
                generator.params,
                generator.prototype,
                generator.identity,
            )
            return
        if isinstance(generator, str):
            from vrlib.generators import REGISTRY

            if generator not in REGISTRY:
                raise VrlibError(f"unknown generator {generator!r}; choose one of {sorted(REGISTRY)}")
            self.name, self.params, self.prototype = generator, dict(params or {}), None
            module, cls_name = REGISTRY[generator].split(":")
            cls = getattr(import_module(f"vrlib.generators.{module}"), cls_name)
            self.identity = {"name": generator, "params": self.params, "source": source_hash(cls)}
        else:
            if params:
                raise VrlibError("generator_params are for a generator given by name; configure the instance instead")
            if not (callable(getattr(generator, "fit", None)) and callable(getattr(generator, "sample", None))):
                raise VrlibError(
                    f"{type(generator).__name__} is not a generator: it needs fit(df, schema, seed) and sample(n, seed)"
                )
            self.name, self.params, self.prototype = None, {}, generator
            cls = type(generator)
            if hasattr(generator, "get_params"):
                state = generator.get_params()
            else:
                state = {k: v for k, v in vars(generator).items() if not k.startswith("_") and not k.endswith("_")}
            self.identity = {
                "class": f"{cls.__module__}.{cls.__qualname__}",
                "params": state,
                "source": source_hash(cls),
            }
        try:
            make_key(generator=self.identity)
        except VrlibError as exc:
            raise VrlibError(
                f"the generator's parameters cannot identify its cached datasets ({exc}); give it a "
                "get_params() method returning plain values"
            ) from None

    def __call__(self):
        """A fresh, unfitted generator."""
        if self.prototype is not None:
            return copy.deepcopy(self.prototype)
        from vrlib.generators import get_generator

        return get_generator(self.name, **self.params)

    def __repr__(self) -> str:
        return f"GeneratorSpec({self.name or self.identity['class']!r}, {self.params!r})"


def dataset_key(fingerprint: str, generator: GeneratorSpec, n: int, fit_seed: int, sample_seed: int, rows=None) -> str:
    """Content address of one synthetic dataset (see :attr:`SynthesisJob.key`)."""
    return make_key(
        kind=NAMESPACE,
        code=_SOURCE,
        data=fingerprint,
        rows=None if rows is None else np.asarray(rows, np.int64),
        generator=generator.identity,
        n=int(n),
        fit_seed=int(fit_seed),
        sample_seed=int(sample_seed),
    )


@dataclass(frozen=True, eq=False)
class SynthesisJob:
    """One synthetic dataset to make: fit ``generator`` on ``table`` (or its ``rows``), sample ``n`` rows.

    Attributes
    ----------
    table : DataFrame
        The training data, or a larger table that ``rows`` select from (prepared:
        categorical columns as pandas categoricals).
    schema : Schema
    generator : GeneratorSpec, str or generator instance
        Turned into a :class:`GeneratorSpec` (a name takes ``params``).
    n : int
        Rows to sample.
    fit_seed, sample_seed : int
        Seeds given to the generator's ``fit`` and ``sample``.
    rows : array of int, optional
        Positions (``iloc``) in ``table`` of the training records; default all.
    params : dict, optional
        Constructor parameters of a generator given by name.
    categories : mapping column -> categories, optional
        Category sets the stored codes refer to; default ``table``'s own.
    fingerprint : str, optional
        :func:`vrlib.cache.fingerprint_table` of ``table`` when the caller already has it.
    coded : CodedTable, optional
        ``table`` as a :class:`vrlib.coded.CodedTable` (the same rows, in the same order).
        With it, the job travels to its worker as row positions, in a batch with the
        other jobs on the same coded table, and is fitted by
        :meth:`~vrlib.generators.base.Generator.fit_coded` (the same model as the fit on
        the DataFrame); the coded table is pickled once per batch, not a DataFrame per job.
    keep : bool
        Write the dataset to the cache when it is made (default).  ``False`` for datasets
        no other computation will ask for again (their result is cached elsewhere);
        a cached copy is still read when there is one.
    """

    table: pd.DataFrame
    schema: Schema
    generator: object
    n: int
    fit_seed: int
    sample_seed: int
    rows: np.ndarray | None = None
    params: Mapping | None = None
    categories: Mapping | None = None
    fingerprint: str | None = field(default=None, repr=False)
    coded: CodedTable | None = field(default=None, repr=False)
    keep: bool = True
    known_key: str | None = field(default=None, repr=False)

    def __post_init__(self):
        if self.coded is not None:
            if not isinstance(self.coded, CodedTable):
                raise VrlibError(f"coded must be a vrlib.coded.CodedTable, got {type(self.coded).__name__}")
            if len(self.coded) != len(self.table) or self.coded.columns != tuple(self.table.columns):
                raise VrlibError(
                    f"the coded table ({len(self.coded)} rows, columns {list(self.coded.columns)}) is not the job's "
                    f"table ({len(self.table)} rows, columns {list(self.table.columns)}); build it with "
                    "CodedTable(table, schema)"
                )

    @cached_property
    def spec(self) -> GeneratorSpec:
        return GeneratorSpec(self.generator, self.params)

    @cached_property
    def key(self) -> str:
        """Hash of the training data, rows, generator identity (with its code), seeds, ``n`` and this module's code.

        ``known_key``, when given, is taken as this hash (a caller that has computed
        :func:`dataset_key` for the job already, as the games do for their plans).
        """
        if self.known_key is not None:
            return self.known_key
        fp = self.fingerprint or fingerprint_table(self.table, self.schema)
        return dataset_key(fp, self.spec, self.n, self.fit_seed, self.sample_seed, self.rows)

    def train(self) -> pd.DataFrame:
        """The training records."""
        return self.table if self.rows is None else self.table.iloc[np.asarray(self.rows)]

    def category_sets(self) -> dict:
        if self.categories is not None:  # Index objects kept as they are: encode_values then skips recoding
            return {
                c: v if isinstance(v := self.categories[c], pd.Index) else pd.Index(v) for c in self.schema.categorical
            }
        return {c: self.table[c].cat.categories for c in self.schema.categorical}

    def decode(self, arrays: Mapping[str, np.ndarray]) -> pd.DataFrame:
        """The dataset :func:`synthesize` made for this job, as a table with the training table's columns."""
        return decode_table(
            arrays["codes"], arrays["continuous"], self.schema, self.category_sets(), columns=self.table.columns
        )


def _fit_and_sample(task) -> tuple[dict[str, np.ndarray], dict, bytes | None]:
    """Fit a fresh generator and sample one encoded dataset (runs in a worker; touches no cache).

    Returns the cache entry ``(arrays, meta, payload)`` of :func:`vrlib.cache.get_or_make_many`:
    ``payload`` is the entry as bytes when ``compress`` is not None (serialised here so that
    compression runs in the workers, not in the client), else None (not to be stored).
    """
    train, schema, spec, fit_seed, sample_seed, n, categories, compress = task
    return _make_one(spec, schema, n, categories, compress, fit_seed, sample_seed, train=train)


def _fit_and_sample_coded(task) -> list[tuple[dict[str, np.ndarray], dict, bytes | None]]:
    """A batch of datasets on one coded table: ``(arrays, meta, payload)`` per ``(rows, seeds, compress)``."""
    coded, schema, spec, n, categories, items = task
    return [
        _make_one(spec, schema, n, categories, compress, fit_seed, sample_seed, coded=coded, rows=rows)
        for rows, fit_seed, sample_seed, compress in items
    ]


def _make_one(spec, schema, n, categories, compress, fit_seed, sample_seed, train=None, coded=None, rows=None):
    """Fit a fresh generator on ``train`` (or ``rows`` of ``coded``) and sample ``n`` encoded rows."""
    start = time.perf_counter()
    gen = spec()
    if coded is not None and isinstance(gen, Generator):
        fitted = gen.fit_coded(coded, rows, fit_seed)
    else:
        fitted = gen.fit(coded.frame(rows) if coded is not None else train, schema, fit_seed)
    gen = fitted if fitted is not None else gen
    if isinstance(gen, Generator) and type(gen).sample is Generator.sample:  # ours: straight to the arrays
        arrays = gen.sample_encoded(n, sample_seed, schema, categories)
        seconds = time.perf_counter() - start
    else:
        synth = gen.sample(n, sample_seed)
        seconds = time.perf_counter() - start
        if not isinstance(synth, pd.DataFrame) or len(synth) != n:
            raise VrlibError(
                f"{type(gen).__name__}.sample({n}) returned {type(synth).__name__} of length "
                f"{len(synth) if hasattr(synth, '__len__') else '?'}; it must return a DataFrame of n rows"
            )
        missing = [c for c in schema.columns if c not in synth.columns]
        if missing:
            raise VrlibError(f"{type(gen).__name__}.sample returned no column(s) {missing}")
        arrays = encode_table(synth, schema, categories)
    meta = {"kind": NAMESPACE, "generator": spec.name or spec.identity["class"], "seconds": seconds}
    return arrays, meta, None if compress is None else serialise(arrays, meta, compress)


def resolve_cache(cache) -> Cache | None:
    """The store meant by a ``cache`` argument: True (the default one), False/None (none) or a Cache."""
    if cache is True:
        return Cache(namespace=NAMESPACE)
    if cache is False or cache is None:
        return None
    if isinstance(cache, Cache):
        return cache
    raise VrlibError(f"cache must be True, False/None or a vrlib.cache.Cache (got {type(cache).__name__})")


def _checker(job: SynthesisJob, cats: dict):
    """``decode`` for :meth:`Cache.get`: the entry must be a dataset of this job's shape and categories."""
    n_cat, n_cont = len(job.schema.categorical), len(job.schema.continuous)
    sizes = np.array([len(cats[c]) for c in job.schema.categorical], dtype=np.int64)

    def check(arrays, meta):
        codes, cont = arrays["codes"], arrays["continuous"]
        if codes.shape != (job.n, n_cat) or cont.shape != (job.n, n_cont) or cont.dtype != np.float64:
            raise ValueError(
                f"arrays of shape {codes.shape} / {cont.shape}, expected ({job.n}, {n_cat}) / ({job.n}, {n_cont})"
            )
        if n_cat and job.n and (codes.max(axis=0) >= sizes).any():
            raise ValueError("category codes out of range")
        return {"codes": codes, "continuous": cont}

    return check


def synthesize(
    jobs: Sequence[SynthesisJob],
    *,
    cache=True,
    n_jobs: int | None = None,
    scheduler=None,
    desc: str = "synthesising",
    progress: bool = True,
    stats: Counter | None = None,
) -> list[dict]:
    """The synthetic dataset of every job: read from the cache, or fitted and sampled in parallel.

    Jobs with equal keys are made once.  Missing datasets are made by
    :func:`vrlib.parallel.run`; each is written to the cache by this process as soon as
    it arrives from its worker.

    Parameters
    ----------
    jobs : sequence of SynthesisJob
    cache : bool or Cache
        ``True``: the default store (namespace ``synthetic``); ``False``: no caching.
    n_jobs, scheduler
        Where the fits run (see :func:`vrlib.parallel.run`).
    desc : str
        Label of the progress bar.
    progress : bool
    stats : Counter, optional
        Incremented with ``cached`` (read from the cache) and ``generated`` (fitted here).

    Returns
    -------
    list of dict
        Per job, ``{"codes": (n, F_cat) unsigned ints, "continuous": (n, F_cont) float64}``
        as :func:`vrlib.encoding.encode_table` makes them; rebuild a DataFrame with
        :func:`vrlib.encoding.decode_table`.
    """
    store = resolve_cache(cache)
    stats = stats if stats is not None else Counter()
    keys = [job.key for job in jobs]
    cats = [job.category_sets() for job in jobs]
    compress = None if store is None else store.compress
    made = []

    def plan(missing: list[int]) -> list[tuple]:
        """One task per job, except jobs on a coded table: in batches (one task per batch)."""
        made.extend(missing)
        tasks, batches = [], {}
        for j in missing:
            job = jobs[j]
            if job.coded is not None:
                batches.setdefault(
                    (id(job.coded), id(job.generator), id(job.schema), id(job.categories), job.n), []
                ).append(j)
                continue
            tasks.append(
                (
                    (
                        True,
                        (
                            job.train(),
                            job.schema,
                            job.spec,
                            job.fit_seed,
                            job.sample_seed,
                            job.n,
                            cats[j],
                            compress if job.keep else None,
                        ),
                    ),
                    [j],
                )
            )
        size = batch_size(len(missing) - len(tasks), parallel.width(n_jobs, scheduler) if batches else 1)
        for group in batches.values():
            for start in range(0, len(group), size):
                part = group[start : start + size]
                first = jobs[part[0]]
                items = [
                    (
                        first.coded.check_rows(jobs[j].rows),
                        jobs[j].fit_seed,
                        jobs[j].sample_seed,
                        compress if jobs[j].keep else None,
                    )
                    for j in part
                ]
                tasks.append(((False, (first.coded, first.schema, first.spec, first.n, cats[part[0]], items)), part))
        return tasks

    out = get_or_make_many(
        store,
        keys,
        _run_task,
        plan,
        decode=[_checker(job, c) for job, c in zip(jobs, cats)],
        n_jobs=n_jobs,
        scheduler=scheduler,
        desc=desc,
        progress=progress,
    )
    hits = len(set(keys)) - len(made)
    if hits:
        stats["cached"] += hits
    stats["generated"] += len(made)
    return out


def synthesize_tables(jobs: Sequence[SynthesisJob], **kwargs) -> list[pd.DataFrame]:
    """The synthetic dataset of every job as a table (:meth:`SynthesisJob.decode`); ``kwargs`` as :func:`synthesize`."""
    return [job.decode(arrays) for job, arrays in zip(jobs, synthesize(jobs, **kwargs))]


def _run_task(task):
    """The entries of one task: one dataset, or a batch on a coded table."""
    single, payload = task
    return [_fit_and_sample(payload)] if single else _fit_and_sample_coded(payload)


MAX_BATCH = 64
"""Most datasets per parallel task on a coded table: large enough that pickling the table and
starting a task cost little per dataset, small enough that a stopped run loses little and the
workers finish together."""


def batch_size(n_datasets: int, width: int) -> int:
    """Datasets per task: one in a single process (nothing is pickled there, and every finished dataset
    is written to the cache at once, so an interrupted run keeps it), else an even share per worker,
    at most :data:`MAX_BATCH` (an interruption then loses at most the batches in flight)."""
    if n_datasets <= 0 or width <= 1:
        return 1
    return max(1, min(MAX_BATCH, -(-n_datasets // width)))


# coded.py shapes the coded fits, encoding.py the codes every dataset is stored as
_SOURCE = source_hash(_fit_and_sample, _fit_and_sample_coded, _make_one, CodedTable, encode_table)
