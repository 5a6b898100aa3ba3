"""Many BNAF flows of one shape trained at once: their weights stacked, one batched step for all.

DOMIAS fits many flows of one architecture (seeds × settings × the two densities ``p_G`` and
``p_R``).  :func:`fit_bnaf_ensemble` trains K of them together: each member is initialised,
split and batched from its own seed exactly as :meth:`BNAF.fit` would do it, and its loss is
computed by the flow's own arithmetic written for K stacked weight sets (batched matrix
products, the masked layers with a hand-written backward pass that goes over each weight
matrix few times).  The gradients land in one ``(K, parameters)`` buffer; each member keeps
its own fused AMSGrad Adam (which clips its gradient through Adam's ``grad_scale`` and skips
a diverging step through ``found_inf``, so a step needs no host synchronisation), plateau
schedule, validation split, early stopping and best weights; a member that stops is dropped
from the stack, so the others carry on at its cost no more.  On CUDA each step is replayed
from a captured CUDA graph (see :class:`_Step`).

A member's result equals its single fit up to float rounding: the same function and the same
optimiser, but batched matrix products that sum in another order.  Over thousands of steps
training amplifies rounding, so a member's fitted log densities are close to, not equal to,
the single fit's; what it computes does not depend on which other members share its stack
(tested).  Caches must therefore tell the two apart (:data:`TRAINER`).
"""

from __future__ import annotations

import copy
import inspect
import math
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn.functional as F

from vrlib.cache import Cache, make_key, source_hash
from vrlib.density import bnaf as bnaf_module
from vrlib.density.base import LOG_2PI, check_matrix
from vrlib.density.bnaf import BNAF, _build_bnaf
from vrlib.errors import VrlibError
from vrlib.parallel import run, width
from vrlib.torch_setup import resolve_device, torch_threads

__all__ = [
    "SHAPE_PARAMS",
    "TRAINER",
    "fit_bnaf_ensemble",
    "fit_flows",
    "fit_key",
    "flow_entry",
    "flow_from_entry",
    "shape_of",
]

# What members of one stack must share: the architecture and the batch size.
SHAPE_PARAMS = ("n_flows", "n_layers", "hidden_per_dim", "batch_size")

# Names the training path in cache keys: a member's numbers differ from a single fit's in rounding.
# v2: the hand-batched stacked flow (its own backward pass of the masked layers) replaced vmap.
TRAINER = "bnaf-ensemble-v2"


def shape_of(estimator: BNAF, n_features: int) -> tuple:
    """The key under which flows can share a stack: data width and the :data:`SHAPE_PARAMS`."""
    return (int(n_features), *(getattr(estimator, p) for p in SHAPE_PARAMS))


