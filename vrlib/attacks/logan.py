"""LOGAN (Hayes et al. 2019): membership scores from a discriminator or a classifier, DOMIAS's baselines.

``LOGAN0`` trains a small GAN on the release and scores with its discriminator (no reference
set); ``LOGAND1`` trains an MLP to tell released from reference records, as Hayes et al.
describe it; ``LOGAND1Published`` trains the same network as the DOMIAS reference code does,
so that a figure can show where the paper's numbers come from.
"""

from __future__ import annotations

import math

import numpy as np

from vrlib.attacks.pointwise import PointwiseAttack
from vrlib.errors import VrlibError
from vrlib.torch_setup import resolve_device, torch_threads

__all__ = ["LOGAN0", "LOGAND1", "LOGAND1Published"]


class LOGAN0(PointwiseAttack):
    """LOGAN 0 (Hayes et al. 2019, black box without auxiliary data).

    A small GAN (MLP generator and discriminator, non-saturating loss) is trained on the
    standardised synthetic data; the score is the discriminator's probability that ``x``
    is "real", i.e. looks like the synthetic data.  (The DOMIAS reference code trains a
    CTGAN with ``pac=1`` for as many epochs as the attacked TVAE, 2,000 in Fig. 3a, on the
    synthetic data, and scores ``X`` with its discriminator after CTGAN's own mode-specific
    transform; a plain GAN on continuous columns keeps the attack self-contained and
    affordable on a CPU.)

    Parameters
    ----------
    epochs : int
        Passes over the synthetic data.
    batch_size, hidden, latent_dim : int
    lr : float
        Adam learning rate of both networks (betas 0.5, 0.999).
    seed : int
    threads : int, optional
        Torch threads while training (default 1).
    device : str, optional
    """

    uses_reference = False

    def __init__(
        self,
        epochs: int = 100,
        batch_size: int = 128,
        hidden: int = 64,
        latent_dim: int = 16,
        lr: float = 2e-4,
        seed: int = 0,
        threads: int | None = 1,
        device: str | None = None,
    ):
        self.epochs = epochs
        self.batch_size = batch_size
        self.hidden = hidden
        self.latent_dim = latent_dim
        self.lr = lr
        self.seed = seed
        self.threads = threads
        self.device = device

    def fit(self, synthetic, reference=None) -> "LOGAN0":
        import torch

        syn, _ = self._check_fit(synthetic, reference)
        if self.epochs < 1 or self.batch_size < 1:
            raise VrlibError("epochs and batch_size must be positive")
        self.mean_ = syn.mean(axis=0)
        self.scale_ = np.where(syn.std(axis=0) > 0, syn.std(axis=0), 1.0)
        d, h = syn.shape[1], self.hidden
        device = resolve_device(self.device)
        with torch_threads(self.threads):
            torch_gen = torch.Generator().manual_seed(int(self.seed))
            nn = torch.nn
            with torch.random.fork_rng(devices=[]):  # module init draws from the global generator
                torch.manual_seed(int(self.seed))
                gen = nn.Sequential(
                    nn.Linear(self.latent_dim, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, d)
                ).to(device)
                disc = nn.Sequential(
                    nn.Linear(d, h), nn.LeakyReLU(0.2), nn.Linear(h, h), nn.LeakyReLU(0.2), nn.Linear(h, 1)
                ).to(device)
            opt_g = torch.optim.Adam(gen.parameters(), lr=self.lr, betas=(0.5, 0.999))
            opt_d = torch.optim.Adam(disc.parameters(), lr=self.lr, betas=(0.5, 0.999))
            bce = nn.functional.binary_cross_entropy_with_logits
            data = torch.as_tensor((syn - self.mean_) / self.scale_, dtype=torch.float32, device=device)
            rng = np.random.default_rng(self.seed)
            n = len(data)
            for _ in range(self.epochs):
                order = torch.as_tensor(rng.permutation(n), device=device)
                for start in range(0, n, self.batch_size):
                    real = data[order[start : start + self.batch_size]]
                    m = len(real)
                    z = torch.randn(m, self.latent_dim, generator=torch_gen).to(device)
                    fake = gen(z)
                    loss_d = bce(disc(real), torch.ones(m, 1, device=device)) + bce(
                        disc(fake.detach()), torch.zeros(m, 1, device=device)
                    )
                    opt_d.zero_grad(set_to_none=True)
                    loss_d.backward()
                    opt_d.step()
                    loss_g = bce(disc(fake), torch.ones(m, 1, device=device))
                    opt_g.zero_grad(set_to_none=True)
                    loss_g.backward()
                    opt_g.step()
        self.discriminator_ = disc.eval()
        self.device_ = device
        return self

    def score(self, X) -> np.ndarray:
        """The discriminator's logit (a monotone map of its probability) for each row of ``X``.

        Logits rather than probabilities so that confident scores do not tie at 1.0.
        """
        import torch

        X = self._check_score(X)
        with torch.no_grad(), torch_threads(self.threads):
            t = torch.as_tensor((X - self.mean_) / self.scale_, dtype=torch.float32, device=self.device_)
            return self.discriminator_(t).squeeze(1).double().cpu().numpy()


