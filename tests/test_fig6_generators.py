"""The mechanisms of the generators DOMIAS Fig. 6 adds: GAN's loss, PATE-GAN's votes and accountant,
ADS-GAN's identifiability penalty, NFlow's density fit (the protocol is tests/test_generators.py's)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from vrlib.data import Schema
from vrlib.errors import VrlibError
from vrlib.generators import get_generator
from vrlib.generators.pategan import epsilon_spent, noisy_votes, vote_moments

torch = pytest.importorskip("torch")

CPU = {"device": "cpu", "threads": 1}


def gaussian_table(n=300, seed=0, with_category=False):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    df = pd.DataFrame({"x": x, "y": 0.8 * x + 0.6 * rng.normal(size=n)})
    if with_category:
        df["c"] = pd.Categorical(rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1]), categories=["a", "b", "c"])
        return df, Schema(categorical=("c",), continuous=("x", "y"))
    return df, Schema(continuous=("x", "y"))


# --------------------------------------------------------------------------- GAN


def test_gan_losses_are_binary_cross_entropy():
    from sklearn.metrics import log_loss

    gan = get_generator("gan")
    logits = {"real": torch.tensor([[2.0], [-1.0], [0.5]]), "fake": torch.tensor([[-3.0], [1.0]])}
    critic = {id(v): v for v in logits.values()}
    d = float(gan._critic_loss(torch, lambda x: critic[id(x)], logits["real"], logits["fake"]))
    p_real, p_fake = (1 / (1 + np.exp(-logits[k].numpy().ravel())) for k in ("real", "fake"))
    # mean BCE over the real rows (label 1) plus mean BCE over the generated rows (label 0)
    expected = log_loss(np.ones(3), p_real, labels=[0, 1]) + log_loss(np.zeros(2), p_fake, labels=[0, 1])
    assert d == pytest.approx(expected, rel=1e-6)
    g = float(gan._generator_loss(torch, lambda x: critic[id(x)], None, logits["fake"]))
    assert g == pytest.approx(-np.mean(np.log(p_fake)), rel=1e-6)  # -log D(G(z)), non-saturating


# --------------------------------------------------------------------------- PATE-GAN


def test_noisy_votes_are_the_argmax_of_laplace_noised_counts():
    n0, n1, lamda = np.array([3, 7, 5, 0]), np.array([7, 3, 5, 10]), 0.5
    labels = noisy_votes(n0, n1, lamda, np.random.default_rng(4))
    noise = np.random.default_rng(4).laplace(0.0, 2.0, size=(2, 4))  # scale 1/λ, n0's noise first
    assert labels.tolist() == [int(n1[i] + noise[1, i] > n0[i] + noise[0, i]) for i in range(4)]
    # no noise to speak of: the plain majority
    assert noisy_votes([2, 8], [8, 2], 1e6, np.random.default_rng(0)).tolist() == [1, 0]


@pytest.mark.parametrize("gap, lamda", [(0, 0.5), (2, 0.5), (4, 0.25), (6, 1.0)])
def test_noisy_vote_frequency_matches_the_laplace_difference(gap, lamda):
    # Y0 - Y1 for two Laplace(b) draws: P(Y0 - Y1 < d) = 1 - exp(-d/b)(1 + d/(2b))/2 for d >= 0
    b, m = 1 / lamda, 200_000
    labels = noisy_votes(np.zeros(m), np.full(m, gap), lamda, np.random.default_rng(gap))
    expected = 1 - 0.5 * math.exp(-gap / b) * (1 + gap / (2 * b))
    assert labels.mean() == pytest.approx(expected, abs=4 * math.sqrt(expected * (1 - expected) / m) + 1e-3)


def test_vote_moments_by_hand():
    orders = [1, 2]
    # λ = 1, votes 1 against 9: gap 8, q = (2 + 8) / (4 e^8), below (e^2 - 1)/(e^4 - 1) = 1/(e^2 + 1)
    q = 10 / (4 * math.exp(8))
    assert q < 1 / (math.e**2 + 1)
    ratio = (1 - q) / (1 - math.e**2 * q)
    dependent = [math.log((1 - q) * ratio**order + q * math.exp(2 * order)) for order in orders]
    expected = [min(2 * order * (order + 1), dep) for order, dep in zip(orders, dependent)]
    np.testing.assert_allclose(vote_moments([1], [9], 1.0, orders), expected, rtol=1e-9)
    # a tie: q = 1/2 is above the bound's range, only 2λ²l(l+1) applies; votes add up
    np.testing.assert_allclose(vote_moments([5, 5], [5, 5], 1.0, orders), [2 * 4, 2 * 12])
    both = vote_moments([1, 5], [9, 5], 1.0, orders)
    np.testing.assert_allclose(both, np.array(expected) + [4, 12])


def test_epsilon_spent_by_hand():
    # min over l of (α(l) + log 1/δ) / l, δ = e^-3: (4 + 3) / 1 = 7 against (12 + 3) / 2 = 7.5
    assert epsilon_spent([4, 12], [1, 2], math.exp(-3)) == pytest.approx(7.0)
    assert epsilon_spent([4, 8], [1, 2], math.exp(-3)) == pytest.approx(5.5)


def test_pategan_stops_within_its_budget():
    df, schema = gaussian_table(200)
    kw = dict(n_teachers=4, epochs=5, batch_size=40, z_dim=8, **CPU)
    tight = get_generator("pategan", epsilon=0.5, lamda=0.05, **kw).fit(df, schema, seed=0)
    assert tight.stopped_by_budget_ and tight.epsilon_ <= 0.5
    assert tight.steps_ < 5 * (200 // 40)
    loose = get_generator("pategan", epsilon=1e6, lamda=0.05, **kw).fit(df, schema, seed=0)
    assert not loose.stopped_by_budget_ and loose.steps_ == 5 * (200 // 40)
    assert loose.n_votes_ == loose.steps_ * 40 and loose.epsilon_ > tight.epsilon_


def test_pategan_rejects_bad_privacy_parameters():
    for bad in ({"epsilon": 0}, {"delta": 1.0}, {"delta": 0}, {"lamda": -1}, {"n_teachers": 0}):
        with pytest.raises(VrlibError):
            get_generator("pategan", **bad)
    df, schema = gaussian_table(5)
    with pytest.raises(VrlibError, match="one per teacher"):
        get_generator("pategan", n_teachers=10, **CPU).fit(df, schema)


# --------------------------------------------------------------------------- ADS-GAN


def test_adsgan_feeds_every_training_record_once_per_pass():
    df, schema = gaussian_table(30)
    gen = get_generator("adsgan", epochs=1, batch_size=10, z_dim=4, **CPU).fit(df, schema, seed=0)
    rows = gen.sources(75, seed=3)
    assert sorted(rows[:30]) == list(range(30)) and sorted(rows[30:60]) == list(range(30))
    assert len(rows) == 75 and np.array_equal(rows, gen.sources(75, seed=3))


def test_adsgan_penalty_by_hand_and_its_gradient_points_away_from_the_source():
    real = torch.tensor([[0.0, 0.0], [1.0, -1.0]])
    fake = torch.tensor([[0.3, -0.4], [1.0, -0.5]], requires_grad=True)
    gen = get_generator("adsgan", lamda=2.0)
    flat = lambda x: torch.zeros(len(x), 1)  # a critic with nothing to say: only the penalty is left
    loss = gen._generator_loss(torch, flat, real, fake)
    rms = math.sqrt((0.3**2 + 0.4**2 + 0.0 + 0.5**2) / 4)
    assert float(loss.detach()) == pytest.approx(-2.0 * rms)
    loss.backward()
    moved = fake.detach() - 0.1 * fake.grad  # one gradient step of the generator's output
    assert ((moved - real) ** 2).sum(1).gt(((fake.detach() - real) ** 2).sum(1)).all()


def test_adsgan_larger_lambda_moves_samples_further_from_their_records():
    df, schema = gaussian_table(200, seed=2)
    distances = {}
    for lamda in (0.5, 10.0):
        gen = get_generator("adsgan", lamda=lamda, epochs=30, batch_size=50, z_dim=8, lr=1e-3, **CPU)
        gen.fit(df, schema, seed=0)
        out = gen.sample(400, seed=5)
        source = df.iloc[gen.sources(400, seed=5)].to_numpy()
        distances[lamda] = float(np.sqrt(((out.to_numpy() - source) ** 2).sum(axis=1)).mean())
    assert distances[10.0] > 1.1 * distances[0.5], distances


def test_adsgan_rejects_negative_lambda():
    with pytest.raises(VrlibError, match="lamda"):
        get_generator("adsgan", lamda=-0.1)


# --------------------------------------------------------------------------- NFlow


def test_nflow_fits_a_correlated_table():
    df, schema = gaussian_table(600, seed=3, with_category=True)
    gen = get_generator("nflow", epochs=40, batch_size=100, hidden=32, **CPU).fit(df, schema, seed=0)
    assert gen.losses_.iloc[-1] < gen.losses_.iloc[0]  # the likelihood improved
    out = gen.sample(3000, seed=1)
    assert abs(out.x.mean() - df.x.mean()) < 0.2 and 0.7 < out.x.std() / df.x.std() < 1.3
    assert np.corrcoef(out.x, out.y)[0, 1] == pytest.approx(np.corrcoef(df.x, df.y)[0, 1], abs=0.2)
    share = out.c.value_counts(normalize=True)
    assert share["a"] == pytest.approx(0.6, abs=0.1) and share["c"] < 0.25
