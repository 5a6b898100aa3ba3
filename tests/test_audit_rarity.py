"""The rarity view of exact matches: its pieces against independent computations, and its flag on cases built for yes and no.

Yes: exact copies of the rarest training records of a categorical table, where a
holdout record of the same rarity is almost never matched.  No: a release drawn from
the population (common patterns repeat, heavy ties), a population drawn with
replacement (twins in every part), and exact copies of the most common patterns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

import vrlib
from vrlib.audit.evidence import copy_evidence
from vrlib.audit.inputs import check_tables
from vrlib.audit.pvalues import benjamini_hochberg, calibration_check
from vrlib.audit.rarity import RarityModel, chow_liu_loglik
from vrlib.data import Schema

COLS = [f"k{i}" for i in range(10)]
CHAIN = Schema(COLS, [])


def chain_population(n: int, seed: int, keep: float = 0.6) -> pd.DataFrame:
    """Ten skewed categorical columns, each a copy of the previous one with probability ``keep``: rare and common patterns."""
    rng = np.random.default_rng(seed)
    p = np.array([0.6, 0.2, 0.1, 0.06, 0.04])
    out = np.empty((n, len(COLS)), dtype=int)
    out[:, 0] = rng.choice(5, n, p=p)
    for j in range(1, len(COLS)):
        out[:, j] = np.where(rng.random(n) < keep, out[:, j - 1], rng.choice(5, n, p=p))
    return pd.DataFrame({c: np.array(list("abcde"))[out[:, j]] for j, c in enumerate(COLS)})


def evidence(train, holdout, release, **kw):
    tr, rel, ho = check_tables(train, release, holdout, CHAIN)
    return copy_evidence(tr, ho, rel, CHAIN, **kw)


@pytest.fixture(scope="module")
def chain():
    pop = chain_population(6500, 0)
    return (
        pop.iloc[:1500].reset_index(drop=True),
        pop.iloc[1500:3000].reset_index(drop=True),
        pop.iloc[3000:5000].reset_index(drop=True),
    )


def test_chow_liu_loglik_matches_a_brute_force_count():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 3, (40, 4))
    codes[:, 1] = np.where(rng.random(40) < 0.7, codes[:, 0], codes[:, 1])
    loglik, tree = chow_liu_loglik(codes)
    card = [len(np.unique(codes[:, j])) for j in range(4)]
    for i in range(len(codes)):
        others = np.delete(codes, i, axis=0)
        expected = 0.0
        for v, u in tree:
            if u is None:
                expected += np.log(((others[:, v] == codes[i, v]).sum() + 0.5) / (len(others) + 0.5 * card[v]))
            else:
                parent = others[:, u] == codes[i, u]
                joint = (parent & (others[:, v] == codes[i, v])).sum()
                expected += np.log((joint + 0.5) / (parent.sum() + 0.5 * card[v]))
        assert loglik[i] == pytest.approx(expected, rel=1e-12)
    assert sorted(v for v, _ in tree) == [0, 1, 2, 3] and sum(u is None for _, u in tree) == 1


def test_chow_liu_tree_recovers_a_chain():
    pop = chain_population(5000, 1, keep=0.8)
    codes = np.column_stack([pd.factorize(pop[c])[0] for c in COLS])
    _, tree = chow_liu_loglik(codes)
    edges = {frozenset((v, u)) for v, u in tree if u is not None}
    assert edges == {frozenset((j - 1, j)) for j in range(1, len(COLS))}


def test_logistic_fit_and_bound_match_an_independent_computation():
    rng = np.random.default_rng(0)
    r = rng.normal(-10, 3, 3000)
    y = rng.random(3000) < 1 / (1 + np.exp(-(4.0 + 0.6 * r)))
    model = RarityModel(confidence=0.95, max_slope=np.inf).fit(r, y)
    # maximum likelihood by a general optimiser
    x = np.column_stack([np.ones_like(r), r])

    def nll(b):
        eta = x @ b
        return -(y * eta - np.logaddexp(0, eta)).sum()

    ml = optimize.minimize(nll, np.zeros(2), method="BFGS", options={"gtol": 1e-9}).x
    assert model.coef_ == pytest.approx(ml, rel=1e-4, abs=1e-4)
    # the Wald bound: eta + z sqrt(x' I^-1 x), I the Fisher information at the fit
    mu = 1 / (1 + np.exp(-(x @ ml)))
    cov = np.linalg.inv(x.T @ (x * (mu * (1 - mu))[:, None]))
    at = np.array([-20.0, -10.0, 0.0])
    xa = np.column_stack([np.ones(3), at])
    eta = xa @ ml + stats.norm.ppf(0.95) * np.sqrt(np.einsum("ij,jk,ik->i", xa, cov, xa))
    assert model.upper(at) == pytest.approx(1 / (1 + np.exp(-eta)), rel=1e-4)
    assert model.usable_
    # p-values: the bound where matched, 1 elsewhere; monotone in the rarity
    p = model.pvalues(at, [True, True, False])
    assert p[2] == 1.0 and p[0] < p[1] < 1.0


def test_a_steep_slope_is_capped_and_the_intercept_refitted():
    rng = np.random.default_rng(1)
    r = rng.normal(-10, 3, 3000)
    y = rng.random(3000) < 1 / (1 + np.exp(-(25.0 + 2.5 * r)))
    model = RarityModel(max_slope=1.0).fit(r, y)
    assert model.slope_fitted_ > 2 and model.coef_[1] == 1.0
    a = optimize.minimize_scalar(
        lambda a: -(y * (a + r) - np.logaddexp(0, a + r)).sum(), bounds=(-50, 50), method="bounded"
    )
    assert model.coef_[0] == pytest.approx(a.x, abs=1e-4)
    # the capped curve is above the steep one for rarer records: more conservative where it extrapolates
    steep = RarityModel(max_slope=np.inf).fit(r, y)
    assert (model.upper([-25.0, -20.0]) > steep.upper([-25.0, -20.0])).all()
    # matches of common patterns alone (as a release of a neural generator gave): the refit still converges
    r = rng.normal(-15, 5, 3000)
    y = rng.random(3000) < 1 / (1 + np.exp(-(19.7 + 2.9 * r)))
    model = RarityModel(max_slope=1.0).fit(r, y)
    assert model.usable_ and np.isfinite(model.coef_).all() and model.coef_[1] == 1.0
    assert np.isfinite(model.upper([-30.0, -15.0])).all()


def test_too_few_matches_leave_the_flag_as_it_was(chain):
    train, holdout, other = chain
    model = RarityModel(min_matches=20).fit(np.arange(100.0), np.arange(100) < 5)
    assert not model.usable_ and (model.pvalues(np.arange(3.0), [True] * 3) == 1).all()
    assert not model.check(np.arange(100.0), np.arange(100) < 5)["passed"]
    # a release with no exact match of a holdout record: the view is not used, the p-values unchanged
    shifted = other.replace({"a": "e", "e": "a"})
    with_view, _, info = evidence(train, holdout, shifted.iloc[:500])
    without, _, _ = evidence(train, holdout, shifted.iloc[:500], rarity=False)
    assert not info["rarity"]["used"]
    assert np.array_equal(with_view["p_value"], without["p_value"])


def test_calibration_check_says_no_to_small_pvalues_and_yes_to_uniform_ones():
    rng = np.random.default_rng(2)
    uniform = [rng.random(2000), rng.random(2000)]
    assert calibration_check(uniform)["passed"]
    assert not calibration_check([u / 5 for u in uniform])["passed"]
    assert not calibration_check([uniform[0], np.r_[uniform[1][:-1], 1e-9]])["passed"]  # one far too small


def test_exact_copies_of_rare_records_are_flagged(chain):
    train, holdout, other = chain
    ev, _, _ = evidence(train, holdout, other)
    rare = np.argsort(ev["rarity"].to_numpy(), kind="stable")[:10]
    release = pd.concat([other.iloc[:1990], train.iloc[rare]], ignore_index=True)
    res = vrlib.audit(train, release, holdout, CHAIN, seed=0, attacks=("copies", "distance"), wp29=False)
    rec, rarity = res.records.set_index("index"), res.summary["copy_evidence"]["rarity"]
    assert rarity["used"] and rarity["check"]["passed"]
    assert rec.loc[rare, "flagged"].mean() >= 0.8
    assert rec["flagged"].sum() - rec.loc[rare, "flagged"].sum() <= 1
    # the distance view alone, with its empirical floor 1 / 1,501, cannot flag them
    without, _, _ = evidence(train, holdout, release, rarity=False)
    assert benjamini_hochberg(without["p_value"], 0.05)[1][rare].sum() == 0


def test_exact_copies_of_common_patterns_are_weak_evidence(chain):
    train, holdout, other = chain
    ev, _, _ = evidence(train, holdout, other)
    common = np.argsort(-ev["rarity"].to_numpy(), kind="stable")[:10]
    release = pd.concat([other.iloc[:1990], train.iloc[common]], ignore_index=True)
    ev, _, info = evidence(train, holdout, release)
    assert info["rarity"]["used"]
    assert (ev["p_rarity"].to_numpy()[common] > 0.05).all()
    assert not benjamini_hochberg(ev["p_value"], 0.05)[1].any()


@pytest.mark.parametrize("duplicates", [False, True])
def test_null_releases_flag_nothing_and_the_rarity_pvalues_err_large(chain, duplicates):
    train, holdout, other = chain
    if duplicates:
        # twins in every part: the population drawn with replacement before the split
        rng = np.random.default_rng(21)
        pop = pd.concat([train, holdout, other], ignore_index=True)
        pop = pop.iloc[rng.integers(0, len(pop), len(pop))].reset_index(drop=True)
        train, holdout, other = pop.iloc[:1500], pop.iloc[1500:3000], pop.iloc[3000:]
    ev, ev_holdout, info = evidence(train, holdout, other)
    assert info["rarity"]["used"] and info["rarity"]["n_matched_holdout"] > 500  # heavy ties
    assert not benjamini_hochberg(ev["p_value"], 0.05)[1].any()
    for t in (0.01, 0.05):
        assert (ev["p_rarity"] <= t).mean() <= t
