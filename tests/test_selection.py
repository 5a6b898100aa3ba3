"""Target selection: V_k against an independent computation, and each baseline on a table with a known answer."""

import numpy as np
import pandas as pd
import pytest
from sklearn.neighbors import NearestNeighbors

from vrlib.data import Schema, prepare
from vrlib.distance import pairwise_distances
from vrlib.encoding import TableEncoder
from vrlib.errors import VrlibError
from vrlib.selection import (
    negative_log_likelihood,
    rank_records,
    rare_value_counts,
    select_targets,
    vulnerability_scores,
)

from conftest import make_table


@pytest.mark.parametrize("include_self", [False, True])
def test_vk_matches_sklearn(include_self):
    df, schema = make_table(n=80, seed=3)
    df.index = df.index + 1000  # labels are not positions
    enc = TableEncoder(schema).fit_transform(df)
    full = pairwise_distances(enc)
    nn = NearestNeighbors(metric="precomputed").fit(full)
    d, _ = nn.kneighbors(full, n_neighbors=5) if include_self else nn.kneighbors(n_neighbors=5)
    got = vulnerability_scores(df, schema, k=5, include_self=include_self)
    assert list(got.index) == list(df.index)
    np.testing.assert_allclose(got.to_numpy(), d.mean(axis=1), atol=1e-12)


def test_distance_picks_the_isolated_record():
    # Nine near-identical records and one that shares nothing with them.
    rows = [("a", "p", 1.0 + i / 100) for i in range(9)] + [("b", "q", 9.0)]
    df = pd.DataFrame(rows, columns=["c1", "c2", "x"])
    schema = Schema(["c1", "c2"], ["x"])
    df = prepare(df, schema)
    assert select_targets(df, schema, "distance", n_targets=1, k=3) == [9]


def test_duplicates_have_zero_vk():
    df, schema = make_table(n=30, seed=5)
    twice = pd.concat([df, df], ignore_index=True)
    assert (vulnerability_scores(twice, schema, k=1) == 0).all()


def hand_table():
    # Column c: value "z" occurs once in 40 rows (2.5 % < 5 %); x: row 7 above the 95th percentile.
    n = 40
    c = ["u"] * 20 + ["v"] * 19 + ["z"]
    x = [1.0] * n
    x[7] = 100.0
    df = pd.DataFrame({"c": c, "x": x})
    schema = Schema(["c"], ["x"])
    return prepare(df, schema), schema


def test_rare_value_counts_by_hand():
    df, schema = hand_table()
    counts = rare_value_counts(df, schema)
    assert counts[39] == 1 and counts[7] == 1
    assert counts.drop([7, 39]).eq(0).all()
    # The targets are exactly the two rare records, in a seeded random order.
    assert sorted(select_targets(df, schema, "rare", n_targets=2, seed=1)) == [7, 39]
    assert select_targets(df, schema, "rare", n_targets=2, seed=1) == select_targets(
        df, schema, "rare", n_targets=2, seed=1
    )
    with pytest.raises(VrlibError, match="only 2 records have a rare value"):
        select_targets(df, schema, "rare", n_targets=3)


def test_loglik_by_hand():
    df, schema = hand_table()
    nll = negative_log_likelihood(df, schema, bins=10)
    # c = "z": p = 1/40; x = 100 is alone above the only distinct decile edge: p = 1/40.
    assert nll[39] == pytest.approx(-np.log(1 / 40) - np.log(39 / 40))
    assert nll[7] == pytest.approx(-np.log(20 / 40) - np.log(1 / 40))
    assert nll[0] == pytest.approx(-np.log(20 / 40) - np.log(39 / 40))
    assert select_targets(df, schema, "loglik", n_targets=2) == [7, 39]  # 1/40 * 20/40 < 1/40 * 39/40


def test_loglik_readings_by_hand():
    df, schema = hand_table()
    # Categorical columns only: only c counts, so z (row 39) alone is least likely; row 7 is like any "u".
    nll = negative_log_likelihood(df, schema, columns="categorical")
    assert nll[39] == pytest.approx(-np.log(1 / 40)) and nll[7] == pytest.approx(-np.log(20 / 40))
    assert select_targets(df, schema, "loglik", n_targets=1, columns="categorical") == [39]
    # Fewer bins cannot split x = 1 from x = 100 below one bin per distinct edge: with 1 bin, x says nothing.
    one_bin = negative_log_likelihood(df, schema, bins=1)
    np.testing.assert_allclose(one_bin, nll)
    with pytest.raises(VrlibError, match="columns must be"):
        negative_log_likelihood(df, schema, columns="continuous")
    with pytest.raises(VrlibError, match="bins must be"):
        negative_log_likelihood(df, schema, bins=0)


def test_loglik_sampled_among_the_lowest():
    df, schema = make_table(n=200, seed=4)
    strict = list(rank_records(df, schema, "loglik").index)
    lowest = set(strict[:10])  # ceil(0.05 * 200) = 10 least likely records
    picks = [select_targets(df, schema, "loglik", n_targets=3, seed=s, sample_from=0.05) for s in range(200)]
    assert all(set(p) <= lowest for p in picks)
    assert picks[0] == select_targets(df, schema, "loglik", n_targets=3, seed=0, sample_from=0.05)
    # Uniform among the ten: each is drawn first about 20 times in 200 seeds.
    counts = pd.Series([p[0] for p in picks]).value_counts()
    assert set(counts.index) == lowest and counts.max() < 40
    # q = 1 would be a random order of every record; the strict order is the default.
    assert select_targets(df, schema, "loglik", n_targets=10) == strict[:10]
    with pytest.raises(VrlibError, match="sample_from"):
        rank_records(df, schema, "loglik", sample_from=0.0)


def test_random_is_seeded_and_uniform():
    df, schema = make_table(n=50)
    a = select_targets(df, schema, "random", n_targets=10, seed=7)
    assert a == select_targets(df, schema, "random", n_targets=10, seed=7)
    assert a != select_targets(df, schema, "random", n_targets=10, seed=8)
    assert len(set(a)) == 10
    # Every record is equally likely to come first.
    firsts = [select_targets(df, schema, "random", n_targets=1, seed=s)[0] for s in range(2000)]
    counts = np.bincount(firsts, minlength=50)
    assert counts.min() > 15 and counts.max() < 70  # expected 40 each


def test_rank_records_order_and_scores():
    df, schema = make_table(n=40, seed=2)
    ranked = rank_records(df, schema, "distance", k=3)
    assert len(ranked) == len(df)
    assert (np.diff(ranked.to_numpy()) <= 0).all()


def test_bad_inputs():
    df, schema = make_table(n=20)
    with pytest.raises(VrlibError, match="unknown method"):
        select_targets(df, schema, "outlier")
    with pytest.raises(VrlibError, match="only 20 records"):
        select_targets(df, schema, "random", n_targets=21)
    with pytest.raises(VrlibError, match="takes no parameter"):
        rank_records(df, schema, "loglik", k=3)
    with pytest.raises(VrlibError, match="choose k <= 19"):
        vulnerability_scores(df, schema, k=20)
