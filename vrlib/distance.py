"""Distances between records (achilles eqs. 5 and 6) and a blockwise k-nearest-neighbour search.

Both distances split a record into its one-hot block ``h`` and its scaled continuous
block ``c`` and weigh the two parts by ``F_cat / F`` and ``F_cont / F``.

* Generalised cosine (eq. 5): ``d = 1 - (F_cat/F) cos(h_i, h_j) - (F_cont/F) cos(c_i, c_j)``.
  A zero continuous vector has no cosine; its similarity is 1 with another zero
  vector and 0 otherwise (SPEC §2).  Since every one-hot block has exactly one 1 per
  attribute, ``cos(h_i, h_j)`` is the fraction of matching attributes, and the whole
  similarity is one inner product of suitably weighted rows: one matrix product per
  block of rows.
* Minkowski (eq. 6): ``d = (F_cat/F) ||h_i - h_j||_p + (F_cont/F) ||c_i - c_j||_p``.
  For one-hot blocks ``||h_i - h_j||_p^p = 2 (F_cat - matches)``, again a matrix product.

:func:`kneighbors` never holds the n×n matrix: it walks over blocks of query rows.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

from vrlib.encoding import EncodedTable
from vrlib.errors import VrlibError
from vrlib.params import check_integer

METRICS = ("cosine", "minkowski")


def _weights(table: EncodedTable) -> tuple[float, float]:
    f_cat, f_cont = table.n_categorical, table.n_continuous
    f = f_cat + f_cont
    if f == 0:
        raise VrlibError("the table has no columns")
    return f_cat / f, f_cont / f


def _cosine_factors(table: EncodedTable, dtype) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``u`` and ``v`` such that the cosine similarity of records i, j is ``u_i . v_j``.

    The categorical part is ``h / F_cat`` against ``h`` (weighted by ``F_cat/F``).  The
    continuous part is the unit vector ``c / |c|`` weighted by ``F_cont/F``; a zero vector
    gets an extra coordinate that is 1 only for zero vectors, so two zero vectors have
    similarity 1 and a zero vector has 0 with any other.
    """
    w_cat, w_cont = _weights(table)
    blocks_u, blocks_v = [], []
    if table.n_categorical:
        blocks_u.append(table.onehot * (w_cat / table.n_categorical))
        blocks_v.append(table.onehot)
    if table.n_continuous:
        norms = np.linalg.norm(table.continuous, axis=1, keepdims=True)
        zero = norms == 0
        unit = np.divide(table.continuous, norms, out=np.zeros_like(table.continuous), where=~zero)
        block = np.hstack([unit, zero.astype(unit.dtype)]) * np.sqrt(w_cont)
        blocks_u.append(block)
        blocks_v.append(block)
    u = np.hstack(blocks_u).astype(dtype, copy=False)
    v = np.hstack(blocks_v).astype(dtype, copy=False)
    return np.ascontiguousarray(u), np.ascontiguousarray(v)


def _check_pair(a: EncodedTable, b: EncodedTable) -> None:
    if a.onehot.shape[1] != b.onehot.shape[1] or a.n_continuous != b.n_continuous or a.n_categorical != b.n_categorical:
        raise VrlibError("the two tables are encoded differently; encode both with the same fitted TableEncoder")


