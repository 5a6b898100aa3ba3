"""ADS-GAN (Yoon, Drumright & van der Schaar 2020): a conditional WGAN-GP with an identifiability penalty.

ADS-GAN anonymises by synthesis: its generator takes a real record ``x`` with noise ``z``
and outputs a synthetic record ``G(x, z)``; the critic is a WGAN-GP critic; the generator
minimises the Wasserstein loss *minus* λ times the root mean squared distance between
each record and the record generated from it::

    L_G = -E[D(G(x, z))] - λ · sqrt(E[||x - G(x, z)||²])

so a larger λ pushes every synthetic record further from the record it came from (less
identifiable), at the cost of fidelity; λ = 0 is a conditional WGAN-GP.  Synthetic data
are released by feeding the training records (each once per pass, in a seeded order)
with fresh noise.  The networks, the encoding (one-hot, continuous columns min-max scaled
to [-1, 1]) and the decoding are those of :class:`~vrlib.generators.wgan.WGANGP`; the
training loop is :class:`~vrlib.generators.gan.GAN`'s with ADS-GAN's losses.  DOMIAS
(Fig. 6) varies λ over 0.2 … 1.5.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.errors import VrlibError
from vrlib.generators.gan import GAN
from vrlib.generators.wgan import WGANGP
from vrlib.generators.base import check_count, make_rng
from vrlib.params import check_number
from vrlib.torch_setup import torch_threads


class ADSGAN(GAN):
    """ADS-GAN: WGAN-GP conditioned on a real record, with identifiability penalty λ.

    Parameters
    ----------
    lamda : float
        λ, the weight of the identifiability penalty (>= 0; DOMIAS Fig. 6: 0.2 … 1.5; spelt as
        in the ADS-GAN authors' code, ``lambda`` being Python's).
    epochs, batch_size, z_dim, n_critic, tau, device, threads, progress
        As :class:`~vrlib.generators.gan.GAN`.
    gp_weight : float
        Weight of WGAN-GP's gradient penalty (10, as Gulrajani et al. and ADS-GAN).
    lr : float
        Adam learning rate of both networks (betas 0.5, 0.9, as WGAN-GP).

    Attributes
    ----------
    train_ : ndarray
        The encoded training records the generator is fed at sampling time.
    losses_ : DataFrame
    fit_seconds_ : float
    """

    _label = "ADS-GAN"
    _positive = ("gp_weight", "lr", "tau")

    def __init__(
        self,
        lamda: float = 0.1,
        epochs: int = 300,
        batch_size: int = 500,
        z_dim: int = 128,
        n_critic: int = 1,
        gp_weight: float = 10.0,
        lr: float = 2e-4,
        tau: float = 0.2,
        device: str = "auto",
        threads=None,
        progress: bool = False,
    ):
        self.lamda = lamda
        self.epochs = epochs
        self.batch_size = batch_size
        self.z_dim = z_dim
        self.n_critic = n_critic
        self.gp_weight = gp_weight
        self.lr = lr
        self.tau = tau
        self.device = device
        self.threads = threads
        self.progress = progress
        self._check_params()

    def _check_params(self) -> None:
        super()._check_params()
        check_number("lamda", self.lamda, minimum=0)

    def _optimizers(self, torch, gen, critic):
        return WGANGP._optimizers(self, torch, gen, critic)

    def _input_width(self) -> int:
        return self.z_dim + sum(self.widths_) + len(self.schema_.continuous)

    def _generate(self, torch, gen, real):
        return gen(torch.cat([torch.randn(len(real), self.z_dim, device=real.device), real], 1), self.tau)

    def _critic_loss(self, torch, critic, real, fake):
        return WGANGP._critic_loss(self, torch, critic, real, fake)

    def _generator_loss(self, torch, critic, real, fake):
        identifiability = torch.sqrt(((real - fake) ** 2).mean())
        return -critic(fake).mean() - self.lamda * identifiability

    def _fit(self, df: pd.DataFrame, rng: np.random.Generator) -> None:
        super()._fit(df, rng)
        self.train_ = self._encode(df)

    def sources(self, n: int, seed=None) -> np.ndarray:
        """Positions of the training records that ``sample(n, seed)``'s rows are generated from."""
        if not getattr(self, "fitted_", False):
            raise VrlibError("ADSGAN is not fitted: call fit(df, schema) before sources(n)")
        return self._sources(check_count(n), make_rng(seed))

    def _sources(self, n: int, rng: np.random.Generator) -> np.ndarray:
        passes = -(-n // self.n_train_) if n else 0
        return np.concatenate([rng.permutation(self.n_train_) for _ in range(passes)] or [np.zeros(0, int)])[:n]

    def _sample(self, n: int, rng: np.random.Generator) -> dict:
        import torch

        rows = self._sources(n, rng)
        if n == 0:
            return {c: np.zeros(0) for c in self.columns_}
        with torch_threads(self.threads), torch.random.fork_rng(devices=[]), torch.no_grad():
            torch.manual_seed(int(rng.integers(2**63 - 1)))
            out = []
            for s in range(0, n, 10_000):
                x = torch.as_tensor(self.train_[rows[s : s + 10_000]])
                z = torch.randn(len(x), self.z_dim)
                out.append(self.generator_(torch.cat([z, x], 1), self.tau, hard=True).numpy())
            out = np.vstack(out)
        return decode(self, out)


def decode(gen, out: np.ndarray) -> dict:
    """Column values from the generator's output (hard one-hot blocks, then tanh columns), as WGANGP decodes."""
    values, j = {}, 0
    for c, w in zip(gen.schema_.categorical, gen.widths_):
        values[c] = out[:, j : j + w].argmax(axis=1)
        j += w
    for i, c in enumerate(gen.schema_.continuous):
        x = (out[:, j + i].astype(np.float64) + 1) / 2 * gen.span_[i] + gen.lo_[i]
        values[c] = np.clip(x, gen.lo_[i], gen.lo_[i] + gen.span_[i])
    return values


__all__ = ["ADSGAN", "decode"]
