"""Block neural autoregressive flow (De Cao, Aziz & Titov, UAI 2019): the DOMIAS paper's density estimator.

The DOMIAS paper's choice (Table 3: 5 flows, 3 layers, 32 hidden units per dimension,
Adam with learning rate 0.01).  Each flow is a stack of block-triangular
weight-normalised linear maps and ``tanh``, so its Jacobian is triangular and its
log-determinant is carried through the layers as per-dimension derivative vectors,
rescaled at every layer with the scale kept in log space (cheap matrix products, and
the long product over layers neither overflows nor underflows).  Flows are joined
by order reversals and a gated residual connection, over a standard normal base.
Training uses Adam, gradient clipping, a learning-rate decay on plateaus and early
stopping on a seeded validation split, keeping the best weights.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from vrlib.density.base import LOG_2PI, _not_fitted, check_matrix
from vrlib.errors import VrlibError
from vrlib.params import check_integer, check_number
from vrlib.torch_setup import resolve_device, torch_threads

__all__ = ["BNAF"]


def _rescale(vec, log_scale):
    """Keep a derivative vector in range: ``exp(log_scale) * vec`` with ``max(vec) = 1``.

    The derivatives of the block-``i`` units with respect to ``x_i`` are carried as a
    positive vector ``vec`` (batch, d, units) times ``exp(log_scale)`` (batch, d): matrix
    products in linear space (cheap) while the magnitudes live in the log scale (safe).
    The rescaling constants are detached; the value ``log_scale + log(vec)`` and its
    gradient are unchanged by them.
    """
    top = vec.detach().amax(dim=2, keepdim=True).clamp_min(torch.finfo(vec.dtype).tiny)
    return vec / top, log_scale + torch.log(top).squeeze(2)


class _MaskedWeight(nn.Module):
    """Block lower-triangular linear map from ``d*a`` to ``d*b`` units, weight-normalised per row.

    Diagonal blocks are ``exp(W)`` (positive, so each output increases with its own
    input); blocks above the diagonal are zero (autoregressive).  ``forward`` also maps
    the derivatives of the block-``i`` units with respect to ``x_i`` (a ``(vector,
    log scale)`` pair, see :func:`_rescale`) to those of the outputs.
    """

    def __init__(self, d: int, a: int, b: int, generator):
        super().__init__()
        self.d, self.a, self.b = d, a, b
        weight = torch.zeros(d * b, d * a)
        for i in range(d):  # Glorot-uniform over the inputs each row block may see
            fan_in, fan_out = (i + 1) * a, b
            bound = math.sqrt(6.0 / (fan_in + fan_out))
            weight[i * b : (i + 1) * b, : (i + 1) * a] = (
                torch.rand(b, (i + 1) * a, generator=generator) * 2 - 1
            ) * bound
        self.weight = nn.Parameter(weight)
        self.log_scale = nn.Parameter(torch.log(torch.rand(d * b, 1, generator=generator).clamp_min(1e-3)))
        bound = 1.0 / math.sqrt(d * b)
        self.bias = nn.Parameter((torch.rand(d * b, generator=generator) * 2 - 1) * bound)
        rb = torch.arange(d * b) // b
        cb = torch.arange(d * a) // a
        # the blocks below the diagonal; those above it stay zero, the diagonal ones are set in forward
        self.register_buffer("below", (rb[:, None] > cb[None, :]).to(weight.dtype))

    def forward(self, x, state):
        d = self.d
        # The weight-side work does not shrink with the batch, so it is kept to few passes over
        # the (d*b, d*a) matrix: exp only on the diagonal blocks, written into their view of w,
        # and the row gain applied to the (batch, d*b) output rather than to the matrix.
        w = self.weight * self.below
        log_blocks = torch.diagonal(self.weight.view(d, self.b, d, self.a), dim1=0, dim2=2)  # (b, a, d)
        torch.diagonal(w.view(d, self.b, d, self.a), dim1=0, dim2=2).copy_(torch.exp(log_blocks))
        # row gain exp(log_scale) / |w_row|, in log space: log_w = W + log_gain on the diagonal blocks
        log_gain = self.log_scale - torch.log(torch.linalg.vector_norm(w, dim=1, keepdim=True))
        y = torch.addcmul(self.bias, F.linear(x, w), torch.exp(log_gain).view(1, -1))
        blocks = log_blocks.permute(2, 0, 1)
        blocks = blocks + log_gain.view(d, self.b, 1)  # (d, b, a), log of the positive diagonal blocks
        # every entry is at most exp(log_scale) (an entry never exceeds its row's norm)
        shift = self.log_scale.detach().view(d, self.b).amax(dim=1)
        vec, log_scale = state
        vec = torch.einsum("dba,nda->ndb", torch.exp(blocks - shift.view(d, 1, 1)), vec)
        return y, _rescale(vec, log_scale + shift)


class _Tanh(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.d = d

    def forward(self, x, state):
        # log(1 - tanh(x)^2) = 2 (log 2 - x - softplus(-2x)), stable for large |x|
        log_der = (2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))).view(x.shape[0], self.d, -1)
        shift = log_der.detach().amax(dim=2)
        vec, log_scale = state
        return torch.tanh(x), (vec * torch.exp(log_der - shift.unsqueeze(2)), log_scale + shift)


class _Block(nn.Module):
    """One BNAF flow with a gated residual: ``y = s f(x) + (1 - s) x``, ``s = sigmoid(gate)``."""

    def __init__(self, d: int, n_layers: int, hidden_per_dim: int, generator):
        super().__init__()
        self.d = d
        sizes = [1] + [hidden_per_dim] * n_layers + [1]
        layers = []
        for k, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers.append(_MaskedWeight(d, a, b, generator))
            if k < len(sizes) - 2:
                layers.append(_Tanh(d))
        self.layers = nn.ModuleList(layers)
        self.gate = nn.Parameter(torch.randn(1, generator=generator))

    def forward(self, x):
        d = self.d
        h = x
        ones = torch.ones(x.shape[0], d, 1, dtype=x.dtype, device=x.device)
        state = (ones, torch.zeros(x.shape[0], d, dtype=x.dtype, device=x.device))
        for layer in self.layers:
            h, state = layer(h, state)
        vec, log_scale = state
        log_der = log_scale + torch.log(vec.view(x.shape[0], d))  # d y_i / d x_i, in log space
        gate = torch.sigmoid(self.gate)
        y = gate * h + (1 - gate) * x
        # log(s e^g + 1 - s) = softplus(g + gate) - softplus(gate)
        log_der = F.softplus(log_der + self.gate) - F.softplus(self.gate)
        return y, log_der.sum(dim=1)


class _Flow(nn.Module):
    def __init__(self, d: int, n_flows: int, n_layers: int, hidden_per_dim: int, generator):
        super().__init__()
        self.d = d
        self.blocks = nn.ModuleList([_Block(d, n_layers, hidden_per_dim, generator) for _ in range(n_flows)])

    def transform(self, x):
        """``(z, log|det dz/dx|)``."""
        logdet = torch.zeros(x.shape[0], dtype=x.dtype, device=x.device)
        for k, block in enumerate(self.blocks):
            if k > 0:
                x = torch.flip(x, dims=[1])  # reverse the order so every dimension conditions on every other
            x, ld = block(x)
            logdet = logdet + ld
        return x, logdet

    def forward(self, x):
        """Log density of ``x`` under the flow (standard normal base)."""
        z, logdet = self.transform(x)
        return -0.5 * (z * z).sum(dim=1) - 0.5 * self.d * LOG_2PI + logdet


def _build_bnaf(d: int, n_flows: int, n_layers: int, hidden_per_dim: int, generator) -> _Flow:
    """The flow network: ``n_flows`` BNAF blocks over ``d`` dimensions, reversals in between.

    The classes are module-level so that every flow is of one type: a compiled training
    step (:func:`_compiled_loss`) then serves every fit of a process instead of compiling again.
    """
    return _Flow(d, n_flows, n_layers, hidden_per_dim, generator)


# Below this many training steps, compiling (a few seconds with a warm compiler cache, up to
# about a minute with a cold one) costs more than the faster steps save: only paper-size fits compile.
_COMPILE_MIN_STEPS = 2000


def _negative_mean_log_density(model, batch):
    """The training loss: mean negative log density of the batch."""
    return -model(batch).mean()


@functools.cache
def _compiled_loss():
    """:func:`_negative_mean_log_density` through ``torch.compile``, made once per process.

    At the paper's batch of 50 a step is mostly small elementwise passes over the weights;
    fused into few kernels, a step takes about half the time on a CPU.
    """
    return torch.compile(_negative_mean_log_density)


class BNAF:
    """Block neural autoregressive flow density estimator (the DOMIAS paper's choice).

    The data are standardised with their own mean and standard deviation before
    training (the log density is corrected for it), so the defaults suit any scale.

    Parameters
    ----------
    n_flows, n_layers, hidden_per_dim : int
        Architecture (paper: 5, 3, 32).
    epochs : int
        Most passes over the training part.
    batch_size : int
        Paper: 50 (slow on a CPU; larger batches train faster per epoch).
    lr : float
        Adam learning rate (paper: 0.01); halved after ``lr_patience`` epochs without a
        better validation loss.
    val_fraction : float
        Share of the rows held out for early stopping.
    patience : int
        Stop after this many epochs without a better validation loss; the best weights are kept.
    clip_norm : float
        Gradient norm clipping.
    seed : int
        Seeds the weights, the split and the batch order.
    device : str, optional
        ``"cuda"`` or ``"cpu"``; by default a GPU when one is present.
    threads : int, optional
        Torch CPU threads while fitting and evaluating (restored afterwards).  One is the
        default: the layers are small, and more threads mostly wait on each other,
        badly so on a busy machine.  ``None`` leaves torch's setting alone.
    compile : bool or "auto"
        Train through ``torch.compile`` (about twice as fast per step; the same function, with
        float rounding in another order).  ``"auto"`` compiles fits of at least 2,000 training
        steps, where it pays for its compile time (the paper's settings; not the smaller
        profiles).  Where compiling fails (no C++ compiler, say), training goes on without it,
        with a warning.
    verbose : bool

    Attributes
    ----------
    model_ : torch.nn.Module
    history_ : list of (epoch, train loss, validation loss)
        Mean negative log likelihood (of the standardised data) per epoch.
    best_epoch_ : int
    compiled_ : bool
        Whether the training steps ran compiled.
    """

    def __init__(
        self,
        n_flows: int = 5,
        n_layers: int = 3,
        hidden_per_dim: int = 32,
        epochs: int = 50,
        batch_size: int = 50,
        lr: float = 1e-2,
        val_fraction: float = 0.1,
        patience: int = 10,
        lr_patience: int = 4,
        clip_norm: float = 0.1,
        seed: int = 0,
        device: str | None = None,
        threads: int | None = 1,
        compile: bool | str = "auto",
        verbose: bool = False,
    ):
        self.n_flows = n_flows
        self.n_layers = n_layers
        self.hidden_per_dim = hidden_per_dim
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.val_fraction = val_fraction
        self.patience = patience
        self.lr_patience = lr_patience
        self.clip_norm = clip_norm
        self.seed = seed
        self.device = device
        self.threads = threads
        self.compile = compile
        self.verbose = verbose

    def _check_params(self) -> None:
        for name in ("n_flows", "n_layers", "hidden_per_dim", "epochs", "batch_size"):
            check_integer(name, getattr(self, name), minimum=1)
        check_number("val_fraction", self.val_fraction, minimum=0, below=1)
        check_number("lr", self.lr, above=0)
        if self.compile not in (True, False, "auto"):
            raise VrlibError(f"compile must be True, False or 'auto', not {self.compile!r}")

    def _n_validation(self, n: int) -> int:
        n_val = int(round(self.val_fraction * n)) if self.val_fraction > 0 else 0
        return min(n_val, n - 1)

    def compiles(self, n_rows: int) -> bool:
        """Whether a fit on ``n_rows`` rows trains through ``torch.compile`` (unless compiling fails).

        Under ``compile="auto"``: whether its training steps (epochs × batches) reach 2,000.
        """
        self._check_params()
        if self.compile != "auto":
            return self.compile
        steps = self.epochs * math.ceil((n_rows - self._n_validation(n_rows)) / self.batch_size)
        return steps >= _COMPILE_MIN_STEPS

    def fit(self, X) -> "BNAF":
        """Train the flow by maximum likelihood on ``X`` (n, d), at least two rows."""
        self._check_params()
        with torch_threads(self.threads), warnings.catch_warnings():
            # torch's compiler warns of its own deprecated internals while it compiles: nothing to act on here
            warnings.filterwarnings("ignore", category=FutureWarning, module=r"torch\.")
            warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"torch\.")
            return self._fit(X)

    def _fit(self, X) -> "BNAF":
        X = check_matrix(X, "the data of the flow", min_rows=2)
        n, d = X.shape
        self.d_ = d
        self.mean_ = X.mean(axis=0)
        std = X.std(axis=0)
        self.scale_ = np.where(std > 0, std, 1.0)  # a constant column is left as is
        Z = (X - self.mean_) / self.scale_

        rng = np.random.default_rng(self.seed)
        order = rng.permutation(n)
        n_val = self._n_validation(n)
        val_idx, train_idx = order[:n_val], order[n_val:]
        if n_val == 0:  # too few rows to hold any out: stop on the training loss
            val_idx = train_idx

        device = resolve_device(self.device)
        self.device_ = device
        gen = torch.Generator().manual_seed(int(self.seed))
        model = _build_bnaf(d, self.n_flows, self.n_layers, self.hidden_per_dim, gen).to(device)
        data = torch.as_tensor(Z, dtype=torch.float32, device=device)
        # fused: one kernel for all parameters, several times faster than the per-tensor loops on a CPU
        opt = torch.optim.Adam(model.parameters(), lr=self.lr, amsgrad=True, fused=True)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=self.lr_patience, min_lr=1e-4)

        compiled = self.compiles(n)
        loss_of = _compiled_loss() if compiled else _negative_mean_log_density

        best, best_state, best_epoch, waited = math.inf, None, 0, 0
        self.history_ = []
        for epoch in range(1, self.epochs + 1):
            model.train()
            perm = train_idx[rng.permutation(len(train_idx))]
            total, count = 0.0, 0
            for start in range(0, len(perm), self.batch_size):
                batch = data[torch.as_tensor(perm[start : start + self.batch_size], device=device)]
                try:
                    loss = loss_of(model, batch)
                except Exception as exc:  # the compiler failed (it compiles at the first call)
                    if not compiled:
                        raise
                    warnings.warn(f"torch.compile failed ({type(exc).__name__}: {exc}); the flow trains without it")
                    compiled, loss_of = False, _negative_mean_log_density
                    loss = loss_of(model, batch)
                if not torch.isfinite(loss):  # a diverging step: skip it rather than poison the weights
                    continue
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), self.clip_norm)
                opt.step()
                total += float(loss.detach()) * len(batch)
                count += len(batch)
            val = float(-self._log_density_std(model, data[torch.as_tensor(val_idx, device=device)]).mean())
            train = total / max(count, 1)
            self.history_.append((epoch, train, val))
            if self.verbose:
                print(f"epoch {epoch}: train nll {train:.4f}, validation nll {val:.4f}")
            sched.step(val)
            if val < best - 1e-4:
                best, best_epoch, waited = val, epoch, 0
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            else:
                waited += 1
                if waited >= self.patience:
                    break
        if best_state is None:
            raise VrlibError("the flow diverged in every epoch; lower lr or standardise the data")
        model.load_state_dict(best_state)
        model.eval()
        self.model_ = model
        self.best_epoch_ = best_epoch
        self.compiled_ = compiled
        return self

    @staticmethod
    def _log_density_std(model, tensor, chunk: int = 8192):
        with torch.no_grad():
            parts = [model(tensor[s : s + chunk]) for s in range(0, len(tensor), chunk)]
        return torch.cat(parts)

    def log_density(self, X) -> np.ndarray:
        """Log density at each row of ``X`` (m, d), in the original units.

        Returns
        -------
        ndarray (m,)
        """
        _not_fitted(self, "model_")
        X = check_matrix(X, "the points to evaluate", n_features=self.d_)
        Z = torch.as_tensor((X - self.mean_) / self.scale_, dtype=torch.float32, device=self.device_)
        with torch_threads(self.threads):
            out = self._log_density_std(self.model_, Z).double().cpu().numpy()
        return out - np.log(self.scale_).sum()
