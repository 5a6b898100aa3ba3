"""Lost in the Averages: metrics against hand-made cases, the model-seeded game's datasets, a null generator."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from test_games import Bootstrap, make_table
from vrlib import metrics
from vrlib.errors import VrlibError
from vrlib.experiments import lost
from vrlib.games import TraditionalGame

SETTINGS = dict(
    n_records=50, n_synth=40, n_shadow=20, n_games=20, n_runs=2, n_queries=1000, n_targets=20, epsilons=(math.inf,)
)


# --------------------------------------------------------------------------- metrics


def test_rmsd_hand_case():
    assert metrics.rmsd([0.5, 0.7], [0.6, 0.4]) == pytest.approx(math.sqrt((0.1**2 + 0.3**2) / 2))
    assert metrics.rmsd([0.7, 0.7, 0.9], [0.7, 0.7, 0.9]) == 0.0
    with pytest.raises(VrlibError, match="equal"):
        metrics.rmsd([0.5, 0.6], [0.5])
    with pytest.raises(VrlibError, match="NaN"):
        metrics.rmsd([0.5, np.nan], [0.5, 0.6])


def test_miss_rate_hand_case():
    model_seeded = [0.9, 0.85, 0.7, 0.5, 0.8]
    traditional = [0.6, 0.9, 0.85, 0.99, 0.79]
    # t = 0.8: high-risk records are 0, 1 and 4 (>= counts); 0 and 4 fall below 0.8 in the other game.
    assert metrics.miss_rate(model_seeded, traditional, 0.8) == pytest.approx(2 / 3)
    # t = 0.6: high-risk 0, 1, 2, 4; none below 0.6 (0.6 itself is not below).
    assert metrics.miss_rate(model_seeded, traditional, 0.6) == 0.0
    # t = 0.95: no high-risk record, the rate is undefined.
    assert math.isnan(metrics.miss_rate(model_seeded, traditional, 0.95))
    # Not symmetric: the first argument defines "high risk" (here all five at t = 0.6; record 3 falls below).
    assert metrics.miss_rate(traditional, model_seeded, 0.6) == pytest.approx(1 / 5)


@pytest.mark.parametrize("t", [0.5, 1.0, 0.3, 1.2, True, "0.8"])
def test_threshold_outside_open_interval(t):
    with pytest.raises(VrlibError, match=r"threshold t .*\(0.5, 1\)"):
        metrics.miss_rate([0.9], [0.1], t)


def test_estimation_bound():
    # SPEC §4: N = 200, rho = 0.05 gives ±0.096.
    assert metrics.estimation_bound(200, 0.05) == pytest.approx(0.096, abs=5e-4)
    assert metrics.estimation_bound(800) == pytest.approx(metrics.estimation_bound(200) / 2)
    with pytest.raises(VrlibError, match="n_games"):
        metrics.estimation_bound(0)


def test_run_ids_are_consecutive_slices_of_each_side():
    labels = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0])
    assert lost.run_ids(labels, 2).tolist() == [0, 0, 1, 1, 0, 0, 0, 1, 1]
    assert lost.run_ids(labels, 1).tolist() == [0] * 9


def test_summaries_hand_case():
    rows = []
    values = {  # record -> (T0, T1, MS0, MS1)
        "a": (0.6, 0.7, 0.9, 0.8),
        "b": (0.5, 0.5, 0.5, 0.6),
    }
    for rec, (t0, t1, m0, m1) in values.items():
        for game, run, auc in (
            ("traditional", 0, t0),
            ("traditional", 1, t1),
            ("model-seeded", 0, m0),
            ("model-seeded", 1, m1),
        ):
            rows.append(dict(record=rec, game=game, run=run, n_games=10, auc=auc))
    res = pd.DataFrame(rows)
    s = lost.summarise_rmsd(res).iloc[0]
    assert s.rmsd == pytest.approx(math.sqrt((0.3**2 + 0) / 2))
    assert s.floor_traditional == pytest.approx(math.sqrt(0.1**2 / 2))
    assert s.floor_model_seeded == pytest.approx(math.sqrt((0.1**2 + 0.1**2) / 2))
    assert s.floor == pytest.approx(math.sqrt((0.005 + 0.01) / 2))
    assert s.rmsd_beyond_noise == pytest.approx(math.sqrt(0.045 - 0.0075))
    m = lost.summarise_miss(res, thresholds=(0.8,)).iloc[0]
    assert (m.n_high, m.miss_rate, m.miss_rate_noise) == (1, 1.0, 0.0)


def _boot_frame(rng, n_records=4, n_boot=30, noisy_run0=0.0):
    """A results frame made here: per record, game and run an AUC and ``n_boot`` replicates, the rows shuffled.
    ``noisy_run0``: the sd of an extra noise on run 0 of the traditional game, which the RMSD and the floor share
    (both grow with it in a replicate: they move together)."""
    extra = rng.normal(0, noisy_run0, (n_records, n_boot))
    rows = []
    for i in range(n_records):
        for game in lost.GAMES:
            for run in (0, 1):
                boot = (
                    0.6
                    + 0.1 * (game == "model-seeded")
                    + rng.normal(0, 0.05, n_boot)
                    + (run == 0 and game == "traditional") * extra[i]
                )
                rows.append(dict(record=f"r{i}", game=game, run=run, n_games=10, auc=float(boot.mean()), auc_boot=boot))
    order = rng.permutation(len(rows))
    return pd.DataFrame([rows[k] for k in order])


def _brute_force_se(res):
    """The floor's and rmsd − floor's bootstrap se, one replicate and one record at a time."""
    recs = sorted(res.record.unique())
    get = {(r.record, r.game, r.run): r.auc_boot for r in res.itertuples()}
    n_boot = len(res.auc_boot.iloc[0])
    floors, excess = [], []
    for b in range(n_boot):
        sq = {"rmsd": 0.0, "traditional": 0.0, "model-seeded": 0.0}
        for rec in recs:
            sq["rmsd"] += (get[rec, "traditional", 0][b] - get[rec, "model-seeded", 0][b]) ** 2
            for g in lost.GAMES:
                sq[g] += (get[rec, g, 0][b] - get[rec, g, 1][b]) ** 2
        rmsd = math.sqrt(sq["rmsd"] / len(recs))
        floor = math.sqrt((sq["traditional"] / len(recs) + sq["model-seeded"] / len(recs)) / 2)
        floors.append(floor)
        excess.append(rmsd - floor)
    return float(np.std(floors, ddof=1)), float(np.std(excess, ddof=1))


def test_floor_and_excess_se_against_a_brute_force_loop():
    rng = np.random.default_rng(5)
    res = _boot_frame(rng, noisy_run0=0.3)
    s = lost.summarise_rmsd(res).iloc[0]
    floor_se, excess_se = _brute_force_se(res)
    assert s.floor_se == pytest.approx(floor_se, rel=1e-12)
    assert s.excess_se == pytest.approx(excess_se, rel=1e-12)
    # The covariance is kept: with run 0's noise shared, the RMSD and the floor move together and the difference's
    # se is well below the se of two independent estimates (the check fails for a hypot of the two).
    assert s.excess_se < 0.8 * np.hypot(s.rmsd_se, s.floor_se)
    # Per setting: two settings made apart give their own se (a frame's records are not pooled across settings).
    other = _boot_frame(np.random.default_rng(6)).assign(generator="b")
    both = lost.summarise_rmsd(pd.concat([res.assign(generator="a"), other]), by=["generator"]).set_index("generator")
    assert both.loc["a", "floor_se"] == pytest.approx(floor_se, rel=1e-12)
    assert both.loc["b", "excess_se"] == pytest.approx(_brute_force_se(other)[1], rel=1e-12)
    assert both.loc["b", "excess_se"] != pytest.approx(excess_se, rel=1e-3)


def test_floor_se_is_nan_without_replicates_or_a_second_run():
    res = _boot_frame(np.random.default_rng(7))
    s = lost.summarise_rmsd(res.drop(columns="auc_boot")).iloc[0]
    assert np.isnan(s.floor_se) and np.isnan(s.excess_se) and np.isfinite(s.floor)
    one_run = lost.summarise_rmsd(res[res.run == 0]).iloc[0]
    assert np.isnan(one_run.floor_se) and np.isnan(one_run.excess_se) and np.isfinite(one_run.rmsd_se)


# --------------------------------------------------------------------------- the model-seeded game's datasets


def _game(out_side="reference", gen=None, **kw):
    df, schema = make_table()
    settings = lost.settings_for("smoke", **{**SETTINGS, **kw})
    game = lost.make_game("test", df, schema, gen or Bootstrap(), None, settings, seed=3, out_side=out_side, n_jobs=1)
    game.cache_ = None  # tests make their own datasets
    return game, settings


@pytest.mark.parametrize("out_side", ["reference", "none"])
def test_model_seeded_datasets(out_side):
    game, settings = _game(out_side)
    d = np.sort(game.data_.index.get_indexer(game.dataset_index_))
    records = lost.choose_records(game, 5, seed=3)
    assert set(records) <= set(game.dataset_index_)
    ref = None if out_side == "none" else game.data_.index.get_loc(game.reference_index_)
    in_keys = None
    for x in records:
        plans = game.test_plans(x)
        assert len(plans) == settings["n_games"] * settings["n_runs"]
        ins = [p for p in plans if p.label == 1]
        outs = [p for p in plans if p.label == 0]
        for p in ins:  # IN: exactly D, the same datasets for every record
            np.testing.assert_array_equal(p.rows, d)
        keys = [p.key for p in ins]
        assert in_keys is None or keys == in_keys
        in_keys = keys
        px = game.data_.index.get_loc(x)
        for p in outs:  # OUT: D with x swapped for the reference (or just without x)
            assert set(d) - set(p.rows) == {px}
            assert set(p.rows) - set(d) == (set() if ref is None else {ref})
        # Fresh seeds: no two datasets of the game share a fit or sample seed.
        assert len({p.fit_seed for p in plans}) == len(plans)
        assert len({p.sample_seed for p in plans}) == len(plans)
    # The runs are disjoint draws: no seed of run 0 is used in run 1.
    runs = lost.run_ids([p.label for p in plans], settings["n_runs"])
    seeds = [{p.fit_seed for p, r in zip(plans, runs) if r == k} for k in (0, 1)]
    assert not seeds[0] & seeds[1]
    trad = TraditionalGame.test_plans(game, records[0])
    truns = lost.run_ids([p.label for p in trad], settings["n_runs"])
    rows = [{tuple(p.rows) for p, r in zip(trad, truns) if r == k} for k in (0, 1)]
    assert not rows[0] & rows[1]


def test_shared_side_fitted_once(monkeypatch, tmp_path):
    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path))
    game, settings = _game(n_games=4, n_runs=2, n_shadow=4)
    records = lost.choose_records(game, 3, seed=3)
    Bootstrap.fits = 0
    lost.attack_records(game, records, settings, seed=3, progress=False)
    plans = [
        p for r in records for p in game.shadow_plans(r) + TraditionalGame.test_plans(game, r) + game.test_plans(r)
    ]
    assert len(plans) == 3 * (4 + 8 + 8)
    # One fit per distinct dataset: the shared ones (model-seeded IN, OUT of shadow and traditional test) once.
    assert Bootstrap.fits == len({p.key for p in plans})
    per_record = 2 + 4 + 4  # shadow IN, traditional test IN, model-seeded OUT
    shared = 2 + 4 + 4  # shadow OUT, traditional test OUT, model-seeded IN (an OUT draw holding a record is redrawn)
    assert 3 * per_record + shared <= Bootstrap.fits <= 3 * per_record + shared + 3
    Bootstrap.fits = 0
    again = lost.attack_records(game, records, settings, seed=3, progress=False)  # from the cache
    assert Bootstrap.fits == 0 and set(again) == set(records)


def test_a_stopped_run_resumes_where_it_was(monkeypatch, tmp_path):
    from vrlib.cache import Cache

    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path / "a"))
    game, settings = _game(n_games=4, n_runs=2, n_shadow=4)
    game.cache_ = Cache(tmp_path / "a", "synthetic")
    records = lost.choose_records(game, 3, seed=3)
    real = lost.make_attack
    attacked = []

    def stops_at_the_third(*args, **kwargs):
        if len(attacked) == 2:
            raise KeyboardInterrupt("stopped")
        attacked.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(lost, "make_attack", stops_at_the_third)
    with pytest.raises(KeyboardInterrupt):
        lost.attack_records(game, records, settings, seed=3, progress=False)
    monkeypatch.setattr(lost, "make_attack", real)
    # Cached: the shared datasets and two records' results, not the records' own datasets.
    shared = {p.key for r in records for p in game.shared_plans(r, game.SIDES)}
    assert all(game.cache_.get(k) is not None for k in shared)
    own = [p for p in game.plan(records[0], game.SIDES).shadow if p.key not in shared]
    assert own and all(game.cache_.get(p.key) is None for p in own)
    Bootstrap.fits = 0
    resumed = lost.attack_records(game, records, settings, seed=3, progress=False)
    assert Bootstrap.fits == 2 + 4 + 4  # only the third record's own datasets: shadow IN, test IN, model-seeded OUT
    # The same results as a run that was never stopped.
    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path / "b"))
    fresh_game, _ = _game(n_games=4, n_runs=2, n_shadow=4)
    fresh = lost.attack_records(fresh_game, records, settings, seed=3, progress=False)
    for r in records:
        for k, v in fresh[r].items():
            np.testing.assert_array_equal(resumed[r][k], v)


def test_choose_records_is_a_seeded_order_and_draws_are_forgotten():
    game, settings = _game(n_games=4, n_runs=2, n_shadow=4)
    five = lost.choose_records(game, 5, seed=3)
    assert five == lost.choose_records(game, 5, seed=3)  # deterministic
    assert lost.choose_records(game, 2, seed=3) == five[:2]  # fewer records: a prefix of more
    assert set(five) <= set(game.dataset_index_) and len(set(five)) == 5
    assert lost.choose_records(game, 5, seed=4) != five  # another seed, another order
    assert sorted(lost.choose_records(game, 10**6, seed=3)) == sorted(game.dataset_index_)  # all of D

    def plan_and_forget(r):  # what play does with each target
        game.plan(r, game.SIDES)
        game.forget(r)

    plan_and_forget(five[0])
    before = len(game._draws)
    for r in five[1:]:
        plan_and_forget(r)
    # Only the shared streams' draws stay (a few more OUT draws where a record was skipped), not each record's own.
    assert len(game._draws) <= before + 4
    assert not any(k[1].startswith("in-for-") for k in game._draws)


def test_each_game_is_scored_on_its_own_test_datasets(monkeypatch, tmp_path):
    # The scores stored for each game are the attack's on that game's test datasets, rebuilt here.
    from vrlib import parallel
    from vrlib.experiments.achilles import make_attack

    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path))
    game, settings = _game(n_games=6, n_runs=1, n_shadow=6)
    records = lost.choose_records(game, 2, seed=3)
    arrays = lost.attack_records(game, records, settings, seed=3, progress=False)
    for r in records:
        shadow = game.shadow(r)
        model = make_attack("query", game.schema_, settings, parallel.derive_seed(3, "lost attack", str(r)))
        model.fit(shadow, shadow.labels, game.data_.loc[[r]])
        for prefix, test in (("traditional", game.traditional_test(r)), ("model_seeded", game.test(r))):
            np.testing.assert_array_equal(arrays[r][f"{prefix}_labels"], test.labels)
            np.testing.assert_array_equal(arrays[r][f"{prefix}_scores"], model.predict_proba(test))


# --------------------------------------------------------------------------- a generator that ignores its data


class IgnoresData:
    """Samples every column independently from a fixed distribution: the output carries nothing of the input."""

    def fit(self, df, schema, seed):
        self.dtypes_ = {c: df[c].dtype for c in df.columns}
        return self

    def sample(self, n, seed):
        rng = np.random.default_rng(seed)
        out = {}
        for c, dtype in self.dtypes_.items():
            if isinstance(dtype, pd.CategoricalDtype):
                out[c] = pd.Categorical.from_codes(rng.integers(len(dtype.categories), size=n), dtype=dtype)
            else:
                out[c] = rng.integers(0, 10, size=n).astype(float)
        return pd.DataFrame(out)


def _attack(game, settings, n_targets, seed=3):
    records = lost.choose_records(game, n_targets, seed=seed)
    arrays = lost.attack_records(game, records, settings, seed=seed, progress=False)
    return pd.DataFrame([row for r in records for row in lost._rows(arrays[r], r, game.seed)])


def _deviation_over_noise(res):
    """Per game: RMS distance of the risks (run 0) from 0.5, over the noise sd of one run (floor / sqrt 2)."""
    s = lost.summarise_rmsd(res).iloc[0]
    w = lost.risks(res)
    floors = {"traditional": s.floor_traditional, "model-seeded": s.floor_model_seeded}
    return {g: float(np.sqrt(np.mean((w[(g, 0)] - 0.5) ** 2)) / (f / np.sqrt(2))) for g, f in floors.items()}


def test_null_generator_gives_chance_risk_and_noise_level_disagreement(monkeypatch, tmp_path):
    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path))
    game, settings = _game(gen=IgnoresData())
    res = _attack(game, settings, 30)
    assert set(res.n_games) == {settings["n_games"]}
    for game_name in lost.GAMES:
        # Records share test datasets, so their risks' errors are correlated and the mean
        # strays from 0.5 nearly as far as one record's risk does (sd ~0.13 here).
        assert abs(res[res.game == game_name].auc.mean() - 0.5) < 0.15
    # Each record's risk is 0.5 up to estimation noise ...
    for game_name, ratio in _deviation_over_noise(res).items():
        assert ratio < 1.6, (game_name, ratio)
    # ... and the two games disagree as much as two runs of one game do.
    s = lost.summarise_rmsd(res).iloc[0]
    assert 0.6 < s.rmsd / s.floor < 1.5, s.to_dict()


def test_leaky_generator_is_not_at_chance(monkeypatch, tmp_path):
    """The control of the test above: a generator that copies its training rows is attacked well above chance."""
    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path))
    game, settings = _game(gen=Bootstrap(), n_synth=200)
    res = _attack(game, settings, 10)
    assert res[res.game == "model-seeded"].auc.mean() > 0.65
    assert _deviation_over_noise(res)["model-seeded"] > 2


def test_miss_rate_of_pure_noise_is_the_noise_floor():
    """Two games with identical risks plus independent noise: the miss rate equals the run-vs-run one."""
    rng = np.random.default_rng(0)
    true = rng.uniform(0.5, 0.9, 4000)
    rows = []
    for game in lost.GAMES:
        for run in (0, 1):
            auc = true + rng.normal(0, 0.05, len(true))
            rows += [dict(record=i, game=game, run=run, n_games=50, auc=a) for i, a in enumerate(auc)]
    res = pd.DataFrame(rows)
    m = lost.summarise_miss(res)
    assert (m.miss_rate > 0.05).all()  # noise alone misses records near every threshold
    np.testing.assert_allclose(m.miss_rate, m.miss_rate_noise, atol=0.05)
    s = lost.summarise_rmsd(res).iloc[0]
    assert s.rmsd == pytest.approx(0.05 * np.sqrt(2), rel=0.05)
    assert s.rmsd_beyond_noise < 0.02


# --------------------------------------------------------------------------- bad input


def test_bad_records():
    game, _ = _game()
    with pytest.raises(VrlibError, match="D_aux"):
        lost.check_records(game, [game.aux_index_[0]])
    outside = [t for t in game.test_index_ if t not in set(game.dataset_index_)][0]
    with pytest.raises(VrlibError, match="not in D"):
        lost.check_records(game, [outside])
    with pytest.raises(VrlibError, match="not an index label"):
        lost.check_records(game, [10**9])
    with pytest.raises(VrlibError, match="twice"):
        lost.check_records(game, [game.dataset_index_[0]] * 2)


def test_bad_settings():
    with pytest.raises(VrlibError, match=r"n_records=400 \(\|D\|\) .*\[2, 374\]"):
        _game(n_records=400)
    with pytest.raises(VrlibError, match="n_games=3 gives fewer than 2 games per side"):
        _game(n_games=3)
    with pytest.raises(VrlibError, match="epsilon must be a positive number"):
        _game(epsilons=(0.0,))
    with pytest.raises(VrlibError, match="epsilon"):
        lost.generator_for("synthpop", -1)
    with pytest.raises(VrlibError, match="out_side"):
        _game(out_side="other")
    assert lost.generator_for("synthpop", math.inf) == ("baynet", None)
    assert lost.generator_for("synthpop", 10) == ("privbayes", {"epsilon": 10.0})


def test_profiles_and_paper_values():
    for profile in ("smoke", "quick", "paper"):
        s = lost.settings_for(profile)
        assert s["n_games"] >= 4 and s["n_runs"] == 2
    assert lost.profile_settings("lost", "paper")["n_games"] == 200
    paper = lost.paper_values()
    assert {"quantity", "t", "low", "high", "statement"} <= set(paper.columns)
    assert paper.loc[paper.t == 0.8, "high"].item() == 0.94
    assert not paper.duplicated(["quantity", "t"]).any()  # one statement per quantity and threshold
    assert {"miss_rate_trend_t", "rmsd_trend_size", "rmsd_at_10000", "risk_to_chance", "rmsd_trend_epsilon"} <= set(
        paper.quantity
    )


def test_sizes_beside_the_authors():
    paper = lost.sizes_vs_authors(lost.settings_for("paper"), n_aux=30_000).set_index("size")
    assert (paper.ratio == 1).all() and (paper.ours == paper.authors).all()
    quick = lost.sizes_vs_authors(lost.settings_for("quick", n_shadow=250), n_aux=15_000).set_index("size")
    assert quick.loc["shadow datasets per record", "ratio"] == 0.25
    assert quick.loc["auxiliary records (D_aux)", "ratio"] == 0.5
    assert quick.loc["test games per risk estimate and run", "ours"] == lost.settings_for("quick")["n_games"]


def test_sweep_records_and_the_notebook_parts():
    paper = lost.settings_for("paper")
    assert lost.sweep_records(paper) == 1000
    assert lost.sweep_records(paper, 10_000) == dict(paper["size_targets"])[10_000] < 1000
    assert lost.sweep_records(paper, 100) == 100  # never more than the records of D
    parts = lost.notebook_parts(paper).set_index("part")
    # The sweeps at the profile's |D| reuse the headline's records (same game, cached): nothing new.
    assert (
        parts.loc["Fig. 3, |D| = 1,000", "new_records"] == 0 and parts.loc["Fig. 4, epsilon = inf", "new_records"] == 0
    )
    assert parts.loc["Fig. 3, |D| = 10,000", "records"] == lost.sweep_records(paper, 10_000)
    assert parts.loc["Fig. 5", "new_games"] == paper["n_datasets"]
    # The ε sweep and Census on fewer records than the headline, by the profile's rule.
    assert parts.loc["Fig. 4, epsilon = 1", "records"] == paper["epsilon_targets"] == lost.epsilon_records(paper) < 1000
    assert "Census, synthpop" not in parts.index
    census = lost.notebook_parts(paper, census=True).set_index("part").loc["Census, synthpop"]
    assert (census.dataset, census.records, census.new_records) == ("census", paper["census_targets"], 250)
    assert lost.epsilon_records(lost.settings_for("paper", epsilon_targets=5000)) == 1000  # never above the sweeps'
    assert lost.census_records(lost.settings_for("quick", n_targets=7)) == 7
    costs = pd.DataFrame(
        [
            dict(
                dataset="adult",
                generator="synthpop",
                epsilon=np.nan,
                n_records=1000,
                record_cpu_s=10.0,
                shared_cpu_s=100.0,
                seeded_in_cpu_s=20.0,
            )
        ]
    )
    one = lost.predicted_cost(lost.notebook_parts(paper).iloc[:1], costs, workers=2).iloc[0]
    assert one.cpu_hours == pytest.approx((1000 * 10 + 100) / 3600) and one.hours_on_workers == one.cpu_hours / 2
    fig5 = lost.predicted_cost(lost.notebook_parts(paper).query("part == 'Fig. 5'"), costs).iloc[0]
    assert fig5.cpu_hours == pytest.approx(paper["n_datasets"] * (10 + 20) / 3600)
    with pytest.raises(VrlibError, match="no measured cost"):
        lost.predicted_cost(lost.notebook_parts(paper), costs)
    with pytest.raises(VrlibError, match="size_targets"):
        lost.settings_for("quick", size_targets=((100, 0),))
    with pytest.raises(VrlibError, match="epsilon_targets"):
        lost.settings_for("quick", epsilon_targets=0)
    with pytest.raises(VrlibError, match="census_variant must be one of"):
        lost.settings_for("quick", census_variant="first5000")


def test_measured_record_cost_on_adult(tmp_path, monkeypatch):
    from conftest import require_real

    require_real("adult.data", "adult.test")
    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path / "cache"))
    cost = lost.measure_record_cost("adult", "baynet", profile="smoke", fraction=0.5)
    assert cost["record_cpu_s"] > 0 and cost["shared_cpu_s"] >= cost["seeded_in_cpu_s"] >= 0
    assert not (tmp_path / "cache").exists()  # measured in a cache of its own
    with pytest.raises(VrlibError, match="fraction"):
        lost.measure_record_cost("adult", "baynet", profile="smoke", fraction=0)


def test_bad_input_of_the_experiments_on_adult():
    from conftest import require_real

    require_real("adult.data", "adult.test")
    df, schema = lost.load_omega("adult", 4000, 0)
    settings = lost.settings_for("smoke")
    game = lost.make_game("adult", df, schema, "baynet", None, settings, seed=0)
    with pytest.raises(VrlibError, match="D_aux"):
        lost.compare_games("adult", "baynet", profile="smoke", records=[game.aux_index_[0]], progress=False)
    with pytest.raises(VrlibError, match="D_aux"):
        lost.record_across_datasets(game.aux_index_[0], "adult", "baynet", profile="smoke", progress=False)
    with pytest.raises(VrlibError, match=r"n_records=1000 \(\|D\|\) must be smaller than D_test \(1000 records"):
        lost.compare_games("adult", "baynet", profile="smoke", n_records=1000, progress=False)
    with pytest.raises(VrlibError, match="epsilon"):
        lost.compare_games("adult", "baynet", epsilon=0, profile="smoke", progress=False)
    with pytest.raises(VrlibError, match="n_datasets"):
        lost.record_across_datasets(game.test_index_[0], "adult", "baynet", n_datasets=0, profile="smoke")


@pytest.mark.slow
@pytest.mark.realdata
def test_compare_games_on_a_dask_cluster_without_shared_disk(tmp_path, monkeypatch):
    """Generator fits on workers with a cache folder of their own: the same risks as a local run; only the client writes."""
    from conftest import cluster_without_shared_disk, fitted_in_the_client, require_real
    from vrlib.generators.bayesnet import BayNet

    require_real("adult.data", "adult.test")
    small = dict(profile="smoke", n_targets=2, n_shadow=10, n_games=6, progress=False)
    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path / "local"))
    local = lost.compare_games("adult", "baynet", n_jobs=1, **small)
    with cluster_without_shared_disk(tmp_path, monkeypatch) as workers_cache:
        monkeypatch.setattr(BayNet, "fit", fitted_in_the_client)
        remote = lost.compare_games("adult", "baynet", **small)
    pd.testing.assert_frame_equal(remote, local)
    assert any((tmp_path / "client").rglob("*.npz"))  # the client wrote the cache...
    assert not workers_cache.exists() or not any(workers_cache.rglob("*.npz"))  # ...the workers never did


# --------------------------------------------------------------------------- intervals


def test_auc_rows_is_the_auc_of_each_row_ties_included():
    rng = np.random.default_rng(3)
    member = rng.integers(0, 4, (5, 7)).astype(float)  # small integers: many ties
    other = rng.integers(0, 4, (5, 6)).astype(float)
    got = metrics.auc_rows(member, other)
    for i in range(5):
        labels = np.r_[np.ones(7), np.zeros(6)]
        assert got[i] == pytest.approx(metrics.auc(labels, np.r_[member[i], other[i]]))
    assert metrics.auc_rows([[2.0, 3.0]], [[1.0, 2.0]])[0] == pytest.approx((1 + 1 + 0.5 + 1) / 4)  # by hand
    with pytest.raises(VrlibError, match="same leading shape"):
        metrics.auc_rows(np.ones((2, 3)), np.ones((3, 3)))


def _null_record(rng, separation, shared, n_per_side=30, n_runs=2):
    """Arrays of one record as attack_records gives them, both games the same process (no signal).

    Traditional OUT and model-seeded IN datasets are shared by all records (``shared``: their
    effects, in draw order); the rest is the record's own."""
    n = n_per_side * n_runs
    labels = np.r_[np.ones(n), np.zeros(n)].astype(int)
    runs = lost.run_ids(labels, n_runs)
    own = lambda: rng.normal(size=n)  # noqa: E731
    traditional = np.r_[separation + own(), 0.8 * shared["traditional"] + 0.6 * own()]
    seeded = np.r_[separation + 0.8 * shared["model-seeded"] + 0.6 * own(), own()]
    arrays = {}
    for game, scores in (("traditional", traditional), ("model_seeded", seeded)):
        arrays.update({f"{game}_labels": labels, f"{game}_scores": scores, f"{game}_runs": runs})
    return arrays


