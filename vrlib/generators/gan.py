"""A plain GAN (Goodfellow et al. 2014) for tables, with the networks of :mod:`vrlib.generators.wgan`.

The generator and discriminator are those of :class:`~vrlib.generators.wgan.WGANGP`
(TableGAN-MCA eqs. 5–6: a residual generator with Gumbel-softmax heads for categorical
columns and tanh heads for min-max-scaled continuous ones; a two-layer discriminator with
leaky ReLU and dropout), and so are the encoding and the sampling.  What makes it a plain
GAN is the loss: the discriminator's output is a logit, trained with binary
cross-entropy (real 1, generated 0), and the generator minimises the non-saturating loss
``-log D(G(z))`` (Goodfellow et al. §3).

The training loop is :class:`~vrlib.generators.wgan.WGANGP`'s; :class:`GAN` overrides only
its optimisers and its two losses.
"""

from __future__ import annotations

from vrlib.generators.wgan import WGANGP


class GAN(WGANGP):
    """A plain GAN with the TableGAN-MCA networks: binary cross-entropy, non-saturating generator loss.

    Parameters
    ----------
    epochs, batch_size, z_dim, tau, device, threads, progress
        As :class:`~vrlib.generators.wgan.WGANGP`.
    n_critic : int
        Discriminator updates per generator update.
    lr : float
        Adam learning rate of both networks (betas 0.5, 0.999, as DCGAN).

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

    # ------------------------------------------------------------------ what differs from WGAN-GP

    def _optimizers(self, torch, gen, critic):
        """Adam for both networks with DCGAN's betas 0.5 / 0.999."""
        return (
            torch.optim.Adam(gen.parameters(), lr=self.lr, betas=(0.5, 0.999)),
            torch.optim.Adam(critic.parameters(), lr=self.lr, betas=(0.5, 0.999)),
        )

    def _critic_loss(self, torch, critic, real, fake):
        """Binary cross-entropy of the discriminator's logits: real rows 1, generated rows 0."""
        softplus = torch.nn.functional.softplus
        return softplus(-critic(real)).mean() + softplus(critic(fake)).mean()

    def _generator_loss(self, torch, critic, real, fake):
        """The non-saturating loss ``-log D(G(z))``."""
        return torch.nn.functional.softplus(-critic(fake)).mean()


__all__ = ["GAN"]
