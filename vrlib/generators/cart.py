"""A CART for small tables, compiled with numba: the trees of Synthpop without scikit-learn's overhead.

Synthpop grows one tree per column on about a thousand rows, thousands of times per
game.  scikit-learn's tree sorts every feature at every node and sees a categorical
predictor as one 0/1 column per category; here

* a categorical predictor is split as one-hot columns would split it (one category
  against the rest) from one pass over the node's rows, whatever its number of
  categories, and
* a numeric predictor is sorted once per fit; each node keeps its rows in that order
  (a stable partition at every split), so finding its best threshold is one scan.

The splits are CART's: the Gini criterion for a categorical response, squared error for
a numeric one; every split point with at least ``min_samples_leaf`` rows on each side
is a candidate (thresholds halfway between consecutive distinct values); the best one
is taken however small its gain, and a node becomes a leaf when it is pure, too small
to split, at ``max_depth``, or has no candidate.  As in scikit-learn, whose features are
visited in a random order, a tie between predictors is broken at random; within one
predictor the lowest threshold (or first category) wins.  On data without ties the
trees are scikit-learn's, leaf for leaf (a test checks this).
"""

from __future__ import annotations

import numpy as np
from numba import njit

# scikit-learn's test of a pure node (impurity <= machine epsilon)
_EPSILON = np.finfo(np.float64).eps


@njit(cache=True)
def _partition(buf, tmp, s, e, left_of):
    """Stable partition of ``buf[s:e]``: rows with ``left_of[row]`` first; returns the left count."""
    nl = 0
    nr = 0
    for i in range(s, e):
        r = buf[i]
        if left_of[r]:
            buf[s + nl] = r
            nl += 1
        else:
            tmp[nr] = r
            nr += 1
    for i in range(nr):
        buf[s + nl + i] = tmp[i]
    return nl


