"""PATE-GAN (Jordon, Yoon & van der Schaar 2019): a GAN whose discriminator learns only from noisy teacher votes.

The training records are split into ``k`` disjoint partitions, one per *teacher*
discriminator; each teacher learns to tell its partition's records from generated ones.
The *student* discriminator never sees a real record: it is trained on generated records
labelled by the teachers' noisy vote (the PATE mechanism, Papernot et al. 2017), and the
generator learns to fool the student.  For each generated record ``u`` the teachers' votes
``n_0`` ("generated") and ``n_1`` ("real") get independent Laplace noise of scale ``1/λ``
and the label is the larger (:func:`noisy_votes`, PATE-GAN Alg. 1).  Only these labels
touch the data, so the release is (ε, δ)-differentially private by the moments
accountant: every vote adds to the log moments ``α(l)`` the smaller of the
data-independent bound ``2λ²l(l+1)`` and the data-dependent one (:func:`vote_moments`),
and ``ε = min_l (α(l) + log(1/δ)) / l`` (:func:`epsilon_spent`).  Training stops before the
student learns from a batch of votes that would take ε past the budget.

As in the authors' later code, each teacher is a logistic regression (here all ``k``
trained together, one weight vector each); the generator and the student are the networks
of :class:`~vrlib.generators.wgan.WGANGP` (the student is its critic with a logit output),
and encoding, sampling and the set-up of the fit are WGAN-GP's; :class:`PATEGAN` replaces
only the training loop.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from vrlib.errors import VrlibError
from vrlib.generators.gan import GAN
from vrlib.generators.wgan import optimizer_step
from vrlib.params import check_integer, check_number


def noisy_votes(n0, n1, lamda: float, rng: np.random.Generator) -> np.ndarray:
    """PATE's noisy argmax of two vote counts: 1 where ``n1 + Lap(1/λ) > n0 + Lap(1/λ)``.

    The noise of ``n0`` is drawn first, then that of ``n1``: ``rng.laplace(0, 1/λ, (2, m))``.
    """
    n0, n1 = np.asarray(n0, np.float64), np.asarray(n1, np.float64)
    noise = rng.laplace(0.0, 1.0 / lamda, size=(2, len(n0)))
    return (n1 + noise[1] > n0 + noise[0]).astype(np.int64)


def vote_moments(n0, n1, lamda: float, orders) -> np.ndarray:
    """The log moments ``α(l)`` that a batch of noisy votes adds, for each order ``l`` (summed over the votes).

    Per vote with gap ``Δ = |n0 - n1|``, ``q = (2 + λΔ) / (4 exp(λΔ))`` bounds the chance that
    the noisy argmax differs from the plain one; the vote adds
    ``min(2λ²l(l+1), log((1-q)((1-q)/(1-e^{2λ}q))^l + q e^{2λl}))``, the second (data-dependent)
    bound only where ``q < (e^{2λ}-1)/(e^{4λ}-1)`` (Papernot et al. 2017, Thm. 3; PATE-GAN Alg. 1).
    """
    gap = np.abs(np.asarray(n0, np.float64) - np.asarray(n1, np.float64))
    orders = np.asarray(orders, np.float64)
    independent = 2 * lamda**2 * orders * (orders + 1)  # (L,)
    q = (2 + lamda * gap) / (4 * np.exp(lamda * gap))  # (m,)
    usable = q < math.expm1(2 * lamda) / math.expm1(4 * lamda)
    qu = q[usable][:, None]
    ratio = (1 - qu) / (1 - math.exp(2 * lamda) * qu)
    dependent = np.logaddexp(np.log1p(-qu) + orders * np.log(ratio), np.log(qu) + 2 * lamda * orders)
    per_vote = np.broadcast_to(independent, (len(gap), len(orders))).copy()
    per_vote[usable] = np.minimum(per_vote[usable], dependent)
    return per_vote.sum(axis=0)


def epsilon_spent(alpha, orders, delta: float) -> float:
    """ε of the moments accountant: ``min_l (α(l) + log(1/δ)) / l``."""
    orders = np.asarray(orders, np.float64)
    return float(np.min((np.asarray(alpha, np.float64) + math.log(1 / delta)) / orders))


class PATEGAN(GAN):
    """PATE-GAN: teacher discriminators on disjoint partitions, noisy votes, a student discriminator.

    Parameters
    ----------
    epsilon, delta : float
        The privacy budget (ε, δ); training stops before it would be exceeded.  The DOMIAS
        paper runs PATE-GAN with "recommended hyper-parameter settings" without giving
        them: ε = 1 and δ = 1e-5 are the defaults of the PATE-GAN authors' code.
    n_teachers : int
        k, the number of teachers (and of disjoint partitions of the training records).
    lamda : float
        λ: the votes' Laplace noise has scale 1/λ and each vote costs at most 2λ²l(l+1) of the
        l-th log moment (spelt as in the authors' code).  The default 1e-3 is synthcity's, the
        library of the DOMIAS authors' group; the PATE-GAN authors' code defaults to 1 but
        draws its noise at scale λ while accounting for 1/λ.  With 10 teachers, ε = 1 and
        δ = 1e-5 no λ gives both informative votes and many of them: at 1e-3 about ten
        thousand votes, each close to a coin flip.
    teacher_lr : float
        Adam learning rate of the teachers' logistic regressions.
    max_order : int
        The accountant tracks the moments of orders 1 … ``max_order``.
    teacher_steps : int
        Teacher updates per iteration.
    epochs : int
        At most this many passes (iterations of ``n_train // batch_size`` steps) when the
        budget lasts.
    batch_size, z_dim, n_critic, lr, tau, device, threads, progress
        As :class:`~vrlib.generators.gan.GAN` (``n_critic``: student updates per
        generator update, each on ``batch_size`` voted records).

    Attributes
    ----------
    partitions_ : list of ndarray
        The training positions of each teacher's partition.
    epsilon_ : float
        ε spent by the votes the student learnt from.
    n_votes_ : int
        How many generated records the teachers labelled.
    steps_ : int
        Generator updates made.
    stopped_by_budget_ : bool
        Whether the budget ended the training before ``epochs`` passes.
    losses_ : DataFrame
    fit_seconds_ : float
    """

    _label = "PATE-GAN"
    _positive = ("lr", "tau", "epsilon", "delta", "lamda", "teacher_lr")

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float = 1e-5,
        n_teachers: int = 10,
        lamda: float = 1e-3,
        max_order: int = 100,
        teacher_steps: int = 1,
        teacher_lr: float = 2e-3,
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
        self.epsilon = epsilon
        self.delta = delta
        self.n_teachers = n_teachers
        self.lamda = lamda
        self.max_order = max_order
        self.teacher_steps = teacher_steps
        self.teacher_lr = teacher_lr
        super().__init__(epochs, batch_size, z_dim, n_critic, lr, tau, device, threads, progress)

    def _check_params(self) -> None:
        super()._check_params()
        check_number("delta", self.delta, above=0, below=1)
        for name in ("n_teachers", "max_order", "teacher_steps"):
            check_integer(name, getattr(self, name), minimum=1)

    def _fit(self, df: pd.DataFrame, rng: np.random.Generator) -> None:
        if self.n_train_ < max(2, self.n_teachers):
            raise VrlibError(
                f"PATEGAN needs at least 2 training rows and one per teacher ({self.n_teachers}), got "
                f"{self.n_train_}; lower n_teachers"
            )
        # drawn before the networks' seed (in WGANGP._fit)
        self._votes_rng = np.random.default_rng(rng.integers(2**63 - 1))
        self.partitions_ = np.array_split(rng.permutation(self.n_train_), self.n_teachers)  # disjoint
        try:
            super()._fit(df, rng)
        finally:
            del self._votes_rng

    def _train(self, torch, gen, student, data) -> pd.DataFrame:
        """Teachers on their partitions, the student on their noisy votes, the generator against the student."""
        device = data.device
        part_size = torch.as_tensor([len(p) for p in self.partitions_], device=device)
        part_rows = torch.as_tensor(np.concatenate(self.partitions_), device=device)
        part_start = torch.cumsum(part_size, 0) - part_size
        batch, per_epoch = self._batches()
        m = max(1, min(batch, int(part_size.min())))  # records per teacher and update
        orders = np.arange(1, self.max_order + 1)
        alpha = np.zeros(len(orders))
        n_votes, steps, stopped = 0, 0, False
        bce = torch.nn.functional.binary_cross_entropy_with_logits
        losses = []
        k, width = self.n_teachers, data.shape[1]
        weights = torch.zeros(k, width, device=device, requires_grad=True)  # one logistic regression per teacher
        bias = torch.zeros(k, device=device, requires_grad=True)
        opt_t = torch.optim.Adam([weights, bias], lr=self.teacher_lr)
        opt_g, opt_s = self._optimizers(torch, gen, student)
        for _ in tqdm(range(self.epochs), desc=f"{self._label} epochs", disable=not self.progress, leave=False):
            for _ in range(per_epoch):
                for _ in range(self.teacher_steps):
                    pick = (torch.rand(k, m, device=device) * part_size[:, None]).long() + part_start[:, None]
                    real = data[part_rows[pick]]  # (k, m, width): teacher i sees only partition i
                    fake = self._generate(torch, gen, data[: k * m]).detach().view(k, m, width)
                    logits = torch.cat(
                        [torch.einsum("kmd,kd->km", x, weights) + bias[:, None] for x in (real, fake)], 1
                    )
                    target = torch.cat([torch.ones(k, m, device=device), torch.zeros(k, m, device=device)], 1)
                    loss_t = bce(logits, target)
                    optimizer_step(opt_t, loss_t)
                for _ in range(self.n_critic):
                    fake = self._generate(torch, gen, data[:batch]).detach()
                    with torch.no_grad():
                        n1 = ((fake @ weights.T + bias) > 0).sum(1).cpu().numpy()
                    n0 = k - n1
                    spent = alpha + vote_moments(n0, n1, self.lamda, orders)
                    if epsilon_spent(spent, orders, self.delta) > self.epsilon:
                        stopped = True
                        break
                    alpha, n_votes = spent, n_votes + len(n1)
                    labels = torch.as_tensor(noisy_votes(n0, n1, self.lamda, self._votes_rng), device=device)
                    loss_s = bce(student(fake).squeeze(1), labels.float())
                    optimizer_step(opt_s, loss_s)
                if stopped:
                    break
                loss_g = self._generator_loss(torch, student, None, self._generate(torch, gen, data[:batch]))
                optimizer_step(opt_g, loss_g)
                steps += 1
                losses.append((float(loss_t.detach()), float(loss_s.detach()), float(loss_g.detach())))
            if stopped:
                break
        self.epsilon_ = epsilon_spent(alpha, orders, self.delta) if n_votes else 0.0
        self.n_votes_ = n_votes
        self.steps_ = steps
        self.stopped_by_budget_ = stopped
        return pd.DataFrame(losses, columns=["teachers", "student", "generator"])


__all__ = ["PATEGAN", "noisy_votes", "vote_moments", "epsilon_spent"]
