"""Many GANs of one shape trained at once: WGAN-GP, WGAN-WC and the plain GAN, their weights stacked.

DOMIAS's Fig. 6 fits the same GAN on every seed's training set, and TableGAN-MCA fits
shadow GANs of the released generator's family.  :func:`fit_wgan_ensemble` trains K such
fits as one: every layer of the K generators (and of the K critics) is one batched matrix
product (``torch.baddbmm``) over a ``(K, rows, units)`` stack, the K weight sets live in
one flat ``(K, parameters)`` buffer per network, and Adam updates all of them in a few
element-wise operations.  Each member is prepared, encoded, seeded and initialised exactly
as :meth:`WGANGP.fit` does it, and keeps its own learning rate, penalty weight, clipping
bound, temperature, data (of the same width) and number of epochs.

Randomness (``rng``):

* ``"member"`` (the default on a CPU): each member draws its batch order, noise,
  Gumbel noise, penalty interpolates and dropout masks from its own generator, in the
  order its single fit draws them, so a member computes what its single fit computes:
  the same function on the same numbers, summed in another order by the batched
  products.  Over many steps training amplifies that rounding, so a member is close to,
  not equal to, its single fit (tested); what it computes does not depend on which other
  members share its stack.
* ``"shared"`` (the default on a GPU): the whole stack draws each random tensor at once
  from one generator seeded by all the members' seeds, one launch for all K.  A member's
  initial weights are still its single fit's; its training is the same in distribution
  (tested on the samples' marginals and correlations), not draw for draw.

On CUDA the training step (critic and generator updates, random draws, batch gathering,
Adam) runs without any host synchronisation and is captured once as a CUDA graph, then
replayed (the first replay is checked, one synchronisation per fit); when capture or that
replay fails, a warning is given once and the plain step runs instead.  The gradient
penalty's input gradient is written out (:func:`_critic_input_gradient`), so a critic update
is one backward pass, not a double one.

Caches must tell a stacked fit from a single one (:data:`TRAINER`, with the randomness).
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd
import torch

from vrlib.cache import make_key, source_hash
from vrlib.errors import VrlibError
from vrlib.generators import wgan as wgan_module
from vrlib.generators.gan import GAN
from vrlib.generators.wgan import WGANGP, WGANWC, build_networks
from vrlib.parallel import run, width
from vrlib.torch_setup import resolve_device, torch_threads

__all__ = [
    "GENERATORS",
    "RNG_MODES",
    "TRAINER",
    "fit_wgan_ensemble",
    "gan_trainer",
    "GAN_TRAINERS",
    "shape_of",
    "stacked_key",
    "synthesize_stacked",
]

# Names the training path in cache keys: a member rounds differently from its single fit.
TRAINER = "wgan-ensemble-v1"
RNG_MODES = ("member", "shared")
GAN_TRAINERS = ("single", "ensemble")
GENERATORS = {"wgan_gp": WGANGP, "wgan_wc": WGANWC, "gan": GAN}  # the exact classes a stack fits (not subclasses)

_BETAS = {WGANGP: (0.5, 0.9), WGANWC: (0.5, 0.9), GAN: (0.5, 0.999)}  # as each class's _optimizers
# The order in which one critic update calls the critic (its dropout masks are drawn in this order).
_CRITIC_CALLS = {WGANGP: ("mix", "fake", "real"), WGANWC: ("fake", "real"), GAN: ("real", "fake")}
_BN_EPS, _BN_MOMENTUM, _ADAM_EPS, _DROPOUT = 1e-5, 0.1, 1e-8, 0.5
_warned: set = set()


def gan_trainer(settings: dict | None = None) -> str:
    """How an experiment's GAN fits are trained: ``"single"`` (one by one) or ``"ensemble"`` (stacked).

    ``settings["gan_trainer"]`` when the settings have it, else ``$VRLIB_GAN_TRAINER``, else
    ``"single"``.  Stacked fits are cached under keys of their own (:func:`stacked_key`).
    """
    trainer = (settings or {}).get("gan_trainer") or os.environ.get("VRLIB_GAN_TRAINER") or "single"
    if trainer not in GAN_TRAINERS:
        raise VrlibError(f"gan_trainer must be one of {GAN_TRAINERS}, not {trainer!r} (check $VRLIB_GAN_TRAINER)")
    return trainer


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def shape_of(estimator, widths, n_cont: int, n_rows: int) -> tuple:
    """The key under which fits can share a stack: class, encoded layout, noise width, critic updates, batch."""
    return (
        type(estimator).__name__,
        tuple(int(w) for w in widths),
        int(n_cont),
        int(estimator.z_dim),
        int(estimator.n_critic),
        min(int(estimator.batch_size), int(n_rows)),
    )


# --------------------------------------------------------------------------- one member, as WGANGP.fit prepares it


class _Member:
    """One fit's prepared table, encoding, seed and initial networks (what :meth:`WGANGP.fit` makes before training)."""

    def __init__(self, est, df: pd.DataFrame, schema, seed):
        if type(est) not in _BETAS:
            raise VrlibError(
                f"fit_wgan_ensemble fits {', '.join(c.__name__ for c in _BETAS)} only, got {type(est).__name__}"
            )
        captured = {}

        def capture(prepared, rng):  # Generator.fit's checks and bookkeeping, then the prepared table comes here
            captured.update(df=prepared, rng=rng)

        est._fit = capture
        try:
            est.fit(df, schema, seed)
        finally:
            del est._fit
        est.fitted_ = False
        if est.n_train_ < 2:
            raise VrlibError(f"{type(est).__name__} needs at least 2 training rows (batch norm), got {est.n_train_}")
        self.est = est
        self.data = est._fit_encoding(captured["df"])
        self.seed = int(captured["rng"].integers(2**63 - 1))  # the draw WGANGP._fit seeds torch with
        self.batch, self.steps = est._batches()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            self.gen, self.critic = build_networks(torch, est._input_width(), est.widths_, len(est.schema_.continuous))
            # the single fit's torch stream goes on from here: batch orders, noise, masks
            self.generator = torch.Generator().manual_seed(self.seed)
            self.generator.set_state(torch.get_rng_state())


