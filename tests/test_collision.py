"""Membership collisions: the frequency indicator (eq. 4), ground truth, thresholds, the TableGAN-MCA attack."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

from vrlib.attacks.collision import TableGanMCA, frequency_share, occurs_in, record_frequency, threshold
from vrlib.data import Schema, prepare
from vrlib.errors import VrlibError
from vrlib.metrics import recovery_metrics

from conftest import make_table


def brute_frequency(df):
    rows = [tuple(r) for r in df.astype(object).itertuples(index=False)]
    return np.array([sum(r == s for s in rows) for r in rows])


def test_frequency_hand_made_duplicates_and_near_duplicates():
    schema = Schema(["a", "b"], ["x"])
    df = prepare(pd.DataFrame({
        "a": ["u", "u", "u", "v", "u", "u"],
        "b": ["p", "p", "p", "p", "q", "p"],
        "x": [1.0, 1.0, 1.0, 1.0, 1.0, 1.0000001],  # rows 3, 4, 5 differ from 0-2 in exactly one value
    }), schema)  # fmt: skip
    assert record_frequency(df, schema).tolist() == [3, 3, 3, 1, 1, 1]
    assert np.allclose(record_frequency(df, schema, normalize=True), np.array([3, 3, 3, 1, 1, 1]) / 6)


def test_frequency_share_hand_computed():
    # values A x4, B x3, C x2, D x1, E x1: 11 records, 5 distinct values
    schema = Schema(["v"], [])
    df = prepare(pd.DataFrame({"v": list("AAAABBBCCDE")}), schema)
    # k = 1: D and E (2 records, 2 values)
    assert frequency_share(df, schema, 1) == pytest.approx(2 / 11)
    assert frequency_share(df, schema, 1, count="distinct") == pytest.approx(2 / 11)
    assert frequency_share(df, schema, 1, count="distinct", per="distinct") == pytest.approx(2 / 5)
    # k = 3: B, C, D, E: 3 + 2 + 1 + 1 = 7 records, 4 distinct values
    assert frequency_share(df, schema, 3) == pytest.approx(7 / 11)
    assert frequency_share(df, schema, 3, count="distinct") == pytest.approx(4 / 11)
    assert frequency_share(df, schema, 3, count="distinct", per="distinct") == pytest.approx(4 / 5)
    assert frequency_share(df, schema, 3, count="records", per="distinct") == pytest.approx(7 / 5)
    assert frequency_share(df, schema, 4) == 1.0


def test_frequency_share_against_brute_force():
    df, schema = make_table(n=80, seed=3)
    df = df.iloc[np.random.default_rng(0).integers(0, 30, 80)].reset_index(drop=True)  # duplicates
    f = brute_frequency(df)
    first = ~df.astype(object).duplicated().to_numpy()
    for k in (1, 2, 3, 5):
        assert frequency_share(df, schema, k) == pytest.approx((f <= k).mean())
        assert frequency_share(df, schema, k, count="distinct") == pytest.approx((f[first] <= k).sum() / len(df))
        assert frequency_share(df, schema, k, count="distinct", per="distinct") == pytest.approx((f[first] <= k).mean())


@pytest.mark.parametrize(
    "bad", [{"at_most": 0}, {"at_most": 2.5}, {"at_most": True}, {"count": "rows"}, {"per": "all"}]
)
def test_frequency_share_bad_arguments(bad):
    schema = Schema(["v"], [])
    df = prepare(pd.DataFrame({"v": list("AAB")}), schema)
    with pytest.raises(VrlibError):
        frequency_share(df, schema, **{"at_most": 1, **bad})


def test_frequency_float_columns_and_signed_zero():
    schema = Schema([], ["x", "y"])
    df = pd.DataFrame({"x": [0.1 + 0.2, 0.3, -0.0, 0.0, 2.5], "y": [1.0, 1.0, 7.0, 7.0, 2.5]})
    # 0.1 + 0.2 != 0.3 in floating point: exact comparison keeps them apart; -0.0 == 0.0
    assert record_frequency(df, schema).tolist() == [1, 1, 2, 2, 1]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_frequency_matches_brute_force(seed):
    df, schema = make_table(n=80, n_cat=2, n_cont=1, n_levels=2, seed=seed)
    df["x0"] = df["x0"].round(0)  # many exact duplicates
    assert record_frequency(df, schema).tolist() == brute_frequency(df).tolist()


def test_categories_compared_by_value_not_code():
    schema = Schema(["a"], [])
    left = prepare(pd.DataFrame({"a": ["x", "y"]}), schema)
    right = pd.DataFrame({"a": pd.Categorical(["y", "z"], categories=["z", "y"])})  # 'y' has another code
    assert occurs_in(left, right, schema).tolist() == [False, True]


def test_occurs_in_matches_brute_force():
    df, schema = make_table(n=60, n_cat=2, n_cont=1, n_levels=2, seed=3)
    df["x0"] = df["x0"].round(0)
    ref, rec = df.iloc[:30], df.iloc[30:]
    ref_rows = {tuple(r) for r in ref.astype(object).itertuples(index=False)}
    want = [tuple(r) in ref_rows for r in rec.astype(object).itertuples(index=False)]
    assert occurs_in(rec, ref, schema).tolist() == want


def test_bad_releases():
    df, schema = make_table(n=20)
    with pytest.raises(VrlibError, match="columns differ"):
        record_frequency(df.drop(columns="c0"), schema)
    with pytest.raises(VrlibError, match="columns differ"):
        record_frequency(df.assign(extra=1), schema)
    with pytest.raises(VrlibError, match="empty"):
        record_frequency(df.iloc[:0], schema)
    bad = df.copy()
    bad.loc[3, "x0"] = np.nan
    with pytest.raises(VrlibError, match="missing values"):
        record_frequency(bad, schema)
    with pytest.raises(VrlibError, match="N_s must be >= 1"):
        TableGanMCA().fit([], schema)
    with pytest.raises(VrlibError, match="shadow_multiplier"):
        TableGanMCA(shadow_multiplier=0).fit(df, schema)
    with pytest.raises(VrlibError, match="not fitted"):
        TableGanMCA().score(df)


def test_threshold_rules():
    s = np.array([0.0, 0.1, 0.2, 0.9])
    assert threshold(s) == pytest.approx(s.mean() + 2 * s.std())
    assert threshold(s, "value", value=0.3) == 0.3
    assert threshold(np.arange(101.0), "top_q", q=0.1) == pytest.approx(90.0)
    with pytest.raises(VrlibError, match="unknown threshold rule"):
        threshold(s, "median")
    with pytest.raises(VrlibError, match="finite"):
        threshold([0.1, np.nan])


def test_recovery_metrics_no_division_by_zero():
    m = recovery_metrics([False, False], [True, False])
    assert m["n_flagged"] == 0 and np.isnan(m["precision"]) and m["recall"] == 0
    m = recovery_metrics([True, True, False], [True, False, True])
    assert (m["precision"], m["recall"], m["base_rate"]) == (0.5, 0.5, pytest.approx(2 / 3))


def _copy_release(seed=0, n_train=400, n_copied=40, repeats=5):
    """A training table and a release: half its rows are copies of training rows (each repeated), half are new."""
    rng = np.random.default_rng(seed)
    levels = [f"v{i}" for i in range(6)]
    cats = {f"c{j}": pd.CategoricalDtype(levels) for j in range(5)}  # 6^5 = 7,776 possible records
    schema = Schema(list(cats), [])
    # all possible records, shuffled: the first n_train are the training data, the rest never occur in it
    grid = np.array(list(itertools.product(range(6), repeat=5)))[rng.permutation(6**5)]
    table = lambda codes: pd.DataFrame(
        {c: pd.Categorical.from_codes(codes[:, j], dtype=cats[c]) for j, c in enumerate(cats)}
    )
    train = table(grid[:n_train])
    copied = np.repeat(grid[:n_copied], repeats, axis=0)
    fresh = grid[n_train : n_train + n_copied * repeats]
    release = table(np.vstack([copied, fresh])).sample(frac=1, random_state=seed).reset_index(drop=True)
    return train, release, schema


@pytest.mark.slow
def test_attack_recovers_repeated_copies():
    train, release, schema = _copy_release()
    member = occurs_in(release, train, schema)
    assert member.mean() == 0.5
    attack = TableGanMCA(shadow_generator="synthpop", rule="value", value=0.5, seed=0).fit(release, schema)
    out = attack.attack(release)
    assert out.frequency.tolist() == record_frequency(release, schema).tolist()
    m = recovery_metrics(out.flagged, member)
    assert m["n_flagged"] > 0 and m["precision"] >= 0.9
    # the scores rank the copies above the new records
    from vrlib.metrics import auc

    assert auc(member, out.score) > 0.9
    # with half the release members, mean + 2 std of the scores lies above every score: say so
    attack.rule = "mean_std"
    with pytest.warns(RuntimeWarning, match="flags no record"):
        assert not attack.attack(release).flagged.any()


@pytest.mark.slow
def test_attack_on_release_without_copies_flags_nothing_real():
    train, release, schema = _copy_release(seed=1)
    release = release[~occurs_in(release, train, schema)].reset_index(drop=True)
    attack = TableGanMCA(shadow_generator="synthpop", seed=0).fit(release, schema)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = attack.attack(release)
    m = recovery_metrics(out.flagged, occurs_in(release, train, schema))
    assert m["n_true"] == 0 and m["n_members"] == 0


@pytest.mark.slow
def test_attack_model_2_uses_every_copy_and_warns_when_nothing_collides():
    train, release, schema = _copy_release(seed=2)
    copies = [release.iloc[:200].reset_index(drop=True), release.iloc[200:].reset_index(drop=True)]
    attack = TableGanMCA(shadow_generator="synthpop", seed=0).fit(copies, schema)
    assert attack.n_releases_ == 2
    assert [len(s) for s in attack.shadow_sets_] == [400, 400]  # N_s x n records per shadow set
    assert len(attack.score(copies)) == 400
    # continuous values that never repeat: no shadow record occurs in the release
    schema_c = Schema([], ["x"])
    rel = pd.DataFrame({"x": np.random.default_rng(0).normal(size=200)})
    with pytest.warns(RuntimeWarning, match="labelled a non-member"):
        fitted = TableGanMCA(shadow_generator="noise", shadow_params={"scale": 1.0}, seed=0).fit(rel, schema_c)
    with pytest.warns(RuntimeWarning, match="flags no record"):
        out = fitted.attack(rel)
    assert not out.flagged.any()


def test_match_precision_rounds_to_the_reference_decimals():
    from vrlib.attacks.collision import match_precision

    schema = Schema(["c"], ["age", "w", "z"])
    ref = prepare(pd.DataFrame({"c": ["a", "b"], "age": [30.0, 41.0], "w": [1.25, 2.5], "z": [np.pi, np.e]}), schema)
    out = match_precision(
        pd.DataFrame({"c": ["a", "a"], "age": [30.4, 40.6], "w": [1.234, 2.5], "z": [0.123456789, 1.0]}), ref, schema
    )
    assert out["age"].tolist() == [30.0, 41.0] and out["w"].tolist() == [1.23, 2.5]
    assert out["z"].tolist() == [0.123456789, 1.0]  # pi needs more than 6 decimals: left alone
