"""DOMIAS and its baselines: planted overfitting is found, independence is not, each baseline's known answer."""

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st

from vrlib.attacks.domias import (
    ATTACKS,
    DOMIAS,
    LOGAN0,
    LOGAND1,
    Eq1,
    GANLeaks,
    GANLeaksCal,
    LOGAND1Published,
    MonteCarlo,
    get_attack,
)
from vrlib.errors import VrlibError
from vrlib.metrics import auc

TINY_FLOW = dict(n_flows=2, n_layers=2, hidden_per_dim=16, epochs=40, batch_size=512, lr=0.03, patience=8)


def _planted(seed=0, d=5, n_mem=150, copies=6, noise=0.05, n_ref=1500):
    """Synthetic data = noisy copies of the members + fresh population draws; reference from the population."""
    rng = np.random.default_rng(seed)
    mem, non, ref = rng.normal(size=(n_mem, d)), rng.normal(size=(n_mem, d)), rng.normal(size=(n_ref, d))
    syn = np.vstack(
        [
            np.repeat(mem, copies, axis=0) + rng.normal(scale=noise, size=(n_mem * copies, d)),
            rng.normal(size=(n_mem * copies, d)),
        ]
    )
    X = np.vstack([mem, non])
    y = np.r_[np.ones(n_mem), np.zeros(n_mem)]
    independent = rng.normal(size=(len(syn), d))  # a generator that learnt the population, nothing else
    return syn, ref, X, y, independent


# --------------------------------------------------------------------------- DOMIAS


def test_domias_kde_finds_planted_overfit_and_not_independence():
    syn, ref, X, y, indep = _planted()
    assert auc(y, DOMIAS("kde").fit(syn, ref).score(X)) > 0.9
    assert abs(auc(y, DOMIAS("kde").fit(indep, ref).score(X)) - 0.5) < 0.08


def test_domias_beats_eq1_on_an_overfit_low_density_region():
    """Members in a rare region, copied by the generator: Eq. 1 ranks them low, DOMIAS high (paper Fig. 1-2)."""
    rng = np.random.default_rng(1)
    pop = lambda n: np.where(rng.random((n, 1)) < 0.9, rng.normal(0, 1, (n, 2)), rng.normal(6, 0.5, (n, 2)))  # noqa: E731
    mem, non, ref = pop(300), pop(300), pop(3000)
    rare = mem[:, 0] > 3
    copies = np.repeat(mem[rare], 10, axis=0) + rng.normal(scale=0.05, size=(10 * rare.sum(), 2))
    syn = np.vstack([pop(3000), copies])
    X, y = np.vstack([mem, non]), np.r_[np.ones(300), np.zeros(300)]
    assert auc(y, DOMIAS("kde").fit(syn, ref).score(X)) > auc(y, Eq1("kde").fit(syn, ref).score(X)) + 0.02


def test_domias_flow_finds_planted_overfit():
    # a small flow resolves a few heavily copied members (ten members, a hundred copies each)
    syn, ref, X, y, _ = _planted(seed=2, d=2, n_mem=10, copies=100, noise=0.15, n_ref=1000)
    attack = get_attack("domias_flow", density_params=TINY_FLOW, seed=0).fit(syn, ref)
    assert auc(y, attack.score(X)) > 0.8


def test_domias_and_eq1_equal_scipy_log_densities():
    syn, ref, X, _, _ = _planted(d=3, n_mem=40, copies=2, n_ref=200)
    expected = st.gaussian_kde(syn.T).logpdf(X.T) - st.gaussian_kde(ref.T).logpdf(X.T)
    np.testing.assert_allclose(DOMIAS("kde").fit(syn, ref).score(X), expected, rtol=1e-9)
    np.testing.assert_allclose(Eq1("kde").fit(syn, None).score(X), st.gaussian_kde(syn.T).logpdf(X.T), rtol=1e-9)


def test_domias_reuses_given_densities():
    syn, ref, X, _, _ = _planted(d=3, n_mem=40, copies=2, n_ref=200)
    fitted = DOMIAS("kde").fit(syn, ref)
    reuse = DOMIAS("kde", reference_density=fitted.reference_density_).fit(syn, ref)
    assert reuse.reference_density_ is fitted.reference_density_
    np.testing.assert_array_equal(reuse.score(X), fitted.score(X))


# --------------------------------------------------------------------------- baselines, known answers


@pytest.fixture
def small():
    rng = np.random.default_rng(5)
    return rng.normal(size=(30, 2)), rng.normal(size=(25, 2)), rng.normal(size=(12, 2))


def _brute_min(a, b):
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1).min(1)  # squared distances


