"""Notebook 05's predicted cost: its units counted by hand on made-up settings, the scaling by hand, the refusals."""

import numpy as np
import pandas as pd
import pytest

from vrlib.errors import VrlibError
from vrlib.experiments import domias_cost as dc, profile_settings

# Small made-up settings: 2 seeds, every grid of two values, Fig. 6 with three generators.
S = dict(
    seeds=(0, 1),
    n_mem_grid=(50, 100),
    n_mem=100,
    tvae_epochs=20,
    epochs_grid=(10, 20),
    n_ref=400,
    n_syn=400,
    n_ref_grid=(200, 400),
    n_syn_grid=(100, 400),
    flow=dict(epochs=5),
    logan_epochs=7,
    fig6_generators=("tvae", "privbayes", "noise"),
    ctgan_epochs=3,
    privbayes_epsilons=(1.0, 10.0),
    noise_scales=(0.5,),
    noise_values_are="variance",
    fig6_attacks=("domias_kde", "eq1_flow", "logan_d1_published"),
    adult_n_mem=30,
    adult_n_ref=300,
    adult_n_syn=200,
    adult_epochs=9,
    minority_attacks=("domias_flow", "mc"),
)


def _count(units, section):
    return units[units.section == section].groupby("kind").size().to_dict()


def test_units_of_every_section_against_a_hand_count():
    units = dc.notebook_units(S)
    # Fig. 3a: 2 seeds × 2 sizes = 4 TVAE settings; per setting 2 KDE evaluations for domias_kde and 1 for
    # eq1_kde, p_G of the flow, every other attack of FIG3_ATTACKS once; p_R of the flow once per seed.
    assert _count(units, "fig3a") == {
        "tvae": 4,
        "kde": 12,
        "flow": 4 + 2,
        "logan_0": 4,
        "logan_d1": 4,
        "logan_d1_published": 4,
        "mc": 4,
        "gan_leaks": 4,
        "gan_leaks_cal": 4,
    }
    # Fig. 3b: its point at 20 epochs is Fig. 3a's at |D_mem| = 100, so 2 new settings (10 epochs).
    f3b = _count(units, "fig3b")
    assert f3b["tvae"] == 2 and f3b["kde"] == 6 and f3b["flow"] == 2 + 2 and f3b["logan_0"] == 2
    assert set(units[(units.section == "fig3b") & (units.kind == "tvae")].length) == {10}
    # Fig. 4: TVAE as Fig. 3a's; per seed the new settings (200, 400) and (400, 100) and the shared
    # (400, 400), which still lacks eq1_flow: flows p_R(200), p_G(400), p_G(400), p_R(400), p_G(100).
    assert _count(units, "fig4") == {"kde": 12, "flow": 10, "logan_d1": 4, "logan_d1_published": 4}
    flows = units[(units.section == "fig4") & (units.kind == "flow")]
    assert sorted(flows["size"]) == sorted([200, 400, 400, 400, 100] * 2)
    kde = units[(units.section == "fig4") & (units.kind == "kde")]
    # rows fitted × 200 records scored: (400, 200, 400) for n_ref = 200, (100, 400, 100) for n_syn = 100
    assert sorted(kde["size"]) == sorted([r * 200 for r in (400, 200, 400, 100, 400, 100)] * 2)
    assert sorted(units[(units.section == "fig4") & (units.kind == "logan_d1")]["size"]) == [100, 100, 200, 200]
    # Fig. 6: TVAE's setting is Fig. 3a's and every score of it is made; 3 new generators per seed.
    assert _count(units, "fig6") == {"privbayes": 4, "noise": 2, "kde": 12, "flow": 6, "logan_d1_published": 6}
    # Fig. 13: Fig. 3a's setting, all its attacks made by Figs. 3a and 4.
    assert "fig13" not in set(units.section)
    assert dc.empty_sections(units, dc.SECTIONS) == ["fig13"]
    # Fig. 5 on Adult: TVAE 9 epochs on 30 rows per seed, p_R (300 rows) and p_G (200 rows) of the flow, MC.
    f5 = units[units.section == "fig5"]
    assert _count(units, "fig5") == {"tvae": 2, "flow": 4, "mc": 2}
    assert set(f5.data) == {"adult"} and sorted(f5[f5.kind == "flow"]["size"]) == [200, 200, 300, 300]
    assert len(units) == 46 + 24 + 30 + 30 + 8


