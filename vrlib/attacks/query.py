"""Query-based membership inference (achilles §2, after Houssiau et al.): target-anchored counts, then a forest.

A query is a non-empty attribute subset A; its answer on a synthetic dataset is the
number of records that equal the target on every categorical attribute of A and are
``<=`` (or ``>=``) the target on every continuous one.  Answers are computed without
looping over queries: each record gets an F-bit *match pattern* (bit f set iff it
matches the target on attribute f), the patterns are histogrammed over the 2^F
possible values, and the answer for A, the number of records whose pattern contains
A, is the *superset sum* (zeta transform) of that histogram, computed for all 2^F
subsets at once in O(F·2^F) by one vectorised pass per bit, for many datasets at a
time.  The chosen subsets are then read off.

Answers are raw counts, as in the authors' code: the datasets of a game all have the
same size, so dividing by it would change nothing but the scale.

Attribute f is ``schema.columns[f]`` (categorical columns first, then continuous).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from joblib import parallel_config
from sklearn.ensemble import RandomForestClassifier

from vrlib import parallel
from vrlib.attacks.base import Attack
from vrlib.data import Schema
from vrlib.errors import VrlibError

__all__ = [
    "QueryAttack",
    "choose_subsets",
    "superset_sums",
    "match_patterns",
    "query_answers",
    "subset_columns",
    "OPERATORS",
    "MAX_ATTRIBUTES",
]

OPERATORS = ("<=", ">=")
MAX_ATTRIBUTES = 24  # 2^24 counts per dataset (64 MB) is the most the full table may take
_CHUNK_CELLS = 1 << 19  # histogram cells per chunk of datasets: about 1 MB, stays in cache
_LOW_BITS = 4  # bits handled on transposed blocks in superset_sums


def choose_subsets(n_attributes: int, n_queries: int, seed: int = 0) -> np.ndarray:
    """The attribute subsets to query, as sorted bit masks.

    All ``2^F - 1`` non-empty subsets when there are at most ``n_queries`` of them,
    otherwise ``n_queries`` distinct ones drawn uniformly with ``seed``.

    Parameters
    ----------
    n_attributes : int
        F, the number of attributes.
    n_queries : int
        N, the most subsets to use.
    seed : int

    Returns
    -------
    ndarray of int64, sorted; bit f of a mask set iff attribute f is in the subset.
    """
    if not 1 <= n_attributes <= MAX_ATTRIBUTES:
        raise VrlibError(
            f"the query attack handles 1 to {MAX_ATTRIBUTES} attributes (got {n_attributes}); "
            "drop or merge columns first"
        )
    if n_queries < 1:
        raise VrlibError(f"n_queries must be at least 1 (got {n_queries})")
    total = (1 << n_attributes) - 1
    if total <= n_queries:
        return np.arange(1, total + 1, dtype=np.int64)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(total, size=n_queries, replace=False).astype(np.int64) + 1)


def subset_columns(mask: int, schema: Schema) -> tuple[str, ...]:
    """The columns of the subset coded by ``mask`` (bit f = ``schema.columns[f]``)."""
    return tuple(c for f, c in enumerate(schema.columns) if mask >> f & 1)


def superset_sums(hist: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Zeta transform over supersets along the last axis: ``z[..., A] = sum of hist[..., B] for B ⊇ A``.

    Parameters
    ----------
    hist : ndarray, shape (..., 2^F)
    out : ndarray, optional
        C-contiguous array to write to (may be ``hist`` itself for an in-place transform).

    Returns
    -------
    ndarray of the same shape and dtype as ``out`` (default: as ``hist``).
    """
    hist = np.asarray(hist)
    size = hist.shape[-1]
    n_bits = size.bit_length() - 1
    if size < 1 or 1 << n_bits != size:
        raise VrlibError(f"the last axis must have length 2^F (got {size})")
    if out is None:
        z = np.array(hist, order="C")
    else:
        if not out.flags.c_contiguous or out.shape != hist.shape:
            raise VrlibError("out must be a C-contiguous array of the shape of hist")
        z = out
        if out is not hist:
            z[...] = hist
    # One pass per bit f: the axis of length 2 is bit f; add the "bit set" half onto the
    # "bit clear" half.  For the lowest bits that axis sits next to a tiny last axis,
    # which numpy loops over slowly, so those bits are done on the transposed blocks.
    low = min(n_bits, _LOW_BITS)
    if low:
        blocks = z.reshape(-1, 1 << low)
        t = np.ascontiguousarray(blocks.T)
        for f in range(low):
            v = t.reshape((1 << low) >> (f + 1), 2, 1 << f, -1)
            v[:, 0] += v[:, 1]
        blocks[...] = t.T
    lead = z.shape[:-1]
    for f in range(low, n_bits):
        v = z.reshape(*lead, size >> (f + 1), 2, 1 << f)
        v[..., 0, :] += v[..., 1, :]
    return z