def test_gan_leaks_by_hand(small):
    syn, ref, X = small
    np.testing.assert_allclose(GANLeaks().fit(syn, ref).score(X), np.exp(-_brute_min(X, syn)))
    np.testing.assert_allclose(GANLeaks(squared=False).fit(syn).score(X), np.exp(-np.sqrt(_brute_min(X, syn))))
    assert GANLeaks().fit(syn).score(syn[:3]).tolist() == [1.0, 1.0, 1.0]  # a released record: distance 0


def test_gan_leaks_cal_by_hand(small):
    syn, ref, X = small
    np.testing.assert_allclose(GANLeaksCal().fit(syn, ref).score(X), _brute_min(X, ref) - _brute_min(X, syn))


def test_mc_counts_by_brute_force(small):
    syn, ref, X = small
    attack = MonteCarlo().fit(syn, ref)
    scores = attack.score(X)
    d2 = ((X[:, None, :] - syn[None, :, :]) ** 2).sum(-1)
    eps = np.median(d2.min(1))  # median over the scored records of the nearest-synthetic distance
    assert attack.epsilon_ == pytest.approx(eps)
    np.testing.assert_allclose(scores, (d2 < eps).sum(1) / len(syn))  # strictly below, as the reference code
    fixed = MonteCarlo(epsilon=0.5).fit(syn).score(X)
    np.testing.assert_allclose(fixed, (d2 < 0.5).sum(1) / len(syn))
    np.testing.assert_allclose(MonteCarlo(strict=False).fit(syn).score(X), (d2 <= eps).sum(1) / len(syn))


def test_mc_strict_drops_the_point_at_exactly_epsilon():
    syn = np.array([[0.0], [1.0], [3.0]])
    X = np.array([[0.0], [1.5], [2.0]])  # nearest squared distances 0, 0.25, 1: the median is 0.25
    assert MonteCarlo().fit(syn).score(X).tolist() == [1 / 3, 0.0, 0.0]
    assert MonteCarlo(strict=False).fit(syn).score(X).tolist() == [1 / 3, 1 / 3, 0.0]


def test_mc_and_gan_leaks_find_copies():
    syn, ref, X, y, indep = _planted()
    for name in ("mc", "gan_leaks", "gan_leaks_cal"):
        assert auc(y, get_attack(name).fit(syn, ref).score(X)) > 0.9, name
        assert abs(auc(y, get_attack(name).fit(indep, ref).score(X)) - 0.5) < 0.08, name


def test_logan_d1_separates_what_it_should():
    rng = np.random.default_rng(2)
    syn, ref = rng.normal(3, 1, (400, 2)), rng.normal(-3, 1, (400, 2))
    logits = LOGAND1(epochs=10).fit(syn, ref).score(np.array([[3.0, 3.0], [-3.0, -3.0]]))
    assert logits[0] > 3 and logits[1] < -3  # P(synthetic) above 0.95 and below 0.05


@pytest.mark.parametrize("n_mem", [30, 50, 100, 300, 500, 1000])
def test_published_logan_d1_batches_hold_synthetic_rows_only_at_the_paper_sizes(n_mem):
    """Fig. 3a of the paper: n_syn = n_ref = 10,000, 2·|D_mem| records scored, int(300·n_test/256) steps."""
    n_test, num = 2 * n_mem, 10_000
    attack = LOGAND1Published(n_test=n_test, seed=3)
    rows = attack.batch_rows(int(300 * n_test / 256))
    assert rows.shape == (int(300 * n_test / 256), 256)
    assert rows.max() < num  # the stacked array is [synthetic (label 1); reference (label 0)]: never a reference row
    assert len(np.unique(rows)) > 0.9 * n_test  # the batches do cover the rows they are drawn from


def test_published_logan_d1_fit_sees_one_class_at_the_paper_sizes_and_two_when_small():
    rng = np.random.default_rng(0)
    syn, ref = rng.normal(1, 1, (10_000, 3)), rng.normal(-1, 1, (10_000, 3))
    # the paper's sizes with fewer steps and a narrow network, so that the test is fast: the batches are the same kind
    one = LOGAND1Published(n_test=2000, hidden=8, steps_per_record=3, seed=1).fit(syn, ref)
    assert one.n_steps_ == int(3 * 2000 / 256)
    assert one.labels_drawn_[0] == 0 and one.labels_drawn_[1] == one.n_steps_ * 256
    assert one.rows_drawn_.max() < 10_000
    # when n_test exceeds min(n_syn, n_ref) the batches reach the reference rows: two classes, and it separates them
    two = LOGAND1Published(n_test=400, hidden=32, seed=1).fit(syn[:300], ref[:300])
    counts = np.bincount((two.batch_rows(two.n_steps_) >= 300).ravel(), minlength=2)  # True = a reference row
    np.testing.assert_array_equal(two.labels_drawn_, counts[::-1])
    assert two.labels_drawn_.min() > 0
    assert auc(np.r_[np.ones(300), np.zeros(300)], two.score(np.vstack([syn[:300], ref[:300]]))) > 0.8
    with pytest.raises(VrlibError, match="n_test"):
        LOGAND1Published(n_test=1000).fit(syn[:300], ref[:300])