def test_fig13_alone_sections_in_the_notebooks_order_and_what_the_run_leaves_out():
    alone = dc.notebook_units(S, ["fig13"])
    assert _count(alone, "fig13") == {
        "tvae": 2,
        "kde": 6,
        "flow": 4,
        "logan_0": 2,
        "logan_d1": 2,
        "logan_d1_published": 2,
        "mc": 2,
        "gan_leaks": 2,
        "gan_leaks_cal": 2,
    }
    # given in another order, made in the notebook's: Fig. 13 after Fig. 3a, so it adds eq1_flow's p_G only
    both = dc.notebook_units(S, ["fig13", "fig3a"])
    assert list(dict.fromkeys(both.section)) == ["fig3a", "fig13"] and _count(both, "fig13") == {"flow": 2}
    no_flow = dc.notebook_units(S, ["fig3a"], include_flow=False, exclude_attacks=["logan_0", "mc"])
    assert not {"flow", "logan_0", "mc"} & set(no_flow.kind) and len(no_flow) == 46 - 6 - 4 - 4
    # after a run without them, only the BNAF and LOGAN 0 units are left
    earlier = [dict(sections=["fig3a"], include_flow=False, exclude_attacks=["logan_0"])]
    rest = dc.notebook_units(S, ["fig3a"], earlier=earlier)
    assert _count(rest, "fig3a") == {"flow": 6, "logan_0": 4}
    assert dc.section_attacks("fig6", S) == S["fig6_attacks"]
    assert dc.section_attacks("fig5", S, include_flow=False) == ("mc",)


def test_the_published_logan_d1_only_where_it_is_defined():
    # 2 · |D_mem| = 200 records scored, more than 2 · min(n_syn, n_ref) = 160 at n_ref = 80
    def published(settings):
        units = dc.notebook_units(settings, ["fig4"], exclude_attacks=["logan_d1"])
        return (units.kind == "logan_d1_published").sum()

    assert published(S) == 2 * 3  # per seed: (200, 400), (400, 400), (400, 100)
    assert published(dict(S, n_ref_grid=(80, 400))) == 2 * 2  # not (80, 400)


def test_scaling_by_hand():
    # 1 epoch: 3 s, 5 epochs: 7 s -> 1 s per epoch and 2 s fixed
    assert dc.per_length(1, 3.0, 5, 7.0) == pytest.approx((2.0, 1.0))
    assert dc.per_length(1, 3.0, 2, 2.5) == (3.0, 0.0)  # a noisy, shorter second run: nothing per epoch
    with pytest.raises(VrlibError, match="two lengths"):
        dc.per_length(2, 1.0, 2, 1.0)
    # 50 epochs on 200 rows from a measurement on 400: (2 + 50) / 2
    assert dc.unit_cpu_seconds(2.0, 1.0, 50, 200, 400) == pytest.approx(26.0)
    units = dc.notebook_units(S, ["fig5"])
    measured = pd.DataFrame(
        [
            dict(kind="tvae", data="adult", variant=30, measured_size=1, fixed_cpu_s=10.0, per_length_cpu_s=2.0),
            dict(kind="flow", data="adult", variant=0, measured_size=300, fixed_cpu_s=0.0, per_length_cpu_s=3.0),
            dict(kind="mc", data="adult", variant=0, measured_size=1, fixed_cpu_s=0.5, per_length_cpu_s=0.0),
        ]
    )
    cost = dc.predicted_cost(units, measured, workers=2).set_index("what")
    # TVAE: 10 + 2 × 9 epochs, twice; BNAF per seed: 3 × 5 epochs × (300 + 200) / 300 = 25; MC 0.5 twice
    assert cost.loc["TVAE fits", "units"] == 2 and cost.loc["TVAE fits", "unit_cpu_s"] == pytest.approx(28.0)
    assert cost.loc["TVAE fits", "cpu_hours"] == pytest.approx(56 / 3600)
    bnaf = cost.loc["BNAF (domias_flow, eq1_flow)"]
    assert bnaf.units == 4 and bnaf.cpu_hours == pytest.approx(50 / 3600)
    assert bnaf.hours_on_workers == pytest.approx(25 / 3600)
    assert cost.loc["MC, GAN-Leaks 0 and CAL", "cpu_hours"] == pytest.approx(1.0 / 3600)
    with pytest.raises(VrlibError, match="no measured cost for 'flow'"):
        dc.predicted_cost(units, measured[measured.kind != "flow"])


def test_unknown_sections_are_refused():
    with pytest.raises(VrlibError, match=r"unknown section\(s\) \['fig7'\]; choose from"):
        dc.notebook_units(S, ["fig3a", "fig7"])
    with pytest.raises(VrlibError, match="unknown section"):
        dc.section_attacks("figure 3a", S)
    with pytest.raises(VrlibError, match="unknown Fig. 6 generator 'vae'"):
        dc.notebook_units(dict(S, fig6_generators=("vae",)), ["fig6"])
    with pytest.raises(VrlibError, match="fraction"):
        dc.measure_units(S, dc.notebook_units(S, ["fig3a"]), fraction=0)


