"""Density estimators: KDE equals scipy's, both integrate to one, flows are seeded and exact in their log-det."""

import shutil
import subprocess
import sys

import numpy as np
import pytest
import scipy.stats as st

from vrlib.density import BNAF, GaussianKDE, get_density
from vrlib.errors import VrlibError

# a tiny flow that trains in well under a second
TINY = dict(n_flows=2, n_layers=2, hidden_per_dim=8, epochs=3, batch_size=64)


@pytest.fixture(scope="module")
def rng():
    return np.random.default_rng(0)


def _grid_integral(log_density, d, lo=-8.0, hi=8.0, n=401):
    axes = [np.linspace(lo, hi, n)] * d
    step = (hi - lo) / (n - 1)
    points = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, d)
    return np.exp(log_density(points)).sum() * step**d


# --------------------------------------------------------------------------- KDE


@pytest.mark.parametrize("d", [1, 2, 5])
@pytest.mark.parametrize("bw", ["scott", "silverman", 0.3])
def test_kde_matches_scipy(d, bw):
    rng = np.random.default_rng(d)
    X = rng.normal(size=(300, d)) @ rng.normal(size=(d, d)) + 1.0  # correlated, shifted
    Q = rng.normal(size=(57, d)) * 2
    ours = GaussianKDE(bw_method=bw, block_size=1000).fit(X).log_density(Q)  # several blocks
    ref = st.gaussian_kde(X.T, bw_method=bw).logpdf(Q.T)
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-10)


def test_kde_matches_scipy_far_from_the_data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2))
    Q = np.array([[30.0, -30.0], [100.0, 0.0]])  # the density underflows, its log must not
    ours = GaussianKDE().fit(X).log_density(Q)
    assert np.isfinite(ours).all()
    np.testing.assert_allclose(ours, st.gaussian_kde(X.T).logpdf(Q.T), rtol=1e-9)


@pytest.mark.parametrize("d", [1, 2])
def test_kde_integrates_to_one(rng, d):
    X = rng.normal(size=(100, d))
    kde = GaussianKDE().fit(X)
    assert _grid_integral(kde.log_density, d, n=2001 if d == 1 else 301) == pytest.approx(1.0, abs=2e-3)


def test_kde_attributes_and_1d_input(rng):
    x = rng.normal(size=50)
    kde = GaussianKDE().fit(x)
    assert kde.n_ == 50 and kde.d_ == 1
    assert kde.factor_ == pytest.approx(50 ** (-1 / 5))
    np.testing.assert_allclose(kde.covariance_, [[np.var(x, ddof=1) * kde.factor_**2]])
    assert kde.log_density(np.array([0.0, 1.0])).shape == (2,)


def test_kde_constant_column_warns_and_stays_finite(rng):
    X = np.c_[rng.normal(size=100), np.ones(100)]
    with pytest.warns(UserWarning, match="singular"):
        kde = GaussianKDE().fit(X)
    assert np.isfinite(kde.log_density(X[:5])).all()


def test_kde_bad_inputs(rng):
    with pytest.raises(VrlibError, match="NaN"):
        GaussianKDE().fit(np.array([[0.0, 1.0], [np.nan, 2.0], [1.0, 1.0]]))
    with pytest.raises(VrlibError, match="at least 2"):
        GaussianKDE().fit(np.zeros((1, 3)))
    with pytest.raises(VrlibError, match="not fitted"):
        GaussianKDE().log_density(np.zeros((2, 2)))
    kde = GaussianKDE().fit(rng.normal(size=(20, 2)))
    with pytest.raises(VrlibError, match="3 column"):
        kde.log_density(np.zeros((2, 3)))
    with pytest.raises(VrlibError, match="bw_method"):
        GaussianKDE(bw_method="wide").fit(rng.normal(size=(20, 2)))
    with pytest.raises(VrlibError, match="non-numeric"):
        import pandas as pd

        GaussianKDE().fit(pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["x", "y", "z"]}))


# --------------------------------------------------------------------------- BNAF


@pytest.mark.parametrize("d", [1, 2])
def test_flow_integrates_to_one(d):
    rng = np.random.default_rng(d)
    X = np.r_[rng.normal(-2, 0.5, size=(150, d)), rng.normal(1.5, 1.0, size=(150, d))]
    flow = BNAF(**TINY, seed=d).fit(X)
    # a gated residual makes the tails linear, so they are wide: integrate far out
    total = _grid_integral(flow.log_density, d, lo=-60, hi=60, n=12001 if d == 1 else 801)
    assert total == pytest.approx(1.0, abs=0.01)


