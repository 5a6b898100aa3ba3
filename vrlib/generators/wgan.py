"""WGAN-GP and WGAN-WC for tables with the generator and critic of TableGAN-MCA (Hu et al. 2021, eqs. 5–6).

Generator (eq. 5), with ``z`` Gaussian noise::

    h1 = ReLU(BN(FC(z -> 256)))
    h2 = ReLU(BN(FC(z ⊕ h1 -> 256)))
    categorical column:  gumbel_softmax_0.2(FC(z ⊕ h1 ⊕ h2 -> levels))
    continuous column:   tanh(FC(z ⊕ h1 ⊕ h2 -> 1))

(the paper writes the heads on ``h2`` with input size ``|z| + 512``: the concatenation
``z ⊕ h1 ⊕ h2``, the "recurrent" skip connections of CTGAN's residual generator).
Critic (eq. 6): two FC-256 layers with leaky ReLU 0.2 and dropout 0.5, then FC -> 1.
Training (:class:`WGANGP`): the Wasserstein loss with gradient penalty (Gulrajani et al.
2017, λ = 10), Adam (lr 2e-4, betas 0.5 / 0.9).  :class:`WGANWC` trains the same networks
on the Wasserstein loss alone and clips the critic's weights to ``[-c, c]`` after each of
its updates (Arjovsky et al. 2017), with the authors' optimiser settings.  Continuous
columns are min-max scaled to [-1, 1] for the tanh head; categorical columns are one-hot.  Sampling draws each categorical value
from the softmax of its head (the argmax of a Gumbel-perturbed head) and maps the tanh
output back to the column's range.

PyTorch is imported only when the generator is fitted; it runs on the GPU when there is
one (``device="auto"``) and on the CPU otherwise (:mod:`vrlib.torch_setup`).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from vrlib.errors import VrlibError
from vrlib.generators.base import Generator
from vrlib.params import check_integer, check_number
from vrlib.torch_setup import resolve_device, torch_threads


def build_networks(torch, z_dim: int, widths: list[int], n_cont: int, hidden: int = 256):
    """The generator (eq. 5) and the critic (eq. 6), untrained.

    Parameters
    ----------
    torch : module
        PyTorch (imported by the caller, so that importing this module does not).
    z_dim : int
        Width of the generator's input (the noise; ADS-GAN appends the encoded record).
    widths : list of int
        Levels of each categorical column, in order: one Gumbel-softmax head each.
    n_cont : int
        Continuous columns: one tanh output each, after the categorical blocks.
    hidden : int
        Units of the hidden layers.

    Returns
    -------
    generator, critic : torch.nn.Module
    """
    nn = torch.nn

    class TableGenerator(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Sequential(nn.Linear(z_dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU())
            self.fc2 = nn.Sequential(nn.Linear(z_dim + hidden, hidden), nn.BatchNorm1d(hidden), nn.ReLU())
            self.cat_heads = nn.ModuleList(nn.Linear(z_dim + 2 * hidden, w) for w in widths)
            self.cont_head = nn.Linear(z_dim + 2 * hidden, n_cont) if n_cont else None

        def forward(self, z, tau: float = 0.2, hard: bool = False):
            h1 = self.fc1(z)
            h2 = self.fc2(torch.cat([z, h1], 1))
            h = torch.cat([z, h1, h2], 1)
            parts = [nn.functional.gumbel_softmax(head(h), tau=tau, hard=hard) for head in self.cat_heads]
            if self.cont_head is not None:
                parts.append(torch.tanh(self.cont_head(h)))
            return torch.cat(parts, 1)

    class Critic(nn.Module):
        def __init__(self, width: int):
            super().__init__()
            self.net = nn.Sequential(
                nn.Linear(width, hidden),
                nn.LeakyReLU(0.2),
                nn.Dropout(0.5),
                nn.Linear(hidden, hidden),
                nn.LeakyReLU(0.2),
                nn.Dropout(0.5),
                nn.Linear(hidden, 1),
            )

        def forward(self, x):
            return self.net(x)

    return TableGenerator(), Critic(sum(widths) + n_cont)


def encode_blocks(df: pd.DataFrame, categorical, widths, continuous: np.ndarray) -> np.ndarray:
    """A one-hot block per categorical column (``widths`` levels each), then the already scaled ``continuous`` (float32).

    ``df``'s categorical columns must have the categories the widths count.
    """
    blocks = []
    for c, w in zip(categorical, widths):
        onehot = np.zeros((len(df), w), dtype=np.float32)
        onehot[np.arange(len(df)), df[c].cat.codes.to_numpy()] = 1.0
        blocks.append(onehot)
    if continuous.shape[1]:
        blocks.append(continuous.astype(np.float32))
    return np.hstack(blocks)


def decode_blocks(out: np.ndarray, categorical, widths) -> tuple[dict, np.ndarray]:
    """The inverse of :func:`encode_blocks`' layout: each categorical block's argmax (its code), and the columns after."""
    codes, j = {}, 0
    for c, w in zip(categorical, widths):
        codes[c] = out[:, j : j + w].argmax(axis=1)
        j += w
    return codes, out[:, j:]


def optimizer_step(opt, loss) -> None:
    """One update of ``opt``'s parameters down the gradient of ``loss``."""
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()


