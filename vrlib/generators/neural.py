"""TVAE and CTGAN (Xu et al. 2019) through the ``ctgan`` package, seeded and with exact dtypes.

The package does the modelling; this module gives it the project's protocol.
Categorical columns are handed over as integer codes (declared discrete), so the
output maps back onto exactly the input's categories; numpy and torch are seeded
through ``ctgan``'s own random-state mechanism for both ``fit`` and ``sample``, so
the same seeds give the same rows (on the same device and thread count).  TVAE trains
through :func:`_lean_tvae_class`, ctgan's own training step without its per-epoch
overheads: the same parameters bit for bit, in about three quarters of the time on
the few hundred rows DOMIAS trains on (``benchmarks/bench_domias.py``).  PyTorch is
imported only when one of these generators is fitted.
"""

from __future__ import annotations

import contextlib
import functools
import time

import numpy as np
import pandas as pd

from vrlib.errors import VrlibError
from vrlib.generators.base import Generator
from vrlib.params import check_integer
from vrlib.torch_setup import resolve_device, torch_threads


@functools.cache  # one class per process: built on first use, so torch is imported only then
def _lean_tvae_class():
    """``ctgan.TVAE`` whose ``fit`` skips what costs more than training on small tables.

    ctgan's loop builds a ``DataLoader`` every epoch (one ``__getitem__`` per row, then a
    stack) and appends each epoch's losses to a DataFrame with ``pd.concat`` (quadratic in
    epochs); at a few hundred rows these took about a quarter of the fit.  This ``fit``
    draws the same random numbers in the same order (the loader's two 64-bit draws from
    torch's global generator, then the batch order from a generator seeded by the second),
    takes each batch by indexing, and runs ctgan's own encoder, decoder, loss and Adam
    step: the parameters and ``loss_values`` are those of ``ctgan.TVAE.fit``, bit for bit
    (``tests/test_generators.py``).
    """
    import ctgan
    import torch
    from ctgan.data_transformer import DataTransformer
    from ctgan.synthesizers.base import random_state
    from ctgan.synthesizers.tvae import Decoder, Encoder, _loss_function
    from torch.optim import Adam

    class LeanTVAE(ctgan.TVAE):
        @random_state
        def fit(self, train_data, discrete_columns=()):
            self.transformer = DataTransformer()
            self.transformer.fit(train_data, discrete_columns)
            data = torch.from_numpy(self.transformer.transform(train_data).astype("float32")).to(self._device)
            n = len(data)
            data_dim = self.transformer.output_dimensions
            encoder = Encoder(data_dim, self.compress_dims, self.embedding_dim).to(self._device)
            self.decoder = Decoder(self.embedding_dim, self.decompress_dims, data_dim).to(self._device)
            optimizer = Adam(list(encoder.parameters()) + list(self.decoder.parameters()), weight_decay=self.l2scale)
            losses = []
            for _ in range(self.epochs):
                # What iter(DataLoader(..., shuffle=True)) draws: a base seed for workers, then
                # the seed of the generator that shuffles the rows.
                torch.empty((), dtype=torch.int64).random_()
                shuffle = torch.Generator()
                shuffle.manual_seed(int(torch.empty((), dtype=torch.int64).random_().item()))
                order = torch.randperm(n, generator=shuffle)
                for start in range(0, n, self.batch_size):
                    optimizer.zero_grad()
                    real = data[order[start : start + self.batch_size]]
                    mu, std, logvar = encoder(real)
                    emb = torch.randn_like(std) * std + mu
                    rec, sigmas = self.decoder(emb)
                    loss_1, loss_2 = _loss_function(
                        rec, real, sigmas, mu, logvar, self.transformer.output_info_list, self.loss_factor
                    )
                    loss = loss_1 + loss_2
                    loss.backward()
                    optimizer.step()
                    self.decoder.sigma.data.clamp_(0.01, 1.0)
                    losses.append(loss.detach())
            per_epoch = -(-n // self.batch_size)
            self.loss_values = pd.DataFrame({
                "Epoch": np.repeat(np.arange(self.epochs), per_epoch),
                "Batch": np.tile(np.arange(per_epoch), self.epochs),
                "Loss": torch.stack(losses).cpu().numpy().astype(np.float64),
            })  # fmt: skip

    LeanTVAE.__module__ = __name__
    LeanTVAE.__qualname__ = "_LeanTVAE"  # pickled by this name, found by __getattr__ below
    return LeanTVAE


@functools.cache
def _fast_sampler_class():
    """``ctgan``'s ``DataSampler`` whose ``sample_data`` draws a batch's rows in one call.

    CTGAN picks each real row of a batch to match its conditional vector: ctgan calls
    ``np.random.choice(rows)`` once per row (31,500 calls an epoch on Adult's training
    split at batch 500).  Each such call draws exactly one ``randint(0, len(rows))`` from
    numpy's global ``RandomState``; one ``randint(0, sizes)`` over the batch draws the
    same numbers in the same order, so the rows, and everything CTGAN learns from them,
    are those of ctgan's own sampler bit for bit (``tests/test_generators.py``).
    """
    from ctgan.data_sampler import DataSampler

    class FastDataSampler(DataSampler):
        def __init__(self, data, output_info, log_frequency):
            super().__init__(data, output_info, log_frequency)
            width = max((len(rows) for rows in self._rid_by_cat_cols), default=0)
            sizes = np.zeros((len(self._rid_by_cat_cols), width), dtype=np.int64)
            for c, by_cat in enumerate(self._rid_by_cat_cols):
                sizes[c, : len(by_cat)] = [len(rows) for rows in by_cat]
            self._fast_sizes = sizes
            self._fast_start = (np.cumsum(sizes.ravel()) - sizes.ravel()).reshape(sizes.shape)
            self._fast_rows = np.concatenate(
                [r for by_cat in self._rid_by_cat_cols for r in by_cat] or [np.zeros(0, int)]
            )

        def sample_data(self, data, n, col, opt):
            if col is None:
                return super().sample_data(data, n, col, opt)
            sizes = self._fast_sizes[col, opt]
            if (sizes == 0).any():  # ctgan's choice raises on an empty category: let it
                return super().sample_data(data, n, col, opt)
            return data[self._fast_rows[self._fast_start[col, opt] + np.random.randint(0, sizes)]]

        def plain(self) -> DataSampler:
            """This sampler as ctgan's own class (fitted models pickle without this module's classes)."""
            for name in ("_fast_sizes", "_fast_start", "_fast_rows"):
                delattr(self, name)
            self.__class__ = DataSampler
            return self

    return FastDataSampler


def __getattr__(name):
    if name == "_LeanTVAE":  # unpickling a fitted TVAE: build the class (and import torch) on demand
        return _lean_tvae_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _CtganModel(Generator):
    """Shared wrapper: subclasses name the ``ctgan`` class and its keyword arguments."""

    _ctgan_class = ""

    def _model_class(self):
        import ctgan

        return getattr(ctgan, self._ctgan_class)

    def _ctgan_kwargs(self) -> dict:
        raise NotImplementedError

    def _check_params(self) -> None:
        for name in ("epochs", "batch_size"):
            check_integer(name, getattr(self, name), minimum=1)
        if self.device not in ("auto", "cpu", "cuda"):
            raise VrlibError(f"device must be 'auto', 'cpu' or 'cuda', got {self.device!r}")
        check_integer("threads", self.threads, minimum=1, optional=True)
        if self.options is not None and not isinstance(self.options, dict):
            raise VrlibError("options must be a dict of extra keyword arguments for the ctgan model, or None")

    def _fit(self, df: pd.DataFrame, rng: np.random.Generator) -> None:
        from joblib import parallel_config

        if self.n_train_ < 2:
            raise VrlibError(
                f"{type(self).__name__} needs at least 2 training rows (ctgan's preprocessing), got {self.n_train_}"
            )
        resolve_device(self.device)  # a clear error for 'cuda' without a GPU
        kwargs = self._ctgan_kwargs()
        kwargs.update(self.options or {})
        kwargs["enable_gpu"] = self.device != "cpu"  # 'auto': the GPU when there is one
        try:
            model = self._model_class()(**kwargs)
        except TypeError as exc:
            raise VrlibError(f"bad option for ctgan.{self._ctgan_class}: {exc}") from None
        model.set_random_state(int(rng.integers(2**31 - 1)))
        data = pd.DataFrame(
            {
                c: (df[c].cat.codes.to_numpy().astype(np.int64) if c in self.schema_.categorical else df[c].to_numpy())
                for c in self.columns_
            }
        )
        start = time.perf_counter()
        with torch_threads(self.threads), parallel_config(backend="sequential"), self._fit_context():
            # ctgan transforms tables of 500+ rows in a pool of worker processes, whose
            # start-up costs far more than the work at the sizes we fit (and would
            # oversubscribe the cores when many generators are fitted in parallel).
            model.fit(data, discrete_columns=list(self.schema_.categorical))
        self._after_fit(model)
        self.fit_seconds_ = time.perf_counter() - start  # preprocessing (mixture models) included
        self.model_ = model

    def _fit_context(self):
        """A context manager around ctgan's ``fit`` (CTGAN: its faster row sampler)."""
        return contextlib.nullcontext()

    def _after_fit(self, model) -> None:
        pass

    def _sample(self, n: int, rng: np.random.Generator) -> dict:
        if n == 0:
            return {c: np.zeros(0) for c in self.columns_}
        self.model_.set_random_state(int(rng.integers(2**31 - 1)))
        with torch_threads(self.threads):
            raw = self.model_.sample(n)
        out = {}
        for c in self.columns_:
            v = raw[c].to_numpy()
            if c in self.schema_.categorical:
                codes = np.asarray(v, dtype=np.float64).round().astype(np.int64)
                k = len(self.dtypes_[c].categories)
                out[c] = np.clip(codes, 0, k - 1)  # ctgan only returns codes it saw: the clip is a guard
            else:
                out[c] = np.asarray(v, dtype=np.float64)
        return out


class TVAE(_CtganModel):
    """Tabular variational autoencoder (``ctgan.TVAE``).

    Parameters
    ----------
    epochs : int
        Training epochs (ctgan's default is 300; DOMIAS used up to 2,000).
    batch_size : int
    embedding_dim : int
    compress_dims, decompress_dims : tuple of int
        Hidden layers of the encoder and decoder.
    device : {"auto", "cpu", "cuda"}
        ``auto``: the GPU when PyTorch sees one, else the CPU.
    threads : int or None
        PyTorch CPU threads during ``fit`` and ``sample`` (``None``: PyTorch's
        setting).  1 is fastest for small tables and when many generators are
        fitted in parallel.
    options : dict or None
        Any other keyword argument of ``ctgan.TVAE`` (e.g. ``l2scale``, ``loss_factor``).

    Attributes
    ----------
    model_ : ctgan.TVAE
    fit_seconds_ : float
        Wall time of the last fit (ctgan's preprocessing included).
    """

    _ctgan_class = "TVAE"

    def _model_class(self):
        return _lean_tvae_class()

    def __init__(
        self,
        epochs: int = 300,
        batch_size: int = 500,
        embedding_dim: int = 128,
        compress_dims=(128, 128),
        decompress_dims=(128, 128),
        device: str = "auto",
        threads=None,
        options=None,
    ):
        self.epochs = epochs
        self.batch_size = batch_size
        self.embedding_dim = embedding_dim
        self.compress_dims = compress_dims
        self.decompress_dims = decompress_dims
        self.device = device
        self.threads = threads
        self.options = options
        self._check_params()

    def _ctgan_kwargs(self) -> dict:
        return dict(
            epochs=self.epochs,
            batch_size=self.batch_size,
            embedding_dim=self.embedding_dim,
            compress_dims=tuple(self.compress_dims),
            decompress_dims=tuple(self.decompress_dims),
        )


class CTGAN(_CtganModel):
    """Conditional tabular GAN (``ctgan.CTGAN``).

    Parameters
    ----------
    epochs : int
        Training epochs (ctgan's default is 300).
    batch_size : int
        A multiple of ``pac`` (and even).
    pac : int
        Samples grouped together by the discriminator.
    embedding_dim : int
    generator_dim, discriminator_dim : tuple of int
    generator_lr, discriminator_lr : float
    device : {"auto", "cpu", "cuda"}
    threads : int or None
        PyTorch CPU threads during ``fit`` and ``sample`` (see :class:`TVAE`).
    options : dict or None
        Any other keyword argument of ``ctgan.CTGAN`` (e.g. ``discriminator_steps``).

    Attributes
    ----------
    model_ : ctgan.CTGAN
    fit_seconds_ : float
    """

    _ctgan_class = "CTGAN"

    def __init__(
        self,
        epochs: int = 300,
        batch_size: int = 500,
        pac: int = 10,
        embedding_dim: int = 128,
        generator_dim=(256, 256),
        discriminator_dim=(256, 256),
        generator_lr: float = 2e-4,
        discriminator_lr: float = 2e-4,
        device: str = "auto",
        threads=None,
        options=None,
    ):
        self.epochs = epochs
        self.batch_size = batch_size
        self.pac = pac
        self.embedding_dim = embedding_dim
        self.generator_dim = generator_dim
        self.discriminator_dim = discriminator_dim
        self.generator_lr = generator_lr
        self.discriminator_lr = discriminator_lr
        self.device = device
        self.threads = threads
        self.options = options
        self._check_params()

    def _check_params(self) -> None:
        super()._check_params()
        check_integer("pac", self.pac, minimum=1)
        if self.batch_size % self.pac or self.batch_size % 2:
            raise VrlibError(
                f"CTGAN needs batch_size to be even and a multiple of pac; got batch_size={self.batch_size}, pac={self.pac}"
            )

    # ctgan's own row sampler instead of the faster one with the same draws (tests, benchmarks/bench_collision.py)
    _plain_sampler = False

    def _fit_context(self):
        if self._plain_sampler:
            return contextlib.nullcontext()
        import ctgan.synthesizers.ctgan as ctgan_module
        from unittest import mock

        return mock.patch.object(ctgan_module, "DataSampler", _fast_sampler_class())

    def _after_fit(self, model) -> None:
        sampler = getattr(model, "_data_sampler", None)
        if isinstance(sampler, _fast_sampler_class()):
            sampler.plain()

    def _ctgan_kwargs(self) -> dict:
        return dict(
            epochs=self.epochs,
            batch_size=self.batch_size,
            pac=self.pac,
            embedding_dim=self.embedding_dim,
            generator_dim=tuple(self.generator_dim),
            discriminator_dim=tuple(self.discriminator_dim),
            generator_lr=self.generator_lr,
            discriminator_lr=self.discriminator_lr,
        )


__all__ = ["TVAE", "CTGAN"]
