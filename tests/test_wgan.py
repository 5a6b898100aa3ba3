"""The TableGAN-MCA WGAN-GP (eqs. 5-6): architecture, learning a simple table, bad parameters."""

import numpy as np
import pandas as pd
import pytest

from vrlib.data import Schema
from vrlib.errors import VrlibError
from vrlib.generators.wgan import WGANGP, _build


def test_architecture_follows_eqs_5_and_6():
    torch = pytest.importorskip("torch")
    gen, critic = _build(torch, z_dim=16, widths=[3, 2], n_cont=1)
    assert gen.fc1[0].in_features == 16 and gen.fc1[0].out_features == 256
    assert gen.fc2[0].in_features == 16 + 256
    assert [h.in_features for h in gen.cat_heads] == [16 + 512] * 2 and gen.cont_head.in_features == 16 + 512
    out = gen.eval()(torch.randn(5, 16), tau=0.2)
    assert out.shape == (5, 3 + 2 + 1)
    assert torch.allclose(out[:, :3].sum(1), torch.ones(5), atol=1e-5)  # a softmax per categorical column
    assert (out[:, -1].abs() <= 1).all()  # tanh head
    assert critic.net[0].in_features == 6 and isinstance(critic.net[2], torch.nn.Dropout) and critic.net[2].p == 0.5


@pytest.mark.slow
def test_learns_a_skewed_marginal_and_a_range():
    rng = np.random.default_rng(0)
    n = 1000
    df = pd.DataFrame({"c": pd.Categorical(rng.choice(["a", "b", "c"], n, p=[0.7, 0.2, 0.1])),
                       "x": rng.uniform(20, 60, n)})  # fmt: skip
    schema = Schema(["c"], ["x"])
    gen = WGANGP(epochs=40, batch_size=100, z_dim=16, device="cpu", threads=1).fit(df, schema, seed=0)
    out = gen.sample(2000, seed=1)
    share = out["c"].value_counts(normalize=True)
    assert share["a"] > 0.5 and share["a"] > share["c"]
    assert out["x"].between(20, 60).all() and 30 < out["x"].mean() < 50
    assert len(gen.losses_) == 40 and np.isfinite(gen.losses_.to_numpy()).all()


@pytest.mark.parametrize("bad", [{"epochs": 0}, {"n_critic": 1.5}, {"tau": 0}, {"lr": -1.0}, {"device": "tpu"}])
def test_bad_parameters(bad):
    with pytest.raises(VrlibError):
        WGANGP(**bad)
