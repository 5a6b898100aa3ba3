"""Stacked GAN fits (vrlib.generators.wgan_ensemble) against single fits of the same seeds."""

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from vrlib.data import Schema  # noqa: E402
from vrlib.errors import VrlibError  # noqa: E402
from vrlib.generators.adsgan import ADSGAN  # noqa: E402
from vrlib.generators.gan import GAN  # noqa: E402
from vrlib.generators.wgan import WGANGP, WGANWC  # noqa: E402
from vrlib.generators.wgan_ensemble import TRAINER, fit_wgan_ensemble  # noqa: E402

SCHEMA = Schema(categorical=("a", "b"), continuous=("c", "d"))


def table(seed: int, n: int, sign: float = 1.0) -> pd.DataFrame:
    """Two categorical columns (``a`` follows the sign of ``c``) and two correlated continuous ones."""
    r = np.random.default_rng(seed)
    c = r.normal(size=n)
    d = sign * 0.8 * c + 0.6 * r.normal(size=n)
    a = np.where(c + 0.3 * r.normal(size=n) > 0, "x", np.where(r.random(n) < 0.5, "y", "z"))
    return pd.DataFrame(
        {
            "a": pd.Categorical(a, categories=["x", "y", "z"]),
            "b": pd.Categorical(r.choice(["p", "q"], n), categories=["p", "q"]),
            "c": c,
            "d": d,
        }
    )


def gap(one, other) -> float:
    """Largest absolute difference between two fitted generators' weights and batch-norm statistics."""
    a, b = one.generator_.state_dict(), other.generator_.state_dict()
    return max(float((a[k].double() - b[k].double()).abs().max()) for k in a)


# members of different sizes (batches per epoch 4, 6, 4) and epochs (3, 2, 3): the stack must
# skip exactly the steps a member's single fit does not take
SIZES, EPOCHS, SEEDS = (230, 330, 240), (3, 2, 3), (11, 12, 13)


def singles_and_stack(cls, seeds=SEEDS, data_seeds=(0, 1, 2), **kw):
    dfs = [table(s, n) for s, n in zip(data_seeds, SIZES)]
    singles = [
        cls(epochs=e, batch_size=50, device="cpu", threads=1, **kw).fit(table(i, n), SCHEMA, s)
        for i, n, e, s in zip((0, 1, 2), SIZES, EPOCHS, SEEDS)
    ]
    stacked = fit_wgan_ensemble(
        [cls(epochs=e, batch_size=50, device="cpu", **kw) for e in EPOCHS], dfs, SCHEMA, list(seeds), rng="member"
    )
    return singles, stacked


@pytest.mark.parametrize("cls", [WGANGP, WGANWC, GAN])
def test_each_member_is_its_single_fit_up_to_rounding(cls):
    singles, stacked = singles_and_stack(cls)
    for one, member, epochs in zip(singles, stacked, EPOCHS):
        assert gap(one, member) < 5e-4  # observed at most 1e-4: float rounding of the batched products
        assert len(member.losses_) == epochs
        np.testing.assert_allclose(member.losses_.to_numpy(), one.losses_.to_numpy(), atol=1e-5)  # seen: 5e-7
        a, b = one.sample(300, seed=5), member.sample(300, seed=5)
        assert (a["a"] == b["a"]).mean() > 0.97 and (a["b"] == b["b"]).mean() > 0.97
        np.testing.assert_allclose(a["c"], b["c"], atol=0.05)


def test_a_wrong_seed_or_wrong_data_is_told_apart():
    """The comparison above can fail: a member fitted with another seed, or on another table, is far off."""
    singles, wrong_seed = singles_and_stack(WGANGP, seeds=(11, 99, 13))
    assert gap(singles[0], wrong_seed[0]) < 5e-4
    assert gap(singles[1], wrong_seed[1]) > 0.05  # seen: 0.83
    _, wrong_data = singles_and_stack(WGANGP, data_seeds=(0, 1, 7))
    assert gap(singles[2], wrong_data[2]) > 1e-3  # seen: 2e-3 (12 steps at lr 2e-4 move a weight at most 2.4e-3)
    assert np.abs(singles[2].losses_.to_numpy() - wrong_data[2].losses_.to_numpy()).max() > 1e-2  # seen: 0.12


def test_a_member_does_not_depend_on_its_stack_mates():
    alone = fit_wgan_ensemble([WGANGP(epochs=2, batch_size=50, device="cpu")], [table(0, 200)], SCHEMA, [4])
    mates = fit_wgan_ensemble(
        [WGANGP(epochs=2, batch_size=50, device="cpu") for _ in range(3)],
        [table(0, 200), table(5, 200), table(6, 300)],
        SCHEMA,
        [4, 8, 9],
    )
    assert gap(alone[0], mates[0]) < 1e-4


