"""The best-possible bound of vrlib.audit.oracle: hand-built counts, brute force, and the flaggable verdict both ways."""

import itertools

import numpy as np
import pandas as pd
import pytest

from vrlib.audit.oracle import best_possible_flags, dominating_counts, match_closeness
from vrlib.data import Schema, prepare
from vrlib.errors import VrlibError

CAT = Schema(["a", "b", "c"], [])


def _cat(rows):
    return pd.DataFrame(rows, columns=["a", "b", "c"]).astype(str)


def _aligned(*tables):
    """The tables as categorical columns sharing one set of categories (as the audit's inputs have)."""
    out = [prepare(t, CAT) for t in tables]
    for c in CAT.categorical:
        dtype = pd.CategoricalDtype(sorted(set().union(*(t[c].cat.categories for t in out))))
        for t in out:
            t[c] = t[c].astype(object).astype(dtype)
    return out


def _hand_built():
    """Training records 0 (copied exactly), 1 (copied with one category changed), 2 (not released)."""
    train = _cat([["x0", "y0", "z0"], ["x1", "y1", "z1"], ["x2", "y2", "z2"]])
    # holdout records 0 and 1 have exact twins in the release, 2 a twin with one category changed; 3-8 none near
    holdout = _cat(
        [["h0", "k0", "m0"], ["h1", "k1", "m1"], ["h2", "k2", "m2"]] + [[f"u{i}", f"v{i}", f"w{i}"] for i in range(6)]
    )
    release = _cat(
        [
            ["x0", "y0", "z0"],  # train 0, exact
            ["x1", "y1", "zz"],  # train 1, one category changed
            ["h0", "k0", "m0"],  # holdout 0, exact
            ["h1", "k1", "m1"],  # holdout 1, exact
            ["h2", "k2", "mm"],  # holdout 2, one category changed
        ]
        + [[f"r{i}", f"s{i}", f"t{i}"] for i in range(4)]  # far from everything
    )
    return _aligned(train, holdout, release)


def test_hand_built_counts_and_best_pvalues():
    train, holdout, release = _hand_built()
    close = match_closeness(train, holdout, release, CAT)
    assert set(close) == {"all", "near_match"}  # no continuous view on a categorical table
    assert close["near_match"]["train"]["match"].tolist() == [0, 1, 2]
    assert close["near_match"]["holdout"]["match"].tolist() == [0, 0, 1] + [2] * 6
    np.testing.assert_allclose(close["all"]["train"]["match"], [0, 1 / 3, 1])
    tab, summ = best_possible_flags(close, [0, 1, 2], isolation=False)
    # exact copy: the 2 holdout records with an exact twin are as close; near-copy: those and holdout 2; the
    # unreleased record: every holdout record is at least as close
    assert tab["holdout_as_close"].tolist() == [2, 3, 9]
    np.testing.assert_allclose(tab["p_best"], [3 / 10, 4 / 10, 10 / 10])
    assert not tab["flaggable"].any() and summ["n_flaggable"] == 0 and summ["n_holdout"] == 9


def test_flaggable_says_yes_beyond_the_holdout_and_no_within_it():
    train, holdout, release = _hand_built()
    holdout = holdout.iloc[3:].reset_index(drop=True)  # no holdout record is matched now
    close = match_closeness(train, holdout, release, CAT)
    tab, summ = best_possible_flags(close, [0, 1], other_pvalues=[0.9], isolation=False)
    assert tab["holdout_as_close"].tolist() == [0, 0]
    assert tab["p_best"].tolist() == [0.0, 0.0] and tab["flaggable"].all()
    np.testing.assert_allclose(tab["p_rank_best"], [1 / 7, 1 / 7])
    assert summ["n_flaggable"] == 2 and summ["n_beyond_holdout"] == 2
    # without a tail model the best is the conformal 1/7, which Benjamini-Hochberg over 3 records cannot flag
    assert summ["n_flaggable_empirical"] == 0
    # the unreleased record is matched no closer than any holdout record: not flaggable
    tab, summ = best_possible_flags(close, [2], other_pvalues=[1e-9, 1e-9])
    assert tab["holdout_as_close"].tolist() == [6] and not tab["flaggable"].any() and summ["n_flaggable"] == 0


