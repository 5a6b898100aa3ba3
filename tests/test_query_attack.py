"""Query-based attack: answers against a brute-force loop, subset choice, zeta transform, signal / no signal."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from vrlib.attacks.query import (
    QueryAttack,
    choose_subsets,
    match_patterns,
    query_answers,
    subset_columns,
    superset_sums,
)
from vrlib.data import Schema
from vrlib.errors import VrlibError
from vrlib.games import SyntheticDatasets, TraditionalGame
from vrlib.metrics import auc


class Copy:
    """Test generator that releases its training rows (shuffled): the target is in every IN dataset."""

    def fit(self, df, schema, seed):
        self.data_ = df.reset_index(drop=True)
        return self

    def sample(self, n, seed):
        idx = np.random.default_rng(seed).permutation(len(self.data_))[:n]
        return self.data_.iloc[idx].reset_index(drop=True)


class Unrelated:
    """Test generator whose output ignores the training rows: no membership signal at all."""

    def fit(self, df, schema, seed):
        self.template_, self.schema_ = df.iloc[:0], schema
        return self

    def sample(self, n, seed):
        rng = np.random.default_rng(seed)
        out = {}
        for c in self.template_.columns:
            if c in self.schema_.categorical:
                cats = self.template_[c].cat.categories
                out[c] = pd.Categorical.from_codes(rng.integers(len(cats), size=n), dtype=self.template_[c].dtype)
            else:
                out[c] = rng.integers(0, 6, n).astype(float)
        return pd.DataFrame(out)[list(self.template_.columns)]


def random_table(n, seed, n_cat=3, n_cont=2, levels=3):
    """Small mixed table; continuous values are small integers, so ties are frequent."""
    rng = np.random.default_rng(seed)
    cols = {}
    for j in range(n_cat):
        labels = [str(k) for k in range(levels)]
        cols[f"c{j}"] = pd.Categorical(rng.integers(0, levels, n).astype(str), categories=labels)
    for j in range(n_cont):
        cols[f"x{j}"] = rng.integers(0, 4, n).astype(float)
    return pd.DataFrame(cols), Schema([f"c{j}" for j in range(n_cat)], [f"x{j}" for j in range(n_cont)])


def brute_force(df, target, schema, operator):
    """One pandas filter per subset: the straightforward definition."""
    t = target.iloc[0]
    out = []
    for mask in range(1, 1 << len(schema.columns)):
        keep = pd.Series(True, index=df.index)
        for c in subset_columns(mask, schema):
            if c in schema.categorical:
                keep &= df[c] == t[c]
            else:
                keep &= (df[c] <= t[c]) if operator == "<=" else (df[c] >= t[c])
        out.append(int(keep.sum()))
    return np.array(out)


@pytest.mark.parametrize("operator", ["<=", ">="])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_answers_match_brute_force(operator, seed):
    df, schema = random_table(60, seed)
    frames = [df.sample(40, random_state=k, replace=True).reset_index(drop=True) for k in range(4)]
    target = df.iloc[[seed]]
    got = query_answers(frames, target, schema, operator=operator)
    assert got.shape == (4, 31)
    for k, frame in enumerate(frames):
        np.testing.assert_array_equal(got[k], brute_force(frame, target, schema, operator))
    # The stacked integer-encoded form gives the same answers.
    cats = {c: df[c].cat.categories for c in schema.categorical}
    from vrlib.encoding import encode_table

    batch = SyntheticDatasets.from_arrays(
        [encode_table(f, schema, cats) for f in frames], [0, 1, 0, 1], schema, cats, tuple(df.columns)
    )
    np.testing.assert_array_equal(query_answers(batch, target, schema, operator=operator), got)


def test_answers_of_chosen_subsets_and_varying_sizes():
    df, schema = random_table(80, 5)
    frames = [df.iloc[:80], df.iloc[:33], df.iloc[10:11]]
    target = df.iloc[[3]]
    subsets = np.array([1, 6, 31, 16])
    got = query_answers(frames, target, schema, subsets=subsets)
    for k, frame in enumerate(frames):
        np.testing.assert_array_equal(got[k], brute_force(frame, target, schema, "<=")[subsets - 1])


def test_absent_category_and_continuous_ties():
    schema = Schema(["c"], ["x"])
    df = pd.DataFrame({"c": pd.Categorical(["a", "a", "b"], categories=["a", "b", "z"]), "x": [1.0, 2.0, 2.0]})
    target = pd.Series({"c": "z", "x": 2.0})
    np.testing.assert_array_equal(query_answers([df], target, schema), [[0, 3, 0]])
    target = {"c": "a", "x": 2.0}  # x == 2.0 matches both "<=" and ">="
    np.testing.assert_array_equal(query_answers([df], target, schema, operator="<="), [[2, 3, 2]])
    np.testing.assert_array_equal(query_answers([df], target, schema, operator=">="), [[2, 2, 1]])
    patterns, sizes = match_patterns([df], target, schema)
    assert patterns.tolist() == [3, 3, 2] and sizes.tolist() == [3]
    # A target value outside the category set matches nothing, not even missing values.
    with_nan = df.assign(c=pd.Categorical([None, "a", "b"], categories=["a", "b"]))
    np.testing.assert_array_equal(query_answers([with_nan], {"c": "q", "x": 9.0}, schema), [[0, 3, 0]])


def test_superset_sums_against_brute_force():
    rng = np.random.default_rng(0)
    for n_bits in range(1, 7):
        hist = rng.integers(0, 5, size=(3, 1 << n_bits))
        z = superset_sums(hist)
        for a in range(1 << n_bits):
            expect = sum(hist[:, b] for b in range(1 << n_bits) if b & a == a)
            np.testing.assert_array_equal(z[:, a], expect)
    in_place = hist.copy()
    superset_sums(in_place, out=in_place)
    np.testing.assert_array_equal(in_place, z)
    with pytest.raises(VrlibError, match="2\\^F"):
        superset_sums(np.zeros(6))


def test_choose_subsets_all_or_random_distinct_seeded():
    np.testing.assert_array_equal(choose_subsets(4, 100), np.arange(1, 16))
    np.testing.assert_array_equal(choose_subsets(4, 15), np.arange(1, 16))
    s = choose_subsets(17, 1000, seed=1)
    assert len(s) == 1000 == len(np.unique(s)) and s.min() >= 1 and s.max() < 1 << 17
    assert (np.diff(s) > 0).all()
    np.testing.assert_array_equal(s, choose_subsets(17, 1000, seed=1))
    assert not np.array_equal(s, choose_subsets(17, 1000, seed=2))
    # Uniform over subsets: sizes concentrate around F/2.
    assert 7.5 < np.mean([bin(m).count("1") for m in s]) < 9.5
    with pytest.raises(VrlibError):
        choose_subsets(0, 10)
    assert subset_columns(0b101, Schema(["a", "b"], ["x"])) == ("a", "x")


def _game(gen, seed=0, n_test_datasets=100):
    df, schema = random_table(1500, 11, n_cat=3, n_cont=2, levels=4)
    # A target with a value nobody else has, so "target present" is visible in the counts.
    df["c0"] = df["c0"].cat.add_categories(["rare"])
    df.loc[0, "c0"] = "rare"
    game = TraditionalGame(
        gen,
        n_aux=800,
        n_test=600,
        n_records=100,
        n_synth=100,
        n_shadow=200,
        n_test_datasets=n_test_datasets,
        n_jobs=1,
        progress=False,
        cache=False,
        seed=seed,
    )
    return game.fit(df, schema), schema


def test_attack_finds_planted_signal():
    game, schema = _game(Copy())
    data = game.datasets(0)
    attack = QueryAttack(schema, n_queries=20, seed=0, n_jobs=1).fit(data.shadow, data.shadow.labels, data.target)
    assert len(attack.subsets_) == 20
    assert auc(data.test.labels, attack.predict_proba(data.test)) > 0.95
    # DataFrames give the same scores as the encoded batch.
    frames = data.test.to_frames()
    np.testing.assert_allclose(attack.predict_proba(frames), attack.predict_proba(data.test))


def test_attack_without_signal_is_near_chance():
    # 100 IN and 100 OUT test datasets: the AUC's standard deviation is about 0.04.
    game, schema = _game(Unrelated(), seed=1, n_test_datasets=200)
    data = game.datasets(0)
    attack = QueryAttack(schema, seed=0, n_jobs=1).fit(data.shadow, None, data.target)
    assert len(attack.subsets_) == 31
    assert abs(auc(data.test.labels, attack.predict_proba(data.test)) - 0.5) < 0.15


def test_constant_features_dropped_and_errors():
    df, schema = random_table(50, 3)
    frames = [df] * 4
    attack = QueryAttack(schema, n_jobs=1)
    with pytest.warns(UserWarning, match="constant"):
        attack.fit(frames, [0, 1, 0, 1], df.iloc[[0]])
    assert not attack.keep_.any()
    np.testing.assert_allclose(attack.predict_proba(frames), 0.5)
    with pytest.raises(VrlibError, match="both present"):
        QueryAttack(schema).fit(frames, [1, 1, 1, 1], df.iloc[[0]])
    with pytest.raises(VrlibError, match="operator"):
        QueryAttack(schema, operator="<").fit(frames, [0, 1, 0, 1], df.iloc[[0]])
    with pytest.raises(VrlibError, match="not fitted"):
        QueryAttack(schema).predict_proba(frames)
    with pytest.raises(VrlibError, match="one record"):
        QueryAttack(schema).fit(frames, [0, 1, 0, 1], df.iloc[:2])
    with pytest.raises(VrlibError, match="4 synthetic datasets but 3 labels"):
        QueryAttack(schema, n_jobs=1).fit(frames, [0, 1, 0], df.iloc[[0]])


def test_brute_force_helper_agrees_with_itertools():
    # Guard the reference itself: subset_columns enumerates exactly the non-empty subsets.
    schema = Schema(["a", "b", "c"], [])
    listed = {subset_columns(m, schema) for m in range(1, 8)}
    expect = {c for k in range(1, 4) for c in combinations(("a", "b", "c"), k)}
    assert listed == expect


def test_forest_on_unscaled_answers_predicts_as_the_scaled_one():
    """Dropping the standard scaling (a per-feature increasing affine map) leaves the forest's predictions unchanged."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.preprocessing import StandardScaler

    game, schema = _game(Unrelated(), seed=2, n_test_datasets=200)
    data = game.datasets(0)
    attack = QueryAttack(schema, seed=3, n_jobs=1).fit(data.shadow, None, data.target)
    # The path the attack had before: scaler fitted on the kept answers, forest on the scaled ones.
    X = attack.features(data.shadow)[:, attack.keep_].astype(np.float32)
    scaler = StandardScaler().fit(X)
    old = RandomForestClassifier(n_estimators=100, max_depth=10, random_state=3, n_jobs=1)
    old.fit(scaler.transform(X), data.shadow.labels)
    # Same trees: the same feature and the same number of (bootstrap) training datasets at every node.
    for new_tree, old_tree in zip(attack.classifier_.estimators_, old.estimators_):
        np.testing.assert_array_equal(new_tree.tree_.feature, old_tree.tree_.feature)
        np.testing.assert_array_equal(new_tree.tree_.n_node_samples, old_tree.tree_.n_node_samples)
    # A dataset the tree was not grown on can sit exactly on a split (midway between two training
    # answers, e.g. 4 between 3 and 5), where float32 rounding of the scaled values may send it the
    # other way: rare, and small.
    X_test = scaler.transform(attack.features(data.test)[:, attack.keep_].astype(np.float32))
    expected = old.predict_proba(X_test)[:, 1]
    got = attack.predict_proba(data.test)
    assert len(np.unique(got)) > 10  # a forest that really splits, not a constant
    assert np.mean(np.abs(got - expected)) < 0.01
    assert abs(auc(data.test.labels, got) - auc(data.test.labels, expected)) < 0.02


def test_scores_are_the_same_bits_every_time_whatever_the_threads():
    # Forest threads add up their trees' votes in the order they finish: a score's last bits, and so
    # the order of near-tied scores and an AUC, would change from one run of the same seed to the next.
    game, schema = _game(Unrelated(), seed=4, n_test_datasets=200)
    data = game.datasets(0)
    threaded = QueryAttack(schema, seed=5, n_jobs=2).fit(data.shadow, None, data.target)
    scores = {threaded.predict_proba(data.test).tobytes() for _ in range(10)}
    assert len(scores) == 1
    alone = QueryAttack(schema, seed=5, n_jobs=1).fit(data.shadow, None, data.target)
    assert alone.predict_proba(data.test).tobytes() in scores  # the same trees, summed in the same order