def test_logan_0_is_seeded_and_shaped():
    syn, ref, X, _, _ = _planted(d=3, n_mem=50, copies=2)
    a = LOGAN0(epochs=3, seed=4).fit(syn).score(X)
    b = LOGAN0(epochs=3, seed=4).fit(syn).score(X)
    assert a.shape == (len(X),) and np.isfinite(a).all()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, LOGAN0(epochs=3, seed=5).fit(syn).score(X))


def test_get_attack_builds_every_name():
    for name in ATTACKS:
        attack = get_attack(name)
        assert hasattr(attack, "fit") and hasattr(attack, "score")
    assert get_attack("domias_flow").estimator == "flow"
    with pytest.raises(VrlibError, match="unknown attack"):
        get_attack("domias")
    with pytest.raises(VrlibError, match="fixes"):
        get_attack("domias_kde", estimator="flow")
    with pytest.raises(VrlibError, match="bad parameter"):
        get_attack("mc", k=3)


# --------------------------------------------------------------------------- inputs


def test_dataframes_columns_are_matched_by_name():
    syn, ref, X, _, _ = _planted(d=3, n_mem=40, copies=2, n_ref=200)
    cols = ["a", "b", "c"]
    s, r, x = (pd.DataFrame(v, columns=cols) for v in (syn, ref, X))
    base = DOMIAS().fit(s, r).score(x)
    np.testing.assert_allclose(DOMIAS().fit(s, r[cols[::-1]]).score(x[cols[::-1]]), base)
    np.testing.assert_allclose(base, DOMIAS().fit(syn, ref).score(X))


@pytest.mark.parametrize(
    "name", sorted(set(ATTACKS) - {"domias_flow", "eq1_flow", "logan_0", "logan_d1", "logan_d1_published"})
)
def test_bad_inputs_raise_clear_errors(name):
    syn, ref, X, _, _ = _planted(d=3, n_mem=20, copies=2, n_ref=100)
    with pytest.raises(VrlibError, match="NaN"):
        bad = syn.copy()
        bad[3, 1] = np.nan
        get_attack(name).fit(bad, ref)
    with pytest.raises(VrlibError, match="column"):
        get_attack(name).fit(syn, ref[:, :2])
    with pytest.raises(VrlibError, match="different columns"):
        get_attack(name).fit(pd.DataFrame(syn, columns=list("abc")), pd.DataFrame(ref, columns=list("abd")))
    fitted = get_attack(name).fit(syn, ref)
    with pytest.raises(VrlibError, match="column"):
        fitted.score(X[:, :2])
    with pytest.raises(VrlibError, match="NaN"):
        fitted.score(np.r_[X, [[np.nan] * 3]])
    with pytest.raises(VrlibError, match="not fitted"):
        get_attack(name).score(X)
    with pytest.raises(VrlibError, match="non-numeric"):
        get_attack(name).fit(pd.DataFrame({"a": ["x", "y", "z"], "b": [1.0, 2.0, 3.0]}), ref[:, :2])


@pytest.mark.parametrize("name", ["domias_kde", "domias_flow", "logan_d1", "gan_leaks_cal"])
def test_reference_based_attacks_need_a_reference(name):
    syn = np.random.default_rng(0).normal(size=(50, 2))
    with pytest.raises(VrlibError, match="row"):
        get_attack(name).fit(syn, np.empty((0, 2)))
    with pytest.raises(VrlibError, match="needs a reference"):
        get_attack(name).fit(syn, None)


# --------------------------------------------------------------------------- experiment helpers


def test_split_is_disjoint_and_nests_reference_sets():
    from vrlib.experiments.domias import split

    df = pd.DataFrame({"a": np.arange(100.0), "b": -np.arange(100.0)})
    parts = split(df, n_mem=10, n_ref=30, seed=3, n_holdout=20)
    ids = {k: set(v["a"]) for k, v in parts.items()}
    assert [len(ids[k]) for k in ("mem", "non", "holdout", "ref")] == [10, 10, 20, 30]
    assert sum(len(v) for v in ids.values()) == len(set().union(*ids.values()))  # disjoint
    smaller = split(df, n_mem=10, n_ref=12, seed=3)
    assert smaller["ref"]["a"].tolist() == parts["ref"]["a"].tolist()[-12:]  # the last rows of one shuffle
    assert smaller["mem"].equals(parts["mem"])
    with pytest.raises(VrlibError, match="lower the sizes"):
        split(df, n_mem=40, n_ref=30, seed=0)


