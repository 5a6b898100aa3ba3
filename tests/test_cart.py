"""The fast CART of Synthpop against scikit-learn's trees (leaf for leaf) and a hand-computed case."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_table
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from vrlib.errors import VrlibError
from vrlib.generators.cart import grow_tree
from vrlib.generators.synthpop import Synthpop
from vrlib.metrics import marginal_distance


def ours(numeric, categorical, n_levels, y, classify, min_leaf=5, max_depth=None, seed=0):
    order = np.argsort(numeric, axis=0, kind="stable").T
    return grow_tree(numeric, order, categorical, n_levels, y, classify, min_leaf, max_depth, seed)


def sklearn_leaves(numeric, categorical, n_levels, y, classify, new, min_leaf=5, max_depth=None):
    """scikit-learn's tree on [numeric | one-hot categorical]: leaves of the training and of new rows."""

    def design(num, cat):
        onehot = [(cat[:, c, None] == np.arange(k)).astype(float) for c, k in enumerate(n_levels)]
        return np.hstack([num] + onehot)

    kind = DecisionTreeClassifier if classify else DecisionTreeRegressor
    tree = kind(min_samples_leaf=min_leaf, max_depth=max_depth, random_state=0).fit(design(numeric, categorical), y)
    return tree.apply(design(numeric, categorical)), tree.apply(design(*new))


def same_partition(a, b) -> bool:
    """Whether two labellings group the rows alike (whatever the labels)."""
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def tie_free(n, n_num, n_cat, seed, offset=0.0):
    """Distinct predictor values and a continuous response: every split has its own gain.

    Values are (i + offset) / 7: with offset 0.25 no value falls on a threshold (a midpoint
    of two offset-0 values), where float32 (scikit-learn's) and float64 may round apart.
    """
    rng = np.random.default_rng(seed)
    numeric = (rng.permutation(n * n_num).reshape(n, n_num) + offset) / 7.0
    levels = np.arange(3, 3 + n_cat)
    categorical = np.column_stack([rng.integers(k, size=n) for k in levels]) if n_cat else np.zeros((n, 0), int)
    y = np.sin(numeric.sum(axis=1)) + categorical.sum(axis=1) + rng.normal(scale=0.3, size=n)
    return numeric, categorical, levels, y


@pytest.mark.parametrize("n_num, n_cat, max_depth", [(1, 0, None), (3, 0, None), (2, 2, None), (3, 2, 4), (0, 3, None)])
def test_regression_trees_are_scikit_learns_leaf_for_leaf(n_num, n_cat, max_depth):
    numeric, categorical, levels, y = tie_free(400, n_num, n_cat, seed=n_num + 10 * n_cat)
    new_num, new_cat, _, _ = tie_free(300, n_num, n_cat, seed=99, offset=0.25)
    tree = ours(numeric, categorical, levels, y, classify=False, max_depth=max_depth)
    ref_train, ref_new = sklearn_leaves(numeric, categorical, levels, y, False, (new_num, new_cat), max_depth=max_depth)
    assert tree.node_count > 20 or max_depth
    assert same_partition(tree.leaf_of_row, ref_train)
    assert same_partition(tree.apply(new_num, new_cat), ref_new)


def test_classification_tree_on_one_predictor_is_scikit_learns():
    # With one numeric predictor there are no ties between predictors; within it both take the lowest threshold.
    rng = np.random.default_rng(3)
    x = rng.permutation(500).astype(np.float64).reshape(-1, 1)
    y = (np.sin(x[:, 0] / 40) > rng.normal(scale=0.5, size=500)).astype(np.int64) + (x[:, 0] > 300)
    tree = ours(x, np.zeros((500, 0), np.int64), np.zeros(0, np.int64), y, classify=True)
    new = np.linspace(-5, 505, 777).reshape(-1, 1)
    ref_train, ref_new = sklearn_leaves(x, np.zeros((500, 0)), [], y, True, (new, np.zeros((777, 0))))
    assert tree.node_count > 10
    assert same_partition(tree.leaf_of_row, ref_train)
    assert same_partition(tree.apply(new, np.zeros((777, 0), np.int64)), ref_new)


