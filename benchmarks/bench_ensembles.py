"""Benchmark: K BNAF fits at DOMIAS's paper settings one by one against one stacked fit of the same K.

DOMIAS fits many flows of one shape (Table 3: 5 flows, 3 layers, 32 units per dimension,
batch 50, lr 0.01).  This fits ``--k`` of them, each on its own ``--rows`` California rows
(the first of a seeded shuffle per member, as DOMIAS's seeds draw their own sets), for
``--epochs`` epochs with early stopping out of reach, three ways, in this process, one
torch thread, CPU seconds (``time.process_time``):

* ``single eager``: :meth:`BNAF.fit` with ``compile=False`` (what fits below 2,000 steps run);
* ``single compiled``: :meth:`BNAF.fit` with ``compile=True`` (what a paper-size fit of 50
  epochs runs), after one warm-up fit that pays the compile;
* ``stacked``: :func:`vrlib.density.bnaf_ensemble.fit_bnaf_ensemble` on all K at once.

The three are interleaved ``--repeats`` times (best of them).  ``bnaf_ensemble_cpu_ratio``
is the CPU of K single fits as a paper run trains them (compiled) over the stack's;
``bnaf_ensemble_cpu_ratio_vs_eager`` the same against eager single fits; the ``*_per_repeat``
lists give each repeat's ratio (the spread on a machine shared with other jobs).

What they compute is compared on 500 held-out rows: the largest and the median difference
of log density of each member from its eager single fit, beside the same for the compiled
single fits (which round in another order too: the yardstick of how far float rounding
carries a flow after this many steps at lr 0.01), and the mean held-out log likelihood of
the K flows of each way, compared as samples by Welch's t.

GANs (:func:`gan_ensemble_part`): ``--gan-k`` WGAN-GP fits one by one (:meth:`WGANGP.fit`)
against one stack of the same fits (:func:`vrlib.generators.wgan_ensemble.fit_wgan_ensemble`),
at two sizes: DOMIAS's Fig. 6 (500 standardised California rows, batch 100, one fit per seed)
and TableGAN-MCA's (31,655 pre-processed Adult rows, batch 500, the shadow GANs), for a few
epochs, interleaved ``--gan-repeats`` times (best of them), one torch thread, CPU seconds.  The
stack runs with each member's own randomness (``rng="member"``, the CPU default: each member
is its single fit up to rounding; the largest difference of their losses is printed) and with
one shared stream (``rng="shared"``, the same in distribution).  ``gan_ensemble_cpu_ratio`` is
the smaller of the two sizes' ratios (K single fits' CPU ÷ the stack's) with the default
randomness.

Where a stacked step's time goes (``--only floor``, :func:`floor_part`): per member step, the
compiled single step against the stacked step, its matrix products and Adam alone, dense and
on the nonzero blocks of the masked weights only, and (``--compile-stack``) the whole stacked
step under ``torch.compile``; the floor ratios bound what a stack can gain over compiled
single fits.

Run: ``VRLIB_DATA_DIR=... python benchmarks/bench_ensembles.py``; the last line printed is
one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import time
import warnings

import numpy as np
from bench_bnaf import _welch_t as welch_t  # this script's folder is on sys.path when run


def _cpu(make):
    start = time.process_time()
    out = make()
    return time.process_time() - start, out


def gan_ensemble_part(ks: tuple[int, int], repeats: int, epochs_: tuple[int, int]) -> dict:
    """CPU of K single WGAN-GP fits over one stack of them, at DOMIAS's and TableGAN-MCA's sizes (``ks``, ``epochs_``)."""
    from vrlib.experiments import domias, mca
    from vrlib.generators.wgan import WGANGP
    from vrlib.generators.wgan_ensemble import fit_wgan_ensemble

    california, cal_schema = domias.california()
    adult, _, adult_schema = mca.data(0, None, True, "seeded")
    (k_domias, k_mca), (e_domias, e_mca) = ks, epochs_
    sizes = {
        # one training set per seed, as Fig. 6 draws them; the shadow GANs of the releases see the same table
        "domias": ([domias.split(california, 500, 1000, m)["mem"] for m in range(k_domias)], cal_schema, 100, e_domias),
        "mca": ([adult.reset_index(drop=True)] * k_mca, adult_schema, 500, e_mca),
    }
    out = {}
    for size, (tables, schema, batch, epochs) in sizes.items():
        params = dict(epochs=epochs, batch_size=batch, device="cpu")

        def singles():
            return [WGANGP(**params, threads=1).fit(t, schema, m) for m, t in enumerate(tables)]

        def stack(rng):
            return fit_wgan_ensemble([WGANGP(**params) for _ in tables], tables, schema, range(len(tables)), rng=rng)

        fit_wgan_ensemble([WGANGP(**{**params, "epochs": 1})], [tables[0].iloc[:300]], schema, [0])  # warm-up
        ways = {"single": singles, "stacked_member": lambda: stack("member"), "stacked_shared": lambda: stack("shared")}
        times = {name: [] for name in ways}
        fitted = {}
        for r in range(repeats):
            for name, make in ways.items():
                seconds, fitted[name] = _cpu(make)
                times[name].append(seconds)
            print(f"GAN {size}, repeat {r}: " + ", ".join(f"{n} {v[-1]:.2f}" for n, v in times.items()) + " CPU s",
                  flush=True)  # fmt: skip
        best = {name: min(v) for name, v in times.items()}
        loss_gap = max(
            float(np.abs(a.losses_.to_numpy() - b.losses_.to_numpy()).max())
            for a, b in zip(fitted["single"], fitted["stacked_member"])
        )
        out.update(
            {
                f"gan_{size}_k": len(tables),
                f"gan_{size}_rows": len(tables[0]),
                f"gan_{size}_batch_size": batch,
                f"gan_{size}_epochs": epochs,
                **{f"gan_{size}_{name}_cpu_s": round(v, 3) for name, v in best.items()},
                f"gan_ensemble_cpu_ratio_{size}": round(best["single"] / best["stacked_member"], 3),
                f"gan_ensemble_cpu_ratio_{size}_shared": round(best["single"] / best["stacked_shared"], 3),
                f"gan_{size}_member_vs_single_loss_diff_max": loss_gap,
            }
        )
    out["gan_ensemble_cpu_ratio"] = min(out["gan_ensemble_cpu_ratio_domias"], out["gan_ensemble_cpu_ratio_mca"])
    return out


def _plain_masked(h, W, s, bias, below, dims):
    """A stacked masked layer through autograd (what ``torch.compile`` differentiates), as ``_StackedMasked``."""
    import torch

    d, b, a = dims
    K = W.shape[0]
    blocks = W.view(K, d, b, d, a)
    eye = torch.eye(d, dtype=W.dtype).view(1, d, 1, d, 1)
    w = (blocks * below.view(1, d, b, d, a) + torch.exp(blocks) * eye).view(K, d * b, d * a)
    log_gain = s.view(K, -1) - torch.log(torch.linalg.vector_norm(w, dim=2))
    y = torch.bmm(h, w.transpose(1, 2)) * torch.exp(log_gain).unsqueeze(1) + bias.unsqueeze(1)
    log_blocks = torch.diagonal(blocks, dim1=1, dim2=3).permute(0, 3, 1, 2) + log_gain.view(K, d, b, 1)
    return y, log_blocks


def floor_part(k: int, steps: int, repeats: int, compile_stack: bool, profile: bool = False) -> dict:
    """Where a stacked step's time goes, per member step, against one compiled single step (one process).

    Times, interleaved ``repeats`` times (best of them), CPU seconds per member and step at
    DOMIAS's paper flow on 9 California columns, batch 50: the compiled single step as
    :meth:`BNAF.fit` runs it; the stacked step (trainer v2: gradients and the K fused Adam
    steps); that step's matrix products alone (forward, input and weight gradients of every
    masked layer, dense ``(K, out, in)``); the same products on the nonzero blocks only (one
    product per row block: what a packed layout computes); fused Adam over every weight and
    over the nonzero ones only; and, with ``compile_stack``, the whole stacked loss (forward
    and backward through AOT autograd) under ``torch.compile``, its compile time apart.  The
    floor ratio is the single step over the packed products plus the packed Adam: the most a
    stack could gain were every other pass (the elementwise work on the activations, the
    masking, norms and exponentials of the weights) free; with the work on the activations
    that no layout removes (the derivative vectors' products, the transcendental functions of
    the tanh layers) added, the most it could gain at all.  ``profile``: the stacked step's
    self CPU time by operator (``torch.profiler``, one more run of it).
    """
    import torch
    import torch.nn.functional as F

    from vrlib.data import load_california
    from vrlib.density import BNAF
    from vrlib.density import bnaf as bm
    from vrlib.density import bnaf_ensemble as be
    from vrlib.density.base import LOG_2PI

    X = load_california()[0].to_numpy(dtype=float)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    d, bs = X.shape[1], 50
    flow = dict(n_flows=5, n_layers=3, hidden_per_dim=32, batch_size=bs)
    rng = np.random.default_rng(0)
    batches = [torch.as_tensor(X[rng.integers(0, len(X), (k, bs))], dtype=torch.float32) for _ in range(steps)]
    ones = torch.ones(k, bs)
    members = [be._Member(BNAF(**flow, seed=m), X[:200], "cpu") for m in range(k)]
    template = members[0].model
    weights = torch.empty(k, len(members[0].flat))
    be._bind(members, range(k), weights)
    stack = be._Stack(template, weights)
    for r, m in enumerate(members):
        m.flat.grad = stack.grad[r]
    clip = torch.full((k,), 0.1)

    def adam_steps(grad_scale, skip):
        for r, m in enumerate(members):
            m.opt.grad_scale, m.opt.found_inf = grad_scale[r], skip[r]
            m.opt.step()

    def stacked():
        for batch in batches:
            _, _, grad_scale, skip = stack.gradients(batch, ones, clip)
            adam_steps(grad_scale, skip)

    # the compiled single step, as BNAF.fit runs it
    single_model = bm._build_bnaf(d, 5, 3, 32, torch.Generator().manual_seed(0))
    single_opt = torch.optim.Adam(single_model.parameters(), lr=0.01, amsgrad=True, fused=True)
    loss_of = bm._compiled_loss()

    def singles():
        for _ in range(k):
            for batch in batches:
                loss = loss_of(single_model, batch[0])
                if not torch.isfinite(loss):
                    continue
                single_opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(single_model.parameters(), 0.1)
                single_opt.step()
                float(loss.detach())

    # the matrix products of one step: dense, and on the nonzero blocks only (one product per row block)
    masked = [layer for block in template.blocks for layer in block.layers if isinstance(layer, bm._MaskedWeight)]
    gen = torch.Generator().manual_seed(1)
    shapes = [(m.d, m.b, m.a) for m in masked]
    dense_w = [torch.randn(k, d_ * b, d_ * a, generator=gen) for d_, b, a in shapes]
    acts = [torch.randn(k, bs, d_ * a, generator=gen) for d_, b, a in shapes]
    outs = [torch.randn(k, bs, d_ * b, generator=gen) for d_, b, a in shapes]
    packed_w = [[torch.randn(k, b, (i + 1) * a, generator=gen) for i in range(d_)] for d_, b, a in shapes]

    def dense_products():
        for _ in batches:
            for w, x, g in zip(dense_w, acts, outs):
                torch.bmm(x, w.transpose(1, 2))
                torch.bmm(g, w)
                torch.bmm(g.transpose(1, 2), x)

    def packed_products():
        for _ in batches:
            for (d_, b, a), ws, x, g in zip(shapes, packed_w, acts, outs):
                dx = torch.zeros_like(x)
                for i, w in enumerate(ws):
                    xi, gi = x[:, :, : (i + 1) * a], g[:, :, i * b : (i + 1) * b]
                    torch.bmm(xi, w.transpose(1, 2))
                    dx[:, :, : (i + 1) * a].baddbmm_(gi, w)
                    torch.bmm(gi.transpose(1, 2), xi)

    # the work on the activations that no layout removes: the derivative vectors' products through each
    # masked layer (forward, and the gradients of both factors) and the transcendental functions of each
    # tanh layer (tanh, exp and softplus forward; exp and softplus's sigmoid backward), one pass each
    deriv = [
        (torch.randn(k * d_, bs, a, generator=gen), torch.randn(k * d_, a, b, generator=gen), torch.randn(k * d_, bs, b, generator=gen))
        for d_, b, a in shapes
    ]  # fmt: skip
    n_tanh = sum(1 for block in template.blocks for layer in block.layers if isinstance(layer, bm._Tanh))
    hidden = torch.randn(k, bs, d * flow["hidden_per_dim"], generator=gen)

    def necessary_elementwise():
        for _ in batches:
            for vec, blocks, g in deriv:
                torch.bmm(vec, blocks)
                torch.bmm(g, blocks.transpose(1, 2))
                torch.bmm(vec.transpose(1, 2), g)
            for _ in range(n_tanh):
                torch.tanh(hidden)
                torch.exp(hidden)
                F.softplus(hidden)
                torch.exp(hidden)
                torch.sigmoid(hidden)

    n_all = weights.shape[1]
    n_nonzero = n_all - sum(int((m.below == 0).sum()) - m.d * m.b * m.a for m in masked)

    def adam_over(n):
        params = [torch.zeros(n, requires_grad=True) for _ in range(k)]
        opts = [torch.optim.Adam([p], lr=0.01, amsgrad=True, fused=True) for p in params]
        for p in params:
            p.grad = torch.randn(n, generator=gen) * 1e-3

        def run_():
            for _ in batches:
                for opt in opts:
                    opt.step()

        return run_

    ways = {
        "single_compiled_step": singles,
        "stacked_step": stacked,
        "stacked_dense_products": dense_products,
        "stacked_packed_products": packed_products,
        "stacked_adam_dense": adam_over(n_all),
        "stacked_adam_packed": adam_over(n_nonzero),
        "stacked_necessary_elementwise": necessary_elementwise,
    }
    out = {"floor_k": k, "floor_steps": steps, "floor_weights": n_all, "floor_nonzero_weights": n_nonzero}

    if compile_stack:
        names = [n for n, _ in template.named_parameters()]
        offsets, off = {}, 0
        for n, p in template.named_parameters():
            offsets[n] = (off, p.shape)
            off += p.numel()

        def log_density(params, x):  # as _Stack.log_density, the masked layers through autograd
            K, N, _ = x.shape
            logdet = x.new_zeros(K, N)
            for j, block in enumerate(template.blocks):
                if j > 0:
                    x = torch.flip(x, dims=[2])
                h, vec, log_scale = x, x.new_ones(K, N, d, 1), x.new_zeros(K, N, d)
                for i, layer in enumerate(block.layers):
                    if not isinstance(layer, bm._MaskedWeight):
                        h, vec, log_scale = be._tanh(h, vec, log_scale)
                        continue
                    W, s, bias = (params[f"blocks.{j}.layers.{i}.{n}"] for n in ("weight", "log_scale", "bias"))
                    h, log_blocks = _plain_masked(h, W, s, bias, layer.below, (layer.d, layer.b, layer.a))
                    vec, log_scale = be._masked_derivatives(log_blocks, s.detach(), vec, log_scale)
                gate = params[f"blocks.{j}.gate"].view(K, 1, 1)
                log_der = F.softplus(log_scale + torch.log(vec.view(K, N, d)) + gate) - F.softplus(gate)
                s_gate = torch.sigmoid(gate)
                x, logdet = s_gate * h + (1 - s_gate) * x, logdet + log_der.sum(dim=2)
            return -0.5 * (x * x).sum(dim=2) - 0.5 * d * LOG_2PI + logdet

        def loss(leaves, batch, weight):
            log_p = log_density(dict(zip(names, leaves)), batch)
            n_rows = weight.sum(dim=1)
            losses = -torch.where(weight > 0, log_p, 0.0).sum(dim=1) / n_rows.clamp_min(1.0)
            ok = torch.isfinite(losses) & (n_rows > 0)
            return torch.where(ok, losses, 0.0).sum(), ok

        compiled_loss = torch.compile(loss)
        views = [weights[:, o : o + math.prod(s)].view(k, *s) for o, s in offsets.values()]
        gviews = [stack.grad[:, o : o + math.prod(s)].view(k, *s) for o, s in offsets.values()]

        def compiled_gradients(batch):
            leaves = [v.detach().requires_grad_(True) for v in views]
            total, ok = compiled_loss(leaves, batch, ones)
            for g, view in zip(torch.autograd.grad(total, leaves), gviews):
                view.copy_(g)
            with torch.no_grad():
                norm = torch.linalg.vector_norm(stack.grad, dim=1)
                return 1.0 / (clip / (norm + 1e-6)).clamp(max=1.0), (~ok).float()

        stack.gradients(batches[0], ones, clip)
        hand = stack.grad.clone()
        seconds, _ = _cpu(lambda: compiled_gradients(batches[0]))
        out["compiled_stack_compile_cpu_s"] = round(seconds, 2)
        out["compiled_stack_vs_hand_grad_max_abs_diff"] = float((stack.grad - hand).abs().max())

        def compiled_stacked():
            for batch in batches:
                adam_steps(*compiled_gradients(batch))

        ways["compiled_stacked_step"] = compiled_stacked

    for make in ways.values():  # warm-ups (the single step's compile is paid here)
        make()
    times = {name: [] for name in ways}
    for r in range(repeats):
        for name, make in ways.items():
            times[name].append(_cpu(make)[0] / (steps * k) * 1e3)
        print(f"floor, repeat {r}: " + ", ".join(f"{n} {v[-1]:.2f}" for n, v in times.items()) + " ms per member step",
              flush=True)  # fmt: skip
    if profile:  # the stacked step's time by operator (self CPU), per member step
        from torch.profiler import ProfilerActivity
        from torch.profiler import profile as torch_profile

        with torch_profile(activities=[ProfilerActivity.CPU]) as prof:
            stacked()
        ops = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)
        total = sum(e.self_cpu_time_total for e in ops) / 1e3 / (steps * k)
        out["stacked_step_profiled_ms"] = round(total, 3)
        out["stacked_step_profile_ms"] = {e.key: round(e.self_cpu_time_total / 1e3 / (steps * k), 3) for e in ops[:20]}
    best = {name: min(v) for name, v in times.items()}
    out.update({f"{name}_ms": round(v, 3) for name, v in best.items()})
    single = best["single_compiled_step"]
    out["stacked_step_ratio"] = round(single / best["stacked_step"], 3)
    if "compiled_stacked_step" in best:
        out["compiled_stacked_step_ratio"] = round(single / best["compiled_stacked_step"], 3)
    rest = best["stacked_step"] - best["stacked_dense_products"] - best["stacked_adam_dense"]
    out["stacked_step_rest_ms"] = round(rest, 3)  # elementwise work, weight passes, per-op overhead
    out["floor_ratio_dense"] = round(single / (best["stacked_dense_products"] + best["stacked_adam_dense"]), 3)
    out["floor_ratio_packed"] = round(single / (best["stacked_packed_products"] + best["stacked_adam_packed"]), 3)
    out["floor_ratio_packed_at_dense_rate"] = round(
        single / (best["stacked_dense_products"] * (d + 1) / (2 * d) + best["stacked_adam_packed"]), 3
    )
    out["floor_ratio_packed_with_necessary_elementwise"] = round(
        single
        / (best["stacked_packed_products"] + best["stacked_adam_packed"] + best["stacked_necessary_elementwise"]),
        3,
    )
    # the most optimistic: the packed products at the dense products' rate per multiply-add
    out["floor_ratio_packed_at_dense_rate_with_necessary_elementwise"] = round(
        single
        / (
            best["stacked_dense_products"] * (d + 1) / (2 * d)
            + best["stacked_adam_packed"]
            + best["stacked_necessary_elementwise"]
        ),
        3,
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=16, help="flows per stack")
    parser.add_argument("--rows", type=int, default=2000, help="rows per flow")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--gan-k", type=int, nargs=2, default=(8, 4), help="WGAN-GP fits per stack: DOMIAS, MCA")
    parser.add_argument("--gan-repeats", type=int, default=2)
    parser.add_argument("--gan-epochs", type=int, nargs=2, default=(20, 1), help="epochs at DOMIAS's and MCA's size")
    parser.add_argument("--only", choices=("bnaf", "gan", "floor"), help="run one part")
    parser.add_argument("--floor-k", type=int, default=16, help="flows in the stack of the step-cost part")
    parser.add_argument("--floor-steps", type=int, default=24, help="steps per timing in the step-cost part")
    parser.add_argument("--floor-repeats", type=int, default=2)
    parser.add_argument("--compile-stack", action="store_true", help="time the stack under torch.compile too")
    parser.add_argument("--profile", action="store_true", help="the stacked step's time by operator too")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=FutureWarning)
    if args.only == "floor":
        import torch

        torch.set_num_threads(1)
        load_start = round(os.getloadavg()[0], 2)
        floor = floor_part(args.floor_k, args.floor_steps, args.floor_repeats, args.compile_stack, args.profile)
        print(json.dumps({"benchmark": "bench_ensembles", **floor, "load_average_start": load_start,
                          "load_average": round(os.getloadavg()[0], 2), "torch": torch.__version__}))  # fmt: skip
        return
    if args.only == "gan":
        import torch

        torch.set_num_threads(1)
        gan = gan_ensemble_part(args.gan_k, args.gan_repeats, args.gan_epochs)
        print(json.dumps({"benchmark": "bench_ensembles", **gan, "load_average": round(os.getloadavg()[0], 2)}))
        return

    import torch

    from vrlib.data import load_california
    from vrlib.density import BNAF
    from vrlib.density.bnaf_ensemble import fit_bnaf_ensemble
    from vrlib.experiments import domias  # noqa: F401  (registers the profiles of the DOMIAS family)
    from vrlib.experiments.profiles import profile_settings

    torch.set_num_threads(1)
    load_start = round(os.getloadavg()[0], 2)
    paper = dict(profile_settings("domias", "paper")["flow"])
    paper.update(epochs=args.epochs, patience=args.epochs + 1, threads=1)
    X_all = load_california()[0].to_numpy(dtype=float)
    datasets = [X_all[np.random.default_rng(k).permutation(len(X_all))[: args.rows]] for k in range(args.k)]
    held_out = X_all[np.random.default_rng(1000).permutation(len(X_all))[:500]]

    def singles(compile_):
        return [BNAF(**paper, seed=k, compile=compile_).fit(X) for k, X in enumerate(datasets)]

    def stacked():
        return fit_bnaf_ensemble([BNAF(**paper, seed=k) for k in range(args.k)], datasets)

    # warm-ups: the compile, and the first calls of each path
    BNAF(**{**paper, "epochs": 1}, seed=0, compile=True).fit(datasets[0][:300])
    BNAF(**{**paper, "epochs": 1}, seed=0, compile=False).fit(datasets[0][:300])
    fit_bnaf_ensemble([BNAF(**{**paper, "epochs": 1}, seed=k) for k in range(2)], [datasets[0][:300]] * 2)

    times = {"single_eager": [], "single_compiled": [], "stacked": []}
    fitted = {}
    for r in range(args.repeats):
        for name, make in (("single_eager", lambda: singles(False)), ("single_compiled", lambda: singles(True)),
                           ("stacked", stacked)):  # fmt: skip
            seconds, fitted[name] = _cpu(make)
            times[name].append(seconds)
        print(f"repeat {r}: " + ", ".join(f"{k} {v[-1]:.2f}" for k, v in times.items()) + " CPU s", flush=True)

    logd = {name: [f.log_density(held_out) for f in fits] for name, fits in fitted.items()}

    def gap(name):  # |log density| difference from the eager single fits, over held-out rows and members
        d = np.abs(np.stack(logd[name]) - np.stack(logd["single_eager"]))
        return float(d.max()), float(np.median(d))

    heldout = {name: [float(v.mean()) for v in values] for name, values in logd.items()}
    best = {k: min(v) for k, v in times.items()}
    result = {
        "benchmark": "bench_ensembles",
        "k": args.k,
        "rows_per_fit": args.rows,
        "epochs": args.epochs,
        "repeats": args.repeats,
        "flow": {k: paper[k] for k in ("n_flows", "n_layers", "hidden_per_dim", "batch_size", "lr")},
        "n_features": int(X_all.shape[1]),
        **{f"{k}_cpu_s": round(v, 3) for k, v in best.items()},
        "bnaf_ensemble_cpu_ratio": round(best["single_compiled"] / best["stacked"], 3),
        "bnaf_ensemble_cpu_ratio_vs_eager": round(best["single_eager"] / best["stacked"], 3),
        "bnaf_ensemble_cpu_ratio_per_repeat": [
            round(c / s, 3) for c, s in zip(times["single_compiled"], times["stacked"])
        ],
        "bnaf_ensemble_cpu_ratio_vs_eager_per_repeat": [
            round(e / s, 3) for e, s in zip(times["single_eager"], times["stacked"])
        ],
        "load_average_start": load_start,
        "stacked_vs_eager_log_density_diff_max_median": [round(v, 4) for v in gap("stacked")],
        "compiled_vs_eager_log_density_diff_max_median": [round(v, 4) for v in gap("single_compiled")],
        **{f"heldout_loglik_mean_{k}": round(float(np.mean(v)), 4) for k, v in heldout.items()},
        "heldout_t_stacked_vs_eager": welch_t(heldout["single_eager"], heldout["stacked"]),
        "heldout_t_compiled_vs_eager": welch_t(heldout["single_eager"], heldout["single_compiled"]),
        "load_average": round(os.getloadavg()[0], 2),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
    }
    if args.only != "bnaf":
        result.update(gan_ensemble_part(args.gan_k, args.gan_repeats, args.gan_epochs))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
