"""CodedTable and Generator.fit_coded: the coded fast path gives exactly the DataFrame path's model and samples."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import make_table
from vrlib.cache import encode_table
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
