"""Exact-match evidence by rarity: how often does a non-member with a pattern this rare have an exact twin in the release?

On categorical data an exact released twin is common (the population repeats its
common patterns, and a generator reproduces them), so an exact match of a *common*
pattern is weak evidence; one of a *rare* pattern is not.  An empirical p-value of a
distance score cannot tell them apart (all exact matches tie), so this view models the
chance of a match as a function of the pattern's rarity.

**Match.** A record is matched when a released record agrees with it on every column
(:func:`vrlib.audit.matches.match_codes`: categories equal, continuous values in the same
cell of ``resolution`` × the column's range, integer-valued ones equal).

**Rarity.** ``r(x)``, the log-likelihood of ``x`` under a Chow–Liu tree (the maximum
spanning tree of the columns' pairwise mutual information, less the Miller–Madow bias
of each pair so that high-cardinality columns do not attract edges) fitted on the
training and holdout records **without ``x``** (its own counts are taken out; add-½
pseudo-counts).  Computed alike for training and holdout records from the same pooled
counts, so that a non-member training record and a holdout record are exchangeable.

**Model.** On the holdout records (non-members), a logistic regression of "matched"
on ``r``: ``P(match | r) = expit(a + b r)``.  A matched training record's p-value is
the one-sided upper confidence bound (level ``confidence``, Wald on the linear predictor)
of ``P(match | r(x))``; an unmatched record's is 1.  The bound is monotone in ``r`` when
the slope is positive at that level (``b - z se(b) > 0``); otherwise the rarity does not
predict a match and the view gives 1 to every record.  If a non-member ``x`` is
matched with probability ``π(r(x))`` and the bound holds, ``P(p <= t) <= t``.  The bound
is checked before it is used as the tail model is (:func:`vrlib.audit.pvalues.calibration_check`:
fitted on one half of the holdout, the other half's p-values must not be too small).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.audit.matches import _group_ids, match_codes
from vrlib.audit.pvalues import calibration_check
from vrlib.data import Schema
from vrlib.errors import VrlibError
from vrlib.parallel import derive_seed

__all__ = ["chow_liu_loglik", "RarityModel", "rarity_scores"]


def _loo_counts(ids: np.ndarray) -> np.ndarray:
    """For each row, how many *other* rows share its id."""
    return np.bincount(ids)[ids] - 1


def chow_liu_loglik(codes: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int | None]]]:
    """Leave-one-out log-likelihood of each row of ``codes`` under a Chow–Liu tree of the columns.

    Parameters
    ----------
    codes : ndarray of int, shape (n, m)
        One integer code per value (:func:`vrlib.audit.matches.match_codes`), n >= 2.

    Returns
    -------
    loglik : ndarray of float, shape (n,)
        ``sum_v log((n_{v, pa(v)} + 1/2) / (n_{pa(v)} + K_v / 2))`` with the counts of the other
        rows (``K_v`` the values of column ``v``; the root's parent is the empty pattern).
    tree : list of (column, parent)
        The tree, root first (parent None).
    """
    from scipy.sparse.csgraph import minimum_spanning_tree

    codes = np.asarray(codes)
    n, m = codes.shape
    if n < 2 or m == 0:
        raise VrlibError("the rarity model needs at least two records and one column")
    card = np.array([len(np.unique(codes[:, j])) for j in range(m)])
    single = [np.bincount(np.unique(codes[:, j], return_inverse=True)[1]) for j in range(m)]
    weight = np.zeros((m, m))
    for a in range(m):
        for b in range(a + 1, m):
            pair = _group_ids(codes[:, [a, b]])
            n_ab = np.bincount(pair)
            first = np.unique(pair, return_index=True)[1]
            ia = np.unique(codes[:, a], return_inverse=True)[1][first]
            ib = np.unique(codes[:, b], return_inverse=True)[1][first]
            mi = float(np.sum(n_ab / n * np.log(n_ab * n / (single[a][ia] * single[b][ib]))))
            # Miller-Madow: the plug-in MI of independent columns is about (K_a - 1)(K_b - 1) / 2n
            weight[a, b] = max(mi - (card[a] - 1) * (card[b] - 1) / (2.0 * n), 0.0)
    # every spanning tree has m - 1 edges, so a constant shift keeps the maximum one and keeps zero-weight
    # pairs as edges (the sparse graph drops zero entries)
    span = minimum_spanning_tree(-np.triu(weight + 1.0, 1)).toarray() != 0
    adjacent = span | span.T
    tree, seen, queue = [(0, None)], {0}, [0]
    while queue:
        u = queue.pop(0)
        for v in np.flatnonzero(adjacent[u]):
            if v not in seen:
                seen.add(int(v))
                tree.append((int(v), u))
                queue.append(int(v))
    loglik = np.zeros(n)
    for v, u in tree:
        own = _loo_counts(_group_ids(codes[:, [v]]))
        if u is None:
            loglik += np.log((own + 0.5) / (n - 1 + 0.5 * card[v]))
        else:
            joint = _loo_counts(_group_ids(codes[:, [u, v]]))
            parent = _loo_counts(_group_ids(codes[:, [u]]))
            loglik += np.log((joint + 0.5) / (parent + 0.5 * card[v]))
    return loglik, tree


class RarityModel:
    """``P(match | rarity)`` among non-members, by logistic regression, with a one-sided upper bound.

    Parameters
    ----------
    confidence : float
        Level of the one-sided upper bound (the p-values err large).
    min_matches : int
        Fewer matched (or fewer unmatched) non-members: no model, every p-value 1.
    max_slope : float
        A fitted slope above it is replaced by it (the intercept refitted): a slope fitted on the
        matches of common patterns alone must not extrapolate a vanishing chance to rare ones.

    Attributes
    ----------
    coef_ : ndarray, shape (2,)
        ``a, b`` of ``logit P = a + b r``.
    cov_ : ndarray, shape (2, 2)
        Their covariance (inverse Fisher information).
    usable_ : bool
        Enough matches and a slope positive at ``confidence``: the bound is monotone in ``r``.
    """

    def __init__(self, confidence: float = 0.95, min_matches: int = 20, max_slope: float = 1.0):
        self.confidence = confidence
        self.min_matches = min_matches
        self.max_slope = max_slope

    def fit(self, rarity, matched) -> "RarityModel":
        """Fit on non-members' ``rarity`` (1-D, finite) and ``matched`` (bool)."""
        from scipy import stats

        r = np.asarray(rarity, dtype=float)
        y = np.asarray(matched, dtype=bool).astype(float)
        if r.ndim != 1 or len(r) != len(y) or not np.isfinite(r).all():
            raise VrlibError("the rarity model needs one finite rarity and one match flag per non-member")
        self.n_, self.n_matched_ = len(r), int(y.sum())
        self.z_ = float(stats.norm.ppf(self.confidence))
        self.coef_, self.cov_ = np.array([np.log((y.mean() + 1e-12) / (1 - y.mean() + 1e-12)), 0.0]), np.eye(2)
        self.usable_, self.slope_fitted_ = False, float("nan")
        if min(self.n_matched_, self.n_ - self.n_matched_) < self.min_matches:
            return self
        # centred for a well-conditioned Newton iteration
        self.centre_ = float(r.mean())
        x = np.column_stack([np.ones_like(r), r - self.centre_])
        beta = np.array([self.coef_[0], 0.0])
        for _ in range(100):
            eta = x @ beta
            mu = 1.0 / (1.0 + np.exp(-eta))
            w = mu * (1.0 - mu)
            info = x.T @ (x * w[:, None])
            step = np.linalg.solve(info, x.T @ (y - mu))
            beta = beta + step
            if np.abs(step).max() < 1e-10:
                break
        mu = 1.0 / (1.0 + np.exp(-(x @ beta)))
        cov = np.linalg.inv(x.T @ (x * (mu * (1.0 - mu))[:, None]))
        self.slope_fitted_ = float(beta[1])
        # the view is used only where rarity predicts a match: slope positive at the bound's level
        self.usable_ = bool(np.isfinite(beta).all() and beta[1] - self.z_ * np.sqrt(cov[1, 1]) > 0)
        if self.usable_ and beta[1] > self.max_slope:
            # slope held at max_slope, the intercept refitted; its own variance alone then bounds the curve
            from scipy import optimize, special

            offset = self.max_slope * x[:, 1]

            def score(a):  # decreasing in a: a root between the all-no and the all-yes intercepts
                return float((y - special.expit(a + offset)).sum())

            lo, hi = -offset.max() - 50.0, -offset.min() + 50.0
            beta = np.array([optimize.brentq(score, lo, hi, xtol=1e-12), self.max_slope])
            mu = 1.0 / (1.0 + np.exp(-(x @ beta)))
            cov = np.array([[1.0 / (mu * (1.0 - mu)).sum(), 0.0], [0.0, 0.0]])
        self.usable_ = bool(self.usable_ and np.isfinite(beta).all() and np.isfinite(cov).all())
        self.coef_c_, self.cov_c_ = beta, cov
        self.coef_ = np.array([beta[0] - beta[1] * self.centre_, beta[1]])
        return self

    def upper(self, rarity) -> np.ndarray:
        """The upper bound of ``P(match | r)`` at each ``r`` (1 when the model is not usable)."""
        r = np.asarray(rarity, dtype=float)
        if not self.usable_:
            return np.ones(len(r))
        x = np.column_stack([np.ones_like(r), r - self.centre_])
        eta = x @ self.coef_c_ + self.z_ * np.sqrt(np.einsum("ij,jk,ik->i", x, self.cov_c_, x))
        return 1.0 / (1.0 + np.exp(-eta))

    def pvalues(self, rarity, matched) -> np.ndarray:
        """The bound at the record's rarity when it is matched, 1 otherwise."""
        p = np.where(np.asarray(matched, dtype=bool), self.upper(rarity), 1.0)
        return np.clip(p, np.finfo(float).tiny, 1.0)

    def check(self, rarity, matched, seed: int = 0, levels=(0.05, 0.01, 0.001), alpha: float = 0.01) -> dict:
        """Fit on one random half of the non-members, test the p-values of the other half (both ways).

        :func:`vrlib.audit.pvalues.calibration_check` on the held-out halves' p-values; ``usable`` is
        False (and the check not passed) when either half's model is not usable, as the view then has
        nothing to show.
        """
        r, y = np.asarray(rarity, dtype=float), np.asarray(matched, dtype=bool)
        order = np.random.default_rng(derive_seed(seed, "audit rarity check")).permutation(len(r))
        halves = np.array_split(order, 2)
        ps, usable = [], True
        for fit_idx, test_idx in ((halves[0], halves[1]), (halves[1], halves[0])):
            model = RarityModel(self.confidence, self.min_matches, self.max_slope).fit(r[fit_idx], y[fit_idx])
            usable &= model.usable_
            ps.append(model.pvalues(r[test_idx], y[test_idx]))
        out = calibration_check(ps, levels, alpha)
        out["usable"] = bool(usable)
        out["passed"] = bool(out["passed"] and usable)
        return out


def rarity_scores(
    records: dict[str, pd.DataFrame], synthetic: pd.DataFrame, schema: Schema, resolution: float = 0.0001
) -> dict[str, pd.DataFrame]:
    """``release_exact`` (released records equal to the record) and ``rarity`` (:func:`chow_liu_loglik`) per table.

    The rarity of every record comes from the counts of all the records of ``records`` but itself
    (group-by counts only, no distances).
    """
    names = list(records)
    codes = match_codes([records[k] for k in names] + [synthetic], schema, resolution)
    release = codes[-1]
    pooled = np.vstack(codes[:-1])
    loglik, _ = chow_liu_loglik(pooled)
    out, start = {}, 0
    for name, c in zip(names, codes[:-1]):
        ids = _group_ids(np.vstack([c, release]))
        exact = np.bincount(ids[len(c) :], minlength=ids.max() + 1)[ids[: len(c)]]
        out[name] = pd.DataFrame(
            {"release_exact": exact, "rarity": loglik[start : start + len(c)]}, index=records[name].index
        )
        start += len(c)
    return out