# --------------------------------------------------------------------------- stacked parameters


def _gen_layout(gen) -> list[tuple[str, tuple]]:
    """(name, per-member shape) of the generator's stacked parameters; heads merged into one matrix."""
    fc1, bn1, fc2, bn2 = gen.fc1[0], gen.fc1[1], gen.fc2[0], gen.fc2[1]
    heads = list(gen.cat_heads) + ([gen.cont_head] if gen.cont_head is not None else [])
    out_w = sum(h.out_features for h in heads)
    return [
        ("W1", (fc1.in_features, fc1.out_features)),
        ("b1", (1, fc1.out_features)),
        ("g1", (1, bn1.num_features)),
        ("be1", (1, bn1.num_features)),
        ("W2", (fc2.in_features, fc2.out_features)),
        ("b2", (1, fc2.out_features)),
        ("g2", (1, bn2.num_features)),
        ("be2", (1, bn2.num_features)),
        ("Wh", (heads[0].in_features, out_w)),
        ("bh", (1, out_w)),
    ]


def _gen_values(gen) -> list:
    fc1, bn1, fc2, bn2 = gen.fc1[0], gen.fc1[1], gen.fc2[0], gen.fc2[1]
    heads = list(gen.cat_heads) + ([gen.cont_head] if gen.cont_head is not None else [])
    return [
        fc1.weight.T,
        fc1.bias[None],
        bn1.weight[None],
        bn1.bias[None],
        fc2.weight.T,
        fc2.bias[None],
        bn2.weight[None],
        bn2.bias[None],
        torch.cat([h.weight for h in heads]).T,
        torch.cat([h.bias for h in heads])[None],
    ]


def _critic_layout(critic) -> list[tuple[str, tuple]]:
    l1, l2, l3 = critic.net[0], critic.net[3], critic.net[6]
    return [
        ("W1", (l1.in_features, l1.out_features)),
        ("b1", (1, l1.out_features)),
        ("W2", (l2.in_features, l2.out_features)),
        ("b2", (1, l2.out_features)),
        ("W3", (l3.in_features, l3.out_features)),
        ("b3", (1, l3.out_features)),
    ]


def _critic_values(critic) -> list:
    l1, l2, l3 = critic.net[0], critic.net[3], critic.net[6]
    return [l1.weight.T, l1.bias[None], l2.weight.T, l2.bias[None], l3.weight.T, l3.bias[None]]


class _Stack:
    """K networks' parameters in one flat ``(K, P)`` buffer, with leaves that are views of it and gradients that land in one ``(K, P)`` buffer."""

    def __init__(self, layout, values_per_member, device):
        self.names = [n for n, _ in layout]
        self.shapes = [s for _, s in layout]
        sizes = [math.prod(s) for s in self.shapes]
        K = len(values_per_member)
        self.flat = torch.empty(K, sum(sizes), device=device)
        self.grad = torch.zeros_like(self.flat)
        self.m = torch.zeros_like(self.flat)  # Adam's moments, element by element: each member's own
        self.v = torch.zeros_like(self.flat)
        self.leaves, off = {}, 0
        for name, shape, size in zip(self.names, self.shapes, sizes):
            view = self.flat[:, off : off + size].view(K, *shape)
            for k, values in enumerate(values_per_member):
                view[k].copy_(values[self.names.index(name)].detach())
            leaf = view.detach().requires_grad_(True)  # shares the buffer: Adam's in-place steps are seen here
            leaf.grad = self.grad[:, off : off + size].view(K, *shape)  # backward accumulates into the flat buffer
            self.leaves[name] = leaf
            off += size

    def member(self, k: int) -> dict:
        return {name: leaf.detach()[k] for name, leaf in self.leaves.items()}