class _StackedMasked(torch.autograd.Function):
    """The masked layers of K flows at once (:class:`vrlib.density.bnaf._MaskedWeight`, stacked).

    ``y = (x w^T) exp(s - log|w_row|) + bias`` with ``w`` the block lower-triangular weight
    (``exp`` on its diagonal blocks), and the log of the positive diagonal blocks with the
    row gain (the derivative path).  The backward pass is written out so that each weight
    matrix is gone over few times: the norm's gradient is folded into the weight
    gradient's matrix product (``c w + gu^T x``), the mask applied once, in place.  The
    gradients of ``W``, ``s`` and ``bias`` are written straight into the stack's gradient
    buffer (``gW``, ``gs``, ``gbias``); autograd sees only ``x`` and ``anchor`` (a scalar
    that requires grad, so the backward runs for the first layer too, whose input is data).
    """

    @staticmethod
    def forward(ctx, anchor, x, W, s, bias, below, w, grads, dims):
        d, b, a = dims
        K = W.shape[0]
        torch.mul(W, below, out=w)  # w: a workspace, reused every step
        W_diag = torch.diagonal(W.view(K, d, b, d, a), dim1=1, dim2=3)  # (K, b, a, d)
        torch.diagonal(w.view(K, d, b, d, a), dim1=1, dim2=3).copy_(torch.exp(W_diag))
        norm = torch.linalg.vector_norm(w, dim=2)  # (K, out)
        log_gain = s.view(K, -1) - torch.log(norm)
        gain = torch.exp(log_gain)
        u = torch.bmm(x, w.transpose(1, 2))
        y = torch.addcmul(bias.unsqueeze(1), u, gain.unsqueeze(1))
        log_blocks = W_diag.permute(0, 3, 1, 2) + log_gain.view(K, d, b, 1)  # (K, d, b, a)
        ctx.save_for_backward(x, W, w, u, gain, norm, below)
        ctx.grads, ctx.dims = grads, dims
        return y, log_blocks

    @staticmethod
    def backward(ctx, g_y, g_blocks):
        x, W, w, u, gain, norm, below = ctx.saved_tensors
        gW, gs, gbias = ctx.grads
        d, b, a = ctx.dims
        K = w.shape[0]
        gbias.copy_(g_y.sum(dim=1))
        d_log_gain = (g_y * u).sum(dim=1) * gain
        if g_blocks is not None:
            d_log_gain = d_log_gain + g_blocks.sum(dim=3).view(K, -1)
        gs.copy_(d_log_gain.view_as(gs))
        g_u = g_y * gain.unsqueeze(1)
        dx = torch.bmm(g_u, w) if ctx.needs_input_grad[1] else None
        # d/dw of the loss: g_u^T x through the product, -d_log_gain / norm^2 * w through the norm;
        # built in the workspace w (no longer needed) so that the product is one batched call
        w_diag = torch.exp(torch.diagonal(W.view(K, d, b, d, a), dim1=1, dim2=3))
        w.mul_((-d_log_gain / (norm * norm)).unsqueeze(2)).baddbmm_(g_u.transpose(1, 2), x)
        diag = torch.diagonal(w.view(K, d, b, d, a), dim1=1, dim2=3) * w_diag  # through exp
        if g_blocks is not None:
            diag = diag + g_blocks.permute(0, 2, 3, 1)
        torch.mul(w, below, out=gW)
        torch.diagonal(gW.view(K, d, b, d, a), dim1=1, dim2=3).copy_(diag)
        return None, dx, None, None, None, None, None, None, None


def _masked_derivatives(log_blocks, s, vec, log_scale):
    """The derivative vectors through a masked layer, rescaled (as in ``_MaskedWeight.forward``)."""
    K, d, b, _ = log_blocks.shape
    shift = s.view(K, d, b).amax(dim=2)  # s is a constant here (the weights are not graph leaves)
    vec = torch.einsum("kdba,knda->kndb", torch.exp(log_blocks - shift.view(K, d, 1, 1)), vec)
    top = vec.detach().amax(dim=3, keepdim=True).clamp_min(torch.finfo(vec.dtype).tiny)
    return vec / top, log_scale + shift.unsqueeze(1) + torch.log(top).squeeze(3)


def _tanh(h, vec, log_scale):
    """``tanh`` and the derivative vectors through it (as in ``bnaf._Tanh``)."""
    K, N, d = log_scale.shape
    log_der = (2.0 * (math.log(2.0) - h - F.softplus(-2.0 * h))).view(K, N, d, -1)
    shift = log_der.detach().amax(dim=3)
    return torch.tanh(h), vec * torch.exp(log_der - shift.unsqueeze(3)), log_scale + shift


