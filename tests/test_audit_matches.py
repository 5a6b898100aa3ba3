"""Near-match evidence (:mod:`vrlib.audit.matches`): counts against brute force, copies with one category changed ranked first, nulls calibrated."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import vrlib
from vrlib.audit import pvalues as pv
from vrlib.audit.matches import masked_counts, match_codes, match_scores, near_match_counts
from vrlib.data import Schema, prepare

FAST = dict(attacks=("copies", "distance"), wp29=False)


def brute_force(queries, pool, exclude_self=False):
    """Rows of ``pool`` differing from each query in at most one column, pair by pair."""
    diff = (queries[:, None, :] != pool[None, :, :]).sum(axis=2)
    return (diff <= 1).sum(axis=1) - int(exclude_self)


def test_near_match_counts_equal_brute_force():
    rng = np.random.default_rng(0)
    q = rng.integers(0, 3, (300, 5))
    p = rng.integers(0, 3, (400, 5))
    np.testing.assert_array_equal(near_match_counts(q, p), brute_force(q, p))
    np.testing.assert_array_equal(near_match_counts(q, q, exclude_self=True), brute_force(q, q, exclude_self=True))
    exact, masked = masked_counts(q, p)
    np.testing.assert_array_equal(exact, (q[:, None, :] == p[None, :, :]).all(axis=2).sum(axis=1))
    for j in range(5):
        keep = [c for c in range(5) if c != j]
        by_hand = (q[:, None, keep] == p[None, :, keep]).all(axis=2).sum(axis=1)
        np.testing.assert_array_equal(masked[:, j], by_hand)


def test_match_codes_tolerance_and_integer_columns():
    schema = Schema(["a"], ["x", "n"])
    t1 = pd.DataFrame({"a": ["p", "q"], "x": [0.0, 0.5], "n": [1.0, 2.0]})
    t2 = pd.DataFrame({"a": ["q", "p"], "x": [0.5004, 0.51], "n": [2.0, 3.0]})
    c1, c2 = match_codes([t1, t2], schema, resolution=0.002)  # x: cells of 0.002 × 0.51
    assert c1[1, 0] == c2[0, 0] and c1[0, 0] == c2[1, 0]
    assert c1[1, 1] == c2[0, 1]  # 0.5 and 0.5004 in one cell
    assert c1[1, 1] != c2[1, 1]  # 0.5 and 0.51 are not
    assert c1[1, 2] == c2[0, 2] and c1[0, 2] != c2[1, 2]  # integer-valued: equality


def sparse_population(n: int, seed: int) -> pd.DataFrame:
    """Twelve categorical columns of eight skewed values: most all-but-one patterns are rare, some common."""
    rng = np.random.default_rng(seed)
    p = np.arange(8, 0, -1) / 36
    return pd.DataFrame({f"c{i}": rng.choice(list(VALUES), n, p=p) for i in range(12)})


VALUES = "stuvwxyz"
SPARSE = Schema([f"c{i}" for i in range(12)], [])


@pytest.fixture(scope="module")
def sparse():
    pop = sparse_population(7000, 4)
    return pop.iloc[:1000].reset_index(drop=True), pop.iloc[1000:4000].reset_index(drop=True), pop.iloc[4000:]


def plant_categorical(train, other, rng, n=20, n_release=2000):
    """``other`` records with ``n`` training records planted, each with one category changed."""
    idx = rng.choice(len(train), n, replace=False)
    planted = train.iloc[idx].copy().reset_index(drop=True)
    for i in range(n):
        col = f"c{rng.integers(12)}"
        planted.loc[i, col] = rng.choice(sorted(set(VALUES) - {planted.loc[i, col]}))
    return pd.concat([other.iloc[: n_release - n], planted], ignore_index=True), idx


def test_categorical_near_copies_rank_first_without_false_flags(sparse):
    train, holdout, other = sparse
    release, idx = plant_categorical(train, other, np.random.default_rng(0))
    rec = vrlib.audit(train, release, holdout, SPARSE, seed=0, **FAST).records.set_index("index")
    # every planted record has a released record agreeing on eleven of its twelve columns
    assert (rec.loc[idx, "release_matches"] >= 1).all()
    assert (rec.loc[idx, "risk_rank"] <= 50).mean() >= 0.9
    assert rec.loc[idx, "p_near_match"].median() < 0.02
    false = rec["flagged"].sum() - rec.loc[idx, "flagged"].sum()
    assert false <= max(1, 0.1 * rec["flagged"].sum())  # the distance views' flag, as in test_audit_resolution
    # the near-match view alone separates them from the other training records
    others = rec.drop(index=idx)
    assert (rec.loc[idx, "p_near_match"] <= 0.01).mean() >= 0.9
    assert (others["p_near_match"] <= 0.01).mean() <= 0.01 + 3 * np.sqrt(0.01 * 0.99 / len(others))


def test_null_release_near_match_pvalues_are_calibrated(sparse):
    train, holdout, other = sparse
    res = vrlib.audit(train, other.iloc[:2000], holdout, SPARSE, seed=0, **FAST)
    rec = res.records
    assert res.summary["n_flagged"] == 0
    n = len(rec)
    for col in ("p_near_match", "p_rank"):
        for t in (0.01, 0.05, 0.2):
            # at most the level plus three binomial standard errors
            assert (rec[col] <= t).mean() <= t + 3 * np.sqrt(t * (1 - t) / n)
        assert pv.benjamini_hochberg(rec[col].to_numpy(), 0.05)[1].sum() == 0  # nothing even if it flagged


def test_heavy_ties_and_population_duplicates_give_no_near_match_evidence():
    # few values per column: every record has exact twins in the holdout, the release and the training data
    rng = np.random.default_rng(3)
    df = pd.DataFrame({c: rng.choice(list("pqr"), 6000, p=[0.6, 0.3, 0.1]) for c in "abcde"})
    schema = Schema(list("abcde"), [])
    train, holdout, release = df.iloc[:1500], df.iloc[1500:3500].copy(), df.iloc[3500:5500]
    holdout.iloc[:300] = train.iloc[:300].to_numpy()  # population duplicates in the holdout
    rec = vrlib.audit(train, release, holdout, schema, seed=0, **FAST).records
    assert rec["flagged"].sum() == 0
    assert pv.benjamini_hochberg(rec["p_rank"].to_numpy(), 0.05)[1].sum() == 0
    assert (rec["p_near_match"] <= 0.05).mean() <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / len(rec))


def test_favoured_patterns_score_below_a_rare_single_match():
    # a pattern the release repeats many times is the generator's taste, not a copy
    schema = SPARSE
    pop = prepare(sparse_population(4000, 9), schema)
    holdout, others = pop.iloc[:3000], pop.iloc[3000:]
    rare = others.iloc[[0]].reset_index(drop=True)
    favoured = others.iloc[[1]].reset_index(drop=True)
    release = pd.concat([others.iloc[2:], rare] + [favoured] * 30, ignore_index=True)
    records = {"train": pd.concat([rare, favoured], ignore_index=True), "holdout": holdout}
    s = match_scores(records, "holdout", release, schema)["train"]
    assert s.loc[1, "release_matches"] >= 30
    assert s.loc[0, "match_score"] > s.loc[1, "match_score"]
