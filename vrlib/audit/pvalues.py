"""From scores to calibrated evidence: empirical p-values, their combination, and a false-discovery-rate flag.

The audit flags records on their copy evidence (:mod:`vrlib.audit.evidence`, whose
p-values can go below the empirical floor) with :func:`benjamini_hochberg`; the
attacks' empirical p-values below are reported beside it, and merged with
:func:`midrank_pvalues` (one map for members and null records, ties counting half) for
the release-level AUC.  :func:`calibrate`, :func:`null_pvalues` and
:func:`flag_resolution` describe the empirical route and its floor.

* **Empirical p-value.** The null half of the holdout holds ``m`` known non-members
  scored exactly as the training records are.  A training record with score ``s``
  gets ``p = (1 + #{null >= s}) / (m + 1)``: if the record were a non-member, its score
  would be exchangeable with the null scores and ``P(p <= t) <= t`` for every t
  (a valid p-value, whatever the score).  A null record's own p-value counts the
  *other* null records the same way, ``(1 + #{other null >= s}) / (m + 1)``: it lacks
  only the candidate's term, so it is never larger than the p-value it would get
  among the candidate and the null records together.
* **Combination.** The attacks' p-values of one record are merged into one statistic
  ``T`` (higher = stronger evidence; :func:`merge`): ``fisher`` (default), ``-sum_j ln p_j``;
  ``bonferroni``, ``-ln min(1, J min_j p_j)``; ``harmonic``, ``-ln`` of the harmonic mean
  times ``e ln J`` (Vovk & Wang, Biometrika 2020).  The attacks see the same release, so
  their p-values are dependent and Fisher's chi-squared law does not hold; instead
  **T itself is calibrated against the null records** (:func:`calibrate`): the
  candidate's ``p = (1 + #{null T >= T}) / (m + 1)``.  The null records' T come from
  their leave-one-out p-values, which are at most their exact conformal ones, so their
  T are at least as large and the calibrated p-value stays valid (conservative) under
  any dependence between the attacks.  Fisher's sum rewards a record that several
  attacks find (a verbatim copy is the nearest released record *and* a copy), where a
  minimum saturates at ``1 / (m + 1)`` for members and null records alike.
* **Flag.** Benjamini–Hochberg over the training records at false-discovery rate
  ``q`` (default 5 %): the flagged records are, in expectation, at most a share q of
  non-members (valid for independent or positively dependent p-values).
* **Resolution.** No p-value is below ``1 / (m + 1)``, so with few null records the
  flag needs many records at that floor at once, or can flag none however strong the
  attacks (:func:`flag_resolution`): a clean audit on a small holdout is weak evidence.
"""

from __future__ import annotations

import numpy as np

from vrlib.errors import VrlibError
from vrlib.params import check_number

__all__ = [
    "COMBINATIONS",
    "empirical_pvalues",
    "null_pvalues",
    "midrank_pvalues",
    "merge",
    "calibrate",
    "benjamini_hochberg",
    "flag_resolution",
]

COMBINATIONS = ("fisher", "bonferroni", "harmonic")


def empirical_pvalues(scores, null) -> np.ndarray:
    """``(1 + #{null >= s}) / (m + 1)`` for each score ``s`` (higher score = stronger evidence).

    Parameters
    ----------
    scores : array-like of float
    null : array-like of float
        Scores of ``m >= 1`` known non-members.

    Returns
    -------
    ndarray of float in ``[1 / (m + 1), 1]``
    """
    scores, null = np.asarray(scores, dtype=float), np.sort(np.asarray(null, dtype=float))
    if null.ndim != 1 or len(null) == 0:
        raise VrlibError("the null scores must be a non-empty 1-D array (the known non-members' scores)")
    if np.isnan(scores).any() or np.isnan(null).any():
        raise VrlibError("scores contain NaN; an attack failed to score some records")
    at_least = len(null) - np.searchsorted(null, scores, side="left")
    return (1.0 + at_least) / (len(null) + 1.0)


def midrank_pvalues(scores, null) -> np.ndarray:
    """``(1/2 + #{null > s} + #{null = s} / 2) / (m + 1)``: one map from score to p-value for members and null records alike.

    Used to merge the attacks' evidence for the release-level figures (AUC, TPR): a
    member and a null record with equal scores get equal p-values (ties count half), so
    heavy ties leave the AUC at 0.5 instead of favouring either side, as leave-one-out
    p-values of the null records would.
    """
    scores, null = np.asarray(scores, dtype=float), np.sort(np.asarray(null, dtype=float))
    if null.ndim != 1 or len(null) == 0:
        raise VrlibError("the null scores must be a non-empty 1-D array (the known non-members' scores)")
    if np.isnan(scores).any() or np.isnan(null).any():
        raise VrlibError("scores contain NaN; an attack failed to score some records")
    above = len(null) - np.searchsorted(null, scores, side="right")
    equal = np.searchsorted(null, scores, side="right") - np.searchsorted(null, scores, side="left")
    return (0.5 + above + 0.5 * equal) / (len(null) + 1.0)


def null_pvalues(null) -> np.ndarray:
    """Each null record's p-value against the *other* null records: ``(1 + #{others >= s}) / (m + 1)``."""
    null = np.asarray(null, dtype=float)
    if len(null) < 2:
        raise VrlibError("leave-one-out p-values need at least two null scores")
    ordered = np.sort(null)
    at_least = len(null) - np.searchsorted(ordered, null, side="left")  # includes the record itself
    return at_least / (len(null) + 1.0)


