"""Copies of records in dense regions: flagged at the default resolution, and no flag where nothing leaks.

A copy of a record whose released neighbourhood is dense is weak evidence when
``resolution`` is coarse: non-members have released records as near, within the
``resolution`` of a column's range that counts as a copy.  At the default (0.01 % of a
column's range) an exact copy stands out from the non-members' natural near matches.
Built to make the flag say yes (exact copies of the 20 densest training records, none
flagged at the former default 0.2 %) and no (null releases with coarse values, ties and
population duplicates), with the p-values checked against a brute-force computation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import vrlib
from vrlib.data import Schema, prepare
from vrlib.selection import vulnerability_scores

SCHEMA = Schema(["g"], ["x", "y"])
FAST = dict(attacks=("copies", "distance"), wp29=False)


def dense_population(n: int, seed: int, decimals: int = 4) -> pd.DataFrame:
    """One binary category and two normal values: most records sit in a dense middle."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "g": rng.choice(["p", "q"], n),
            "x": rng.normal(size=n).round(decimals),
            "y": rng.normal(size=n).round(decimals),
        }
    )


@pytest.fixture(scope="module")
def dense_copies():
    pop = dense_population(9000, 4)
    train, holdout, other = (
        pop.iloc[:1000].reset_index(drop=True),
        pop.iloc[1000:4000].reset_index(drop=True),
        pop.iloc[4000:],
    )
    vk = vulnerability_scores(prepare(train, SCHEMA), SCHEMA).to_numpy()
    idx = np.argsort(vk, kind="stable")[:20]  # the least isolated records
    release = pd.concat([other.iloc[:1980], train.iloc[idx]], ignore_index=True)
    return train, holdout, release, idx


def brute_force_pvalues(train, holdout, release, resolution, k=5):
    """The flag's p-values from pairwise Gower distances: per view the empirical share of holdout scores at least as high, Bonferroni over the views."""
    tables = [train, holdout, release]
    span = {c: np.ptp(np.concatenate([t[c].to_numpy(float) for t in tables])) for c in SCHEMA.continuous}

    def closeness(q, cols):
        d = sum(
            np.abs(q[c].to_numpy(float)[:, None] - release[c].to_numpy(float)[None, :]) / span[c]
            if c in span
            else (q[c].to_numpy()[:, None] != release[c].to_numpy()[None, :]).astype(float)
            for c in cols
        ) / len(cols)
        d = np.sort(d, axis=1)
        eps = resolution / len(cols)
        return np.log((d[:, 1 : k + 1].mean(axis=1) + eps) / (d[:, 0] + eps))

    views = [["g", "x", "y"], ["x", "y"]]
    p = []
    for cols in views:
        s, null = closeness(train, cols), closeness(holdout, cols)
        p.append((1 + (null[None, :] >= s[:, None] - 1e-12).sum(axis=1)) / (len(null) + 1))
    return np.minimum(1.0, len(views) * np.min(p, axis=0)), [max(closeness(holdout, c)) for c in views], p


def test_copies_in_a_dense_region_are_flagged_at_the_default_resolution(dense_copies):
    train, holdout, release, idx = dense_copies
    res = vrlib.audit(train, release, holdout, SCHEMA, seed=0, **FAST)
    rec = res.records.set_index("index")
    assert rec.loc[idx, "flagged"].all()
    assert rec["flagged"].sum() == len(idx)  # and nothing else
    assert set(res.records.head(20)["index"]) == set(idx)
    # the former default (0.2 % of a column's range) counts the non-members' natural near matches as copies too
    coarse = vrlib.audit(train, release, holdout, SCHEMA, seed=0, resolution=0.002, **FAST).records.set_index("index")
    assert coarse.loc[idx, "flagged"].sum() == 0


def test_pvalues_equal_a_brute_force_computation(dense_copies):
    train, holdout, release, _ = dense_copies
    # the closeness to every released record (the assignment's is checked in test_audit_assignment.py)
    res = vrlib.audit(train, release, holdout, SCHEMA, seed=0, assign=False, **FAST)
    rec = res.records.sort_values("index")
    train_p = prepare(train, SCHEMA)
    brute, top, per_view = brute_force_pvalues(train_p, prepare(holdout, SCHEMA), prepare(release, SCHEMA), 0.0001)
    # within the holdout's scores the p-values are empirical (exact); beyond them the tail only goes lower
    within = np.all([np.asarray(pv) > 1 / (len(holdout) + 1) for pv in per_view], axis=0)
    assert within.sum() > 900
    assert np.allclose(rec["p_value"].to_numpy()[within], brute[within])
    assert (rec["p_value"].to_numpy()[~within] <= brute[~within] + 1e-12).all()


@pytest.mark.parametrize("decimals", [4, 1])
def test_dense_null_release_with_ties_flags_nothing(decimals):
    # real unseen records as the release; with one decimal most records have exact twins in every table
    pop = dense_population(9000, 5, decimals)
    train, holdout, release = pop.iloc[:1000], pop.iloc[1000:4000], pop.iloc[4000:6000]
    s = vrlib.audit(train, release, holdout, SCHEMA, seed=0, **FAST).summary
    assert s["n_flagged"] == 0
    assert s["membership_auc"]["ci_low"] <= 0.5 <= s["membership_auc"]["ci_high"]
    if decimals == 1:
        assert s["n_holdout_in_train"] > 500  # population duplicates, accepted


def test_dense_population_drawn_with_replacement_flags_nothing():
    # twins fall within and across the training records, the holdout and the release
    pop = dense_population(6000, 6)
    pop = pop.iloc[np.random.default_rng(7).integers(0, len(pop), len(pop))].reset_index(drop=True)
    train, holdout, release = pop.iloc[:1000], pop.iloc[1000:4000], pop.iloc[4000:6000]
    s = vrlib.audit(train, release, holdout, SCHEMA, seed=0, **FAST).summary
    assert s["n_holdout_in_train"] > 300
    assert s["n_flagged"] == 0
