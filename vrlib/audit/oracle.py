"""The best a test calibrated on the holdout can do for given records: how many could be flagged at all.

A record's evidence of membership is how closely the release matches it.  If ``k`` of the
``n`` holdout records (known non-members) are matched *at least as closely*, any score
that ranks records by that closeness ranks those ``k`` at least as high, and the
smallest p-value a test calibrated on the holdout's ranks can give the record is the
conformal one, ``(1 + k) / (n + 1)``; with ``k = 0`` no holdout record bounds it (a
model of the holdout's tail may go lower) and its best p-value is taken as 0.  Feeding these best p-values to
Benjamini–Hochberg, with the other records at the p-values they have, gives how many of
the records could be flagged **at best** (Benjamini–Hochberg can only flag more when
p-values fall); a record left out is *not flaggable* by any such test, whatever its
method: the holdout shows non-members matched as closely.

**At least as closely**, in one view at a time (the record's best view decides):

* ``all`` and ``continuous`` (the latter when the table has both kinds): Gower distance
  ``d_1`` to the nearest released record, as :func:`vrlib.audit.evidence.closeness_scores`
  computes it (an exact copy is at 0, a copy with one category changed at ``1 / F``, or at 0
  in the continuous view);
* ``near_match``: agreement in :func:`vrlib.audit.matches.match_codes` (0 = a released
  record equal on every column, 1 = one equal on all columns but one, 2 = neither),
  counted by :func:`vrlib.audit.matches.masked_counts`.

With ``isolation`` (default), a holdout record counts only if its neighbourhood in the
release (``d_neighbourhood``, the mean distance to the next five released records, the
nearest one's verbatim repeats counted once; the ``all`` view's for ``near_match``) is also at
least as sparse, so the bound holds for
scores that rise with isolation too, as the audit's closeness does: a copy of an isolated
record is not held back by non-members matched in dense regions.  Without it the
bound is for the match alone.

It bounds tests whose evidence is these matches (and isolation); a test that uses other
information, e.g. how rare a matched pattern is in the population, is not bounded by it.
Nor is the audit's default statistic where records repeat: it scores each record on the
released records *assigned* to it (:mod:`vrlib.audit.assignment`), so a released record equal
to a training record and to its holdout twins counts for one of them only, while the bound
counts every holdout record some released record matches as closely.  The bound is then
that of ``vrlib.audit(..., assign=False)``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.audit.evidence import closeness_scores, distance_views
from vrlib.audit.matches import match_codes, masked_counts
from vrlib.audit.pvalues import benjamini_hochberg
from vrlib.data import Schema
from vrlib.errors import VrlibError

__all__ = ["match_closeness", "dominating_counts", "best_possible_flags"]

_TOL = 1e-12  # distances equal up to rounding count as equal


def match_closeness(
    train: pd.DataFrame,
    holdout: pd.DataFrame,
    synthetic: pd.DataFrame,
    schema: Schema,
    k: int = 5,
    resolution: float = 0.0001,
) -> dict[str, dict[str, pd.DataFrame]]:
    """Per view, each training and holdout record's match (``match``, smaller = closer) and ``isolation``.

    The three tables are encoded together, as the audit encodes them, so that the
    distances are the audit's.

    Returns
    -------
    dict view -> {"train": DataFrame, "holdout": DataFrame}
        Columns ``match`` (``d_1`` in Gower units, or the agreement level 0, 1, 2 for
        ``near_match``) and ``isolation`` (``d_neighbourhood``).
    """
    tables = {"train": train, "holdout": holdout}
    views = distance_views(schema)
    out = {}
    for view, sub in views.items():
        cols = list(sub.columns)
        scores = closeness_scores(
            {name: df[cols] for name, df in tables.items()}, synthetic[cols], sub, k=k, resolution=resolution
        )
        out[view] = {
            name: pd.DataFrame({"match": s["d_release"], "isolation": s["d_neighbourhood"]}, index=s.index)
            for name, s in scores.items()
        }
    codes = match_codes([train, holdout, synthetic], schema, resolution)
    release = codes[2]
    out["near_match"] = {}
    for name, c in zip(tables, codes[:2]):
        exact, masked = masked_counts(c, release)
        near = masked.sum(axis=1) - (masked.shape[1] - 1) * exact  # agreeing on all columns but at most one
        level = np.where(exact > 0, 0, np.where(near > 0, 1, 2)).astype(float)
        out["near_match"][name] = pd.DataFrame(
            {"match": level, "isolation": out["all"][name]["isolation"].to_numpy()}, index=tables[name].index
        )
    return out


def dominating_counts(match, isolation, null_match, null_isolation, use_isolation: bool = True) -> np.ndarray:
    """For each record, the null records matched at least as closely (and, with ``use_isolation``, at least as isolated).

    Parameters
    ----------
    match, isolation : array-like, shape (n,)
        The records' match (smaller = closer) and isolation (larger = sparser neighbourhood).
    null_match, null_isolation : array-like, shape (n_null,)
        The same for the null records.
    use_isolation : bool
        Require the isolation too.

    Returns
    -------
    ndarray of int, shape (n,)
    """
    match, isolation = np.asarray(match, dtype=float), np.asarray(isolation, dtype=float)
    null_match, null_isolation = np.asarray(null_match, dtype=float), np.asarray(null_isolation, dtype=float)
    if match.shape != isolation.shape or null_match.shape != null_isolation.shape:
        raise VrlibError("match and isolation must have one value per record")
    if (
        np.isnan(match).any()
        or np.isnan(isolation).any()
        or np.isnan(null_match).any()
        or np.isnan(null_isolation).any()
    ):
        # a NaN compares False: a record would count no null record as close and look beyond the holdout
        raise VrlibError("match and isolation must be numbers, not NaN: give match_closeness's output")
    out = np.empty(len(match), dtype=np.int64)
    step = max(1, 2_000_000 // max(1, len(null_match)))  # bounded memory: a block of records at a time
    for a in range(0, len(match), step):
        ok = null_match[None, :] <= match[a : a + step, None] + _TOL
        if use_isolation:
            ok &= null_isolation[None, :] >= isolation[a : a + step, None] - _TOL
        out[a : a + step] = ok.sum(axis=1)
    return out


def best_possible_flags(
    closeness: dict[str, dict[str, pd.DataFrame]],
    records,
    other_pvalues=None,
    q: float = 0.05,
    isolation: bool = True,
) -> tuple[pd.DataFrame, dict]:
    """The smallest p-value a test calibrated on the holdout can give each of ``records``, and how many could be flagged.

    Parameters
    ----------
    closeness : dict
        Of :func:`match_closeness`.
    records : array-like of int
        Positions of the training records to bound (e.g. the planted ones).
    other_pvalues : array-like of float, optional
        The p-values of the other training records (the audit's), which share
        Benjamini–Hochberg with them; by default 1 (none flagged).
    q : float
        False-discovery rate.
    isolation : bool
        Count a holdout record only if also at least as isolated (see the module's docstring).

    Returns
    -------
    table : DataFrame, one row per record of ``records``
        ``index`` (the training position), ``holdout_as_close`` (``k``, in the best view),
        ``view`` (that view), ``p_best`` (``(1 + k) / (n + 1)``, 0 when ``k = 0``), ``p_rank_best``
        (``(1 + k) / (n + 1)`` always: the best of a test without a tail model) and ``flaggable``.
    summary : dict
        ``n_records``, ``n_flaggable`` (Benjamini–Hochberg on ``p_best``), ``n_flaggable_empirical``
        (on ``p_rank_best``), ``n_beyond_holdout`` (``k = 0``), ``n_holdout``, ``q`` and ``isolation``.
    """
    records = np.asarray(records, dtype=np.int64)
    views = list(closeness)
    if not views:
        raise VrlibError("no view to bound: give match_closeness's output")
    n_train = len(closeness[views[0]]["train"])
    n_hold = len(closeness[views[0]]["holdout"])
    if n_hold == 0:  # with no known non-member every record would be 'beyond the holdout' and flaggable
        raise VrlibError("the holdout is empty: the bound needs holdout records (known non-members) to compare with")
    if len(records) and (records.min() < 0 or records.max() >= n_train or len(set(records)) != len(records)):
        raise VrlibError(f"records must be distinct positions among the {n_train} training records")
    others = np.ones(n_train - len(records)) if other_pvalues is None else np.asarray(other_pvalues, dtype=float)
    if len(others) != n_train - len(records):
        raise VrlibError(
            f"other_pvalues needs one p-value per training record not bounded ({n_train - len(records)}), "
            f"got {len(others)}"
        )
    counts = np.column_stack(
        [
            dominating_counts(
                closeness[v]["train"]["match"].to_numpy()[records],
                closeness[v]["train"]["isolation"].to_numpy()[records],
                closeness[v]["holdout"]["match"].to_numpy(),
                closeness[v]["holdout"]["isolation"].to_numpy(),
                use_isolation=isolation,
            )
            for v in views
        ]
    ).reshape(len(records), len(views))
    best = counts.argmin(axis=1)
    k = counts[np.arange(len(records)), best]
    p_rank = (1.0 + k) / (n_hold + 1.0)
    p_best = np.where(k == 0, 0.0, p_rank)

    def flaggable(p):
        if not len(p):
            return np.zeros(0, dtype=bool)
        return benjamini_hochberg(np.concatenate([p, others]), q)[1][: len(p)]

    table = pd.DataFrame(
        {
            "index": records,
            "holdout_as_close": k,
            "view": [views[b] for b in best],
            "p_best": p_best,
            "p_rank_best": p_rank,
            "flaggable": flaggable(p_best),
        }
    )
    summary = {
        "n_records": int(len(records)),
        "n_flaggable": int(table["flaggable"].sum()),
        "n_flaggable_empirical": int(flaggable(p_rank).sum()),
        "n_beyond_holdout": int((k == 0).sum()),
        "n_holdout": int(n_hold),
        "q": q,
        "isolation": bool(isolation),
    }
    return table, summary
