"""Tests of the synthetic data generators: the protocol, and values against independent computations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from vrlib.data import Schema, quantile_domain
from vrlib.errors import VrlibError
from vrlib.generators import REGISTRY, get_generator
from vrlib.generators import bayesnet
from vrlib.generators.bayesnet import (
    BayNet,
    PrivBayes,
    exponential_mechanism_probabilities,
    laplace_scale,
    mi_sensitivity,
    noisy_counts,
)
from vrlib.generators.neural import CTGAN, TVAE
from vrlib.generators.noise import AdditiveNoise
from vrlib.generators.synthpop import Synthpop
from vrlib.generators.adsgan import ADSGAN
from vrlib.generators.gan import GAN
from vrlib.generators.nflow import NFlow
from vrlib.generators.pategan import PATEGAN
from vrlib.generators.wgan import WGANGP, WGANWC

# Fast settings for every generator (the neural ones: one epoch, small networks).
FAST = {
    "synthpop": {},
    "baynet": {},
    "privbayes": {"epsilon": 1.0},
    "tvae": {
        "epochs": 1,
        "batch_size": 50,
        "embedding_dim": 8,
        "compress_dims": (16,),
        "decompress_dims": (16,),
        "device": "cpu",
        "threads": 1,
    },
    "ctgan": {
        "epochs": 1,
        "batch_size": 20,
        "embedding_dim": 8,
        "generator_dim": (16,),
        "discriminator_dim": (16,),
        "device": "cpu",
        "threads": 1,
    },
    "noise": {"scale": 0.5, "resample_prob": 0.2},
    "wgan_gp": {"epochs": 1, "batch_size": 20, "z_dim": 8, "device": "cpu", "threads": 1},
    "wgan_wc": {"epochs": 1, "batch_size": 20, "z_dim": 8, "device": "cpu", "threads": 1},
    "gan": {"epochs": 1, "batch_size": 20, "z_dim": 8, "device": "cpu", "threads": 1},
    "adsgan": {"lamda": 0.5, "epochs": 1, "batch_size": 20, "z_dim": 8, "device": "cpu", "threads": 1},
    "pategan": {"n_teachers": 2, "epochs": 1, "batch_size": 20, "z_dim": 8, "device": "cpu", "threads": 1},
    "nflow": {"epochs": 1, "hidden": 8, "transforms": 2, "bins": 4, "device": "cpu", "threads": 1},
}
NAMES = sorted(FAST)


def mixed_table(n: int = 120, seed: int = 0) -> tuple[pd.DataFrame, Schema]:
    """A small table with the awkward bits: an unused category, integer and real continuous columns,
    columns not in schema order."""
    rng = np.random.default_rng(seed)
    colour = pd.Categorical(rng.choice(["red", "green", "blue"], n), categories=["blue", "green", "purple", "red"])
    size = pd.Categorical(rng.choice([1, 2, 3], n), categories=[1, 2, 3])
    age = rng.integers(18, 80, n).astype(float)
    income = rng.lognormal(10, 1, n)
    df = pd.DataFrame({"age": age, "colour": colour, "income": income, "size": size})
    # public domains (bounds known without the data), which PrivBayes needs for its continuous columns
    return df, Schema(
        categorical=("colour", "size"),
        continuous=("age", "income"),
        domains={"age": (18.0, 80.0), "income": (0.0, 2e6)},
    )


def fitted(name: str, df, schema, seed=0, **extra):
    if name == "privbayes":  # it needs public domains: here bounds around each test table's values stand in for them
        schema = schema.with_domains(
            {c: (float(df[c].min()) - 1, float(df[c].max()) + 1) for c in schema.continuous if schema.domain(c) is None}
        )
    return get_generator(name, **{**FAST[name], **extra}).fit(df, schema, seed=seed)


# --------------------------------------------------------------------------- protocol


def test_registry_names_and_classes():
    expected = {
        "synthpop": Synthpop,
        "baynet": BayNet,
        "privbayes": PrivBayes,
        "tvae": TVAE,
        "ctgan": CTGAN,
        "noise": AdditiveNoise,
        "wgan_gp": WGANGP,
        "wgan_wc": WGANWC,
        "gan": GAN,
        "adsgan": ADSGAN,
        "pategan": PATEGAN,
        "nflow": NFlow,
    }
    assert set(REGISTRY) == set(expected)
    for name, cls in expected.items():
        assert type(get_generator(name)) is cls


def test_unknown_generator_name():
    with pytest.raises(VrlibError, match="unknown generator"):
        get_generator("vae")


@pytest.mark.parametrize("name", NAMES)
def test_schema_round_trip(name):
    df, schema = mixed_table()
    out = fitted(name, df, schema, seed=1).sample(57, seed=2)
    assert list(out.columns) == list(df.columns)
    assert len(out) == 57 and out.index.equals(pd.RangeIndex(57))
    for c in df.columns:
        assert out[c].dtype == df[c].dtype, c  # CategoricalDtype equality: same categories, same order
        assert not out[c].isna().any(), c
    assert list(out["colour"].cat.categories) == ["blue", "green", "purple", "red"]
    for c in schema.continuous:
        assert out[c].dtype == np.float64


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_samples(name):
    df, schema = mixed_table()
    a = fitted(name, df, schema, seed=5).sample(80, seed=9)
    b = fitted(name, df, schema, seed=5).sample(80, seed=9)
    pd.testing.assert_frame_equal(a, b)
    g = fitted(name, df, schema, seed=5)
    assert not g.sample(80, seed=10).equals(g.sample(80, seed=11))


@pytest.mark.parametrize("name", NAMES)
def test_sample_before_fit_is_an_error(name):
    with pytest.raises(VrlibError, match="not fitted"):
        get_generator(name, **FAST[name]).sample(10)


def test_bad_sample_size_and_seed():
    df, schema = mixed_table()
    g = fitted("baynet", df, schema)
    for bad in (-1, 2.5, "10", True):
        with pytest.raises(VrlibError, match="non-negative int"):
            g.sample(bad)
    for bad in (-3, 1.5, "x"):
        with pytest.raises(VrlibError, match="seed"):
            g.sample(3, seed=bad)
    assert len(g.sample(0)) == 0 and list(g.sample(0).columns) == list(df.columns)


def test_bad_table_is_an_error():
    df, schema = mixed_table()
    with pytest.raises(VrlibError, match="neither categorical nor continuous"):
        get_generator("synthpop").fit(df.assign(extra=1.0), schema)
    with pytest.raises(VrlibError, match="Schema"):
        get_generator("synthpop").fit(df, {"categorical": ["colour"]})


@pytest.mark.parametrize("eps", [0, -1.0, float("nan"), "1", None])
def test_privbayes_rejects_bad_epsilon(eps):
    with pytest.raises(VrlibError, match="epsilon must be a positive number"):
        get_generator("privbayes", epsilon=eps)


def test_bad_parameters():
    with pytest.raises(VrlibError, match="degree"):
        PrivBayes(degree=0)
    with pytest.raises(VrlibError, match="bins"):
        BayNet(bins=0)
    with pytest.raises(VrlibError, match="min_samples_leaf"):
        Synthpop(min_samples_leaf=0)
    with pytest.raises(VrlibError, match="scale"):
        AdditiveNoise(scale=-1)
    with pytest.raises(VrlibError, match="resample_prob"):
        AdditiveNoise(resample_prob=1.5)
    with pytest.raises(VrlibError, match="multiple of pac"):
        CTGAN(batch_size=25)
    with pytest.raises(VrlibError, match="epochs"):
        TVAE(epochs=0)
    df, schema = mixed_table()
    with pytest.raises(VrlibError, match="visit_sequence"):
        Synthpop(visit_sequence=["age", "colour"]).fit(df, schema)


# --------------------------------------------------------------------------- edge cases


def tiny_table(n):
    rng = np.random.default_rng(n)
    df = pd.DataFrame({
        "c": pd.Categorical(rng.choice(["a", "b"], n), categories=["a", "b", "z"]),
        "x": rng.normal(size=n),
        "k": pd.Categorical(["only"] * n),  # constant categorical
        "const": np.full(n, 4.0),  # constant continuous
    })  # fmt: skip
    return df, Schema(categorical=("c", "k"), continuous=("x", "const"))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", [1, 3, 7])
def test_tiny_tables_and_constant_columns(name, n):
    df, schema = tiny_table(n)
    if name in ("tvae", "ctgan", "wgan_gp", "wgan_wc", "gan", "adsgan", "pategan") and n < 2:
        with pytest.raises(VrlibError, match="at least 2 training rows"):
            fitted(name, df, schema)
        return
    out = fitted(name, df, schema).sample(25, seed=1)
    assert len(out) == 25 and list(out.columns) == list(df.columns)
    assert (out["k"] == "only").all()
    assert out["c"].dtype == df["c"].dtype
    if name in ("synthpop", "baynet"):  # these reproduce a constant exactly
        assert (out["const"] == 4.0).all()
    assert np.isfinite(out["x"]).all()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kind", ["categorical", "continuous"])
def test_single_column_tables(name, kind):
    rng = np.random.default_rng(3)
    if kind == "categorical":
        df = pd.DataFrame({"v": pd.Categorical(rng.choice(["p", "q", "r"], 40, p=[0.6, 0.3, 0.1]))})
        schema = Schema(categorical=("v",))
    else:
        df = pd.DataFrame({"v": rng.normal(size=40)})
        schema = Schema(continuous=("v",))
    out = fitted(name, df, schema).sample(30, seed=2)
    assert list(out.columns) == ["v"] and out["v"].dtype == df["v"].dtype and len(out) == 30


# --------------------------------------------------------------------------- BayNet / PrivBayes


def draw_network(n, rng):
    """Records from a hand-built network A -> B -> C, A -> D; returns the table and the true joint."""
    pa = np.array([0.5, 0.3, 0.2])
    pb_a = np.array([[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.2, 0.1, 0.7]])
    pc_b = np.array([[0.9, 0.1], [0.25, 0.75], [0.5, 0.5]])
    pd_a = np.array([[0.7, 0.1, 0.1, 0.1], [0.1, 0.1, 0.1, 0.7], [0.05, 0.85, 0.05, 0.05]])
    joint = np.einsum("a,ab,bc,ad->abcd", pa, pb_a, pc_b, pd_a)  # axes A, B, C, D
    cells = rng.choice(joint.size, size=n, p=joint.ravel())
    a, b, c, d = np.unravel_index(cells, joint.shape)
    df = pd.DataFrame({
        "A": pd.Categorical.from_codes(a, ["a0", "a1", "a2"]),
        "B": pd.Categorical.from_codes(b, ["b0", "b1", "b2"]),
        "C": pd.Categorical.from_codes(c, ["c0", "c1"]),
        "D": pd.Categorical.from_codes(d, ["d0", "d1", "d2", "d3"]),
    })  # fmt: skip
    return df, Schema(categorical=("A", "B", "C", "D")), joint


def true_conditional(joint, axes, child, parents):
    """P(child | parents) from a joint array with named axes, shape (*parents, child)."""
    keep = list(parents) + [child]
    drop = tuple(i for i, a in enumerate(axes) if a not in keep)
    marg = joint.sum(axis=drop)
    remaining = [a for a in axes if a in keep]
    marg = np.transpose(marg, [remaining.index(a) for a in keep])
    return marg / marg.sum(axis=-1, keepdims=True)


def model_joint(gen, axes):
    """The joint distribution the fitted network defines, by brute force over all cells."""
    shape = [gen.domains_[a] for a in axes]
    joint = np.zeros(shape)
    cpts = {a: gen.conditional(a) for a in axes}
    for cell in itertools.product(*(range(s) for s in shape)):
        value = dict(zip(axes, cell))
        p = 1.0
        for a in axes:
            p *= cpts[a][tuple(value[q] for q in gen.parents_[a]) + (value[a],)]
        joint[cell] = p
    return joint


def test_baynet_recovers_known_network():
    df, schema, joint = draw_network(40_000, np.random.default_rng(0))
    axes = ["A", "B", "C", "D"]
    for seed in range(3):  # different random first attributes, same undirected tree
        gen = BayNet(degree=1).fit(df, schema, seed=seed)
        edges = {frozenset((c, p)) for c, ps in gen.parents_.items() for p in ps}
        assert edges == {frozenset("AB"), frozenset("BC"), frozenset("AD")}
        for child, parents in gen.parents_.items():
            want = true_conditional(joint, axes, child, parents)
            np.testing.assert_allclose(gen.conditional(child), want, atol=0.02)
        np.testing.assert_allclose(model_joint(gen, axes), joint, atol=0.01)


def test_baynet_degree_two_captures_xor():
    rng = np.random.default_rng(1)
    n = 20_000
    a, b = rng.integers(0, 2, n), rng.integers(0, 2, n)
    c = np.where(rng.random(n) < 0.9, a ^ b, 1 - (a ^ b))
    df = pd.DataFrame({k: pd.Categorical.from_codes(v, ["0", "1"]) for k, v in zip("ABC", (a, b, c))})
    schema = Schema(categorical=("A", "B", "C"))
    truth = np.zeros((2, 2, 2))
    for i, j in itertools.product(range(2), range(2)):
        truth[i, j, i ^ j], truth[i, j, 1 - (i ^ j)] = 0.25 * 0.9, 0.25 * 0.1
    deg2 = BayNet(degree=2).fit(df, schema, seed=0)
    assert max(len(p) for p in deg2.parents_.values()) == 2
    np.testing.assert_allclose(model_joint(deg2, list("ABC")), truth, atol=0.015)
    deg1 = BayNet(degree=1).fit(df, schema, seed=0)
    assert np.abs(model_joint(deg1, list("ABC")) - truth).max() > 0.08  # a tree cannot hold XOR


def test_baynet_samples_follow_the_network():
    df, schema, joint = draw_network(20_000, np.random.default_rng(2))
    out = BayNet().fit(df, schema, seed=0).sample(60_000, seed=1)
    cells = np.ravel_multi_index([out[c].cat.codes.to_numpy() for c in "ABCD"], joint.shape)
    empirical = np.bincount(cells, minlength=joint.size) / len(out)
    assert 0.5 * np.abs(empirical - joint.ravel()).sum() < 0.03


@pytest.mark.parametrize("degree", [1, 2])
def test_bayesnet_draws_are_inverse_cdf_draws_row_by_row(degree):
    # Each value is the first one whose cumulative conditional probability, given the row's parents,
    # reaches the uniform u the column draws from the sampling stream: rebuilt here one row at a time.
    df, schema, _ = draw_network(2_000, np.random.default_rng(5))
    gen = PrivBayes(epsilon=0.5, degree=degree).fit(df, schema, seed=3)  # noisy tables: some empty cells
    n = 400
    out = gen.sample(n, seed=7)
    rng = np.random.default_rng(7)
    want = {}
    for column in gen.order_:
        u = 1.0 - rng.random(n)
        conditional = gen.conditional(column)  # axes: parents, then the column
        want[column] = np.empty(n, dtype=np.int64)
        for i in range(n):
            cdf = np.cumsum(conditional[tuple(want[p][i] for p in gen.parents_[column])])
            cdf[-1] = 1.0
            want[column][i] = np.searchsorted(cdf, u[i], side="left")
    for column in gen.order_:
        np.testing.assert_array_equal(out[column].cat.codes.to_numpy(), want[column])


def test_continuous_columns_binned_and_uniform_inside_bins():
    rng = np.random.default_rng(4)
    x = rng.uniform(0, 10, 5000)
    df = pd.DataFrame({"x": x, "y": x * 2 + rng.normal(0, 0.1, 5000)})
    schema = Schema(continuous=("x", "y"))
    gen = BayNet(bins=5).fit(df, schema, seed=0)
    assert gen.domains_ == {"x": 5, "y": 5}
    out = gen.sample(50_000, seed=1)
    edges = gen.bin_edges_["x"]  # no public domain: BayNet takes the training range
    np.testing.assert_allclose(edges, np.linspace(x.min(), x.max(), 6))
    lo, width = edges[0], edges[1] - edges[0]
    assert out["x"].min() >= x.min() and out["x"].max() <= x.max()
    frac = ((out["x"] - lo) / width) % 1.0  # position inside the bin: uniform
    hist = np.histogram(frac, bins=10, range=(0, 1))[0] / len(frac)
    np.testing.assert_allclose(hist, 0.1, atol=0.01)
    # Bin frequencies follow the training bins.
    train_bins = np.bincount(np.minimum((x - lo) // width, 4).astype(int), minlength=5) / len(x)
    synth_bins = np.bincount(np.minimum((out["x"] - lo) // width, 4).astype(int), minlength=5) / len(out)
    np.testing.assert_allclose(synth_bins, train_bins, atol=0.01)


def _neighbours():
    """Two training sets that differ in one record: an ordinary one, and one with an extreme value."""
    rng = np.random.default_rng(7)
    n = 400
    df = pd.DataFrame({"x": rng.normal(0, 1, n), "y": rng.exponential(1, n),
                       "c": pd.Categorical(rng.choice(["a", "b"], n))})  # fmt: skip
    other = df.copy()
    other.loc[0, ["x", "y"]] = [25.0, 300.0]  # one extreme record swapped in
    return df, other


@pytest.mark.parametrize("name", ["privbayes", "baynet"])
@pytest.mark.parametrize("domain", ["bounds", "edges"])
def test_public_domain_gives_neighbours_identical_discretisations(name, domain):
    df, other = _neighbours()
    public = pd.DataFrame(
        {"x": np.random.default_rng(8).normal(0, 1, 2000), "y": np.random.default_rng(9).exponential(1, 2000)}
    )
    domains = {"x": (-4.0, 4.0), "y": (0.0, 10.0)} if domain == "bounds" else quantile_domain(public, ["x", "y"], 8)
    schema = Schema(categorical=("c",), continuous=("x", "y"), domains=domains)
    params = {"epsilon": 1.0} if name == "privbayes" else {}
    a = get_generator(name, **params).fit(df, schema, seed=0)
    b = get_generator(name, **params).fit(other, schema, seed=0)
    for col in ("x", "y"):
        np.testing.assert_array_equal(a.bin_edges_[col], b.bin_edges_[col])
        expected = np.linspace(*domains[col], 11) if domain == "bounds" else np.asarray(domains[col])
        np.testing.assert_allclose(a.bin_edges_[col], expected)
    codes_a, _ = a._encode(df)
    codes_b, _ = b._encode(other)
    # the same records get the same codes; only the swapped record moves (into the last bins)
    np.testing.assert_array_equal(codes_a[:, 1:], codes_b[:, 1:])
    assert codes_b[a.columns_.index("x"), 0] == a.domains_["x"] - 1
    out = b.sample(2000, seed=1)
    assert out["x"].max() <= domains["x"][-1] and out["y"].max() <= domains["y"][-1]  # never outside the domain


def test_without_public_domain_baynet_bins_move_and_privbayes_refuses():
    df, other = _neighbours()
    schema = Schema(categorical=("c",), continuous=("x", "y"))
    a, b = BayNet().fit(df, schema, seed=0), BayNet().fit(other, schema, seed=0)
    assert not np.array_equal(a.bin_edges_["x"], b.bin_edges_["x"])  # one record moves every bin
    with pytest.raises(VrlibError, match="public domain"):
        PrivBayes(epsilon=1.0).fit(df, schema, seed=0)


def test_schema_domains_are_checked_and_kept_by_subset():
    schema = Schema(categorical=("c",), continuous=("x", "y"), domains={"x": (0, 1)})
    assert schema.domain("x") == (0.0, 1.0) and schema.domain("y") is None
    assert schema.subset(["x", "c"]).domain("x") == (0.0, 1.0)
    assert schema.with_domains({"y": (0, 2, 5)}).domain("y") == (0.0, 2.0, 5.0)
    hash(schema)  # still usable as a key
    for bad in ({"c": (0, 1)}, {"x": (1, 0)}, {"x": (0,)}, {"x": (0, np.inf)}):
        with pytest.raises(VrlibError):
            Schema(categorical=("c",), continuous=("x", "y"), domains=bad)
    edges = quantile_domain(pd.DataFrame({"x": np.arange(101.0)}), ["x"], 4, trim=0)["x"]
    assert edges == (0.0, 25.0, 50.0, 75.0, 100.0)
    assert quantile_domain(pd.DataFrame({"x": np.arange(101.0)}), ["x"], 4)["x"] == (1.0, 25.0, 50.0, 75.0, 99.0)


def test_adult_schema_carries_its_public_domain():
    from vrlib.data import ADULT_DOMAIN

    try:
        import vrlib

        df, schema = vrlib.load("adult")
    except VrlibError as exc:
        pytest.skip(f"Adult data not available: {exc}")
    assert set(dict(schema.domains)) == set(schema.continuous)
    for c, (lo, hi) in ADULT_DOMAIN.items():
        assert lo <= df[c].min() and df[c].max() <= hi  # Ω lies inside the public release's range


def test_round_integers_option():
    df, schema = mixed_table(300)
    plain = BayNet().fit(df, schema, seed=0).sample(500, seed=0)
    rounded = BayNet(round_integers=True).fit(df, schema, seed=0).sample(500, seed=0)
    assert not np.all(plain["age"] == np.round(plain["age"]))
    assert np.all(rounded["age"] == np.round(rounded["age"]))
    assert rounded["age"].between(*schema.domain("age")).all()  # inside the public domain
    assert not np.all(rounded["income"] == np.round(rounded["income"]))  # income is not integer-valued


def test_privbayes_infinite_epsilon_is_baynet():
    df, schema = mixed_table(300)
    for degree in (1, 2):
        a = PrivBayes(epsilon=math.inf, degree=degree).fit(df, schema, seed=3)
        b = BayNet(degree=degree).fit(df, schema, seed=3)
        assert a.parents_ == b.parents_ and a.noise_scale_ == 0.0
        pd.testing.assert_frame_equal(a.sample(400, seed=4), b.sample(400, seed=4))
    assert get_generator("privbayes", epsilon=float("inf")).get_params()["epsilon"] == math.inf


def test_set_entropies_match_a_direct_count():
    rng = np.random.default_rng(0)
    n = 300
    domains = np.array([2, 3, 50, 40, 1])  # small and large joint domains: both counting paths
    codes = np.stack([rng.integers(0, k, n) for k in domains])
    for size in (1, 2, 3):
        sets = np.array(list(itertools.combinations(range(len(domains)), size)))
        got = bayesnet.set_entropies(codes, domains, sets)
        for s, h in zip(sets, got):
            _, counts = np.unique(codes[s].T, axis=0, return_counts=True)
            p = counts / n
            assert h == pytest.approx(-(p * np.log2(p)).sum(), abs=1e-9)


def test_mi_sensitivity_formulas():
    n = 1000
    general = 2 / n * math.log2((n + 1) / 2) + (n - 1) / n * math.log2((n + 1) / (n - 1))
    binary = 1 / n * math.log2(n) + (n - 1) / n * math.log2(n / (n - 1))
    assert mi_sensitivity(n) == pytest.approx(general, rel=1e-12)
    assert mi_sensitivity(n, binary=True) == pytest.approx(binary, rel=1e-12)
    assert mi_sensitivity(n, binary=True) < mi_sensitivity(n)
    assert mi_sensitivity(1) == 0.0


def test_exponential_mechanism_probabilities():
    p = exponential_mechanism_probabilities([0.0, 1.0, 2.0], epsilon=2.0, sensitivity=0.5)
    want = np.exp([0.0, 2.0, 4.0])  # exp(eps * s / (2 * sensitivity)) = exp(2 s)
    np.testing.assert_allclose(p, want / want.sum(), rtol=1e-12)
    # Large scores do not overflow.
    assert np.isfinite(exponential_mechanism_probabilities([1e6, 0.0], 1.0, 1e-6)).all()
    np.testing.assert_array_equal(exponential_mechanism_probabilities([1.0, 3.0, 3.0], math.inf, 1.0), [0, 1, 0])
    # Drawing from it: empirical frequencies match.
    rng = np.random.default_rng(0)
    draws = rng.choice(3, size=200_000, p=p)
    np.testing.assert_allclose(np.bincount(draws) / len(draws), p, atol=0.005)


def test_laplace_noise_std_matches_its_scale():
    assert laplace_scale(0.5, 1000, 14) == pytest.approx(2 * 14 / (1000 * 0.5))
    noise = noisy_counts(np.zeros(400_000), 3.0, np.random.default_rng(0))
    assert noise.std() == pytest.approx(3.0 * math.sqrt(2), rel=0.01)  # Laplace(b): std = b·√2
    assert np.abs(noise).mean() == pytest.approx(3.0, rel=0.01)  # and E|X| = b
    np.testing.assert_array_equal(noisy_counts(np.ones(3), 0.0, np.random.default_rng(0)), np.ones(3))


def categorical_table(n, d, k, rng):
    df = pd.DataFrame(
        {f"v{j}": pd.Categorical.from_codes(rng.integers(0, k, n), [str(i) for i in range(k)]) for j in range(d)}
    )
    return df, Schema(categorical=tuple(df.columns))


@pytest.mark.parametrize("degree", [1, 2])
def test_privbayes_realised_noise_matches_accounting(degree):
    n, d, k, eps = 500, 5, 12, 2.0
    df, schema = categorical_table(n, d, k, np.random.default_rng(7))
    gen = PrivBayes(epsilon=eps, degree=degree).fit(df, schema, seed=1)
    eps2 = eps / 2
    b = 2 * (d - degree) / (n * eps2)  # PrivBayes Algorithm 1: d - k marginals, sensitivity 2/n each
    assert gen.noise_scale_ == pytest.approx(b)
    assert len(gen.noisy_marginals_) == d - degree
    residuals = []
    for child, noisy in gen.noisy_marginals_.items():
        family = list(gen.parents_[child]) + [child]
        exact = np.zeros([k] * len(family))
        np.add.at(exact, tuple(df[c].cat.codes.to_numpy() for c in family), 1)
        residuals.append((noisy - exact).ravel() / n)  # noise on the distribution
    residuals = np.concatenate(residuals)
    assert len(residuals) >= 500
    assert residuals.std() == pytest.approx(b * math.sqrt(2), rel=0.1)
    assert np.abs(residuals).mean() == pytest.approx(b, rel=0.1)


def test_privbayes_structure_budget(monkeypatch):
    """Each of the d - 1 structure choices spends (eps/2)/(d - 1) with the PrivBayes sensitivity."""
    calls = []
    real = bayesnet.exponential_mechanism_probabilities

    def spy(scores, epsilon, sensitivity):
        calls.append((epsilon, sensitivity))
        return real(scores, epsilon, sensitivity)

    monkeypatch.setattr(bayesnet, "exponential_mechanism_probabilities", spy)
    n, d = 300, 6
    df, schema = categorical_table(n, d, 4, np.random.default_rng(0))
    PrivBayes(epsilon=3.0, degree=2).fit(df, schema, seed=0)
    assert len(calls) == d - 1
    for epsilon, sensitivity in calls:
        assert epsilon == pytest.approx(1.5 / (d - 1))
        assert sensitivity == pytest.approx(mi_sensitivity(n))
    calls.clear()
    BayNet().fit(df, schema, seed=0)
    assert calls == []  # no budget, no mechanism


def test_privbayes_small_epsilon_is_noisier():
    df, schema, joint = draw_network(2000, np.random.default_rng(3))
    from vrlib.metrics import marginal_distance

    dist = {}
    for eps in (0.05, math.inf):
        gens = [PrivBayes(epsilon=eps).fit(df, schema, seed=s) for s in range(3)]
        dist[eps] = np.mean([marginal_distance(df, g.sample(2000, seed=1), schema, way=2) for g in gens])
    assert dist[0.05] > dist[math.inf] + 0.05


# --------------------------------------------------------------------------- Synthpop


def test_synthpop_reproduces_deterministic_relationships():
    rng = np.random.default_rng(0)
    n = 600
    x = rng.choice(list("abcdef"), n)
    f = {"a": "u", "b": "v", "c": "u", "d": "w", "e": "v", "f": "w"}
    g = {"a": 1.5, "b": -2.0, "c": 7.25, "d": 0.0, "e": 3.0, "f": -1.0}
    t = rng.integers(0, 8, n).astype(float)
    df = pd.DataFrame({
        "x": pd.Categorical(x),
        "y": pd.Categorical([f[v] for v in x]),  # categorical = f(categorical)
        "z": [g[v] for v in x],  # continuous = g(categorical)
        "t": t,
        "s": np.sin(t),  # continuous = sin(continuous)
    })  # fmt: skip
    schema = Schema(categorical=("x", "y"), continuous=("z", "t", "s"))
    for encoding in ("onehot", "codes"):
        out = Synthpop(categorical_predictors=encoding).fit(df, schema, seed=1).sample(2000, seed=2)
        assert (out["y"].astype(str) == out["x"].astype(str).map(f)).all()
        np.testing.assert_array_equal(out["z"], out["x"].astype(str).map(g).to_numpy())
        np.testing.assert_array_equal(out["s"], np.sin(out["t"]))


def test_synthpop_values_come_from_the_training_data():
    df, schema = mixed_table(200)
    out = Synthpop().fit(df, schema, seed=0).sample(500, seed=1)
    for c in schema.continuous:
        assert set(out[c]) <= set(df[c])
    # The first column is a bootstrap of the training column: close marginal.
    counts = out["age"].value_counts(normalize=True)
    assert counts.index.isin(df["age"]).all()


def test_synthpop_visit_sequence():
    df, schema = mixed_table(200)
    gen = Synthpop(visit_sequence=["income", "size", "colour", "age"]).fit(df, schema, seed=0)
    assert gen.visit_sequence_ == ["income", "size", "colour", "age"]
    out = gen.sample(100, seed=0)
    assert list(out.columns) == list(df.columns)
    # The first visited column is bootstrapped: an identical seed gives identical draws.
    rows = np.random.default_rng(0).integers(len(df), size=100)
    np.testing.assert_array_equal(out["income"], df["income"].to_numpy()[rows])


def test_synthpop_leaves_respect_min_samples_leaf():
    df, schema = mixed_table(400)
    gen = Synthpop(min_samples_leaf=7).fit(df, schema, seed=0)
    for model in gen._models[1:]:
        tree, starts, counts, donors = model
        assert counts[counts > 0].min() >= 7


# --------------------------------------------------------------------------- additive noise


def test_noise_without_noise_releases_the_training_rows():
    df, schema = mixed_table(100)
    out = AdditiveNoise(scale=0.0, resample_prob=0.0).fit(df, schema, seed=0).sample(100, seed=1)
    key = lambda t: sorted(map(tuple, t.astype(str).to_numpy()))  # noqa: E731
    assert key(out) == key(df)  # n = len(train): every record exactly once
    twice = AdditiveNoise(scale=0.0, resample_prob=0.0).fit(df, schema).sample(200, seed=1)
    assert key(twice) == sorted(key(df) * 2)


def test_noise_scale_and_resampling_rate():
    rng = np.random.default_rng(0)
    n = 4000
    df = pd.DataFrame({"x": rng.normal(5, 3, n), "c": pd.Categorical(rng.choice(["a", "b"], n, p=[0.5, 0.5]))})
    schema = Schema(categorical=("c",), continuous=("x",))
    gen = AdditiveNoise(scale=0.4, resample_prob=0.3).fit(df, schema, seed=0)
    out = gen.sample(n, seed=1)
    # Every row is used once, so Var(x + noise) = Var(x) + scale^2: σ in the table's units.
    assert out["x"].var() == pytest.approx(df["x"].var() + 0.4**2, rel=0.02)
    assert gen.sigma_ == {"x": 0.4}
    # training_std=True: σ = scale × the training std, so Var(x + noise) = Var(x) (1 + scale^2)
    rel = AdditiveNoise(scale=0.4, resample_prob=0.3, training_std=True).fit(df, schema, seed=0)
    assert rel.sigma_["x"] == pytest.approx(0.4 * df["x"].std(ddof=0))
    assert rel.sample(n, seed=1)["x"].var() == pytest.approx(df["x"].var() * (1 + 0.4**2), rel=0.06)
    # With scale 0 the rows are known, so the categorical change rate is measurable:
    # a cell changes with probability resample_prob * P(draw differs) = 0.3 * 0.5.
    gen0 = AdditiveNoise(scale=0.0, resample_prob=0.3).fit(df, schema, seed=0)
    out0 = gen0.sample(n, seed=2)
    merged = out0.assign(orig=df.set_index("x").loc[out0["x"], "c"].to_numpy())
    changed = (merged["c"].astype(str) != merged["orig"].astype(str)).mean()
    assert changed == pytest.approx(0.15, abs=0.02)


# --------------------------------------------------------------------------- neural


def test_neural_generators_use_codes_of_the_input_categories():
    df, schema = mixed_table(60)
    for name in ("tvae", "ctgan"):
        out = fitted(name, df, schema, seed=0).sample(300, seed=0)
        assert set(out["colour"].astype(str)) <= {"blue", "green", "red"}  # 'purple' never seen
        assert out["size"].dtype == df["size"].dtype


@pytest.mark.parametrize("n, batch_size, epochs", [(120, 50, 3), (60, 500, 4), (90, 30, 2)])
def test_lean_tvae_trains_as_ctgan_does_bit_for_bit(n, batch_size, epochs):
    import ctgan
    import torch

    from vrlib.generators.neural import _lean_tvae_class
    from vrlib.torch_setup import torch_threads

    df, _ = mixed_table(n, seed=n)
    data = df.assign(colour=df["colour"].cat.codes, size=df["size"].cat.codes)
    models = []
    for cls in (ctgan.TVAE, _lean_tvae_class()):
        model = cls(
            epochs=epochs,
            batch_size=batch_size,
            embedding_dim=8,
            compress_dims=(16,),
            decompress_dims=(16,),
            enable_gpu=False,
        )
        model.set_random_state(11)
        with torch_threads(1):
            model.fit(data, discrete_columns=["colour", "size"])
        models.append(model)
    ours, theirs = models[1], models[0]
    for (name, a), b in zip(theirs.decoder.state_dict().items(), ours.decoder.state_dict().values()):
        assert torch.equal(a, b), name
    pd.testing.assert_frame_equal(ours.loss_values, theirs.loss_values)
    assert len(ours.loss_values) == epochs * -(-n // batch_size)
    # the random state after fitting is the same too (torch's and numpy's)
    assert torch.equal(ours.random_states[1].get_state(), theirs.random_states[1].get_state())
    np.testing.assert_array_equal(ours.random_states[0].get_state()[1], theirs.random_states[0].get_state()[1])


def test_fitted_tvae_pickles():
    import pickle

    df, schema = mixed_table(60)
    gen = fitted("tvae", df, schema, seed=0)
    again = pickle.loads(pickle.dumps(gen))
    pd.testing.assert_frame_equal(again.sample(50, seed=3), gen.sample(50, seed=3))


# --------------------------------------------------------------------------- real data


@pytest.mark.realdata
def test_quality_on_adult():
    from vrlib.metrics import marginal_distance

    try:
        import vrlib

        df, schema = vrlib.load("adult")
    except VrlibError as exc:
        pytest.skip(f"Adult data not available: {exc}")
    train = df.sample(1000, random_state=0).reset_index(drop=True)
    holdout = df.sample(1000, random_state=1).reset_index(drop=True)
    baseline = marginal_distance(train, holdout, schema, way=2)  # sampling noise alone
    # BayNet on the training range: its bins are the metric's (equal width over the training range)
    data_range = Schema(schema.categorical, schema.continuous)
    for name in ("synthpop", "baynet"):
        out = get_generator(name).fit(train, data_range, seed=0).sample(1000, seed=1)
        assert marginal_distance(train, out, schema, way=1) < 0.05, name
        assert marginal_distance(train, out, schema, way=2) < baseline + 0.02, name
    # on Adult's public domain the bins are not the metric's, so values smeared inside them cost a little more
    out = get_generator("baynet").fit(train, schema, seed=0).sample(1000, seed=1)
    assert marginal_distance(train, out, schema, way=1) < 0.08


@pytest.mark.parametrize("name", ["synthpop", "baynet", "privbayes", "noise"])
def test_sample_encoded_is_the_encoded_sample(name):
    """The arrays straight from the generator are encode_table of its sampled table: same draws, same layout."""
    from vrlib.encoding import encode_table

    df, schema = mixed_table(150)
    gen = fitted(name, df, schema, seed=3)
    reordered = Schema(categorical=schema.categorical[::-1], continuous=schema.continuous[::-1], domains=schema.domains)
    wider = {"colour": ["yellow", "red", "purple", "green", "blue"], "size": [3, 2, 1, 0]}  # other order, more
    for sch, cats in ((gen.schema_, None), (reordered, wider)):
        want = encode_table(gen.sample(200, seed=4), sch, cats)
        got = gen.sample_encoded(200, seed=4, schema=sch, categories=cats)
        for part in ("codes", "continuous"):
            assert got[part].dtype == want[part].dtype
            np.testing.assert_array_equal(got[part], want[part])
    with pytest.raises(VrlibError, match="outside its category set"):
        gen.sample_encoded(500, seed=4, categories={"colour": ["red"], "size": [1, 2, 3]})
    with pytest.raises(VrlibError, match="does not describe"):
        gen.sample_encoded(5, schema=Schema(categorical=("colour",), continuous=("age",)))


def test_fast_ctgan_row_sampler_draws_ctgans_rows():
    """One randint over the batch draws what ctgan's one np.random.choice per row draws: same rows, same state."""
    from ctgan.data_sampler import DataSampler

    from vrlib.generators.neural import _fast_sampler_class

    rng = np.random.default_rng(0)
    # one-hot columns of 3 (a rare level: 1 row), 5 and 2 levels, and a continuous span between them
    codes = [rng.choice(2, 400, p=[0.7, 0.3]), rng.integers(0, 5, 400), rng.integers(0, 2, 400)]
    codes[0][17] = 2  # level 2 of the first column: one row only
    blocks = [np.eye(3)[codes[0]], rng.normal(size=(400, 1)), np.eye(5)[codes[1]], np.eye(2)[codes[2]]]
    data = np.hstack(blocks).astype(np.float32)
    from ctgan.data_transformer import SpanInfo

    info = [[SpanInfo(3, "softmax")], [SpanInfo(1, "tanh")], [SpanInfo(5, "softmax")], [SpanInfo(2, "softmax")]]
    plain, fast = DataSampler(data, info, True), _fast_sampler_class()(data, info, True)
    for seed in range(20):
        batch = [1, 7, 500][seed % 3]
        col = np.random.default_rng(seed).integers(0, 3, batch)
        opt = np.array([np.random.default_rng(seed + i).integers(0, (3, 5, 2)[c]) for i, c in enumerate(col)])
        opt[col == 0] = np.where(np.arange((col == 0).sum()) % 2, 2, opt[col == 0])  # the 1-row level often
        out = []
        for sampler in (plain, fast):
            np.random.seed(seed)
            out.append((sampler.sample_data(data, batch, col, opt), np.random.get_state()[1].copy()))
        np.testing.assert_array_equal(out[0][0], out[1][0])
        np.testing.assert_array_equal(out[0][1], out[1][1])  # the same numbers consumed
        # and every sampled row has the requested level in the requested column
        starts = (0, 4, 9)
        assert all(out[1][0][i, starts[c] + o] == 1 for i, (c, o) in enumerate(zip(col, opt)))
    assert type(fast.plain()) is DataSampler and not hasattr(fast, "_fast_rows")


