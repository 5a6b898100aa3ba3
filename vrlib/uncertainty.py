"""Uncertainty that stays valid when the targets of a game share data: aggregate over independent root seeds.

The targets of one achilles game share their OUT datasets (and the split of Ω), so
their AUCs are correlated and the spread across targets divided by √R is not the
standard error of their mean: it understates it (``tests/test_uncertainty.py`` shows
the coverage it gives on data without signal).  Two runs with different root seeds
(``--seed``) share nothing: every split, draw, generator and attack seed derives from
the root seed.  So the mean AUC over targets of each root seed is one independent
draw, and a t interval over those draws is valid whatever a game shares inside.

For a single experiment's figures the module also has the classical intervals:
:func:`delong_auc` (an AUC with DeLong's standard error), :func:`clopper_pearson` (exact,
for a binomial proportion such as a TPR) and :func:`wilson_interval`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from vrlib.errors import VrlibError
from vrlib.params import check_number

__all__ = ["seed_summary", "sign_test", "clopper_pearson", "wilson_interval", "delong_auc"]


def seed_summary(
    results: pd.DataFrame, by, value: str = "auc", seed: str = "seed", level: float = 0.95
) -> pd.DataFrame:
    """Mean of ``value`` per group with a t interval over independent root seeds.

    Each root seed's rows (e.g. its targets) are first averaged into one value per
    group and seed; these per-seed means are independent, so their mean has standard
    error ``sd / √S`` (S seeds, ``ddof=1``) and the interval uses Student's t with
    S - 1 degrees of freedom.

    Parameters
    ----------
    results : DataFrame
        Tidy results, one row per target (or any unit) with a ``seed`` column.
    by : sequence of str
        Grouping columns (e.g. ``["dataset", "method"]``).
    value : str
        Column to summarise.
    seed : str
        Column holding the root seed of each row.
    level : float
        Coverage of the interval.

    Returns
    -------
    DataFrame
        ``by`` columns, then ``mean``, ``se``, ``ci_low``, ``ci_high``, ``n_seeds`` and
        ``n_rows`` (rows per seed, averaged).

    Raises
    ------
    VrlibError
        Fewer than two seeds in a group, or a column missing.
    """
    by = list(by)
    missing = [c for c in [*by, value, seed] if c not in results.columns]
    if missing:
        raise VrlibError(f"results have no column(s) {missing}; they need {by + [value, seed]}")
    check_number("level", level, above=0, below=1)
    per_seed = results.groupby([*by, seed], sort=False)[value].agg(["mean", "count"]).reset_index()
    rows = []
    for key, group in _groups(per_seed, by):
        s = len(group)
        if s < 2:
            raise VrlibError(
                f"group {key!r} has results of {s} root seed; an interval over seeds needs at least 2 "
                "(run with more seeds)"
            )
        means = group["mean"].to_numpy(dtype=float)
        mean, se = float(means.mean()), float(means.std(ddof=1) / np.sqrt(s))
        half = float(stats.t.ppf(0.5 + level / 2, s - 1)) * se
        rows.append(
            dict(
                key,
                mean=mean,
                se=se,
                ci_low=mean - half,
                ci_high=mean + half,
                n_seeds=s,
                n_rows=float(group["count"].mean()),
            )
        )
    return pd.DataFrame(rows, columns=[*by, "mean", "se", "ci_low", "ci_high", "n_seeds", "n_rows"])


def sign_test(wide: pd.DataFrame, a: str, b: str, by=(), seed: str = "seed") -> pd.DataFrame:
    """Paired comparison of ``a`` and ``b`` over independent seeds: wins, losses and an exact sign test.

    On each seed both values come from the same data (e.g. two attacks on one synthetic
    dataset), so only their order is compared; seeds share nothing, so the number of
    seeds where ``a`` is higher is binomial(n, 1/2) when neither is better.  Ties are
    dropped, as the sign test does.

    Parameters
    ----------
    wide : DataFrame
        One row per seed (and group), with columns ``a``, ``b``, ``seed`` and ``by``.
    a, b : str
        The two columns compared.
    by : sequence of str
        Grouping columns (e.g. ``["n_mem"]``).
    seed : str
        Column holding the seed; each seed may appear once per group.

    Returns
    -------
    DataFrame
        ``by`` columns, then ``wins`` (``a`` higher), ``losses``, ``ties``, ``n_seeds`` and
        ``p_value``: two-sided exact binomial test of wins against losses (1.0 when every
        seed is a tie).  Not corrected for the number of comparisons made.
    """
    by = list(by)
    missing = [c for c in [*by, a, b, seed] if c not in wide.columns]
    if missing:
        raise VrlibError(f"the table has no column(s) {missing}; it needs {by + [a, b, seed]}")
    if wide.duplicated([*by, seed]).any():
        raise VrlibError(f"a seed appears twice in one group of {by}; give one row per seed and group")
    rows = []
    for key, group in _groups(wide, by):
        diff = group[a].to_numpy(dtype=float) - group[b].to_numpy(dtype=float)
        wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
        p = stats.binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else 1.0
        rows.append(
            dict(key, wins=wins, losses=losses, ties=len(diff) - wins - losses, n_seeds=len(diff), p_value=float(p))
        )
    return pd.DataFrame(rows, columns=[*by, "wins", "losses", "ties", "n_seeds", "p_value"])


def _groups(df: pd.DataFrame, by: list):
    """``({column: value}, rows)`` for each group of ``by`` in order of appearance; the whole table if ``by`` is empty."""
    if not by:
        yield {}, df
        return
    for key, group in df.groupby(by, sort=False):
        yield dict(zip(by, key if isinstance(key, tuple) else (key,))), group


def clopper_pearson(k, n, level: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper–Pearson) interval for a binomial proportion ``k / n``.

    Parameters
    ----------
    k : int
        Successes, ``0 <= k <= n``.
    n : int
        Trials, ``n >= 1``.
    level : float
        Coverage of the interval.

    Returns
    -------
    (low, high) : tuple of float
        Never narrower than ``level`` requires, whatever the true proportion.
    """
    k, n = _binomial(k, n, level)
    alpha = 1.0 - level
    low = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def wilson_interval(k, n, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``k / n`` (close to nominal coverage, never outside [0, 1]).

    Parameters
    ----------
    k, n : int
        Successes and trials (``0 <= k <= n``, ``n >= 1``).
    level : float
        Coverage of the interval.

    Returns
    -------
    (low, high) : tuple of float
    """
    k, n = _binomial(k, n, level)
    z = float(stats.norm.ppf(0.5 + level / 2))
    phat = k / n
    centre = (phat + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, float(centre - half)), min(1.0, float(centre + half))


def _binomial(k, n, level: float) -> tuple[int, int]:
    check_number("level", level, above=0, below=1)
    if int(n) != n or n < 1:
        raise VrlibError(f"the number of trials must be a positive integer (got {n!r})")
    if int(k) != k or not 0 <= k <= n:
        raise VrlibError(f"the number of successes must be an integer in [0, {n}] (got {k!r})")
    return int(k), int(n)


def delong_auc(labels, scores, level: float = 0.95) -> dict:
    """AUC of ``scores`` for ``labels`` with DeLong's standard error and a normal interval.

    DeLong, DeLong & Clarke-Pearson (1988): the AUC is the mean of the placement values
    ``psi(x, y) = 1[x > y] + 1/2 1[x = y]`` over (positive x, negative y) pairs; its
    variance is ``var(V10) / m + var(V01) / n`` where ``V10`` are the positives'
    placements among the negatives and ``V01`` the negatives' among the positives.
    Computed from mid-ranks, in ``O((m + n) log(m + n))``.  The interval is clipped to
    [0, 1].

    Parameters
    ----------
    labels : array-like of {0, 1}
        1 = positive (member).
    scores : array-like of float
        Higher = more likely positive.
    level : float
        Coverage of the interval.

    Returns
    -------
    dict
        ``auc``, ``se``, ``ci_low``, ``ci_high``, ``n_pos``, ``n_neg``.
    """
    labels = np.asarray(labels)
    scores = np.asarray(scores, dtype=float)
    if labels.shape != scores.shape or labels.ndim != 1:
        raise VrlibError(f"labels and scores must be 1-D of equal length (got {labels.shape} and {scores.shape})")
    if not np.isfinite(scores).all():
        raise VrlibError("scores must be finite (no NaN or infinity)")
    check_number("level", level, above=0, below=1)
    pos, neg = scores[labels == 1], scores[labels == 0]
    m, n = len(pos), len(neg)
    if m < 2 or n < 2 or m + n != len(scores):
        raise VrlibError("labels must be 0 or 1 with at least two records of each; DeLong's variance needs both")
    all_ranks = stats.rankdata(np.r_[pos, neg])
    pos_ranks, neg_ranks = stats.rankdata(pos), stats.rankdata(neg)
    v10 = (all_ranks[:m] - pos_ranks) / n  # each positive's placement among the negatives
    v01 = 1.0 - (all_ranks[m:] - neg_ranks) / m  # each negative's placement among the positives
    auc = float(v10.mean())
    se = float(np.sqrt(v10.var(ddof=1) / m + v01.var(ddof=1) / n))
    z = float(stats.norm.ppf(0.5 + level / 2))
    return {
        "auc": auc,
        "se": se,
        "ci_low": max(0.0, auc - z * se),
        "ci_high": min(1.0, auc + z * se),
        "n_pos": m,
        "n_neg": n,
    }