def test_fitted_members_behave_like_single_fits():
    (member,) = fit_wgan_ensemble([WGANGP(epochs=1, batch_size=50, device="cpu")], [table(0, 120)], SCHEMA, [3])
    out = member.sample(50, seed=2)
    assert list(out.columns) == ["a", "b", "c", "d"] and len(out) == 50
    assert out["a"].dtype == table(0, 5)["a"].dtype and out["c"].dtype == np.float64
    pd.testing.assert_frame_equal(out, member.sample(50, seed=2))
    encoded = member.sample_encoded(50, seed=2)
    assert encoded["codes"].shape == (50, 2) and encoded["continuous"].shape == (50, 2)
    assert member.trainer_ == f"{TRAINER}/member" and member.fitted_ and member.fit_seconds_ > 0


def _summary(fits, n=2000):
    """Per fit: the mean of ``c``, the correlation of ``c`` and ``d``, the share of ``a == "x"`` in its samples."""
    out = []
    for i, f in enumerate(fits):
        s = f.sample(n, seed=100 + i)
        out.append((s["c"].mean(), np.corrcoef(s["c"], s["d"])[0, 1], (s["a"] == "x").mean()))
    return np.array(out)


def _same_distribution(x, y) -> bool:
    """Every statistic's means within 4 standard errors of their difference (and 0.12, for the small samples)."""
    se = np.sqrt(x.var(axis=0, ddof=1) / len(x) + y.var(axis=0, ddof=1) / len(y))
    return bool((np.abs(x.mean(axis=0) - y.mean(axis=0)) < np.maximum(4 * se, 0.12)).all())


@pytest.mark.slow
def test_shared_randomness_trains_the_same_in_distribution():
    """``rng="shared"`` draws for the whole stack at once: not draw for draw, but the same fits in distribution."""
    seeds = list(range(5))
    kw = dict(epochs=30, batch_size=50, lr=1e-3, device="cpu")  # 180 steps: enough to learn corr(c, d) = 0.8
    train = table(0, 300)
    singles = [WGANGP(**kw, threads=1).fit(train, SCHEMA, s) for s in seeds]
    shared = fit_wgan_ensemble([WGANGP(**kw) for _ in seeds], [train] * 5, SCHEMA, seeds, rng="shared")
    assert all(m.trainer_ == f"{TRAINER}/shared" for m in shared)
    x, y = _summary(singles), _summary(shared)
    assert (x[:, 1] > 0.3).all()  # the fits learnt the correlation: the check below has something to see
    assert _same_distribution(x, y)
    # the same check says no when the stack is trained on the wrong table (the correlation's sign flipped)
    wrong = fit_wgan_ensemble([WGANGP(**kw) for _ in seeds], [table(0, 300, -1.0)] * 5, SCHEMA, seeds, rng="shared")
    assert not _same_distribution(x, _summary(wrong))


def test_bad_stacks_are_refused():
    with pytest.raises(VrlibError, match="one of each"):
        fit_wgan_ensemble([WGANGP(device="cpu")], [table(0, 50), table(1, 50)], SCHEMA, [0])
    with pytest.raises(VrlibError, match="only"):
        fit_wgan_ensemble([ADSGAN(device="cpu", epochs=1)], [table(0, 50)], SCHEMA, [0])
    with pytest.raises(VrlibError, match="class and shape"):
        fit_wgan_ensemble(
            [WGANGP(device="cpu", epochs=1), WGANGP(device="cpu", epochs=1, z_dim=16)],
            [table(0, 60), table(1, 60)],
            SCHEMA,
            [0, 1],
        )
    with pytest.raises(VrlibError, match="class and shape"):
        fit_wgan_ensemble(
            [WGANGP(device="cpu", epochs=1), WGANWC(device="cpu", epochs=1)], [table(0, 60)] * 2, SCHEMA, [0, 1]
        )
    with pytest.raises(VrlibError, match="rng"):
        fit_wgan_ensemble([WGANGP(device="cpu", epochs=1)], [table(0, 60)], SCHEMA, [0], rng="both")
    with pytest.raises(VrlibError, match="graph"):
        fit_wgan_ensemble([WGANGP(device="cpu", epochs=1)], [table(0, 60)], SCHEMA, [0], graph=True)
    assert fit_wgan_ensemble([], [], SCHEMA, []) == []


# --------------------------------------------------------------------------- the synthesis path and its cache


def _jobs(names=("wgan_gp", "wgan_gp", "gan")):
    from vrlib.synthesis import SynthesisJob

    params = dict(epochs=2, batch_size=50, device="cpu", threads=1)
    return [
        SynthesisJob(table(i, 150), SCHEMA, name, 80, 10 + i, 20 + i, params=params) for i, name in enumerate(names)
    ]