def test_summarise_mean_std_seeds():
    from vrlib.experiments.domias import summarise

    df = pd.DataFrame({"n_mem": [30, 30, 50], "attack": ["x", "x", "x"], "auc": [0.6, 0.8, 0.5]})
    out = summarise(df, ["n_mem", "attack"])
    assert list(out.columns) == ["n_mem", "attack", "auc_mean", "auc_std", "n_seeds"]
    assert out.iloc[0].tolist() == [30, "x", pytest.approx(0.7), pytest.approx(0.1), 2]


def test_noise_sigma_reads_the_paper_values():
    from vrlib.experiments.domias import noise_sigma

    assert noise_sigma(3.9) == pytest.approx(3.9**0.5)  # the paper's text: a noise *variance*
    assert noise_sigma(3.9, "std") == 3.9
    with pytest.raises(VrlibError):
        noise_sigma(1.0, "var")


def test_fig6_public_domain_comes_from_the_reference_set_only():
    from vrlib.data import Schema
    from vrlib.experiments.domias import public_domain

    rng = np.random.default_rng(0)
    ref = pd.DataFrame({"a": rng.normal(size=1000), "b": rng.exponential(size=1000)})
    schema = Schema(continuous=("a", "b"))
    domain = public_domain(ref, schema, 10)
    for c in ("a", "b"):
        edges = np.asarray(domain[c])
        assert len(edges) == 11
        assert edges[0] == pytest.approx(ref[c].quantile(0.01)) and edges[-1] == pytest.approx(ref[c].quantile(0.99))
        counts = np.histogram(ref[c], edges)[0]
        assert counts[1:-1].min() >= 95 and counts[1:-1].max() <= 105  # quantile bins: equal reference mass
        assert 85 <= counts[0] <= 95 and 85 <= counts[-1] <= 95  # the end bins lose the trimmed 1 %


def test_score_keys_hash_only_the_density_estimator_each_attack_uses(monkeypatch):
    from vrlib import metrics
    from vrlib.experiments import domias_scoring
    from vrlib.experiments.profiles import profile_settings

    settings = profile_settings("domias", "smoke")
    names = ("domias_kde", "eq1_kde", "domias_flow", "eq1_flow", "logan_0", "mc")
    before = {n: domias_scoring.score_key("setting", n, settings, 0, 100) for n in names}
    assert len(set(before.values())) == len(names)
    # another file standing in for an edited bnaf.py: only the flow attacks' keys move
    monkeypatch.setitem(domias_scoring.ESTIMATOR_MODULES, "flow", metrics)
    after = {n: domias_scoring.score_key("setting", n, settings, 0, 100) for n in names}
    assert {n for n in names if after[n] != before[n]} == {"domias_flow", "eq1_flow"}
    monkeypatch.setitem(domias_scoring.ESTIMATOR_MODULES, "kde", metrics)
    assert domias_scoring.score_key("setting", "domias_kde", settings, 0, 100) != before["domias_kde"]


def test_score_keys_move_only_with_the_module_of_their_attack(monkeypatch):
    from pathlib import Path

    from vrlib.experiments import domias_scoring
    from vrlib.experiments.profiles import profile_settings

    settings = profile_settings("domias", "smoke")
    names = ("domias_kde", "eq1_kde", "logan_0", "logan_d1", "mc", "gan_leaks_cal")
    before = {n: domias_scoring.score_key("setting", n, settings, 0, 100) for n in names}
    read_bytes = Path.read_bytes

    def edited(module):
        # the file of ``module`` read with one more statement, as if someone had edited it
        def read(path):
            data = read_bytes(path)
            return data + b"\nEDITED = 1\n" if path.name == module else data

        return read

    for module, moved in [("logan.py", {"logan_0", "logan_d1"}), ("proximity.py", {"mc", "gan_leaks_cal"}),
                          ("pointwise.py", set(names))]:  # fmt: skip
        with monkeypatch.context() as m:
            m.setattr(Path, "read_bytes", edited(module))
            after = {n: domias_scoring.score_key("setting", n, settings, 0, 100) for n in names}
        assert {n for n in names if after[n] != before[n]} == moved, module


def test_published_logan_d1_applies_only_up_to_twice_the_smaller_set():
    from vrlib.experiments.domias_scoring import applies

    # its batches come from the first n_test rows of 2 · min(n_syn, n_ref) stacked rows
    assert applies("logan_d1_published", 200, 100, 1000) and applies("logan_d1_published", 200, 1000, 100)
    assert not applies("logan_d1_published", 201, 100, 1000) and not applies("logan_d1_published", 201, 1000, 100)
    assert applies("logan_d1", 201, 100, 1000) and applies("domias_kde", 10_000, 2, 2)
