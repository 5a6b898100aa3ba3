"""A plain GAN (Goodfellow et al. 2014) for tables, with the networks of :mod:`vrlib.generators.wgan`.

The generator and discriminator are those of :class:`~vrlib.generators.wgan.WGANGP`
(TableGAN-MCA eqs. 5–6: a residual generator with Gumbel-softmax heads for categorical
columns and tanh heads for min-max-scaled continuous ones; a two-layer discriminator with
leaky ReLU and dropout), and so are the encoding and the sampling.  What makes it a plain
GAN is the loss: the discriminator's output is a logit, trained with binary
cross-entropy (real 1, generated 0), and the generator minimises the non-saturating loss
``-log D(G(z))`` (Goodfellow et al. §3).

:class:`GAN`'s training loop is written with three hooks — what the generator is fed
(``_generate``), the discriminator's loss and the generator's loss — so that ADS-GAN
(:mod:`vrlib.generators.adsgan`) reuses it; :mod:`vrlib.generators.wgan` is not changed.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from vrlib.errors import VrlibError
from vrlib.generators.wgan import WGANGP, _build
from vrlib.torch_setup import resolve_device, torch_threads


def prepare_encoding(gen, df: pd.DataFrame) -> np.ndarray:
    """Set ``gen``'s encoding (``widths_``, ``lo_``, ``span_``) from ``df`` and return ``df`` encoded.

    Categorical columns one-hot, continuous ones min-max scaled to [-1, 1] (the encoding of
    :class:`~vrlib.generators.wgan.WGANGP`, whose ``_encode`` and ``_sample`` read these
    attributes).
    """
    gen.widths_ = [len(gen.dtypes_[c].categories) for c in gen.schema_.categorical]
    cont = df[list(gen.schema_.continuous)].to_numpy(np.float64)
    gen.lo_ = cont.min(axis=0) if cont.size else np.zeros(0)
    span = np.ptp(cont, axis=0) if cont.size else np.zeros(0)
    gen.span_ = np.where(span > 0, span, 1.0)  # a constant column maps to -1 and back
    return gen._encode(df)


class GAN(WGANGP):
    """A plain GAN with the TableGAN-MCA networks: binary cross-entropy, non-saturating generator loss.

    Parameters
    ----------
    epochs : int
        Passes over the training data.
    batch_size : int
    z_dim : int
        Noise dimension.
    n_critic : int
        Discriminator updates per generator update.
    lr : float
        Adam learning rate of both networks (betas 0.5, 0.999, as DCGAN).
    tau : float
        Gumbel-softmax temperature of the categorical heads.
    device : {"auto", "cpu", "cuda"}
    threads : int or None
        PyTorch CPU threads during fit and sample.
    progress : bool
        Show a tqdm bar over the epochs.

    Attributes
    ----------
    losses_ : DataFrame
        Discriminator and generator loss at the end of each epoch.
    fit_seconds_ : float
    """

    _label = "GAN"
    _positive = ("lr", "tau")

    def __init__(
        self,
        epochs: int = 300,
        batch_size: int = 500,
        z_dim: int = 128,
        n_critic: int = 1,
        lr: float = 2e-4,
        tau: float = 0.2,
        device: str = "auto",
        threads=None,
        progress: bool = False,
    ):
        self.epochs = epochs
        self.batch_size = batch_size
        self.z_dim = z_dim
        self.n_critic = n_critic
        self.lr = lr
        self.tau = tau
        self.device = device
        self.threads = threads
        self.progress = progress
        self._check_params()

    # ------------------------------------------------------------------ hooks (ADS-GAN overrides them)

    def _optimizers(self, torch, gen, critic):
        return (
            torch.optim.Adam(gen.parameters(), lr=self.lr, betas=(0.5, 0.999)),
            torch.optim.Adam(critic.parameters(), lr=self.lr, betas=(0.5, 0.999)),
        )

    def _input_width(self) -> int:
        """Width of the generator's input (ADS-GAN adds the encoded record it starts from)."""
        return self.z_dim

    def _generate(self, torch, gen, real):
        """One generated row per row of ``real`` (a plain GAN ignores ``real``: noise only)."""
        return gen(torch.randn(len(real), self.z_dim, device=real.device), self.tau)

    def _critic_loss(self, torch, critic, real, fake):
        """Binary cross-entropy of the discriminator's logits: real rows 1, generated rows 0."""
        softplus = torch.nn.functional.softplus
        return softplus(-critic(real)).mean() + softplus(critic(fake)).mean()

    def _generator_loss(self, torch, critic, real, fake):
        """The non-saturating loss ``-log D(G(z))``."""
        return torch.nn.functional.softplus(-critic(fake)).mean()

    # ------------------------------------------------------------------ protocol

    def _fit(self, df: pd.DataFrame, rng: np.random.Generator) -> None:
        import torch

        if self.n_train_ < 2:
            raise VrlibError(f"{type(self).__name__} needs at least 2 training rows (batch norm), got {self.n_train_}")
        device = resolve_device(self.device)
        encoded = prepare_encoding(self, df)
        data = torch.as_tensor(encoded, device=device)
        batch = min(self.batch_size, self.n_train_)
        start = time.perf_counter()
        losses = []
        with torch_threads(self.threads), torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
            torch.manual_seed(int(rng.integers(2**63 - 1)))
            gen, critic = _build(torch, self._input_width(), self.widths_, len(self.schema_.continuous))
            gen, critic = gen.to(device), critic.to(device)
            opt_g, opt_d = self._optimizers(torch, gen, critic)
            steps = max(self.n_train_ // batch, 1)
            for _ in tqdm(range(self.epochs), desc=f"{self._label} epochs", disable=not self.progress, leave=False):
                order = torch.randperm(self.n_train_, device=device)
                for s in range(steps):
                    real = data[order[s * batch : (s + 1) * batch]]
                    for _ in range(self.n_critic):
                        loss_d = self._critic_loss(torch, critic, real, self._generate(torch, gen, real).detach())
                        opt_d.zero_grad(set_to_none=True)
                        loss_d.backward()
                        opt_d.step()
                    loss_g = self._generator_loss(torch, critic, real, self._generate(torch, gen, real))
                    opt_g.zero_grad(set_to_none=True)
                    loss_g.backward()
                    opt_g.step()
                losses.append((float(loss_d.detach()), float(loss_g.detach())))
        self.fit_seconds_ = time.perf_counter() - start
        self.losses_ = pd.DataFrame(losses, columns=["critic", "generator"])
        self.generator_ = gen.eval().cpu()
        self.device_ = device


__all__ = ["GAN", "prepare_encoding"]