def test_hand_computed_split_and_leaves():
    # y is 0 for x < 10 and 1 above: the only sensible split is at 9.5, then both sides are pure.
    x = np.arange(20, dtype=np.float64).reshape(-1, 1)
    y = (x[:, 0] >= 10).astype(np.int64)
    tree = ours(x, np.zeros((20, 0), np.int64), np.zeros(0, np.int64), y, classify=True, min_leaf=3)
    assert tree.node_count == 3 and tree.feature[0] == 0 and tree.split[0] == 9.5
    np.testing.assert_array_equal(tree.leaf_of_row, np.where(x[:, 0] < 10, tree.left[0], tree.right[0]))
    # A categorical predictor: category 2 against the rest separates y exactly.
    cat = np.array([0, 1, 2, 2, 0, 1, 2, 2, 0, 2]).reshape(-1, 1)
    y = (cat[:, 0] == 2).astype(np.int64)
    tree = ours(np.zeros((10, 0)), cat, np.array([3]), y, classify=True, min_leaf=2)
    assert tree.node_count == 3 and tree.split[0] == 2.0
    assert set(tree.rows[tree.start[tree.right[0]] : tree.end[tree.right[0]]]) == {2, 3, 6, 7, 9}
    # Too few rows to split (fewer than 2 x min_samples_leaf) or a constant response: one leaf.
    assert ours(x[:9], np.zeros((9, 0), np.int64), np.zeros(0, np.int64), y[:9], True, min_leaf=5).node_count == 1
    assert ours(x, np.zeros((20, 0), np.int64), np.zeros(0, np.int64), np.ones(20), False).node_count == 1


def test_every_leaf_holds_min_samples_leaf_rows():
    numeric, categorical, levels, y = tie_free(500, 2, 3, seed=5)
    for leaf in (1, 5, 13):
        tree = ours(numeric, categorical, levels, np.round(y).astype(np.int64) - int(np.round(y).min()), True, leaf)
        is_leaf = tree.feature < 0
        sizes = (tree.end - tree.start)[is_leaf]
        assert sizes.min() >= leaf and sizes.sum() == 500


def test_synthpop_fast_trees_sample_like_scikit_learns():
    """Same model, other tie-breaking: marginals of the output within the seed-to-seed spread of sklearn's."""
    train, schema = make_table(n=1000, n_cat=5, n_cont=3, seed=1, n_levels=6)
    dist = {"vrlib": [], "sklearn": []}
    for trees in dist:
        for s in range(8):
            out = Synthpop(trees=trees).fit(train, schema, seed=s).sample(1000, seed=s)
            dist[trees].append([marginal_distance(train, out, schema, way=w) for w in (1, 2)])
    fast, ref = np.array(dist["vrlib"]), np.array(dist["sklearn"])
    spread = np.sqrt(fast.var(axis=0, ddof=1) / 8 + ref.var(axis=0, ddof=1) / 8)
    assert (np.abs(fast.mean(axis=0) - ref.mean(axis=0)) < 3 * spread + 1e-3).all(), (fast.mean(0), ref.mean(0))


def test_synthpop_rejects_an_unknown_tree_engine():
    with pytest.raises(VrlibError, match="trees"):
        Synthpop(trees="rpart")


def test_editing_the_trees_renews_synthpops_cache_key(monkeypatch):
    from pathlib import Path

    from vrlib.cache import source_hash

    before = source_hash(Synthpop)
    read = Path.read_bytes
    monkeypatch.setattr(
        Path, "read_bytes", lambda self: read(self) + (b"\n_EDITED = True\n" if self.name == "cart.py" else b"")
    )
    assert source_hash(Synthpop) != before