def test_flow_log_det_matches_autograd_jacobian():
    """The carried log-derivatives equal log|det J| of the transform, by autograd, in 3-D."""
    import torch

    from vrlib.density.bnaf import _build_bnaf

    gen = torch.Generator().manual_seed(0)
    model = _build_bnaf(3, n_flows=3, n_layers=2, hidden_per_dim=5, generator=gen).double()
    x = torch.randn(4, 3, generator=gen, dtype=torch.float64) * 2
    z, logdet = model.transform(x)
    for i in range(len(x)):
        jac = torch.autograd.functional.jacobian(lambda v: model.transform(v[None])[0][0], x[i])
        assert torch.allclose(torch.linalg.slogdet(jac)[1], logdet[i], atol=1e-8)
        # autoregressive within each flow, so triangular up to the order reversals: det > 0
        assert torch.linalg.slogdet(jac)[0] > 0
    expected = -0.5 * (z**2).sum(1) - 1.5 * np.log(2 * np.pi) + logdet
    assert torch.allclose(model(x), expected)


def test_flow_layers_match_the_textbook_weight_normalised_map():
    """Each masked layer is x ↦ x Ŵᵀ + b with Ŵ = exp(s) W̃ / |W̃_row| (De Cao et al., eq. 8-9),
    W̃ = exp(W) on the diagonal blocks, W below them, 0 above; the blocks above get no gradient."""
    import torch

    from vrlib.density.bnaf import _build_bnaf

    d, h = 3, 4
    gen = torch.Generator().manual_seed(1)
    model = _build_bnaf(d, n_flows=1, n_layers=2, hidden_per_dim=h, generator=gen).double()
    layers = [m for m in model.blocks[0].layers if hasattr(m, "weight")]
    x = torch.randn(5, d, dtype=torch.float64, generator=gen)
    state = (torch.ones(5, d, 1, dtype=torch.float64), torch.zeros(5, d, dtype=torch.float64))
    for layer in layers:
        a, b = layer.a, layer.b
        W = layer.weight.detach()
        tilde = torch.zeros_like(W)
        for i in range(d):  # row block i: blocks j < i as they are, block i exponentiated
            rows = slice(i * b, (i + 1) * b)
            tilde[rows, : i * a] = W[rows, : i * a]
            tilde[rows, i * a : (i + 1) * a] = torch.exp(W[rows, i * a : (i + 1) * a])
        hat = torch.exp(layer.log_scale.detach()) * tilde / tilde.norm(dim=1, keepdim=True)
        y, state = layer(x, state)
        torch.testing.assert_close(y, x @ hat.T + layer.bias.detach())
        y.sum().backward()
        above = torch.ones(d * b, d * a, dtype=torch.bool)
        for i in range(d):
            above[i * b : (i + 1) * b, : (i + 1) * a] = False
        assert (layer.weight.grad[above] == 0).all() and (layer.weight.grad[~above] != 0).any()
        x, state = torch.tanh(y.detach()), tuple(s.detach() for s in state)


def test_flow_learns_and_is_seeded():
    rng = np.random.default_rng(3)
    X = np.r_[rng.normal(-3, 0.3, size=(300, 1)), rng.normal(3, 0.3, size=(300, 1))]
    fast = {**TINY, "epochs": 40, "batch_size": 300, "lr": 0.05}
    a = BNAF(**fast, seed=7).fit(X)
    b = BNAF(**fast, seed=7).fit(X)
    Q = np.array([[-3.0], [0.0], [3.0]])
    np.testing.assert_array_equal(a.log_density(Q), b.log_density(Q))
    ld = a.log_density(Q)
    assert ld[0] > ld[1] + 1 and ld[2] > ld[1] + 1  # two modes, a valley between them
    assert 1 <= a.best_epoch_ <= 40 and len(a.history_) >= a.best_epoch_