@pytest.mark.parametrize("n, batch_size, epochs", [(120, 20, 2), (90, 40, 3)])
def test_ctgan_with_the_fast_row_sampler_fits_bit_for_bit(n, batch_size, epochs, monkeypatch):
    import pickle

    import torch

    from vrlib.generators.neural import _fast_sampler_class

    df, schema = mixed_table(n, seed=n)
    params = {**FAST["ctgan"], "batch_size": batch_size, "epochs": epochs}
    calls = []
    fast_class = _fast_sampler_class()
    monkeypatch.setattr(
        fast_class, "sample_data", lambda self, *a, f=fast_class.sample_data: calls.append(1) or f(self, *a)
    )
    fast = CTGAN(**params).fit(df, schema, seed=4)
    assert len(calls) == epochs * (n // batch_size)  # the fast sampler did the work
    monkeypatch.setattr(CTGAN, "_plain_sampler", True)
    plain = CTGAN(**params).fit(df, schema, seed=4)
    a, b = fast.model_._generator.state_dict(), plain.model_._generator.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    pd.testing.assert_frame_equal(fast.model_.loss_values, plain.model_.loss_values)
    pd.testing.assert_frame_equal(fast.sample(200, seed=1), plain.sample(200, seed=1))
    assert type(fast.model_._data_sampler).__module__ == "ctgan.data_sampler"  # pickles as ctgan's own
    pd.testing.assert_frame_equal(pickle.loads(pickle.dumps(fast)).sample(50, seed=2), fast.sample(50, seed=2))