def _null_experiment(rng, separations, n_per_side=30):
    n = n_per_side * 2
    shared = {g: rng.normal(size=n) for g in lost.GAMES}
    rows = []
    for i, d in enumerate(separations):
        rows += lost._rows(_null_record(rng, d, shared, n_per_side), f"r{i}", seed=0)
    return pd.DataFrame(rows)


def test_bootstrap_replicates_share_positions_across_records():
    rng = np.random.default_rng(0)
    shared = {g: rng.normal(size=20) for g in lost.GAMES}
    arrays = _null_record(rng, 1.0, shared, n_per_side=10)
    labels, scores, runs = (arrays[f"traditional_{k}"] for k in ("labels", "scores", "runs"))
    a, b, c = (lost.bootstrap_aucs(labels, scores, runs, seed, "g") for seed in (0, 0, 1))
    assert set(a) == {0, 1} and a[0].shape == (lost.N_BOOT,)
    assert np.array_equal(a[0], b[0]) and not np.array_equal(a[0], c[0])  # positions from (seed, game, run) alone
    assert not np.array_equal(a[0], a[1])
    point = metrics.auc(labels[runs == 0], scores[runs == 0])
    assert abs(a[0].mean() - point) < 3 * a[0].std() / np.sqrt(lost.N_BOOT) + 0.02  # centred on the estimate