def test_flow_scale_invariance_of_the_correction():
    """Fitting on data times 10 shifts the log density by -d log 10 (standardisation is undone)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 2))
    a = BNAF(**TINY, seed=1).fit(X).log_density(X[:10])
    b = BNAF(**TINY, seed=1).fit(10 * X).log_density(10 * X[:10])
    np.testing.assert_allclose(b, a - 2 * np.log(10), rtol=1e-5, atol=1e-5)


def test_flow_compiles_only_where_it_pays(rng):
    """``"auto"`` compiles from 2,000 training steps: 1,000 rows keep 900 for training (10 % held
    out), 18 batches of 50, so 111 epochs are 1,998 steps (eager) and 112 are 2,016 (compiled)."""
    assert not BNAF(epochs=111, batch_size=50).compiles(1000)
    assert BNAF(epochs=112, batch_size=50).compiles(1000)
    assert BNAF(epochs=112, batch_size=50, val_fraction=0.2).compiles(1000) is False  # 16 batches: 1,792
    assert BNAF(epochs=1, compile=True).compiles(10) and not BNAF(epochs=10**6, compile=False).compiles(10**6)
    X = rng.normal(size=(200, 2))
    assert not BNAF(**TINY, seed=0).fit(X).compiled_  # a small fit stays eager
    with pytest.raises(VrlibError, match="compile"):
        BNAF(compile="yes").fit(X)


def test_flow_falls_back_to_eager_when_compiling_fails(monkeypatch, rng):
    """A compiler failure costs a warning, not the fit: the result is the eager fit's, bit for bit."""
    from vrlib.density import bnaf

    def broken(model, batch):
        raise RuntimeError("no C++ compiler")

    monkeypatch.setattr(bnaf, "_compiled_loss", lambda: broken)
    X = rng.normal(size=(200, 2))
    with pytest.warns(UserWarning, match="no C\\+\\+ compiler"):
        fallen = BNAF(**TINY, seed=2, compile=True).fit(X)
    eager = BNAF(**TINY, seed=2, compile=False).fit(X)
    assert not fallen.compiled_
    np.testing.assert_array_equal(fallen.log_density(X[:20]), eager.log_density(X[:20]))


@pytest.mark.skipif(
    not any(shutil.which(c) for c in ("c++", "g++", "clang++")), reason="torch.compile needs a C++ compiler"
)
def test_compiled_flow_computes_the_eager_loss_and_trains_alike(rng):
    """The compiled loss equals the eager one on the same weights (float32 rounding), and one
    epoch trained compiled lands where the eager epoch does."""
    import torch

    from vrlib.density import bnaf

    model = bnaf._build_bnaf(3, n_flows=2, n_layers=2, hidden_per_dim=4, generator=torch.Generator().manual_seed(5))
    batch = torch.randn(54, 3, generator=torch.Generator().manual_seed(6))  # the fit's batch: one shape, one compile
    eager = bnaf._negative_mean_log_density(model, batch)
    compiled = bnaf._compiled_loss()(model, batch)
    torch.testing.assert_close(compiled, eager, rtol=1e-5, atol=1e-5)
    g_eager = torch.autograd.grad(eager, model.parameters())
    g_compiled = torch.autograd.grad(compiled, model.parameters())
    for a, b in zip(g_compiled, g_eager):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)

    X = rng.normal(size=(300, 3))
    small = dict(n_flows=2, n_layers=2, hidden_per_dim=4, epochs=1, batch_size=54, seed=3)  # 270 training rows
    a = BNAF(**small, compile=True).fit(X)
    b = BNAF(**small, compile=False).fit(X)
    assert a.compiled_ and not b.compiled_
    np.testing.assert_allclose(a.log_density(X[:20]), b.log_density(X[:20]), rtol=1e-3, atol=1e-3)


def test_flow_bad_inputs():
    with pytest.raises(VrlibError, match="epochs"):
        BNAF(epochs=0).fit(np.zeros((10, 2)))
    with pytest.raises(VrlibError, match="infinite|NaN"):
        BNAF(**TINY).fit(np.array([[0.0], [np.inf], [1.0]]))
    with pytest.raises(VrlibError, match="not fitted"):
        BNAF().log_density(np.zeros((2, 2)))


def test_get_density():
    assert isinstance(get_density("kde"), GaussianKDE)
    assert isinstance(get_density("flow", epochs=2), BNAF)
    with pytest.raises(VrlibError, match="unknown density"):
        get_density("histogram")
    with pytest.raises(VrlibError, match="bad parameter"):
        get_density("kde", epochs=3)


def test_the_kde_does_not_import_torch():
    """Only the flow needs PyTorch: the KDE and get_density("kde") work in a process that never imports it."""
    code = (
        "import sys; from vrlib.density import GaussianKDE, get_density; import numpy as np; "
        "get_density('kde').fit(np.arange(10.0)[:, None]).log_density(np.zeros((1, 1))); "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
    from vrlib.density.bnaf import BNAF as flow

    assert BNAF is flow and type(get_density("flow")) is flow
