"""Intervals over root seeds and paired sign tests: hand-computed cases, and behaviour on data without signal."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from vrlib import metrics
from vrlib.data import Schema
from vrlib.errors import VrlibError
from vrlib.games import TraditionalGame
from vrlib.uncertainty import seed_summary, sign_test


def test_seed_summary_hand_computed():
    # Seed 0: targets 0.6, 0.8 -> 0.7; seed 1: 0.5 -> 0.5; seed 2: 0.4, 0.8 -> 0.6.
    results = pd.DataFrame({"method": "m", "seed": [0, 0, 1, 2, 2], "auc": [0.6, 0.8, 0.5, 0.4, 0.8]})
    row = seed_summary(results, ["method"]).iloc[0]
    means = np.array([0.7, 0.5, 0.6])
    se = means.std(ddof=1) / np.sqrt(3)
    assert row["mean"] == pytest.approx(0.6) and row.se == pytest.approx(se)
    assert row.ci_high == pytest.approx(0.6 + stats.t.ppf(0.975, 2) * se)
    assert row.n_seeds == 3 and row.n_rows == pytest.approx(5 / 3)


def test_seed_summary_errors():
    one_seed = pd.DataFrame({"method": "m", "seed": [0, 0], "auc": [0.6, 0.8]})
    with pytest.raises(VrlibError, match="at least 2"):
        seed_summary(one_seed, ["method"])
    with pytest.raises(VrlibError, match="no column"):
        seed_summary(one_seed, ["dataset"])


# --------------------------------------------------------------------------- coverage under the null

P_A = [0.6, 0.3, 0.1]


def null_codes(seed: int, n: int) -> np.ndarray:
    """Codes of column ``a`` of a synthetic dataset of the null generator: a function of the sample seed only."""
    return np.random.default_rng(seed).choice(3, n, p=P_A)


class NullGenerator:
    """Ignores its training data: every synthetic dataset is fresh noise determined by the sample seed."""

    def fit(self, df, schema, seed):
        return self

    def sample(self, n, seed):
        a = pd.Categorical.from_codes(null_codes(seed, n), categories=["u", "v", "w"])
        return pd.DataFrame({"a": a, "x": np.random.default_rng([seed, 1]).normal(size=n)})


def _game(seed: int, share_out: bool) -> TraditionalGame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {"a": pd.Categorical(rng.choice(["u", "v", "w"], 400), categories=["u", "v", "w"]), "x": rng.normal(size=400)}
    )
    game = TraditionalGame(
        NullGenerator(),
        n_aux=150,
        n_test=150,
        n_records=20,
        n_synth=30,
        n_shadow=2,
        n_test_datasets=10,
        share_out=share_out,
        seed=seed,
        n_jobs=1,
        progress=False,
        cache=False,
    )
    return game.fit(df, Schema(["a"], ["x"]))


N_TARGETS = 5


def _targets(game) -> list:
    """Five records that share their value of ``a`` (vulnerable records often resemble each other)."""
    return list(game.data_.index[game.data_["a"] == "u"][:N_TARGETS])


def _scores(game, target) -> tuple[np.ndarray, np.ndarray]:
    """Test labels and scores of one target: the share of synthetic records with the target's value of ``a``.

    The synthetic datasets are those the game's plans make with the null generator (their
    data come from the sample seed alone, so they are computed from it directly; the test
    below checks that the game makes exactly these).
    """
    plans = game.test_plans(target)
    code = list(game.categories_["a"]).index(game.data_.loc[target, "a"])
    scores = np.array([(null_codes(p.sample_seed, game.n_synth) == code).mean() for p in plans])
    return np.array([p.label for p in plans]), scores


def test_null_scores_are_those_of_the_games_datasets():
    game = _game(0, share_out=True)
    t = _targets(game)[0]
    test = game.test(t)
    labels, scores = _scores(game, t)
    np.testing.assert_array_equal(test.labels, labels)
    np.testing.assert_allclose((test.codes[:, :, 0] == 0).mean(axis=1), scores)


def _aucs(seed: int, share_out: bool) -> np.ndarray:
    game = _game(seed, share_out)
    return np.array([metrics.auc(*_scores(game, t)) for t in _targets(game)])


def _naive_covers(aucs: np.ndarray) -> bool:
    """What notebook 04 printed before: one game's targets, mean ± 1.96 std/√R (std with ddof=0)."""
    half = 1.96 * aucs.std() / np.sqrt(len(aucs))
    return aucs.mean() - half <= 0.5 <= aucs.mean() + half


