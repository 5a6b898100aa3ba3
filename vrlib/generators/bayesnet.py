"""Greedy Bayesian networks: BayNet, and PrivBayes, its differentially private version.

Both follow PrivBayes (Zhang, Cormode, Procopiuc, Srivastava, Xiao, *PrivBayes: Private
Data Release via Bayesian Networks*, ACM TODS 42(4), 2017): every column becomes a small
integer domain (categories as they are, continuous columns cut into bins of a public
domain that the schema carries), a network of degree ``degree`` is built greedily by mutual
information, its conditional distributions are counted, and records are drawn by
ancestral sampling (continuous values uniformly inside their bin).  PrivBayes
spends ε/2 on choosing the network (exponential mechanism) and ε/2 on Laplace noise
on its marginals; with ``epsilon=inf`` it *is* BayNet, draw for draw.

Everything runs on integer-coded arrays: entropies of all small attribute sets in
one batched sort, counts with ``np.bincount`` on combined codes, sampling with
cumulative tables; no Python loop touches a row.
"""

from __future__ import annotations

import math
import os
from itertools import combinations

import numpy as np
import pandas as pd

from vrlib.errors import VrlibError
from vrlib.generators.base import Generator
from vrlib.params import check_integer, check_number

# --------------------------------------------------------------------------- mechanisms


def mi_sensitivity(n: int, binary: bool = False) -> float:
    """Sensitivity (in bits) of the mutual information I(X; Π) on ``n`` records.

    PrivBayes (Zhang et al. 2017), Lemma 4.1, for neighbouring tables that differ
    in one record (same ``n``):

    - X or Π binary: S(I) = (1/n)·log2 n + ((n−1)/n)·log2(n/(n−1));
    - otherwise:     S(I) = (2/n)·log2((n+1)/2) + ((n−1)/n)·log2((n+1)/(n−1)).

    Parameters
    ----------
    n : int
        Number of records (≥ 1).
    binary : bool
        Whether the child or its parent set has a domain of (at most) two values.
    """
    if n < 1:
        raise VrlibError(f"the sensitivity needs at least one record, got n={n}")
    if n == 1:
        return 0.0  # both formulas: first term log2(1) = 0, second term has the factor (n-1)/n = 0
    if binary:
        return math.log2(n) / n + (n - 1) / n * math.log2(n / (n - 1))
    return 2.0 / n * math.log2((n + 1) / 2) + (n - 1) / n * math.log2((n + 1) / (n - 1))