def calibrate(member_merged, null_merged) -> np.ndarray:
    """Empirical p-values of merged statistics: ``(1 + #{null >= T}) / (m + 1)`` for each candidate's ``T``.

    Parameters
    ----------
    member_merged : array-like
        :func:`merge` of the candidates' p-values.
    null_merged : array-like
        :func:`merge` of the null records' :func:`null_pvalues`.
    """
    return empirical_pvalues(member_merged, null_merged)


def merge(pvalues, method: str = "fisher") -> np.ndarray:
    """One statistic per row (higher = stronger evidence) from the p-values of its columns (one per attack).

    Parameters
    ----------
    pvalues : DataFrame or 2-D array
        Rows = records, columns = attacks; values in (0, 1].
    method : {"fisher", "bonferroni", "harmonic"}
        ``fisher``: ``-sum ln p``; ``bonferroni``: ``-ln min(1, J min p)``; ``harmonic``:
        ``-ln min(1, c J / sum(1 / p))`` with ``c = e ln J`` (J >= 3) or 2 (J = 2).  The last
        two are ``-ln`` of p-values valid under any dependence; all three are calibrated
        by :func:`calibrate` before any decision.

    Returns
    -------
    ndarray of float >= 0
    """
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 2 or p.shape[1] == 0:
        raise VrlibError("merge needs a 2-D table of p-values, one column per attack")
    if not ((p > 0) & (p <= 1)).all():
        raise VrlibError("p-values must lie in (0, 1]")
    j = p.shape[1]
    if method == "fisher":
        return -np.log(p).sum(axis=1)
    if method == "bonferroni":
        return -np.log(np.minimum(1.0, j * p.min(axis=1)))
    if method != "harmonic":
        raise VrlibError(f"unknown combination {method!r}; choose one of {COMBINATIONS}")
    factor = 1.0 if j == 1 else 2.0 if j == 2 else np.e * np.log(j)
    return -np.log(np.minimum(1.0, factor * j / (1.0 / p).sum(axis=1)))


def benjamini_hochberg(pvalues, q: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Benjamini–Hochberg step-up: adjusted p-values (q-values) and which hypotheses are rejected at ``q``.

    Parameters
    ----------
    pvalues : array-like of float in [0, 1]
    q : float
        False-discovery rate, in (0, 1).

    Returns
    -------
    qvalues : ndarray
        ``min_{j >= i} (n p_(j) / j)``, capped at 1, in the input order.
    rejected : ndarray of bool
        ``qvalues <= q``.
    """
    p = np.asarray(pvalues, dtype=float)
    check_number("the false-discovery rate", q, above=0, below=1)
    if p.ndim != 1 or len(p) == 0 or np.isnan(p).any():
        raise VrlibError("Benjamini–Hochberg needs a non-empty 1-D array of p-values without NaN")
    n = len(p)
    order = np.argsort(p, kind="stable")
    scaled = p[order] * n / np.arange(1, n + 1)
    adjusted = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    out = np.empty(n)
    out[order] = adjusted
    return out, out <= q


def flag_resolution(n_records: int, n_null: int, q: float = 0.05) -> dict:
    """How fine-grained the flag of :func:`benjamini_hochberg` can be with ``n_null`` null records.

    Parameters
    ----------
    n_records : int
        Records tested (the training records).
    n_null : int
        Null records the p-values are calibrated against.
    q : float
        False-discovery rate.

    Returns
    -------
    dict
        ``p_min`` (``1 / (n_null + 1)``, the smallest p-value), ``min_records_to_flag`` (the
        fewest records that must all reach ``p_min`` for any to be flagged; None when even
        all ``n_records`` would not be), ``n_null_for_one`` (the fewest null records with
        which one record alone at ``p_min`` is flagged) and ``note``, a sentence saying so.
    """
    check_number("the false-discovery rate", q, above=0, below=1)
    if n_records < 1 or n_null < 1:
        raise VrlibError(f"need at least one record and one null record, got {n_records} and {n_null}")

    # the step-up's test for `tied` records at p-value `floor`, in benjamini_hochberg's floats
    def rejected(floor, tied):
        return floor * n_records / tied <= q

    p_min = 1.0 / (n_null + 1)
    r = np.arange(1, n_records + 1)
    enough = r[rejected(p_min, r)]
    tied = int(enough[0]) if len(enough) else None
    one = max(1, int(np.ceil(n_records / q)) - 1)  # 1 / (m + 1) <= q / n, then settled in the same floats
    while not rejected(1.0 / (one + 1), 1):
        one += 1
    while one > 1 and rejected(1.0 / one, 1):
        one -= 1
    floor = f"With {n_null:,} null records no p-value is below 1/{n_null + 1:,} = {p_min:.3g}"
    if tied is None:
        reach = f"so at a {q:.0%} false-discovery rate no record can be flagged, however strong the attacks"
    else:
        reach = (
            f"so at a {q:.0%} false-discovery rate a record is flagged only when at least {tied:,} of the "
            f"{n_records:,} records reach that value"
        )
    note = f"{floor}, {reach}; a single record can be flagged with {one:,} null records or more."
    return {"p_min": p_min, "min_records_to_flag": tied, "n_null_for_one": one, "note": note}