class _Pairwise:
    """Distances between rows of ``a`` and rows of ``b`` for one metric, by block or by pair."""

    def __init__(self, a: EncodedTable, b: EncodedTable, metric: str, p: float | None, dtype):
        _check_pair(a, b)
        if metric not in METRICS:
            raise VrlibError(f"unknown metric {metric!r}; choose one of {METRICS}")
        self.metric = metric
        if metric == "cosine":
            self.ua, self.vb = _cosine_factors(a, dtype)
            if b is not a:
                _, self.vb = _cosine_factors(b, dtype)
            return
        if p is None or not p >= 1:
            raise VrlibError(f"Minkowski distance needs p >= 1 (got p={p}); p < 1 is not a metric")
        self.p = float(p)
        self.w_cat, self.w_cont = _weights(a)
        self.f_cat = a.n_categorical
        self.ha = a.onehot.astype(dtype, copy=False)
        self.hb = b.onehot.astype(dtype, copy=False)
        self.ca, self.cb = a.continuous.astype(dtype, copy=False), b.continuous.astype(dtype, copy=False)

    def block_rows(self, rows: np.ndarray) -> tuple[np.ndarray, bool]:
        """A matrix ranking ``a[rows]`` against all of ``b``, and whether larger is nearer.

        For cosine this is the similarity (``1 - distance``): taking the largest
        entries saves a pass over the block.
        """
        if self.metric == "cosine":
            return self.ua[rows] @ self.vb.T, True
        d = 0.0
        if self.f_cat:
            mismatches = self.f_cat - self.ha[rows] @ self.hb.T
            np.maximum(mismatches, 0.0, out=mismatches)
            d = self.w_cat * _onehot_norm(mismatches, self.p)
        if self.ca.shape[1]:
            d = d + self.w_cont * _minkowski_block(self.ca[rows], self.cb, self.p)
        return d, False

    def pairs(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Distances between ``a[rows]`` and ``b[cols]`` (broadcast index arrays)."""
        if self.metric == "cosine":
            d = 1.0 - np.einsum("...j,...j->...", self.ua[rows], self.vb[cols])
        else:
            d = 0.0
            if self.f_cat:
                matches = np.einsum("...j,...j->...", self.ha[rows], self.hb[cols])
                d = self.w_cat * _onehot_norm(np.maximum(self.f_cat - matches, 0.0), self.p)
            if self.ca.shape[1]:
                diff = np.abs(self.ca[rows] - self.cb[cols])
                if np.isinf(self.p):
                    d = d + self.w_cont * diff.max(axis=-1)
                else:
                    d = d + self.w_cont * (diff**self.p).sum(axis=-1) ** (1.0 / self.p)
        d = np.asarray(d, dtype=np.float64)
        # Rounding leaves identical records at +-1e-16; a duplicate is at distance exactly 0.
        d[np.abs(d) < 1e-12] = 0.0
        return d


def _onehot_norm(mismatches: np.ndarray, p: float) -> np.ndarray:
    """||h_i - h_j||_p of one-hot blocks that differ on ``mismatches`` attributes: (2m)^(1/p),
    and for p = inf (Chebyshev) 1 when they differ at all (not m^0 = 1 for m = 0)."""
    if np.isinf(p):
        return (mismatches > 0.5).astype(mismatches.dtype)
    return (2.0 * mismatches) ** (1.0 / p)


def _minkowski_block(a: np.ndarray, b: np.ndarray, p: float) -> np.ndarray:
    """||a_i - b_j||_p for all pairs: torch's multithreaded kernel for p = 1 (about 2.5x
    faster than scipy's here), scipy's cdist otherwise (faster than torch for p != 1)."""
    if p == 1:
        import torch

        return torch.cdist(torch.from_numpy(a), torch.from_numpy(b), p=1).numpy()
    if np.isinf(p):
        return cdist(a, b, metric="chebyshev")
    return cdist(a, b, metric="minkowski", p=p)


def pairwise_distances(
    a: EncodedTable, b: EncodedTable | None = None, metric: str = "cosine", p: float | None = None
) -> np.ndarray:
    """Full distance matrix between the records of ``a`` and those of ``b`` (default: ``a``).

    Meant for small tables; use :func:`kneighbors` for large ones.

    Parameters
    ----------
    a, b : EncodedTable
        Encoded with the same fitted :class:`~vrlib.encoding.TableEncoder`.
    metric : {"cosine", "minkowski"}
        Eq. 5 or eq. 6.
    p : float
        Order of the Minkowski distance (p >= 1; ``inf`` is the Chebyshev distance); ignored for cosine.
    """
    b = a if b is None else b
    pairwise = _Pairwise(a, b, metric, p, np.float64)
    return pairwise.pairs(np.arange(len(a))[:, None], np.arange(len(b))[None, :])


def kneighbors(
    table: EncodedTable,
    k: int,
    metric: str = "cosine",
    p: float | None = None,
    include_self: bool = False,
    block_rows: int | None = None,
    margin: int = 8,
    prune: bool = True,
    bounded: bool | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Distances to, and indices of, every record's ``k`` nearest records, block by block.

    Three shortcuts keep this fast on tens of thousands of records:

    * **Same-profile pruning.** A record that differs from x on m >= 1 categorical
      attributes is at least ``w_cat m / F_cat`` (cosine) or ``w_cat (2m)^(1/p)``
      (Minkowski) away, whatever its continuous values.  So when x's k nearest records
      *with the same categorical values* are all closer than that bound for m = 1,
      they are its k nearest overall, and x needs no search against the whole table.
    * **Float32 candidates, float64 answer.** The remaining records are searched in
      float32 (fast matrix products, multithreaded top-k) keeping ``margin`` spare
      neighbours, whose distances are then recomputed exactly in float64; the result
      is the exact float64 answer unless float32 rounding moves a neighbour more than
      ``margin`` places.
    * **Euclidean bounds for Minkowski p.** ``|x|_p`` of an n-vector lies between
      ``|x|_2`` and ``n^(1/p - 1/2) |x|_2``, so one fast Euclidean distance gives every
      pair a lower and an upper bound on its distance.  The k-th smallest upper bound
      caps the k-th neighbour's distance; only the records whose lower bound is under
      that cap (about 10 to 15 per record on Adult for p = 3, 4) get their exact
      distance, which spares the slow ``pow`` of every other pair.  Exact, whatever
      the rounding.

    Parameters
    ----------
    table : EncodedTable
    k : int
        Number of neighbours, 1 <= k < n (or k <= n with ``include_self``).
    metric, p
        As in :func:`pairwise_distances`.
    include_self : bool
        Count each record's own zero distance among its neighbours (the authors'
        code); by default a record's neighbours are the *other* records, duplicates
        of it included at distance 0.
    block_rows : int, optional
        Rows per block; by default about 32 MB of float32 per block.
    margin : int
        Spare candidates per record for the exact float64 re-ranking.
    prune : bool
        Use same-profile pruning (same answer, faster; off only to measure it).
    bounded : bool, optional
        Search by Euclidean bounds (exact, see above); by default for the Minkowski
        orders whose norm has no fast kernel (p other than 1, 2 and inf).  Off (or on)
        only to measure it.

    Returns
    -------
    distances : ndarray of shape (n, k)
        Row i holds the k smallest distances from record i, increasing.
    indices : ndarray of shape (n, k)
        The positions of those neighbours.
    """
    n = len(table)
    limit = n if include_self else n - 1
    check_integer("k", k, minimum=1, want="a positive integer")
    if k > limit:
        raise VrlibError(
            f"k={k} but each record has only {limit} {'records' if include_self else 'other records'}; "
            f"choose k <= {limit}"
        )
    exact = _Pairwise(table, table, metric, p, np.float64)
    distances = np.full((n, k), np.inf)
    indices = np.full((n, k), -1, dtype=np.int64)
    todo = np.arange(n)
    if prune and table.n_categorical:
        done = _same_profile_neighbours(
            table, exact, k, include_self, _one_mismatch_bound(table, metric, p), distances, indices
        )
        todo = np.flatnonzero(~done)
    if bounded is None:
        bounded = metric == "minkowski" and float(p) not in (1.0, 2.0, np.inf)
    if bounded and metric != "minkowski":
        raise VrlibError("the Euclidean bounds are for the Minkowski distance; use bounded=None with cosine")
    if len(todo) and bounded:
        todo = _search_bounded(table, exact, todo, k, include_self, block_rows, distances, indices)
    if len(todo):
        fast = _Pairwise(table, table, metric, p, np.float32)
        _search(fast, exact, n, todo, k, min(k + margin, limit), include_self, block_rows, distances, indices)
    return distances, indices


def _one_mismatch_bound(table: EncodedTable, metric: str, p: float | None) -> float:
    """Smallest possible distance between records that differ on one categorical attribute or more."""
    w_cat, _ = _weights(table)
    if metric == "cosine":
        return w_cat / table.n_categorical
    return w_cat * 2.0 ** (1.0 / float(p))


def _same_profile_neighbours(table, exact, k, include_self, bound, distances, indices) -> np.ndarray:
    """Fill the rows whose k nearest same-profile records beat ``bound``; return which rows are done."""
    n = len(table)
    packed = np.ascontiguousarray(table.onehot.astype(np.uint8)).view(np.dtype((np.void, table.onehot.shape[1])))
    _, group, sizes = np.unique(packed.ravel(), return_inverse=True, return_counts=True)
    group = group.ravel()
    need = k if include_self else k + 1  # members a group needs to hold k neighbours of each
    done = np.zeros(n, dtype=bool)
    order = np.argsort(group, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)])
    for g in np.flatnonzero(sizes >= need):
        members = order[starts[g] : starts[g + 1]]
        d = exact.pairs(members[:, None], members[None, :])
        np.fill_diagonal(d, 0.0 if include_self else np.inf)
        _keep_within(d, members, members, k, bound, distances, indices, done)
    return done


