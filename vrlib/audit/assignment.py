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
the lowest).  Its neighbourhood ``d_nbr`` is the audit's (the mean distance to the 2nd to
``(k+1)``-th nearest released records, with the verbatim repeats of the match assigned to it at
``d_1`` counted once: a released value counts once, so that a record released ``r`` times scores
as one released once instead of losing ``r - 1`` neighbourhood places to its own copies, closeness
0 from ``k + 1`` copies), so that ``closeness = log((d_nbr + eps) / (d_1 + eps))``
is the audit's score for a record that keeps its nearest released record.  A copy of
``t`` is at distance 0 from ``t`` and is assigned to it, so ``t``'s near-twins no longer
borrow it.

**Ties go to no one.**  A released record equally near to several pooled records (a copy
of a record that the population repeats, a holdout twin of ``t`` included) is assigned to
none of them: the rule needs no order of the pool, so the scores do not depend on the seed,
and a holdout record never takes a copy that is as much its own as a training record's.
(Two other rules were measured and not kept, ``docs/audit.md``: ties to one of the tied
records by a seeded order, the default until this rule, moved the flag's margin with the
seed; ties to all of them gave exact copies back to holdout twins, which then topped the
null and masked other copies.)  What it costs: a copy of a record that another *training*
record repeats is assigned to neither; such a copy is weak evidence in any case where the
population repeats records.

**Why the null stays valid.**  The assignment looks at the pooled records' distances,
never at which of them are training records.  When training and holdout records are
exchangeable with respect to the release (nothing leaked), every record's score is the
same function of the pool and the release, so the holdout's scores are exchangeable with a
non-member's and the empirical p-values (and the checked tail beyond them,
:class:`vrlib.audit.evidence.NullTail`) stay valid.

The audit's default: :func:`vrlib.audit.evidence.copy_evidence` computes it from its own
release searches (:func:`assigned_frames`); ``vrlib.audit(..., assign=False)`` and ``vrlib
audit --no-assign`` score each record on every released record instead.  Measured by
``benchmarks/bench_audit_assignment.py`` and ``benchmarks/bench_audit_validation.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.audit.evidence import (
    TIE,
    _calibrated,
    _check_closeness_args,
    _neighbourhood,
    _release_neighbours,
    _value_groups,
    distance_views,
)
from vrlib.data import Schema
from vrlib.distance import kneighbors_between
from vrlib.encoding import EncodedTable

__all__ = ["assigned_closeness", "assigned_evidence", "assigned_frames", "floor_unassigned"]


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
        search is the release's against the pooled records (two neighbours: the second tells a tie),
        besides the records whose match repeats verbatim (searched again past the repeats).
    tables : dict
        ``{"train": train, "holdout": holdout}`` (for their indexes).
    k : int
    eps : float
        ``resolution / F`` of the view.

    Returns
    -------
    dict "train" / "holdout" -> DataFrame
        ``d_release`` (the nearest released record, assigned or not), ``d_assigned``,
        ``n_assigned``, ``d_neighbourhood`` and ``closeness`` (``-inf`` when none is assigned).
    """
    n_train, n_pool = len(tables["train"]), len(tables["train"]) + len(tables["holdout"])
    pool = EncodedTable(
        np.vstack([encoded["train"].onehot, encoded["holdout"].onehot]),
        np.vstack([encoded["train"].continuous, encoded["holdout"].continuous]),
        encoded["train"].n_categorical,
    )
    d, idx = kneighbors_between(encoded["release"], pool, k=min(2, n_pool), metric="minkowski", p=1.0)
    d = d / factor
    # a released record with a second pooled record as near as its nearest is tied: assigned to no one
    alone = d[:, 1] - d[:, 0] > TIE if n_pool > 1 else np.ones(len(d), bool)
    owner = idx[alone, 0]  # position in train ++ holdout
    d_assigned = np.full(n_pool, np.inf)
    np.minimum.at(d_assigned, owner, d[alone, 0])
    n_assigned = np.bincount(owner, minlength=n_pool)
    repeats = _assigned_repeats(encoded["release"], alone, d[alone, 0], owner, d_assigned, n_pool)
    out = {}
    for name, lo, hi in (("train", 0, n_train), ("holdout", n_train, n_pool)):
        dist = nearest[name][0]
        # the match's repeats would fill neighbourhood places (closeness 0 from k + 1 of them): counted once
        nbr = _neighbourhood(dist, k, encoded[name], encoded["release"], d_assigned[lo:hi], repeats[lo:hi], factor)
        with np.errstate(divide="ignore"):
            closeness = np.log((nbr + eps) / (d_assigned[lo:hi] + eps))
        out[name] = pd.DataFrame(
            {
                "d_release": dist[:, 0],
                "d_assigned": d_assigned[lo:hi],
                "n_assigned": n_assigned[lo:hi],
                "d_neighbourhood": nbr,
                "closeness": closeness,
            },
            index=tables[name].index,
        )
    return out


def _assigned_repeats(release: EncodedTable, alone, d_nearest, owner, d_assigned, n_pool: int) -> np.ndarray:
    """Per pooled record, how many identical released records are assigned to it at its ``d_1`` (1 when none repeats).

    Parameters
    ----------
    release : EncodedTable
    alone : bool array, one per released record
        Assigned to some pooled record (not tied).
    d_nearest, owner : arrays, one per assigned released record
        Its distance to, and position of, the pooled record it is assigned to.
    d_assigned : array, one per pooled record
    n_pool : int
    """
    repeats = np.ones(n_pool, dtype=np.int64)
    if not len(owner):
        return repeats
    group = _value_groups(release)
    at_d1 = d_nearest <= d_assigned[owner] + TIE  # the record's match and whatever repeats it
    pairs, counts = np.unique(np.c_[owner[at_d1], group[alone][at_d1]], axis=0, return_counts=True)
    np.maximum.at(repeats, pairs[:, 0], counts)
    return repeats


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