# --------------------------------------------------------------------------- the batched networks


def _leaky(x):
    return torch.nn.functional.leaky_relu(x, 0.2)


def _batch_norm(a, gamma, beta, running_mean, running_var, keep):
    """Training-mode batch norm of each member over its rows, updating its running statistics.

    The K members' units side by side are the channels of one ``batch_norm`` (B, K·h);
    ``keep`` (K, 1, 1; or None when all train) marks the members whose statistics move.
    """
    K, B, h = a.shape
    # masked: the statistics move in copies, and only the training members' copies are kept
    stats = (running_mean, running_var) if keep is None else (running_mean.clone(), running_var.clone())
    out = torch.nn.functional.batch_norm(
        a.transpose(0, 1).reshape(B, K * h),
        stats[0].view(-1),
        stats[1].view(-1),
        gamma.reshape(-1),
        beta.reshape(-1),
        training=True,
        momentum=_BN_MOMENTUM,
        eps=_BN_EPS,
    )
    if keep is not None:
        with torch.no_grad():
            running_mean.copy_(torch.where(keep > 0, stats[0], running_mean))
            running_var.copy_(torch.where(keep > 0, stats[1], running_var))
    return out.view(B, K, h).transpose(0, 1)


def _generate(P, bn, z, gumbel, tau, keep, blocks, n_cont):
    """The K generators on noise ``z`` (K, B, z_dim): soft Gumbel-softmax blocks, then tanh columns."""
    h1 = torch.relu(_batch_norm(torch.baddbmm(P["b1"], z, P["W1"]), P["g1"], P["be1"], bn[0], bn[1], keep))
    h2 = torch.relu(
        _batch_norm(torch.baddbmm(P["b2"], torch.cat([z, h1], 2), P["W2"]), P["g2"], P["be2"], bn[2], bn[3], keep)
    )
    logits = torch.baddbmm(P["bh"], torch.cat([z, h1, h2], 2), P["Wh"])
    parts = []
    for (start, stop), noise in zip(blocks, gumbel):  # gumbel_softmax: softmax((logits - log E) / tau)
        parts.append(torch.softmax((logits[:, :, start:stop] - noise.log()) / tau, dim=2))
    if n_cont:
        parts.append(torch.tanh(logits[:, :, logits.shape[2] - n_cont :]))
    return torch.cat(parts, 2)


def _critic(P, x, masks):
    """The K critics on ``x`` (K, B, width); ``masks`` the two dropout masks (already scaled by 1 / (1 - p))."""
    h = _leaky(torch.baddbmm(P["b1"], x, P["W1"])) * masks[0]
    h = _leaky(torch.baddbmm(P["b2"], h, P["W2"])) * masks[1]
    return torch.baddbmm(P["b3"], h, P["W3"])[:, :, 0]


def _critic_input_gradient(P, x, masks):
    """The gradient of each critic's output at each row of ``x`` with respect to the row, differentiable in the weights.

    What ``autograd.grad(critic(x).sum(), x, create_graph=True)`` gives, written out: the
    backward pass of the two hidden layers (leaky ReLU's slope is 1 or 0.2, dropout's mask
    scales), so that the penalty's gradient is one backward pass, not a double one.
    """
    with torch.no_grad():  # the slopes are piecewise constant: no gradient flows through them
        a1 = torch.baddbmm(P["b1"], x, P["W1"])
        c1 = torch.where(a1 > 0, 1.0, 0.2) * masks[0]
        a2 = torch.baddbmm(P["b2"], _leaky(a1) * masks[0], P["W2"])
        c2 = torch.where(a2 > 0, 1.0, 0.2) * masks[1]
    g = P["W3"].transpose(1, 2) * c2  # (K, B, h): d out / d h2, through the second layer's slope and mask
    g = torch.bmm(g, P["W2"].transpose(1, 2)) * c1
    return torch.bmm(g, P["W1"].transpose(1, 2))