def test_isolation_keeps_dense_region_matches_from_bounding_an_isolated_copy():
    schema = Schema([], ["v"])
    release = pd.DataFrame({"v": [0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.5, 0.9, 1.0]})
    train = pd.DataFrame({"v": [0.9, 0.3]})  # 0.9: an isolated copy
    holdout = pd.DataFrame({"v": [0.02, 0.7, 0.2, 0.33, 0.61]})  # 0.02: a non-member copied in a dense region
    close = match_closeness(train, holdout, release, schema)
    assert set(close) == {"all", "near_match"}
    tab, _ = best_possible_flags(close, [0], isolation=False)
    assert tab["holdout_as_close"].tolist() == [1] and tab["p_best"].iloc[0] == pytest.approx(2 / 6)
    tab, summ = best_possible_flags(close, [0], other_pvalues=[0.5])
    assert tab["holdout_as_close"].tolist() == [0] and bool(tab["flaggable"].iloc[0]) and summ["n_flaggable"] == 1


def test_counts_match_brute_force_on_random_categorical_tables():
    rng = np.random.default_rng(3)

    def table(n):
        return _cat(rng.choice(["0", "1", "2"], size=(n, 3), p=[0.6, 0.3, 0.1]))

    train, holdout, release = _aligned(table(15), table(40), table(30))
    close = match_closeness(train, holdout, release, CAT)
    rel = release.astype(str).to_numpy()

    def hamming(rows):  # brute force: fewest differing columns to any released record
        return np.array([min(sum(a != b for a, b in zip(r, s)) for s in rel) for r in rows.astype(str).to_numpy()])

    h_train, h_hold = hamming(train), hamming(holdout)
    np.testing.assert_allclose(close["all"]["train"]["match"], h_train / 3)
    np.testing.assert_array_equal(close["near_match"]["holdout"]["match"], np.minimum(h_hold, 2))
    tab, _ = best_possible_flags(close, np.arange(15), isolation=False)
    np.testing.assert_array_equal(tab["holdout_as_close"], [(h_hold <= h).sum() for h in h_train])
    # with isolation: brute force over pairs, each view's count, the smaller one kept
    iso_t, iso_h = close["all"]["train"]["isolation"].to_numpy(), close["all"]["holdout"]["isolation"].to_numpy()
    want = [
        sum(h_hold[j] <= h_train[i] and iso_h[j] >= iso_t[i] for j in range(40))
        for i in range(15)  # the near-match view is never closer than the distance here (categories only)
    ]
    tab, _ = best_possible_flags(close, np.arange(15))
    np.testing.assert_array_equal(tab["holdout_as_close"], want)


def test_dominating_counts_brute_force():
    rng = np.random.default_rng(0)
    m, iso = rng.integers(0, 4, 12).astype(float), rng.integers(0, 3, 12).astype(float)
    nm, niso = rng.integers(0, 4, 30).astype(float), rng.integers(0, 3, 30).astype(float)
    got = dominating_counts(m, iso, nm, niso)
    want = [sum(nm[j] <= m[i] and niso[j] >= iso[i] for j in range(30)) for i in range(12)]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(
        dominating_counts(m, iso, nm, niso, use_isolation=False), [(nm <= v).sum() for v in m]
    )


def _view(train_match, holdout_match):
    def frame(v):
        return pd.DataFrame({"match": np.asarray(v, dtype=float), "isolation": np.ones(len(v))})

    return {"v": {"train": frame(train_match), "holdout": frame(holdout_match)}}


