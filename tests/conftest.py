"""Shared fixtures: small random mixed tables made by the tests, and the real data when present."""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vrlib.data import Schema, prepare, search_dirs


def make_table(n=60, n_cat=3, n_cont=2, seed=0, n_levels=4):
    """A random mixed table with ``n_cat`` categorical and ``n_cont`` continuous columns."""
    rng = np.random.default_rng(seed)
    data = {}
    for j in range(n_cat):
        data[f"c{j}"] = rng.choice([f"v{i}" for i in range(n_levels)], size=n)
    for j in range(n_cont):
        data[f"x{j}"] = rng.normal(size=n).round(2)  # rounding makes ties
    schema = Schema([f"c{j}" for j in range(n_cat)], [f"x{j}" for j in range(n_cont)])
    return prepare(pd.DataFrame(data), schema), schema


@pytest.fixture
def mixed_table():
    return make_table()


def real_file_present(name: str) -> bool:
    return any((d / name).is_file() for d in search_dirs())


def require_real(*names):
    """Skip unless every real data file in ``names`` is present (no download in tests)."""
    missing = [n for n in names if not real_file_present(n)]
    if missing:
        where = ", ".join(str(d) for d in search_dirs())
        pytest.skip(f"real data file(s) {missing} not found in {where}; put them there or set VRLIB_DATA_DIR")


PROJECT_ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def cluster_without_shared_disk(tmp_path: Path, monkeypatch, client_cache: str = "client"):
    """A two-process Dask cluster whose workers have a cache folder of their own (as on other machines).

    Inside, ``VRLIB_DASK_SCHEDULER`` points at it and the client uses ``tmp_path/client_cache``;
    yields the workers' cache folder, which must stay empty (the client writes the cache).
    """
    distributed = pytest.importorskip("dask.distributed")
    workers_cache = tmp_path / "workers-cache"
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        env={"VRLIB_CACHE_DIR": str(workers_cache), "VRLIB_N_JOBS": "1"},
    ) as cluster:
        with monkeypatch.context() as mp:
            mp.setenv("VRLIB_DASK_SCHEDULER", cluster.scheduler_address)
            mp.setenv("VRLIB_CACHE_DIR", str(tmp_path / client_cache))
            yield workers_cache


def fitted_in_the_client(*args, **kwargs):
    """Patched over a generator's ``fit`` while work should run on a cluster's workers."""
    raise AssertionError("a generator was fitted in the client; this work belongs to the workers")