def _adam(stack: _Stack, t, lr, beta1: float, beta2: float, active, weight_decay=None) -> None:
    """One Adam step of each active member (``torch.optim.Adam``'s formula, per member step counts ``t``)."""
    g = stack.grad
    if weight_decay is not None:
        g.add_(stack.flat * weight_decay)
    t.add_(active)
    stack.m.lerp_(g, (1 - beta1) * active)  # an inactive member's moments stay as they are
    stack.v.mul_(1 - (1 - beta2) * active).add_(g * g * ((1 - beta2) * active))
    tt = t.double().clamp(min=1)
    step_size = (lr / (1 - beta1**tt)).float() * active
    denom = (stack.v.sqrt() / torch.sqrt(1 - beta2**tt).float()).add_(_ADAM_EPS)
    stack.flat.sub_(stack.m / denom * step_size)


# --------------------------------------------------------------------------- the fit


def fit_wgan_ensemble(
    estimators,
    datasets,
    schemas,
    seeds,
    *,
    device=None,
    threads: int | None = 1,
    rng: str | None = None,
    graph: bool | None = None,
) -> list:
    """Fit each ``estimators[k]`` on ``datasets[k]`` with seed ``seeds[k]``, all in one stacked training loop.

    Parameters
    ----------
    estimators : list of WGANGP, WGANWC or GAN
        Unfitted, all of one class, sharing ``z_dim``, ``n_critic`` and the batch size
        (:func:`shape_of`); learning rates, penalty weights, clipping bounds, weight decays,
        temperatures and epochs may differ.  Fitted in place, as by ``fit``.
    datasets : list of DataFrame
        The training tables; their encodings must have one layout (the same columns and
        category sets); the numbers of rows may differ.
    schemas : Schema or list of Schema
    seeds : list of int or None
        As ``fit``'s seed: each member's initial weights, and with ``rng="member"`` all its
        randomness, are its single fit's.
    device : str, optional
        ``"cpu"``, ``"cuda"`` or ``"auto"`` (default: the GPU when present).
    threads : int, optional
        Torch CPU threads while training (restored afterwards); ``None`` leaves them alone.
    rng : {"member", "shared"}, optional
        Where the random draws come from (see the module's text); default ``"member"`` on a
        CPU and ``"shared"`` on a GPU.
    graph : bool, optional
        Capture the training step as a CUDA graph (default: on CUDA with ``rng="shared"``).

    Returns
    -------
    list
        The estimators, fitted: ``generator_``, ``losses_``, ``fit_seconds_`` (the stack's
        seconds shared out evenly), ``trainer_`` (:data:`TRAINER` and the randomness).
    """
    estimators, datasets = list(estimators), list(datasets)
    schemas = list(schemas) if isinstance(schemas, (list, tuple)) else [schemas] * len(estimators)
    seeds = list(seeds)
    if not len(estimators) == len(datasets) == len(schemas) == len(seeds):
        raise VrlibError(
            f"{len(estimators)} estimators, {len(datasets)} datasets, {len(schemas)} schemas and {len(seeds)} "
            "seeds: give one of each per fit"
        )
    if not estimators:
        return []
    dev = resolve_device(device)
    rng = rng or ("shared" if dev.type == "cuda" else "member")
    if rng not in RNG_MODES:
        raise VrlibError(f"rng must be one of {RNG_MODES}, got {rng!r}")
    graph = (dev.type == "cuda" and rng == "shared") if graph is None else bool(graph)
    if graph and (dev.type != "cuda" or rng != "shared"):
        raise VrlibError("graph=True needs device='cuda' and rng='shared' (per-member draws cannot be captured)")
    start = time.perf_counter()
    with torch_threads(threads), warnings.catch_warnings():
        # the gradients are views of one flat buffer on purpose (see _Stack)
        warnings.filterwarnings("ignore", message="grad and param do not obey the gradient layout contract")
        members = [_Member(e, df, s, seed) for e, df, s, seed in zip(estimators, datasets, schemas, seeds)]
        shapes = {shape_of(m.est, m.est.widths_, len(m.est.schema_.continuous), m.est.n_train_) for m in members}
        classes = {type(m.est) for m in members}
        if len(shapes) > 1 or len(classes) > 1:
            raise VrlibError(
                f"the fits of one stack must share their class and shape; got {sorted(shapes)}: "
                "group them by vrlib.generators.wgan_ensemble.shape_of first"
            )
        losses = _train(members, dev, rng, graph)
    seconds = (time.perf_counter() - start) / len(members)
    for m, log in zip(members, losses):
        est = m.est
        est.losses_ = pd.DataFrame(log[: est.epochs], columns=["critic", "generator"])
        est.fit_seconds_ = seconds
        est.generator_ = m.gen.eval().cpu()
        est.device_ = dev
        est.trainer_ = f"{TRAINER}/{rng}"
        est.fitted_ = True
    return estimators