def _keep_within(d, rows, cols, k, bound, distances, indices, done) -> None:
    """The k nearest ``cols`` of each of ``rows`` (distances ``d``), written where the k-th is below ``bound``."""
    part = np.argsort(d, axis=1, kind="stable")[:, :k]
    dk = np.take_along_axis(d, part, axis=1)
    ok = dk[:, -1] < bound
    distances[rows[ok]] = dk[ok]
    indices[rows[ok]] = cols[part[ok]]
    done[rows[ok]] = True


def _default_block_rows(n_rows: int, n: int) -> int:
    """Query rows per block: about 8 M entries of the block-by-table matrix."""
    return max(1, min(n_rows, 8_000_000 // max(n, 1)))


def _search(fast, exact, n, rows, k, m, include_self, block_rows, distances, indices) -> None:
    """Exact k nearest neighbours of ``rows`` against the whole table of ``n`` records, block by block."""
    import torch  # top-k in torch is multithreaded and ~15x faster than np.partition here

    block_rows = _default_block_rows(len(rows), n) if block_rows is None else block_rows
    for start in range(0, len(rows), block_rows):
        block = rows[start : start + block_rows]
        scores, larger_is_nearer = fast.block_rows(block)
        # A record's own entry (not its duplicates') is forced in, or out.
        nearest = np.inf if larger_is_nearer else -np.inf
        scores[np.arange(len(block)), block] = nearest if include_self else -nearest
        cand = torch.topk(torch.from_numpy(scores), m, dim=1, largest=larger_is_nearer).indices.numpy()
        d = exact.pairs(block[:, None], cand)
        if include_self:
            d[cand == block[:, None]] = 0.0
        order = np.argsort(d, axis=1, kind="stable")[:, :k]
        distances[block] = np.take_along_axis(d, order, axis=1)
        indices[block] = np.take_along_axis(cand, order, axis=1)


_MAX_CANDIDATES = 256  # per record, on average over a block: beyond this the bounds prune too little
_PAIR_FLOATS = 2**22  # values gathered per chunk of candidate pairs (32 MB of float64)


def _search_bounded(table, exact, rows, k, include_self, block_rows, distances, indices) -> np.ndarray:
    """Exact Minkowski k nearest neighbours of ``rows``: exact distances only where Euclidean bounds allow.

    For the continuous block, ``lo |c|_2 <= |c|_p <= hi |c|_2`` with (lo, hi) =
    (n^(1/p-1/2), 1) for p >= 2 and (1, n^(1/p-1/2)) below; the one-hot term is
    known exactly from the number of mismatches.  A record's k-th neighbour is no
    farther than its k-th smallest upper bound, so every record whose lower bound
    exceeds that cap is left out before any exact distance is computed.

    Returns the rows left to the float32 search: those of blocks where the bounds
    leave more than ``_MAX_CANDIDATES`` records per row on average (many continuous
    columns make the bounds loose, and exact distances to so many would cost more).
    """
    import torch

    n, p = len(table), exact.p
    f_cat, n_cont = table.n_categorical, table.n_continuous
    scale = n_cont ** (1.0 / p - 0.5) if n_cont else 1.0
    lo, hi = (scale, 1.0) if p >= 2 else (1.0, scale)
    # The one-hot term of every possible number of mismatches, in float32 as the bounds are.
    onehot_term = (exact.w_cat * _onehot_norm(np.arange(f_cat + 1, dtype=np.float64), p)).astype(np.float32)
    h = table.onehot.astype(np.float32)
    block_rows = _default_block_rows(len(rows), n) if block_rows is None else block_rows
    step = max(1, _PAIR_FLOATS // max(1, h.shape[1] + n_cont))  # exact distances a chunk of pairs at a time
    left = []
    for start in range(0, len(rows), block_rows):
        block = rows[start : start + block_rows]
        mismatches = np.rint(f_cat - h[block] @ h.T).astype(np.int16)  # small integers, exact in float32
        cat = onehot_term[mismatches]
        if n_cont:
            euclid = cdist(table.continuous[block], table.continuous).astype(np.float32)
            upper = cat + np.float32(exact.w_cont * hi) * euclid
            lower = cat + np.float32(exact.w_cont * lo) * euclid
        else:
            upper = lower = cat
        here = np.arange(len(block))
        if not include_self:
            upper[here, block] = np.inf
            lower[here, block] = np.inf
        cap = torch.topk(torch.from_numpy(upper), k, dim=1, largest=False).values[:, -1].numpy()
        # Slack for float32 rounding of the bounds (relative 1e-7): no true neighbour is lost.
        keep = lower <= cap[:, None] * np.float32(1 + 1e-5) + np.float32(1e-6)
        if np.count_nonzero(keep) > _MAX_CANDIDATES * len(block):
            left.append(block)
            continue
        pair_row, cand = np.nonzero(keep)
        d = np.empty(len(pair_row))
        for s in range(0, len(pair_row), step):
            d[s : s + step] = exact.pairs(block[pair_row[s : s + step]], cand[s : s + step])
        if include_self:
            d[cand == block[pair_row]] = 0.0
        order = np.lexsort((d, pair_row))  # by row, then distance (np.lexsort is stable)
        first = np.searchsorted(pair_row[order], here)
        take = order[first[:, None] + np.arange(k)]
        distances[block] = d[take]
        indices[block] = cand[take]
    return np.concatenate(left) if left else rows[:0]


def kneighbors_between(
    query: EncodedTable,
    reference: EncodedTable,
    k: int = 1,
    metric: str = "cosine",
    p: float | None = None,
    block_rows: int | None = None,
    margin: int = 8,
    prune: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Distances to, and indices of, the ``k`` records of ``reference`` nearest to each record of ``query``.

    The two tables are distinct (e.g. training records against a synthetic release),
    so no record is left out: a copy of a query record in ``reference`` is at
    distance 0.  Candidates are searched in float32, block by block, keeping
    ``margin`` spare neighbours whose distances are recomputed exactly in float64 (as
    :func:`kneighbors` does).  For the Euclidean Minkowski distance (p = 2) the
    float32 candidates come from matrix products.

    Parameters
    ----------
    query, reference : EncodedTable
        Encoded with the same fitted :class:`~vrlib.encoding.TableEncoder`.
    k : int
        Neighbours per query record, ``1 <= k <= len(reference)``.
    metric, p
        As in :func:`pairwise_distances`.
    block_rows : int, optional
        Query rows per block; by default about 8 M entries per block.
    margin : int
        Spare candidates per record for the exact float64 re-ranking.
    prune : bool
        Use same-profile pruning (same answer, faster; off only to measure it).

    Returns
    -------
    distances : ndarray of shape (len(query), k)
        Increasing along each row.
    indices : ndarray of shape (len(query), k)
        Positions in ``reference``.
    """
    import torch

    n = len(reference)
    check_integer("k", k, minimum=1, maximum=n, want=f"an integer between 1 and the {n} reference records")
    exact = _Pairwise(query, reference, metric, p, np.float64)
    fast = _Pairwise(query, reference, metric, p, np.float32)
    euclid = metric == "minkowski" and float(p) == 2.0
    if euclid:
        sq_q = np.einsum("ij,ij->i", fast.ca, fast.ca).astype(np.float32)
        sq_r = np.einsum("ij,ij->i", fast.cb, fast.cb).astype(np.float32)
    m = min(k + margin, n)
    distances = np.empty((len(query), k))
    indices = np.empty((len(query), k), dtype=np.int64)
    todo = np.arange(len(query))
    if prune and query.n_categorical:
        done = _same_profile_between(
            query, reference, exact, k, _one_mismatch_bound(query, metric, p), distances, indices
        )
        todo = np.flatnonzero(~done)
    block_rows = _default_block_rows(len(todo), n) if block_rows is None else block_rows
    for start in range(0, len(todo), block_rows):
        rows = todo[start : start + block_rows]
        if euclid:  # in place: a few passes over the block, no temporaries
            d = None
            if fast.f_cat:
                d = fast.ha[rows] @ fast.hb.T  # matches
                np.subtract(np.float32(fast.f_cat), d, out=d)
                np.maximum(d, 0.0, out=d)
                np.sqrt(d, out=d)
                d *= np.float32(fast.w_cat * np.sqrt(2.0))
            if fast.ca.shape[1]:
                sq = fast.ca[rows] @ (-2.0 * fast.cb.T)
                sq += sq_q[rows, None]
                sq += sq_r[None, :]
                np.maximum(sq, 0.0, out=sq)
                np.sqrt(sq, out=sq)
                sq *= np.float32(fast.w_cont)
                d = sq if d is None else np.add(d, sq, out=d)
            scores, larger = d, False
        else:
            scores, larger = fast.block_rows(rows)
        cand = torch.topk(torch.from_numpy(np.ascontiguousarray(scores)), m, dim=1, largest=larger).indices.numpy()
        d = exact.pairs(rows[:, None], cand)
        order = np.argsort(d, axis=1, kind="stable")[:, :k]
        distances[rows] = np.take_along_axis(d, order, axis=1)
        indices[rows] = np.take_along_axis(cand, order, axis=1)
    return distances, indices


def _same_profile_between(query, reference, exact, k, bound, distances, indices) -> np.ndarray:
    """Fill the query rows whose k nearest same-profile reference records beat ``bound``; return which are done."""
    width = query.onehot.shape[1]
    packed = (
        np.ascontiguousarray(np.vstack([query.onehot, reference.onehot]).astype(np.uint8))
        .view(np.dtype((np.void, width)))
        .ravel()
    )
    _, group = np.unique(packed, return_inverse=True)
    group = group.ravel()
    gq, gr = group[: len(query)], group[len(query) :]
    done = np.zeros(len(query), dtype=bool)
    q_order, r_order = np.argsort(gq, kind="stable"), np.argsort(gr, kind="stable")
    q_groups, q_starts = np.unique(gq[q_order], return_index=True)
    r_groups, r_starts = np.unique(gr[r_order], return_index=True)
    q_bounds, r_bounds = np.r_[q_starts, len(gq)], np.r_[r_starts, len(gr)]
    r_at = {g: j for j, g in enumerate(r_groups)}
    for j, g in enumerate(q_groups):
        where = r_at.get(g)
        if where is None or r_bounds[where + 1] - r_bounds[where] < k:
            continue
        r_rows = r_order[r_bounds[where] : r_bounds[where + 1]]
        step = max(1, _PAIR_FLOATS // 8 // len(r_rows))  # a large profile: a chunk of query rows at a time
        for start in range(q_bounds[j], q_bounds[j + 1], step):
            q_rows = q_order[start : min(start + step, q_bounds[j + 1])]
            _keep_within(
                exact.pairs(q_rows[:, None], r_rows[None, :]), q_rows, r_rows, k, bound, distances, indices, done
            )
    return done