class _Stack:
    """K flows of one shape as stacked tensors: weights ``(K, P)`` (each row a member's flat
    weights, in ``parameters_to_vector`` order), their gradient ``(K, P)``, and the forward pass.
    """

    def __init__(self, template, weights):
        self.template = template
        self.d = template.d
        self.weights = weights
        self.grad = torch.zeros_like(weights)
        self.anchor = torch.zeros((), device=weights.device, requires_grad=True)
        K = len(weights)
        views, gviews, off = {}, {}, 0
        for name, p in template.named_parameters():
            views[name] = weights[:, off : off + p.numel()].view(K, *p.shape)
            gviews[name] = self.grad[:, off : off + p.numel()].view(K, *p.shape)
            off += p.numel()
        self.blocks = []
        for j, block in enumerate(template.blocks):
            layers = []
            for i, layer in enumerate(block.layers):
                if isinstance(layer, bnaf_module._MaskedWeight):
                    names = [f"blocks.{j}.layers.{i}.{n}" for n in ("weight", "log_scale", "bias")]
                    W = views[names[0]]
                    layers.append(
                        dict(
                            params=[views[n] for n in names],
                            grads=[gviews[n] for n in names],
                            below=layer.below.to(weights.device),
                            work=torch.empty(W.shape, dtype=W.dtype, device=W.device),
                            dims=(layer.d, layer.b, layer.a),
                        )
                    )
                else:
                    layers.append(None)  # tanh
            self.blocks.append((layers, views[f"blocks.{j}.gate"], gviews[f"blocks.{j}.gate"]))

    def log_density(self, x, gates=None):
        """Log density of ``x`` (K, N, d) under each member (K, N); ``gates``: leaves for the gate gradients."""
        K, N, d = x.shape
        logdet = x.new_zeros(K, N)
        for j, (layers, gate_view, _) in enumerate(self.blocks):
            if j > 0:
                x = torch.flip(x, dims=[2])  # as _Flow.transform
            h = x
            vec = x.new_ones(K, N, d, 1)
            log_scale = x.new_zeros(K, N, d)
            for layer in layers:
                if layer is None:
                    h, vec, log_scale = _tanh(h, vec, log_scale)
                    continue
                W, s, bias = layer["params"]
                h, log_blocks = _StackedMasked.apply(
                    self.anchor, h, W, s, bias, layer["below"], layer["work"], layer["grads"], layer["dims"]
                )
                vec, log_scale = _masked_derivatives(log_blocks, s, vec, log_scale)
            gate = (gate_view if gates is None else gates[j]).view(K, 1, 1)
            log_der = log_scale + torch.log(vec.view(K, N, d))
            s_gate = torch.sigmoid(gate)
            y = s_gate * h + (1 - s_gate) * x  # as bnaf._Block.forward
            log_der = F.softplus(log_der + gate) - F.softplus(gate)
            logdet = logdet + log_der.sum(dim=2)
            x = y
        return -0.5 * (x * x).sum(dim=2) - 0.5 * d * LOG_2PI + logdet

    def gradients(self, batch, weight, clip):
        """Each member's loss on its batch, its gradient in :attr:`grad`, and its step's Adam inputs.

        Returns ``(losses, ok, grad_scale, skip)`` (K,): the mean negative log density of the
        weighted rows; whether the step is taken (a finite loss on at least one row, as
        :meth:`BNAF.fit` skips a diverging step); the gradient's divisor that clips its norm
        to ``clip`` (``clip_grad_norm_``); and ``1 - ok`` as Adam's ``found_inf``.  No host
        synchronisation: everything stays on the device.
        """
        gates = [view.detach().requires_grad_(True) for _, view, _ in self.blocks]
        log_p = self.log_density(batch, gates)
        n_rows = weight.sum(dim=1)
        # padded rows (weight 0) are left out exactly, even if their density were not finite
        losses = -torch.where(weight > 0, log_p, 0.0).sum(dim=1) / n_rows.clamp_min(1.0)
        ok = torch.isfinite(losses) & (n_rows > 0)
        torch.where(ok, losses, 0.0).sum().backward()
        for gate, (_, _, gview) in zip(gates, self.blocks):
            gview.copy_(gate.grad)
        with torch.no_grad():
            norm = torch.linalg.vector_norm(self.grad, dim=1)
            grad_scale = 1.0 / (clip / (norm + 1e-6)).clamp(max=1.0)  # Adam divides the gradient by it
            skip = (~ok).to(self.grad.dtype)
        return losses.detach(), ok, grad_scale, skip


