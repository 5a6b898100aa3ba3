"""Release-level figures: membership AUC and TPR at low FPR with intervals, risk by V_k decile, DCR and NNDR.

Members are the training records, non-members the null half of the holdout; every
figure compares the two with one score (higher = more likely a member).

The distance shares custodians usually read are computed here too, but only to be
shown *beside* the attacks:

* ``dcr_share``: of the released records, the share whose nearest real record (in a
  training subsample as large as the holdout, against the whole holdout) is a training
  record.  0.5 is what a release independent of its training data gives; the usual
  reading calls a release "safe" when this share is at most ``DCR_SAFE`` (0.6).
* ``nndr_share``: the share of released records whose nearest-neighbour distance ratio
  (nearest over second-nearest training record) is below the median ratio of the
  holdout records; 0.5 for an independent release.

:func:`disagreements` writes a sentence whenever the distance shares call the release
safe while the attacks or the verbatim copies say otherwise.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.data import Schema
from vrlib.distance import kneighbors_between
from vrlib.encoding import TableEncoder
from vrlib.parallel import derive_seed
from vrlib.params import check_number
from vrlib.uncertainty import clopper_pearson, delong_auc

__all__ = [
    "DCR_SAFE",
    "membership_auc",
    "tpr_at_fpr",
    "auc_by_decile",
    "distance_shares",
    "disagreements",
    "verbatim_excess",
]

DCR_SAFE = 0.6


def membership_auc(member_scores, null_scores, level: float = 0.95) -> dict:
    """AUC of members vs non-members with DeLong's interval (see :func:`vrlib.uncertainty.delong_auc`)."""
    member_scores, null_scores = np.asarray(member_scores, float), np.asarray(null_scores, float)
    labels = np.r_[np.ones(len(member_scores)), np.zeros(len(null_scores))]
    return delong_auc(labels, np.r_[member_scores, null_scores], level)


def tpr_at_fpr(member_scores, null_scores, fpr: float, level: float = 0.95) -> dict:
    """True-positive rate at a false-positive rate of at most ``fpr``, with an interval that counts both samples.

    The threshold is the ``(a + 1)``-th largest null score, ``a = floor(fpr m)``; a record
    scoring strictly above it is called a member, so at most ``a`` of the ``m`` null
    records are.  That threshold is itself estimated from the null records: at 0.1 % FPR it
    rests on a handful of them, and its noise is larger than the members' binomial noise.
    The interval is for the TPR at the threshold ``t*`` whose true false-positive rate is
    ``fpr``: the number of null records above ``t*`` is Binomial(m, fpr), so with
    probability ``1 - alpha / 2`` it lies in ``[k_lo, k_hi]`` and ``t*`` lies between the
    ``(k_hi + 1)``-th and the ``k_lo``-th largest null score; the TPR's lower bound is the
    Clopper–Pearson bound (at ``1 - alpha / 2``) of the members above the higher threshold,
    its upper bound that of the members above the lower one.  Both parts together cover
    with probability at least ``level`` (a union bound), whatever the score distributions.

    Returns
    -------
    dict
        ``fpr`` (target), ``tpr``, ``ci_low``, ``ci_high``, ``threshold``, ``false_positives``,
        ``true_positives``, ``n_members``, ``n_null``.
    """
    from scipy import stats

    member_scores, null = np.sort(np.asarray(member_scores, float)), np.sort(np.asarray(null_scores, float))[::-1]
    check_number("fpr", fpr, above=0, below=1)
    check_number("level", level, above=0, below=1)
    m, n = len(null), len(member_scores)
    above = lambda t: n - int(np.searchsorted(member_scores, t, side="right"))  # members strictly above t
    allowed = int(np.floor(fpr * m))
    threshold = null[min(allowed, m - 1)]
    tp = above(threshold)
    half = (1.0 - level) / 2  # the error each part may make
    k_lo, k_hi = (int(k) for k in stats.binom.ppf([half / 2, 1 - half / 2], m, fpr))
    t_high = null[k_lo - 1] if k_lo >= 1 else np.inf  # t* < the k_lo-th largest null score
    t_low = null[k_hi] if k_hi < m else -np.inf  # t* >= the (k_hi + 1)-th largest
    low = clopper_pearson(above(t_high), n, 1 - half)[0]
    high = clopper_pearson(above(t_low), n, 1 - half)[1]
    return {
        "fpr": fpr,
        "tpr": tp / n,
        "ci_low": low,
        "ci_high": high,
        "threshold": float(threshold),
        "false_positives": int((null > threshold).sum()),
        "true_positives": tp,
        "n_members": n,
        "n_null": m,
    }