@njit(cache=True)
def _grow(num, order, cat, n_levels, y_class, n_classes, y_value, classify, min_leaf, max_depth, seed):
    """Grow one tree; see :func:`grow_tree` for the arguments.

    Returns ``(feature, split, left, right, leaf_of_row, rows, start, end)``: per node
    the predictor (``-1`` for a leaf; ``j < n_num`` numeric column ``j``, else
    categorical column ``j - n_num``), the split (a threshold: ``x <= split`` goes left;
    or a category: ``x != split`` goes left) and the children; the leaf of every
    training row; the training rows ordered so that every node's rows are
    ``rows[start[node] : end[node]]``.
    """
    np.random.seed(seed)
    n = num.shape[0]
    n_num = num.shape[1]
    n_cat = cat.shape[1]
    rows = np.arange(n)
    tmp = np.empty(n, np.int64)
    left_of = np.zeros(n, np.bool_)
    cap = 2 * n + 1
    feature = np.full(cap, -1, np.int64)
    split = np.zeros(cap, np.float64)
    left = np.full(cap, -1, np.int64)
    right = np.full(cap, -1, np.int64)
    start = np.zeros(cap, np.int64)
    end = np.zeros(cap, np.int64)
    depth = np.zeros(cap, np.int64)
    leaf_of_row = np.zeros(n, np.int64)

    max_levels = 1
    for c in range(n_cat):
        max_levels = max(max_levels, n_levels[c])
    k = max(n_classes, 1)
    total = np.zeros(k, np.int64)  # class counts of the node
    run = np.zeros(k, np.int64)  # class counts left of a numeric split point
    # Per categorical column and category: class counts, rows, sum of squared class counts (Gini),
    # sum over classes of node count x category count, and sum of the response (regression).
    level_class = np.zeros((n_cat, max_levels * k), np.int64)
    level_n = np.zeros((n_cat, max_levels), np.int64)
    level_sq = np.zeros((n_cat, max_levels), np.float64)
    level_cross = np.zeros((n_cat, max_levels), np.float64)
    level_sum = np.zeros((n_cat, max_levels), np.float64)

    stack = np.empty(cap, np.int64)
    top = 0
    stack[top] = 0
    top += 1
    n_nodes = 1
    end[0] = n
    while top > 0:
        top -= 1
        node = stack[top]
        s = start[node]
        e = end[node]
        m = e - s
        is_leaf = m < 2 * min_leaf or (max_depth >= 0 and depth[node] >= max_depth)
        # Node statistics and purity
        node_sq = 0.0
        node_sum = 0.0
        if not is_leaf:
            if classify:
                total[:] = 0
                for i in range(s, e):
                    total[y_class[rows[i]]] += 1
                pure = False
                for c in range(k):
                    node_sq += float(total[c]) * total[c]
                    if total[c] == m:
                        pure = True
                is_leaf = pure
            else:
                sq = 0.0
                for i in range(s, e):
                    v = y_value[rows[i]]
                    node_sum += v
                    sq += v * v
                is_leaf = sq / m - (node_sum / m) ** 2 <= _EPSILON
        best = -np.inf
        best_feature = -1
        best_split = 0.0
        ties = 0
        if not is_leaf:
            # Numeric predictors: one scan of the node's rows in the column's order.
            for j in range(n_num):
                col = order[j]
                lo = num[col[s], j]
                hi = num[col[e - 1], j]
                if hi <= lo:
                    continue  # constant in this node
                f_best = -np.inf
                f_split = 0.0
                if classify:
                    run[:] = 0
                    left_sq = 0.0
                    right_sq = node_sq
                    for p in range(s, e - min_leaf):
                        cls = y_class[col[p]]
                        right_sq -= 2.0 * (total[cls] - run[cls]) - 1.0
                        left_sq += 2.0 * run[cls] + 1.0
                        run[cls] += 1
                        nl = p - s + 1
                        if nl < min_leaf:
                            continue
                        x0 = num[col[p], j]
                        x1 = num[col[p + 1], j]
                        if x1 <= x0:
                            continue
                        proxy = left_sq / nl + right_sq / (m - nl)
                        if proxy > f_best:
                            f_best = proxy
                            f_split = x0 / 2.0 + x1 / 2.0
                            if f_split == x1 or f_split == np.inf or f_split == -np.inf:
                                f_split = x0
                else:
                    left_sum = 0.0
                    for p in range(s, e - min_leaf):
                        left_sum += y_value[col[p]]
                        nl = p - s + 1
                        if nl < min_leaf:
                            continue
                        x0 = num[col[p], j]
                        x1 = num[col[p + 1], j]
                        if x1 <= x0:
                            continue
                        right_sum = node_sum - left_sum
                        proxy = left_sum * left_sum / nl + right_sum * right_sum / (m - nl)
                        if proxy > f_best:
                            f_best = proxy
                            f_split = x0 / 2.0 + x1 / 2.0
                            if f_split == x1 or f_split == np.inf or f_split == -np.inf:
                                f_split = x0
                if f_best == -np.inf:
                    continue
                if f_best > best:
                    best, best_feature, best_split, ties = f_best, j, f_split, 1
                elif f_best == best:
                    ties += 1
                    if np.random.random() * ties < 1.0:
                        best_feature, best_split = j, f_split
            # Categorical predictors: one category against the rest, every category of every column
            # from one pass over the node's rows (then one pass to reset the class counts it touched).
            for c in range(n_cat):
                level_n[c, : n_levels[c]] = 0
                level_sq[c, : n_levels[c]] = 0.0
                level_cross[c, : n_levels[c]] = 0.0
                level_sum[c, : n_levels[c]] = 0.0
            if classify:
                for i in range(s, e):
                    r = rows[i]
                    cls = y_class[r]
                    for c in range(n_cat):
                        lv = cat[r, c]
                        q = lv * k + cls
                        level_sq[c, lv] += 2.0 * level_class[c, q] + 1.0
                        level_cross[c, lv] += total[cls]
                        level_class[c, q] += 1
                        level_n[c, lv] += 1
                for i in range(s, e):
                    r = rows[i]
                    for c in range(n_cat):
                        level_class[c, cat[r, c] * k + y_class[r]] = 0
            else:
                for i in range(s, e):
                    r = rows[i]
                    v = y_value[r]
                    for c in range(n_cat):
                        lv = cat[r, c]
                        level_sum[c, lv] += v
                        level_n[c, lv] += 1
            for c in range(n_cat):
                levels = n_levels[c]
                for lv in range(levels):
                    nr = level_n[c, lv]  # rows of this category go right
                    nl = m - nr
                    if nr < min_leaf or nl < min_leaf:
                        continue
                    if classify:
                        # Sum over classes of (total - in category)^2 = node_sq - 2 cross + in_sq
                        left_sq = node_sq - 2.0 * level_cross[c, lv] + level_sq[c, lv]
                        proxy = left_sq / nl + level_sq[c, lv] / nr
                    else:
                        right_sum = level_sum[c, lv]
                        left_sum = node_sum - right_sum
                        proxy = left_sum * left_sum / nl + right_sum * right_sum / nr
                    if proxy > best:
                        best, best_feature, best_split, ties = proxy, n_num + c, float(lv), 1
                    elif proxy == best:
                        ties += 1
                        if np.random.random() * ties < 1.0:
                            best_feature, best_split = n_num + c, float(lv)
        if best_feature < 0:
            for i in range(s, e):
                leaf_of_row[rows[i]] = node
            continue
        # Split: mark the rows going left, then partition the node's rows and every column's order.
        if best_feature < n_num:
            for i in range(s, e):
                r = rows[i]
                left_of[r] = num[r, best_feature] <= best_split
        else:
            c = best_feature - n_num
            lv = int(best_split)
            for i in range(s, e):
                r = rows[i]
                left_of[r] = cat[r, c] != lv
        nl = _partition(rows, tmp, s, e, left_of)
        for j in range(n_num):
            _partition(order[j], tmp, s, e, left_of)
        feature[node] = best_feature
        split[node] = best_split
        a = n_nodes
        b = n_nodes + 1
        n_nodes += 2
        left[node] = a
        right[node] = b
        start[a], end[a], depth[a] = s, s + nl, depth[node] + 1
        start[b], end[b], depth[b] = s + nl, e, depth[node] + 1
        stack[top] = b
        stack[top + 1] = a
        top += 2
    return (
        feature[:n_nodes],
        split[:n_nodes],
        left[:n_nodes],
        right[:n_nodes],
        leaf_of_row,
        rows,
        start[:n_nodes],
        end[:n_nodes],
    )