class _Member:
    """One flow's data, split, seeded batch order and early-stopping state (as in :meth:`BNAF._fit`)."""

    def __init__(self, est: BNAF, X, device):
        est._check_params()
        X = check_matrix(X, "the data of the flow", min_rows=2)
        n, d = X.shape
        self.est = est
        est.d_ = d
        est.mean_ = X.mean(axis=0)
        std = X.std(axis=0)
        est.scale_ = np.where(std > 0, std, 1.0)
        self.Z = (X - est.mean_) / est.scale_
        self.rng = np.random.default_rng(est.seed)
        order = self.rng.permutation(n)
        n_val = est._n_validation(n)
        self.val_idx, self.train_idx = order[:n_val], order[n_val:]
        if n_val == 0:
            self.val_idx = self.train_idx
        gen = torch.Generator().manual_seed(int(est.seed))
        self.model = _build_bnaf(d, est.n_flows, est.n_layers, est.hidden_per_dim, gen).to(device)
        self.val_data = torch.as_tensor(self.Z[self.val_idx], dtype=torch.float32, device=device)
        # the member's weights as one flat leaf, with BNAF.fit's optimiser and plateau rule on it
        flat = torch.nn.utils.parameters_to_vector(self.model.parameters()).detach().clone()
        self.flat = flat.requires_grad_(True)
        self.opt = torch.optim.Adam([self.flat], lr=est.lr, amsgrad=True, fused=True)
        self.sched = torch.optim.lr_scheduler.ReduceLROnPlateau(
            self.opt, factor=0.5, patience=est.lr_patience, min_lr=1e-4
        )
        self.best, self.best_flat, self.best_epoch, self.waited = math.inf, None, 0, 0
        est.history_ = []
        self.batches = []

    def new_epoch(self):
        perm = self.train_idx[self.rng.permutation(len(self.train_idx))]
        bs = self.est.batch_size
        self.batches = [perm[s : s + bs] for s in range(0, len(perm), bs)]


def _graphs_wanted(device, graphs: bool) -> bool:
    """Whether a stack on ``device`` is trained through a captured CUDA graph: on CUDA only."""
    return bool(graphs) and device.type == "cuda"


class _Step:
    """One training step's gradients for a stack, on CUDA replayed from a captured CUDA graph.

    The plain step is :meth:`_Stack.gradients`.  On CUDA (``graphs=True``) it is captured once
    per stack into a CUDA graph over static batch tensors, so that a step is one replay
    instead of hundreds of kernel launches; should capturing fail, a warning is given once
    per process and the plain step is used.  The optimiser steps stay outside the graph.
    """

    _warned = False

    def __init__(self, stack: _Stack, clip, graphs: bool):
        self.stack, self.clip = stack, clip
        self.graph = None
        self.use_graph = _graphs_wanted(stack.weights.device, graphs)

    def _capture(self, batch, weight):
        self.static = (batch.clone(), weight.clone())
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up off the capture (gradients only; nothing is stepped)
            for _ in range(2):
                self.stack.gradients(*self.static, self.clip)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.out = self.stack.gradients(*self.static, self.clip)
        self.graph = graph

    def __call__(self, batch, weight):
        if self.use_graph:
            try:
                if self.graph is None:
                    self._capture(batch, weight)
                self.static[0].copy_(batch)
                self.static[1].copy_(weight)
                self.graph.replay()
                return self.out
            except Exception as exc:  # noqa: BLE001  (any capture failure: train on without graphs)
                self.use_graph, self.graph = False, None
                if not _Step._warned:
                    _Step._warned = True
                    warnings.warn(
                        f"CUDA graph capture of the stacked BNAF step failed ({type(exc).__name__}: {exc}); "
                        "training goes on without it"
                    )
                self.stack.grad.zero_()
        return self.stack.gradients(batch, weight, self.clip)


def fit_bnaf_ensemble(estimators, datasets, *, device=None, threads: int | None = 1, graphs: bool = True) -> list[BNAF]:
    """Fit each ``estimators[k]`` on ``datasets[k]``, all in one stacked training loop.

    Parameters
    ----------
    estimators : list of BNAF
        Unfitted flows sharing :data:`SHAPE_PARAMS`; their seeds, epochs, learning rates,
        patience, clipping and validation shares may differ.  They are fitted in place
        (``model_``, ``history_``, ``best_epoch_`` ... as by :meth:`BNAF.fit`).
    datasets : list of array-like
        ``datasets[k]`` (n_k, d), the same number of columns for all; the rows may differ.
    device : str, optional
        As :class:`BNAF`'s ``device`` (default: the GPU when present).
    threads : int, optional
        Torch CPU threads while training (restored afterwards); ``None`` leaves them alone.
    graphs : bool
        On CUDA, replay each step from a captured CUDA graph (falling back to the plain step,
        with a warning, where capturing fails).  Ignored on a CPU.

    Returns
    -------
    list of BNAF
        The estimators, fitted.  Their ``compiled_`` is False and ``trainer_`` is :data:`TRAINER`.
    """
    estimators, datasets = list(estimators), list(datasets)
    if len(estimators) != len(datasets):
        raise VrlibError(f"{len(estimators)} estimators but {len(datasets)} datasets; give one dataset per flow")
    if not estimators:
        return []
    bad = [e for e in estimators if not isinstance(e, BNAF)]
    if bad:
        raise VrlibError(f"fit_bnaf_ensemble fits BNAF flows only, got {type(bad[0]).__name__}")
    with torch_threads(threads), warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=FutureWarning, module=r"torch\.")
        return _fit(estimators, datasets, resolve_device(device), graphs)