class LOGAND1(PointwiseAttack):
    """LOGAN D1 (Hayes et al. 2019): an MLP told synthetic (1) from reference (0) records.

    Both sets are cut to the smaller size so the classes are balanced and standardised
    with their pooled mean and standard deviation.  The classifier is a ReLU MLP (two
    hidden layers of 256, as in the network the reference implementation uses), trained
    with Adam on the log loss; 10 % of the rows are held out and training stops when
    their log loss has not improved for ``patience`` epochs, keeping the best weights
    (a validation *accuracy* criterion stops long before the scores are informative).
    The score is the classifier's logit for "synthetic", a monotone map of
    P(synthetic | x) that does not tie at 1.0.

    Parameters
    ----------
    hidden_layer_sizes : tuple of int
    epochs : int
        Most passes over the training rows.
    batch_size : int
    lr : float
    patience : int
    seed : int
    threads : int, optional
        Torch threads while training (default 1); ``None`` leaves torch's setting alone.
    device : str, optional
    """

    def __init__(
        self,
        hidden_layer_sizes=(256, 256),
        epochs: int = 100,
        batch_size: int = 256,
        lr: float = 1e-3,
        patience: int = 5,
        seed: int = 0,
        threads: int | None = 1,
        device: str | None = None,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.patience = patience
        self.seed = seed
        self.threads = threads
        self.device = device

    def fit(self, synthetic, reference) -> "LOGAND1":
        syn, ref = self._check_fit(synthetic, reference)
        if self.epochs < 1 or self.batch_size < 1:
            raise VrlibError("epochs and batch_size must be positive")
        with torch_threads(self.threads):
            return self._fit(syn, ref)

    def _fit(self, syn, ref) -> "LOGAND1":
        import torch

        rng = np.random.default_rng(self.seed)
        n = min(len(syn), len(ref))
        X = np.vstack([syn[rng.permutation(len(syn))[:n]], ref[rng.permutation(len(ref))[:n]]])
        y = np.r_[np.ones(n), np.zeros(n)]
        self.mean_ = X.mean(axis=0)
        self.scale_ = np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
        order = rng.permutation(len(X))
        n_val = max(1, len(X) // 10)
        val, train = order[:n_val], order[n_val:]
        device = resolve_device(self.device)
        nn = torch.nn
        with torch.random.fork_rng(devices=[]):  # module init draws from the global generator
            torch.manual_seed(int(self.seed))
            layers, width = [], X.shape[1]
            for h in self.hidden_layer_sizes:
                layers += [nn.Linear(width, int(h)), nn.ReLU()]
                width = int(h)
            net = nn.Sequential(*layers, nn.Linear(width, 1)).to(device)
        opt = torch.optim.Adam(net.parameters(), lr=self.lr)
        loss_fn = nn.functional.binary_cross_entropy_with_logits
        data = torch.as_tensor((X - self.mean_) / self.scale_, dtype=torch.float32, device=device)
        target = torch.as_tensor(y, dtype=torch.float32, device=device).unsqueeze(1)
        val_t = torch.as_tensor(val, device=device)
        best, best_state, waited = math.inf, None, 0
        for _ in range(self.epochs):
            perm = train[rng.permutation(len(train))]
            for start in range(0, len(perm), self.batch_size):
                idx = torch.as_tensor(perm[start : start + self.batch_size], device=device)
                loss = loss_fn(net(data[idx]), target[idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
            with torch.no_grad():
                val_loss = float(loss_fn(net(data[val_t]), target[val_t]))
            if val_loss < best - 1e-5:
                best, waited = val_loss, 0
                best_state = {k: v.detach().clone() for k, v in net.state_dict().items()}
            else:
                waited += 1
                if waited >= self.patience:
                    break
        net.load_state_dict(best_state)
        self.classifier_ = net.eval()
        self.device_ = device
        return self

    def score(self, X) -> np.ndarray:
        """The classifier's logit for "synthetic" at each row of ``X``."""
        import torch

        X = self._check_score(X)
        with torch.no_grad(), torch_threads(self.threads):
            t = torch.as_tensor((X - self.mean_) / self.scale_, dtype=torch.float32, device=self.device_)
            return self.classifier_(t).squeeze(1).double().cpu().numpy()


class LOGAND1Published(PointwiseAttack):
    """LOGAN D1 trained as the DOMIAS reference code trains it (to show where the paper's numbers come from).

    The paper's D1 baseline (the authors' public code, ``hayes_torch``) stacks the first
    ``num = min(n_syn, n_ref)`` synthetic rows (label 1) on the first ``num`` reference rows
    (label 0), then runs ``int(300 · n_test / 256)`` Adam steps (lr 1e-3) of a 2-output ReLU
    network (``hidden``-``hidden``, cross-entropy), each on a batch of 256 row indices drawn
    with replacement from ``range(n_test)``, where ``n_test`` is the number of records to
    score (2·|D_mem|).  Whenever ``n_test ≤ num`` (every size of the paper's Fig. 3a:
    ``n_test ≤ 2,000``, ``num = 10,000``) the batches hold synthetic rows only, so the network
    is trained on one class: it never sees a reference record.  The score is the network's
    class-1 output (a logit, as in that code); inputs are used as given (the experiment
    standardises every column beforehand, as the authors' pipeline does).

    :class:`LOGAND1` is the baseline trained as Hayes et al. describe it; this one is kept
    beside it so that a figure can show both.

    Parameters
    ----------
    n_test : int
        Number of records that will be scored: it sets the rows the batches are drawn from
        and the number of steps, as in the reference code.
    hidden : int
        Width of both hidden layers (256 in the reference code).
    batch_size : int
    lr : float
    steps_per_record : float
        Steps = ``int(steps_per_record · n_test / batch_size)`` (300 in the reference code).
    seed : int
    threads : int, optional
    device : str, optional

    Attributes
    ----------
    n_steps_ : int
    rows_drawn_ : ndarray
        The distinct row indices of the stacked training array that some batch used.
    labels_drawn_ : ndarray, shape (2,)
        How many batch rows had label 0 (reference) and 1 (synthetic), over all steps.
    """

    def __init__(
        self,
        n_test: int = 2000,
        hidden: int = 256,
        batch_size: int = 256,
        lr: float = 1e-3,
        steps_per_record: float = 300,
        seed: int = 0,
        threads: int | None = 1,
        device: str | None = None,
    ):
        self.n_test = n_test
        self.hidden = hidden
        self.batch_size = batch_size
        self.lr = lr
        self.steps_per_record = steps_per_record
        self.seed = seed
        self.threads = threads
        self.device = device

    def fit(self, synthetic, reference) -> "LOGAND1Published":
        import torch

        syn, ref = self._check_fit(synthetic, reference)
        num = min(len(syn), len(ref))
        if not 1 <= self.n_test <= 2 * num:
            raise VrlibError(
                f"n_test must be between 1 and 2 × min(n_syn, n_ref) = {2 * num} (the rows batches are drawn "
                f"from), got {self.n_test}; pass the number of records you will score"
            )
        X = np.vstack([syn[:num], ref[:num]])
        y = np.r_[np.ones(num, np.int64), np.zeros(num, np.int64)]
        self.n_steps_ = int(self.steps_per_record * self.n_test / self.batch_size)
        batches = self.batch_rows(self.n_steps_)
        device = resolve_device(self.device)
        nn = torch.nn
        with torch_threads(self.threads):
            with torch.random.fork_rng(devices=[]):  # module init draws from the global generator
                torch.manual_seed(int(self.seed))
                net = nn.Sequential(
                    nn.Linear(X.shape[1], self.hidden),
                    nn.ReLU(),
                    nn.Linear(self.hidden, self.hidden),
                    nn.ReLU(),
                    nn.Linear(self.hidden, 2),
                ).to(device)
            opt = torch.optim.Adam(net.parameters(), lr=self.lr)
            data = torch.as_tensor(X, dtype=torch.float32, device=device)
            target = torch.as_tensor(y, device=device)
            for idx in torch.as_tensor(batches, device=device):
                loss = nn.functional.cross_entropy(net(data[idx]), target[idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
        self.rows_drawn_ = np.unique(batches)
        self.labels_drawn_ = np.bincount(y[batches].ravel(), minlength=2)
        self.classifier_ = net.eval()
        self.device_ = device
        return self

    def batch_rows(self, n_steps: int) -> np.ndarray:
        """Row indices (into the stacked synthetic-then-reference array) of each step's batch, (n_steps, batch_size).

        Uniform with replacement from ``range(n_test)``, as the reference code's
        ``np.random.choice(len(X_test), batch_size)``; seeded by ``seed``.
        """
        return np.random.default_rng(self.seed).integers(0, self.n_test, (n_steps, self.batch_size))

    def score(self, X) -> np.ndarray:
        """The network's class-1 ("synthetic") output for each row of ``X``."""
        import torch

        X = self._check_score(X)
        with torch.no_grad(), torch_threads(self.threads):
            t = torch.as_tensor(X, dtype=torch.float32, device=self.device_)
            return self.classifier_(t)[:, 1].double().cpu().numpy()
