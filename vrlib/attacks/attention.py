"""Target attention (achilles, appendix A): a network that reads the synthetic records nearest the target.

Instead of hand-made features, the attack feeds each synthetic dataset itself to a small
attention network.  Preprocessing (:func:`preprocess`) turns one synthetic dataset into a
fixed-size matrix: its unique records, each with its one-hot + min-max scaled values, its
multiplicity and its eq. 5 distance to the target; the ``top_x`` closest, ordered by
increasing distance, zero-padded with a mask when there are fewer.  The target is encoded
the same way, with multiplicity 1 and distance 0.

The network (:class:`TargetAttentionNet`) embeds records and target with one MLP, takes
a query from the target and keys and values from the records, and turns the
attention-weighted sum of the values into a membership logit with a second MLP.
:class:`AttentionAttack` trains it on labelled shadow datasets (BCE loss, Adamax, best
validation loss kept) and follows the privacy-game protocol of :mod:`vrlib.attacks`:
``fit(synthetic_datasets, labels, target)`` then ``predict_proba(synthetic_datasets)``,
where the datasets are a list of DataFrames or a :class:`vrlib.games.SyntheticDatasets`.
The one-hot + min-max encoding is fitted once, in ``fit`` (on the shadow datasets plus
the target, or on a ``reference`` table), and reused for every dataset scored later.

Where we read the paper one way among several (each also noted where it applies):

* Continuous values are min-max scaled (SPEC §2), not left raw as the appendix says.
* Alg. 1 scores records with ``<q_t, v_j>`` and so never uses ``W_k``; the text speaks of
  queries and keys, so we score with keys, ``<q_t, k_j>`` (standard attention).
* The learning rate is 1e-3 (SPEC); the final text's "10e-3" would literally be 1e-2.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
import torch
from torch import nn

from vrlib.attacks.base import Attack
from vrlib.data import Schema
from vrlib.distance import pairwise_distances
from vrlib.encoding import EncodedTable, TableEncoder
from vrlib.errors import VrlibError
from vrlib.attacks.attention_training import sparse_inputs, train_group
from vrlib.params import check_integer, check_number
from vrlib.torch_setup import resolve_device, torch_threads

__all__ = ["AttentionAttack", "Preprocessed", "TargetAttentionNet", "fit_attacks", "preprocess"]

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


def _row_keys(tag: np.ndarray, codes: np.ndarray, cont: np.ndarray, radices) -> np.ndarray:
    """Integer rows that are equal exactly when two records of the same dataset are equal.

    The dataset tag and the category codes are packed, most significant first, into as
    few int64 words as fit (so sorting the keys sorts by dataset, then lexicographically
    by codes); each continuous column adds the bit pattern of its raw float64 value.
    Fewer, wider columns make ``np.unique(axis=0)`` several times faster.
    """
    columns = [(tag.astype(np.int64), int(tag.max()) + 1)]
    columns += [(codes[:, j], max(int(r), 1)) for j, r in enumerate(radices)]
    words, word, span = [], None, 1
    for values, radix in columns:
        if word is not None and span * radix < 2**62:
            word, span = word * radix + values, span * radix
        else:
            if word is not None:
                words.append(word)
            word, span = values, radix
    words.append(word)
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


def _target_features(target_enc: EncodedTable) -> np.ndarray:
    return np.concatenate([target_enc.onehot[0], target_enc.continuous[0], [1.0, 0.0]]).astype(np.float32)


def preprocess(
    synthetic_datasets: Sequence[pd.DataFrame],
    target: pd.DataFrame,
    encoder: TableEncoder,
    top_x: int = 100,
    metric: str = "cosine",
    p: float | None = None,
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

    Returns
    -------
    Preprocessed
    """
    check_integer("top_x", top_x, minimum=1)
    datasets = _check_datasets(synthetic_datasets, encoder.schema)
    _check_target(target, encoder.schema)
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
        dist = pairwise_distances(unique_enc, target_enc, metric=metric, p=p)[:, 0]

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


# --------------------------------------------------------------------------- model


