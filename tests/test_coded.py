"""CodedTable and Generator.fit_coded: the coded fast path gives exactly the DataFrame path's model and samples."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import make_table
from vrlib.encoding import encode_table
from vrlib.coded import CodedTable
from vrlib.data import Schema
from vrlib.errors import VrlibError
from vrlib.generators import get_generator

GENERATORS = [("synthpop", {}), ("baynet", {}), ("privbayes", {"epsilon": 1.0}), ("noise", {})]


def _table(seed=0):
    df, schema = make_table(n=400, n_cat=3, n_cont=2, seed=seed, n_levels=5)
    df.index = pd.Index([f"r{i}" for i in range(len(df))])  # labels other than positions
    domains = {c: (-4.0, 4.0) for c in schema.continuous}  # PrivBayes needs public bounds
    return df, Schema(schema.categorical, schema.continuous, domains)


def test_round_trip_and_columns():
    df, schema = _table()
    table = CodedTable(df, schema)
    assert len(table) == len(df) and table.columns == tuple(df.columns)
    pd.testing.assert_frame_equal(table.frame(), df)
    rows = np.array([5, 3, 399, 0])
    pd.testing.assert_frame_equal(table.frame(rows), df.iloc[rows])
    np.testing.assert_array_equal(table.column("c1", rows), df["c1"].array.codes[rows].astype(np.int64))
    assert table.column("c1", rows).dtype == np.int64 and table.take("c1", rows).dtype == np.int64
    np.testing.assert_array_equal(table.column("x0", rows), df["x0"].to_numpy()[rows])
    col = table.column("x0")
    col[:] = 0  # a copy: the table is not changed through it
    assert table.column("x0")[0] == df["x0"].iloc[0]


@pytest.mark.parametrize("name,params", GENERATORS)
@pytest.mark.parametrize("seed", [0, 7])
def test_fit_coded_is_the_dataframe_fit(name, params, seed):
    df, schema = _table(seed)
    table = CodedTable(df, schema)
    rows = np.sort(np.random.default_rng(seed).choice(len(df), size=250, replace=False))
    cats = {c: df[c].cat.categories for c in schema.categorical}
    framed = get_generator(name, **params).fit(df.iloc[rows], schema, seed=11)
    coded = get_generator(name, **params).fit_coded(table, rows, seed=11)
    pd.testing.assert_frame_equal(framed.sample(300, seed=3), coded.sample(300, seed=3))
    a = framed.sample_encoded(300, 5, schema, cats)
    b = coded.sample_encoded(300, 5, schema, cats)
    for k in ("codes", "continuous"):
        np.testing.assert_array_equal(a[k], b[k])
    assert coded.n_train_ == len(rows) and coded.columns_ == framed.columns_


def test_fit_coded_on_all_rows_and_against_encode_table():
    df, schema = _table(3)
    table = CodedTable(df, schema)
    gen = get_generator("synthpop").fit_coded(table, seed=1)
    out = gen.sample(50, seed=2)
    enc = encode_table(out, schema, table.categories)
    np.testing.assert_array_equal(enc["codes"], gen.sample_encoded(50, 2, schema, table.categories)["codes"])
    pd.testing.assert_frame_equal(out, get_generator("synthpop").fit(df, schema, seed=1).sample(50, seed=2))


def test_bad_input():
    df, schema = _table()
    with pytest.raises(VrlibError, match="Schema"):
        CodedTable(df, {"categorical": ["c0"]})
    with pytest.raises(VrlibError, match="DataFrame"):
        CodedTable(df.to_numpy(), schema)
    with_nan = df.copy()
    with_nan.loc["r3", "x0"] = np.nan
    with pytest.raises(VrlibError, match="missing values"):
        CodedTable(with_nan, schema)
    table = CodedTable(df, schema)
    with pytest.raises(VrlibError, match=r"positions in \[0, 399\]"):
        table.frame([0, 400])
    with pytest.raises(VrlibError, match="integer positions"):
        table.column("c0", [0.5, 1.0])
    with pytest.raises(VrlibError, match="empty"):
        table.frame(np.array([], dtype=np.int64))
    with pytest.raises(VrlibError, match="unknown column"):
        table.column("nope")
    with pytest.raises(VrlibError, match="CodedTable"):
        get_generator("baynet").fit_coded(df, None, seed=0)
    with pytest.raises(VrlibError, match="epsilon"):
        _bad_epsilon().fit_coded(table, None, seed=0)


def _bad_epsilon():
    gen = get_generator("privbayes", epsilon=1.0)
    gen.epsilon = -1.0  # changed after construction: fit_coded checks the parameters again, as fit does
    return gen


# --------------------------------------------------------------------------- the synthesis pipeline


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_synthesize_on_a_coded_table_is_the_dataframe_path(tmp_path, n_jobs):
    from vrlib.cache import Cache
    from vrlib.synthesis import GeneratorSpec, SynthesisJob, synthesize

    df, schema = _table(5)
    table = CodedTable(df, schema)
    spec = GeneratorSpec("baynet")
    rng = np.random.default_rng(0)
    subsets = [np.sort(rng.choice(len(df), size=120, replace=False)) for _ in range(7)]

    def jobs(coded, keep=True):
        return [
            SynthesisJob(df, schema, spec, 90, 10 + i, 20 + i, rows=rows, coded=coded, keep=keep)
            for i, rows in enumerate(subsets)
        ]

    plain = synthesize(jobs(None), cache=False, n_jobs=1, progress=False)
    store = Cache(tmp_path, "synthetic")
    coded = synthesize(jobs(table), cache=store, n_jobs=n_jobs, progress=False)
    for a, b in zip(plain, coded):
        for k in ("codes", "continuous"):
            np.testing.assert_array_equal(a[k], b[k])
    assert all(store.get(j.key) is not None for j in jobs(table))  # written, one entry per dataset
    other = Cache(tmp_path / "other", "synthetic")
    synthesize(jobs(table, keep=False), cache=other, n_jobs=n_jobs, progress=False)
    assert all(other.get(j.key) is None for j in jobs(table))  # keep=False: made, not written


def test_batch_sizes_and_a_coded_table_of_another_table():
    from vrlib.synthesis import MAX_BATCH, SynthesisJob, batch_size

    assert batch_size(900, 1) == 1  # one process: a task per dataset, each cached as soon as it is made
    assert batch_size(900, 2) == MAX_BATCH
    assert batch_size(100, 2) == 50 and batch_size(3, 8) == 1 and batch_size(0, 2) == 1
    df, schema = _table()
    with pytest.raises(VrlibError, match="not the job's table"):
        SynthesisJob(df.iloc[:10], schema, "baynet", 5, 0, 1, coded=CodedTable(df, schema))