def _bind(members, active, weights):
    """Make each active member's flat weights a row of ``weights`` (a leaf sharing its memory), its optimiser following."""
    for r, k in enumerate(active):
        m = members[k]
        leaf = weights[r].detach().requires_grad_(True)
        weights[r].copy_(m.flat.detach())
        m.opt.state[leaf] = m.opt.state.pop(m.flat, {})
        m.opt.param_groups[0]["params"] = [leaf]
        m.flat = leaf


def _fit(estimators, datasets, device, graphs):
    members = [_Member(e, X, device) for e, X in zip(estimators, datasets)]
    shapes = {shape_of(m.est, m.Z.shape[1]) for m in members}
    if len(shapes) > 1:
        raise VrlibError(
            f"the flows of one ensemble must share the data width and {SHAPE_PARAMS}; got {sorted(shapes)}: "
            "group them by vrlib.density.bnaf_ensemble.shape_of first"
        )
    template = copy.deepcopy(members[0].model)
    n_max = max(len(m.Z) for m in members)
    d = members[0].Z.shape[1]
    data = torch.zeros(len(members), n_max, d, dtype=torch.float32, device=device)
    for k, m in enumerate(members):
        data[k, : len(m.Z)] = torch.as_tensor(m.Z, dtype=torch.float32, device=device)
    clip_all = torch.tensor([m.est.clip_norm for m in members], dtype=torch.float32, device=device)
    bs = members[0].est.batch_size
    active = list(range(len(members)))  # the members still training, one row of the stack each
    stack = step = None

    epoch = 0
    while active:
        epoch += 1
        if stack is None or len(stack.weights) != len(active):  # (re)build the stack of the active members
            weights = torch.empty(len(active), len(members[active[0]].flat), device=device)
            _bind(members, active, weights)
            stack = _Stack(template, weights)
            rows = torch.as_tensor(active, device=device)
            step = _Step(stack, clip_all[rows], graphs)
            for r, k in enumerate(active):
                opt = members[k].opt
                opt.grad_scale, opt.found_inf = None, None
                members[k].flat.grad = stack.grad[r]
        for k in active:
            members[k].new_epoch()
        n_steps = max(len(members[k].batches) for k in active)
        totals = torch.zeros(len(active), dtype=torch.float64, device=device)
        counts = torch.zeros(len(active), dtype=torch.float64, device=device)
        # the epoch's batches of every member, padded, sent to the device once
        idx = np.zeros((n_steps, len(active), bs), dtype=np.int64)
        weight = np.zeros((n_steps, len(active), bs), dtype=np.float32)
        for r, k in enumerate(active):
            batches = members[k].batches
            for s, b in enumerate(batches):
                idx[s, r, : len(b)] = b
                idx[s, r, len(b) :] = b[0]  # padding: a real row, weighted 0
                weight[s, r, : len(b)] = 1.0
            idx[len(batches) :, r] = batches[0][0]  # no batch left this epoch: weight 0, no step
        idx_all = torch.as_tensor(idx, device=device)
        weight_all = torch.as_tensor(weight, device=device)
        for s in range(n_steps):
            weight_t = weight_all[s]
            losses, ok, grad_scale, skip = step(data[rows[:, None], idx_all[s]], weight_t)
            for r, k in enumerate(active):
                opt = members[k].opt
                # Adam divides the gradient by grad_scale (the clipping) and skips the step where found_inf is 1
                opt.grad_scale, opt.found_inf = grad_scale[r], skip[r]
                opt.step()
            n_rows = weight_t.sum(dim=1).double()
            totals += torch.where(ok, losses.double() * n_rows, 0.0)
            counts += torch.where(ok, n_rows, 0.0)
        vals = _validation_losses(stack, [members[k] for k in active])
        trains = (totals / counts.clamp_min(1.0)).tolist()
        keep = []
        for r, k in enumerate(active):
            m = members[k]
            val, train = vals[r], trains[r]
            m.est.history_.append((epoch, train, val))
            if m.est.verbose:
                print(f"member {k}, epoch {epoch}: train nll {train:.4f}, validation nll {val:.4f}")
            m.sched.step(val)
            done = False
            if val < m.best - 1e-4:
                m.best, m.best_epoch, m.waited = val, epoch, 0
                m.best_flat = m.flat.detach().clone()
            else:
                m.waited += 1
                done = m.waited >= m.est.patience
            if done or epoch >= m.est.epochs:
                _finish(m, template, device)
            else:
                keep.append(k)
        if len(keep) != len(active):
            stack = None
        active = keep
    return estimators


