"""The step-cost part of bench_ensembles times the stack under torch.compile through an autograd
form of the stacked masked layer: that form must be the single flow's layer, member by member."""

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_ensembles  # noqa: E402

from vrlib.density import bnaf  # noqa: E402


@pytest.mark.parametrize("d,a,b", [(3, 2, 4), (4, 1, 3), (2, 5, 1)])
def test_plain_stacked_masked_layer_is_each_members_single_layer(d, a, b):
    gen = torch.Generator().manual_seed(d * 100 + a * 10 + b)
    layers = [bnaf._MaskedWeight(d, a, b, gen) for _ in range(3)]
    for layer in layers:  # weights above the diagonal must not count, whatever they hold
        with torch.no_grad():
            layer.weight.add_(torch.rand(layer.weight.shape, generator=gen) * (layer.below == 0))
    W = torch.stack([m.weight.detach() for m in layers]).requires_grad_(True)
    s = torch.stack([m.log_scale.detach() for m in layers]).requires_grad_(True)
    bias = torch.stack([m.bias.detach() for m in layers]).requires_grad_(True)
    x = torch.randn(3, 7, d * a, generator=gen)
    r = torch.randn(3, 7, d * b, generator=gen)
    y, log_blocks = bench_ensembles._plain_masked(x, W, s, bias, layers[0].below, (d, b, a))
    (y * r).sum().backward()
    for k, layer in enumerate(layers):
        state = (torch.ones(7, d, a), torch.zeros(7, d))
        y_k, _ = layer(x[k], state)  # the single flow's layer: the independent computation
        (y_k * r[k]).sum().backward()
        torch.testing.assert_close(y[k], y_k, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(W.grad[k], layer.weight.grad, rtol=1e-4, atol=1e-6)
        torch.testing.assert_close(s.grad[k], layer.log_scale.grad, rtol=1e-4, atol=1e-6)
        torch.testing.assert_close(bias.grad[k], layer.bias.grad, rtol=1e-5, atol=1e-6)
        # the log of the normalised diagonal blocks, by hand: exp(W_ii) times the row gain
        w = layer.weight.detach() * layer.below
        for i in range(d):
            w[i * b : (i + 1) * b, i * a : (i + 1) * a] = torch.exp(
                layer.weight.detach()[i * b : (i + 1) * b, i * a : (i + 1) * a]
            )
        gain = torch.exp(layer.log_scale.detach()) / torch.linalg.vector_norm(w, dim=1, keepdim=True)
        for i in range(d):
            block = (w * gain)[i * b : (i + 1) * b, i * a : (i + 1) * a]
            torch.testing.assert_close(log_blocks[k, i].detach(), torch.log(block), rtol=1e-5, atol=1e-5)
