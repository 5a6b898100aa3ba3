"""Training target attention networks, many targets at once (one grouped model with stacked weights).

The paper trains one small network per target: batch 20, up to 500 epochs, thousands of
tiny steps whose cost is mostly per-step overhead (Python, kernel launches).  Here the
networks of G targets are trained side by side as one model whose weights are stacked
along a leading group axis, so one step of batched matmuls (``torch.bmm``) advances
every target.  Each target keeps everything that makes its result its own:

* its initial weights (a :class:`~vrlib.attacks.attention.network.TargetAttentionNet` built
  under its own seed),
* its validation split, its batch order and its dropout masks, drawn from its own
  generators (numpy for the split and the order; for dropout, numpy on the CPU and a
  ``torch.Generator`` elsewhere, drawn in fixed-size chunks of steps so the stream
  does not depend on the group),
* its own loss: the group's loss is the sum of the targets' mean losses, so each
  target's weights get exactly the gradient of its own loss,
* Adamax, elementwise, so stacked parameters are updated as separate ones would be,
* its validation loss, best weights, and early-stopping counter.

Training a target alone is the same code with G = 1, so a target's result does not
depend on which targets share its group (a test checks this).

Algebraic rewrites make each step cheaper without changing the model:

* the one-hot block of a record times the first layer's weights is the sum of the
  weight rows of its categories, a gather over category codes (about 10×
  fewer multiply-adds on Adult than the dense matmul, and records stored as codes take
  far less memory than one-hot floats); its gradient is, per category, the sum of the
  gradients of the records that have it (:func:`code_segments`);
* scores ``<q, W_k e_j>`` are ``<W_k^T q, e_j>`` and the pooled value
  ``sum_j w_j W_v e_j`` is ``W_v sum_j w_j e_j``: keys and values are never formed;
  training goes further (:class:`_Backprop`: forward and backward by hand, records'
  embeddings never formed).

:meth:`GroupedAttentionNet.forward` (autograd) is the reference the hand-written pass
is tested against; ``train_group(autograd=True, dropout_stream="torch")`` is the
previous implementation, which the benchmark times beside the current one.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

# Steps whose dropout masks are drawn in one call per target.  Part of the definition
# of each target's random stream: changing it changes results (not their distribution).
MASK_CHUNK_STEPS = 16


def sparse_inputs(records: np.ndarray, n_onehot: int, widths) -> tuple[np.ndarray, np.ndarray]:
    """Split preprocessed records into category codes and dense features.

    Parameters
    ----------
    records : ndarray (n, X, F')
        ``[one-hot | scaled continuous | multiplicity | distance]`` rows.
    n_onehot : int
        Width of the one-hot block.
    widths : sequence of int
        Number of categories of each categorical column (block widths, in order).

    Returns
    -------
    codes : ndarray (n, X, n_categorical), int64
        Column of the one-hot block holding the 1 of each categorical column (padding rows: the block's first).
    dense : ndarray (n, X, F' - n_onehot), float32
    """
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64)
    codes = np.empty(records.shape[:2] + (len(widths),), dtype=np.int64)
    for j, (off, w) in enumerate(zip(offsets, widths)):
        codes[..., j] = off + records[..., off : off + w].argmax(-1)
    return codes, np.ascontiguousarray(records[..., n_onehot:])


class _OneHotMatmul(torch.autograd.Function):
    """``onehot(codes) @ weight`` per group, from category codes.

    Forward is ``F.embedding_bag`` (sum of the weight rows of a record's categories).
    Its own backward sorts the indices first, which took three quarters of a training
    step here; the gradient ``onehot^T @ grad`` is cheaper as a batched matmul over a
    one-hot block rebuilt for the batch in a buffer that is kept zero between steps
    (allocating and zeroing a fresh one each step cost as much as the matmul).
    """

    @staticmethod
    def forward(ctx, weight, codes, buffer):
        # weight (G, K, H); codes (G, M, C), group-local columns of the one-hot block;
        # buffer: zeros of at least (G, M, K), returned to zero after use.
        g, k, h = weight.shape
        m, c = codes.shape[1:]
        ctx.save_for_backward(codes)
        ctx.buffer = buffer
        flat = (codes + (torch.arange(g, device=codes.device) * k).view(g, 1, 1)).reshape(g * m, c)
        return F.embedding_bag(flat, weight.reshape(g * k, h), mode="sum").view(g, m, h)

    @staticmethod
    def backward(ctx, grad):
        (codes,) = ctx.saved_tensors
        m = codes.shape[1]
        onehot = ctx.buffer[:, :m].scatter_(2, codes, 1.0)
        grad_weight = torch.bmm(onehot.transpose(1, 2), grad)
        onehot.zero_()
        return grad_weight, None, None


class GroupedAttentionNet(nn.Module):
    """G target attention networks with stacked weights (group axis first).

    Built from G :class:`~vrlib.attacks.attention.network.TargetAttentionNet` of one shape, whose
    weights it copies; :meth:`unstack` gives them back, one network per target.
    """

    def __init__(self, nets, n_onehot: int):
        super().__init__()
        self.n_onehot = n_onehot
        self.dropout = float(nets[0].embed[2].p)

        def stack(get):
            return nn.Parameter(torch.stack([get(n).detach().clone() for n in nets]))

        w1 = [n.embed[0].weight.T for n in nets]  # (F', H1) each
        self.w1_onehot = nn.Parameter(torch.stack([w[:n_onehot] for w in w1]).detach().clone())
        self.w1_dense = nn.Parameter(torch.stack([w[n_onehot:] for w in w1]).detach().clone())
        self.b1 = stack(lambda n: n.embed[0].bias)
        self.w2 = stack(lambda n: n.embed[3].weight.T)
        self.b2 = stack(lambda n: n.embed[3].bias)
        self.wq = stack(lambda n: n.query.weight.T)  # (E, A)
        self.wk = stack(lambda n: n.key.weight.T)  # (E, A)
        self.wv = stack(lambda n: n.value.weight.T)  # (E, A)
        self.p1 = stack(lambda n: n.predict[0].weight.T)  # (A, H2)
        self.c1 = stack(lambda n: n.predict[0].bias)
        self.p2 = stack(lambda n: n.predict[3].weight.T)  # (H2, 1)
        self.c2 = stack(lambda n: n.predict[3].bias)
        # A plain attribute, not a submodule: its weights are not part of this model.
        self.__dict__["_template"] = copy.deepcopy(nets[0]).cpu()
        self.__dict__["_buffer"] = None  # scratch space of _OneHotMatmul's backward

    @property
    def n_groups(self) -> int:
        return self.b1.shape[0]

    def forward(self, codes, dense, mask, target, masks=None):
        """Logits (G, B).

        Parameters
        ----------
        codes : LongTensor (G, B, X, C)
            Category codes: columns of the one-hot block.
        dense : Tensor (G, B, X, D)
        mask : BoolTensor (G, B, X)
        target : Tensor (G, F')
        masks : tuple of 3 Tensors, optional
            Dropout multipliers (G, B, X, H1), (G, H1), (G, B, H2) (0 or 1 / (1 - p));
            None: no dropout (evaluation).
        """
        g, b, x = mask.shape
        h1 = self.b1.shape[-1]
        h = torch.baddbmm(self.b1.unsqueeze(1), dense.reshape(g, b * x, -1), self.w1_dense)
        if codes.shape[-1]:
            size = (g, b * x, self.n_onehot)
            if self._buffer is None or self._buffer.shape[1] < size[1] or self._buffer.device != h.device:
                self.__dict__["_buffer"] = torch.zeros(size, dtype=h.dtype, device=h.device)
            h = h + _OneHotMatmul.apply(self.w1_onehot, codes.reshape(g, b * x, -1), self._buffer)
        h = torch.relu(h)
        t = torch.relu(
            torch.bmm(target[:, None, : self.n_onehot], self.w1_onehot)
            + torch.bmm(target[:, None, self.n_onehot :], self.w1_dense)
            + self.b1.unsqueeze(1)
        )  # (G, 1, H1)
        if masks is not None:
            h = h * masks[0].reshape(g, b * x, h1)
            t = t * masks[1].unsqueeze(1)
        e = torch.baddbmm(self.b2.unsqueeze(1), h, self.w2)  # (G, B*X, E)
        te = torch.baddbmm(self.b2.unsqueeze(1), t, self.w2)  # (G, 1, E)
        q = torch.bmm(te, self.wq)  # (G, 1, A)
        u = torch.bmm(self.wk, q.transpose(1, 2))  # (G, E, 1): W_k^T q
        scores = torch.bmm(e, u).view(g, b, x).masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        pooled_e = torch.bmm(weights.view(g * b, 1, x), e.view(g * b, x, -1)).view(g, b, -1)
        pooled = torch.bmm(pooled_e, self.wv)  # (G, B, A)
        p = torch.relu(torch.baddbmm(self.c1.unsqueeze(1), pooled, self.p1))
        if masks is not None:
            p = p * masks[2]
        return torch.baddbmm(self.c2.unsqueeze(1), p, self.p2).squeeze(-1)

    def unstack(self, state=None) -> list:
        """One TargetAttentionNet per target, with this model's weights (or those of ``state``)."""
        state = self.state_dict() if state is None else state
        nets = []
        for i in range(self.n_groups):
            net = copy.deepcopy(self._template)
            with torch.no_grad():
                w1 = torch.cat([state["w1_onehot"][i], state["w1_dense"][i]]).T
                pairs = [
                    (net.embed[0].weight, w1), (net.embed[0].bias, state["b1"][i]),
                    (net.embed[3].weight, state["w2"][i].T), (net.embed[3].bias, state["b2"][i]),
                    (net.query.weight, state["wq"][i].T), (net.key.weight, state["wk"][i].T),
                    (net.value.weight, state["wv"][i].T),
                    (net.predict[0].weight, state["p1"][i].T), (net.predict[0].bias, state["c1"][i]),
                    (net.predict[3].weight, state["p2"][i].T), (net.predict[3].bias, state["c2"][i]),
                ]  # fmt: skip
                for param, value in pairs:
                    param.copy_(value.cpu())
            nets.append(net.eval())
        return nets


class _Backprop:
    """Training steps of a :class:`GroupedAttentionNet`, forward and backward written out by hand.

    Autograd records and replays about a hundred small operations per step; here the
    gradients are computed directly, with fused ReLU and softmax backward kernels, and
    each target's loss still gives exactly its own weights' gradient (the group axis is
    a batch axis of every product).  Gradients are written into the parameters'
    ``.grad`` for the optimiser; a test checks them against autograd on
    :meth:`GroupedAttentionNet.forward`.  Three rewrites save passes over the largest
    tensors, (G, B*X, H1):

    * the records' embeddings ``e = h W2 + b2`` are never formed: the scores
      ``<e_j, u>`` are ``<h_j, W2 u>`` (the constant ``<b2, u>`` does not change the
      softmax) and the pooled embedding ``sum_j w_j e_j`` is ``(sum_j w_j h_j) W2 + b2``;
    * the first layer's bias is a last row of the dense weights, the records' dense
      features ending with a column of ones;
    * dropout masks are 0/1 (uint8); the 1 / (1 - p) scale of kept units is applied to
      the next (small) product.
    """

    def __init__(self, model: GroupedAttentionNet):
        self.model = model
        for p in model.parameters():
            p.grad = torch.zeros_like(p)
        self.scale = 1.0 / (1.0 - model.dropout)

    def forward(self, codes, dense, bias, target, masks=None):
        """Logits (G, B) and what :meth:`backward` needs.

        ``codes`` (G, B*X, C) are rows of the flattened (G*K, H1) one-hot weights (group
        offsets included); ``dense`` (G, B*X, D + 1) ends with a column of ones; ``bias``
        (G, B, X) is 0 on records and -inf on padding; ``masks``: 0/1 dropout masks
        (G, B, X, H1), (G, H1), (G, B, H2), or None (evaluation).
        """
        m = self.model
        g, b, x = bias.shape
        k = m.n_onehot
        s = self.scale if masks is not None else 1.0
        h = F.embedding_bag(codes.reshape(g * b * x, -1), m.w1_onehot.reshape(g * k, -1), mode="sum")
        h = h.view(g, b * x, -1).baddbmm_(dense, torch.cat([m.w1_dense, m.b1.unsqueeze(1)], 1))
        t = (
            torch.bmm(target[:, None, :k], m.w1_onehot)
            .baddbmm_(target[:, None, k:], m.w1_dense)
            .add_(m.b1.unsqueeze(1))
        )
        if masks is not None:  # relu(a) * mask = relu(a * mask) for a 0/1 mask
            h.mul_(masks[0].view(g, b * x, -1))
            t.mul_(masks[1].unsqueeze(1))
        h.clamp_min_(0)  # (G, B*X, H1)
        t.clamp_min_(0)  # (G, 1, H1)
        te = torch.baddbmm(m.b2.unsqueeze(1), t, m.w2, alpha=s)  # (G, 1, E)
        q = torch.bmm(te, m.wq)  # (G, 1, A)
        u = torch.bmm(m.wk, q.transpose(1, 2))  # (G, E, 1): W_k^T q
        z = torch.bmm(m.w2, u).mul_(s)  # (G, H1, 1): scores are <s h_j, W2 u> + <b2, u>
        w = torch.softmax(torch.bmm(h, z).view(g, b, x).add_(bias), dim=-1)  # attention weights
        hw = torch.bmm(w.view(g * b, 1, x), h.view(g * b, x, -1)).view(g, b, -1)  # sum_j w_j h_j
        pe = torch.baddbmm(m.b2.unsqueeze(1), hw, m.w2, alpha=s)  # sum_j w_j e_j, (G, B, E)
        pooled = torch.bmm(pe, m.wv)  # (G, B, A)
        r = torch.baddbmm(m.c1.unsqueeze(1), pooled, m.p1)
        if masks is not None:
            r.mul_(masks[2])
        r.clamp_min_(0)  # (G, B, H2)
        logits = torch.baddbmm(m.c2.unsqueeze(1), r, m.p2, alpha=s).squeeze(-1)
        return logits, (s, codes, dense, target, h, t, te, q, u, z, w, hw, pe, pooled, r)

    def backward(self, saved, dlogits, segments) -> None:
        """Write into each parameter's ``.grad`` the gradient of ``sum(dlogits * logits)``.

        ``segments``: the batch's rows listed by category and where each (target, dataset,
        category) starts, flat, as ``embedding_bag`` takes them (:func:`code_segments`,
        offset to the batch's rows).
        """
        m = self.model
        s, codes, dense, target, h, t, te, q, u, z, w, hw, pe, pooled, r = saved
        g, b, x = w.shape
        k = m.n_onehot
        grad = {name: p.grad for name, p in m.named_parameters()}
        dl = dlogits.unsqueeze(-1)  # (G, B, 1)
        torch.bmm(r.transpose(1, 2), dl, out=grad["p2"]).mul_(s)
        torch.sum(dl, 1, out=grad["c2"])
        # ReLU and a 0/1 mask: the gradient passes where the output is positive.
        da2 = torch.ops.aten.threshold_backward(torch.bmm(dl, m.p2.transpose(1, 2)).mul_(s), r, 0)
        torch.sum(da2, 1, out=grad["c1"])
        torch.bmm(pooled.transpose(1, 2), da2, out=grad["p1"])
        dpooled = torch.bmm(da2, m.p1.transpose(1, 2))  # (G, B, A)
        torch.bmm(pe.transpose(1, 2), dpooled, out=grad["wv"])
        dpe = torch.bmm(dpooled, m.wv.transpose(1, 2))  # (G, B, E)
        dhw = torch.bmm(dpe, m.w2.transpose(1, 2)).mul_(s)  # (G, B, H1)
        dw = torch.bmm(h.view(g * b, x, -1), dhw.view(g * b, -1, 1)).view(g, b, x)  # up to a constant per dataset
        ds = torch._softmax_backward_data(dw, w, -1, w.dtype)  # (G, B, X): gradient of the scores
        dz = torch.bmm(h.transpose(1, 2), ds.view(g, b * x, 1)).mul_(s)  # (G, H1, 1)
        dh = torch.bmm(w.view(g * b, x, 1), dhw.view(g * b, 1, -1)).view(g, b * x, -1)
        dh.baddbmm_(ds.view(g, b * x, 1), z.transpose(1, 2))  # (G, B*X, H1)
        du = torch.bmm(m.w2.transpose(1, 2), dz)  # (G, E, 1)
        torch.bmm(du, q, out=grad["wk"])
        dq = torch.bmm(du.transpose(1, 2), m.wk)  # (G, 1, A)
        torch.bmm(te.transpose(1, 2), dq, out=grad["wq"])
        dte = torch.bmm(dq, m.wq.transpose(1, 2))  # (G, 1, E)
        # W2 acts on the pooled records (pe), on W2 u (z) and on the target (te).
        dw2 = torch.bmm(hw.transpose(1, 2), dpe).baddbmm_(t.transpose(1, 2), dte).mul_(s)
        torch.baddbmm(dw2, dz, u.transpose(1, 2), out=grad["w2"])
        torch.sum(dpe, 1, out=grad["b2"]).add_(dte.squeeze(1))  # the softmax weights sum to 1
        da1 = torch.ops.aten.threshold_backward(dh, h, 0)  # (G, B*X, H1)
        dat = torch.ops.aten.threshold_backward(torch.bmm(dte, m.w2.transpose(1, 2)).mul_(s), t, 0)  # (G, 1, H1)
        dw1 = torch.bmm(dense.transpose(1, 2), da1)  # (G, D + 1, H1), the bias last
        torch.baddbmm(dw1[:, :-1], target[:, k:, None], dat, out=grad["w1_dense"])
        torch.add(dw1[:, -1], dat.squeeze(1), out=grad["b1"])
        # onehot^T @ da1: for each category, the sum of the rows of da1 whose record has it,
        # one bag per (target, dataset, category) of rows listed by category (see
        # code_segments), then summed over the batch's datasets.
        rows, starts = segments
        per_dataset = F.embedding_bag(rows, da1.view(g * b * x, -1), starts, mode="sum").view(g, b, k, -1)
        torch.baddbmm(torch.sum(per_dataset, 1), target[:, :k, None], dat, out=grad["w1_onehot"])


def code_segments(codes: np.ndarray, n_onehot: int) -> tuple[np.ndarray, np.ndarray]:
    """Each dataset's records listed by category, for the one-hot weights' gradient.

    Parameters
    ----------
    codes : ndarray (n, X, C)
        Category codes (columns of the one-hot block) of each dataset's records.
    n_onehot : int
        K, the width of the one-hot block.

    Returns
    -------
    rows : ndarray (n, X * C), int32
        Per dataset, the record (0 to X - 1) of each (record, column) entry, ordered by code
        (stable: by record within a code).
    starts : ndarray (n, K), int32
        Per dataset, where the entries of each code start in ``rows`` (empty codes included).
    """
    n, x, c = codes.shape
    flat = codes.reshape(n, x * c)
    order = np.argsort(flat.astype(np.int16 if n_onehot < 2**15 else np.int64), axis=1, kind="stable")
    keys = (np.arange(n, dtype=np.int64)[:, None] * n_onehot + flat).ravel()
    counts = np.bincount(keys, minlength=n * n_onehot).reshape(n, n_onehot)
    starts = np.cumsum(counts, axis=1) - counts
    return (order // c).astype(np.int32), starts.astype(np.int32)


class _DropoutStream:
    """0/1 dropout masks of each target (uint8), from its own generator, drawn MASK_CHUNK_STEPS steps at a time.

    ``kind="numpy"``: a numpy PCG64 generator per target, a unit kept when a 32-bit
    draw is at least p * 2**32 (the CPU default: about 5 times cheaper than torch's
    CPU generator); ``kind="torch"``: a ``torch.Generator`` on the device, a unit kept
    when a uniform float is at least p (the default elsewhere, and the stream of the
    previous implementation).  Either way, a target's masks depend only on its seed.
    """

    def __init__(self, seeds, batch_size, top_x, h1, h2, p, device, kind="numpy"):
        if kind not in ("numpy", "torch"):
            raise ValueError(f"unknown dropout stream {kind!r}")
        self.kind = kind
        if kind == "numpy":
            self.gens = [np.random.Generator(np.random.PCG64(int(s))) for s in seeds]
        else:
            self.gens = [torch.Generator(device=device).manual_seed(int(s)) for s in seeds]
        self.shapes = [(batch_size, top_x, h1), (h1,), (batch_size, h2)]
        self.sizes = [int(np.prod(s)) for s in self.shapes]
        self.p, self.device = p, device
        self.step = 0
        self.buffers = None

    def _draw(self):
        g, n = len(self.gens), MASK_CHUNK_STEPS
        if self.kind == "torch":
            out = []
            for shape in self.shapes:
                buf = torch.empty((g, n) + shape, device=self.device)
                for i, gen in enumerate(self.gens):
                    torch.rand((n,) + shape, generator=gen, device=self.device, out=buf[i])
                out.append((buf >= self.p).view(torch.uint8))
            return out
        per_step = sum(self.sizes)
        threshold = np.uint32(min(round(self.p * 2**32), 2**32 - 1))
        kept = np.empty((g, n * per_step), dtype=bool)
        for i, gen in enumerate(self.gens):
            bits = gen.bit_generator.random_raw((n * per_step + 1) // 2).view(np.uint32)[: n * per_step]
            np.greater_equal(bits, threshold, out=kept[i])
        kept = torch.from_numpy(kept.view(np.uint8).reshape(g, n, per_step)).to(self.device)
        parts = torch.split(kept, self.sizes, dim=2)
        return [part.reshape((g, n) + shape) for part, shape in zip(parts, self.shapes)]

    def next(self, b):
        """0/1 masks (uint8) for the next step, of a batch of ``b`` datasets."""
        k = self.step % MASK_CHUNK_STEPS
        if k == 0:
            self.buffers = self._draw()
        self.step += 1
        m1, mt, m2 = (buf[:, k] for buf in self.buffers)
        return m1[:, :b], mt, m2[:, :b]


def train_group(
    nets,
    inputs,
    y,
    splits,
    rngs,
    dropout_seeds,
    *,
    n_onehot,
    lr,
    batch_size,
    max_epochs,
    patience,
    eval_batch_size,
    device,
    verbose=False,
    autograd=None,
    dropout_stream=None,
):
    """Train G networks side by side; return per target (net, history, best_epoch, n_epochs).

    Parameters
    ----------
    nets : list of TargetAttentionNet
        Initial networks, one per target (same shapes).
    inputs : list of (codes, dense, mask, target) numpy arrays, one per target
        From :func:`sparse_inputs` (codes not yet offset), the mask and the target row.
    y : list of ndarray
        Labels of each target's datasets.
    splits : list of (train_idx, val_idx)
        Same sizes for every target.
    rngs : list of numpy Generators
        Each target's batch order.
    dropout_seeds : list of int
        Seeds of each target's dropout generator.
    autograd : bool or None
        Compute gradients with autograd instead of the hand-written backward pass (the
        previous implementation: the reference of the tests and the benchmark; the same
        results up to float rounding).  None: the faster on the device, as measured:
        hand-written on a CPU, autograd elsewhere (on a GPU each step costs kernel
        launches, and the hand-written pass launches more).
    dropout_stream : {None, "numpy", "torch"}
        Generator of the dropout masks (see :class:`_DropoutStream`); None: numpy on the
        CPU, torch elsewhere.  With "torch" and ``autograd=True`` this is the previous
        implementation exactly.
    """
    g = len(nets)
    n_train, n_val = len(splits[0][0]), len(splits[0][1])
    if any(len(tr) != n_train or len(va) != n_val for tr, va in splits):
        raise ValueError("targets trained together need splits of the same sizes")
    codes = torch.stack([torch.from_numpy(c) for c, _, _, _ in inputs]).to(device)
    dense = torch.stack([torch.from_numpy(d) for _, d, _, _ in inputs]).to(device)
    mask = torch.stack([torch.from_numpy(m) for _, _, m, _ in inputs]).to(device)
    target = torch.stack([torch.from_numpy(t) for _, _, _, t in inputs]).to(device)
    labels = torch.stack([torch.from_numpy(v.astype(np.float32)) for v in y]).to(device)
    rows = torch.arange(g, device=device).unsqueeze(1)
    val_idx = torch.stack([torch.from_numpy(va) for _, va in splits]).to(device) if n_val else None

    on_cpu = torch.device(device).type == "cpu"
    if autograd is None:
        autograd = not on_cpu
    model = GroupedAttentionNet(nets, n_onehot).to(device)
    # One kernel per operation over all parameters (foreach) rather than one per parameter: the
    # same arithmetic; on the CPU autograd keeps the per-parameter loop of the previous implementation.
    optimiser = torch.optim.Adamax(model.parameters(), lr=lr, foreach=not (autograd and on_cpu))
    h1, h2 = model.b1.shape[-1], model.c1.shape[-1]
    if dropout_stream is None:
        dropout_stream = "numpy" if on_cpu else "torch"
    stream = _DropoutStream(dropout_seeds, batch_size, mask.shape[-1], h1, h2, model.dropout, device, dropout_stream)

    if autograd:

        def group_loss(idx, masks=None):
            logits = model(codes[rows, idx], dense[rows, idx], mask[rows, idx], target, masks)
            return F.binary_cross_entropy_with_logits(logits, labels[rows, idx], reduction="none").mean(1)

        def train_step(idx, masks):
            optimiser.zero_grad()
            loss = group_loss(idx, [m.float().mul_(1.0 / (1.0 - model.dropout)) for m in masks])
            loss.sum().backward()  # each target's weights get the gradient of its own mean loss
            optimiser.step()
            return loss.detach()

    else:
        backprop = _Backprop(model)
        n, x = mask.shape[1:]
        # Rows of every target's datasets in one table each, gathered by index_select;
        # category codes index the flattened (G*K, H1) one-hot weights.
        codes_rows = (codes + (rows * n_onehot).view(g, 1, 1, 1)).reshape(g * n, -1).to(torch.int32)  # half the memory
        segments = [code_segments(c, n_onehot) for c, _, _, _ in inputs]
        segment_rows = torch.from_numpy(np.concatenate([r for r, _ in segments])).to(device)
        segment_starts = torch.from_numpy(np.concatenate([st for _, st in segments])).to(device)
        del segments
        seg_rows_per_dataset = segment_rows.shape[1]
        dense_rows = torch.cat([dense, torch.ones(dense.shape[:-1] + (1,), device=device)], -1).reshape(g * n, -1)
        bias_rows = torch.zeros(mask.shape, device=device).masked_fill_(~mask, float("-inf")).reshape(g * n, x)
        label_rows = labels.reshape(g * n)
        del codes, dense  # the tables above replace them
        first_row = rows * n

        def gather(idx):
            flat = (idx + first_row).reshape(-1)
            b = idx.shape[1]
            return (
                codes_rows.index_select(0, flat).view(g, b * x, -1),
                dense_rows.index_select(0, flat).view(g, b * x, -1),
                bias_rows.index_select(0, flat).view(g, b, x),
                label_rows.index_select(0, flat).view(g, b),
            )

        def group_loss(idx, masks=None):
            c, d, bias, yb = gather(idx)
            logits, _ = backprop.forward(c, d, bias, target, masks)
            return F.binary_cross_entropy_with_logits(logits, yb, reduction="none").mean(1)

        def train_step(idx, masks):
            c, d, bias, yb = gather(idx)
            logits, saved = backprop.forward(c, d, bias, target, masks)
            loss = F.binary_cross_entropy_with_logits(logits, yb, reduction="none").mean(1)
            # Each dataset's records listed by category, offset to the dataset's place in the batch.
            flat = (idx + first_row).reshape(-1)
            datasets = torch.arange(flat.shape[0], dtype=torch.int32, device=device).unsqueeze(1)
            seg_rows = segment_rows.index_select(0, flat).add_(datasets * x).view(-1)
            seg_starts = segment_starts.index_select(0, flat).add_(datasets * seg_rows_per_dataset).view(-1)
            dlogits = (torch.sigmoid(logits) - yb) / idx.shape[1]  # of each target's mean loss
            backprop.backward(saved, dlogits, (seg_rows, seg_starts))
            optimiser.step()
            return loss

    history = [{"train_loss": [], "val_loss": []} for _ in range(g)]
    best_loss = np.full(g, np.inf)
    best_epoch = np.zeros(g, dtype=np.int64)
    stale = np.zeros(g, dtype=np.int64)
    n_epochs = np.zeros(g, dtype=np.int64)
    active = np.ones(g, dtype=bool)
    best_state = None
    for epoch in range(1, max_epochs + 1):
        model.train()
        order = torch.from_numpy(np.stack([r.permutation(tr) for r, (tr, _) in zip(rngs, splits)])).to(device)
        total = torch.zeros(g, device=device)
        with torch.set_grad_enabled(autograd):
            for i in range(0, n_train, batch_size):
                idx = order[:, i : i + batch_size]
                total += train_step(idx, stream.next(idx.shape[1])) * idx.shape[1]
        train_loss = (total / n_train).cpu().numpy()
        if n_val:
            model.eval()
            with torch.no_grad():
                parts = [
                    group_loss(val_idx[:, j : j + eval_batch_size]) * val_idx[:, j : j + eval_batch_size].shape[1]
                    for j in range(0, n_val, eval_batch_size)
                ]
                val_loss = (torch.stack(parts).sum(0) / n_val).cpu().numpy()
        for k in np.flatnonzero(active):
            history[k]["train_loss"].append(float(train_loss[k]))
            n_epochs[k] = epoch
            if n_val:
                history[k]["val_loss"].append(float(val_loss[k]))
        if n_val:
            improved = active & (val_loss < best_loss)
            stale[active & ~improved] += 1
            stale[improved] = 0
            best_loss[improved], best_epoch[improved] = val_loss[improved], epoch
            if improved.any():
                pick = torch.from_numpy(improved).to(device)
                state = model.state_dict()
                if best_state is None:
                    best_state = {k: v.detach().clone() for k, v in state.items()}
                else:
                    for name, value in state.items():
                        best_state[name][pick] = value[pick]
        if verbose and (epoch % 50 == 0 or epoch == 1):
            val = f", val {val_loss[0]:.4f}" if n_val else ""
            print(f"epoch {epoch}: train {train_loss[0]:.4f}{val}")
        if patience is not None:
            active &= stale < patience
            if not active.any():
                break
    if best_state is None:  # no validation set: keep the last epoch
        best_epoch = n_epochs.copy()
    final = model.unstack(best_state)
    return [(final[k], history[k], int(best_epoch[k]), int(n_epochs[k])) for k in range(g)]
