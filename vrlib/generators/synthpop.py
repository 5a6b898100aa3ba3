"""Synthpop: sequential CART synthesis, each column drawn from a tree on the columns before it.

As in synthpop (Nowok, Raab, Dibben 2016) with method ``cart``: the first column of
the visit sequence is bootstrapped from the training values; every next column is
fitted by a decision tree (classification for categorical, regression for
continuous columns, at least ``min_samples_leaf`` = 5 records per leaf) on all
previous columns, and a synthetic value is the value of a random training record
in the leaf the synthetic record falls into.

Categorical predictors are one-hot encoded, as in the Python re-implementation the
achilles authors used (hazy/synthpop, through reprosyn); ``categorical_predictors=
"codes"`` uses the integer codes instead (ordinal splits; a little faster, further
from R's rpart, which splits factors into arbitrary subsets of levels).  Trees are
scikit-learn's; leaf donors are drawn for all rows at once from the training
values grouped by leaf.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from sklearn import config_context
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from vrlib.errors import VrlibError
from vrlib.generators.base import Generator

_CHECK_INPUT = False  # scikit-learn's input checks in tree.fit (tests switch them on to compare)


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

    Attributes
    ----------
    visit_sequence_ : list of str
        The order actually used.
    """

    def __init__(self, visit_sequence=None, min_samples_leaf: int = 5, categorical_predictors: str = "onehot", max_depth=None):
        self.visit_sequence = visit_sequence
        self.min_samples_leaf = min_samples_leaf
        self.categorical_predictors = categorical_predictors
        self.max_depth = max_depth
        self._check_params()

    def _check_params(self) -> None:
        v = self.min_samples_leaf
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise VrlibError(f"min_samples_leaf must be an int >= 1, got {v!r}")
        if self.categorical_predictors not in ("onehot", "codes"):
            raise VrlibError(f"categorical_predictors must be 'onehot' or 'codes', got {self.categorical_predictors!r}")
        v = self.max_depth
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1):
            raise VrlibError(f"max_depth must be None or an int >= 1, got {v!r}")
        if self.visit_sequence is not None and isinstance(self.visit_sequence, str):
            raise VrlibError("visit_sequence must be a list of column names, not one string")

    # -------------------------------------------------------------- fit

    def _fit(self, df: pd.DataFrame, rng: np.random.Generator) -> None:
        order = list(self.columns_) if self.visit_sequence is None else list(self.visit_sequence)
        if sorted(order) != sorted(self.columns_) or len(set(order)) != len(order):
            raise VrlibError(
                f"visit_sequence must list every column exactly once; got {order}, columns are {self.columns_}"
            )
        self.visit_sequence_ = order
        n = len(df)
        values = {c: self._numbers(df, c) for c in order}
        # Design matrix of the training table: the blocks of all columns in visit order,
        # so the predictors of the j-th column are its first `stops[j]` columns.
        blocks = [self._block(c, values[c]) for c in order]
        self._widths = [b.shape[1] for b in blocks]
        self._stops = np.cumsum([0] + self._widths)
        design = np.hstack(blocks) if blocks else np.zeros((n, 0), np.float32)

        self._first = values[order[0]]
        self._models = [None]
        for j in range(1, len(order)):
            c = order[j]
            y = values[c]
            X = design[:, : self._stops[j]]
            self._models.append(self._fit_column(c, X, y, rng))

    def _numbers(self, df: pd.DataFrame, c: str) -> np.ndarray:
        if c in self.schema_.categorical:
            return df[c].cat.codes.to_numpy().astype(np.int64)
        return df[c].to_numpy(dtype=np.float64, copy=True)  # the fit must not alias the caller's table

    def _block(self, c: str, v: np.ndarray) -> np.ndarray:
        """Predictor columns of column ``c`` with values ``v`` (float32, as the trees use)."""
        if c in self.schema_.categorical and self.categorical_predictors == "onehot":
            k = len(self.dtypes_[c].categories)
            out = np.zeros((len(v), k), dtype=np.float32)
            out[np.arange(len(v)), v] = 1.0
            return out
        return v.astype(np.float32).reshape(-1, 1)

    def _fit_column(self, c: str, X: np.ndarray, y: np.ndarray, rng: np.random.Generator):
        """A tree for column ``c`` plus its training values grouped by leaf."""
        seed = int(rng.integers(2**31 - 1))
        if len(np.unique(y)) == 1 or len(y) < 2 * self.min_samples_leaf:
            # No split is possible: a single leaf holding every training value.
            return (None, np.zeros(1, np.int64), np.array([len(y)]), y.copy())
        kind = DecisionTreeClassifier if c in self.schema_.categorical else DecisionTreeRegressor
        tree = kind(min_samples_leaf=self.min_samples_leaf, max_depth=self.max_depth, random_state=seed)
        # Inputs are ours and already checked (float32, C-contiguous, finite): skip
        # scikit-learn's per-call validation, which costs as much as growing the tree on
        # 1,000 rows; the tree grown is the same (a test checks it).
        X = np.ascontiguousarray(X)
        with config_context(assume_finite=True, skip_parameter_validation=True):
            tree.fit(X, y, check_input=_CHECK_INPUT)
        tree = tree.tree_  # the low-level tree: apply() without input validation
        leaves = tree.apply(X)
        by_leaf = np.argsort(leaves, kind="stable")
        counts = np.bincount(leaves, minlength=tree.node_count)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        return (tree, starts, counts, y[by_leaf])

    # -------------------------------------------------------------- sample

    def _sample(self, n: int, rng: np.random.Generator) -> dict:
        order = self.visit_sequence_
        out = {order[0]: self._first[rng.integers(len(self._first), size=n)]}
        design = np.empty((n, int(self._stops[-1])), dtype=np.float32)
        design[:, self._stops[0] : self._stops[1]] = self._block(order[0], out[order[0]])
        for j in range(1, len(order)):
            tree, starts, counts, donors = self._models[j]
            if tree is None:
                leaves = np.zeros(n, dtype=np.int64)
            else:
                leaves = tree.apply(np.ascontiguousarray(design[:, : self._stops[j]]))
            # A random training record of the same leaf, for every row at once.
            pick = starts[leaves] + (rng.random(n) * counts[leaves]).astype(np.int64)
            out[order[j]] = donors[pick]
            design[:, self._stops[j] : self._stops[j + 1]] = self._block(order[j], out[order[j]])
        return out


__all__ = ["Synthpop"]