def _validation_losses(stack: _Stack, members, chunk: int = 4096) -> list[float]:
    """Each member's mean negative log density of its validation rows (one host read per epoch)."""
    device = stack.weights.device
    n_max = max(len(m.val_data) for m in members)
    sums = torch.zeros(len(members), dtype=torch.float64, device=device)
    with torch.no_grad():
        for start in range(0, n_max, chunk):
            stop = min(start + chunk, n_max)
            batch = torch.zeros(len(members), stop - start, stack.d, device=device)
            valid = torch.zeros(len(members), stop - start, dtype=torch.bool, device=device)
            for r, m in enumerate(members):
                part = m.val_data[start:stop]
                batch[r, : len(part)] = part
                valid[r, : len(part)] = True
            log_p = stack.log_density(batch)
            sums += torch.where(valid, log_p, 0.0).sum(dim=1, dtype=torch.float64)
    sizes = torch.tensor([len(m.val_data) for m in members], dtype=torch.float64, device=device)
    return (-sums / sizes).tolist()


def _finish(m: _Member, template, device) -> None:
    if m.best_flat is None:
        raise VrlibError("the flow diverged in every epoch; lower lr or standardise the data")
    model = copy.deepcopy(template)
    torch.nn.utils.vector_to_parameters(m.best_flat, model.parameters())
    model.eval()
    m.est.model_ = model
    m.est.best_epoch_ = m.best_epoch
    m.est.compiled_ = False
    m.est.trainer_ = TRAINER
    m.est.device_ = device
    m.model = m.val_data = m.flat = m.opt = m.sched = None


def flow_params(estimator: BNAF) -> dict:
    """Every constructor parameter of ``estimator`` (what, with the data, determines a fit)."""
    names = [p for p in inspect.signature(BNAF.__init__).parameters if p != "self"]
    return {name: getattr(estimator, name) for name in names}


def fit_key(params: dict, X) -> str:
    """The cache key of one flow fitted in a stack: its data, every parameter, :data:`TRAINER` and the code."""
    est = BNAF(**params)
    full = flow_params(est)
    full.pop("verbose")  # printing changes nothing fitted
    X = check_matrix(X, "the data of the flow", min_rows=2)
    return make_key(
        kind="bnaf-fit", trainer=TRAINER, params=full, data=X, code=source_hash(bnaf_module, sys.modules[__name__])
    )


def flow_entry(est: BNAF) -> tuple[dict, dict]:
    """A fitted flow as a cache entry ``(arrays, meta)`` (read back by :func:`flow_from_entry`)."""
    arrays = {
        "weights": torch.nn.utils.parameters_to_vector(est.model_.parameters()).detach().cpu().numpy(),
        "mean": np.asarray(est.mean_, dtype=np.float64),
        "scale": np.asarray(est.scale_, dtype=np.float64),
        "history": np.asarray(est.history_, dtype=np.float64).reshape(-1, 3),
    }
    return arrays, {
        "best_epoch": int(est.best_epoch_),
        "trainer": est.trainer_,
        "seconds": getattr(est, "seconds_", 0.0),
    }


