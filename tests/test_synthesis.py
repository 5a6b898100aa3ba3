"""The one synthesis path: keys, sharing, caching and checking of synthetic datasets."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest

from vrlib.cache import Cache
from vrlib.encoding import decode_table
from vrlib.errors import VrlibError
from vrlib.synthesis import GeneratorSpec, SynthesisJob, synthesize, synthesize_tables

from conftest import make_table


def jobs_for(df, schema, **change):
    base = dict(table=df, schema=schema, generator="noise", n=25, fit_seed=1, sample_seed=2, params={"scale": 0.5})
    return SynthesisJob(**{**base, **change})


def test_keys_name_exactly_what_makes_the_dataset():
    df, schema = make_table(n=80, seed=1)
    key = jobs_for(df, schema).key
    assert key == jobs_for(df.copy(), schema).key  # content, not object identity
    changes = [dict(n=26), dict(fit_seed=3), dict(sample_seed=3), dict(params={"scale": 0.6}),
               dict(generator="baynet", params=None), dict(rows=np.arange(40)), dict(table=df.iloc[:79])]  # fmt: skip
    keys = {jobs_for(df, schema, **c).key for c in changes}
    assert len(keys) == len(changes) and key not in keys
    # rows of a table and the same records as a table of their own are the same training data only by content
    assert jobs_for(df, schema, rows=np.arange(40)).key == jobs_for(df, schema, rows=list(range(40))).key


def test_cached_shared_and_checked(tmp_path):
    df, schema = make_table(n=80, seed=2)
    store = Cache(tmp_path, "synthetic")
    jobs = [jobs_for(df, schema), jobs_for(df, schema, fit_seed=5), jobs_for(df, schema)]
    stats = Counter()
    first = synthesize(jobs, cache=store, n_jobs=1, progress=False, stats=stats)
    assert stats == {"generated": 2} and len(store) == 2  # the repeated job was made once
    np.testing.assert_array_equal(first[0]["continuous"], first[2]["continuous"])
    stats = Counter()
    again = synthesize(jobs, cache=store, n_jobs=1, progress=False, stats=stats)
    assert stats == {"cached": 2, "generated": 0}
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a["continuous"], b["continuous"])
        np.testing.assert_array_equal(a["codes"], b["codes"])
    frame = decode_table(again[0]["codes"], again[0]["continuous"], schema, jobs[0].category_sets(), columns=df.columns)
    assert list(frame.columns) == list(df.columns) and len(frame) == 25
    # An entry of the wrong shape under a job's key is not that job's dataset: made again.
    store.save(jobs[1].key, {"codes": np.zeros((3, 3), np.uint8), "continuous": np.zeros((3, 2))}, {})
    with pytest.warns(RuntimeWarning, match="expected"):
        fixed = synthesize(jobs[1:2], cache=store, n_jobs=1, progress=False)
    np.testing.assert_array_equal(fixed[0]["continuous"], first[1]["continuous"])


def test_tables_are_the_datasets_decoded_with_the_training_columns(tmp_path):
    df, schema = make_table(n=60, seed=4)
    df = df[list(df.columns)[::-1]]  # the columns in another order than the schema's
    jobs = [jobs_for(df, schema), jobs_for(df, schema, rows=np.arange(30), fit_seed=7)]
    arrays = synthesize(jobs, cache=Cache(tmp_path, "synthetic"), n_jobs=1, progress=False)
    tables = synthesize_tables(jobs, cache=Cache(tmp_path, "synthetic"), n_jobs=1, progress=False)
    for job, a, table in zip(jobs, arrays, tables):
        by_hand = decode_table(a["codes"], a["continuous"], schema, job.category_sets(), columns=df.columns)
        pd.testing.assert_frame_equal(table, by_hand)
        assert list(table.columns) == list(df.columns) and len(table) == 25
        for c in schema.categorical:  # the training table's categories, whatever the sample holds
            assert list(table[c].cat.categories) == list(df[c].cat.categories)


@pytest.mark.parametrize("generator, params", [("synthpop", None), ("baynet", None), ("noise", {"scale": 0.5})])
def test_rows_of_a_table_train_as_the_rows_themselves(generator, params):
    # A job's rows (unsorted, columns of both kinds interleaved) are the training data, whatever the index.
    df, schema = make_table(n=120, n_cat=3, n_cont=2, seed=3)
    df = df[["x1", "c0", "c2", "x0", "c1"]]
    rows = np.random.default_rng(0).choice(len(df), 70, replace=False)
    via_rows = synthesize(
        [jobs_for(df, schema, generator=generator, params=params, rows=rows)], cache=False, n_jobs=1, progress=False
    )[0]
    direct = synthesize(
        [jobs_for(df.iloc[rows].reset_index(drop=True), schema, generator=generator, params=params)],
        cache=False,
        n_jobs=1,
        progress=False,
    )[0]
    np.testing.assert_array_equal(via_rows["codes"], direct["codes"])
    np.testing.assert_array_equal(via_rows["continuous"], direct["continuous"])


def test_generator_spec_errors():
    with pytest.raises(VrlibError, match="unknown generator"):
        GeneratorSpec("nope")
    with pytest.raises(VrlibError, match="not a generator"):
        GeneratorSpec(object())
    spec = GeneratorSpec("baynet", {"degree": 2})
    assert GeneratorSpec(spec).identity == spec.identity and spec().degree == 2