def test_intervals_cover_their_expectation_without_signal(monkeypatch):
    """Both games the same process: over repeated experiments, the miss rate's percentile interval
    and the RMSD's normal interval cover the mean of their estimates at about the nominal rate. The
    replicates' RMSD itself sits above the estimate (resampling adds noise), hence no percentile interval there."""
    monkeypatch.setattr(lost, "N_BOOT", 80)
    rng = np.random.default_rng(1)
    separations = rng.gamma(1.0, 0.7, 30)
    stats = []
    for _ in range(30):
        results = _null_experiment(rng, separations, n_per_side=25)
        rmsd = lost.summarise_rmsd(results).iloc[0]
        miss = lost.summarise_miss(results, thresholds=(0.7,)).iloc[0]
        w = results[results.run == 0].set_index(["record", "game"])["auc_boot"].unstack()
        replicates = np.sqrt(np.mean((np.stack(w["traditional"]) - np.stack(w["model-seeded"])) ** 2, axis=0))
        stats.append((rmsd.rmsd, rmsd.rmsd_low, rmsd.rmsd_high, replicates.mean(), miss.miss_rate,
                      miss.miss_rate_low, miss.miss_rate_high))  # fmt: skip
    s = pd.DataFrame(stats, columns=["rmsd", "rmsd_low", "rmsd_high", "replicate_mean", "miss", "miss_low",
                                     "miss_high"])  # fmt: skip

    def cover(name, low, high):
        expected = s[name].mean()
        return ((s[low] <= expected) & (expected <= s[high])).mean()

    assert cover("rmsd", "rmsd_low", "rmsd_high") >= 0.85
    assert cover("miss", "miss_low", "miss_high") >= 0.85
    assert (s.replicate_mean > s.rmsd).mean() > 0.9
    assert (s.rmsd_high > s.rmsd_low).all() and (s.miss_high > s.miss_low).all()


def test_summaries_without_replicates_have_no_intervals():
    rng = np.random.default_rng(2)
    results = _null_experiment(rng, rng.gamma(1.0, 0.7, 8), n_per_side=8).drop(columns="auc_boot")
    assert np.isnan(lost.summarise_rmsd(results).rmsd_low.iloc[0])
    assert lost.summarise_miss(results)[["miss_rate_low", "miss_rate_high"]].isna().all().all()