def flow_from_entry(params: dict, arrays: dict, meta: dict) -> BNAF:
    """The fitted :class:`BNAF` of a cache entry made by :func:`flow_entry`."""
    est = BNAF(**params)
    d = len(arrays["mean"])
    device = resolve_device(est.device)
    model = _build_bnaf(d, est.n_flows, est.n_layers, est.hidden_per_dim, torch.Generator().manual_seed(0))
    weights = torch.as_tensor(arrays["weights"], dtype=torch.float32)
    n_weights = sum(p.numel() for p in model.parameters())
    if weights.shape != (n_weights,):
        raise ValueError(f"{weights.shape[0]} weights stored, the flow has {n_weights}")
    torch.nn.utils.vector_to_parameters(weights, model.parameters())
    model.eval()
    est.model_ = model.to(device)
    est.device_ = device
    est.d_, est.mean_, est.scale_ = d, arrays["mean"], arrays["scale"]
    est.history_ = [(int(e), float(tr), float(v)) for e, tr, v in arrays["history"]]
    est.best_epoch_ = int(meta["best_epoch"])
    est.compiled_ = False
    est.trainer_ = meta["trainer"]
    est.seconds_ = float(meta.get("seconds", 0.0))
    return est


def _chunk_task(chunk: list[tuple[dict, np.ndarray]]) -> list[tuple[dict, dict]]:
    """Fit one stack (a worker-process task): the cache entries of its flows, in order."""
    start = time.perf_counter()
    estimators = [BNAF(**params) for params, _ in chunk]
    threads = estimators[0].threads
    fit_bnaf_ensemble(estimators, [X for _, X in chunk], device=estimators[0].device, threads=threads)
    share = (time.perf_counter() - start) / len(chunk)  # seconds of the stack, shared out evenly
    for est in estimators:
        est.seconds_ = share
    return [flow_entry(est) for est in estimators]


def fit_flows(
    jobs,
    *,
    cache: Cache | None = None,
    n_jobs: int | None = None,
    max_members: int = 64,
    min_members: int = 4,
    progress: bool = False,
) -> list[BNAF]:
    """Fit many flows, those of one shape in stacks, each fit cached on its own.

    Parameters
    ----------
    jobs : list of (dict, array)
        ``(BNAF parameters, data)`` per flow.
    cache : Cache, optional
        Where each fitted flow is kept (key :func:`fit_key`); the fits it holds are read,
        not made again, and each stack's fits are saved as soon as it finishes, so an
        interrupted run loses at most the stacks in flight.
    n_jobs : int, optional
        Worker processes (:func:`vrlib.parallel.run`); the stacks of a shape are split so
        that every worker gets one, down to ``min_members`` flows a stack.
    max_members : int
        Most flows in one stack (memory grows with it; the gain levels off well before).

    Returns
    -------
    list of BNAF
        Fitted, in the order of ``jobs``; each has ``seconds_``, its share of the (wall)
        seconds its stack took when it was fitted.
    """
    jobs = [(dict(params), check_matrix(X, "the data of the flow", min_rows=2)) for params, X in jobs]
    keys = [fit_key(params, X) for params, X in jobs]
    out: list = [None] * len(jobs)
    if cache is not None:
        for i, key in enumerate(keys):
            out[i] = cache.get(key, lambda arrays, meta, p=jobs[i][0]: flow_from_entry(p, arrays, meta))
    missing = [i for i in range(len(jobs)) if out[i] is None]
    groups: dict[tuple, list[int]] = {}
    for i in missing:
        groups.setdefault(shape_of(BNAF(**jobs[i][0]), jobs[i][1].shape[1]), []).append(i)
    workers = width(n_jobs)
    chunks = []
    for members in groups.values():
        members.sort(key=lambda i: len(jobs[i][1]))  # like sizes together: fewer padded steps
        size = min(max_members, max(min_members, math.ceil(len(members) / workers)))
        chunks += [members[s : s + size] for s in range(0, len(members), size)]

    def keep(c: int, entries) -> None:
        for i, (arrays, meta) in zip(chunks[c], entries):
            if cache is not None:
                cache.save(keys[i], arrays, meta)
            out[i] = flow_from_entry(jobs[i][0], arrays, meta)

    run(
        _chunk_task,
        [[jobs[i] for i in chunk] for chunk in chunks],
        n_jobs=n_jobs,
        desc="flow stacks",
        progress=progress,
        on_result=keep,
    )
    return out
