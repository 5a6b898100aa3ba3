"""The audit's model-seeded game: the ε lower bound against a hand computation, and never above PrivBayes's ε."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from vrlib.audit.game import epsilon_lower_bound, play
from vrlib.audit.inputs import check_tables
from vrlib.data import Schema
from vrlib.errors import VrlibError
from vrlib.selection import vulnerability_scores

SCHEMA = Schema(["a", "b"], ["x"])


def _tables(seed=0):
    rng = np.random.default_rng(seed)
    n = 260
    df = pd.DataFrame({"a": rng.choice(list("abc"), n), "b": rng.choice(["x", "y"], n),
                       "x": rng.normal(size=n).round(6)})  # fmt: skip
    df.loc[0, "x"] = 8.0  # an outlier: the most vulnerable record
    train, synthetic, holdout = check_tables(df.iloc[:160], df.iloc[:160], df.iloc[160:], SCHEMA)
    return train, holdout


def test_bound_of_a_perfect_attack_by_hand():
    in_scores, out_scores = np.ones(40), np.zeros(40)
    tpr_low = stats.beta.ppf(0.025, 20, 1)  # Clopper–Pearson lower end of 20 / 20
    fpr_high = stats.beta.ppf(0.975, 1, 20)  # upper end of 0 / 20
    assert epsilon_lower_bound(in_scores, out_scores) == pytest.approx(math.log(tpr_low / fpr_high))
    assert epsilon_lower_bound(np.zeros(40), np.zeros(40)) == 0.0
    with pytest.raises(VrlibError, match="at least 4"):
        epsilon_lower_bound([1, 2], [0, 1])


@pytest.mark.parametrize("epsilon", [1.0, 10.0])
def test_privbayes_bound_never_exceeds_declared_epsilon(epsilon):
    # with 80 games the bound can reach 1.40 (see below), so ε = 1 is a real check
    train, holdout = _tables()
    vk = vulnerability_scores(train, SCHEMA).to_numpy()
    res = play(
        train, holdout, SCHEMA, "privbayes", vk, epsilon=epsilon, n_targets=2, n_records=None, n_games=80, n_jobs=1
    )
    assert res["epsilon_respected"] is True and 0 <= res["epsilon_lower"] <= epsilon
    assert [t["group"] for t in res["targets"]] == ["most vulnerable"] * 2 + ["random control"] * 2
    assert res["targets"][0]["index"] == int(np.argmax(vk))
    for t in res["targets"]:
        assert t["ci_low"] <= t["auc"] <= t["ci_high"]


def test_leaky_generator_gives_a_positive_bound():
    # 80 games: 20 IN and 20 OUT measure the bound, whose largest possible value is log(4.07) = 1.40
    train, holdout = _tables()
    vk = vulnerability_scores(train, SCHEMA).to_numpy()
    res = play(
        train,
        holdout,
        SCHEMA,
        "noise",
        vk,
        generator_params={"scale": 0.01, "resample_prob": 0.0},
        n_targets=1,
        n_records=None,
        n_games=80,
        n_jobs=1,
    )
    assert res["targets"][0]["auc"] > 0.9 and res["epsilon_lower"] > 1.0
    assert res["epsilon_respected"] is None


def test_audit_plays_the_game_and_checks_the_policy(tmp_path):
    import vrlib

    train, holdout = _tables()
    rng = np.random.default_rng(1)
    synthetic = train.sample(frac=1.0, random_state=1).reset_index(drop=True)
    synthetic["x"] = synthetic["x"] + rng.normal(scale=0.5, size=len(synthetic))
    result = vrlib.audit(
        train,
        synthetic,
        holdout,
        SCHEMA,
        wp29=False,
        logan_epochs=5,
        generator="privbayes",
        epsilon=10.0,
        game_params={"n_targets": 1, "n_games": 16, "n_records": None, "n_jobs": 1},
        policy={"max_empirical_epsilon": 10.0},
        out=tmp_path,
    )
    game = result.summary["game"]
    assert game["epsilon"] == 10.0 and game["epsilon_respected"] is True
    assert result.summary["policy"]["passed"] is True
    assert "Model-seeded game" in (tmp_path / "report.html").read_text()
    with pytest.raises(VrlibError, match="needs its ε"):
        play(train, holdout, SCHEMA, "privbayes", np.zeros(len(train)), n_jobs=1)
