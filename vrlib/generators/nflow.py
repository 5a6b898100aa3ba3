"""NFlow: a neural spline flow (Durkan et al. 2019) fitted to the table by maximum likelihood, through ``zuko``.

The flow is ``zuko.flows.NSF``: autoregressive transforms whose elementwise maps are
monotonic rational-quadratic splines (``bins`` knots on [-5, 5], identity outside), with
the variables' order reversed between transforms, on a standard normal base.  The table
is made continuous first: each continuous column is standardised with the training
records' mean and standard deviation; each categorical column becomes its one-hot block
plus Gaussian dequantisation noise (standard deviation ``dequantize``), so that the flow
models a density, and a sampled block maps back to its largest entry's category.
Training is Adam on the negative log-likelihood for ``epochs`` passes of ``batch_size``
rows.  Samples are drawn from the fitted flow and mapped back to the table; continuous
values are kept within the training range (as the GANs' tanh heads are).

PyTorch and zuko are imported only when the generator is fitted.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from vrlib.errors import VrlibError
from vrlib.generators.base import Generator
from vrlib.generators import wgan
from vrlib.generators.wgan import decode_blocks, encode_blocks
from vrlib.params import check_integer, check_number
from vrlib.torch_setup import resolve_device, torch_threads


class NFlow(Generator):
    """Neural spline flow generator (rational-quadratic autoregressive transforms, ``zuko.flows.NSF``).

    Parameters
    ----------
    transforms : int
        Number of autoregressive spline transforms.
    bins : int
        Spline bins per transform.
    hidden : int
        Units of each hidden layer of the transforms' conditioners.
    layers : int
        Hidden layers of each conditioner.
    epochs : int
        Passes over the training data.
    batch_size : int
    lr : float
        Adam learning rate.
    dequantize : float
        Standard deviation of the Gaussian noise added to one-hot blocks.
    device : {"auto", "cpu", "cuda"}
    threads : int or None
        PyTorch CPU threads during fit and sample.
    progress : bool

    Attributes
    ----------
    losses_ : Series
        Mean negative log-likelihood per epoch.
    fit_seconds_ : float
    """

    source_dependencies = (wgan,)  # its table encoding and decoding: part of the cache key of what it generates

    def __init__(
        self,
        transforms: int = 3,
        bins: int = 8,
        hidden: int = 100,
        layers: int = 2,
        epochs: int = 300,
        batch_size: int = 200,
        lr: float = 1e-3,
        dequantize: float = 0.1,
        device: str = "auto",
        threads=None,
        progress: bool = False,
    ):
        self.transforms = transforms
        self.bins = bins
        self.hidden = hidden
        self.layers = layers
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.dequantize = dequantize
        self.device = device
        self.threads = threads
        self.progress = progress
        self._check_params()

    def _check_params(self) -> None:
        for name in ("transforms", "bins", "hidden", "layers", "epochs", "batch_size"):
            check_integer(name, getattr(self, name), minimum=1)
        check_number("lr", self.lr, above=0)
        check_number("dequantize", self.dequantize, minimum=0)
        if self.device not in ("auto", "cpu", "cuda"):
            raise VrlibError(f"device must be 'auto', 'cpu' or 'cuda', got {self.device!r}")
        check_integer("threads", self.threads, minimum=1, optional=True)

    def _encode(self, df: pd.DataFrame) -> np.ndarray:
        """One-hot categorical blocks, then the standardised continuous columns (float32)."""
        cont = df[list(self.schema_.continuous)].to_numpy(np.float64)
        return encode_blocks(df, self.schema_.categorical, self.widths_, (cont - self.mean_) / self.std_)

    def _fit(self, df: pd.DataFrame, rng: np.random.Generator) -> None:
        import torch
        import zuko

        device = resolve_device(self.device)
        self.widths_ = [len(self.dtypes_[c].categories) for c in self.schema_.categorical]
        cont = df[list(self.schema_.continuous)].to_numpy(np.float64)
        self.mean_ = cont.mean(axis=0) if cont.size else np.zeros(0)
        std = cont.std(axis=0) if cont.size else np.zeros(0)
        self.std_ = np.where(std > 0, std, 1.0)  # a constant column stays constant
        self.lo_ = cont.min(axis=0) if cont.size else np.zeros(0)
        self.hi_ = cont.max(axis=0) if cont.size else np.zeros(0)
        data = torch.as_tensor(self._encode(df), device=device)
        onehot = torch.zeros(data.shape[1], dtype=torch.bool, device=device)
        onehot[: sum(self.widths_)] = True
        batch = min(self.batch_size, self.n_train_)
        start = time.perf_counter()
        losses = []
        with torch_threads(self.threads), torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
            torch.manual_seed(int(rng.integers(2**63 - 1)))
            # zuko needs at least 2 features for an autoregressive conditioner; a lone column gets a
            # standard-normal companion that sampling drops
            self.width_ = max(data.shape[1], 2)
            flow = zuko.flows.NSF(
                self.width_, bins=self.bins, transforms=self.transforms, hidden_features=(self.hidden,) * self.layers
            ).to(device)
            opt = torch.optim.Adam(flow.parameters(), lr=self.lr)
            for _ in tqdm(range(self.epochs), desc="NFlow epochs", disable=not self.progress, leave=False):
                order = torch.randperm(self.n_train_, device=device)
                total = 0.0
                for s in range(0, self.n_train_, batch):
                    x = data[order[s : s + batch]]
                    x = x + self.dequantize * torch.randn_like(x) * onehot
                    if self.width_ > x.shape[1]:
                        x = torch.cat([x, torch.randn(len(x), 1, device=device)], 1)
                    loss = -flow().log_prob(x).mean()
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
                    total += float(loss.detach()) * len(x)
                losses.append(total / self.n_train_)
        self.fit_seconds_ = time.perf_counter() - start
        self.losses_ = pd.Series(losses, name="nll")
        self.flow_ = flow.eval().cpu()

    def _sample(self, n: int, rng: np.random.Generator) -> dict:
        import torch

        if n == 0:
            return {c: np.zeros(0) for c in self.columns_}
        with torch_threads(self.threads), torch.random.fork_rng(devices=[]), torch.no_grad():
            torch.manual_seed(int(rng.integers(2**63 - 1)))
            dist = self.flow_()
            out = np.vstack([dist.sample((min(10_000, n - s),)).numpy() for s in range(0, n, 10_000)])
        values, cont = decode_blocks(out, self.schema_.categorical, self.widths_)
        for i, c in enumerate(self.schema_.continuous):
            x = cont[:, i].astype(np.float64) * self.std_[i] + self.mean_[i]
            values[c] = np.clip(x, self.lo_[i], self.hi_[i])
        return values


__all__ = ["NFlow"]