class TargetAttentionNet(nn.Module):
    """The target attention network of achilles Alg. 1 (returns a logit, not a probability).

    Parameters
    ----------
    n_features : int
        F', the width of a preprocessed record.
    embedding_hidden, embedding_size : int
        Hidden width and output width F_emb of the embedding MLP (20 and 20).
    attention_size : int
        F_att, width of the query, keys and values (15).
    prediction_hidden : int
        Hidden width of the prediction MLP (10).
    dropout : float
        Dropout after each MLP's hidden ReLU layer (0.15).
    """

    def __init__(
        self,
        n_features: int,
        embedding_hidden: int = 20,
        embedding_size: int = 20,
        attention_size: int = 15,
        prediction_hidden: int = 10,
        dropout: float = 0.15,
    ):
        super().__init__()
        self.embed = nn.Sequential(
            nn.Linear(n_features, embedding_hidden),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(embedding_hidden, embedding_size),
        )
        self.query = nn.Linear(embedding_size, attention_size, bias=False)
        self.key = nn.Linear(embedding_size, attention_size, bias=False)
        self.value = nn.Linear(embedding_size, attention_size, bias=False)
        self.predict = nn.Sequential(
            nn.Linear(attention_size, prediction_hidden),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(prediction_hidden, 1),
        )

    def _attend(self, records, mask, target):
        """Attention weights (batch, X) and values (batch, X, F_att)."""
        e = self.embed(records)  # (batch, X, F_emb)
        q = self.query(self.embed(target))  # (F_att,): one target for all datasets
        k, v = self.key(e), self.value(e)
        scores = (k * q.unsqueeze(-2)).sum(-1)  # <q_t, k_j>
        # Padding gets -inf, hence weight 0; every dataset has at least one real record.
        scores = scores.masked_fill(~mask, float("-inf"))
        return torch.softmax(scores, dim=-1), v

    def attention(self, records: torch.Tensor, mask: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Attention weights (batch, X) of the target over each dataset's records; 0 on padding."""
        return self._attend(records, mask, target)[0]

    def forward(self, records: torch.Tensor, mask: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Membership logits (batch,) of ``records`` (batch, X, F'), ``mask`` (batch, X), ``target`` (F',)."""
        weights, values = self._attend(records, mask, target)
        pooled = (weights.unsqueeze(-1) * values).sum(-2)  # dataset-level embedding D_att
        return self.predict(pooled).squeeze(-1)


# -------------------------------------------------------------------------- attack


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


class AttentionAttack(Attack):
    """Target attention membership inference attack (achilles appendix A).

    Parameters
    ----------
    schema : Schema
        Columns of the real table (and so of every synthetic dataset and the target).
    top_x : int
        Number of unique synthetic records closest to the target that the network reads (X = 100).
    embedding_hidden, embedding_size, attention_size, prediction_hidden, dropout
        Network sizes, see :class:`TargetAttentionNet` (paper: 20, 20, 15, 10, 0.15).
    lr : float
        Adamax learning rate (1e-3).
    batch_size : int
        Datasets per gradient step (20).
    max_epochs : int
        Maximum passes over the training datasets (500).
    validation_fraction : float
        Fraction of the shadow datasets held out (stratified by label) to choose the
        epoch whose weights are kept: the one with the lowest validation loss (0.1).
        With 0, the weights after the last epoch are kept.
    patience : int or None
        Stop when the validation loss has not improved for this many epochs; None
        trains ``max_epochs`` epochs (the paper).
    metric : {"cosine", "minkowski"}
        Distance to the target, eq. 5 by default; ``p`` is the Minkowski order.
    p : float, optional
    reference : DataFrame, optional
        Table whose column ranges (and category sets) fix the one-hot + min-max
        encoding, e.g. the real table. By default the encoder is fitted on the training
        synthetic datasets plus the target. Either way it is fitted once, in
        :meth:`fit`, and the same scaling is applied to every dataset and the target.
    device : {"auto", "cpu", "cuda"} or torch.device
        "auto" uses a GPU when one is present.
    eval_batch_size : int
        Datasets per forward pass when computing validation losses and predictions.
    n_threads : int or None
        CPU threads torch may use during :meth:`fit` and :meth:`predict_proba` (restored
        afterwards). The default 1 is fastest here: the matrices are tiny (20 datasets x
        100 records x ~100 features), so threads cost more than they save, and the
        experiments run several attacks side by side. None leaves torch's setting alone.
    deterministic : bool
        Train under ``torch.use_deterministic_algorithms(True)`` (warn-only), restored
        afterwards. The CPU kernels used here are deterministic anyway; this guards GPU
        runs. The first call in a process imports part of torch's compiler stack (a few
        seconds, once).
    seed : int
        Seeds the weights, the validation split, the batch order and dropout.
    verbose : bool
        Print the losses every 50 epochs.

    Attributes
    ----------
    encoder_ : TableEncoder
        The fitted one-hot + min-max encoder.
    target_ : DataFrame
        The target record.
    model_ : TargetAttentionNet
        The network with the kept (best-validation) weights, on ``device_``, in eval mode.
    device_ : torch.device
    n_features_ : int
        F', width of a preprocessed record.
    history_ : dict of list of float
        Per epoch: ``"train_loss"`` and ``"val_loss"`` (mean BCE).
    best_epoch_ : int
        Epoch (1-based) whose weights were kept.
    n_epochs_ : int
        Epochs actually run (fewer than ``max_epochs`` with early stopping).
    timings_ : dict of float
        Seconds spent in ``"preprocess"`` and ``"train"`` during :meth:`fit` (trained in a
        group by :func:`fit_attacks`: the group's training time over its ``"group_size"``).

    Notes
    -----
    Everything random comes from ``seed``: the initial weights (built in a forked
    torch RNG state), the validation split and batch order (a numpy generator) and the
    dropout masks (the attack's own generator: numpy's PCG64 on the CPU, a
    ``torch.Generator`` on a GPU, so the two devices draw different masks); training runs by default under
    deterministic algorithms, and global settings are restored afterwards, so the same
    seed on the same machine gives the same predictions, whether the attack is fitted
    alone or with others by :func:`fit_attacks`.
    """

    def __init__(
        self,
        schema: Schema,
        top_x: int = 100,
        embedding_hidden: int = 20,
        embedding_size: int = 20,
        attention_size: int = 15,
        prediction_hidden: int = 10,
        dropout: float = 0.15,
        lr: float = 1e-3,
        batch_size: int = 20,
        max_epochs: int = 500,
        validation_fraction: float = 0.1,
        patience: int | None = None,
        metric: str = "cosine",
        p: float | None = None,
        reference: pd.DataFrame | None = None,
        device="auto",
        eval_batch_size: int = 1000,
        n_threads: int | None = 1,
        deterministic: bool = True,
        seed: int = 0,
        verbose: bool = False,
    ):
        self.schema = schema
        self.top_x = top_x
        self.embedding_hidden = embedding_hidden
        self.embedding_size = embedding_size
        self.attention_size = attention_size
        self.prediction_hidden = prediction_hidden
        self.dropout = dropout
        self.lr = lr
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.metric = metric
        self.p = p
        self.reference = reference
        self.device = device
        self.eval_batch_size = eval_batch_size
        self.n_threads = n_threads
        self.deterministic = deterministic
        self.seed = seed
        self.verbose = verbose

    # ------------------------------------------------------------------ helpers

    def _check_params(self) -> None:
        if not isinstance(self.schema, Schema):
            raise VrlibError(f"schema must be a vrlib Schema, got {type(self.schema).__name__}")
        for name in (
            "top_x",
            "batch_size",
            "max_epochs",
            "eval_batch_size",
            "embedding_hidden",
            "embedding_size",
            "attention_size",
            "prediction_hidden",
        ):
            check_integer(name, getattr(self, name), minimum=1)
        check_integer("n_threads", self.n_threads, minimum=1, optional=True)
        check_integer(
            "patience", self.patience, minimum=1, optional=True, want="an integer >= 1 or None (no early stopping)"
        )
        check_number("validation_fraction", self.validation_fraction, minimum=0, below=1)
        if self.patience is not None and self.validation_fraction == 0:
            raise VrlibError("early stopping (patience) needs a validation set; set validation_fraction > 0")
        check_number("dropout", self.dropout, minimum=0, below=1)
        check_number("lr", self.lr, above=0)

    def _fit_encoder(self, datasets, target: pd.DataFrame) -> TableEncoder:
        """Fit the one encoder of this attack on ``reference``, or on the datasets plus the target.

        Min-max scaling only needs each continuous column's min and max, and one-hot
        encoding the category sets, so these are gathered with numpy and the encoder is
        fitted on a two-row table that carries exactly them (instead of concatenating
        every row of every dataset).
        """
        schema = self.schema
        if self.reference is not None:
            _check_table(self.reference, schema, "reference")
            frame = self.reference[list(schema.columns)].copy()
            for c in schema.categorical:
                if not isinstance(frame[c].dtype, pd.CategoricalDtype):
                    frame[c] = pd.Categorical(frame[c])
            if frame[list(schema.continuous)].isna().to_numpy().any():
                raise VrlibError("reference has missing continuous values; drop or fill them first")
            return TableEncoder(schema).fit(frame)

        categories = _CategorySets(schema, target)
        cont_cols = list(schema.continuous)
        lo = hi = target[cont_cols].to_numpy(dtype=np.float64)[0]
        if _is_coded(datasets):
            categories.add_sets(datasets.categories)
            if cont_cols:
                flat = datasets.continuous.reshape(-1, len(cont_cols))
                lo, hi = np.minimum(lo, flat.min(axis=0)), np.maximum(hi, flat.max(axis=0))
        else:
            for df in datasets:
                categories.add_frame(df)
                if cont_cols:
                    values = df[cont_cols].to_numpy(dtype=np.float64)
                    lo, hi = np.minimum(lo, values.min(axis=0)), np.maximum(hi, values.max(axis=0))
        if np.isnan(lo).any() or np.isnan(hi).any():
            raise VrlibError("a synthetic dataset has missing continuous values; drop or fill them first")
        data = {c: pd.Categorical([cats[0]] * 2, categories=cats) for c, cats in categories.result().items()}
        data.update({c: [lo[j], hi[j]] for j, c in enumerate(cont_cols)})
        return TableEncoder(schema).fit(pd.DataFrame(data)[list(schema.columns)])

    def _split(self, y: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Stratified train / validation indices (at least one validation dataset).

        Each class is shuffled and its members get evenly spaced ranks in (0, 1); the
        ``round(fraction * n)`` smallest ranks over both classes form the validation
        set, so each class gets its share (up to rounding) even when it is small.
        """
        n = len(y)
        if self.validation_fraction == 0:
            return np.arange(n), np.array([], dtype=np.int64)
        n_val = max(1, int(round(self.validation_fraction * n)))
        if n_val >= n:
            raise VrlibError(
                f"{n} shadow datasets are too few for a validation fraction of {self.validation_fraction}; "
                "pass more datasets or set validation_fraction=0"
            )
        rank = np.empty(n)
        for label in (0, 1):
            idx = rng.permutation(np.flatnonzero(y == label))
            rank[idx] = (np.arange(len(idx)) + 0.5) / len(idx)
        order = np.lexsort((rng.random(n), rank))  # ties between classes broken at random
        return np.sort(order[n_val:]), np.sort(order[:n_val])

    def _tensors(self, pre: Preprocessed, device: torch.device):
        return (
            torch.from_numpy(pre.records).to(device),
            torch.from_numpy(pre.mask).to(device),
            torch.from_numpy(pre.target).to(device),
        )

    def _logits(self, model: nn.Module, records, mask, target) -> torch.Tensor:
        out = [
            model(records[i : i + self.eval_batch_size], mask[i : i + self.eval_batch_size], target)
            for i in range(0, len(records), self.eval_batch_size)
        ]
        return torch.cat(out)

    # --------------------------------------------------------------------- API

    def transform(self, synthetic_datasets) -> Preprocessed:
        """Preprocess datasets with the fitted encoder and target (see :func:`preprocess`)."""
        self._check_fitted()
        return preprocess(synthetic_datasets, self.target_, self.encoder_, self.top_x, self.metric, self.p)

    def fit(self, synthetic_datasets, labels, target: pd.DataFrame) -> "AttentionAttack":
        """Train the network on labelled shadow datasets.

        Parameters
        ----------
        synthetic_datasets : list of DataFrame, or vrlib.games.SyntheticDatasets
            Shadow synthetic datasets, with the real table's columns.
        labels : array-like of {0, 1}, or None
            1 if the target was in the dataset the generator was trained on, else 0.
            None: take them from a ``SyntheticDatasets``.
        target : DataFrame
            The target record, one row.

        Returns
        -------
        self

        See Also
        --------
        fit_attacks : trains many targets' attacks at once, each with the result it gets here.
        """
        fit_attacks([(self, synthetic_datasets, labels, target)])
        return self

    def _prepare(self, synthetic_datasets, labels, target: pd.DataFrame) -> dict:
        """Check inputs, fit the encoder, preprocess, split, and build the initial network (the per-target part of fit)."""
        self._check_params()
        datasets = _check_datasets(synthetic_datasets, self.schema)
        if labels is None:
            if not _is_coded(datasets):
                raise VrlibError("labels are required unless the datasets come with them (SyntheticDatasets)")
            labels = datasets.labels
        y = _check_labels(labels, len(datasets))
        _check_target(target, self.schema)
        device = resolve_device(self.device)

        t0 = time.perf_counter()
        self.target_ = target[list(self.schema.columns)].copy()
        self.encoder_ = self._fit_encoder(datasets, self.target_)
        pre = _preprocess(datasets, self.target_, self.encoder_, self.top_x, self.metric, self.p)
        widths = [len(c) for c in self.encoder_.categories_]
        n_onehot = int(sum(widths))
        codes, dense = sparse_inputs(pre.records, n_onehot, widths)
        self.n_features_ = int(pre.records.shape[2])
        self.device_ = device

        rng = np.random.default_rng(self.seed)
        train_idx, val_idx = self._split(y, rng)
        dropout_seed = int(rng.integers(2**62))
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            net = TargetAttentionNet(
                self.n_features_,
                self.embedding_hidden,
                self.embedding_size,
                self.attention_size,
                self.prediction_hidden,
                self.dropout,
            )
        return dict(
            net=net,
            inputs=(codes, dense, pre.mask, pre.target),
            y=y,
            split=(train_idx, val_idx),
            rng=rng,
            dropout_seed=dropout_seed,
            n_onehot=n_onehot,
            preprocess_s=time.perf_counter() - t0,
        )

    def _group_key(self, prepared: dict) -> tuple:
        """Attacks with equal keys can be trained as one grouped model."""
        train_idx, val_idx = prepared["split"]
        shapes = (self.n_features_, prepared["n_onehot"], prepared["inputs"][0].shape, len(train_idx), len(val_idx))
        settings = (
            self.top_x,
            self.embedding_hidden,
            self.embedding_size,
            self.attention_size,
            self.prediction_hidden,
            self.dropout,
            self.lr,
            self.batch_size,
            self.max_epochs,
            self.patience,
            self.eval_batch_size,
            self.n_threads,
            self.deterministic,
            str(self.device_),
        )
        return shapes + settings

    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise VrlibError("this AttentionAttack is not fitted; call fit(synthetic_datasets, labels, target) first")

    def predict_proba(self, synthetic_datasets) -> np.ndarray:
        """Probability that the target was in the training data of each synthetic dataset.

        Parameters
        ----------
        synthetic_datasets : list of DataFrame, or vrlib.games.SyntheticDatasets

        Returns
        -------
        ndarray of shape (n_datasets,)
            P(IN), float64.
        """
        self._check_fitted()
        pre = self.transform(synthetic_datasets)
        records, mask, target = self._tensors(pre, self.device_)
        self.model_.eval()
        with torch.no_grad(), torch_threads(self.n_threads):
            proba = torch.sigmoid(self._logits(self.model_, records, mask, target))
        return proba.cpu().numpy().astype(np.float64)

    def score(self, synthetic_datasets) -> np.ndarray:
        """Membership score of each synthetic dataset (higher = the target more likely IN): :meth:`predict_proba`."""
        return self.predict_proba(synthetic_datasets)

    def attention_weights(self, synthetic_datasets) -> np.ndarray:
        """Attention weights (n_datasets, top_x) the fitted network gives each kept record (0 on padding)."""
        self._check_fitted()
        pre = self.transform(synthetic_datasets)
        records, mask, target = self._tensors(pre, self.device_)
        with torch.no_grad(), torch_threads(self.n_threads):
            return self.model_.attention(records, mask, target).cpu().numpy().astype(np.float64)


def fit_attacks(jobs, max_group: int = 16) -> list:
    """Fit many targets' attacks at once: what ``attack.fit`` does for each, trained as grouped models.

    The attacks whose shapes and settings agree (those of one game's targets) are trained
    side by side, ``max_group`` at a time, as one model with stacked weights
    (:mod:`vrlib.attacks.attention_training`); each keeps its own seed, split, batches,
    dropout and early stopping, so each result equals that of ``attack.fit`` alone.

    Parameters
    ----------
    jobs : iterable of (AttentionAttack, synthetic_datasets, labels, target)
        Per target, an unfitted attack (seeds may differ) and the arguments of its
        :meth:`AttentionAttack.fit`.  Consumed lazily: each job's datasets are
        preprocessed as it comes and not kept, and a group is trained as soon as it is
        full, so a generator of jobs keeps at most one group's inputs in memory.
    max_group : int
        Most targets trained together (memory grows with it: about 40 MB of inputs per
        target at the paper's 4,000 shadow datasets on Adult, and about as much again while a group trains).

    Returns
    -------
    list of AttentionAttack
        The attacks, fitted, in the order of ``jobs``.
    """
    check_integer("max_group", max_group, minimum=1)
    attacks, pending = [], {}
    for job in jobs:
        if not (isinstance(job, tuple) and len(job) == 4 and isinstance(job[0], AttentionAttack)):
            raise VrlibError(
                "each job of fit_attacks must be a tuple (AttentionAttack, synthetic_datasets, labels, target)"
            )
        attack, datasets, labels, target = job
        prepared = attack._prepare(datasets, labels, target)
        attacks.append(attack)
        members = pending.setdefault(attack._group_key(prepared), [])
        members.append((attack, prepared))
        if len(members) == max_group:
            _train_members(*zip(*members))
            members.clear()
    for members in pending.values():
        if members:
            _train_members(*zip(*members))
    return attacks


def _train_members(attacks, prepared) -> None:
    """Train attacks of one group key as one grouped model, then set each one's fitted attributes."""
    lead = attacks[0]
    device = lead.device_
    prev_det = torch.are_deterministic_algorithms_enabled()
    prev_warn = torch.is_deterministic_algorithms_warn_only_enabled()
    t0 = time.perf_counter()
    try:
        if lead.deterministic:
            torch.use_deterministic_algorithms(True, warn_only=True)
        with torch_threads(lead.n_threads):
            results = train_group(
                [p["net"] for p in prepared],
                [p["inputs"] for p in prepared],
                [p["y"] for p in prepared],
                [p["split"] for p in prepared],
                [p["rng"] for p in prepared],
                [p["dropout_seed"] for p in prepared],
                n_onehot=prepared[0]["n_onehot"],
                lr=lead.lr,
                batch_size=lead.batch_size,
                max_epochs=lead.max_epochs,
                patience=lead.patience,
                eval_batch_size=lead.eval_batch_size,
                device=device,
                verbose=lead.verbose and len(attacks) == 1,
            )
    finally:
        if lead.deterministic:
            torch.use_deterministic_algorithms(prev_det, warn_only=prev_warn)
    train_s = (time.perf_counter() - t0) / len(attacks)
    for attack, prep, (net, history, best_epoch, n_epochs) in zip(attacks, prepared, results):
        attack.model_ = net.to(device).eval()
        attack.history_ = history
        attack.best_epoch_ = best_epoch
        attack.n_epochs_ = n_epochs
        attack.timings_ = {"preprocess": prep["preprocess_s"], "train": train_s, "group_size": len(attacks)}
