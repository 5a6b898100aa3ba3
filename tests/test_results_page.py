"""docs/results.md states numbers of ours in prose: each checked here against the committed paper-profile tables.

The page is written by hand from the tables; these tests compute the numbers again (independently of the notebooks'
printouts) and require the page's sentences to carry them, so that a table rewritten by a new run, or a sentence
whose claim the table no longer bears, fails here instead of reaching a reader.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from conftest import PROJECT_ROOT

TABLES = PROJECT_ROOT / "figures" / "paper" / "tables"
PAGE = PROJECT_ROOT / "docs" / "results.md"


@pytest.fixture(scope="module")
def text() -> str:
    return " ".join(PAGE.read_text().split())  # line breaks of the page are not part of a sentence


def _se(std: float, n: int = 10) -> float:
    from vrlib.scorecard.rules import se_mean

    return se_mean(std, n)


def test_table3_orders_are_stated_with_their_noise(text):
    from vrlib.scorecard import headline

    gaps = headline.setting_gaps(pd.read_csv(TABLES / "achilles_table3.csv")).set_index(["dataset", "generator"])
    lead = gaps[gaps.gap > 0]
    assert len(lead) == 3 and (lead.gap < 1.96 * lead.se).all()  # the three leads of distance, none beyond noise
    for (d, g), r in lead.iterrows():
        assert (
            f"+{r.gap:.3f} ({d.capitalize()}, {g.replace('synthpop', 'Synthpop').replace('baynet', 'BayNet')}" in text
        )
    behind = gaps.loc[("adult", "baynet")]
    assert behind.gap < 0 and abs(behind.gap) < 1.96 * behind.se
    assert f"log-likelihood's on Adult with BayNet {abs(behind.gap):.3f} ({behind.se:.3f})" in text
    assert "None of these orders is beyond the noise" in text


def test_fig4_epsilon10_margins_and_the_root_seed_spread(text):
    fig4 = pd.read_csv(TABLES / "achilles_fig4.csv")
    at10 = fig4[(fig4.epsilon == 10) & (fig4.method == "distance")].set_index("dataset")
    z = {d: (r.auc_mean - 0.5) / _se(r.auc_std) for d, r in at10.iterrows()}
    assert f"above 0.5 by {z['adult']:.1f} and {z['census']:.1f} times std / √9" in text
    # at ε = 1: one game's mean over the root seeds (se × √n_seeds) against std / √9 of one game's targets
    at1 = fig4[fig4.epsilon == 1].set_index(["dataset", "method"])
    interval = pd.read_csv(TABLES / "achilles_fig4_smallest_epsilon_interval.csv")
    interval = interval[interval.method != "all distinct targets"].set_index(["dataset", "method"])
    spread = interval.se * np.sqrt(interval.n_seeds)
    naive = at1.auc_std.map(_se).reindex(spread.index)
    assert f"deviation of {spread.min():.3f}–{spread.max():.3f}" in text
    assert (
        f"std / √9 of {naive.min():.3f}–{naive.max():.3f}, larger than it for {int((spread > naive).sum())} of the 8"
        in text
    )
    ratio = spread / naive
    assert f"at most {ratio.max():.1f} times" in text
    # pooled over the methods (n_seeds − 1 degrees of freedom each): the variance ratio and its 95 % upper bound
    dof = int((interval.n_seeds - 1).sum())
    pooled = float((spread**2).sum() / (naive**2).sum())
    upper = pooled * dof / stats.chi2.ppf(0.025, dof)
    assert f"the root seeds' variance is {pooled:.2f} times (std / √9)² ({dof} degrees of freedom" in text
    assert f"upper bound {upper:.2f}, a standard error {np.sqrt(upper):.2f} times" in text
    # the largest of the 8 ratios under a common ratio of 1: chi-square with n_seeds − 1 degrees of freedom
    each = int(interval.n_seeds.iloc[0]) - 1
    chance = 1 - stats.chi2.cdf(each * ratio.max() ** 2, each) ** len(ratio)
    assert f"chance with probability {chance:.2f}" in text
    factor = np.sqrt(upper)
    assert (
        f"the margins at ε = 10 would be {z['adult'] / factor:.1f} (Adult) and {z['census'] / factor:.1f} (Census)"
        in text
    )
    census = fig4[(fig4.dataset == "census") & (fig4.epsilon >= 100)].pivot(index="epsilon", columns="method",
                                                                            values="auc_mean")  # fmt: skip
    lead = census.distance - census.loglik
    assert f"by {lead.min():.3f}–{lead.max():.3f} over log-likelihood" in text


def test_census_omega_changes_are_judged_with_their_standard_errors(text):
    t = pd.read_csv(TABLES / "achilles_census_omega.csv").set_index(["method", "generator"])
    change = t.auc_mean - t.auc_mean_table2
    se = pd.Series([float(np.hypot(_se(a), _se(b))) for a, b in zip(t.auc_std, t.auc_std_table2)], index=t.index)
    beyond = change > 1.96 * se
    assert beyond[("distance", "baynet")] and beyond[("loglik", "baynet")]
    assert not beyond[("distance", "synthpop")] and not beyond[("loglik", "synthpop")]
    d, b = change[("distance", "baynet")], se[("distance", "baynet")]
    assert f"BayNet's distance gain (+{d:.3f}, standard error {b:.3f})" in text
    d, b = change[("distance", "synthpop")], se[("distance", "synthpop")]
    assert f"Synthpop's distance gain (+{d:.3f}, {b:.3f}, {d / b:.1f} standard errors)" in text
    assert "the distance gains (+0.042, +0.109) are beyond noise" not in text  # the sentence the table contradicted


def test_lost_fig4_miss_rates_are_not_called_beyond_noise(text):
    from vrlib.scorecard.lost import beyond_noise

    miss = pd.read_csv(TABLES / "lost_fig4_miss.csv")
    cells = miss[(miss.epsilon >= 100) & (miss.t <= 0.7)]
    assert len(cells) == 6 and all(beyond_noise(r) is None for r in cells.itertuples())
    assert "not beyond it in any of the six cells" in text
    assert f"more ({cells.n_high.min()} to {cells.n_high.max()} records)" in text


def test_mca_fig3_gap_is_sized(text):
    from scipy import stats

    fig3 = pd.read_csv(TABLES / "mca_fig3.csv")
    w = fig3[(fig3.generator == "WGAN-GP") & (fig3.frequency > 3)]
    k, n = int(w.members.sum()), int(w.members.sum() + w.non_members.sum())
    low, high = stats.beta.ppf(0.025, k, n - k + 1), stats.beta.ppf(0.975, k + 1, n - k)
    assert f"{k:,} of {n:,} records, whose binomial 95 % interval [{100 * low:.1f} %, {100 * high:.1f} %]" in text
    assert high < 0.96  # the paper's about 96 % outside it


def test_domias_fig4_reference_set_gain(text):
    f = pd.read_csv(TABLES / "domias_fig4.csv")
    ref = f[f.ablation == "n_ref"].pivot(index="n_ref", columns="attack", values="auc_mean")
    kde, flow = ref.domias_kde - ref.eq1_kde, ref.domias_flow - ref.eq1_flow
    assert f"{kde.min():.3f}–{kde.max():.3f} above Eq. 1 at every n_ref with KDE" in text
    assert f"{flow.min():.3f}–{flow.max():.3f} with BNAF" in text


def test_domias_fig6_wgan_gp_at_the_curves_end(text):
    f = pd.read_csv(TABLES / "domias_fig6.csv")
    own = f[f.attack == "domias_flow"].set_index("generator")
    wgan, least = own.loc["WGAN-GP"], own.loc[own[own.family == "noise"].wd_sliced.idxmin()]
    # outside the range by far less than W1's se over the runs
    assert 0 < least.wd_sliced - wgan.wd_sliced < wgan.wd_sliced_std / np.sqrt(wgan.n_seeds - 1)
    assert f"outside the range by {least.wd_sliced - wgan.wd_sliced:.3f} of W1" in text
    assert f"({wgan.wd_sliced:.4f} against the least noise's {least.wd_sliced:.4f}" in text
    assert f"std over the runs is {wgan.wd_sliced_std:.3f} and {least.wd_sliced_std:.3f}" in text
    assert f"its AUC {least.auc_mean - wgan.auc_mean:.3f} below the curve's there" in text


def test_domias_fig6_points_the_scorecard_reads_along_the_curve(text):
    from vrlib.scorecard import domias

    out = domias.noise_curve_sides({"domias_fig6": pd.read_csv(TABLES / "domias_fig6.csv")})
    within = ["GAN", "WGAN-GP", "CTGAN", "ADS-GAN λ=1.5"]
    for g in within:
        assert f"; {g} within the noise of the curve" in out.ours or f": {g} within the noise of the curve" in out.ours
    below = ["PrivBayes ε=0.1"] + [f"ADS-GAN λ={x}" for x in ("0.2", "0.5", "0.7", "1")]
    for g in below:
        assert f"; {g} below the curve" in out.ours, g
    assert out.checks.count(True) == len(below) and out.checks.count(False) == 0  # the row: holds in part
    assert "GAN, WGAN-GP, CTGAN and ADS-GAN at λ = 1.5 are each within the noise of the curve" in text
    assert "PrivBayes at ε = 0.1 and ADS-GAN at λ = 0.2, 0.5, 0.7 and 1 are below it beyond the noise" in text
    assert "ADS-GAN λ=1.3 beyond the noise levels' quality" in out.ours and "ADS-GAN at λ = 1.1 and 1.3 lie" in text
    assert "(the row: holds in part)" in text