def _target_values(target, schema: Schema) -> dict:
    if isinstance(target, pd.DataFrame):
        if len(target) != 1:
            raise VrlibError(f"the target must be one record (got a table of {len(target)} rows)")
        target = target.iloc[0]
    if isinstance(target, pd.Series):
        target = target.to_dict()
    if not isinstance(target, dict):
        raise VrlibError(f"the target must be a one-row DataFrame, a Series or a dict (got {type(target).__name__})")
    missing = [c for c in schema.columns if c not in target]
    if missing:
        raise VrlibError(f"the target has no value for column(s) {missing}")
    values = {}
    for c in schema.columns:
        v = target[c]
        if pd.isna(v):
            raise VrlibError(f"the target's value of {c!r} is missing; the attack needs a complete record")
        values[c] = float(v) if c in schema.continuous else v
    return values


def _compare(values: np.ndarray, t: float, operator: str) -> np.ndarray:
    return values <= t if operator == "<=" else values >= t


def match_patterns(datasets, target, schema: Schema, operator: str = "<=") -> tuple[np.ndarray, np.ndarray]:
    """Every synthetic record's F-bit match pattern against the target.

    Parameters
    ----------
    datasets : list of DataFrame, or SyntheticDatasets
    target : one-row DataFrame, Series or dict
    schema : Schema
    operator : {"<=", ">="}
        How continuous attributes match: record value ``<=`` target value (default)
        or ``>=`` (the authors' code).

    Returns
    -------
    patterns : ndarray of int64, all records of all datasets, concatenated
    sizes : ndarray of int64, number of records of each dataset
    """
    if operator not in OPERATORS:
        raise VrlibError(f"operator must be one of {OPERATORS} (got {operator!r})")
    t = _target_values(target, schema)
    cat, cont = schema.categorical, schema.continuous
    if hasattr(datasets, "codes") and hasattr(datasets, "continuous"):  # games.SyntheticDatasets
        if tuple(datasets.schema.columns) != tuple(schema.columns):
            raise VrlibError("the synthetic datasets were encoded with another schema than the attack's")
        n, s = datasets.codes.shape[:2]
        patterns = np.zeros((n, s), dtype=np.int64)
        for f, c in enumerate(cat):
            code = datasets.categories[c].get_indexer([t[c]])[0]
            if code >= 0:  # a value outside the categories matches nothing
                patterns |= (datasets.codes[:, :, f] == code).astype(np.int64) << f
        for g, c in enumerate(cont):
            patterns |= _compare(datasets.continuous[:, :, g], t[c], operator).astype(np.int64) << (len(cat) + g)
        return patterns.ravel(), np.full(n, s, dtype=np.int64)
    if isinstance(datasets, pd.DataFrame):
        raise VrlibError("pass a list of synthetic datasets (DataFrames), not a single DataFrame")
    parts, sizes = [], []
    known: dict = {}  # id(category Index) -> (Index, target code): datasets of a game share them
    for df in datasets:
        if not isinstance(df, pd.DataFrame):
            raise VrlibError(f"synthetic datasets must be DataFrames (got {type(df).__name__})")
        missing = [c for c in schema.columns if c not in df.columns]
        if missing:
            raise VrlibError(f"a synthetic dataset lacks column(s) {missing}")
        p = np.zeros(len(df), dtype=np.int64)
        for f, c in enumerate(cat):
            col = df[c].array
            if isinstance(col, pd.Categorical):
                # Compare integer codes, much faster than comparing values.
                cats = col.categories
                entry = known.get(id(cats))
                if entry is None or entry[0] is not cats:
                    entry = known[id(cats)] = (cats, cats.get_indexer([t[c]])[0])
                # A target value outside the categories matches nothing (not even missing values, code -1).
                hit = col.codes == entry[1] if entry[1] >= 0 else np.zeros(len(df), dtype=bool)
            else:
                hit = np.asarray(col) == t[c]
            p |= hit.astype(np.int64) << f
        for g, c in enumerate(cont):
            p |= _compare(df[c].to_numpy(dtype=np.float64), t[c], operator).astype(np.int64) << (len(cat) + g)
        parts.append(p)
        sizes.append(len(df))
    if not parts:
        raise VrlibError("no synthetic datasets given")
    return np.concatenate(parts), np.asarray(sizes, dtype=np.int64)


