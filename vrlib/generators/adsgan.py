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
to [-1, 1]), the decoding, the critic's loss and the training loop are those of
:class:`~vrlib.generators.wgan.WGANGP`; :class:`ADSGAN` changes what the generator is fed
and its loss.  DOMIAS
(Fig. 6) varies λ over 0.2 … 1.5.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.errors import VrlibError
from vrlib.generators.base import check_count, make_rng
from vrlib.generators.wgan import WGANGP
from vrlib.params import check_number


class ADSGAN(WGANGP):
    """ADS-GAN: WGAN-GP conditioned on a real record, with identifiability penalty λ.

    Parameters
    ----------
    lamda : float
        λ, the weight of the identifiability penalty (>= 0; DOMIAS Fig. 6: 0.2 … 1.5; spelt as
        in the ADS-GAN authors' code, ``lambda`` being Python's).
    epochs, batch_size, z_dim, n_critic, tau, device, threads, progress
        As :class:`~vrlib.generators.wgan.WGANGP`.
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
        self.lamda = lamda  # before WGANGP's constructor, which checks it
        super().__init__(epochs, batch_size, z_dim, n_critic, gp_weight, lr, tau, device, threads, progress)

    def _check_params(self) -> None:
        super()._check_params()
        check_number("lamda", self.lamda, minimum=0)

    def _input_width(self) -> int:
        return self.z_dim + sum(self.widths_) + len(self.schema_.continuous)

    def _generate(self, torch, gen, real):
        return gen(torch.cat([torch.randn(len(real), self.z_dim, device=real.device), real], 1), self.tau)

    def _generator_loss(self, torch, critic, real, fake):
        identifiability = torch.sqrt(((real - fake) ** 2).mean())
        return super()._generator_loss(torch, critic, real, fake) - self.lamda * identifiability

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

    def _conditions(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """The encoded training records that ``n`` sampled rows are generated from."""
        return self.train_[self._sources(n, rng)]


__all__ = ["ADSGAN"]
