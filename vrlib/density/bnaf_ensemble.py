"""Many BNAF flows of one shape trained at once: their weights stacked, one vectorised step for all.

DOMIAS fits many flows of one architecture (seeds × settings × the two densities ``p_G`` and
``p_R``).  :func:`fit_bnaf_ensemble` trains K of them together: each member is initialised,
split and batched from its own seed exactly as :meth:`BNAF.fit` would do it, and its loss is
computed by the same flow code mapped over the members with ``torch.func.vmap``; the
gradients land in one ``(K, parameters)`` buffer, clipped per member in two operations.  Each member keeps its own validation split, early stopping and best weights;
a member that stops is dropped from the stack, so the others carry on at its cost no more.

A member's result equals its single fit up to float rounding: the same function, the same
optimiser (each member keeps its own fused AMSGrad Adam and plateau schedule on its flat
weights), but batched matrix products that sum in another order.  Over
thousands of steps training amplifies rounding, so a member's fitted log densities are
close to, not equal to, the single fit's; what it computes does not depend on which
other members share its stack (tested).  Caches must therefore tell the two apart
(:data:`TRAINER`).
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
from torch.func import functional_call, vmap

from vrlib.cache import Cache, make_key, source_hash
from vrlib.density import bnaf as bnaf_module
from vrlib.density.base import check_matrix
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
TRAINER = "bnaf-ensemble-v1"


def shape_of(estimator: BNAF, n_features: int) -> tuple:
    """The key under which flows can share a stack: data width and the :data:`SHAPE_PARAMS`."""
    return (int(n_features), *(getattr(estimator, p) for p in SHAPE_PARAMS))


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


def _loss_fn(template):
    def member_loss(params, batch, weight):
        log_p = functional_call(template, params, (batch,))
        # padded rows (weight 0) are left out of the sum exactly, even if their density were not finite
        return -torch.where(weight > 0, log_p, 0.0).sum() / weight.sum()

    return vmap(member_loss)


def fit_bnaf_ensemble(estimators, datasets, *, device=None, threads: int | None = 1) -> list[BNAF]:
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
        # the gradients are views of one flat buffer on purpose (see leaves() in _fit)
        warnings.filterwarnings("ignore", message="grad and param do not obey the gradient layout contract")
        return _fit(estimators, datasets, resolve_device(device))


def _fit(estimators, datasets, device):
    members = [_Member(e, X, device) for e, X in zip(estimators, datasets)]
    shapes = {shape_of(m.est, m.Z.shape[1]) for m in members}
    if len(shapes) > 1:
        raise VrlibError(
            f"the flows of one ensemble must share the data width and {SHAPE_PARAMS}; got {sorted(shapes)}: "
            "group them by vrlib.density.bnaf_ensemble.shape_of first"
        )
    template = copy.deepcopy(members[0].model)
    names = [name for name, _ in template.named_parameters()]
    shapes_ = [p.shape for _, p in template.named_parameters()]
    sizes = [p.numel() for _, p in template.named_parameters()]
    loss_of = _loss_fn(template)

    n_max = max(len(m.Z) for m in members)
    data = torch.zeros(len(members), n_max, members[0].Z.shape[1], dtype=torch.float32, device=device)
    for k, m in enumerate(members):
        data[k, : len(m.Z)] = torch.as_tensor(m.Z, dtype=torch.float32, device=device)
    clip_all = torch.tensor([m.est.clip_norm for m in members], dtype=torch.float32, device=device)
    bs = members[0].est.batch_size
    active = list(range(len(members)))  # the members still training, one row of the stack each

    def views(buffer):
        out, off = {}, 0
        for name, shape, size in zip(names, shapes_, sizes):
            out[name] = buffer[:, off : off + size].view(len(buffer), *shape)
            off += size
        return out

    epoch = 0
    while active:
        epoch += 1
        for k in active:
            members[k].new_epoch()
        n_steps = max(len(members[k].batches) for k in active)
        rows = torch.as_tensor(active, device=device)
        clip = clip_all[rows]
        totals = torch.zeros(len(active), dtype=torch.float64, device=device)
        counts = torch.zeros(len(active), dtype=torch.float64, device=device)
        grad = torch.zeros(len(active), sum(sizes), device=device)
        for k, r in zip(active, range(len(active))):
            members[k].flat.grad = grad[r]  # the optimiser of each member reads its row of the stacked gradient
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
            idx_t, weight_t = idx_all[s], weight_all[s]
            batch = data[rows[:, None], idx_t]
            # the stacked weights: a copy of the members' rows, whose gradient lands in `grad`
            stacked = torch.stack([members[k].flat.detach() for k in active])
            params = {}
            for (name, p), g in zip(views(stacked).items(), views(grad).values()):
                leaf = p.detach().requires_grad_(True)
                leaf.grad = g
                params[name] = leaf
            losses = loss_of(params, batch, weight_t)
            n_rows = weight_t.sum(dim=1)
            ok = torch.isfinite(losses) & (n_rows > 0)  # a diverging step is skipped, as in BNAF.fit
            grad.zero_()
            torch.where(ok, losses, 0.0).sum().backward()
            with torch.no_grad():
                norm = torch.linalg.vector_norm(grad, dim=1)  # clip_grad_norm_ per member
                grad.mul_((clip / (norm + 1e-6)).clamp(max=1.0)[:, None])
                totals += torch.where(ok, losses.detach().double() * n_rows, 0.0)
                counts += torch.where(ok, n_rows.double(), 0.0)
            for r in torch.nonzero(ok).flatten().tolist():
                members[active[r]].opt.step()
        keep = []
        for r, k in enumerate(active):
            m = members[k]
            with torch.no_grad():
                member_params = {name: p[0] for name, p in views(m.flat.detach()[None]).items()}
                parts = [
                    functional_call(template, member_params, (m.val_data[s : s + 8192],))
                    for s in range(0, len(m.val_data), 8192)
                ]
                val = float(-torch.cat(parts).mean())
            train = float(totals[r]) / max(float(counts[r]), 1.0)
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
        active = keep
    return estimators


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
