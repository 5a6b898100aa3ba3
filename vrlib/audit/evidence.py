"""Per-record copy evidence: how much nearer a record's closest released record is than its neighbourhood, and how rare that is.

**Distance.** Gower's mixed-type distance on the encoded record, scaled as V_k scales
it (one-hot categories, continuous columns min-max scaled on all three tables): a
changed category counts 1, a continuous change counts its share of the column's
range, and the sum is divided by the number of columns.  A record with one category
changed is at ``1 / F`` from the original, as near as a continuous value moved by the
whole range of one column.

**Closeness** (the effect size).  For a record ``x``, ``d_1`` is the distance to its
nearest released record and ``d_nbr`` the mean distance to its 2nd to ``(k+1)``-th
nearest released records (its neighbourhood in the release), the verbatim repeats of
the nearest one counted once (a released value takes one place, so that a record
released ``r`` times scores as one released once, not lower)::

    closeness(x) = log((d_nbr + eps) / (d_1 + eps)),   eps = resolution / F

An exact copy of an isolated record scores highest; a record in a dense region of the
release scores about 0 however small ``d_1`` is, since its neighbours are as near.
``eps`` makes anything nearer than ``resolution`` of one column's range count as a copy.

**p-values.** Every holdout record is scored alike (they are known non-members; holdout
rows equal to training rows stay in, as the population's own duplicates).  A record's
p-value is the share of non-members at least as close, the empirical
``(1 + #{holdout >= s}) / (n + 1)``, as long as some holdout record is at least as
close; beyond the largest holdout score, the exceedances of the top ``tail_share`` are
modelled by a generalised Pareto tail (shape clipped at 0: never lighter than
exponential), so a score beyond every holdout record gets a p-value below
``1 / (n + 1)`` — the resolution Benjamini–Hochberg needs among thousands of records.  The tail is checked
before it is used (:meth:`NullTail.check`): fitted on one half of the holdout, it
must not give the other half more small p-values than their level (a one-sided
binomial test at each level, and the smallest p-value against its own distribution);
if it fails, the p-values fall back to the empirical ones (no extrapolation) and the
audit says so.

**Tolerant view** (``tolerant=True``, an option): Gower's distance with one changed
category free, ``d - 1/F`` when some category differs (:func:`tolerant_distances`), so that
a copy with one category changed is exact there while a released record differing in two
categories is not; its nearest released records are sought among the
:data:`TOLERANT_CANDIDATES` nearest of each distance view's own search.  The flag then uses
one statistic, the largest closeness of the distance views and the tolerant one, calibrated
on the holdout.  It is not the default: on the validation benchmark its false flags exceeded
what the false-discovery rate allows (``docs/audit.md``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.audit.matches import match_scores
from vrlib.data import Schema
from vrlib.distance import kneighbors_between
from vrlib.encoding import EncodedTable, TableEncoder
from vrlib.errors import VrlibError
from vrlib.parallel import derive_seed
from vrlib.params import check_integer, check_number

__all__ = [
    "gower_view",
    "closeness_scores",
    "tolerant_distances",
    "NullTail",
    "copy_evidence",
    "distance_views",
    "copy_resolution",
    "TOLERANT_CANDIDATES",
]

TOLERANT_CANDIDATES = 20  # released records per distance view among which the tolerant view's nearest are sought
TIE = 1e-12  # Gower units: distances closer than this are one distance (sums rounded otherwise)


def gower_view(encoder: TableEncoder, df: pd.DataFrame) -> tuple[EncodedTable, float]:
    """``df`` encoded so that :func:`vrlib.distance.kneighbors_between` (Minkowski, p = 1) is ``factor`` × Gower.

    The eq. 6 distance with p = 1 weighs the one-hot block (2 per changed category) by
    ``F_cat / F`` and the continuous block by ``F_cont / F``; scaling the continuous
    block by ``2 F_cat / F_cont`` makes both ``2 F_cat / F`` per unit, i.e. ``2 F_cat``
    × Gower.

    Returns
    -------
    table : EncodedTable
    factor : float
        Distance of the encoded table per unit of Gower distance.
    """
    enc = encoder.transform(df)
    f_cat, f_cont = enc.n_categorical, enc.n_continuous
    if f_cat and f_cont:
        enc = EncodedTable(enc.onehot, enc.continuous * (2.0 * f_cat / f_cont), f_cat)
    return enc, float(2 * f_cat if f_cat else f_cont)


def _release_neighbours(records, synthetic, schema, n):
    """The ``n`` released records nearest to each record of ``records`` (Gower units), and the encoded tables.

    Returns
    -------
    nearest : dict name -> (distances (len, n) in Gower units, positions (len, n) in ``synthetic``)
    encoded : dict name -> EncodedTable (:func:`gower_view`), with ``"release"`` for ``synthetic``
    factor : float
        Of :func:`gower_view`.
    """
    encoder = TableEncoder(schema).fit(pd.concat([*records.values(), synthetic], ignore_index=True))
    release, factor = gower_view(encoder, synthetic)
    nearest, encoded = {}, {"release": release}
    for name, df in records.items():
        encoded[name] = gower_view(encoder, df)[0]
        d, idx = kneighbors_between(encoded[name], release, k=n, metric="minkowski", p=1.0)
        nearest[name] = (d / factor, idx)
    return nearest, encoded, factor


def _check_closeness_args(k, resolution, n_release: int) -> None:
    check_integer("k", k, minimum=1)
    check_number("resolution", resolution, above=0, below=1)
    if n_release < k + 1:
        raise VrlibError(f"the release has {n_release} records; the closeness score needs at least {k + 1}")


def _closeness_frame(d, k, eps, index, nbr=None) -> pd.DataFrame:
    """The closeness from the sorted distances ``d`` to the released records (``nbr``: a neighbourhood given)."""
    d1 = d[:, 0]
    nbr = d[:, 1 : k + 1].mean(axis=1) if nbr is None else nbr
    return pd.DataFrame(
        {"d_release": d1, "d_neighbourhood": nbr, "closeness": np.log((nbr + eps) / (d1 + eps))}, index=index
    )


def _value_groups(release: EncodedTable) -> np.ndarray:
    """Per released record, the id of its value in the view: verbatim repeats share one."""
    return np.unique(np.hstack([release.onehot, release.continuous]), axis=0, return_inverse=True)[1].ravel()


def _nearest_repeats(release: EncodedTable, dist, idx) -> np.ndarray:
    """Per query record, how many released records repeat its nearest one verbatim (1 when none does).

    Where several released values are at ``d_1`` (among the searched ones), the most repeated
    counts, so that the count does not depend on the search's order of ties.
    """
    group = _value_groups(release)
    size = np.bincount(group)[group[idx]]
    return np.where(dist <= dist[:, :1] + TIE, size, 1).max(axis=1)


def _neighbourhood(dist, k, query, release, d_match, repeats, factor) -> np.ndarray:
    """``d_nbr``: the mean distance to the 2nd to ``(k+1)``-th released records, the match's repeats counted once.

    Parameters
    ----------
    dist : array (len(query), >= k + 1)
        Sorted distances (Gower units) of the view's search.
    k : int
    query, release : EncodedTable
        The records scored and the release, in the view.
    d_match, repeats : arrays, one per query record
        The distance to its match (``d_1``) and how many released records repeat the match
        verbatim (the match included).
    factor : float
        Of :func:`gower_view`.

    Notes
    -----
    A match released ``r`` times would otherwise fill ``r - 1`` neighbourhood places at
    ``d_1``, so that a record copied more often scored lower (closeness 0 from ``k + 1``
    copies).  Only the records whose match repeats are searched again, past those repeats.
    """
    nbr = dist[:, 1 : k + 1].mean(axis=1)
    again = np.flatnonzero(repeats > 1)
    if len(again):
        nbr[again] = _neighbourhood_past_repeats(query, release, again, d_match[again], repeats[again] - 1, k, factor)
    return nbr


def _neighbourhood_past_repeats(query: EncodedTable, release: EncodedTable, rows, d_match, drop, k, factor):
    """``d_nbr`` of ``query``'s records ``rows`` with ``drop`` of the verbatim repeats of each one's match left out.

    Released records at the match's distance are exchangeable here (only distances enter the
    mean), so any ``drop`` of them are left out.  The records are searched in batches of
    similar ``drop`` (within a factor of two), each for ``k + 1 + max(drop)`` neighbours, so that
    one much repeated value does not widen every record's search.
    """
    out = np.empty(len(rows))
    batch = np.floor(np.log2(drop)).astype(int)
    for b in np.unique(batch):
        sel = np.flatnonzero(batch == b)
        sub = EncodedTable(query.onehot[rows[sel]], query.continuous[rows[sel]], query.n_categorical)
        n = int(min(len(release), k + 1 + drop[sel].max()))
        dist = kneighbors_between(sub, release, k=n, metric="minkowski", p=1.0)[0] / factor
        for i, row, d1, m in zip(sel, dist, d_match[sel], drop[sel]):
            rest = np.delete(row, np.flatnonzero(np.abs(row - d1) <= TIE)[:m])[1 : k + 1]
            out[i] = rest.mean() if len(rest) else row[1 : k + 1].mean()  # a release of the repeats alone
    return out


def closeness_scores(
    records: dict[str, pd.DataFrame],
    synthetic: pd.DataFrame,
    schema: Schema,
    k: int = 5,
    resolution: float = 0.01,
) -> dict[str, pd.DataFrame]:
    """``d_1``, ``d_nbr`` and ``closeness`` (see the module's docstring) of each table of ``records``.

    Parameters
    ----------
    records : mapping name -> DataFrame
        E.g. ``{"train": train, "holdout": holdout}``: all scored alike.
    synthetic : DataFrame
        The release (at least ``k + 1`` records).
    schema : Schema
    k : int
        Released neighbours beyond the nearest that make the neighbourhood.
    resolution : float
        Changes smaller than this share of one column's range count as copies.

    Returns
    -------
    dict name -> DataFrame with columns ``d_release``, ``d_neighbourhood``, ``closeness``
        Distances in Gower units (0 = equal, 1 = every column as different as it can be).
    """
    _check_closeness_args(k, resolution, len(synthetic))
    nearest, encoded, factor = _release_neighbours(records, synthetic, schema, k + 1)
    eps = resolution / len(schema.columns)
    return {
        name: _closeness_frame(
            nearest[name][0], k, eps, df.index, _plain_neighbourhood(nearest, encoded, factor, name, k)
        )
        for name, df in records.items()
    }


def _plain_neighbourhood(nearest, encoded, factor, name, k) -> np.ndarray:
    """``d_nbr`` of table ``name`` scored on every released record, its nearest one's verbatim repeats counted once."""
    dist, idx = nearest[name]
    repeats = _nearest_repeats(encoded["release"], dist[:, : k + 1], idx[:, : k + 1])
    return _neighbourhood(dist, k, encoded[name], encoded["release"], dist[:, 0], repeats, factor)


def tolerant_distances(query, release, candidates, n_columns: int, block: int = 500) -> np.ndarray:
    """Gower distances with one changed category free, from each query record to its candidate released records.

    ``d - 1 / F`` when at least one category differs, ``d`` otherwise (``F`` = ``n_columns``): a
    released record equal to the query but for one category is at 0 (as near as an exact
    copy), one that also differs in a second category at ``1 / F`` or more.

    Parameters
    ----------
    query, release : EncodedTable
        Of :func:`gower_view` with one encoder.
    candidates : ndarray of int, shape (len(query), c)
        Positions in ``release``; a position repeated in a row counts once (the later copies
        are at ``inf``).
    n_columns : int
        ``F``, the columns of the Gower distance.

    Returns
    -------
    ndarray, shape (len(query), c)
        In Gower units, in the order of ``candidates``.
    """
    order = np.argsort(candidates, axis=1, kind="stable")
    cand = np.take_along_axis(candidates, order, axis=1)
    repeat = np.zeros(cand.shape, bool)
    repeat[:, 1:] = cand[:, 1:] == cand[:, :-1]
    f_cat, f_cont = query.n_categorical, query.n_continuous
    factor = float(2 * f_cat if f_cat else f_cont)
    w_cat, w_cont = f_cat / n_columns, f_cont / n_columns  # eq. 6's block weights, as kneighbors_between has them
    out = np.empty(cand.shape)
    for s in range(0, len(cand), block):
        c = cand[s : s + block]
        oh = np.abs(query.onehot[s : s + block, None, :] - release.onehot[c]).sum(axis=2)
        co = np.abs(query.continuous[s : s + block, None, :] - release.continuous[c]).sum(axis=2)
        d = (w_cat * oh + w_cont * co) / factor - (oh > 0.5) / n_columns
        out[s : s + block] = np.where(repeat[s : s + block], np.inf, np.maximum(d, 0.0))
    back = np.empty_like(out)
    np.put_along_axis(back, order, out, axis=1)
    return back


class NullTail:
    """p-values of scores against known non-members; beyond the largest, a generalised Pareto tail fitted to the top ``tail_share``.

    Parameters
    ----------
    tail_share : float
        Share of the null scores whose exceedances are modelled.
    min_tail : int
        At least this many exceedances (fewer null records: no tail, empirical only).
    extrapolate : bool
        Use the tail model; False gives the empirical p-values alone.
    confidence : float
        The tail's share and scale are taken at their one-sided upper bounds of this level
        (conservative: larger p-values).

    Attributes
    ----------
    n_ : int
        Null scores.
    threshold_ : float
        Scores above it are in the tail.
    rate_ : float
        Upper bound of the share of null scores above the threshold.
    shape_, scale_ : float
        Of the generalised Pareto distribution of ``score - threshold`` (shape >= 0; scale
        at its upper bound).
    """

    def __init__(
        self, tail_share: float = 0.05, min_tail: int = 50, extrapolate: bool = True, confidence: float = 0.95
    ):
        self.tail_share = tail_share
        self.min_tail = min_tail
        self.extrapolate = extrapolate
        self.confidence = confidence

    def fit(self, null) -> "NullTail":
        """Learn the null distribution from ``null`` (1-D, finite)."""
        from scipy import stats

        null = np.sort(np.asarray(null, dtype=float))
        if null.ndim != 1 or len(null) < 2 or not np.isfinite(null).all():
            raise VrlibError("the null scores must be at least two finite numbers (the holdout records' scores)")
        check_number("tail_share", self.tail_share, above=0, below=1)
        self.null_ = null
        self.n_ = n = len(null)
        n_tail = min(max(self.min_tail, int(np.ceil(self.tail_share * n))), n // 2)
        self.threshold_ = float(null[n - n_tail - 1])
        exceed = null[null > self.threshold_] - self.threshold_
        t = len(exceed)
        # the tail's share and scale at their one-sided upper bounds (Clopper-Pearson; chi-square for an
        # exponential mean): a tail fitted to a few hundred records must not make p-values too small
        self.rate_ = float(stats.beta.ppf(self.confidence, t + 1, n - t)) if t < n else 1.0
        self.fitted_ = bool(self.extrapolate and t >= self.min_tail and np.ptp(exceed) > 0)
        self.shape_, self.scale_ = 0.0, float(exceed.mean()) if t else 1.0
        if self.fitted_:
            shape, _, scale = stats.genpareto.fit(exceed, floc=0.0)
            if shape > 0:  # heavier than exponential: keep the fit
                self.shape_, self.scale_ = float(shape), float(scale)
            # lighter (bounded) tails are replaced by the exponential of the same mean: never below them
            self.scale_ *= 2.0 * t / float(stats.chi2.ppf(1.0 - self.confidence, 2 * t))
        return self

    def pvalues(self, scores) -> np.ndarray:
        """P(null score >= s) for each ``s``: empirical up to the largest null score, the fitted tail beyond it."""
        scores = np.asarray(scores, dtype=float)
        if np.isnan(scores).any():
            raise VrlibError("scores contain NaN")
        at_least = self.n_ - np.searchsorted(self.null_, scores, side="left")
        p = (1.0 + at_least) / (self.n_ + 1.0)
        if self.fitted_:
            # within the null scores the empirical p-value is exact (conformal); the model only extrapolates
            # beyond the largest of them, where the empirical one would stop at 1 / (n + 1)
            beyond = scores > self.null_[-1]
            z = (scores[beyond] - self.threshold_) / self.scale_
            sf = np.exp(-z) if self.shape_ == 0 else (1.0 + self.shape_ * z) ** (-1.0 / self.shape_)
            p[beyond] = np.minimum(self.p_floor, self.rate_ * sf)
        return np.clip(p, np.finfo(float).tiny, 1.0)

    @property
    def p_floor(self) -> float:
        """The smallest empirical p-value, ``1 / (n + 1)``."""
        return 1.0 / (self.n_ + 1.0)

    def check(self, seed: int = 0, levels=(0.05, 0.01, 0.001), alpha: float = 0.01) -> dict:
        """Fit on one random half of the null scores, test the p-values of the other half (both ways).

        For each level ``t`` with ``t × half >= 1``, the count of the other half's p-values at
        most ``t`` is compared with Binomial(half, t) (one-sided: too many small p-values is
        what would make flags false); and the smallest p-value ``p_min`` of ``h`` records
        with ``1 - (1 - p_min)^h``.  Passed when no test is below ``alpha`` / (number of tests).

        Returns
        -------
        dict
            ``passed``, ``tests`` (rows: ``fit_half``, ``level``, ``observed``, ``expected``,
            ``p``) and ``alpha``.
        """
        from scipy import stats

        order = np.random.default_rng(derive_seed(seed, "audit tail check")).permutation(self.n_)
        halves = np.array_split(self.null_[order], 2)
        rows = []
        for a, (fit_part, test_part) in enumerate(((halves[0], halves[1]), (halves[1], halves[0]))):
            model = NullTail(self.tail_share, self.min_tail, self.extrapolate, self.confidence).fit(fit_part)
            p = model.pvalues(test_part)
            h = len(p)
            for t in levels:
                if t * h >= 1:
                    obs = int((p <= t).sum())
                    rows.append(
                        {
                            "fit_half": a,
                            "level": t,
                            "observed": obs,
                            "expected": t * h,
                            "p": float(stats.binom.sf(obs - 1, h, t)),
                        }
                    )
            p_min = float(p.min())
            rows.append(
                {
                    "fit_half": a,
                    "level": "min",
                    "observed": p_min,
                    "expected": 1.0 / h,
                    "p": -np.expm1(h * np.log1p(-min(p_min, 1.0 - 1e-16))),
                }
            )
        passed = all(r["p"] >= alpha / len(rows) for r in rows)
        return {"passed": bool(passed), "alpha": alpha, "tests": rows}


def _calibrated(null_scores, seed: int, label: str, notes: list):
    """A :class:`NullTail` of ``null_scores``, checked; empirical only (and a sentence in ``notes``) if the check fails."""
    tail = NullTail().fit(null_scores)
    check = tail.check(seed=seed)
    if not check["passed"]:
        tail = NullTail(extrapolate=False).fit(null_scores)
        notes.append(
            f"the tail model of the holdout's {label} failed its check on held-out holdout records, so that "
            f"view's p-values are empirical only (none below {tail.p_floor:.2g})"
        )
    return tail, check


def _tail_info(tail, check) -> dict:
    return {
        "threshold": tail.threshold_,
        "rate": tail.rate_,
        "shape": tail.shape_,
        "scale": tail.scale_,
        "extrapolated": tail.fitted_,
        "check": check,
        "tail": tail,
    }


def distance_views(schema: Schema) -> dict[str, Schema]:
    """The audit's distance views: all columns and, with both kinds, the continuous columns alone."""
    views = {"all": schema}
    if schema.categorical and schema.continuous:
        views["continuous"] = Schema([], list(schema.continuous))
    return views


def copy_evidence(
    train: pd.DataFrame,
    holdout: pd.DataFrame,
    synthetic: pd.DataFrame,
    schema: Schema,
    k: int = 5,
    resolution: float = 0.0001,
    seed: int = 0,
    near_matches: bool = True,
    tolerant: bool = False,
    assign: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Closeness of every training and holdout record in each view, and the training records' p-values.

    Views: ``all`` (every column) and, when the table has both kinds, ``continuous`` (the
    continuous columns alone: a record copied with one category changed is an exact copy
    there).  With ``near_matches``, a third view, ``near_match`` (released records agreeing
    on all columns but at most one, against their rate among holdout records:
    :mod:`vrlib.audit.matches`; a record copied with one category changed is matched there
    however many columns the table has), gives ``p_rank``, the Bonferroni minimum over all
    views, which orders the records beyond the flagged ones; the flag stays on ``p_value``
    (the distance views), since the extra view's Bonferroni factor cost more flags of
    copies than it added on the validation benchmark (``docs/audit.md``).
    Each view's p-values come from its own :class:`NullTail`, fitted on every
    holdout record and checked (:meth:`NullTail.check`; empirical only if the check
    fails); a record's p-value is the Bonferroni minimum over the views,
    ``min(1, V min_v p_v)``, valid whatever their dependence.

    With ``tolerant``, a ``tolerant`` view joins the distance views: Gower's distance with
    one changed category free (:func:`tolerant_distances`; a copy with one category changed
    is exact there, a released record that differs in two categories is not), its nearest
    released records sought among the :data:`TOLERANT_CANDIDATES` nearest in each distance
    view (the same searches, made for that many neighbours instead of ``k + 1``; with no
    continuous view, twice as many in the ``all`` view).  The flag's p-value is then that of
    one statistic, ``max(closeness, closeness_continuous, closeness_tolerant)`` (view
    ``combined``), calibrated on the holdout as each view is, with no Bonferroni factor;
    ``p_rank`` is the Bonferroni minimum of it and the near-match view.

    With ``assign``, each distance view's ``d_1`` is the distance to the nearest released
    record *assigned* to the record: each released record goes to its nearest record among
    the training and holdout records pooled, one tied with several of them to none
    (:mod:`vrlib.audit.assignment`; a record with none assigned gets one closeness below
    every other), so that a copy of a training record no longer lifts the holdout scores
    of that record's near-twins (self-masking).  The neighbourhood comes from the view's
    own search as without it (``k + 1`` neighbours; the records whose match repeats verbatim
    are searched again past its repeats, with or without ``assign``); one search is added per view,
    the release against the pooled records for two neighbours.  Tails, Bonferroni minimum
    and the near-match view are as without it.  Not combined with ``tolerant``.  Off here by
    default; :func:`vrlib.audit.audit` turns it on unless ``tolerant``.

    Returns
    -------
    train_table, holdout_table : DataFrame
        ``d_release``, ``d_neighbourhood``, ``closeness`` (of the ``all`` view), then
        ``closeness_<view>`` for the other views, ``p_value`` and ``effect`` (the closeness of
        the view that gave the smallest p-value, or the combined statistic with ``tolerant``,
        which breaks ties of ``p_value``); with
        ``near_matches``, also ``release_matches``, ``reference_matches``, ``match_score``,
        ``p_near_match`` (that view's p-value) and ``p_rank``; with ``assign``, also
        ``d_assigned`` and ``n_assigned`` (of the ``all`` view; ``d_assigned`` is ``inf`` where
        none is assigned) and ``closeness`` is the assigned one.
    info : dict
        Per view: the tail's ``threshold``, ``rate``, ``shape``, ``scale``, ``extrapolated``
        and ``check``; and ``warnings`` (sentences for views whose tail failed its check).
    """
    _check_closeness_args(k, resolution, len(synthetic))
    if tolerant and assign:
        raise VrlibError("the tolerant view and the assignment are separate options: choose one of them")
    views = distance_views(schema)
    tables = {"train": train, "holdout": holdout}
    out = {name: pd.DataFrame(index=df.index) for name, df in tables.items()}
    p_views, effects, info, notes = {}, {}, {"views": {}}, []
    tolerant = bool(tolerant and schema.categorical)  # without categories it is the all-columns view
    n_search = k + 1
    if tolerant:
        per_view = TOLERANT_CANDIDATES * (1 if len(views) > 1 else 2)
        n_search = min(len(synthetic), max(k + 1, per_view))
    candidates, encoded, scores = {}, None, {}
    for view, sub in views.items():
        cols = list(sub.columns)
        nearest, enc, factor = _release_neighbours(
            {n: df[cols] for n, df in tables.items()}, synthetic[cols], sub, n_search
        )
        if view == "all":
            encoded = enc
        eps = resolution / len(cols)
        if assign:  # the view's searches give the neighbourhood; only the release-to-pool search is added
            from vrlib.audit.assignment import assigned_frames, floor_unassigned

            scores[view] = assigned_frames(nearest, enc, factor, tables, k, eps)
            floored = floor_unassigned(scores[view]["train"]["closeness"], scores[view]["holdout"]["closeness"])
            for n, c in zip(tables, floored):
                scores[view][n]["closeness"] = c
        else:
            scores[view] = {
                n: _closeness_frame(nearest[n][0], k, eps, df.index, _plain_neighbourhood(nearest, enc, factor, n, k))
                for n, df in tables.items()
            }
        for n in tables:
            candidates.setdefault(n, []).append(nearest[n][1])
    if tolerant:
        eps = resolution / len(schema.columns)
        scores["tolerant"] = {}
        for n, df in tables.items():
            d = tolerant_distances(encoded[n], encoded["release"], np.hstack(candidates[n]), len(schema.columns))
            d.sort(axis=1)
            scores["tolerant"][n] = _closeness_frame(d, k, eps, df.index)
    if near_matches:
        scores["near_match"] = match_scores(tables, "holdout", synthetic, schema, resolution=resolution)
    for view, sc in scores.items():
        if view == "tolerant":  # enters the flag through the combined statistic alone
            for name in tables:
                out[name]["closeness_tolerant"] = sc[name]["closeness"]
                effects[name, view] = sc[name]["closeness"].to_numpy()
            continue
        column = "match_score" if view == "near_match" else "closeness"
        label = f"{column.replace('_', ' ')} scores ({view.replace('_', '-')} view)"
        tail, check = _calibrated(sc["holdout"][column], seed, label, notes)
        for name in tables:
            if view == "all":
                out[name] = sc[name].copy()
            elif view == "near_match":
                for c in ("release_matches", "reference_matches", "match_score"):
                    out[name][c] = sc[name][c]
            else:
                out[name][f"closeness_{view}"] = sc[name]["closeness"]
            p_views[name, view] = tail.pvalues(sc[name][column])
            effects[name, view] = sc[name][column].to_numpy()
        info["views"][view] = _tail_info(tail, check)
        if view in views:  # a distance view of the flag
            info["views"][view]["neighbourhood"] = sc["train"]["d_neighbourhood"].to_numpy()
            info["views"][view]["eps"] = resolution / len(views[view].columns)
    names = list(views)
    if tolerant:
        names = [*names, "tolerant"]
        combined = {n: np.max([effects[n, v] for v in names], axis=0) for n in tables}
        tail, check = _calibrated(combined["holdout"], seed, "largest closeness of the distance views", notes)
        info["views"]["combined"] = {**_tail_info(tail, check), "of": names}
        # an exact copy's score: d_1 = 0 in every view (the tolerant view's neighbourhood is never sparser)
        info["views"]["combined"]["copy_score"] = np.max(
            [
                np.log((info["views"][v]["neighbourhood"] + info["views"][v]["eps"]) / info["views"][v]["eps"])
                for v in views
            ],
            axis=0,
        )
    for name in tables:
        if tolerant:
            p_flag = tail.pvalues(combined[name])
            out[name]["p_value"] = p_flag
            out[name]["effect"] = combined[name]
            n_rank = 2
        else:
            p = np.column_stack([p_views[name, v] for v in names])
            best = p.argmin(axis=1)
            p_flag = p.min(axis=1)
            out[name]["p_value"] = np.minimum(1.0, len(names) * p_flag)
            out[name]["effect"] = np.column_stack([effects[name, v] for v in names])[np.arange(len(p)), best]
            n_rank = len(names) + 1
        if near_matches:
            # every view, near matches included: a valid p-value too, which orders the records not flagged
            p_near = p_views[name, "near_match"]
            out[name]["p_near_match"] = p_near
            out[name]["p_rank"] = np.minimum(1.0, n_rank * np.minimum(p_flag, p_near))
    info["warnings"] = notes
    info["flag"] = "combined" if tolerant else "bonferroni"
    info["assign"] = bool(assign)
    return out["train"], out["holdout"], info


def copy_resolution(info: dict, n_records: int, q: float) -> dict:
    """How small the copy evidence can get, and how many exact copies Benjamini–Hochberg then flags.

    Parameters
    ----------
    info : dict
        Of :func:`copy_evidence`.
    n_records : int
        Records tested.
    q : float
        False-discovery rate.

    Returns
    -------
    dict
        ``p_copy_median`` / ``p_copy_isolated``: the p-value of an exact copy (``d_1 = 0`` in
        every view) of a training record with the median / the largest neighbourhood
        distance; ``copies_to_flag_median`` / ``..._isolated``: the fewest such copies flagged
        together (``ceil(p n / q)``, None when more than ``n``); ``p_floor``: the empirical floor
        ``1 / (n_holdout + 1)``; ``bh_single``: the level one record alone must reach,
        ``q / n``; ``note``: a sentence.
    """
    # the flag's p-value combines the distance views alone (the near-match view only orders the rest)
    views = {v: d for v, d in info["views"].items() if "neighbourhood" in d}
    n_views = len(views)
    combined = info["views"].get("combined") if info.get("flag") == "combined" else None
    used = [combined] if combined is not None else views.values()
    out = {"bh_single": q / n_records, "extrapolated": any(v["extrapolated"] for v in used)}
    for name in ("median", "isolated"):
        if combined is not None:  # one statistic: a copy's largest closeness over the views
            s = combined["copy_score"]
            s = float(np.median(s)) if name == "median" else float(s.max())
            p = float(combined["tail"].pvalues([s])[0])
        else:
            ps = []
            for v in views.values():
                d = float(np.median(v["neighbourhood"])) if name == "median" else float(v["neighbourhood"].max())
                ps.append(float(v["tail"].pvalues([np.log((d + v["eps"]) / v["eps"])])[0]))
            p = min(1.0, n_views * min(ps))
        need = int(np.ceil(p * n_records / q - 1e-12))
        out[f"p_copy_{name}"] = p
        out[f"copies_to_flag_{name}"] = max(1, need) if need <= n_records else None
    out["p_floor"] = next(iter(views.values()))["tail"].p_floor
    one = out["copies_to_flag_median"]
    if one is None:
        reach = "no exact copy of a typical record can be flagged"
    elif one == 1:
        reach = "a single exact copy of a typical training record is flagged"
    else:
        reach = f"exact copies of typical training records are flagged once {one:,} of them are released"
    out["note"] = (
        f"The smallest p-value an exact copy of a typical training record gets is {out['p_copy_median']:.2g} "
        f"({out['p_copy_isolated']:.2g} for the most isolated one), against {q / n_records:.2g} needed for one "
        f"record alone at a {q:.0%} false-discovery rate over {n_records:,} records: {reach}."
        + ("" if out["extrapolated"] else f" No p-value is below {out['p_floor']:.2g} (no tail model).")
    )
    return out
