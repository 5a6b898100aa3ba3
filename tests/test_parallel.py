"""Spreading work: same results in task order for one process, two processes and a Dask cluster."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vrlib import parallel
from vrlib.data import Schema
from vrlib.errors import VrlibError
from vrlib.games import TraditionalGame


def seeded_work(task):
    """Module-level so worker processes can import it; the seed comes with the task."""
    i, seed = task
    return i, float(np.random.default_rng(seed).normal())


class Jitter:
    """Test generator: bootstrap plus noise, so every dataset depends on both seeds."""

    def fit(self, df, schema, seed):
        self.df_, self.schema_ = df.reset_index(drop=True), schema
        self.shift_ = np.random.default_rng(seed).normal()
        return self

    def sample(self, n, seed):
        rng = np.random.default_rng(seed)
        out = self.df_.iloc[rng.integers(len(self.df_), size=n)].reset_index(drop=True)
        out["x"] = out["x"] + self.shift_ + rng.normal(size=n)
        return out


TASKS = [(i, parallel.derive_seed(7, "unit", i)) for i in range(23)]


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as lc:
        yield lc


def test_derive_seed_is_a_function_of_identity():
    assert parallel.derive_seed(1, "a", 3) == parallel.derive_seed(1, "a", 3)
    seeds = {parallel.derive_seed(1, s, i) for s in ("a", "b") for i in range(100)}
    assert len(seeds) == 200
    assert parallel.derive_seed(1, "a") != parallel.derive_seed(2, "a")
    with pytest.raises(VrlibError):
        parallel.derive_seed(-1)


def test_order_and_determinism_across_n_jobs():
    expect = [seeded_work(t) for t in TASKS]
    assert parallel.run(seeded_work, TASKS, n_jobs=1, progress=False) == expect
    seen = []
    got = parallel.run(seeded_work, TASKS, n_jobs=2, progress=False, on_result=lambda i, r: seen.append(i))
    assert got == expect
    assert sorted(seen) == list(range(len(TASKS)))
    assert parallel.run(seeded_work, [], n_jobs=2) == []
    with pytest.raises(VrlibError, match="n_jobs=0"):
        parallel.run(seeded_work, TASKS, n_jobs=0)


def test_dask_cluster_gives_the_same_results(cluster, monkeypatch):
    expect = [seeded_work(t) for t in TASKS]
    assert parallel.run(seeded_work, TASKS, scheduler=cluster.scheduler_address, progress=False) == expect
    monkeypatch.setenv("VRLIB_DASK_SCHEDULER", cluster.scheduler_address)
    assert parallel.dask_scheduler() == cluster.scheduler_address
    assert parallel.run(seeded_work, TASKS, progress=False) == expect
    monkeypatch.delenv("VRLIB_DASK_SCHEDULER")
    from dask.distributed import Client

    with Client(cluster.scheduler_address) as client:
        assert parallel.run(seeded_work, TASKS, scheduler=client, progress=False) == expect
        assert client.status == "running"  # a client we were given stays open


def test_default_n_jobs(monkeypatch):
    monkeypatch.delenv("VRLIB_N_JOBS", raising=False)
    assert parallel.default_n_jobs() == -1
    monkeypatch.setenv("VRLIB_N_JOBS", "3")
    assert parallel.default_n_jobs() == 3
    monkeypatch.setenv("VRLIB_N_JOBS", "many")
    with pytest.raises(VrlibError, match="VRLIB_N_JOBS"):
        parallel.default_n_jobs()


def test_game_datasets_identical_for_n_jobs_and_dask(cluster):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": pd.Categorical(rng.choice(["u", "v"], 500)), "x": rng.normal(size=500)})
    schema = Schema(["a"], ["x"])
    kw = dict(
        n_aux=250, n_test=200, n_records=30, n_synth=25, n_shadow=16, n_test_datasets=6, progress=False, cache=False
    )
    runs = [
        TraditionalGame(Jitter(), n_jobs=1, **kw).fit(df, schema).datasets(3),
        TraditionalGame(Jitter(), n_jobs=2, **kw).fit(df, schema).datasets(3),
        TraditionalGame(Jitter(), scheduler=cluster.scheduler_address, **kw).fit(df, schema).datasets(3),
    ]
    for other in runs[1:]:
        np.testing.assert_array_equal(runs[0].shadow.continuous, other.shadow.continuous)
        np.testing.assert_array_equal(runs[0].test.codes, other.test.codes)
        np.testing.assert_array_equal(runs[0].shadow.labels, other.shadow.labels)


def nested_backend(_task):
    """The joblib backend a parallel call inside a task would use."""
    from joblib.parallel import get_active_backend

    return type(get_active_backend()[0]).__name__


def test_parallel_calls_inside_a_task_stay_on_its_worker(cluster):
    # Not sent back to the cluster: a nested task beside its parent in one worker process
    # deadlocked on a package import (sklearn.ensemble) in CI.
    assert (
        parallel.run(nested_backend, range(4), scheduler=cluster.scheduler_address, progress=False)
        == ["ThreadingBackend"] * 4
    )
    assert parallel.run(nested_backend, range(4), n_jobs=2, progress=False) == ["ThreadingBackend"] * 4
