"""The audit's flag on copies with one category changed: yes where they are planted, no where nothing leaks.

Built to make the flag say yes (copies with one category changed, on a categorical
table and on a mixed one) and no (null releases, a population drawn with replacement
so that twins fall in every part, a shifted holdout with planted copies).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_audit_matches import SPARSE, plant_categorical, sparse_population
from test_audit_resolution import SCHEMA as MIXED
from test_audit_resolution import planted_release, population

import vrlib
from vrlib.audit.evidence import copy_evidence
from vrlib.audit.inputs import check_tables

FAST = dict(attacks=("copies", "distance"), wp29=False)


@pytest.fixture(scope="module")
def sparse():
    pop = sparse_population(7000, 4)
    return pop.iloc[:1000].reset_index(drop=True), pop.iloc[1000:4000].reset_index(drop=True), pop.iloc[4000:]


def at_most_level(p, t):
    """The share of ``p`` at most ``t`` is not above ``t`` by more than three binomial standard errors."""
    return (np.asarray(p) <= t).mean() <= t + 3 * np.sqrt(t * (1 - t) / len(p))


def test_categorical_near_copies_are_flagged_on_a_categorical_table(sparse):
    # one distance view only (no continuous columns): a changed category is 1/12 of the Gower distance
    train, holdout, other = sparse
    release, idx = plant_categorical(train, other, np.random.default_rng(0))
    res = vrlib.audit(train, release, holdout, SPARSE, seed=0, **FAST)
    rec = res.records.set_index("index")
    assert rec.loc[idx, "flagged"].mean() >= 0.8
    false = int(rec["flagged"].sum() - rec.loc[idx, "flagged"].sum())
    assert false <= 1


def test_categorical_near_copies_are_flagged_on_a_mixed_table():
    # mixed columns: a copy with one category changed is exact in the continuous view alone
    pop = population(9000, 1)
    train, holdout, other = pop.iloc[:1000].reset_index(drop=True), pop.iloc[1000:4000], pop.iloc[4000:]
    release, idx = planted_release(train, other, np.random.default_rng(2), n_exact=10, n_cont=10, n_cat=10)
    res = vrlib.audit(train, release, holdout.reset_index(drop=True), MIXED, seed=0, **FAST)
    rec, s = res.records.set_index("index"), res.summary
    assert all(v["check"]["passed"] for v in s["copy_evidence"]["views"].values())
    assert rec.loc[idx[20:], "flagged"].mean() >= 0.8  # categorical near-copies
    assert rec.loc[idx[:20], "flagged"].mean() >= 0.8  # exact and continuous near-copies
    false = int(rec["flagged"].sum() - rec.loc[idx, "flagged"].sum())
    assert false <= max(1, 0.1 * rec["flagged"].sum())  # a 5 % rate in expectation; one release varies
    # a null release of the same table: nothing
    null = vrlib.audit(train, other.iloc[:2000], holdout.reset_index(drop=True), MIXED, seed=0, **FAST)
    assert null.summary["n_flagged"] == 0 and at_most_level(null.records["p_value"], 0.01)


def test_null_release_flags_nothing_and_its_pvalues_are_calibrated(sparse):
    train, holdout, other = sparse
    res = vrlib.audit(train, other.iloc[:2000], holdout, SPARSE, seed=0, **FAST)
    assert res.summary["n_flagged"] == 0
    for t in (0.01, 0.05, 0.2):
        assert at_most_level(res.records["p_value"], t)
    # the holdout records' own p-values (each counted among the holdout) are calibrated too
    tr, rel, ho = check_tables(train, other.iloc[:2000], holdout, SPARSE)
    _, ev_holdout, _ = copy_evidence(tr, ho, rel, SPARSE)
    for t in (0.01, 0.05, 0.2):
        assert at_most_level(ev_holdout["p_value"], t)


def test_population_drawn_with_replacement_flags_nothing():
    # twins in every part: training records, holdout and the generator's records share exact duplicates
    rng = np.random.default_rng(21)
    base = sparse_population(3000, 8)
    pop = base.iloc[rng.integers(0, len(base), 7000)].reset_index(drop=True)
    train, holdout, release = pop.iloc[:1000], pop.iloc[1000:4000], pop.iloc[4000:6000]
    res = vrlib.audit(train, release, holdout, SPARSE, seed=0, **FAST)
    s = res.summary
    assert s["n_holdout_in_train"] > 200  # the population's own duplicates, kept
    assert s["n_flagged"] == 0
    assert at_most_level(res.records["p_value"], 0.05)


def test_shifted_holdout_withholds_a_flag_that_would_say_yes(sparse):
    train, _, other = sparse
    release, idx = plant_categorical(train, other, np.random.default_rng(1))
    # a holdout from another population: the first column's commonest value only
    shifted = sparse_population(20000, 5)
    shifted = shifted[shifted["c0"] == "s"].iloc[:3000].reset_index(drop=True)
    res = vrlib.audit(train, release, shifted, SPARSE, seed=0, **FAST)
    s = res.summary
    assert s["holdout_check"]["shift"] and "holdout_shift" in [w["code"] for w in s["warnings"]]
    assert s["n_flagged"] == 0 and s["flag_withheld"] and not res.records["flagged"].any()
