"""Uncertainty that stays valid when the targets of a game share data: aggregate over independent root seeds.

The targets of one achilles game share their OUT datasets (and the split of Ω), so
their AUCs are correlated and the spread across targets divided by √R is not the
standard error of their mean: it understates it (``tests/test_uncertainty.py`` shows
the coverage it gives on data without signal).  Two runs with different root seeds
(``--seed``) share nothing: every split, draw, generator and attack seed derives from
the root seed.  So the mean AUC over targets of each root seed is one independent
draw, and a t interval over those draws is valid whatever a game shares inside.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from vrlib.errors import VrlibError

__all__ = ["seed_summary", "sign_test"]


def seed_summary(results: pd.DataFrame, by, value: str = "auc", seed: str = "seed", level: float = 0.95) -> pd.DataFrame:
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
    if not 0 < level < 1:
        raise VrlibError(f"level must be in (0, 1) (got {level!r})")
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
        rows.append(dict(key, mean=mean, se=se, ci_low=mean - half, ci_high=mean + half, n_seeds=s,
                         n_rows=float(group["count"].mean())))  # fmt: skip
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
        rows.append(dict(key, wins=wins, losses=losses, ties=len(diff) - wins - losses,
                         n_seeds=len(diff), p_value=float(p)))  # fmt: skip
    return pd.DataFrame(rows, columns=[*by, "wins", "losses", "ties", "n_seeds", "p_value"])


def _groups(df: pd.DataFrame, by: list):
    """``({column: value}, rows)`` for each group of ``by`` in order of appearance; the whole table if ``by`` is empty."""
    if not by:
        yield {}, df
        return
    for key, group in df.groupby(by, sort=False):
        yield dict(zip(by, key if isinstance(key, tuple) else (key,))), group