def _coverage(share_out: bool, repeats: int, n_seeds: int) -> tuple[float, float]:
    """Share of repeats whose 95 % interval covers 0.5: over ``n_seeds`` root seeds, and std/√R of the first seed."""
    over_seeds = naive = 0
    for r in range(repeats):
        seeds = range(r * n_seeds, (r + 1) * n_seeds)
        aucs = {s: _aucs(s, share_out) for s in seeds}
        results = pd.DataFrame([dict(seed=s, auc=a) for s in seeds for a in aucs[s]]).assign(method="m")
        row = seed_summary(results, ["method"]).iloc[0]
        over_seeds += row.ci_low <= 0.5 <= row.ci_high
        naive += _naive_covers(aucs[seeds[0]])
    return over_seeds / repeats, naive / repeats


@pytest.mark.slow
def test_interval_over_seeds_covers_the_null_and_std_over_root_r_does_not():
    """A generator whose output ignores its data: every target's AUC is 0.5 in expectation.

    The interval over root seeds covers 0.5 in at least 90 % of the repeats; the old
    std/√R over the targets of one game, whose OUT datasets are shared, covers it far
    less often (the targets' AUCs are correlated through those datasets).
    """
    over_seeds, naive = _coverage(share_out=True, repeats=100, n_seeds=3)
    assert over_seeds >= 0.9
    assert naive < 0.8


@pytest.mark.slow
def test_std_over_root_r_is_valid_without_shared_out_datasets():
    """Without sharing, the targets of one game are independent and std/√R is about right: sharing was the cause."""
    naive = np.mean([_naive_covers(_aucs(s, share_out=False)) for s in range(100)])
    assert naive >= 0.85


def two_sided_sign_p(wins: int, n: int) -> float:
    """Exact two-sided sign test by summing binomial probabilities (independent of scipy)."""
    from math import comb

    k = min(wins, n - wins)
    return min(1.0, 2 * sum(comb(n, i) for i in range(k + 1)) / 2**n)


def test_sign_test_hand_computed():
    # Size 30: a higher on 7 of 8 seeds; size 50: 1 win, 5 losses, 2 ties.
    wide = pd.DataFrame(
        {
            "n_mem": [30] * 8 + [50] * 8,
            "seed": list(range(8)) * 2,
            "a": [0.9] * 7 + [0.1] + [0.6, 0.2, 0.2, 0.2, 0.2, 0.2, 0.5, 0.5],
            "b": [0.5] * 8 + [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
        }
    )
    got = sign_test(wide, "a", "b", by=["n_mem"]).set_index("n_mem")
    assert got.loc[30, ["wins", "losses", "ties", "n_seeds"]].tolist() == [7, 1, 0, 8]
    assert got.loc[30, "p_value"] == pytest.approx(2 * 9 / 256)  # 2 * P(X <= 1), X ~ Bin(8, 1/2)
    assert got.loc[50, ["wins", "losses", "ties"]].tolist() == [1, 5, 2]
    assert got.loc[50, "p_value"] == pytest.approx(two_sided_sign_p(1, 6))
    with pytest.raises(VrlibError, match="twice"):
        sign_test(pd.concat([wide, wide]), "a", "b", by=["n_mem"])
    with pytest.raises(VrlibError, match="no column"):
        sign_test(wide, "a", "c")


def test_sign_test_rejects_at_most_its_level_without_signal():
    # Two attacks equally good: the two-sided test at 0.05 rejects in at most ~5 % of experiments.
    rng = np.random.default_rng(3)
    n_experiments, n_seeds = 2000, 8
    values = rng.normal(size=(n_experiments, n_seeds, 2))
    wide = pd.DataFrame({"experiment": np.repeat(np.arange(n_experiments), n_seeds),
                         "seed": np.tile(np.arange(n_seeds), n_experiments),
                         "a": values[..., 0].ravel(), "b": values[..., 1].ravel()})  # fmt: skip
    p = sign_test(wide, "a", "b", by=["experiment"]).p_value
    # With 8 seeds the test rejects only at 8-0 or 0-8: probability 2 / 256.
    assert (p < 0.05).mean() == pytest.approx(2 / 256, abs=0.006)
    shifted = wide.assign(a=wide.a + 5.0)  # a far better: higher on all 8 seeds almost always
    assert (sign_test(shifted, "a", "b", by=["experiment"]).p_value < 0.05).mean() > 0.95