def auc_by_decile(
    member_scores, null_scores, vulnerability, null_vulnerability, n_groups: int = 10, level: float = 0.95
) -> pd.DataFrame:
    """Membership AUC of the members of each V_k decile against the null records of the same V_k range.

    A record's score depends on how typical it is (an isolated record is far from every
    released record, member or not), so the members of a decile are compared with the
    null records whose V_k, measured against the same training records, falls in the
    decile's range.

    Parameters
    ----------
    member_scores, null_scores : array-like
    vulnerability : array-like
        V_k of each member (mean distance to its k nearest other training records).
    null_vulnerability : array-like
        The same for each null record (its k nearest training records).
    n_groups : int
        Deciles by default; group 1 holds the lowest V_k.

    Returns
    -------
    DataFrame
        ``decile, vk_low, vk_high, n, n_null, auc, ci_low, ci_high`` (AUC missing where a
        range holds fewer than two null records).
    """
    member_scores, vk = np.asarray(member_scores, float), np.asarray(vulnerability, float)
    null_scores, null_vk = np.asarray(null_scores, float), np.asarray(null_vulnerability, float)
    order = np.argsort(vk, kind="stable")
    parts = [p for p in np.array_split(order, n_groups) if len(p)]
    rows = []
    for g, part in enumerate(parts, start=1):
        low, high = float(vk[part].min()), float(vk[part].max())
        lo_edge = -np.inf if g == 1 else low
        hi_edge = np.inf if g == len(parts) else float(vk[parts[g]].min())
        in_range = (null_vk >= lo_edge) & (null_vk < hi_edge)
        row = {
            "decile": g,
            "vk_low": low,
            "vk_high": high,
            "n": len(part),
            "n_null": int(in_range.sum()),
            "auc": np.nan,
            "ci_low": np.nan,
            "ci_high": np.nan,
        }
        if len(part) >= 2 and in_range.sum() >= 2:
            res = membership_auc(member_scores[part], null_scores[in_range], level)
            row.update(auc=res["auc"], ci_low=res["ci_low"], ci_high=res["ci_high"])
        rows.append(row)
    return pd.DataFrame(rows, columns=["decile", "vk_low", "vk_high", "n", "n_null", "auc", "ci_low", "ci_high"])


def distance_shares(
    train: pd.DataFrame,
    synthetic: pd.DataFrame,
    holdout: pd.DataFrame,
    schema: Schema,
    seed: int = 0,
    max_release_rows: int = 20_000,
) -> dict:
    """The DCR and NNDR shares (see the module's docstring), on eq. 6 distances (Minkowski p = 2).

    Parameters
    ----------
    train, synthetic, holdout : DataFrame
    schema : Schema
    seed : int
        Seeds the training subsample (as large as the holdout) and the release subsample.
    max_release_rows : int
        Released records measured (a seeded subsample beyond it).

    Returns
    -------
    dict
        ``dcr_share``, ``dcr_safe`` (``dcr_share <= DCR_SAFE``), ``nndr_share``,
        ``n_release_measured``.
    """
    rng = np.random.default_rng(derive_seed(seed, "audit distance shares"))
    n = min(len(train), len(holdout))
    train_part = train.iloc[np.sort(rng.permutation(len(train))[:n])]
    hold_part = holdout.iloc[np.sort(rng.permutation(len(holdout))[:n])]
    release = synthetic.iloc[np.sort(rng.permutation(len(synthetic))[:max_release_rows])]
    encoder = TableEncoder(schema).fit(pd.concat([train, synthetic, holdout], ignore_index=True))
    enc_release, enc_train, enc_hold = (encoder.transform(t) for t in (release, train_part, hold_part))
    d_train, _ = kneighbors_between(enc_release, enc_train, k=2, metric="minkowski", p=2.0)
    d_hold, _ = kneighbors_between(enc_release, enc_hold, k=1, metric="minkowski", p=2.0)
    closer = d_train[:, 0] < d_hold[:, 0]
    ties = d_train[:, 0] == d_hold[:, 0]
    dcr_share = float((closer.sum() + 0.5 * ties.sum()) / len(release))
    d_hh, _ = kneighbors_between(enc_hold, enc_train, k=2, metric="minkowski", p=2.0)
    ratio_release = _ratio(d_train)
    ratio_hold = _ratio(d_hh)
    nndr_share = float((ratio_release < np.median(ratio_hold)).mean())
    return {
        "dcr_share": dcr_share,
        "dcr_safe": bool(dcr_share <= DCR_SAFE),
        "nndr_share": nndr_share,
        "n_release_measured": len(release),
    }


