"""Copy evidence with each released record assigned to its nearest real record: a remedy for self-masking, measured beside the audit.

**Self-masking.**  The audit's closeness of a record uses its nearest released record,
whoever that record copies.  A released copy of training record ``t`` is then also the
nearest released record of the holdout records that are ``t``'s population near-twins, so
those non-members score like copies and lift the null tail that every training record,
``t`` included, is calibrated against (``docs/audit.md``, *Held-out: near-copies made as a
person makes them*).

**Assignment.**  Each released record is assigned to its nearest *real* record among the
training and holdout records pooled; a real record's ``d_1`` is its distance to the
nearest released record assigned to it (infinite when none is, so that its closeness is
the lowest).  A released record at the same smallest distance from several pooled records
is assigned to each of them: each counts it in ``n_assigned`` and takes that distance as
its ``d_1``.  Its neighbourhood ``d_nbr`` is the audit's (the mean distance to the 2nd to
``(k+1)``-th nearest released records), so that ``closeness = log((d_nbr + eps) / (d_1 + eps))``
is the audit's score for a record that keeps its nearest released record.  A copy of
``t`` is at distance 0 from ``t`` and is assigned to it (and, where a holdout record is
equal to ``t``, to that record too), so ``t``'s near-twins no longer borrow it.

**Why the null stays valid.**  The assignment looks at the pooled records, never at which
of them are training records, and a tie goes to every record in it, so the assignment is a
symmetric function of the pool: no order of the pool and no seed enters it (an earlier
rule broke ties by a seeded random order of the pool; valid too, but on the 30,000-record
Adult release the flags then moved with the seed, ``docs/audit.md``).  When training and
holdout records are exchangeable with respect to the release (nothing leaked), every
record's score is the same function of the pool and the release, so the holdout's scores are exchangeable with a non-member's and the empirical
p-values (and the checked tail beyond them, :class:`vrlib.audit.evidence.NullTail`) stay
valid.

The audit's default (``vrlib.audit(..., assign=False)`` and ``vrlib audit --no-assign`` score
each record on every released record instead), where
:func:`vrlib.audit.evidence.copy_evidence` computes it from its own release searches
(:func:`assigned_frames`); measured by ``benchmarks/bench_audit_assignment.py`` and
``benchmarks/bench_audit_validation.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.audit.evidence import _calibrated, _check_closeness_args, _release_neighbours, distance_views
from vrlib.data import Schema
from vrlib.distance import kneighbors_between
from vrlib.encoding import EncodedTable

__all__ = ["assigned_closeness", "assigned_evidence", "assigned_frames", "floor_unassigned", "nearest_pooled"]


def assigned_closeness(
    train: pd.DataFrame,
    holdout: pd.DataFrame,
    synthetic: pd.DataFrame,
    schema: Schema,
    k: int = 5,
    resolution: float = 0.0001,
) -> dict[str, dict[str, pd.DataFrame]]:
    """Per distance view, each training and holdout record's closeness to the released records assigned to it.

    Parameters
    ----------
    train, holdout, synthetic : DataFrame
        As :func:`vrlib.audit.evidence.copy_evidence` takes them (after the audit's input checks).
    schema : Schema
    k : int
        Released neighbours beyond the nearest that make the neighbourhood.
    resolution : float
        Changes smaller than this share of one column's range count as copies.

    Returns
    -------
    dict view -> {"train": DataFrame, "holdout": DataFrame}
        Columns ``d_assigned`` (Gower units; ``inf`` when no released record is assigned),
        ``n_assigned``, ``d_neighbourhood`` and ``closeness`` (``-inf`` when none is assigned).
    """
    _check_closeness_args(k, resolution, len(synthetic))
    tables = {"train": train, "holdout": holdout}
    out = {}
    for view, sub in distance_views(schema).items():
        cols = list(sub.columns)
        nearest, enc, factor = _release_neighbours(
            {n: df[cols] for n, df in tables.items()}, synthetic[cols], sub, k + 1
        )
        out[view] = assigned_frames(nearest, enc, factor, tables, k, resolution / len(cols))
    return out


def assigned_frames(nearest, encoded, factor, tables, k, eps) -> dict[str, pd.DataFrame]:
    """One view's assigned closeness from that view's release searches (those of the audit's copy evidence).

    Parameters
    ----------
    nearest, encoded, factor
        Of :func:`vrlib.audit.evidence._release_neighbours` for ``{"train": ..., "holdout": ...}``
        with at least ``k + 1`` neighbours: the neighbourhood is taken from them, so the only new
        search is the release's against the pooled records (:func:`nearest_pooled`).
    tables : dict
        ``{"train": train, "holdout": holdout}`` (for their indexes).
    k : int
    eps : float
        ``resolution / F`` of the view.

    Returns
    -------
    dict "train" / "holdout" -> DataFrame
        ``d_release`` (the nearest released record, assigned or not), ``d_assigned``,
        ``n_assigned`` (released records assigned, a tied one counted by each record it is
        assigned to), ``d_neighbourhood`` and ``closeness`` (``-inf`` when none is assigned).
    """
    n_train, n_holdout = len(tables["train"]), len(tables["holdout"])
    pool = EncodedTable(
        np.vstack([encoded["train"].onehot, encoded["holdout"].onehot]),
        np.vstack([encoded["train"].continuous, encoded["holdout"].continuous]),
        encoded["train"].n_categorical,
    )
    released, owner, dist = nearest_pooled(encoded["release"], pool)
    n_pool = n_train + n_holdout
    d_assigned = np.full(n_pool, np.inf)
    np.minimum.at(d_assigned, owner, dist / factor)
    n_assigned = np.bincount(owner, minlength=n_pool)
    out = {}
    for name, lo, hi in (("train", 0, n_train), ("holdout", n_train, n_pool)):
        d_rel = nearest[name][0]
        nbr = d_rel[:, 1 : k + 1].mean(axis=1)
        with np.errstate(divide="ignore"):
            closeness = np.log((nbr + eps) / (d_assigned[lo:hi] + eps))
        out[name] = pd.DataFrame(
            {
                "d_release": d_rel[:, 0],
                "d_assigned": d_assigned[lo:hi],
                "n_assigned": n_assigned[lo:hi],
                "d_neighbourhood": nbr,
                "closeness": closeness,
            },
            index=tables[name].index,
        )
    return out


def nearest_pooled(release: EncodedTable, pool: EncodedTable, start: int = 8) -> tuple[np.ndarray, ...]:
    """Every pooled record at the smallest distance from each released record.

    The release is searched for ``start`` neighbours in the pool; a released record whose
    last neighbour found is still at its smallest distance is searched again, alone with the
    others in that case, for twice as many, until it is not or the whole pool is found.  Ties
    are exact equalities of the distances :func:`vrlib.distance.kneighbors_between` returns:
    each is recomputed in float64 from the two records alone, so records equal in the
    view (the ties met in practice) get the same distance to the bit, and a tie missed by
    rounding goes to the nearer record by the computed distance, still a function of the
    records and never of their positions.

    Returns
    -------
    released, owner, distance : ndarray
        One entry per (released record, nearest pooled record) pair: the positions in the
        release and in the pool, and their distance (the view's distance, before ``factor``).
    """
    n = len(pool)
    rows, k = np.arange(len(release)), min(start, n)
    released, owner, dist = [], [], []
    while len(rows):
        sub = EncodedTable(release.onehot[rows], release.continuous[rows], release.n_categorical)
        d, idx = kneighbors_between(sub, pool, k=k, metric="minkowski", p=1.0)
        tied = d == d[:, :1]
        open_ = tied[:, -1] & (k < n)  # the last one found is still tied: there may be more
        r, c = np.nonzero(tied & ~open_[:, None])
        released.append(rows[r])
        owner.append(idx[r, c])
        dist.append(d[r, c])
        rows, k = rows[open_], min(2 * k, n)
    return np.concatenate(released), np.concatenate(owner), np.concatenate(dist)


def floor_unassigned(train_closeness, holdout_closeness) -> tuple[np.ndarray, np.ndarray]:
    """``-inf`` (no released record assigned) replaced by one value below every finite closeness of both tables."""
    both = np.r_[np.asarray(train_closeness, float), np.asarray(holdout_closeness, float)]
    finite = both[np.isfinite(both)]
    floor = (finite.min() if len(finite) else 0.0) - 1.0
    return tuple(
        np.where(np.isfinite(c), c, floor)
        for c in (np.asarray(train_closeness, float), np.asarray(holdout_closeness, float))
    )


def assigned_evidence(
    train: pd.DataFrame,
    holdout: pd.DataFrame,
    synthetic: pd.DataFrame,
    schema: Schema,
    k: int = 5,
    resolution: float = 0.0001,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The training (and holdout) records' p-values from :func:`assigned_closeness`, calibrated as the audit's views are.

    Each view's closeness is calibrated on the holdout's (empirical p-values, a checked
    generalised Pareto tail beyond the largest, empirical only if the check fails); a
    record's p-value is the Bonferroni minimum over the views, as the audit's flag is.  A
    record with no released record assigned gets a closeness below every finite one (the
    same value for training and holdout records).

    Parameters
    ----------
    train, holdout, synthetic, schema, k, resolution
        As :func:`assigned_closeness` takes them.
    seed : int
        Of the tail check's random split of the holdout scores only: the assignment itself
        uses no seed.

    Returns
    -------
    train_table, holdout_table : DataFrame
        ``closeness_<view>``, ``n_assigned_<view>``, ``p_<view>``, ``p_value`` and ``effect``
        (the closeness of the view that gave the smallest p-value).
    info : dict
        ``warnings`` (views whose tail failed its check) and, per view, ``extrapolated``.
    """
    sc = assigned_closeness(train, holdout, synthetic, schema, k=k, resolution=resolution)
    out = {"train": pd.DataFrame(index=train.index), "holdout": pd.DataFrame(index=holdout.index)}
    notes, info, p, eff = [], {"views": {}}, {}, {}
    for view, s in sc.items():
        eff["train", view], eff["holdout", view] = floor_unassigned(s["train"]["closeness"], s["holdout"]["closeness"])
        tail, check = _calibrated(eff["holdout", view], seed, f"assigned closeness ({view} view)", notes)
        info["views"][view] = {"extrapolated": tail.fitted_, "check_passed": check["passed"]}
        for name in out:
            out[name][f"closeness_{view}"] = eff[name, view]
            out[name][f"n_assigned_{view}"] = s[name]["n_assigned"].to_numpy()
            p[name, view] = tail.pvalues(eff[name, view])
            out[name][f"p_{view}"] = p[name, view]
    views = list(sc)
    for name in out:
        pv = np.column_stack([p[name, v] for v in views])
        best = pv.argmin(axis=1)
        out[name]["p_value"] = np.minimum(1.0, len(views) * pv.min(axis=1))
        out[name]["effect"] = np.column_stack([eff[name, v] for v in views])[np.arange(len(pv)), best]
    info["warnings"] = notes
    return out["train"], out["holdout"], info