@njit(cache=True)
def _apply(feature, split, left, right, n_num, num, cat):
    out = np.empty(num.shape[0], np.int64)
    for i in range(num.shape[0]):
        node = 0
        while feature[node] >= 0:
            f = feature[node]
            if f < n_num:
                go_left = num[i, f] <= split[node]
            else:
                go_left = cat[i, f - n_num] != int(split[node])
            node = left[node] if go_left else right[node]
        out[i] = node
    return out


class Tree:
    """A grown tree: its nodes and the leaf of each training row.

    Attributes
    ----------
    feature, split, left, right : ndarray
        Per node; see :func:`grow_tree`.
    leaf_of_row : ndarray of int
        The leaf (node index) of every training row.
    rows, start, end : ndarray of int
        The training rows of node ``i`` are ``rows[start[i] : end[i]]``.
    n_numeric : int
        Number of numeric predictors (the first predictor indices).
    """

    def __init__(self, feature, split, left, right, leaf_of_row, rows, start, end, n_numeric):
        self.feature, self.split, self.left, self.right = feature, split, left, right
        self.leaf_of_row, self.rows, self.start, self.end = leaf_of_row, rows, start, end
        self.n_numeric = n_numeric

    @property
    def node_count(self) -> int:
        return len(self.feature)

    def apply(self, numeric: np.ndarray, categorical: np.ndarray) -> np.ndarray:
        """The leaf of every row of ``(numeric, categorical)`` predictors.

        Their first columns must be the fit's (in its order); further columns are ignored.
        """
        numeric = np.ascontiguousarray(numeric, dtype=np.float64).reshape(len(numeric), -1)
        categorical = np.ascontiguousarray(categorical, dtype=np.int64).reshape(len(numeric), -1)
        return _apply(self.feature, self.split, self.left, self.right, self.n_numeric, numeric, categorical)


def grow_tree(
    numeric, order, categorical, n_levels, y, classify: bool, min_samples_leaf: int, max_depth=None, seed: int = 0
) -> Tree:
    """Grow a CART on ``n`` rows.

    Parameters
    ----------
    numeric : ndarray (n, a) of float64
        Numeric predictors (split at thresholds).
    order : ndarray (a, n) of int64
        ``order[j]`` sorts the rows by ``numeric[:, j]`` (``np.argsort(..., kind="stable")``);
        consumed: it is rearranged in place.
    categorical : ndarray (n, b) of int64
        Categorical predictors as codes ``0 .. n_levels[c] - 1`` (split one category against the rest).
    n_levels : ndarray (b,) of int64
    y : ndarray (n,)
        The response: integer class codes if ``classify`` (Gini), else floats (squared error).
    min_samples_leaf : int
    max_depth : int or None
    seed : int
        Breaks ties between predictors.
    """
    n = len(y)
    if classify:
        y_class = np.ascontiguousarray(y, dtype=np.int64)
        n_classes = int(y_class.max()) + 1 if n else 1
        y_value = np.zeros(0)
    else:
        y_class = np.zeros(n, np.int64)
        n_classes = 0
        y_value = np.ascontiguousarray(y, dtype=np.float64)
    numeric = np.ascontiguousarray(numeric, dtype=np.float64).reshape(n, -1)
    categorical = np.ascontiguousarray(categorical, dtype=np.int64).reshape(n, -1)
    order = np.ascontiguousarray(order, dtype=np.int64).reshape(numeric.shape[1], n)
    n_levels = np.ascontiguousarray(n_levels, dtype=np.int64)
    depth = -1 if max_depth is None else int(max_depth)
    nodes = _grow(
        numeric,
        order,
        categorical,
        n_levels,
        y_class,
        n_classes,
        y_value,
        bool(classify),
        int(min_samples_leaf),
        depth,
        int(seed),
    )
    return Tree(*nodes, n_numeric=numeric.shape[1])


__all__ = ["Tree", "grow_tree"]