def query_answers(datasets, target, schema: Schema, subsets=None, operator: str = "<=") -> np.ndarray:
    """Answers of the counting queries ``subsets`` on every dataset, shape (n_datasets, n_subsets).

    Parameters
    ----------
    datasets : list of DataFrame, or SyntheticDatasets
    target : one-row DataFrame, Series or dict
    schema : Schema
    subsets : array of int bit masks, optional
        Default all non-empty subsets.
    operator : {"<=", ">="}

    Returns
    -------
    ndarray of unsigned int (uint16 when every dataset has fewer than 65,536 records)
    """
    n_bits = len(schema.columns)
    if not 1 <= n_bits <= MAX_ATTRIBUTES:
        raise VrlibError(f"the query attack handles 1 to {MAX_ATTRIBUTES} attributes (got {n_bits})")
    size = 1 << n_bits
    subsets = np.arange(1, size, dtype=np.int64) if subsets is None else np.asarray(subsets, dtype=np.int64)
    if subsets.ndim != 1 or (len(subsets) and (subsets.min() < 0 or subsets.max() >= size)):
        raise VrlibError(f"subsets must be a 1-D array of bit masks in [0, 2^{n_bits})")
    patterns, sizes = match_patterns(datasets, target, schema, operator)
    # An answer never exceeds its dataset's size, so the sums fit in the output type.
    dtype = np.uint16 if sizes.max(initial=0) < 1 << 16 else np.uint32
    out = np.empty((len(sizes), len(subsets)), dtype=dtype)
    every = len(subsets) == size - 1 and (subsets == np.arange(1, size)).all()
    ends = np.cumsum(sizes)
    starts = ends - sizes
    chunk = max(1, _CHUNK_CELLS >> n_bits)
    for a in range(0, len(sizes), chunk):
        b = min(a + chunk, len(sizes))
        seg = patterns[starts[a] : ends[b - 1]]
        owner = np.repeat(np.arange(b - a, dtype=np.int64), sizes[a:b])
        hist = np.bincount((owner << n_bits) | seg, minlength=(b - a) << n_bits)
        hist = hist.astype(dtype).reshape(b - a, size)
        superset_sums(hist, out=hist)
        out[a:b] = hist[:, 1:] if every else hist[:, subsets]
    return out


