"""Metrics, as pure functions: attack success (AUC, accuracy, TPR at FPR, top-q precision) and data quality.

Scores follow one convention everywhere: higher means "more likely a member" (label 1).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
from scipy.stats import rankdata, wasserstein_distance
from sklearn.metrics import roc_auc_score, roc_curve

from vrlib.data import Schema
from vrlib.errors import VrlibError
from vrlib.params import check_integer, check_number


def _check(labels, scores):
    labels = np.asarray(labels).astype(int)
    scores = np.asarray(scores, dtype=float)
    if labels.shape != scores.shape or labels.ndim != 1:
        raise VrlibError(f"labels and scores must be 1-D of equal length (got {labels.shape} and {scores.shape})")
    if np.isnan(scores).any():
        raise VrlibError("scores contain NaN")
    if len(np.unique(labels)) != 2:
        raise VrlibError("labels must contain both classes (0 = non-member, 1 = member)")
    return labels, scores


def auc(labels, scores) -> float:
    """Area under the ROC curve (ties count one half)."""
    labels, scores = _check(labels, scores)
    return float(roc_auc_score(labels, scores))


def auc_rows(member_scores, non_member_scores) -> np.ndarray:
    """AUC of each row: row i's member scores against row i's non-member scores (ties count one half).

    The Mann–Whitney statistic over average ranks, vectorised over the leading axes (e.g. bootstrap
    replicates); row by row the value of :func:`auc`.
    """
    member = np.asarray(member_scores, dtype=float)
    other = np.asarray(non_member_scores, dtype=float)
    if member.shape[:-1] != other.shape[:-1] or 0 in (member.shape[-1], other.shape[-1]):
        raise VrlibError(
            f"member and non-member scores need the same leading shape and at least one score each per row "
            f"(got {member.shape} and {other.shape})"
        )
    n1, n0 = member.shape[-1], other.shape[-1]
    ranks = rankdata(np.concatenate([member, other], axis=-1), axis=-1)
    return (ranks[..., :n1].sum(axis=-1) - n1 * (n1 + 1) / 2) / (n1 * n0)


def accuracy_at_median(labels, scores) -> float:
    """Accuracy when the records scored above the median are called members (DOMIAS's threshold)."""
    labels, scores = _check(labels, scores)
    return float(np.mean((scores > np.median(scores)).astype(int) == labels))


def accuracy(labels, predictions) -> float:
    """Fraction of correct hard predictions."""
    return float(np.mean(np.asarray(labels).astype(int) == np.asarray(predictions).astype(int)))


def tpr_at_fpr(labels, scores, fpr: float = 0.1) -> float:
    """Highest true-positive rate reachable with a false-positive rate of at most ``fpr``."""
    labels, scores = _check(labels, scores)
    fprs, tprs, _ = roc_curve(labels, scores)
    return float(tprs[fprs <= fpr].max())


def top_q_precision(labels, scores, q: float = 0.1) -> float:
    """Fraction of members among the ``q`` fraction of records with the highest scores.

    Records tied at the cut-off count by their average label (the expected precision
    under a random choice among the ties), so the order of the input never matters.
    """
    labels, scores = _check(labels, scores)
    check_number("q", q, above=0, maximum=1)
    n = max(1, int(round(q * len(scores))))
    cut = np.sort(scores)[::-1][n - 1]
    above, tied = scores > cut, scores == cut
    return float((labels[above].sum() + (n - above.sum()) * labels[tied].mean()) / n)


def mean_std(values) -> tuple[float, float]:
    """Mean and (population, ddof=0) standard deviation, as the papers report ± values."""
    values = np.asarray(values, dtype=float)
    return float(values.mean()), float(values.std())


def _discretise(real: pd.DataFrame, other: pd.DataFrame, schema: Schema, bins: int):
    """Both tables as integer codes; continuous columns cut into equal-width bins of the real range."""
    a, b = {}, {}
    for c in real.columns:
        if c in schema.categorical:
            cats = real[c].cat.categories
            a[c] = pd.Categorical(real[c], categories=cats).codes
            b[c] = pd.Categorical(other[c], categories=cats).codes  # -1: unseen in real
        else:
            lo, hi = real[c].min(), real[c].max()
            edges = np.linspace(lo, hi, bins + 1)[1:-1]
            a[c] = np.searchsorted(edges, real[c].to_numpy(), side="right")
            b[c] = np.searchsorted(edges, other[c].to_numpy(), side="right")
    return a, b


def _tvd(x: np.ndarray, y: np.ndarray) -> float:
    values, inverse = np.unique(np.concatenate([x, y]), return_inverse=True, axis=0)
    inverse = inverse.reshape(-1)
    px = np.bincount(inverse[: len(x)], minlength=len(values)) / len(x)
    py = np.bincount(inverse[len(x) :], minlength=len(values)) / len(y)
    return 0.5 * float(np.abs(px - py).sum())


def marginal_distance(
    real: pd.DataFrame, synthetic: pd.DataFrame, schema: Schema, way: int = 1, bins: int = 10
) -> float:
    """Mean total-variation distance between the ``way``-way marginals of two tables (0 = identical).

    Continuous columns are cut into ``bins`` equal-width bins over the real table's range.

    Parameters
    ----------
    real, synthetic : DataFrame
        Same columns; categorical columns categorical.
    schema : Schema
    way : {1, 2}
        One-way (per column) or two-way (per pair of columns) marginals.
    bins : int
    """
    if list(real.columns) != list(synthetic.columns):
        raise VrlibError("the two tables must have the same columns in the same order")
    if way not in (1, 2):
        raise VrlibError(f"way must be 1 or 2, got {way}")
    a, b = _discretise(real, synthetic, schema, bins)
    groups = [(c,) for c in real.columns] if way == 1 else list(combinations(real.columns, 2))
    if not groups:
        raise VrlibError("two-way marginals need at least two columns")
    return float(
        np.mean([_tvd(np.column_stack([a[c] for c in g]), np.column_stack([b[c] for c in g])) for g in groups])
    )


def sliced_wasserstein(a: np.ndarray, b: np.ndarray, n_directions: int = 100, seed: int = 0) -> float:
    """Sliced Wasserstein-1 distance: mean 1-D W1 of the projections on random unit directions."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise VrlibError("both samples must be 2-D with the same number of columns")
    dirs = np.random.default_rng(seed).normal(size=(n_directions, a.shape[1]))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    pa, pb = a @ dirs.T, b @ dirs.T
    return float(np.mean([wasserstein_distance(pa[:, k], pb[:, k]) for k in range(n_directions)]))


def column_wasserstein(a: np.ndarray, b: np.ndarray) -> float:
    """Mean over columns of the 1-D Wasserstein-1 distance between the two samples' marginals."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.mean([wasserstein_distance(a[:, k], b[:, k]) for k in range(a.shape[1])]))


def recovery_metrics(flagged, is_member) -> dict:
    """Precision, recall and counts of a flagged set (NaN precision, with no division, when nothing is flagged).

    Parameters
    ----------
    flagged, is_member : array-like of bool, one entry per released record
        Records count with their multiplicity, as in the authors' notebook.
    """
    flagged = np.asarray(flagged, dtype=bool)
    member = np.asarray(is_member, dtype=bool)
    if flagged.shape != member.shape:
        raise VrlibError(f"flagged and is_member differ in shape: {flagged.shape} vs {member.shape}")
    n_flagged, n_true = int(flagged.sum()), int((flagged & member).sum())
    n_members = int(member.sum())
    return {
        "n_flagged": n_flagged,
        "n_true": n_true,
        "n_members": n_members,
        "precision": n_true / n_flagged if n_flagged else float("nan"),
        "recall": n_true / n_members if n_members else float("nan"),
        "base_rate": n_members / len(member) if len(member) else float("nan"),
    }


# --------------------------------------------------------------------------- comparing two risk estimates (lost)


def _paired_risks(a, b) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.ndim != 1 or a.shape != b.shape or len(a) == 0:
        raise VrlibError(f"give two 1-D arrays of risks of equal, non-zero length (got {a.shape} and {b.shape})")
    if np.isnan(a).any() or np.isnan(b).any():
        raise VrlibError("risks contain NaN")
    return a, b


def rmsd(a, b) -> float:
    """Root mean squared deviation between two risk estimates of the same records, ``sqrt(mean((a - b)^2))``."""
    a, b = _paired_risks(a, b)
    return float(np.sqrt(np.mean((a - b) ** 2)))


def check_threshold(t: float) -> float:
    """``t`` as a float if it lies in the open interval (0.5, 1), else raise :class:`VrlibError`."""
    return check_number("the high-risk threshold t", t, above=0.5, below=1)


def miss_rate(reference, other, t: float) -> float:
    """Share of the records that ``reference`` rates high-risk (``>= t``) and ``other`` rates below ``t``.

    Lost in the Averages' miss rate with ``reference`` = model-seeded risks and
    ``other`` = traditional risks of the same records.

    Parameters
    ----------
    reference, other : array-like of float
        Risks (e.g. AUCs) of the same records, in the same order.
    t : float
        High-risk threshold, in (0.5, 1).

    Returns
    -------
    float
        NaN when no record reaches ``t`` in ``reference`` (the rate is then undefined).
    """
    t = check_threshold(t)
    reference, other = _paired_risks(reference, other)
    high = reference >= t
    if not high.any():
        return float("nan")
    return float(np.mean(other[high] < t))


def estimation_bound(n_games: int, rho: float = 0.05) -> float:
    """Half-width ``sqrt(log(2/rho) / (2 N))`` within which a success rate estimated from ``N`` games lies
    with probability ``1 - rho`` (Hoeffding; Lost in the Averages, Props. 1–2)."""
    check_integer("n_games", n_games, minimum=1)
    check_number("rho", rho, above=0, below=1)
    return float(np.sqrt(np.log(2 / rho) / (2 * n_games)))
