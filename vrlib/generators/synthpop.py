"""Synthpop: sequential CART synthesis, each column drawn from a tree on the columns before it.

As in synthpop (Nowok, Raab, Dibben 2016) with method ``cart``: the first column of
the visit sequence is bootstrapped from the training values; every next column is
fitted by a decision tree (classification for categorical, regression for
continuous columns, at least ``min_samples_leaf`` = 5 records per leaf) on all
previous columns, and a synthetic value is the value of a random training record
in the leaf the synthetic record falls into.

A categorical predictor is split one category against the rest, as the one-hot
columns of the Python re-implementation the achilles authors used (hazy/synthpop,
through reprosyn, on scikit-learn trees) split it; ``categorical_predictors="codes"``
uses the integer codes as numbers instead (ordinal splits; further from R's rpart,
which splits factors into arbitrary subsets of levels).  The trees are
:mod:`vrlib.generators.cart`'s (the same splits as scikit-learn's, grown about ten
times faster on these tables); leaf donors are drawn for all rows at once from the
training values grouped by leaf.  ``trees="sklearn"`` grows scikit-learn's trees on
the one-hot design instead (the reference the fast trees are tested and timed against).
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from vrlib.errors import VrlibError
from vrlib.generators import cart
from vrlib.generators.base import Generator
from vrlib.params import check_integer


class Synthpop(Generator):
    """Sequential CART synthesiser (synthpop's ``cart`` method).

    Parameters
    ----------
    visit_sequence : sequence of str or None
        Order in which the columns are synthesised (a permutation of all columns);
        ``None`` is the table's order.  The output keeps the table's order.
    min_samples_leaf : int
        Minimum number of training records in a leaf (synthpop's ``minbucket``, 5).
    categorical_predictors : {"onehot", "codes"}
        How earlier categorical columns enter a tree.
    max_depth : int or None
        Optional depth limit (``None``: grown until ``min_samples_leaf`` stops it).
    trees : {"vrlib", "sklearn"}
        Which CART grows the trees: :mod:`vrlib.generators.cart` (fast) or scikit-learn's
        (on one-hot columns; the same splits, several times slower).

    Attributes
    ----------
    visit_sequence_ : list of str
        The order actually used.
    """

    source_dependencies = (cart,)  # its trees: part of the cache key of what it generates

    def __init__(
        self,
        visit_sequence=None,
        min_samples_leaf: int = 5,
        categorical_predictors: str = "onehot",
        max_depth=None,
        trees: str = "vrlib",
    ):
        self.visit_sequence = visit_sequence
        self.min_samples_leaf = min_samples_leaf
        self.categorical_predictors = categorical_predictors
        self.max_depth = max_depth
        self.trees = trees
        self._check_params()

    def _check_params(self) -> None:
        check_integer("min_samples_leaf", self.min_samples_leaf, minimum=1)
        if self.categorical_predictors not in ("onehot", "codes"):
            raise VrlibError(f"categorical_predictors must be 'onehot' or 'codes', got {self.categorical_predictors!r}")
        check_integer("max_depth", self.max_depth, minimum=1, optional=True)
        if self.trees not in ("vrlib", "sklearn"):
            raise VrlibError(f"trees must be 'vrlib' or 'sklearn', got {self.trees!r}")
        if self.visit_sequence is not None and isinstance(self.visit_sequence, str):
            raise VrlibError("visit_sequence must be a list of column names, not one string")

    # -------------------------------------------------------------- fit

    def _fit(self, df: pd.DataFrame, rng: np.random.Generator) -> None:
        order = self._order()
        self._fit_values({c: self._numbers(df, c) for c in order}, len(df), rng)

    def _fit_coded(self, table, rows: np.ndarray, rng: np.random.Generator) -> None:
        """:meth:`_fit` on rows of a :class:`vrlib.coded.CodedTable` (the same numbers, no DataFrame)."""
        order = self._order()
        self._fit_values({c: table.take(c, rows) for c in order}, len(rows), rng)

    def _order(self) -> list:
        order = list(self.columns_) if self.visit_sequence is None else list(self.visit_sequence)
        if sorted(order) != sorted(self.columns_) or len(set(order)) != len(order):
            raise VrlibError(
                f"visit_sequence must list every column exactly once; got {order}, columns are {self.columns_}"
            )
        return order

    def _fit_values(self, values: dict, n_rows: int, rng: np.random.Generator) -> None:
        """Fit from each column's numbers (int64 codes or float64 values, in the training rows' order)."""
        order = self._order()
        self.visit_sequence_ = order
        # Predictors of all columns in visit order, numeric and categorical apart: those of the
        # j-th column are the first `n_numeric[j]` numeric and `n_categorical[j]` categorical ones.
        as_category = [c in self.schema_.categorical and self.categorical_predictors == "onehot" for c in order]
        self._n_numeric = np.cumsum([0] + [not a for a in as_category])
        self._n_categorical = np.cumsum([0] + as_category)
        self._as_category = as_category
        numeric = self._stack([values[c] for c, a in zip(order, as_category) if not a], np.float64, n_rows)
        categorical = self._stack([values[c] for c, a in zip(order, as_category) if a], np.int64, n_rows)
        levels = np.array([len(self.dtypes_[c].categories) for c, a in zip(order, as_category) if a], np.int64)
        sorted_rows = np.argsort(numeric, axis=0, kind="stable").T  # sorted once, for every tree

        self._first = values[order[0]]
        self._models = [None]
        for j in range(1, len(order)):
            a, b = self._n_numeric[j], self._n_categorical[j]
            grow = cart.grow_tree if self.trees == "vrlib" else SklearnTree
            tree = grow(
                numeric[:, :a],
                sorted_rows[:a],
                categorical[:, :b],
                levels[:b],
                values[order[j]],
                classify=order[j] in self.schema_.categorical,
                min_samples_leaf=self.min_samples_leaf,
                max_depth=self.max_depth,
                seed=int(rng.integers(2**31 - 1)),
            )
            # The training values grouped by node: a leaf's donors are donors[starts[l] : starts[l] + counts[l]].
            self._models.append((tree, tree.start, tree.end - tree.start, values[order[j]][tree.rows]))

    @staticmethod
    def _stack(columns, dtype, n: int) -> np.ndarray:
        return np.column_stack(columns).astype(dtype) if columns else np.zeros((n, 0), dtype)

    def _numbers(self, df: pd.DataFrame, c: str) -> np.ndarray:
        if c in self.schema_.categorical:
            return df[c].array.codes.astype(np.int64)
        return df[c].to_numpy(dtype=np.float64, copy=True)  # the fit must not alias the caller's table

    # -------------------------------------------------------------- sample

    def _sample(self, n: int, rng: np.random.Generator) -> dict:
        order = self.visit_sequence_
        numeric = np.zeros((n, self._n_numeric[-1]), np.float64)
        categorical = np.zeros((n, self._n_categorical[-1]), np.int64)
        out = {}
        for j, c in enumerate(order):
            if j == 0:
                out[c] = self._first[rng.integers(len(self._first), size=n)]
            else:
                tree, starts, counts, donors = self._models[j]
                leaves = tree.apply(numeric, categorical)
                # A random training record of the same leaf, for every row at once.
                out[c] = donors[starts[leaves] + (rng.random(n) * counts[leaves]).astype(np.int64)]
            if self._as_category[j]:
                categorical[:, self._n_categorical[j]] = out[c]
            else:
                numeric[:, self._n_numeric[j]] = out[c]
        return out


class SklearnTree:
    """scikit-learn's CART with :func:`~vrlib.generators.cart.grow_tree`'s interface (categorical predictors one-hot)."""

    def __init__(self, numeric, order, categorical, n_levels, y, classify, min_samples_leaf, max_depth, seed):
        from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

        self.n_levels = n_levels
        kind = DecisionTreeClassifier if classify else DecisionTreeRegressor
        model = kind(min_samples_leaf=min_samples_leaf, max_depth=max_depth, random_state=seed)
        X = self._design(numeric, categorical)
        self.tree_ = model.fit(X, y).tree_
        self.leaf_of_row = self.tree_.apply(X)
        self.rows = np.argsort(self.leaf_of_row, kind="stable")
        counts = np.bincount(self.leaf_of_row, minlength=self.tree_.node_count)
        self.start = np.concatenate([[0], np.cumsum(counts)[:-1]])
        self.end = self.start + counts

    def _design(self, numeric, categorical) -> np.ndarray:
        blocks = [numeric.astype(np.float32)]
        for c, k in enumerate(self.n_levels):
            blocks.append((categorical[:, c, None] == np.arange(k)).astype(np.float32))
        return np.ascontiguousarray(np.hstack(blocks))

    def apply(self, numeric, categorical) -> np.ndarray:
        a, b = self.tree_.n_features - int(np.sum(self.n_levels)), len(self.n_levels)
        return self.tree_.apply(self._design(numeric[:, :a], categorical[:, :b]))


__all__ = ["Synthpop"]