@pytest.mark.parametrize(
    "n_others, flaggable", [(96, [True, True, True, False]), (99_996, [True, False, False, False])]
)
def test_flaggable_count_by_hand(n_others, flaggable):
    # 9,999 holdout records, one matched at 0.2: bounded records matched at 0 (k = 0, p 0), at 0.2 twice (k = 1,
    # p = 2 / 10,000) and at 1 (k = 9,999, p = 1); Benjamini-Hochberg at 5 % over 100 records flags the first
    # three (2e-4 <= 3 x 0.05 / 100), over 100,000 only the first (2e-4 > 2 x 0.05 / 100,000)
    holdout = np.ones(9999)
    holdout[17] = 0.2
    close = _view(np.r_[[0.0, 0.2, 0.2, 1.0], np.ones(n_others)], holdout)
    tab, summ = best_possible_flags(close, [0, 1, 2, 3], other_pvalues=np.full(n_others, 0.5))
    assert tab["holdout_as_close"].tolist() == [0, 1, 1, 9999]
    np.testing.assert_allclose(tab["p_best"], [0.0, 2e-4, 2e-4, 1.0])
    assert tab["flaggable"].tolist() == flaggable and summ["n_flaggable"] == sum(flaggable)
    assert summ["n_flaggable_empirical"] == (3 if n_others == 96 else 0)  # 1e-4, 2e-4, 2e-4 vs 1.5e-3 / 5e-7


def test_bad_records_are_refused():
    train, holdout, release = _hand_built()
    close = match_closeness(train, holdout, release, CAT)
    for bad in ([3], [0, 0], [-1]):
        with pytest.raises(VrlibError, match="distinct positions"):
            best_possible_flags(close, bad)
    with pytest.raises(VrlibError, match="one p-value per training record"):
        best_possible_flags(close, [0], other_pvalues=[0.5])


def test_an_empty_holdout_or_a_nan_match_is_refused():
    # either made every bounded record 'beyond the holdout' (p_best 0) and flaggable
    with pytest.raises(VrlibError, match="holdout is empty"):
        best_possible_flags(_view([0.0, 1.0], []), [0, 1])
    with pytest.raises(VrlibError, match="not NaN"):
        best_possible_flags(_view([np.nan, 1.0], [0.5, 0.7]), [0, 1])
    with pytest.raises(VrlibError, match="not NaN"):
        dominating_counts([0.0], [1.0], [np.nan], [1.0])


def test_bound_holds_for_the_audit(tmp_path):
    """The audit's own p-value of a planted record is never below its best possible one."""
    import vrlib

    rng = np.random.default_rng(1)
    schema = Schema(["a", "b"], ["x", "y"])

    def population(n):
        return prepare(
            pd.DataFrame(
                {
                    "a": rng.choice(list("pqr"), n),
                    "b": rng.choice(list("st"), n),
                    "x": rng.normal(size=n).round(3),
                    "y": rng.gamma(2.0, size=n).round(3),
                }
            ),
            schema,
        )

    train, holdout, release = population(300), population(400), population(300)
    planted = rng.choice(300, 10, replace=False)
    release = pd.concat([release.iloc[10:], train.iloc[planted]], ignore_index=True)
    for c in schema.categorical:
        release[c] = release[c].astype(train[c].dtype)
    res = vrlib.audit(train, release, holdout, schema, seed=0, attacks=("copies", "distance"), wp29=False)
    p = res.records.set_index("index")["p_value"].sort_index().to_numpy()
    close = match_closeness(train, holdout, release, schema)
    others = np.delete(p, planted)
    tab, summ = best_possible_flags(close, planted, others)
    assert (p[planted] >= tab["p_best"].to_numpy()).all()
    flagged = set(res.records.loc[res.records["flagged"], "index"].astype(int)) & set(planted.tolist())
    assert len(flagged) <= summ["n_flaggable"]
    assert set(tab.loc[tab["flaggable"], "index"]) >= flagged


def test_every_subset_of_views_is_a_bound():
    # a smaller dictionary of views can only give counts at least as large (the best view decides)
    train, holdout, release = _hand_built()
    close = match_closeness(train, holdout, release, CAT)
    full, _ = best_possible_flags(close, [0, 1, 2])
    for r in range(1, len(close) + 1):
        for views in itertools.combinations(close, r):
            sub, _ = best_possible_flags({v: close[v] for v in views}, [0, 1, 2])
            assert (sub["holdout_as_close"].to_numpy() >= full["holdout_as_close"].to_numpy()).all()
