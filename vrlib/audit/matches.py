"""Near-match evidence: released records that agree with a record on all its columns but at most one.

A record copied with one value changed (a category swapped, a number moved) still
agrees with its original on every other column.  Whether that is evidence depends on
how common such agreement is: a record whose all-but-one pattern no holdout record
shares, yet a released record does, is a rare match; one whose pattern half the
population shares is not.

**Agreement.** Categorical values agree when equal; continuous values when they fall in
the same cell of width ``resolution`` × the column's range over the three tables, or, for
integer-valued columns, when equal.  ``c(x)``, the released records agreeing with ``x``
on all columns but at most one, is counted by hashing: one group-by of the coded table
with each column masked in turn and one with none (``m + 1`` group-bys, no pairwise
distances), since a released record differing from ``x`` in exactly column ``j`` is in
the ``j``-masked group alone and an equal one in all ``m``::

    c(x) = sum_j n_j(x) - (m - 1) n_all(x)

**Rarity.** ``k(x)``, the holdout records (other than ``x`` itself) agreeing with ``x`` the
same way, estimates the population's rate of such agreement,
``q(x) = (k(x) + a(x)) / (n_ref + 1)``, with the pseudo-count ``a(x)`` the number of
agreeing reference records that independent columns (each at its reference frequency)
would give, at most 1/2, so that among records no reference record matches the rarer
value combinations count as rarer; the score is how unlikely ``c(x)`` released
matches are by chance, ``-log P(Binomial(n_release, q(x)) >= c(x))`` (0 with no match).
It is a score, not a p-value: its p-values come from the same score of every holdout
record (:class:`vrlib.audit.evidence.NullTail`), so the binomial only orders records.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.data import Schema
from vrlib.params import check_number

__all__ = ["match_codes", "masked_counts", "near_match_counts", "match_scores"]


def match_codes(tables: list[pd.DataFrame], schema: Schema, resolution: float) -> list[np.ndarray]:
    """Integer codes per column, equal where values agree (see the module's docstring), one array per table."""
    check_number("resolution", resolution, above=0, below=1)
    cols = list(schema.columns)
    n = [len(t) for t in tables]
    codes = np.empty((sum(n), len(cols)), dtype=np.int64)
    for j, col in enumerate(cols):
        values = pd.concat([t[col] for t in tables], ignore_index=True)
        if col in schema.continuous:
            v = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
            finite = v[np.isfinite(v)]
            lo, span = (float(finite.min()), float(np.ptp(finite))) if len(finite) else (0.0, 0.0)
            if span == 0 or np.all(finite == np.round(finite)):
                q = v  # integer-valued (or constant): agreement is equality
            else:
                q = np.floor((v - lo) / (resolution * span))
            values = pd.Series(q)
        codes[:, j] = pd.factorize(values.astype(object) if values.dtype.name == "category" else values)[0]
    return np.split(codes, np.cumsum(n)[:-1])


def _group_ids(codes: np.ndarray) -> np.ndarray:
    """One id per distinct row of ``codes`` (exact, no hash collisions)."""
    if codes.shape[1] == 0:
        return np.zeros(len(codes), dtype=np.int64)
    return pd.DataFrame(codes).groupby(list(range(codes.shape[1])), sort=False).ngroup().to_numpy()


def masked_counts(queries: np.ndarray, pool: np.ndarray, exclude_self: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``pool`` equal to each row of ``queries`` (``exact``) and equal but for column ``j`` (``masked[:, j]``).

    Parameters
    ----------
    queries, pool : ndarray of int, shape (n, m) and (p, m)
        Codes of :func:`match_codes`.
    exclude_self : bool
        ``queries`` is ``pool`` and a row does not count itself.

    Returns
    -------
    exact : ndarray of int, shape (n,)
    masked : ndarray of int, shape (n, m)
        Equal rows included (they agree but for any column).
    """
    m = queries.shape[1]
    both = np.vstack([queries, pool])
    nq = len(queries)

    def counts(cols):
        ids = _group_ids(both[:, cols])
        per_group = np.bincount(ids[nq:], minlength=ids.max() + 1)
        return per_group[ids[:nq]] - int(exclude_self)  # a row agrees with itself on every column

    exact = counts(list(range(m)))
    masked = np.column_stack([counts([c for c in range(m) if c != j]) for j in range(m)])
    return exact.astype(np.int64), masked.astype(np.int64)


def near_match_counts(queries: np.ndarray, pool: np.ndarray, exclude_self: bool = False) -> np.ndarray:
    """For each row of ``queries``, the rows of ``pool`` agreeing with it on all columns but at most one.

    Parameters and codes as :func:`masked_counts`; a row differing in exactly column ``j`` is counted
    in ``masked[:, j]`` alone, an equal one in all ``m`` columns, hence ``sum_j masked_j - (m - 1) exact``.

    Returns
    -------
    ndarray of int, shape (n,)
    """
    exact, masked = masked_counts(queries, pool, exclude_self)
    return masked.sum(axis=1) - (masked.shape[1] - 1) * exact


def match_scores(
    records: dict[str, pd.DataFrame],
    reference: str,
    synthetic: pd.DataFrame,
    schema: Schema,
    resolution: float = 0.0001,
) -> dict[str, pd.DataFrame]:
    """Near matches in the release (``release_matches``), in the reference (``reference_matches``) and ``match_score``.

    Parameters
    ----------
    records : mapping name -> DataFrame
        E.g. ``{"train": train, "holdout": holdout}``: all scored alike.
    reference : str
        The key of ``records`` whose records estimate the population's rate of agreement
        (the holdout); its own records are counted against the others (leave one out).
    synthetic : DataFrame
        The release.
    schema : Schema
    resolution : float
        Cell width of the continuous columns, as a share of their range.

    Returns
    -------
    dict name -> DataFrame with columns ``release_matches``, ``reference_matches``, ``match_score``
    """
    names = list(records)
    if reference not in records:
        raise ValueError(f"reference {reference!r} is not one of the tables {names}")
    codes = match_codes([records[k] for k in names] + [synthetic], schema, resolution)
    by_name, release = dict(zip(names, codes[:-1])), codes[-1]
    ref = by_name[reference]
    out = {}
    for name in names:
        own = name == reference  # a reference record is compared with the other reference records
        exact_rel, c_j = masked_counts(by_name[name], release)
        c = c_j.sum(axis=1) - (c_j.shape[1] - 1) * exact_rel
        exact_ref, k_j = masked_counts(by_name[name], ref, exclude_self=own)
        k = k_j.sum(axis=1) - (k_j.shape[1] - 1) * exact_ref
        n_ref = len(ref) - own
        # per masked column j: the reference records agreeing but for j, plus as pseudo-count the number that
        # independent columns (each at its reference frequency) would give, at most 1/2, so that among
        # patterns no reference record shares, rarer value combinations count as rarer
        log_f = np.empty(c_j.shape)
        for j in range(ref.shape[1]):
            freq = pd.Series(ref[:, j]).value_counts()
            seen = pd.Series(by_name[name][:, j]).map(freq).fillna(0).to_numpy() - own
            log_f[:, j] = np.log((seen + 0.5) / (n_ref + 1.0))
        independent = n_ref * np.exp(log_f.sum(axis=1, keepdims=True) - log_f)
        rate = (k_j + np.minimum(0.5, independent)) / (n_ref + 1.0)
        # the released matches expected by chance, n_release q_j(x), times those seen: many matches of a pattern
        # the holdout rarely has mean the generator favours it (a copy adds one); the rarest match decides
        with np.errstate(divide="ignore"):
            s_j = np.where(c_j > 0, -np.log(len(release) * rate * np.maximum(c_j, 1)), 0.0)
        score = np.maximum(s_j.max(axis=1), 0.0)
        out[name] = pd.DataFrame(
            {"release_matches": c, "reference_matches": k, "match_score": score},
            index=records[name].index,
        )
    return out
