"""The target attention attack (achilles appendix A): fitted on labelled shadow datasets, many targets at once.

:class:`AttentionAttack` trains a :class:`~vrlib.attacks.attention.network.TargetAttentionNet`
on the preprocessed shadow datasets (:mod:`~vrlib.attacks.attention.features`) with BCE
loss, Adamax and the best validation loss kept (:mod:`~vrlib.attacks.attention.training`);
:func:`fit_attacks` fits many targets' attacks side by side.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import torch
from torch import nn

from vrlib import distance, encoding
from vrlib.attacks.attention import features, features_torch, network, training
from vrlib.attacks.attention.features import (
    Preprocessed,
    _CategorySets,
    _check_datasets,
    _check_labels,
    _check_table,
    _check_target,
    _is_coded,
    _preprocess,
    preprocess,
)
from vrlib.attacks.attention.features_torch import preprocess_torch
from vrlib.attacks.attention.network import TargetAttentionNet
from vrlib.attacks.attention.training import sparse_inputs, train_group
from vrlib.attacks.base import Attack
from vrlib.data import Schema
from vrlib.encoding import TableEncoder
from vrlib.errors import VrlibError
from vrlib.params import check_integer, check_number
from vrlib.torch_setup import resolve_device, torch_threads

__all__ = ["AttentionAttack", "fit_attacks"]


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
        "auto" uses a GPU when one is present.  On a GPU the search for each dataset's
        closest records runs there too (:mod:`~vrlib.attacks.attention.features_torch`:
        the same records as the numpy path, which is faster on a CPU).
    gradients : {"auto", "autograd", "hand-written"}
        How training computes gradients: autograd on the stacked model, or the
        hand-written backward pass (the same results up to float rounding).  "auto": the
        faster on the device, as measured: hand-written on a CPU
        (``benchmarks/bench_attention.py``), autograd on a GPU (on an H200, 128 targets
        grouped: 12.3 against 14.8 s per target, preprocessing included; timed side by
        side by ``benchmarks/bench_gpu.py``), where each step's cost is its kernel
        launches and the hand-written pass launches more.
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

    # the code it calls (its own package, and the encoding and distances of its features):
    # part of the cache key of every result it shapes
    source_dependencies = (features, features_torch, network, training, encoding, distance)

    GRADIENTS = ("auto", "autograd", "hand-written")

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
        gradients: str = "auto",
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
        self.gradients = gradients
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
        if self.gradients not in self.GRADIENTS:
            raise VrlibError(f"gradients must be one of {self.GRADIENTS}, got {self.gradients!r}")

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
        device = self.device_ if self.device_.type != "cpu" else None
        return preprocess(synthetic_datasets, self.target_, self.encoder_, self.top_x, self.metric, self.p, device)

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
        widths = [len(c) for c in self.encoder_.categories_]
        n_onehot = int(sum(widths))
        args = (datasets, self.target_, self.encoder_, self.top_x, self.metric, self.p)
        if device.type == "cpu":
            pre = _preprocess(*args)
            codes, dense = sparse_inputs(pre.records, n_onehot, widths)
            mask, target_row = pre.mask, pre.target
        else:  # on the GPU, straight to codes and dense features
            codes, dense, mask, target_row, _ = preprocess_torch(*args, device)
        self.n_features_ = n_onehot + int(dense.shape[2])
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
            inputs=(codes, dense, mask, target_row),
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
            self.gradients,
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
    (:mod:`vrlib.attacks.attention.training`); each keeps its own seed, split, batches,
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
                autograd=None if lead.gradients == "auto" else lead.gradients == "autograd",
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