class QueryAttack(Attack):
    """The query-based attack: counting-query answers as features of a random forest.

    Parameters
    ----------
    schema : Schema
    n_queries : int
        N: all ``2^F - 1`` subsets when there are at most N, else N distinct random ones.
    operator : {"<=", ">="}
        How continuous attributes match the target (``>=``: the authors' code).
    seed : int
        Seeds the subset draw and the forest.
    n_jobs : int, optional
        Cores for the forest (default :func:`vrlib.parallel.default_n_jobs`).
    n_estimators, max_depth : int
        The forest (paper: 100 trees of depth 10).

    Attributes
    ----------
    subsets_ : ndarray of int
        The queried subsets as bit masks (see :func:`subset_columns`).
    keep_ : ndarray of bool
        Which queries varied across the training datasets (constant ones are dropped).
    classifier_ : RandomForestClassifier or None
        None when every query was constant; the attack then predicts the training IN rate.

    Notes
    -----
    The answers go to the forest unscaled: a tree's partitions do not change under a
    per-feature increasing affine map, so the standard scaling the project had
    before (as in the authors' pipeline) changed nothing but cost more than the
    features themselves (fitting the scaler on 4,000 x 32,767 answers); a test checks
    that the predictions are the same.
    """

    def __init__(
        self,
        schema: Schema,
        n_queries: int = 100_000,
        operator: str = "<=",
        seed: int = 0,
        n_jobs: int | None = None,
        n_estimators: int = 100,
        max_depth: int = 10,
    ):
        self.schema = schema
        self.n_queries = n_queries
        self.operator = operator
        self.seed = seed
        self.n_jobs = n_jobs
        self.n_estimators = n_estimators
        self.max_depth = max_depth

    def features(self, synthetic_datasets) -> np.ndarray:
        """Query answers of each dataset for the fitted target, shape (n_datasets, n_queries)."""
        if not hasattr(self, "subsets_"):
            raise VrlibError("QueryAttack is not fitted: call fit(synthetic_datasets, labels, target) first")
        return query_answers(synthetic_datasets, self.target_, self.schema, self.subsets_, self.operator)

    def fit(self, synthetic_datasets, labels, target) -> "QueryAttack":
        """Learn to tell IN datasets from OUT ones for ``target``.

        Parameters
        ----------
        synthetic_datasets : list of DataFrame, or SyntheticDatasets
        labels : array-like of {0, 1}, or None
            1 = the target was in the training data (IN).  None: take them from a
            ``SyntheticDatasets``.
        target : one-row DataFrame, Series or dict
        """
        if self.operator not in OPERATORS:
            raise VrlibError(f"operator must be one of {OPERATORS} (got {self.operator!r})")
        if labels is None:
            labels = getattr(synthetic_datasets, "labels", None)
            if labels is None:
                raise VrlibError("labels are required unless the datasets come with them (SyntheticDatasets)")
        labels = np.asarray(labels)
        if labels.ndim != 1 or not np.isin(labels, (0, 1)).all() or len(np.unique(labels)) != 2:
            raise VrlibError("labels must be 0 (OUT) and 1 (IN), with both present")
        self.target_ = _target_values(target, self.schema)
        self.subsets_ = choose_subsets(len(self.schema.columns), self.n_queries, self.seed)
        X = self.features(synthetic_datasets)
        if len(X) != len(labels):
            raise VrlibError(f"{len(X)} synthetic datasets but {len(labels)} labels")
        sizes = {len(d) for d in synthetic_datasets} if isinstance(synthetic_datasets, list) else set()
        if len(sizes) > 1:
            warnings.warn(
                "the synthetic datasets differ in size; the attack uses raw counts, which then also measure size",
                UserWarning,
                stacklevel=2,
            )
        self.keep_ = X.max(axis=0) != X.min(axis=0)
        self.prior_ = float(labels.mean())
        if not self.keep_.any():
            warnings.warn(
                "every query answer is constant across the datasets: the attack cannot learn", UserWarning, stacklevel=2
            )
            self.classifier_ = None
            return self
        # float32 is what the forest works in anyway, at half the memory.
        Xk = X[:, self.keep_].astype(np.float32)
        n_jobs = parallel.default_n_jobs() if self.n_jobs is None else self.n_jobs
        self.classifier_ = RandomForestClassifier(
            n_estimators=self.n_estimators, max_depth=self.max_depth, random_state=self.seed, n_jobs=n_jobs
        )
        self.classifier_.fit(Xk, labels)
        return self

    def predict_proba(self, synthetic_datasets) -> np.ndarray:
        """Probability that the target was IN, one per synthetic dataset."""
        X = self.features(synthetic_datasets)
        if self.classifier_ is None:
            return np.full(len(X), self.prior_)
        Xk = X[:, self.keep_].astype(np.float32)
        # One thread: the forest's threads add their trees' votes in whatever order they finish, so
        # the last bits of a score (and the order of tied scores, hence an AUC) would vary run to run.
        with parallel_config(backend="sequential"):
            proba = self.classifier_.predict_proba(Xk)
        return proba[:, list(self.classifier_.classes_).index(1)]

    def score(self, synthetic_datasets) -> np.ndarray:
        """Membership score of each synthetic dataset (higher = the target more likely IN): :meth:`predict_proba`."""
        return self.predict_proba(synthetic_datasets)
