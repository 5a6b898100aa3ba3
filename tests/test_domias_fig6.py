"""DOMIAS Fig. 6's drawing: level labels that never overlap, the paper's generators accounted for."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from vrlib.experiments.domias_fig6 import label_boxes_intersect, place_labels, plot_fig6  # noqa: E402

NOISE = (0.7, 0.9, 1.1, 1.3, 1.5, 1.7, 1.9, 2.3, 2.5, 2.9, 3.5, 3.9)
LAMBDAS = (0.2, 0.5, 0.7, 1.0, 1.1, 1.3, 1.5)


def crowded_table(families=("gan", "wgan_gp", "ctgan", "tvae", "nflow", "pategan", "privbayes", "baynet")):
    """The paper's 12 noise levels and 7 λ bunched together (as close as on a real run's axis), and the other points."""
    rows = [dict(family="noise", generator=f"noise σ²={v:g}", privacy_param=v, wd_sliced=0.20 + 0.004 * i,
                 auc_mean=0.60 - 0.002 * i) for i, v in enumerate(NOISE)]  # fmt: skip
    rows += [dict(family="adsgan", generator=f"ADS-GAN λ={v:g}", privacy_param=v, wd_sliced=0.21 + 0.003 * i,
                  auc_mean=0.59 - 0.001 * i) for i, v in enumerate(LAMBDAS)]  # fmt: skip
    rows += [dict(family=f, generator=f.upper(), privacy_param=np.nan, wd_sliced=0.3 + 0.05 * i, auc_mean=0.55)
             for i, f in enumerate(families)]  # fmt: skip
    return pd.DataFrame(rows).assign(attack="domias_flow", auc_std=0.01)


def test_level_labels_do_not_overlap_even_when_the_points_do():
    ax, labels = plot_fig6(crowded_table(), "domias_flow")
    assert len(labels) == len(NOISE) + len(LAMBDAS)
    assert {a.get_text() for a in labels} >= {"σ²=0.7", "σ²=3.9", "λ=0.2", "λ=1.5"}
    assert not label_boxes_intersect(labels)
    plt.close(ax.figure)


def test_one_far_point_puts_the_quality_axis_on_a_log_scale():
    near = crowded_table()  # wd_sliced 0.20 to 0.65: linear
    ax, _ = plot_fig6(near, "domias_flow")
    assert ax.get_xscale() == "linear" and "log scale" not in ax.get_xlabel()
    plt.close(ax.figure)
    far = near.copy()
    far.loc[far.family == "pategan", "wd_sliced"] = 9.3  # as PATE-GAN on the quick run: 47 times the nearest
    ax, labels = plot_fig6(far, "domias_flow")
    assert ax.get_xscale() == "log" and "log scale" in ax.get_xlabel()
    assert not label_boxes_intersect(labels)
    plt.close(ax.figure)


def test_the_overlap_check_sees_overlapping_labels():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    fig.canvas.draw()
    naive = [ax.annotate(f"σ²={v}", (0.5, 0.5), xytext=(3, 3), textcoords="offset points") for v in (0.7, 0.9)]
    assert label_boxes_intersect(naive)  # what the old drawing did with close points
    placed = place_labels(ax, [(0.5, 0.5), (0.5, 0.5), (0.5, 0.5)], ["a label", "b label", "c label"])
    assert not label_boxes_intersect(placed)
    plt.close(fig)


def test_missing_paper_generators_are_named_and_ours_marked():
    ax, _ = plot_fig6(crowded_table(families=("tvae", "privbayes", "baynet")), "domias_flow")
    note = [t.get_text() for t in ax.texts if "not in this run" in t.get_text()]
    assert note and all(g in note[0] for g in ("GAN", "WGAN-GP", "CTGAN", "NFlow", "PATE-GAN"))
    assert "ADS-GAN" not in note[0] and "TVAE" not in note[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "BAYNET (ours)" in legend and "TVAE" in legend and "additive noise" in legend
    plt.close(ax.figure)
    ax, _ = plot_fig6(crowded_table(), "domias_flow")
    assert not [t for t in ax.texts if "not in this run" in t.get_text()]
    plt.close(ax.figure)


# --------------------------------------------------------------------------- the setting


def test_paper_profile_is_the_papers_fig6():
    from vrlib.experiments import domias, profile_settings

    s = profile_settings("domias", "paper")
    configs = domias.fig6_configs(s)
    families = [g for _, g, _, _ in configs]
    assert set(domias.FIG6_PAPER) <= set(families)  # GAN, WGAN-GP, CTGAN, TVAE, NFlow, PATE-GAN, PrivBayes, ADS-GAN
    assert [p for _, g, _, p in configs if g == "adsgan"] == list(LAMBDAS)
    assert [p for _, g, _, p in configs if g == "noise"] == list(NOISE)
    assert [params["gp_weight"] for _, g, params, _ in configs if g == "wgan_gp"] == [10.0]  # the paper's App. C
    assert len(s["seeds"]) == 8 and "domias_flow" in s["fig6_attacks"]
    pate = next(params for _, g, params, _ in configs if g == "pategan")
    assert (pate["epsilon"], pate["delta"]) == (1.0, 1e-5)
    for profile in ("smoke", "quick"):  # the small profiles run every generator, at fewer λ and levels
        small = domias.fig6_configs(profile_settings("domias", profile))
        assert set(domias.FIG6_PAPER) <= {g for _, g, _, _ in small} and len(small) < len(configs)


def test_points_that_were_there_before_keep_their_settings():
    # The synthetic datasets are cached under their generator's parameters: these must not change.
    import math

    from vrlib.experiments import domias, profile_settings

    for profile in ("smoke", "quick", "paper"):
        s = profile_settings("domias", profile)
        old = {"TVAE": ("tvae", {"epochs": s["tvae_epochs"]}), "CTGAN": ("ctgan", {"epochs": s["ctgan_epochs"]}),
               "BayNet": ("baynet", {})}  # fmt: skip
        old.update({f"PrivBayes ε={e:g}": ("privbayes", {"epsilon": float(e)}) for e in s["privbayes_epsilons"]})
        old.update({f"noise σ²={v:g}": ("noise", {"scale": math.sqrt(v), "training_std": False})
                    for v in s["noise_scales"]})  # fmt: skip
        now = {label: (g, params) for label, g, params, _ in domias.fig6_configs(s)}
        assert {label: now[label] for label in old} == old
