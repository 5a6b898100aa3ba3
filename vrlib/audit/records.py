"""``records.csv``: one row per training record, most at risk first.

Columns, in order: ``index`` (0-based row in the training file), ``risk_rank`` (1 = most
at risk: the flagged records first, then smallest ``p_rank`` (the copy evidence with
near matches), smallest copy-evidence p-value, largest closeness, i.e. effect size,
largest merged statistic, index),
``vk`` and ``vk_rank`` (V_k, achilles eq. 5, with rank 1 the most isolated record),
``copies`` (verbatim copies in the release), ``d_release`` and ``d_neighbourhood``
(Gower distances to the nearest released record and to the next k,
:mod:`vrlib.audit.evidence`), ``closeness`` (the effect size), ``p_value`` (the copy
evidence against every holdout record), ``q_value`` (Benjamini–Hochberg on ``p_value``)
and ``flagged``, then ``score_<attack>`` and ``p_<attack>`` for each attack (p against
the null half of the holdout) and ``score_combined`` (the attacks' p-values merged,
:func:`vrlib.audit.pvalues.merge`).
Record values follow only when asked for (``show_values``): the file is as sensitive
as the training data otherwise would be.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["records_table", "risk_order"]


def risk_order(p_value, effect, merged, p_rank=None, flagged=None) -> np.ndarray:
    """Positions from most to least at risk: smallest ``p_value``, then largest ``effect``, then largest ``merged``.

    With ``flagged`` and ``p_rank`` (a p-value over more evidence), the flagged records come first and
    ``p_rank`` orders before ``p_value``.
    """
    p_value, effect = np.asarray(p_value, float), np.asarray(effect, float)
    keys = [np.arange(len(p_value)), -np.asarray(merged, float), -effect, p_value]
    if p_rank is not None:
        keys.append(np.asarray(p_rank, float))
    if flagged is not None:
        keys.append(~np.asarray(flagged, bool))
    return np.lexsort(tuple(keys))


def records_table(
    train: pd.DataFrame,
    scores: pd.DataFrame,
    pvalues: pd.DataFrame,
    merged,
    evidence: pd.DataFrame,
    p_value,
    q_values,
    flagged,
    vulnerability,
    show_values: bool = False,
) -> pd.DataFrame:
    """The per-record table, sorted by ``risk_rank``.

    Parameters
    ----------
    train : DataFrame
        The training records (0-based index = row in the file).
    scores, pvalues : DataFrame
        One column per attack, aligned with ``train``.
    merged : array-like
        The attacks' merged statistic per record.
    evidence : DataFrame
        Of :func:`vrlib.audit.evidence.copy_evidence`, per record.
    p_value, q_values, flagged : array-like
        Per record.
    vulnerability : array-like
        V_k per record.
    show_values : bool
        Append the record's values.

    Returns
    -------
    DataFrame
    """
    n = len(train)
    p_rank = evidence["p_rank"].to_numpy() if "p_rank" in evidence else None
    order = risk_order(p_value, evidence["effect"].to_numpy(), merged, p_rank, flagged)
    risk_rank = np.empty(n, dtype=np.int64)
    risk_rank[order] = np.arange(1, n + 1)
    vk = np.asarray(vulnerability, float)
    vk_rank = np.empty(n, dtype=np.int64)
    vk_rank[np.lexsort((np.arange(n), -vk))] = np.arange(1, n + 1)
    table = pd.DataFrame({"index": np.arange(n), "risk_rank": risk_rank, "vk": vk, "vk_rank": vk_rank})
    if "copies" in scores:
        table["copies"] = scores["copies"].to_numpy().astype(np.int64)
    for c in evidence.columns:
        if c != "p_value":
            table[c] = evidence[c].to_numpy()
    table["p_value"] = np.asarray(p_value, float)
    table["q_value"] = np.asarray(q_values, float)
    table["flagged"] = np.asarray(flagged, bool)
    for attack in scores.columns:
        table[f"score_{attack}"] = scores[attack].to_numpy()
        table[f"p_{attack}"] = pvalues[attack].to_numpy()
    table["score_combined"] = np.asarray(merged, float)
    if show_values:
        values = train.reset_index(drop=True)
        for c in values.columns:
            table[f"value_{c}"] = values[c].astype(object).to_numpy()
    return table.iloc[order].reset_index(drop=True)