def test_paper_profile_counts():
    paper = profile_settings("domias", "paper")
    units = dc.notebook_units(paper)
    # Fig. 3a: 8 seeds × 6 sizes TVAE fits of 2,000 epochs, BNAF p_G per setting and p_R per seed
    f3a = units[units.section == "fig3a"]
    assert (f3a.kind == "tvae").sum() == 48 and set(f3a[f3a.kind == "tvae"].length) == {2000}
    assert (f3a.kind == "flow").sum() == 48 + 8 and set(f3a[f3a.kind == "flow"].length) == {50}
    # Fig. 6: GAN, WGAN-GP, CTGAN, NFlow, PATE-GAN, 3 PrivBayes, 7 ADS-GAN, BayNet, 12 noise; TVAE's from Fig. 3a
    assert units[(units.section == "fig6") & units.kind.isin(dc.GENERATORS)].shape[0] == 8 * 28


def test_measured_units_on_california(tmp_path, monkeypatch):
    from conftest import require_real

    require_real("cal_housing.data")
    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path / "cache"))
    smoke = profile_settings("domias", "smoke")
    units = dc.notebook_units(smoke, ["fig4"])
    measured = dc.measure_units(smoke, units[units.kind.isin(["flow", "kde"])], fraction=0.5).set_index("kind")
    flow = measured.loc["flow"]
    assert flow.lengths == (1, 2) and flow.measured_size == smoke["n_ref"] and min(flow.cpu_s) > 0
    assert measured.loc["kde", "measured_size"] == smoke["n_syn"] * 2 * smoke["n_mem"]
    assert (measured[["fixed_cpu_s", "per_length_cpu_s"]] >= 0).all().all()
    assert not (tmp_path / "cache").exists()  # nothing cached


def test_a_stacked_flow_unit_is_measured_as_its_share_of_a_stack(monkeypatch):
    from vrlib.density import bnaf_ensemble

    rng = np.random.default_rng(0)
    data = type("Data", (), {"seed": 3})()
    smoke = {**profile_settings("domias", "smoke"), "flow_trainer": "ensemble"}
    reference, test = rng.normal(size=(120, 2)), rng.normal(size=(10, 2))
    stacks = []
    real = bnaf_ensemble.fit_bnaf_ensemble

    def counting(estimators, datasets, **kw):
        stacks.append((len(estimators), {e.seed for e in estimators}))
        return real(estimators, datasets, **kw)

    monkeypatch.setattr(bnaf_ensemble, "fit_bnaf_ensemble", counting)
    out = dc._run_attack("flow", data, smoke, 1, None, reference, test)
    assert out.shape == (10,) and np.isfinite(out).all()
    assert stacks[0][0] == dc.FLOW_STACK and len(stacks[0][1]) == dc.FLOW_STACK  # its own seed each
    # the single trainer fits one flow, no stack
    stacks.clear()
    dc._run_attack("flow", data, profile_settings("domias", "smoke"), 1, None, reference, test)
    assert stacks == []


def test_attacks_measured_on_real_rows_fit_no_generator(tmp_path, monkeypatch):
    # synthetic="real" (a machine without ctgan): the attacks run on n_syn real rows, no TVAE is fitted
    from conftest import require_real

    require_real("cal_housing.data")
    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path / "cache"))

    def no_fit(*args, **kwargs):
        raise AssertionError("a generator was fitted")

    monkeypatch.setattr(dc, "_fit_generator", no_fit)
    smoke = profile_settings("domias", "smoke")
    units = dc.notebook_units(smoke, ["fig4"])
    measured = dc.measure_units(smoke, units[units.kind.isin(["kde", "logan_d1"])], 0.5, synthetic="real")
    measured = measured.set_index("kind")
    assert measured.loc["kde", "measured_size"] == smoke["n_syn"] * 2 * smoke["n_mem"]
    assert measured.loc["logan_d1", "measured_size"] == min(smoke["n_syn"], smoke["n_ref"])
    assert (measured.fixed_cpu_s > 0).all()
    with pytest.raises(AssertionError, match="a generator was fitted"):  # the default fits a TVAE
        dc.measure_units(smoke, units[units.kind == "kde"], 0.5)
    with pytest.raises(VrlibError, match="synthetic must be 'tvae' or 'real'"):
        dc.measure_units(smoke, units, 0.5, synthetic="ctgan")