def test_stacked_datasets_are_the_single_fits_datasets_and_cached_apart(tmp_path, monkeypatch):
    from vrlib.cache import Cache
    from vrlib.generators import wgan_ensemble
    from vrlib.synthesis import synthesize

    store = Cache(root=tmp_path, namespace="synthetic")
    jobs = _jobs()
    stacked = wgan_ensemble.synthesize_stacked(jobs, cache=store, n_jobs=1)
    single = synthesize(jobs, cache=False, n_jobs=1, progress=False)  # one fit after the other
    for a, b in zip(stacked, single):
        assert (a["codes"] == b["codes"]).mean() > 0.97
        np.testing.assert_allclose(a["continuous"], b["continuous"], atol=0.05)
    keys = [wgan_ensemble.stacked_key(job) for job in jobs]
    assert len(set(keys)) == 3 and not set(keys) & {job.key for job in jobs}  # never read as a single fit's
    assert set(store.keys()) == set(keys)

    def no_fit(*args, **kwargs):
        raise AssertionError("fitted again instead of read from the cache")

    monkeypatch.setattr(wgan_ensemble, "fit_wgan_ensemble", no_fit)
    again = wgan_ensemble.synthesize_stacked(jobs, cache=store, n_jobs=1)
    for a, b in zip(stacked, again):
        np.testing.assert_array_equal(a["codes"], b["codes"])
        np.testing.assert_array_equal(a["continuous"], b["continuous"])


def test_only_gans_given_by_name_are_stacked():
    from vrlib.generators import wgan_ensemble

    with pytest.raises(VrlibError, match="synthesize_stacked"):
        wgan_ensemble.synthesize_stacked(_jobs(("wgan_gp", "noise")), cache=False, n_jobs=1)


def test_the_trainer_is_opt_in(monkeypatch):
    from vrlib.generators.wgan_ensemble import gan_trainer

    monkeypatch.delenv("VRLIB_GAN_TRAINER", raising=False)
    assert gan_trainer({}) == "single" and gan_trainer(None) == "single"
    assert gan_trainer({"gan_trainer": "ensemble"}) == "ensemble"
    monkeypatch.setenv("VRLIB_GAN_TRAINER", "ensemble")
    assert gan_trainer({}) == "ensemble"
    monkeypatch.setenv("VRLIB_GAN_TRAINER", "stacked")
    with pytest.raises(VrlibError, match="VRLIB_GAN_TRAINER"):
        gan_trainer({})


def test_domias_synthesis_stacks_the_gans_when_asked(tmp_path, monkeypatch):
    from vrlib.experiments import domias
    from vrlib.generators import wgan_ensemble

    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path))
    calls = []
    real = wgan_ensemble.synthesize_stacked

    def spy(jobs, **kwargs):
        calls.append([job.spec.name for job in jobs])
        return real(jobs, **kwargs)

    monkeypatch.setattr(wgan_ensemble, "synthesize_stacked", spy)
    params = dict(epochs=1, batch_size=50, device="cpu")
    jobs = [
        dict(train=table(i, 100), schema=SCHEMA, generator=g, params=params if g != "noise" else {}, n=40, seed=i)
        for i, g in enumerate(("wgan_gp", "noise", "wgan_gp"))
    ]
    single = domias.synthesize(jobs, cache=False, n_jobs=1, settings={})
    assert calls == []
    both = domias.synthesize(jobs, cache=False, n_jobs=1, settings={"gan_trainer": "ensemble"})
    assert calls == [["wgan_gp", "wgan_gp"]]
    pd.testing.assert_frame_equal(single[1], both[1])  # the other generators as before
    for i in (0, 2):
        assert list(both[i].columns) == list(single[i].columns) and len(both[i]) == 40
        assert (both[i]["a"] == single[i]["a"]).mean() > 0.97


def test_fig6_runs_with_stacked_gans(tmp_path, monkeypatch):
    """DOMIAS Fig. 6 end to end with its WGAN-GP fits stacked: the same rows and columns as with single fits."""
    from vrlib.experiments import domias

    rng = np.random.default_rng(3)
    small = pd.DataFrame(rng.normal(size=(1500, 3)), columns=["a", "b", "c"]), Schema([], ["a", "b", "c"])
    monkeypatch.setattr(domias, "california", lambda: small)
    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path))
    kw = dict(profile="smoke", n_jobs=1, seeds=(0, 1), n_mem=50, n_ref=300, n_syn=200, n_holdout=200)
    kw.update(fig6_generators=("wgan_gp", "noise"), noise_scales=(1.0,), fig6_attacks=("domias_kde",))
    monkeypatch.delenv("VRLIB_GAN_TRAINER", raising=False)
    single = domias.fig6(**kw)
    monkeypatch.setenv("VRLIB_GAN_TRAINER", "ensemble")
    stacked = domias.fig6(**kw)
    assert stacked.shape == single.shape and list(stacked.columns) == list(single.columns)
    pd.testing.assert_frame_equal(
        stacked[stacked.family == "noise"], single[single.family == "noise"], check_exact=False
    )
    gan = stacked[stacked.family == "wgan_gp"]
    assert len(gan) == 2 and gan.auc.between(0, 1).all()
    # one epoch of one batch: the stacked members' synthetic data are their single fits' up to rounding
    np.testing.assert_allclose(gan.wd_sliced, single[single.family == "wgan_gp"].wd_sliced, rtol=1e-3)