def exponential_mechanism_probabilities(scores, epsilon: float, sensitivity: float) -> np.ndarray:
    """Selection probabilities of the exponential mechanism: p_i ∝ exp(ε·s_i / (2·Δ)).

    ``epsilon`` is the budget of this one selection and ``sensitivity`` (Δ) that of
    the score.  ``epsilon=inf`` (or Δ = 0) puts all mass on the first maximum.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1 or len(scores) == 0:
        raise VrlibError("the exponential mechanism needs a non-empty 1-D array of scores")
    if np.isinf(epsilon) or sensitivity == 0:
        p = np.zeros(len(scores))
        p[int(np.argmax(scores))] = 1.0
        return p
    logits = epsilon * scores / (2.0 * sensitivity)
    p = np.exp(logits - logits.max())  # shift: exp never overflows
    return p / p.sum()


def laplace_scale(epsilon2: float, n: int, n_marginals: int) -> float:
    """Scale b of the Laplace noise on each noisy marginal, as a probability distribution.

    PrivBayes (Zhang et al. 2017), Algorithm 1 (NoisyConditionals): the joint
    distribution Pr[X_i, Π_i] of a family has L1 sensitivity 2/n (replacing one
    record moves mass 1/n out of one cell and into another), and the budget ε2 is
    split evenly over the ``n_marginals`` = d − k marginals, so
    b = 2·(d − k) / (n·ε2); on counts the same noise has scale 2·(d − k)/ε2.
    """
    if not epsilon2 > 0:
        raise VrlibError(f"the noise budget must be positive, got {epsilon2}")
    return 2.0 * n_marginals / (n * epsilon2)


def noisy_counts(counts: np.ndarray, count_scale: float, rng: np.random.Generator) -> np.ndarray:
    """``counts`` plus i.i.d. Laplace(0, ``count_scale``) noise in every cell (scale 0: unchanged)."""
    counts = np.asarray(counts, dtype=np.float64)
    if count_scale == 0:
        return counts.copy()
    return counts + rng.laplace(0.0, count_scale, size=counts.shape)


def conditional_table(joint: np.ndarray, n_child: int) -> np.ndarray:
    """P(child | parents) from a (noisy, clipped) joint table of counts, shape (parent configs, n_child).

    Negative cells are clipped to 0 first.  A parent configuration with no mass
    (unseen in the data, or all its noisy cells clipped) gets the child's marginal
    from the same table, or the uniform distribution if that is empty too.
    """
    table = np.clip(np.asarray(joint, dtype=np.float64), 0, None).reshape(-1, n_child)
    marginal = table.sum(axis=0)
    total = marginal.sum()
    fallback = marginal / total if total > 0 else np.full(n_child, 1.0 / n_child)
    rows = table.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        cond = np.where(rows > 0, table / rows, fallback)
    return cond


# --------------------------------------------------------------------------- entropies


def set_entropies(codes: np.ndarray, domains: np.ndarray, sets: np.ndarray) -> np.ndarray:
    """Empirical joint entropy (bits) of each attribute set, all sets in one batch.

    Parameters
    ----------
    codes : (d, n) int array
        Integer codes of the d attributes.
    domains : (d,) int array
        Domain size of each attribute.
    sets : (m, s) int array
        m attribute sets of the same size s (column indices).

    Returns
    -------
    (m,) float array
    """
    m, n = len(sets), codes.shape[1]
    out = np.empty(m)
    if m == 0:
        return out
    sizes = np.prod(domains[sets], axis=1)
    # Small joint domains: count every cell with one bincount (cost ~ n + cells);
    # large ones: sort the codes and count runs (cost ~ n log n, whatever the domain).
    small = sizes <= max(4 * n, 256)
    for pick, count in ((small, _entropies_by_bincount), (~small, _entropies_by_sort)):
        if pick.any():
            out[pick] = count(codes, domains, sets[pick], sizes[pick], n)
    return out


def _joint_codes(codes, domains, sets, sizes):
    """Mixed-radix code of each set, one int per record: shape (m, n)."""
    dtype = np.int32 if sizes.max() < 2**31 else np.int64
    joint = np.zeros((len(sets), codes.shape[1]), dtype=dtype)
    for j in range(sets.shape[1]):
        joint *= domains[sets[:, j]].astype(dtype)[:, None]
        joint += codes[sets[:, j]].astype(dtype, copy=False)
    return joint


def _entropies_by_bincount(codes, domains, sets, sizes, n):
    joint = _joint_codes(codes, domains, sets, sizes).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    counts = np.bincount((joint + offsets[:, None]).ravel(), minlength=int(sizes.sum())).astype(np.float64)
    cells = np.flatnonzero(counts)
    owner = np.searchsorted(offsets, cells, side="right") - 1  # which set each non-empty cell belongs to
    plogp = counts[cells] * np.log2(counts[cells])
    return np.log2(n) - np.bincount(owner, weights=plogp, minlength=len(sets)) / n


def _entropies_by_sort(codes, domains, sets, sizes, n):
    m = len(sets)
    joint = _joint_codes(codes, domains, sets, sizes)
    joint.sort(axis=1)
    flat = joint.ravel()
    # Runs of equal codes within a row are the counts of the set's cells.
    new = np.ones(m * n, dtype=bool)
    new[1:] = flat[1:] != flat[:-1]
    new[::n] = True
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, m * n)).astype(np.float64)
    row = starts // n
    plogp = np.bincount(row, weights=counts * np.log2(counts), minlength=m)
    return np.log2(n) - plogp / n


# --------------------------------------------------------------------------- the generator


class PrivBayes(Generator):
    """PrivBayes: an ε-differentially private greedy Bayesian network of degree ``degree``.

    The budget ε is split in half (Zhang et al. 2017):

    - ε1 = ε/2 chooses the network: the first attribute at random, then d − 1 times
      a (child, parent set) pair among all unplaced children and all parent sets of
      size min(k, number placed) drawn from the placed attributes (GreedyBayes:
      mutual information never decreases with more parents, so smaller sets are
      not candidates), by the exponential mechanism on the mutual information
      (in bits), each choice with budget ε1/(d − 1) and the sensitivity of
      :func:`mi_sensitivity` (the non-binary formula unless every candidate of the
      step has a binary child or parent set: one Δ for all candidates of a step);
    - ε2 = ε/2 measures the d − k family marginals Pr[X_i, Π_i] (k = ``degree``,
      at most d − 1), each with Laplace noise of scale b = 2·(d − k)/(n·ε2) on the
      distribution, i.e. 2·(d − k)/ε2 on counts (PrivBayes's Algorithm 1,
      :func:`laplace_scale`); negative cells are clipped to 0 and each conditional
      normalised.  The first k attributes' conditionals are derived from the
      marginal of the (k+1)-th, which holds all of them.  (DataSynthesizer 0.1.13
      adds noise of scale (d − k)/ε2 to counts: half of this.)

    A parent configuration with no mass (never seen, or all its noisy cells
    clipped) samples the child from the child's marginal in the same family table.
    ``epsilon=inf`` spends nothing: the structure is the greedy maximum (ties: the
    first candidate) and the counts are exact, which is BayNet (:class:`BayNet`)
    exactly, draw for draw.

    Continuous columns are cut into bins from the schema's public domain
    (:class:`vrlib.data.Schema`, ``domains``): ``bins`` equal-width bins between public
    bounds, or the domain's own bin edges; values outside it fall in its end bins.
    A sampled value is uniform inside its bin.  Bins never come from the training
    data under PrivBayes: a continuous column without a public domain is an error,
    since a range taken from the data (DataSynthesizer's choice) moves with one
    extreme record and voids the guarantee.  BayNet, which promises nothing, falls
    back to ``bins`` equal-width bins between the training minimum and maximum (a
    constant column stays constant).

    Parameters
    ----------
    epsilon : float
        Total privacy budget, > 0; ``float("inf")`` for no noise.
    degree : int
        Number of parents of every attribute after the first ``degree`` ones, which
        have all earlier attributes as parents (1 is the achilles authors' setting;
        2 is allowed, and higher).
    bins : int
        Equal-width bins per continuous column whose domain is given as bounds (or,
        BayNet only, taken from the data).
    round_integers : bool
        Round sampled values of a continuous column whose training values are all
        integers (e.g. Adult's age).  Off by default: the specification samples
        uniformly inside the bin.

    Attributes
    ----------
    order_ : list of str
        Columns in the order they were added to the network.
    parents_ : dict str -> tuple of str
        Parent set of each column.
    domains_ : dict str -> int
        Size of each column's integer domain (categories, or bins).
    bin_edges_ : dict str -> ndarray
        Bin edges of each continuous column.
    noise_scale_ : float
        Laplace scale b on each noisy marginal as a distribution (0 without noise).
    noisy_marginals_ : dict str -> ndarray
        The measured family marginals as counts, after noise and before clipping,
        keyed by the family's child, axes ``parents_[child]`` then the child (for
        inspection and tests).
    """

    def __init__(self, epsilon: float = 1.0, degree: int = 1, bins: int = 10, round_integers: bool = False):
        self.epsilon = epsilon
        self.degree = degree
        self.bins = bins
        self.round_integers = round_integers
        self._check_params()

    def _check_params(self) -> None:
        check_number(
            "epsilon",
            self.epsilon,
            above=0,
            allow_inf=True,
            want="a positive number (float('inf') for no noise, i.e. BayNet)",
        )
        for name in ("degree", "bins"):
            check_integer(name, getattr(self, name), minimum=1)

    # -------------------------------------------------------------- encoding

    def _encode(self, df: pd.DataFrame):
        """Integer codes (d, n), domain sizes, and how to decode each continuous column."""

        def column(c):
            return df[c].array.codes if c in self.schema_.categorical else df[c].to_numpy(dtype=np.float64)

        return self._encode_columns(column, len(df))

    def _encode_columns(self, column, n: int):
        """:meth:`_encode` from the training table's columns.

        ``column(c)`` gives column ``c`` of the ``n`` training records: the Categorical's
        own codes for a categorical column, float64 values for a continuous one.
        """
        d = len(self.columns_)
        codes = np.empty((d, n), dtype=np.int64)
        domains = np.empty(d, dtype=np.int64)
        self.bin_edges_ = {}
        self.integer_valued_ = {}
        for j, c in enumerate(self.columns_):
            if c in self.schema_.categorical:
                codes[j] = column(c)
                domains[j] = len(self.dtypes_[c].categories)
            else:
                x = column(c)
                edges = self._edges(c, x)
                nbins = max(len(edges) - 1, 1)
                # values outside a public domain are clamped into its end bins; the maximum falls in the last bin
                idx = np.searchsorted(edges, x, side="right") - 1
                codes[j] = np.clip(idx, 0, nbins - 1)
                domains[j] = nbins
                self.bin_edges_[c] = edges
                self.integer_valued_[c] = bool(np.all(x == np.round(x)))
        return codes, domains

    def _edges(self, c: str, x: np.ndarray) -> np.ndarray:
        """Bin edges of a continuous column: from the schema's public domain, else (BayNet only) the data's range."""
        public = self.schema_.domain(c)
        if public is not None:
            lo, hi = public[0], public[-1]
            return np.linspace(lo, hi, self.bins + 1) if len(public) == 2 else np.asarray(public, dtype=np.float64)
        if not math.isinf(self.epsilon):
            raise VrlibError(
                f"PrivBayes needs a public domain for the continuous column {c!r}: bins taken from the training "
                "data's range would depend on its records, and the release would not be ε-DP. Give the schema "
                "one (Schema.with_domains({column: (low, high)}), or vrlib.data.quantile_domain on public data)"
            )
        lo, hi = float(x.min()), float(x.max())
        return np.linspace(lo, hi, self.bins + 1) if hi > lo else np.array([lo, lo])  # a constant column stays constant

    def _decode(self, c: str, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if c in self.schema_.categorical:
            return codes
        edges = self.bin_edges_[c]
        lo, hi = edges[0], edges[-1]
        values = edges[codes] + rng.random(len(codes)) * (edges[np.minimum(codes + 1, len(edges) - 1)] - edges[codes])
        values = np.minimum(values, hi)  # guard rounding past the top edge
        if self.round_integers and self.integer_valued_[c]:
            values = np.clip(np.round(values), np.ceil(lo), np.floor(hi))
        return values

    # -------------------------------------------------------------- fit

    def _fit(self, df: pd.DataFrame, rng: np.random.Generator) -> None:
        self._fit_codes(*self._encode(df), rng)

    def _fit_coded(self, table, rows: np.ndarray, rng: np.random.Generator) -> None:
        """:meth:`_fit` on rows of a :class:`vrlib.coded.CodedTable` (the same numbers, no DataFrame)."""
        self._fit_codes(*self._encode_columns(lambda c: table.take(c, rows), len(rows)), rng)

    def _fit_codes(self, codes: np.ndarray, domains: np.ndarray, rng: np.random.Generator) -> None:
        """Structure, noisy marginals and sampling tables from the integer codes (d, n) and domain sizes."""
        d, n = codes.shape
        k = min(self.degree, d - 1)
        self.domains_ = {c: int(domains[j]) for j, c in enumerate(self.columns_)}
        private = not math.isinf(self.epsilon)
        eps1 = eps2 = self.epsilon / 2
        _check_memory(
            self, _structure_bytes(d, n, k, domains), f"scoring every set of up to {k + 1} of the {d} columns"
        )
        order, parents = self._structure(codes, domains, k, eps1 if private else math.inf, rng)
        families = [parents[i] + (order[i],) for i in range(k, d)]
        _check_memory(
            self,
            _FAMILY_COPIES * 8 * sum(math.prod(int(domains[a]) for a in f) for f in families),
            f"the {len(families)} conditional tables of the chosen network",
        )

        n_marginals = d - k
        self.noise_scale_ = laplace_scale(eps2, n, n_marginals) if private else 0.0
        count_scale = self.noise_scale_ * n  # the same noise, on counts
        self.noisy_marginals_ = {}
        cpts = [None] * d
        joints = {}
        for i in range(k, d):
            family = parents[i] + (order[i],)
            counts = _family_counts(codes, domains, family)
            joints[i] = noisy_counts(counts, count_scale, rng)
            self.noisy_marginals_[self.columns_[order[i]]] = joints[i].reshape([domains[a] for a in family])
            cpts[i] = conditional_table(joints[i], domains[order[i]])
        if k > 0:
            # The first k attributes: marginals of the (k+1)-th family, which is
            # (order[0], ..., order[k]) in that order.
            base = np.clip(joints[k], 0, None).reshape([domains[a] for a in order[: k + 1]])
            for i in range(k):
                sub = base.sum(axis=tuple(range(i + 1, k + 1)))
                cpts[i] = conditional_table(sub, domains[order[i]])
        self.order_ = [self.columns_[j] for j in order]
        self.parents_ = {self.columns_[order[i]]: tuple(self.columns_[p] for p in parents[i]) for i in range(d)}
        self._order_idx = order
        self._parents_idx = parents
        self._domains = domains
        cdfs = []
        for cpt in cpts:
            cdf = np.cumsum(cpt, axis=1)
            cdf[:, -1] = 1.0  # exact top, whatever the rounding
            # Stored one row per value (parent configurations along the rows' length):
            # sampling takes columns and sums down them, 3-6x faster than along short rows.
            cdfs.append(np.ascontiguousarray(cdf.T))
        self._cpts = cpts
        self._cdfs = cdfs

    def _structure(self, codes, domains, k, eps1, rng):
        """Greedy network: (order, parents), parents[i] a tuple of column indices in insertion order."""
        d, n = codes.shape
        # Entropy of every attribute set of size <= k + 1, keyed by bit mask.
        entropy = {0: 0.0}
        for size in range(1, k + 2):
            sets = np.array(list(combinations(range(d), size)), dtype=np.int64).reshape(-1, size)
            if len(sets):
                masks = (np.int64(1) << sets).sum(axis=1)
                entropy.update(zip(masks.tolist(), set_entropies(codes, domains, sets).tolist()))
        private = not math.isinf(eps1)
        eps_step = eps1 / max(d - 1, 1)
        first = int(rng.integers(d))
        order, parents = [first], [()]
        remaining = [j for j in range(d) if j != first]
        binary = domains <= 2
        while remaining:
            size = min(k, len(order))
            cand_parents = list(combinations(order, size))
            pmasks = [sum(1 << p for p in ps) for ps in cand_parents]
            hp = [entropy[m] for m in pmasks]
            scores = np.array(
                [entropy[1 << x] + h - entropy[m | (1 << x)] for x in remaining for m, h in zip(pmasks, hp)]
            )
            if private:
                # One sensitivity for the whole step (the largest among the candidates),
                # so the mechanism's guarantee holds for every candidate.
                # Every pair has a binary side iff all children or all parent sets are binary.
                all_binary = all(binary[x] for x in remaining) or all(
                    np.prod(domains[list(ps)]) <= 2 for ps in cand_parents
                )
                sens = mi_sensitivity(n, binary=all_binary)
                p = exponential_mechanism_probabilities(scores, eps_step, sens)
                pick = int(rng.choice(len(scores), p=p))
            else:
                pick = int(np.argmax(scores))  # ties: the first candidate
            child = remaining[pick // len(cand_parents)]
            order.append(child)
            parents.append(tuple(cand_parents[pick % len(cand_parents)]))
            remaining.remove(child)
        return order, parents

    # -------------------------------------------------------------- sample

    def _sample(self, n: int, rng: np.random.Generator) -> dict:
        out = {}
        for i, j in enumerate(self._order_idx):
            config = np.zeros(n, dtype=np.int64)
            for p in self._parents_idx[i]:
                config = config * self._domains[p] + out[p]
            u = 1.0 - rng.random(n)  # in (0, 1]: never picks a zero-probability value
            cdf = self._cdfs[i]  # (values, parent configurations)
            if cdf.shape[1] == 1:
                out[j] = np.searchsorted(cdf[:, 0], u, side="left")
            else:
                out[j] = (cdf.take(config, axis=1) < u).sum(axis=0)  # values below u: the inverse CDF
        values = {}
        for j, c in enumerate(self.columns_):
            values[c] = self._decode(c, out[j], rng)
        return values

    # -------------------------------------------------------------- inspection

    def conditional(self, column: str) -> np.ndarray:
        """P(column | parents) as an array of shape (*parent domains, column domain).

        The axes follow ``parents_[column]``; for a continuous column the values are bins.
        """
        if not getattr(self, "fitted_", False):
            raise VrlibError(f"{type(self).__name__} is not fitted: call fit(df, schema) first")
        if column not in self.parents_:
            raise VrlibError(f"unknown column {column!r}; the columns are {self.columns_}")
        i = self.order_.index(column)
        shape = [self.domains_[p] for p in self.parents_[column]] + [self.domains_[column]]
        return self._cpts[i].reshape(shape)


class BayNet(PrivBayes):
    """BayNet: the greedy Bayesian network of PrivBayes without noise (``PrivBayes(epsilon=inf)``).

    Parameters
    ----------
    degree : int
        Number of parents of each attribute (1: the achilles authors' setting).
    bins : int
        Equal-width bins per continuous column (between the schema's public bounds when it
        has them, else the training data's range: BayNet is not private).
    round_integers : bool
        Round sampled values of integer-valued continuous columns (see :class:`PrivBayes`).
    """

    def __init__(self, degree: int = 1, bins: int = 10, round_integers: bool = False):
        super().__init__(epsilon=math.inf, degree=degree, bins=bins, round_integers=round_integers)


def _family_counts(codes: np.ndarray, domains: np.ndarray, family) -> np.ndarray:
    """Counts of every cell of the family's joint domain (C order: first attribute slowest)."""
    code = np.zeros(codes.shape[1], dtype=np.int64)
    size = 1
    for a in family:
        code = code * domains[a] + codes[a]
        size *= int(domains[a])
    return np.bincount(code, minlength=size).astype(np.float64)


# --------------------------------------------------------------------------- memory check

_FAMILY_COPIES = 4  # counts, noisy counts, conditional table and its cumulative sums, float64 each


def _structure_bytes(d: int, n: int, k: int, domains: np.ndarray) -> int:
    """A lower bound on the memory the network needs: the joint codes of all C(d, s) sets of the
    largest size scored (int32 per record), and the smallest possible family tables."""
    sets = math.comb(d, k + 1)
    smallest_family = math.prod(sorted(int(x) for x in domains)[: k + 1])
    return max(4 * sets * n, _FAMILY_COPIES * 8 * (d - k) * smallest_family)


def _available_bytes() -> int:
    """Memory the system can still give (MemAvailable), or all of it where that is not known."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 2**63


# Below this no check: a machine that runs Python has 256 MiB to give, and reading /proc/meminfo
# twice per fit cost a few per cent of the fit of the small networks games make by the thousand.
_SMALL_BYTES = 2**28


def _check_memory(model, need: int, what: str) -> None:
    """Refuse, before allocating, a network that cannot fit in memory (a clear error, not a MemoryError)."""
    if need < _SMALL_BYTES:
        return
    have = _available_bytes()
    if need > have:
        raise VrlibError(
            f"{type(model).__name__}(degree={model.degree}, bins={model.bins}) needs at least {need / 2**30:.3g} GiB "
            f"for {what}, but only {have / 2**30:.3g} GiB is available; lower degree (1 or 2 is usual) or bins, "
            "or use fewer columns"
        )


__all__ = [
    "PrivBayes",
    "BayNet",
    "mi_sensitivity",
    "exponential_mechanism_probabilities",
    "laplace_scale",
    "noisy_counts",
    "conditional_table",
    "set_entropies",
]
