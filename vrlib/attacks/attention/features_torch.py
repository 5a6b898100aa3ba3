"""The preprocessing of :mod:`~vrlib.attacks.attention.features` in torch, for a GPU.

:func:`preprocess_torch` finds, for each synthetic dataset, the same ``top_x`` unique
records closest to the target as the numpy path, in the same order, with the same
values (a test runs both on the CPU, ties and every metric included).  Instead of
``np.unique`` and ``np.partition`` it sorts every record of a chunk of datasets by
(dataset, distance, record values) in one lexicographic sort (stable sorts, least
significant key first); the unique records of a dataset are then runs of equal values,
already in the order the numpy path gives them (by distance, ties by the records'
values), and the first ``top_x`` runs of each dataset are kept.  Chunks of datasets
bound the memory used (about 100 bytes per record of a chunk).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from vrlib.attacks.attention.features import (
    Preprocessed,
    _chunks,
    _is_coded,
    _pack_codes,
    _target_distance,
    _target_features,
    _unseen,
)
from vrlib.encoding import TableEncoder
from vrlib.errors import VrlibError

__all__ = ["preprocess_torch"]

# Records of synthetic data per chunk on the device: about 200 MB of working memory.
CHUNK_ROWS = 2_000_000


def _lexsort(keys) -> torch.Tensor:
    """Permutation that sorts rows by ``keys`` (1-D int64 tensors, most significant first)."""
    perm = None
    for key in reversed(keys):
        k = key if perm is None else key[perm]
        order = torch.sort(k, stable=True).indices
        perm = order if perm is None else perm[order]
    return perm


def _device_chunks(datasets, encoder: TableEncoder, device, chunk_rows: int):
    """Yield ``(start, stop, tag, codes, continuous)`` as tensors on ``device``, a chunk of whole datasets at a time.

    A game's coded batch is translated to the encoder's category codes on the device;
    DataFrames go through the numpy path's chunks.
    """
    schema = encoder.schema
    if not _is_coded(datasets):
        for start, stop, tag, codes, cont in _chunks(datasets, encoder):
            yield start, stop, *(torch.from_numpy(a).to(device) for a in (tag, codes, cont))
        return
    n, s = datasets.codes.shape[:2]
    lookup = [
        torch.from_numpy(cats.get_indexer(pd.Index(datasets.categories[c])).astype(np.int64)).to(device)
        for c, cats in zip(schema.categorical, encoder.categories_)
    ]
    step = max(1, chunk_rows // s)
    for start in range(0, n, step):
        stop = min(n, start + step)
        rows = (stop - start) * s
        raw = np.ascontiguousarray(datasets.codes[start:stop])
        if raw.dtype not in (np.uint8, np.int8, np.int16, np.int32, np.int64):
            raw = raw.astype(np.int32)  # torch's support of wider unsigned types is partial
        raw = torch.from_numpy(raw).to(device).reshape(rows, len(schema.categorical)).long()
        codes = torch.empty_like(raw)
        for j, c in enumerate(schema.categorical):
            codes[:, j] = lookup[j][raw[:, j]]
        if len(schema.categorical) and bool((codes < 0).any()):
            bad = int(torch.nonzero((codes < 0).any(0))[0, 0])
            raise _unseen(schema.categorical[bad])
        cont = torch.from_numpy(np.ascontiguousarray(datasets.continuous[start:stop])).to(device)
        cont = cont.reshape(rows, len(schema.continuous)).double()
        tag = torch.arange(stop - start, device=device).repeat_interleave(s)
        yield start, stop, tag, codes, cont


def preprocess_torch(datasets, target, encoder: TableEncoder, top_x: int, metric: str, p, device, *, chunk_rows=None):
    """The closest unique records of each dataset, on a torch device, as codes and dense features.

    Inputs already checked (see :func:`vrlib.attacks.attention.features.preprocess`).

    Returns
    -------
    codes : ndarray (n, top_x, n_categorical), int64
        Column of the one-hot block holding each kept record's category (padding: the
        block's first), as :func:`vrlib.attacks.attention.training.sparse_inputs` gives them.
    dense : ndarray (n, top_x, n_continuous + 2), float32
        ``[scaled continuous | multiplicity | distance]``, padding 0.
    mask : ndarray (n, top_x), bool
    target_row : ndarray (n_features,), float32
    n_unique : ndarray (n,), int64
    """
    device = torch.device(device)
    chunk_rows = CHUNK_ROWS if chunk_rows is None else chunk_rows
    target_enc = encoder.transform(target)
    distance = _target_distance(target, target_enc, encoder, metric, p)
    widths = [len(c) for c in encoder.categories_]
    offsets = torch.tensor(np.concatenate([[0], np.cumsum(widths)[:-1]]), dtype=torch.int64, device=device)
    n_cat, n_cont = len(widths), len(encoder.schema.continuous)
    lo = torch.from_numpy(np.asarray(encoder.min_, dtype=np.float64)).to(device)
    scale = torch.from_numpy(np.asarray(encoder.scale_, dtype=np.float64)).to(device)
    enc_dtype = torch.from_numpy(np.zeros(0, dtype=encoder.dtype)).dtype

    n = len(datasets)
    out_codes = np.zeros((n, top_x, n_cat), dtype=np.int64)
    out_dense = np.zeros((n, top_x, n_cont + 2), dtype=np.float32)
    out_mask = np.zeros((n, top_x), dtype=bool)
    n_unique_all = np.zeros(n, dtype=np.int64)
    for start, stop, tag, codes, cont in _device_chunks(datasets, encoder, device, chunk_rows):
        m = stop - start
        if n_cont and bool(torch.isnan(cont).any()):
            raise VrlibError("a synthetic dataset has missing continuous values; drop or fill them first")
        cont = cont + 0.0  # -0.0 -> 0.0, so that equal values have equal bits
        scaled = ((cont - lo) / scale).to(enc_dtype)
        dist = distance(torch, codes, scaled.double())
        # Distances are >= 0 and never -0.0, so their bits sort as their values do.
        values = _pack_codes(codes, widths) + list(cont.view(torch.int64).T)
        perm = _lexsort([tag, dist.view(torch.int64)] + values)
        # Runs of equal (dataset, values) in sorted order are the unique records.
        new = torch.zeros(len(perm), dtype=torch.bool, device=device)
        new[0] = True
        for key in [tag] + values:
            k = key[perm]
            new[1:] |= k[1:] != k[:-1]
        first = torch.nonzero(new).squeeze(1)
        counts = torch.diff(first, append=first.new_tensor([len(perm)]))
        rep = perm[first]  # a row of each unique record
        owner = tag[rep]
        n_unique = torch.bincount(owner, minlength=m)
        rank = torch.arange(len(rep), device=device) - (torch.cumsum(n_unique, 0) - n_unique)[owner]
        keep = rank < top_x
        o, r, rep = owner[keep], rank[keep], rep[keep]
        c = torch.zeros((m, top_x, n_cat), dtype=torch.int64, device=device) + offsets
        c[o, r] = codes[rep] + offsets
        d = torch.zeros((m, top_x, n_cont + 2), dtype=torch.float32, device=device)
        d[o, r, :n_cont] = scaled[rep].float()
        d[o, r, n_cont] = counts[keep].float()
        d[o, r, n_cont + 1] = dist[rep].float()
        valid = torch.zeros((m, top_x), dtype=torch.bool, device=device)
        valid[o, r] = True
        out_codes[start:stop] = c.cpu().numpy()
        out_dense[start:stop] = d.cpu().numpy()
        out_mask[start:stop] = valid.cpu().numpy()
        n_unique_all[start:stop] = n_unique.cpu().numpy()
    return out_codes, out_dense, out_mask, _target_features(target_enc), n_unique_all


def as_preprocessed(codes, dense, mask, target_row, n_unique, n_onehot: int) -> Preprocessed:
    """The records (one-hot blocks rebuilt from the codes) that :func:`~vrlib.attacks.attention.features.preprocess` gives."""
    n, x, c = codes.shape
    records = np.zeros((n, x, n_onehot + dense.shape[2]), dtype=np.float32)
    if c:
        n_idx, x_idx = np.indices((n, x))
        records[n_idx[..., None], x_idx[..., None], codes] = 1.0
        records[~mask] = 0.0
    records[..., n_onehot:] = dense
    return Preprocessed(records, mask, target_row, n_unique)
