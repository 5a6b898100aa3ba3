"""The TableGAN-MCA WGAN-GP (eqs. 5-6): architecture, learning a simple table, bad parameters."""

import numpy as np
import pandas as pd
import pytest

from vrlib.data import Schema
from vrlib.errors import VrlibError
from vrlib.generators.wgan import WGANGP, WGANWC, build_networks


def test_architecture_follows_eqs_5_and_6():
    torch = pytest.importorskip("torch")
    gen, critic = build_networks(torch, z_dim=16, widths=[3, 2], n_cont=1)
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
    df = pd.DataFrame(
        {"c": pd.Categorical(rng.choice(["a", "b", "c"], n, p=[0.7, 0.2, 0.1])), "x": rng.uniform(20, 60, n)}
    )
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


# --------------------------------------------------------------------------- WGAN-WC, and WGAN-GP unchanged


def _table(n=200, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"c": pd.Categorical(rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1])),
                       "d": pd.Categorical(rng.choice(["x", "y"], n)), "x": rng.uniform(0, 9, n)})  # fmt: skip
    return df, Schema(["c", "d"], ["x"])


def _reference_fit(torch, df, seed, epochs, batch, z_dim, mode, lr, gp_weight=10.0, clip=0.01, weight_decay=0.0):
    """The training loop written out in full, independently of vrlib's: WGAN-GP as it was before WGAN-WC existed
    (``mode="gp"``), or WGAN with weight clipping (``mode="wc"``). Returns the generator's state and the losses."""
    widths = [3, 2]
    onehot = [np.eye(w, dtype=np.float32)[df[c].cat.codes.to_numpy()] for c, w in zip(("c", "d"), widths)]
    x = df["x"].to_numpy(np.float64)
    lo, span = x.min(), np.ptp(x)
    data = torch.as_tensor(np.hstack([*onehot, (2 * (x - lo) / span - 1).astype(np.float32)[:, None]]))
    rng = np.random.default_rng(seed)
    n = len(df)
    losses = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread, as the fits compared with it: sums over threads round differently
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(rng.integers(2**63 - 1)))
        gen, critic = build_networks(torch, z_dim, widths, 1)
        opt_g = torch.optim.Adam(gen.parameters(), lr=lr, betas=(0.5, 0.9), weight_decay=weight_decay)
        opt_d = torch.optim.Adam(critic.parameters(), lr=lr, betas=(0.5, 0.9))
        for _ in range(epochs):
            order = torch.randperm(n)
            for s in range(n // batch):
                real = data[order[s * batch : (s + 1) * batch]]
                fake = gen(torch.randn(len(real), z_dim), 0.2).detach()
                if mode == "gp":
                    alpha = torch.rand(len(real), 1)
                    mix = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
                    grad = torch.autograd.grad(critic(mix).sum(), mix, create_graph=True)[0]
                    penalty = ((grad.norm(2, dim=1) - 1) ** 2).mean()
                    loss_d = critic(fake).mean() - critic(real).mean() + gp_weight * penalty
                else:
                    loss_d = critic(fake).mean() - critic(real).mean()
                opt_d.zero_grad()
                loss_d.backward()
                opt_d.step()
                if mode == "wc":
                    with torch.no_grad():
                        for p in critic.parameters():
                            p.clamp_(-clip, clip)
                loss_g = -critic(gen(torch.randn(len(real), z_dim), 0.2)).mean()
                opt_g.zero_grad()
                loss_g.backward()
                opt_g.step()
            losses.append((float(loss_d.detach()), float(loss_g.detach())))
    torch.set_num_threads(threads)
    return gen.state_dict(), np.array(losses), critic


def _same_state(torch, a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_wgan_gp_is_the_reference_loop_bit_for_bit():
    """WGAN-WC shares WGAN-GP's loop through hooks; WGAN-GP's results must not move."""
    torch = pytest.importorskip("torch")
    df, schema = _table()
    gen = WGANGP(epochs=2, batch_size=40, z_dim=8, device="cpu", threads=1).fit(df, schema, seed=3)
    state, losses, _ = _reference_fit(torch, df, 3, epochs=2, batch=40, z_dim=8, mode="gp", lr=2e-4)
    assert _same_state(torch, gen.generator_.state_dict(), state)
    assert np.array_equal(gen.losses_.to_numpy(), losses)


def test_wgan_wc_is_the_reference_loop_bit_for_bit():
    torch = pytest.importorskip("torch")
    df, schema = _table()
    gen = WGANWC(epochs=2, batch_size=40, z_dim=8, device="cpu", threads=1).fit(df, schema, seed=3)
    state, losses, critic = _reference_fit(
        torch, df, 3, epochs=2, batch=40, z_dim=8, mode="wc", lr=1e-4, clip=0.01, weight_decay=1e-6
    )
    assert _same_state(torch, gen.generator_.state_dict(), state)
    assert np.array_equal(gen.losses_.to_numpy(), losses)
    # the reference critic's weights sit in [-c, c], and many at the bounds: the clipping is active
    w = torch.cat([p.detach().flatten() for p in critic.parameters()])
    assert w.abs().max() <= 0.01 and (w.abs() == 0.01).float().mean() > 0.1
    # and WGAN-WC differs from WGAN-GP with the same seed
    gp = WGANGP(epochs=2, batch_size=40, z_dim=8, lr=1e-4, device="cpu", threads=1).fit(df, schema, seed=3)
    assert not _same_state(torch, gp.generator_.state_dict(), state)


def test_wgan_wc_clips_the_critic_after_every_update():
    pytest.importorskip("torch")
    seen = []

    class Watched(WGANWC):
        def _after_critic_step(self, torch, critic):
            before = max(float(p.detach().abs().max()) for p in critic.parameters())
            super()._after_critic_step(torch, critic)
            seen.append((before, max(float(p.detach().abs().max()) for p in critic.parameters())))

    df, schema = _table()
    Watched(epochs=2, batch_size=50, z_dim=8, clip=0.02, device="cpu", threads=1).fit(df, schema, seed=0)
    assert len(seen) == 2 * (200 // 50)  # one per critic update
    assert all(after <= 0.02 for _, after in seen)
    assert max(before for before, _ in seen) > 0.02  # the initial weights exceed c: the clip had work to do
    out = WGANWC(epochs=1, batch_size=50, z_dim=8, device="cpu", threads=1).fit(df, schema, seed=0).sample(30, seed=1)
    assert list(out.columns) == list(df.columns) and out["x"].between(0, 9).all()


@pytest.mark.parametrize(
    "bad", [{"clip": 0}, {"clip": float("inf")}, {"weight_decay": -1e-3}, {"lr": 0}, {"epochs": 0}]
)
def test_wgan_wc_bad_parameters(bad):
    with pytest.raises(VrlibError):
        WGANWC(**bad)


def test_wgan_wc_defaults_follow_the_authors_code():
    g = WGANWC()
    assert (g.clip, g.lr, g.weight_decay, g.n_critic, g.tau, g.epochs, g.batch_size) == (
        0.01,
        1e-4,
        1e-6,
        1,
        0.2,
        300,
        500,
    )
    assert not hasattr(g, "gp_weight")


# --------------------------------------------------------------------------- the GAN family's shared pieces


def _family():
    from vrlib.generators.adsgan import ADSGAN
    from vrlib.generators.gan import GAN
    from vrlib.generators.pategan import PATEGAN

    return [WGANGP, WGANWC, GAN, ADSGAN, PATEGAN]


def test_encode_and_decode_blocks_by_hand():
    from vrlib.generators.wgan import decode_blocks, encode_blocks

    df = pd.DataFrame({"c": pd.Categorical(["b", "a", "c"], categories=["a", "b", "c"]),
                       "d": pd.Categorical(["y", "y", "x"], categories=["x", "y"])})  # fmt: skip
    cont = np.array([[0.25, -1.0], [0.5, 0.0], [1.0, 3.0]])
    enc = encode_blocks(df, ["c", "d"], [3, 2], cont)
    expected = np.array(
        [[0, 1, 0, 0, 1, 0.25, -1.0], [1, 0, 0, 0, 1, 0.5, 0.0], [0, 0, 1, 1, 0, 1.0, 3.0]], dtype=np.float32
    )
    assert enc.dtype == np.float32 and np.array_equal(enc, expected)
    codes, rest = decode_blocks(enc, ["c", "d"], [3, 2])
    assert list(codes) == ["c", "d"] and codes["c"].tolist() == [1, 0, 2] and codes["d"].tolist() == [1, 1, 0]
    assert np.array_equal(rest, cont.astype(np.float32))
    # no continuous columns: the categorical blocks alone
    assert encode_blocks(df, ["d"], [2], np.zeros((3, 0))).tolist() == [[0, 1], [0, 1], [1, 0]]


@pytest.mark.parametrize("cls", _family(), ids=lambda c: c.__name__)
def test_the_gan_family_decodes_generator_output_alike(cls):
    """Every GAN of the family maps a hand-made generator output to the same, hand-computed table."""
    pytest.importorskip("torch")
    n = 20
    df = pd.DataFrame({"c": pd.Categorical(np.resize(["a", "b", "c"], n)), "d": pd.Categorical(np.resize(["x", "y"], n)),
                       "x": np.linspace(2.0, 10.0, n)})  # fmt: skip
    gen = cls(epochs=1, batch_size=10, z_dim=4, device="cpu", threads=1).fit(df, Schema(["c", "d"], ["x"]), seed=0)
    out = np.array(
        [[0, 0, 1, 1, 0, -1.0], [1, 0, 0, 0, 1, 0.5], [0, 1, 0, 1, 0, 1.7], [0.1, 0.3, 0.2, 0.4, 0.6, -2.0]],
        dtype=np.float32,
    )
    got = gen._assemble(gen._decode(out), len(out))
    # the tanh column maps [-1, 1] back to [2, 10] and is clipped there
    expected = pd.DataFrame({"c": pd.Categorical(["c", "a", "b", "b"], categories=["a", "b", "c"]),
                             "d": pd.Categorical(["x", "y", "x", "y"], categories=["x", "y"]),
                             "x": [2.0, 8.0, 10.0, 2.0]})  # fmt: skip
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    # and the encoding of the training table decodes back to it (continuous values to float32 precision)
    back = gen._assemble(gen._decode(gen._encode(df)), n)
    pd.testing.assert_frame_equal(back[["c", "d"]], df[["c", "d"]])
    np.testing.assert_allclose(back["x"], df["x"], rtol=1e-6)


@pytest.mark.parametrize("cls", _family(), ids=lambda c: c.__name__)
def test_the_gan_family_samples_a_constant_column_as_its_value(cls):
    """A continuous column with one value comes back as that value, not spread over [value, value + 1]."""
    pytest.importorskip("torch")
    n = 20
    df = pd.DataFrame(
        {"c": pd.Categorical(np.resize(["a", "b"], n)), "k": np.full(n, 2.5), "x": np.linspace(0.0, 1.0, n)}
    )
    gen = cls(epochs=1, batch_size=10, z_dim=4, device="cpu", threads=1).fit(df, Schema(["c"], ["k", "x"]), seed=0)
    out = np.array([[1, 0, -0.3, 0.0], [0, 1, 0.9, 1.0]], dtype=np.float32)  # the constant's head far from -1
    got = gen._assemble(gen._decode(out), len(out))
    assert got["k"].tolist() == [2.5, 2.5] and got["x"].tolist() == [0.5, 1.0]
    assert (gen.sample(50, seed=1)["k"] == 2.5).all()


def test_subclass_constructors_pass_every_parameter_on():
    """ADS-GAN and PATE-GAN hand the shared parameters to their base's constructor: each must arrive as given."""
    from vrlib.generators.adsgan import ADSGAN
    from vrlib.generators.pategan import PATEGAN

    shared = dict(epochs=3, batch_size=7, z_dim=5, n_critic=2, lr=3e-3, tau=0.7, device="cpu", threads=2, progress=True)
    cases = [
        (ADSGAN, dict(lamda=0.9, gp_weight=4.0, **shared)),
        (
            PATEGAN,
            dict(
                epsilon=2.5,
                delta=1e-3,
                n_teachers=3,
                lamda=0.02,
                max_order=9,
                teacher_steps=4,
                teacher_lr=5e-3,
                **shared,
            ),
        ),  # fmt: skip
    ]
    for cls, params in cases:
        assert cls(**params).get_params() == params
        assert cls().get_params() != params


def test_pategan_partitions_are_disjoint_and_cover_the_training_rows():
    pytest.importorskip("torch")
    from vrlib.generators.pategan import PATEGAN

    df, schema = _table(n=50)
    gen = PATEGAN(n_teachers=4, epochs=1, batch_size=10, z_dim=4, device="cpu", threads=1).fit(df, schema, seed=1)
    parts = gen.partitions_
    assert len(parts) == 4 and sorted(len(p) for p in parts) == [12, 12, 13, 13]
    assert sorted(np.concatenate(parts).tolist()) == list(range(50))
    assert not hasattr(gen, "_votes_rng")  # the fit's vote noise does not outlive it