def _ratio(d: np.ndarray) -> np.ndarray:
    """Nearest over second-nearest distance; 0 when both are 0 (an exact copy with a duplicate)."""
    return np.divide(d[:, 0], d[:, 1], out=np.zeros(len(d)), where=d[:, 1] > 0)


def verbatim_excess(
    n_verbatim: int, n_train: int, n_verbatim_null: int | None, n_null: int, alpha: float = 0.05
) -> bool:
    """Whether training records occur verbatim in the release more often than non-members do.

    Where the population repeats its records (all-categorical data, small domains), holdout
    records the generator never saw occur verbatim too: a training record's verbatim
    occurrence is evidence of copying only beyond that rate (Fisher's exact test, one-sided,
    at ``alpha``).  Without the non-members' count, any verbatim training record counts.
    """
    if not n_verbatim:
        return False
    if n_verbatim_null is None or not n_null:
        return True
    from scipy.stats import fisher_exact

    table = [[n_verbatim, n_train - n_verbatim], [n_verbatim_null, n_null - n_verbatim_null]]
    return bool(fisher_exact(table, alternative="greater")[1] < alpha)


def disagreements(
    shares: dict,
    n_verbatim: int,
    n_flagged: int,
    auc: dict,
    fdr: float,
    n_train: int | None = None,
    n_verbatim_null: int | None = None,
    n_null: int = 0,
    holdout_check: dict | None = None,
) -> list[str]:
    """Sentences for each way the distance shares and the attacks disagree (empty when they agree).

    With ``n_train``, ``n_verbatim_null`` and ``n_null`` (the null holdout records that occur
    verbatim in the release, of ``n_null``), verbatim training records count against DCR only
    where they exceed what non-members get (:func:`verbatim_excess`).  ``holdout_check``
    (:func:`vrlib.audit.holdout.holdout_check`'s result, given when it tells training from
    holdout records without calling a shift) qualifies a membership AUC above 0.5: the two
    populations' difference can give one.
    """
    out = []
    copied = verbatim_excess(n_verbatim, n_train or 0, n_verbatim_null, n_null) if n_train else bool(n_verbatim)
    if shares["dcr_safe"]:
        if copied:
            out.append(
                f"DCR calls this release safe (share {shares['dcr_share']:.3f} <= {DCR_SAFE}); "
                f"{n_verbatim} training records are copied verbatim"
                + (
                    f" (against {n_verbatim_null} of {n_null} holdout records, which the generator never saw)."
                    if n_verbatim_null is not None and n_null
                    else "."
                )
            )
        if n_flagged:
            out.append(
                f"DCR calls this release safe; the attacks flag {n_flagged} training records "
                f"at {fdr:.0%} false-discovery rate."
            )
        if auc["ci_low"] > 0.5:
            out.append(
                f"DCR calls this release safe; the membership AUC is {auc['auc']:.3f} "
                f"[{auc['ci_low']:.3f}, {auc['ci_high']:.3f}], above 0.5"
                + (
                    f", but a classifier tells training from holdout records with AUC {holdout_check['auc']:.3f} "
                    f"[{holdout_check['ci_low']:.3f}, {holdout_check['ci_high']:.3f}] (holdout_difference), so "
                    "that can be the two populations' difference rather than a leak."
                    if holdout_check is not None
                    else "."
                )
            )
    elif not copied and not n_flagged and auc["ci_low"] <= 0.5:
        out.append(
            f"DCR calls this release unsafe (share {shares['dcr_share']:.3f} > {DCR_SAFE}); "
            "the attacks find no record at risk and no membership signal."
        )
    return out