class WGANGP(Generator):
    """WGAN-GP with the TableGAN-MCA architecture (eqs. 5–6).

    Parameters
    ----------
    epochs : int
        Passes over the training data (the paper: 300 on Adult).
    batch_size : int
        The paper: 500 on Adult.
    z_dim : int
        Noise dimension.
    n_critic : int
        Critic updates per generator update (1: the two are balanced, as the paper
        suggests; Gulrajani et al. use 5).
    gp_weight : float
        λ of the gradient penalty.
    lr : float
        Adam learning rate of both networks (betas 0.5, 0.9).
    tau : float
        Gumbel-softmax temperature (0.2 in the paper).
    device : {"auto", "cpu", "cuda"}
    threads : int or None
        PyTorch CPU threads during fit and sample.
    progress : bool
        Show a tqdm bar over the epochs.

    Attributes
    ----------
    losses_ : DataFrame
        Critic and generator loss at the end of each epoch.
    fit_seconds_ : float
    """

    def __init__(
        self,
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
        for name in ("epochs", "batch_size", "z_dim", "n_critic"):
            check_integer(name, getattr(self, name), minimum=1)
        for name in self._positive:
            check_number(name, getattr(self, name), above=0)
        if self.device not in ("auto", "cpu", "cuda"):
            raise VrlibError(f"device must be 'auto', 'cpu' or 'cuda', got {self.device!r}")
        check_integer("threads", self.threads, minimum=1, optional=True)

    # ------------------------------------------------------------------ hooks of the training loop and of sampling
    # (WGANWC, GAN, ADSGAN and PATEGAN override what differs)

    _label = "WGAN-GP"
    _positive = ("gp_weight", "lr", "tau")  # parameters that must be positive numbers

    def _optimizers(self, torch, gen, critic):
        """Adam for the generator and the critic (lr ``self.lr``, betas 0.5 / 0.9)."""
        return (
            torch.optim.Adam(gen.parameters(), lr=self.lr, betas=(0.5, 0.9)),
            torch.optim.Adam(critic.parameters(), lr=self.lr, betas=(0.5, 0.9)),
        )

    def _critic_loss(self, torch, critic, real, fake):
        """The critic's Wasserstein loss plus λ times the gradient penalty on random interpolates."""
        alpha = torch.rand(len(real), 1, device=real.device)
        mix = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        grad = torch.autograd.grad(critic(mix).sum(), mix, create_graph=True)[0]
        penalty = ((grad.norm(2, dim=1) - 1) ** 2).mean()
        return critic(fake).mean() - critic(real).mean() + self.gp_weight * penalty

    def _after_critic_step(self, torch, critic) -> None:
        """Nothing for WGAN-GP (WGAN-WC clips the critic's weights here)."""

    def _input_width(self) -> int:
        """Width of the generator's input: the noise (ADS-GAN appends the encoded record it starts from)."""
        return self.z_dim

    def _generate(self, torch, gen, real):
        """One generated row per row of ``real``, from noise alone (ADS-GAN conditions on ``real``)."""
        return gen(torch.randn(len(real), self.z_dim, device=real.device), self.tau)

    def _generator_loss(self, torch, critic, real, fake):
        """The generator's Wasserstein loss ``-E[D(G(z))]``."""
        return -critic(fake).mean()

    def _conditions(self, n: int, rng: np.random.Generator):
        """Encoded rows appended to the noise of ``n`` sampled rows: none (ADS-GAN: training records)."""
        return None

    # ------------------------------------------------------------------ encoding and decoding

    def _fit_encoding(self, df: pd.DataFrame) -> np.ndarray:
        """Learn the encoding from ``df`` (``widths_``, ``lo_``, ``span_``) and return ``df`` encoded."""
        self.widths_ = [len(self.dtypes_[c].categories) for c in self.schema_.categorical]
        cont = df[list(self.schema_.continuous)].to_numpy(np.float64)
        self.lo_ = cont.min(axis=0) if cont.size else np.zeros(0)
        span = np.ptp(cont, axis=0) if cont.size else np.zeros(0)
        self.span_ = np.where(span > 0, span, 1.0)  # a constant column encodes to -1 (no division by 0) ...
        self.constant_ = span == 0  # ... and decodes to its one value, whatever the generator outputs
        return self._encode(df)

    def _encode(self, df: pd.DataFrame) -> np.ndarray:
        """One-hot categorical blocks, then the continuous columns min-max scaled to [-1, 1] (float32)."""
        cont = df[list(self.schema_.continuous)].to_numpy(np.float64)
        return encode_blocks(df, self.schema_.categorical, self.widths_, 2 * (cont - self.lo_) / self.span_ - 1)

    def _decode(self, out: np.ndarray) -> dict:
        """Column values from generator output: each categorical block's argmax, tanh outputs mapped back to range.

        With hard Gumbel-softmax heads the argmax is a draw from the softmax of the head's logits.
        """
        values, cont = decode_blocks(out, self.schema_.categorical, self.widths_)
        for i, c in enumerate(self.schema_.continuous):
            x = (cont[:, i].astype(np.float64) + 1) / 2 * self.span_[i] + self.lo_[i]
            hi = self.lo_[i] if self.constant_[i] else self.lo_[i] + self.span_[i]
            values[c] = np.clip(x, self.lo_[i], hi)
        return values

    # ------------------------------------------------------------------ protocol

    def _fit(self, df: pd.DataFrame, rng: np.random.Generator) -> None:
        import torch

        if self.n_train_ < 2:
            raise VrlibError(f"{type(self).__name__} needs at least 2 training rows (batch norm), got {self.n_train_}")
        device = resolve_device(self.device)
        data = torch.as_tensor(self._fit_encoding(df), device=device)
        start = time.perf_counter()
        with torch_threads(self.threads), torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
            torch.manual_seed(int(rng.integers(2**63 - 1)))
            gen, critic = build_networks(torch, self._input_width(), self.widths_, len(self.schema_.continuous))
            gen, critic = gen.to(device), critic.to(device)
            self.losses_ = self._train(torch, gen, critic, data)
        self.fit_seconds_ = time.perf_counter() - start
        self.generator_ = gen.eval().cpu()
        self.device_ = device

    def _batches(self) -> tuple[int, int]:
        """Rows per batch and batches per epoch."""
        batch = min(self.batch_size, self.n_train_)
        return batch, max(self.n_train_ // batch, 1)

    def _train(self, torch, gen, critic, data) -> pd.DataFrame:
        """Train ``gen`` and ``critic`` on the encoded rows ``data``; return the losses at the end of each epoch."""
        opt_g, opt_d = self._optimizers(torch, gen, critic)
        batch, steps = self._batches()
        losses = []
        for _ in tqdm(range(self.epochs), desc=f"{self._label} epochs", disable=not self.progress, leave=False):
            order = torch.randperm(self.n_train_, device=data.device)
            for s in range(steps):
                real = data[order[s * batch : (s + 1) * batch]]
                for _ in range(self.n_critic):
                    loss_d = self._critic_loss(torch, critic, real, self._generate(torch, gen, real).detach())
                    optimizer_step(opt_d, loss_d)
                    self._after_critic_step(torch, critic)
                loss_g = self._generator_loss(torch, critic, real, self._generate(torch, gen, real))
                optimizer_step(opt_g, loss_g)
            losses.append((float(loss_d.detach()), float(loss_g.detach())))
        return pd.DataFrame(losses, columns=["critic", "generator"])

    def _sample(self, n: int, rng: np.random.Generator) -> dict:
        import torch

        if n == 0:
            return {c: np.zeros(0) for c in self.columns_}
        conditions = self._conditions(n, rng)
        with torch_threads(self.threads), torch.random.fork_rng(devices=[]), torch.no_grad():
            torch.manual_seed(int(rng.integers(2**63 - 1)))
            out = []
            for s in range(0, n, 10_000):
                z = torch.randn(min(10_000, n - s), self.z_dim)
                if conditions is not None:
                    z = torch.cat([z, torch.as_tensor(conditions[s : s + 10_000])], 1)
                out.append(self.generator_(z, self.tau, hard=True).numpy())
        return self._decode(np.vstack(out))


class WGANWC(WGANGP):
    """WGAN with weight clipping (Arjovsky et al. 2017) and the TableGAN-MCA architecture (eqs. 5–6): WGAN-WC.

    The paper's second GAN: the generator and critic of :class:`WGANGP`, trained on the
    Wasserstein loss *without* a gradient penalty; after every critic update each critic
    weight is clipped to ``[-clip, clip]``, which keeps the critic (roughly) Lipschitz.
    The defaults follow the authors' public code (its WGAN with weight clipping and no
    privacy noise): Adam with lr 1e-4 and betas 0.5 / 0.9 for both networks, weight decay
    1e-6 on the generator, c = 0.01, one critic update per generator update.

    Parameters
    ----------
    epochs, batch_size, z_dim, n_critic, tau, device, threads, progress
        As :class:`WGANGP`.
    clip : float
        c: the critic's weights are clipped to ``[-c, c]`` after each of its updates.
    lr : float
        Adam learning rate of both networks.
    weight_decay : float
        Adam's L2 weight decay on the generator's parameters (0 for none).

    Attributes
    ----------
    losses_ : DataFrame
    fit_seconds_ : float
    """

    _label = "WGAN-WC"
    _positive = ("clip", "lr", "tau")

    def __init__(
        self,
        epochs: int = 300,
        batch_size: int = 500,
        z_dim: int = 128,
        n_critic: int = 1,
        clip: float = 0.01,
        lr: float = 1e-4,
        weight_decay: float = 1e-6,
        tau: float = 0.2,
        device: str = "auto",
        threads=None,
        progress: bool = False,
    ):
        self.epochs = epochs
        self.batch_size = batch_size
        self.z_dim = z_dim
        self.n_critic = n_critic
        self.clip = clip
        self.lr = lr
        self.weight_decay = weight_decay
        self.tau = tau
        self.device = device
        self.threads = threads
        self.progress = progress
        self._check_params()

    def _check_params(self) -> None:
        super()._check_params()
        check_number("weight_decay", self.weight_decay, minimum=0)

    def _optimizers(self, torch, gen, critic):
        return (
            torch.optim.Adam(gen.parameters(), lr=self.lr, betas=(0.5, 0.9), weight_decay=self.weight_decay),
            torch.optim.Adam(critic.parameters(), lr=self.lr, betas=(0.5, 0.9)),
        )

    def _critic_loss(self, torch, critic, real, fake):
        """The critic's Wasserstein loss, no penalty."""
        return critic(fake).mean() - critic(real).mean()

    def _after_critic_step(self, torch, critic) -> None:
        """Clip every critic weight to ``[-clip, clip]``."""
        with torch.no_grad():
            for p in critic.parameters():
                p.clamp_(-self.clip, self.clip)


__all__ = ["WGANGP", "WGANWC", "build_networks", "decode_blocks", "encode_blocks", "optimizer_step"]