def _stack_seed(members) -> int:
    digest = hashlib.sha256(",".join(str(m.seed) for m in members).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def _train(members, dev, rng: str, graph: bool) -> list[np.ndarray]:
    """Train the stacked networks; copy each member's weights back into its modules; return its losses per epoch."""
    K = len(members)
    est0 = members[0].est
    cls = type(est0)
    B, z_dim = members[0].batch, est0.z_dim
    widths, n_cont = list(est0.widths_), len(est0.schema_.continuous)
    blocks, off = [], 0
    for w in widths:
        blocks.append((off, off + w))
        off += w
    width_ = off + n_cont
    hidden = members[0].gen.fc1[0].out_features
    calls = _CRITIC_CALLS[cls]
    n_critic = est0.n_critic
    beta1, beta2 = _BETAS[cls]

    G = _Stack(_gen_layout(members[0].gen), [_gen_values(m.gen) for m in members], dev)
    C = _Stack(_critic_layout(members[0].critic), [_critic_values(m.critic) for m in members], dev)
    bn = [
        torch.stack([getattr(m.gen, f)[1].__getattr__(s)[None] for m in members]).to(dev)
        for f, s in (("fc1", "running_mean"), ("fc1", "running_var"), ("fc2", "running_mean"), ("fc2", "running_var"))
    ]
    col = lambda values: torch.tensor(values, dtype=torch.float32, device=dev).view(K, 1)  # noqa: E731
    lr_g = col([m.est.lr for m in members]).double()
    lr_d = lr_g.clone()
    tau = col([m.est.tau for m in members]).view(K, 1, 1)
    gp = col([getattr(m.est, "gp_weight", 0.0) for m in members]).view(K)
    clip = col([getattr(m.est, "clip", 0.0) for m in members])
    decay = col([getattr(m.est, "weight_decay", 0.0) for m in members]) if cls is WGANWC else None
    t_g = torch.zeros(K, 1, device=dev)
    t_d = torch.zeros(K, 1, device=dev)

    n_rows = [m.est.n_train_ for m in members]
    n_max = max(n_rows)
    data = torch.zeros(K, n_max, width_, device=dev)
    for k, m in enumerate(members):
        data[k, : n_rows[k]] = torch.as_tensor(m.data, device=dev)
    epochs = [m.est.epochs for m in members]
    steps = [m.steps for m in members]
    E, S = max(epochs), max(steps)
    schedule = np.array(
        [[[e < epochs[k] and s < steps[k] for k in range(K)] for s in range(S)] for e in range(E)], dtype=np.float32
    )
    uniform = bool(schedule.all())
    sched = torch.as_tensor(schedule, device=dev).view(E, S, K, 1)
    active = torch.ones(K, 1, device=dev)
    keep = None if uniform else active.view(K, 1, 1)  # whose batch-norm statistics move this step

    # static buffers: the epoch's batch order, the step counter, every random draw of a step
    perm = torch.zeros(K, n_max, dtype=torch.long, device=dev)  # steps * batch <= rows: a batch never reaches past
    padding = torch.arange(n_max, device=dev)[None, :] >= torch.tensor(n_rows, device=dev)[:, None]
    counter = torch.zeros((), dtype=torch.long, device=dev)
    arange_b = torch.arange(B, device=dev)
    rows_k = torch.arange(K, device=dev)[:, None]
    # every random draw of a step, one buffer per kind so that a shared draw is one call:
    # per critic update and then the generator update (J of them), the noise, Gumbel's Exp(1)
    # noise of every categorical block, the penalty's interpolation weights, the dropout masks
    J = n_critic + 1
    Z = torch.zeros(J, K, B, z_dim, device=dev)
    U = torch.ones(J, K, B, max(off, 1), device=dev)
    A = torch.zeros(n_critic, K, B, 1, device=dev) if "mix" in calls else None
    calls_of = [calls] * n_critic + [("fake",)]
    M = torch.zeros(2 * sum(len(c) for c in calls_of), K, B, hidden, device=dev)
    draws, i = [], 0
    for j in range(J):
        masks = {}
        for c in calls_of[j]:
            masks[c] = (M[i], M[i + 1])
            i += 2
        gumbel = [U[j, :, :, a:b] for a, b in blocks]
        draws.append(
            {"z": Z[j], "gumbel": gumbel, "alpha": None if A is None or j == n_critic else A[j], "masks": masks}
        )
    shifts = torch.arange(32, device=dev)
    words = torch.zeros(-(-M.numel() // 32), dtype=torch.long, device=dev)
    last = torch.zeros(K, 2, device=dev)
    log = torch.zeros(E, K, 2, device=dev)
    shared = rng == "shared"

    def draw_shared():
        Z.normal_()
        U.uniform_().log_().neg_()  # Exp(1) as -log U: one call for every block
        if A is not None:
            A.uniform_()
        # fair coins from random bits (32 a word): a mask element costs 1/32 of a draw
        bits = words.random_().unsqueeze(1).bitwise_right_shift(shifts).bitwise_and_(1)
        M.view(-1).copy_(bits.view(-1)[: M.numel()]).mul_(1 / (1 - _DROPOUT))

    on_cpu = dev.type == "cpu"

    def fill(target, draw) -> None:
        """``draw`` (an in-place sampler) on a tensor of ``target``'s shape, as the single fit makes it."""
        if on_cpu and target.is_contiguous():
            draw(target)
        else:  # a block of columns, or a GPU tensor: drawn on the CPU, then copied
            target.copy_(draw(torch.empty(target.shape)))

    def draw_member(k: int) -> None:
        gen = members[k].generator  # on the CPU, in the order the single fit draws them, each of its shape
        for d in draws:
            fill(d["z"][k], lambda t: t.normal_(generator=gen))
            for g in d["gumbel"]:
                fill(g[k], lambda t: t.exponential_(generator=gen))
            if d["alpha"] is not None:
                fill(d["alpha"][k], lambda t: t.uniform_(generator=gen))
            for pair in d["masks"].values():  # in the order the critic is called
                for mask in pair:
                    fill(mask[k], lambda t: t.bernoulli_(1 - _DROPOUT, generator=gen))
                    mask[k].mul_(1 / (1 - _DROPOUT))

    def step():
        if shared:
            draw_shared()
        # within an epoch the index stays below the rows (steps * batch <= rows); the modulo keeps
        # a CUDA graph's warm-up steps, taken past a short epoch's end, inside the buffer
        idx = perm.index_select(1, torch.remainder(counter * B + arange_b, n_max))
        real = data[rows_k, idx]
        counter.add_(1)
        PG, PC = G.leaves, C.leaves
        for j in range(n_critic):
            d = draws[j]
            with torch.no_grad():
                fake = _generate(PG, bn, d["z"], d["gumbel"], tau, keep, blocks, n_cont)
            loss_d = _critic_losses(cls, calls, PC, d, real, fake, gp)
            C.grad.zero_()
            loss_d.sum().backward(inputs=list(PC.values()))
            with torch.no_grad():
                _adam(C, t_d, lr_d, beta1, beta2, active)
                if cls is WGANWC:
                    C.flat.copy_(torch.maximum(torch.minimum(C.flat, clip), -clip))
        d = draws[n_critic]
        fake = _generate(PG, bn, d["z"], d["gumbel"], tau, keep, blocks, n_cont)
        scores = _critic(PC, fake, d["masks"]["fake"])
        loss_g = (torch.nn.functional.softplus(-scores) if cls is GAN else -scores).mean(1)
        G.grad.zero_()
        loss_g.sum().backward(inputs=list(PG.values()))
        with torch.no_grad():
            _adam(G, t_g, lr_g, beta1, beta2, active, decay)
            both = torch.stack([loss_d.detach(), loss_g.detach()], 1)
            last.copy_(torch.where(active > 0, both, last))

    with torch.random.fork_rng(devices=[dev] if dev.type == "cuda" else []):
        if shared:
            torch.manual_seed(_stack_seed(members))
        run_step = step
        if graph:
            state = [G.flat, G.m, G.v, C.flat, C.m, C.v, t_g, t_d, *bn, last, counter]
            run_step = _capture(step, state, dev) or step
        for e in range(E):
            if shared:
                perm.copy_(torch.where(padding, 2.0, torch.rand(K, n_max, device=dev)).argsort(dim=1))
            else:
                for k, m in enumerate(members):
                    if e < epochs[k]:
                        perm[k, : n_rows[k]] = torch.randperm(n_rows[k], generator=m.generator)
            counter.zero_()
            for s in range(S):
                if not uniform:
                    active.copy_(sched[e, s])
                if not shared:
                    for k in range(K):
                        if schedule[e, s, k]:
                            draw_member(k)
                run_step()
            log[e].copy_(last)
    for k, m in enumerate(members):  # the trained weights back into the member's modules
        _write_back(m, G.member(k), C.member(k), [b[k] for b in bn], widths, n_cont, t_g[k])
    return list(log.permute(1, 0, 2).cpu().numpy().astype(np.float64))


def _critic_losses(cls, calls, P, d, real, fake, gp):
    """Each member's critic loss as its class computes it, the critic called in the class's order."""
    out = {}
    for c in calls:
        if c == "mix":
            alpha = d["alpha"]
            grad = _critic_input_gradient(P, alpha * real + (1 - alpha) * fake, d["masks"]["mix"])
            out["mix"] = ((grad.norm(2, dim=2) - 1) ** 2).mean(1)
        else:
            out[c] = _critic(P, real if c == "real" else fake, d["masks"][c])
    if cls is GAN:
        sp = torch.nn.functional.softplus
        return sp(-out["real"]).mean(1) + sp(out["fake"]).mean(1)
    loss = out["fake"].mean(1) - out["real"].mean(1)
    return loss + gp * out["mix"] if "mix" in out else loss


def _capture(step, state, dev):
    """``step`` captured as a CUDA graph (a function that replays it), or None after one warning when capture fails.

    The first replay is checked (one synchronisation per fit): when it fails, the state is
    set back and the plain step runs from then on.
    """
    saved = [t.clone() for t in state]
    rng_state = torch.cuda.get_rng_state(dev)
    try:
        side = torch.cuda.Stream(dev)
        side.wait_stream(torch.cuda.current_stream(dev))
        with torch.cuda.stream(side):
            for _ in range(3):  # warm-up on a side stream, as capture needs
                step()
        torch.cuda.current_stream(dev).wait_stream(side)
        # the warm-up's draws given back: the replays then draw what the plain steps would
        torch.cuda.set_rng_state(rng_state, dev)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            step()
    except Exception as exc:  # noqa: BLE001  (any failure: the plain step computes the same)
        _warn_once(f"CUDA graph capture of the stacked GAN step failed ({type(exc).__name__}: {exc}); plain steps")
        g = None
    for t, s in zip(state, saved):  # undo the warm-up steps
        t.copy_(s)
    torch.cuda.set_rng_state(rng_state, dev)
    if g is None:
        return None
    chosen = []

    def replay() -> None:
        if chosen:
            return chosen[0]()
        before = [t.clone() for t in state]
        try:
            g.replay()
            torch.cuda.synchronize(dev)
            chosen.append(g.replay)
        except Exception as exc:  # noqa: BLE001
            _warn_once(f"CUDA graph replay of the stacked GAN step failed ({type(exc).__name__}: {exc}); plain steps")
            for t, s in zip(state, before):
                t.copy_(s)
            chosen.append(step)
            step()

    return replay


def _write_back(m: _Member, pg: dict, pc: dict, bn_stats, widths, n_cont: int, steps) -> None:
    gen, critic = m.gen, m.critic
    with torch.no_grad():
        fc1, bn1, fc2, bn2 = gen.fc1[0], gen.fc1[1], gen.fc2[0], gen.fc2[1]
        fc1.weight.copy_(pg["W1"].T)
        fc1.bias.copy_(pg["b1"][0])
        bn1.weight.copy_(pg["g1"][0])
        bn1.bias.copy_(pg["be1"][0])
        fc2.weight.copy_(pg["W2"].T)
        fc2.bias.copy_(pg["b2"][0])
        bn2.weight.copy_(pg["g2"][0])
        bn2.bias.copy_(pg["be2"][0])
        for bn_, mean, var in ((bn1, bn_stats[0], bn_stats[1]), (bn2, bn_stats[2], bn_stats[3])):
            bn_.running_mean.copy_(mean.reshape(-1))
            bn_.running_var.copy_(var.reshape(-1))
            # forward passes in training mode: one per critic update and one per generator update
            bn_.num_batches_tracked.fill_(int(steps.item()) * (m.est.n_critic + 1))
        heads = list(gen.cat_heads) + ([gen.cont_head] if gen.cont_head is not None else [])
        off = 0
        for h in heads:
            w = h.out_features
            h.weight.copy_(pg["Wh"][:, off : off + w].T)
            h.bias.copy_(pg["bh"][0, off : off + w])
            off += w
        for layer, (wn, bname) in zip(
            (critic.net[0], critic.net[3], critic.net[6]), (("W1", "b1"), ("W2", "b2"), ("W3", "b3"))
        ):
            layer.weight.copy_(pc[wn].T)
            layer.bias.copy_(pc[bname][0])


# --------------------------------------------------------------------------- synthetic datasets from stacked fits


def _rng_for(params: dict) -> str:
    """The randomness a stack of fits with these parameters uses (the default of :func:`fit_wgan_ensemble`)."""
    return "shared" if resolve_device(params.get("device", "auto")).type == "cuda" else "member"


def stacked_key(job) -> str:
    """The cache key of a :class:`vrlib.synthesis.SynthesisJob`'s dataset when its GAN is fitted in a stack.

    The job's own key (data, generator, parameters, seeds, rows, the code) plus
    :data:`TRAINER`, the randomness and this module's code: a stacked fit rounds differently
    from a single one, so neither is ever read as the other.
    """
    return make_key(
        kind="synthetic-stacked",
        dataset=job.key,
        trainer=TRAINER,
        rng=_rng_for(dict(job.params or {})),
        code=source_hash(wgan_module, sys.modules[__name__]),
    )


def _stack_task(chunk: list[tuple]) -> list[tuple[dict, dict]]:
    """Fit one stack and sample each member's dataset (a worker-process task): ``(arrays, meta)`` per job."""
    from vrlib.generators import get_generator

    params = chunk[0][3]
    estimators = [get_generator(name, **p) for _, _, name, p, *_ in chunk]
    fit_wgan_ensemble(
        estimators,
        [train for train, *_ in chunk],
        [schema for _, schema, *_ in chunk],
        [item[4] for item in chunk],
        device=params.get("device", "auto"),
        threads=params.get("threads", 1),
    )
    out = []
    for est, (_, schema, name, _, _, sample_seed, n, categories) in zip(estimators, chunk):
        start = time.perf_counter()
        arrays = est.sample_encoded(n, sample_seed, schema, categories)
        seconds = est.fit_seconds_ + time.perf_counter() - start
        out.append((arrays, {"kind": "synthetic", "generator": name, "seconds": seconds, "trainer": est.trainer_}))
    return out


def synthesize_stacked(
    jobs,
    *,
    cache=True,
    n_jobs: int | None = None,
    progress: bool = False,
    max_members: int = 64,
    min_members: int = 2,
) -> list[dict]:
    """The datasets of GAN synthesis jobs, their fits made in stacks, each dataset cached on its own.

    Parameters
    ----------
    jobs : list of vrlib.synthesis.SynthesisJob
        Each with a generator given by name among :data:`GENERATORS`.  Jobs of one
        generator, parameters, table layout and training size share stacks.
    cache : bool or Cache
        As :func:`vrlib.synthesis.synthesize` (namespace ``synthetic``), under
        :func:`stacked_key`: the datasets it holds are read, the others made, and each stack's
        datasets are written as soon as it finishes.
    n_jobs : int, optional
        Worker processes (:func:`vrlib.parallel.run`): a shape's jobs are split so that every
        worker gets a stack, down to ``min_members`` fits a stack.
    max_members : int
        Most fits in one stack.

    Returns
    -------
    list of dict
        Per job, ``{"codes", "continuous"}`` as :func:`vrlib.synthesis.synthesize` returns them.
    """
    from vrlib.synthesis import _checker, resolve_cache

    jobs = list(jobs)
    for job in jobs:
        if job.spec.name not in GENERATORS or job.coded is not None:
            raise VrlibError(
                f"synthesize_stacked fits the generators {sorted(GENERATORS)} given by name on a table; "
                f"got {job.spec!r}: make the others with vrlib.synthesis.synthesize"
            )
    store = resolve_cache(cache)
    keys = [stacked_key(job) for job in jobs]
    cats = [job.category_sets() for job in jobs]
    out: list = [None] * len(jobs)
    if store is not None:
        for i, key in enumerate(keys):
            out[i] = store.get(key, _checker(jobs[i], cats[i]))
    groups: dict[str, list[int]] = {}
    for i in range(len(jobs)):
        if out[i] is None:
            job = jobs[i]
            shape = make_key(
                name=job.spec.name,
                params=job.spec.params,
                rows=len(job.train()),
                schema=[list(job.schema.categorical), list(job.schema.continuous)],
                categories={c: [str(v) for v in cats[i][c]] for c in job.schema.categorical},
            )
            groups.setdefault(shape, []).append(i)
    workers = width(n_jobs)
    chunks = []
    for members in groups.values():
        size = min(max_members, max(min_members, math.ceil(len(members) / workers)))
        chunks += [members[s : s + size] for s in range(0, len(members), size)]

    def keep(c: int, entries) -> None:
        for i, (arrays, meta) in zip(chunks[c], entries):
            if store is not None and jobs[i].keep:
                store.save(keys[i], arrays, meta)
            out[i] = arrays

    tasks = [
        [
            (
                jobs[i].train(),
                jobs[i].schema,
                jobs[i].spec.name,
                dict(jobs[i].spec.params),
                jobs[i].fit_seed,
                jobs[i].sample_seed,
                jobs[i].n,
                cats[i],
            )
            for i in chunk
        ]
        for chunk in chunks
    ]
    run(_stack_task, tasks, n_jobs=n_jobs, desc="GAN stacks", progress=progress, on_result=keep)
    return out
