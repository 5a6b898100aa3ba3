"""``records.csv``: one row per training record, most at risk first.

Columns, in order: ``index`` (0-based row in the training file), ``risk_rank`` (1 = most
at risk: smallest calibrated p-value, then largest merged statistic, then largest
distance score, then index),
``vk`` and ``vk_rank`` (V_k, achilles eq. 5, with rank 1 the most isolated record),
``copies`` (verbatim copies in the release), then ``score_<attack>`` and ``p_<attack>``
for each attack, ``score_combined`` (the attacks' p-values merged, :func:`vrlib.audit.pvalues.merge`),
``p_combined`` (``score_combined`` calibrated against the null records, :func:`vrlib.audit.pvalues.calibrate`),
``q_value`` (Benjamini–Hochberg on ``p_combined``) and ``flagged``.
Record values follow only when asked for (``show_values``): the file is as sensitive
as the training data otherwise would be.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["records_table", "risk_order"]


def risk_order(p_combined, merged, tiebreak) -> np.ndarray:
    """Positions from most to least at risk: smallest ``p_combined``, then largest ``merged``, then largest ``tiebreak``."""
    p_combined, merged = np.asarray(p_combined, float), np.asarray(merged, float)
    return np.lexsort((np.arange(len(p_combined)), -np.asarray(tiebreak, float), -merged, p_combined))


def records_table(
    train: pd.DataFrame,
    scores: pd.DataFrame,
    pvalues: pd.DataFrame,
    merged,
    p_combined,
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
    merged, p_combined, q_values, flagged : array-like
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
    tiebreak = scores["distance"].to_numpy() if "distance" in scores else np.zeros(n)
    order = risk_order(p_combined, merged, tiebreak)
    risk_rank = np.empty(n, dtype=np.int64)
    risk_rank[order] = np.arange(1, n + 1)
    vk = np.asarray(vulnerability, float)
    vk_rank = np.empty(n, dtype=np.int64)
    vk_rank[np.lexsort((np.arange(n), -vk))] = np.arange(1, n + 1)
    table = pd.DataFrame({"index": np.arange(n), "risk_rank": risk_rank, "vk": vk, "vk_rank": vk_rank})
    if "copies" in scores:
        table["copies"] = scores["copies"].to_numpy().astype(np.int64)
    for attack in scores.columns:
        table[f"score_{attack}"] = scores[attack].to_numpy()
        table[f"p_{attack}"] = pvalues[attack].to_numpy()
    table["score_combined"] = np.asarray(merged, float)
    table["p_combined"] = np.asarray(p_combined, float)
    table["q_value"] = np.asarray(q_values, float)
    table["flagged"] = np.asarray(flagged, bool)
    if show_values:
        values = train.reset_index(drop=True)
        for c in values.columns:
            table[f"value_{c}"] = values[c].astype(object).to_numpy()
    return table.iloc[order].reset_index(drop=True)
