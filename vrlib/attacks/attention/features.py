"""What the target attention network reads: each synthetic dataset's records closest to the target.

:func:`preprocess` turns one synthetic dataset into a fixed-size matrix: its unique
records, each with its one-hot + min-max scaled values, its multiplicity and its eq. 5
distance to the target; the ``top_x`` closest, ordered by increasing distance,
zero-padded with a mask when there are fewer.  The target is encoded the same way, with
multiplicity 1 and distance 0.  The checks of the attack's inputs and the category sets
its encoder is fitted on are here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from vrlib.data import Schema
from vrlib.distance import METRICS, _onehot_norm
from vrlib.encoding import EncodedTable, TableEncoder
from vrlib.errors import VrlibError
from vrlib.params import check_integer

__all__ = ["Preprocessed", "TargetDistance", "preprocess"]

# Rows of synthetic data handled at once (about 20 datasets of 1,000 records): large
# enough to amortise pandas' per-call overhead, small enough that the one-hot block of
# the unique records (Adult: ~100 float64 columns, ~16 MB) stays cache- and page-friendly;
# measured faster than 200k-row chunks.
_CHUNK_ROWS = 20_000


# --------------------------------------------------------------------------- checks


def _check_table(df, schema: Schema, what: str) -> None:
    """Raise unless ``df`` is a non-empty DataFrame with exactly the schema's columns."""
    if not isinstance(df, pd.DataFrame):
        raise VrlibError(f"{what} must be a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in schema.columns if c not in df.columns]
    extra = [c for c in df.columns if c not in schema.columns]
    if missing or extra:
        raise VrlibError(
            f"{what} does not match the schema: missing column(s) {missing}, unexpected column(s) {extra}; "
            "pass tables with exactly the schema's columns (those of the real table)"
        )
    if len(df) == 0:
        raise VrlibError(f"{what} has no rows; every synthetic dataset needs at least one record")
    dtypes = df.dtypes
    bad = [c for c in schema.continuous if not pd.api.types.is_numeric_dtype(dtypes[c])]
    if bad:
        raise VrlibError(f"{what}: continuous column(s) {bad} are not numeric; convert them to float first")
    # Missing values are caught later, once per chunk of datasets (cheaper than per table).


def _check_target(target, schema: Schema) -> None:
    if isinstance(target, pd.Series):
        raise VrlibError("target must be a one-row DataFrame, not a Series; select it with df.loc[[index]]")
    _check_table(target, schema, "target")
    if len(target) != 1:
        raise VrlibError(f"target must have exactly one row, got {len(target)}; select it with df.loc[[index]]")
    if target[list(schema.columns)].isna().to_numpy().any():
        raise VrlibError("target has missing values; choose a complete record")


def _is_coded(datasets) -> bool:
    """Whether ``datasets`` is a :class:`vrlib.games.SyntheticDatasets` (duck-typed)."""
    return all(hasattr(datasets, a) for a in ("codes", "continuous", "categories", "schema", "labels"))


def _check_datasets(synthetic_datasets, schema: Schema):
    """A list of checked DataFrames, or the ``SyntheticDatasets`` itself once its schema is checked."""
    if _is_coded(synthetic_datasets):
        theirs = synthetic_datasets.schema
        if tuple(theirs.categorical) != schema.categorical or tuple(theirs.continuous) != schema.continuous:
            raise VrlibError(
                f"the synthetic datasets were encoded with another schema ({theirs}) than the attack's ({schema}); "
                "build the attack with the schema of the game's real table"
            )
        if len(synthetic_datasets) == 0 or synthetic_datasets.codes.shape[1] == 0:
            raise VrlibError("no synthetic datasets (or empty ones) given")
        return synthetic_datasets
    if isinstance(synthetic_datasets, pd.DataFrame) or not isinstance(synthetic_datasets, Sequence):
        raise VrlibError(
            "synthetic_datasets must be a list of DataFrames (one per synthetic dataset) or a "
            f"vrlib.games.SyntheticDatasets, got {type(synthetic_datasets).__name__}"
        )
    datasets = list(synthetic_datasets)
    if not datasets:
        raise VrlibError("no synthetic datasets given; pass a non-empty list of DataFrames")
    for i, df in enumerate(datasets):
        _check_table(df, schema, f"synthetic dataset {i}")
    return datasets


def _check_labels(labels, n: int) -> np.ndarray:
    y = np.asarray(labels)
    if y.ndim != 1:
        raise VrlibError(f"labels must be 1-D (one per synthetic dataset), got shape {y.shape}")
    if len(y) != n:
        raise VrlibError(f"got {n} synthetic datasets but {len(y)} labels; pass one label per dataset")
    if not np.isin(y, (0, 1)).all():
        raise VrlibError("labels must be 0 (target OUT of the training data) or 1 (target IN)")
    y = y.astype(np.int64)
    if len(np.unique(y)) != 2:
        raise VrlibError(
            f"labels contain only class {int(y[0])}; the attack needs shadow datasets with the target IN (1) and OUT (0)"
        )
    return y


# --------------------------------------------------------------------- preprocessing


@dataclass(frozen=True)
class Preprocessed:
    """Synthetic datasets as the network reads them.

    Attributes
    ----------
    records : ndarray of shape (n_datasets, top_x, n_features), float32
        Per dataset, its unique records closest to the target by increasing distance
        (ties: in a fixed order of the records' values, so the choice is deterministic); each row is
        ``[one-hot | scaled continuous | multiplicity | distance]``; padding rows are 0.
    mask : ndarray of shape (n_datasets, top_x), bool
        True for real records, False for padding.
    target : ndarray of shape (n_features,), float32
        The target encoded the same way, with multiplicity 1 and distance 0.
    n_unique : ndarray of shape (n_datasets,), int64
        Number of unique records of each dataset (before keeping the ``top_x`` closest).
    """

    records: np.ndarray
    mask: np.ndarray
    target: np.ndarray
    n_unique: np.ndarray


def _unseen(column: str) -> VrlibError:
    return VrlibError(
        f"column {column!r} has values unseen when the attack's encoder was fitted (or missing values); "
        "fit the attack on datasets (or a reference) that cover every category"
    )


def _frame_codes(frame: pd.DataFrame, encoder: TableEncoder) -> tuple[np.ndarray, np.ndarray]:
    """Category codes (in the encoder's category sets) and raw continuous values of a table."""
    schema = encoder.schema
    codes = np.empty((len(frame), len(schema.categorical)), dtype=np.int64)
    for j, (c, cats) in enumerate(zip(schema.categorical, encoder.categories_)):
        col = frame[c]
        if isinstance(col.dtype, pd.CategoricalDtype) and col.cat.categories.equals(cats):
            codes[:, j] = col.cat.codes.to_numpy()  # already coded the encoder's way
        else:
            codes[:, j] = pd.Categorical(col, categories=cats).codes
        if (codes[:, j] < 0).any():
            raise _unseen(c)
    return codes, frame[list(schema.continuous)].to_numpy(dtype=np.float64)


def _chunks(datasets, encoder: TableEncoder):
    """Yield ``(start, stop, tag, codes, continuous)`` over chunks of whole datasets.

    A chunk holds about ``_CHUNK_ROWS`` rows (at least one dataset); ``tag`` gives each
    row's dataset within the chunk, ``codes`` its category codes in the encoder's
    category sets, ``continuous`` its raw continuous values.
    """
    schema = encoder.schema
    if _is_coded(datasets):
        n, s = datasets.codes.shape[:2]
        # Codes refer to the game's category sets; translate them to the encoder's.
        lookup = []
        for c, cats in zip(schema.categorical, encoder.categories_):
            table = cats.get_indexer(pd.Index(datasets.categories[c]))
            lookup.append(table)
        step = max(1, _CHUNK_ROWS // s)
        for start in range(0, n, step):
            stop = min(n, start + step)
            rows = (stop - start) * s  # explicit: reshape(-1, 0) fails for tables without such columns
            raw = datasets.codes[start:stop].reshape(rows, len(schema.categorical)).astype(np.int64)
            codes = np.empty_like(raw)
            for j, c in enumerate(schema.categorical):
                codes[:, j] = lookup[j][raw[:, j]]
                if (codes[:, j] < 0).any():
                    raise _unseen(c)
            cont = datasets.continuous[start:stop].reshape(rows, len(schema.continuous)).astype(np.float64)
            yield start, stop, np.repeat(np.arange(stop - start), s), codes, cont
        return
    lengths = np.array([len(df) for df in datasets])
    start = 0
    while start < len(datasets):
        stop = start + max(1, int(np.searchsorted(np.cumsum(lengths[start:]), _CHUNK_ROWS, side="right")))
        chunk = datasets[start:stop]
        frame = pd.concat(chunk, ignore_index=True) if len(chunk) > 1 else chunk[0]
        codes, cont = _frame_codes(frame, encoder)
        yield start, stop, np.repeat(np.arange(stop - start), lengths[start:stop]), codes, cont
        start = stop


def _pack(columns) -> list:
    """Integer columns ``[(values, radix), ...]`` packed, most significant first, into as few int64 words as fit.

    Mixed radix within a word, so the words sort lexicographically as the columns do.
    Works on numpy arrays and torch tensors alike.
    """
    words, word, span = [], None, 1
    for values, radix in columns:
        if word is not None and span * radix < 2**62:
            word, span = word * radix + values, span * radix
        else:
            if word is not None:
                words.append(word)
            word, span = values, radix
    if word is not None:
        words.append(word)
    return words


def _pack_codes(codes, radices) -> list:
    """Category codes (n, C) packed into int64 words (see :func:`_pack`); [] without categorical columns."""
    return _pack([(codes[:, j], max(int(r), 1)) for j, r in enumerate(radices)])


def _row_keys(tag: np.ndarray, codes: np.ndarray, cont: np.ndarray, radices) -> np.ndarray:
    """Integer rows that are equal exactly when two records of the same dataset are equal.

    The dataset tag and the category codes are packed, most significant first, into as
    few int64 words as fit (so sorting the keys sorts by dataset, then lexicographically
    by codes); each continuous column adds the bit pattern of its raw float64 value.
    Fewer, wider columns make ``np.unique(axis=0)`` several times faster.
    """
    columns = [(tag.astype(np.int64), int(tag.max()) + 1)]
    columns += [(codes[:, j], max(int(r), 1)) for j, r in enumerate(radices)]
    words = _pack(columns)
    if cont.shape[1]:
        # + 0.0 turns -0.0 into 0.0 so that equal values have equal bits.
        bits = np.ascontiguousarray(cont + 0.0)
        words.extend(bits.view(np.int64).T)
    return np.column_stack(words)


def _encode_codes(codes: np.ndarray, cont: np.ndarray, encoder: TableEncoder) -> EncodedTable:
    """What ``encoder.transform`` gives for rows already turned into codes (one-hot + min-max).

    Encoding only the unique records from their codes skips a pass of pandas over every
    row; a test checks that the result equals ``TableEncoder.transform``.
    """
    widths = [len(c) for c in encoder.categories_]
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64)
    onehot = np.zeros((len(codes), sum(widths)), dtype=encoder.dtype)
    if len(widths):
        onehot[np.arange(len(codes))[:, None], offsets + codes] = 1
    scaled = ((cont - encoder.min_) / encoder.scale_).astype(encoder.dtype, copy=False)
    return EncodedTable(onehot, scaled, len(widths))


def _closest(dist: np.ndarray, n_unique: np.ndarray, top_x: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the ``top_x`` smallest entries of each row of a padded distance matrix.

    ``dist`` is (n, m) with +inf past ``n_unique[i]`` in row i.  Returns ``(pos, valid)``,
    both (n, top_x): positions ordered by (distance, position) and whether a slot holds a
    record.  Ties at the cut are broken by position too, so the choice is deterministic.
    """
    n, m = dist.shape
    in_row = np.arange(m)[None, :] < n_unique[:, None]
    if m > top_x:
        # The top_x-th smallest distance of each row (inf for rows with <= top_x records).
        kth = np.partition(dist, top_x - 1, axis=1)[:, top_x - 1 : top_x]
        below = (dist < kth) & in_row
        tied = (dist == kth) & in_row
        need = top_x - below.sum(axis=1, keepdims=True)
        chosen = below | (tied & (np.cumsum(tied, axis=1) <= need))
    else:
        chosen = in_row
    # Positions of the chosen entries in increasing position (stable sort of a bool key) ...
    pos = np.argsort(~chosen, axis=1, kind="stable")[:, :top_x]
    valid = np.take_along_axis(chosen, pos, axis=1)
    # ... then by increasing distance, ties keeping that order; padding last.
    key = np.where(valid, np.take_along_axis(dist, pos, axis=1), np.inf)
    order = np.argsort(key, axis=1, kind="stable")
    pos = np.take_along_axis(pos, order, axis=1)
    valid = np.take_along_axis(valid, order, axis=1)
    if pos.shape[1] < top_x:
        pad = top_x - pos.shape[1]
        pos = np.pad(pos, ((0, 0), (0, pad)))
        valid = np.pad(valid, ((0, 0), (0, pad)))
    return pos, valid


class TargetDistance:
    """Distances of records to one target (eq. 5 or 6), from category codes and scaled continuous values.

    The same values as :func:`vrlib.distance.pairwise_distances` (a test checks them, to
    1e-12), computed so that numpy and torch, on any device, give the same bits: the
    categorical part is looked up by the number of matching attributes (an integer),
    and the continuous part is a fixed sequence of elementwise operations over the
    columns (no reductions whose order a library or a device may choose), so exact ties
    stay exact ties and both paths of :func:`preprocess` keep the same records.  Square
    roots are correctly rounded on both (see :func:`_power`); the one exception is a
    Minkowski order other than 1, 2 and inf on a GPU, whose ``pow`` may differ from
    numpy's by an ulp.

    Parameters
    ----------
    target_codes : ndarray (n_categorical,)
        The target's category codes.
    target_scaled : ndarray (n_continuous,)
        The target's scaled continuous values.
    metric, p
        As in :func:`vrlib.distance.pairwise_distances`.
    """

    def __init__(self, target_codes, target_scaled, metric: str = "cosine", p: float | None = None):
        if metric not in METRICS:
            raise VrlibError(f"unknown metric {metric!r}; choose one of {METRICS}")
        if metric == "minkowski" and (p is None or not p >= 1):
            raise VrlibError(f"Minkowski distance needs p >= 1 (got p={p}); p < 1 is not a metric")
        self.metric, self.p = metric, None if p is None else float(p)
        self.target_codes = np.asarray(target_codes, dtype=np.int64)
        self.target = [float(v) for v in np.asarray(target_scaled, dtype=np.float64)]
        f_cat, f_cont = len(self.target_codes), len(self.target)
        if f_cat + f_cont == 0:
            raise VrlibError("the table has no columns")
        self.w_cat, self.w_cont = f_cat / (f_cat + f_cont), f_cont / (f_cat + f_cont)
        matches = np.arange(f_cat + 1, dtype=np.float64)
        if metric == "cosine":  # similarity of the one-hot blocks, weighted
            self.cat_term = matches * (self.w_cat / f_cat) if f_cat else np.zeros(1)
        else:  # distance of the one-hot blocks, weighted
            self.cat_term = self.w_cat * _onehot_norm(f_cat - matches, self.p)
        self.target_norm = float(np.sqrt(sum(v * v for v in self.target)))

    def __call__(self, xp, codes, scaled):
        """Distances (n,) float64 of rows with ``codes`` (n, C) int64 and ``scaled`` (n, D) float64.

        ``xp`` is the library of the arrays: ``numpy`` or ``torch`` (tensors on any device).
        """
        if xp is np:
            target_codes, cat_term = self.target_codes, self.cat_term
        else:
            target_codes = codes.new_tensor(self.target_codes)
            cat_term = scaled.new_tensor(self.cat_term)
        cat = cat_term[(codes == target_codes).sum(1)]  # by the number of matching attributes
        if not self.target:
            d = 1.0 - cat if self.metric == "cosine" else cat
        elif self.metric == "cosine":
            dot = norm = None
            for j, t in enumerate(self.target):  # column by column, in order: the same rounding everywhere
                x = scaled[:, j]
                dot = x * t if dot is None else dot + x * t
                norm = x * x if norm is None else norm + x * x
            zero, one = norm == 0, xp.ones_like(norm)
            if self.target_norm == 0:  # a zero vector is similar (1) to zero vectors only
                cos = xp.where(zero, one, 0.0 * one)
            else:
                cos = xp.where(zero, 0.0 * one, dot / xp.where(zero, one, _power(xp, norm, 0.5) * self.target_norm))
            d = 1.0 - (cat + cos * self.w_cont)
        else:
            acc = None
            for j, t in enumerate(self.target):
                x = xp.abs(scaled[:, j] - t)
                if np.isinf(self.p):
                    acc = x if acc is None else xp.maximum(acc, x)
                    continue
                x = x if self.p == 1 else x * x if self.p == 2 else _power(xp, x, self.p)
                acc = x if acc is None else acc + x
            if not (self.p == 1 or np.isinf(self.p)):
                acc = _power(xp, acc, 1.0 / self.p)
            d = cat + acc * self.w_cont
        # Rounding leaves identical records at +-1e-16; a duplicate is at distance exactly 0.
        return xp.where(xp.abs(d) < 1e-12, xp.zeros_like(d), d)  # +0.0, never -0.0


def _power(xp, x, exponent: float):
    """``x ** exponent`` (a square root for 0.5), the same bits for numpy and torch wherever they can be.

    numpy's ``sqrt`` is correctly rounded, as is CUDA's; torch's vectorised CPU kernel is
    not (an ulp off), so a CPU tensor goes through numpy.  ``pow`` of other exponents may
    differ by an ulp between numpy and a GPU's library.
    """
    if xp is np or x.device.type == "cpu":
        out = np.sqrt(np.asarray(x)) if exponent == 0.5 else np.power(np.asarray(x), exponent)
        return out if xp is np else xp.from_numpy(out)
    return xp.sqrt(x) if exponent == 0.5 else x**exponent


def _target_distance(target, target_enc: EncodedTable, encoder: TableEncoder, metric, p) -> TargetDistance:
    """The distance to ``target`` (encoded as ``target_enc``) in the encoder's codes and scaling."""
    target_codes = _frame_codes(target, encoder)[0][0]
    return TargetDistance(target_codes, target_enc.continuous[0].astype(np.float64), metric, p)


def _target_features(target_enc: EncodedTable) -> np.ndarray:
    return np.concatenate([target_enc.onehot[0], target_enc.continuous[0], [1.0, 0.0]]).astype(np.float32)


def preprocess(
    synthetic_datasets: Sequence[pd.DataFrame],
    target: pd.DataFrame,
    encoder: TableEncoder,
    top_x: int = 100,
    metric: str = "cosine",
    p: float | None = None,
    device=None,
) -> Preprocessed:
    """Turn synthetic datasets into the padded record matrices the network reads.

    For each dataset: its unique records (equal on every column) and their
    multiplicity, each one's distance to the target (:func:`vrlib.distance.pairwise_distances`),
    and the ``top_x`` closest by increasing distance, zero-padded and masked when there
    are fewer.  Work is batched over chunks of many datasets (per chunk, one ``np.unique``
    over dataset-tagged integer rows and one ``np.partition`` over a padded distance
    matrix); no Python loop runs over records.

    Parameters
    ----------
    synthetic_datasets : list of DataFrame, or vrlib.games.SyntheticDatasets
        Tables with exactly the encoder schema's columns, or a game's integer-coded batch.
    target : DataFrame
        One row, same columns.
    encoder : TableEncoder
        Fitted; the same one must encode every dataset an attack sees, so the scaling is shared.
    top_x : int
        Number of closest unique records kept (X = 100 in the paper).
    metric, p
        Distance, as in :func:`vrlib.distance.pairwise_distances` (eq. 5 cosine by default).
    device : torch.device or str, optional
        Run the search in torch on this device
        (:func:`~vrlib.attacks.attention.features_torch.preprocess_torch`: the same
        records, order and values); None: numpy, on the CPU.

    Returns
    -------
    Preprocessed
    """
    check_integer("top_x", top_x, minimum=1)
    datasets = _check_datasets(synthetic_datasets, encoder.schema)
    _check_target(target, encoder.schema)
    if device is not None:
        from vrlib.attacks.attention.features_torch import as_preprocessed, preprocess_torch

        n_onehot = sum(len(c) for c in encoder.categories_)
        return as_preprocessed(*preprocess_torch(datasets, target, encoder, top_x, metric, p, device), n_onehot)
    return _preprocess(datasets, target, encoder, top_x, metric, p)


def _preprocess(datasets, target, encoder, top_x, metric, p) -> Preprocessed:
    """:func:`preprocess` on inputs already checked."""
    target_enc = encoder.transform(target)
    target_row = _target_features(target_enc)
    n_features = target_row.shape[0]
    n_onehot = target_enc.onehot.shape[1]

    n_datasets = len(datasets)
    records = np.zeros((n_datasets, top_x, n_features), dtype=np.float32)
    mask = np.zeros((n_datasets, top_x), dtype=bool)
    n_unique_all = np.zeros(n_datasets, dtype=np.int64)
    radices = [len(c) for c in encoder.categories_]
    distance = _target_distance(target, target_enc, encoder, metric, p)

    for start, stop, tag, codes, cont in _chunks(datasets, encoder):
        if np.isnan(cont).any():
            raise VrlibError("a synthetic dataset has missing continuous values; drop or fill them first")
        key = _row_keys(tag, codes, cont, radices)
        # Keys sort by dataset first, so each dataset's unique records are contiguous.
        _, first, counts = np.unique(key, axis=0, return_index=True, return_counts=True)
        owner = tag[first]
        n_unique = np.bincount(owner, minlength=stop - start)
        group_start = np.concatenate([[0], np.cumsum(n_unique)[:-1]])
        unique_enc = _encode_codes(codes[first], cont[first], encoder)
        dist = distance(np, codes[first], unique_enc.continuous.astype(np.float64, copy=False))

        padded = np.full((stop - start, int(n_unique.max())), np.inf)
        padded[owner, np.arange(len(owner)) - group_start[owner]] = dist
        pos, valid = _closest(padded, n_unique, top_x)
        u = np.where(valid, group_start[:, None] + pos, 0)  # index into the chunk's unique records
        block = records[start:stop]
        block[..., :n_onehot] = unique_enc.onehot[u]
        block[..., n_onehot:-2] = unique_enc.continuous[u]
        block[..., -2] = counts[u]
        block[..., -1] = dist[u]
        block[~valid] = 0.0
        mask[start:stop] = valid
        n_unique_all[start:stop] = n_unique
    return Preprocessed(records, mask, target_row, n_unique_all)


# ------------------------------------------------------------------- category sets


class _CategorySets:
    """Union of each categorical column's categories: the target's first, in order, then new ones sorted."""

    def __init__(self, schema: Schema, target: pd.DataFrame):
        self.schema = schema
        self._base = {c: list(_values(target[c])) for c in schema.categorical}
        self._known = {c: set(v) for c, v in self._base.items()}
        self._extra: dict = {c: set() for c in schema.categorical}
        self._seen_dtypes: set = set()

    def add_values(self, column: str, values) -> None:
        self._extra[column].update(v for v in values if v not in self._known[column])

    def add_sets(self, mapping) -> None:
        for c in self.schema.categorical:
            self.add_values(c, mapping[c])

    def add_frame(self, df: pd.DataFrame) -> None:
        dtypes = df.dtypes
        for c in self.schema.categorical:
            dtype = dtypes[c]
            if isinstance(dtype, pd.CategoricalDtype):
                if dtype not in self._seen_dtypes:  # datasets of one game share their dtypes
                    self._seen_dtypes.add(dtype)
                    self.add_values(c, dtype.categories)
            else:
                self.add_values(c, pd.unique(df[c]))

    def result(self) -> dict:
        """Column -> category Index."""
        return {c: pd.Index(self._base[c] + sorted(self._extra[c], key=str)) for c in self.schema.categorical}


def _values(column: pd.Series):
    """A column's category set (categorical dtype) or its distinct values."""
    return column.cat.categories if isinstance(column.dtype, pd.CategoricalDtype) else pd.unique(column)
