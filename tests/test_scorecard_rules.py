"""Every scorecard rule shown able to fail.

For each claim with a rule, tables made from the committed ones (``figures/paper/tables/``, else
``quick``): one perturbed so that the quoted claim is true (the rule must say *holds*), one so that
it is false (*does not hold*), and, where the claim compares within a noise, one where the
difference lies inside it (*inconclusive*). The cases are keyed by claim; a claim with a rule and
no cases fails :func:`test_every_rule_has_holds_and_fails_cases`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from conftest import PROJECT_ROOT
from vrlib.experiments.mca import PAPER as MCA
from vrlib.scorecard import CLAIMS, headline
from vrlib.scorecard.rules import FAILS, PAST_MARGIN, verdict

JUDGED = [c for c in CLAIMS if c.reproduced]


def key(c) -> str:
    return f"{c.paper} | {c.result} | {c.quote}"


def short(c) -> str:
    return f"{c.paper} | {c.result} | {c.quote[:70]}"


def committed(name: str) -> pd.DataFrame:
    for profile in ("paper", "quick"):
        path = PROJECT_ROOT / "figures" / profile / "tables" / f"{name}.csv"
        if path.exists():
            return pd.read_csv(path)
    raise FileNotFoundError(name)


def tables_of(c) -> dict[str, pd.DataFrame]:
    """The committed tables a claim reads; one no run has committed yet (a per-target table) is left out."""
    out = {}
    for n in c.tables:
        try:
            out[n] = committed(n)
        except FileNotFoundError:
            continue
    return out


# --------------------------------------------------------------------------- perturbations (achilles)


def _targets(name, gap_census_baynet, gap_elsewhere, spread, n=10):
    """A per-target AUC table made here: 4 settings × 4 methods × ``n`` targets, each method's AUCs spread evenly
    (± ``spread``) around its centre, so each median is its centre and distance's median gap is the one given."""

    def f(t):
        rows = []
        for dataset in ("adult", "census"):
            for generator in ("synthpop", "baynet"):
                gap = gap_census_baynet if (dataset, generator) == ("census", "baynet") else gap_elsewhere
                centres = {"random": 0.55, "rare": 0.6, "loglik": 0.65, "distance": 0.65 + gap}
                for method, centre in centres.items():
                    for i, auc in enumerate(centre + spread * np.linspace(-1, 1, n)):
                        rows.append(dict(dataset=dataset, generator=generator, method=method, target=i, auc=auc))
        return {name: pd.DataFrame(rows)}

    return f


def _shift_distance(name, gap_census_baynet, gap_elsewhere):
    """The committed per-target table with distance's AUCs moved, per setting, so that its median is the highest
    median of the others + the gap given (the targets' spread, and so the noise, as committed)."""

    def f(t):
        df = t[name].copy()
        for (dataset, generator), g in df.groupby(["dataset", "generator"]):
            gap = gap_census_baynet if (dataset, generator) == ("census", "baynet") else gap_elsewhere
            best = g[g.method != "distance"].groupby("method").auc.median().max()
            rows = g.index[g.method == "distance"]
            df.loc[rows, "auc"] += best + gap - df.loc[rows, "auc"].median()
        return {name: df}

    return f


def _median_cases(name, stated):
    return {
        # from the committed table: distance's targets moved to the stated gap (and ahead elsewhere, but not above the
        # stated largest: "up to"), or behind
        "holds": _shift_distance(name, stated, max(stated, 0.15)),
        "does not hold": _shift_distance(name, -0.2, -0.2),
        "holds in part": _targets(name, stated + 0.3, 0.1, 0.01),  # consistently higher, but not by the stated gap
        "inconclusive": _targets(name, 0.0, 0.0, 0.4),  # our median gap as noisy as the stated one is large
    }


def _set_distance(df, delta, std, n=None):
    """Distance's cell = the best other method's + ``delta`` per setting; every std = ``std``."""
    df = df.copy()
    df["auc_std"] = std
    if n is not None:
        df["n_targets"] = n
    by = [c for c in ("dataset", "generator", "epsilon") if c in df.columns]
    for _, g in df.groupby(by):
        others = g[g.method != "distance"]
        df.loc[g.index[g.method == "distance"], "auc_mean"] = others.auc_mean.max() + delta
    return df


def _average_gap(name, stated):
    def make(delta, std):
        return lambda t: {name: _set_distance(t[name], delta, std)}

    return {"holds": make(stated, 0.005), "does not hold": make(-0.1, 0.005), "inconclusive": make(stated / 2, 0.2)}


def _cells(name):
    """Ours = the paper's + ``shift`` with our std ``std`` (None: the paper's own ±)."""

    def make(shift, std=None):
        def f(t):
            df = t[name].copy()
            df["auc_mean"], df["auc_std"] = df.paper_mean + shift, df.paper_std if std is None else std
            return {name: df}

        return f

    # holds: equal, our interval tight; fails: far beyond what two runs differ by; inconclusive: 0.05 off with std
    # 0.3 over 10 targets, whose interval (± 0.196) reaches past every cell's margin (1.96 √(0.095² + the paper's
    # se²), at most ± 0.21) while the two are not significantly apart.
    return {"holds": make(0.0, 0.005), "does not hold": make(0.4), "inconclusive": make(0.05, 0.3)}


def _ahead(name):
    def make(delta, std):
        return lambda t: {name: _set_distance(t[name], delta, std)}

    return {"holds": make(0.2, 0.01), "does not hold": make(-0.2, 0.01), "inconclusive": make(0.001, 0.1)}


def _equivalently(name):
    """ "More or equivalently": distance = the best other + ``delta``; equal and tight holds, far below fails, equal but
    noisy (std 0.1: ± 0.092 for a difference) is inconclusive."""

    def make(delta, std):
        return lambda t: {name: _set_distance(t[name], delta, std)}

    return {"holds": make(0.0, 0.01), "does not hold": make(-0.2, 0.01), "inconclusive": make(0.0, 0.1)}


def _std_census(ratio, n):
    def f(t):
        df = t["achilles_table2"].copy()
        census = df.dataset == "census"
        df.loc[census & (df.method == "distance"), "auc_std"] = 0.02
        df.loc[census & (df.method == "loglik"), "auc_std"] = 0.02 * ratio
        df["n_targets"] = n
        return {"achilles_table2": df}

    return f


def _loglik(gap, std):
    def f(t):
        df = t["achilles_loglik_readings"].copy()
        df["auc_std"] = std
        df.loc[df.setting != "distance", "gap_to_distance"] = gap
        return {"achilles_loglik_readings": df}

    return f


def _fig3a(spread, std):
    def f(t):
        df = t["achilles_fig3a"].copy()
        df["auc_mean"] = 0.8
        df.loc[df.index[0], "auc_mean"] = 0.8 - spread
        df["auc_std"] = std
        return {"achilles_fig3a": df}

    return f


def test_range_over_k_fails_only_beyond_what_many_noisy_cells_give():
    # "varies only slightly for different values of k": the range is the largest difference of the distinct cells, so
    # noise alone widens it with their number. Before, a range of 0.1 (se 0.02) failed whether it came from 2 distinct
    # cells or from 50; over 50 (1,225 pairs) chance alone can give it.
    (claim,) = [c for c in JUDGED if c.paper == "achilles" and c.quote.startswith("The mean AUC of the top ten")]
    tables = tables_of(claim)
    std = 0.02 * 3 / np.sqrt(2)  # se of a difference of two cells of 10 targets: 0.02
    two = _fig3a(0.1, std)(tables)["achilles_fig3a"]
    assert verdict(claim.rule({"achilles_fig3a": two}).checks) == "does not hold"
    many = two.assign(auc_mean=0.8 - 0.1 * np.arange(len(two)) / (len(two) - 1))
    out = claim.rule({"achilles_fig3a": many})
    assert verdict(out.checks) == "inconclusive" and f"{len(many)} distinct cells" in out.ours, out.ours
    # far beyond it, the many cells fail too
    assert (
        verdict(
            claim.rule(
                {"achilles_fig3a": many.assign(auc_mean=many.auc_mean * 0 + np.linspace(0.5, 0.9, len(many)))}
            ).checks
        )
        == "does not hold"
    )


def _fig3b(values, std=0.01):
    def f(t):
        df = t["achilles_fig3b"].copy()
        df["auc_mean"] = df.distance.map(values)
        df["auc_std"] = std
        return {"achilles_fig3b": df}

    return f


def _fig4_drop(low, at10, high, std, at100=0.7, rest=0.7):
    """distance's AUC ``low`` at the smallest ε, ``at10``, ``at100``, ``high`` at the largest, ``rest`` elsewhere."""

    def f(t):
        df = t["achilles_fig4"].copy()
        df["auc_std"] = std
        dist = df.method == "distance"
        df.loc[dist, "auc_mean"] = rest
        df.loc[dist & (df.epsilon == df.epsilon.min()), "auc_mean"] = low
        df.loc[dist & np.isclose(df.epsilon, 100), "auc_mean"] = at100
        df.loc[dist & np.isclose(df.epsilon, 10), "auc_mean"] = at10
        df.loc[dist & (df.epsilon == df.epsilon.max()), "auc_mean"] = high
        return {"achilles_fig4": df}

    return f


def _smallest_eps(low, high):
    def f(t):
        df = t["achilles_fig4_smallest_epsilon_interval"].copy()
        pooled = df.method == "all distinct targets"
        df.loc[pooled, "ci_low"], df.loc[pooled, "ci_high"], df.loc[pooled, "mean"] = low, high, (low + high) / 2
        return {"achilles_fig4_smallest_epsilon_interval": df}

    return f


# --------------------------------------------------------------------------- perturbations (domias)


OWN = ("domias_flow", "domias_kde")
BASE = ("logan_0", "logan_d1", "logan_d1_published", "mc", "gan_leaks", "gan_leaks_cal")


def _own_vs_best(name, by, delta, std, value="auc"):
    """Each DOMIAS row = the best baseline's at the same ``by`` + ``delta``; every std = ``std``."""

    def f(t):
        df = t[name].copy()
        df[f"{value}_std"] = std
        for _, g in df.groupby(by):
            best = g[g.attack.isin(BASE)][f"{value}_mean"].max()
            df.loc[g.index[g.attack.isin(OWN)], f"{value}_mean"] = best + delta
        return {name: df}

    return f


def _outperforms(name, by=None):
    """The holds / does not hold / inconclusive cases of "DOMIAS above every baseline" on the table ``name`` by ``by``,
    or on each ``(table, by)`` of ``name`` (a tuple of them) at once."""
    sweeps = name if by is None else ((name, by),)

    def each(delta, std):
        return lambda t: {k: v for n, b in sweeps for k, v in _own_vs_best(n, b, delta, std)(t).items()}

    return {"holds": each(0.1, 0.005), "does not hold": each(-0.1, 0.005), "inconclusive": each(0.001, 0.05)}


FIG3_SWEEPS = (("domias_fig3a", "n_mem"), ("domias_fig3b", "epochs"))  # "In both plots": one sentence, one row


def _ends(name, key, delta_last, std, attacks=None):
    """Every attack's AUC (or only ``attacks``') = 0.6 everywhere but at the last value of ``key``: 0.6 +
    ``delta_last``."""

    def f(t):
        df = t[name].copy()
        df["auc_std"] = std
        rows = df.attack.isin(attacks) if attacks is not None else pd.Series(True, index=df.index)
        df.loc[rows, "auc_mean"] = 0.6
        df.loc[rows & (df[key] == df[key].max()), "auc_mean"] = 0.6 + delta_last
        return {name: df}

    return f


def _ref_gain(delta, std):
    def f(t):
        df = t["domias_fig4"].copy()
        df["auc_std"] = std
        for est in ("kde", "flow"):
            eq1 = df[df.attack == f"eq1_{est}"].set_index(["ablation", "n_ref", "n_syn"]).auc_mean
            rows = df.attack == f"domias_{est}"
            idx = list(zip(df.loc[rows, "ablation"], df.loc[rows, "n_ref"], df.loc[rows, "n_syn"]))
            df.loc[rows, "auc_mean"] = [eq1[i] + delta for i in idx]
        return {"domias_fig4": df}

    return f


def _kde_flow(sign, std):
    def f(t):
        df = t["domias_fig4"].copy()
        df["auc_std"] = std
        sweep = df.ablation == "n_ref"
        small, large = df.loc[sweep, "n_ref"].min(), df.loc[sweep, "n_ref"].max()
        for n, kde_ahead in ((small, True), (large, False)):
            at = sweep & (df.n_ref == n)
            better = 0.6 + 0.1 * sign
            df.loc[at & (df.attack == "domias_kde"), "auc_mean"] = better if kde_ahead else 0.6
            df.loc[at & (df.attack == "domias_flow"), "auc_mean"] = 0.6 if kde_ahead else better
        return {"domias_fig4": df}

    return f


def _n_syn(slope, std):
    def f(t):
        df = t["domias_fig4"].copy()
        df["auc_std"] = std
        rows = df.ablation == "n_syn"
        rank = df.loc[rows, "n_syn"].rank(method="dense")
        df.loc[rows, "auc_mean"] = np.where(df.loc[rows, "auc_mean"].notna(), 0.5 + slope * rank, np.nan)
        return {"domias_fig4": df}

    return f


def _minority(delta, std):
    def f(t):
        df = t["domias_fig5"].copy()
        df["accuracy_std"] = std
        df.loc[df.group.isin(["minority", "majority", "all"]), "accuracy_mean"] = 0.55
        df.loc[df.attack.isin(OWN) & (df.group == "minority"), "accuracy_mean"] = 0.55 + delta
        return {"domias_fig5": df}

    return f


def _understate(delta, std):
    def f(t):
        df = t["domias_fig5"].copy()
        df["accuracy_std"] = std
        df.loc[df.group.isin(["majority", "all"]), "accuracy_mean"] = 0.55
        df.loc[df.group == "minority", "accuracy_mean"] = 0.55 + delta
        return {"domias_fig5": df}

    return f


def _calibrated(own_excess, cal_excess, others_excess, std):
    """Every group's accuracy 0.55 outside it; on it, 0.55 + the excess of the paper's DOMIAS, of GAN-Leaks CAL and
    of every other baseline."""
    others = [b for b in BASE if b != "gan_leaks_cal"]
    return _minority_excess(std, [(OWN, own_excess), (["gan_leaks_cal"], cal_excess), (others, others_excess)])


def _fig6_shape(n_seeds=4, planned=8, std=0.005):
    """A Fig. 6 table in the shape notebook 05 writes from the paper profile's parts: one row per point of
    ``domias.fig6_configs`` (the paper's eight generators, ADS-GAN's seven λ, PrivBayes's three ε, BayNet, the 12
    noise levels) and attack of the profile's ``fig6_attacks`` (DOMIAS with BNAF among them), ``n_seeds`` of
    ``planned`` runs. The additive-noise curve falls from AUC 0.60 to 0.50 as W1 grows from 0.3 to 1.4; every other
    point is at W1 0.5, AUC 0.5; every std (AUC's and W1's) ``std``."""
    from vrlib.experiments import domias, profile_settings

    s = profile_settings("domias", "paper")
    rows = []
    for label, gen, _, priv in domias.fig6_configs(s):
        for a in s["fig6_attacks"]:
            rows.append(dict(family=gen, generator=label, privacy_param=priv, attack=a, auc_mean=0.5, auc_std=std,
                             n_seeds=n_seeds, n_seeds_planned=planned, wd_sliced=0.5, wd_sliced_std=std,
                             wd_columns=0.5, wd_columns_std=std))  # fmt: skip
    df = pd.DataFrame(rows)
    noise = df.family == "noise"
    rank = df.loc[noise].groupby("attack").privacy_param.rank(method="dense") - 1
    df.loc[noise, "wd_sliced"] = 0.3 + 0.1 * rank
    df.loc[noise, "auc_mean"] = 0.6 - 0.1 * rank / 11
    return df


def _fig6(delta, std):
    """Every generator of the table at the middle of the noise curve's quality range, ``delta`` above the curve for
    the paper's wrong-side generators (WGAN-GP, PATE-GAN, CTGAN) and below it for the others (``delta`` < 0 swaps
    the sides)."""

    def f(t):
        df = _fig6_shape()
        df["auc_std"] = std
        for own in OWN:
            noise = df[(df.family == "noise") & (df.attack == own)].sort_values("wd_sliced")
            if not len(noise):
                continue
            mid = float(noise.wd_sliced.median())
            at = float(np.interp(mid, noise.wd_sliced, noise.auc_mean))
            gens = (df.family != "noise") & (df.attack == own)
            wrong = df.family.str.lower().isin(["ctgan", "wgangp", "wgan_gp", "pategan", "pate_gan"])
            df.loc[gens, "wd_sliced"] = mid
            df.loc[gens & wrong, "auc_mean"] = at + delta
            df.loc[gens & ~wrong, "auc_mean"] = at - delta
        return {"domias_fig6": df}

    return f


def _noise_curve(slope, std):
    """The additive-noise rows: AUC = 0.6 + ``slope`` × (rank of W1 from the least noise, scaled to [-1, 0])."""

    def f(t):
        df = _fig6_shape()
        df["auc_std"] = std
        noise = df.family == "noise"
        r = df.loc[noise].groupby("attack").wd_sliced.rank(pct=True)
        df.loc[noise, "auc_mean"] = 0.6 - slope * r
        return {"domias_fig6": df}

    return f


def _precision(delta, std):
    def f(t):
        df = t["domias_fig13"].copy()
        df["precision_std"] = std
        at = np.isclose(df.q, 0.2)
        best = df.loc[at & df.attack.isin(BASE), "precision_mean"].max()
        df.loc[at & df.attack.isin(OWN), "precision_mean"] = best + delta
        return {"domias_fig13": df}

    return f


def _own_rows(df):
    return df.attack.isin(OWN)


def _adsgan(similar, fall, std):
    """ADS-GAN's AUC at its smallest λ = WGAN-GP's + ``similar``, at its largest λ that − ``fall``; every std ``std``."""

    def f(t):
        df = _fig6_shape()
        df["auc_std"] = std
        own = _own_rows(df)
        wgan = float(df.loc[own & (df.family == "wgan_gp"), "auc_mean"].iloc[0])
        ads = own & (df.family == "adsgan")
        lam = df.loc[ads, "privacy_param"]
        df.loc[ads, "auc_mean"] = wgan + similar - fall * (lam - lam.min()) / (lam.max() - lam.min())
        return {"domias_fig6": df}

    return f


def _quality(w1_by_rank, std):
    """ADS-GAN's W1 at its λ (in order) = ``w1_by_rank``, with a ``wd_sliced_std`` of ``std`` for every row."""

    def f(t):
        df = _fig6_shape()
        df["wd_sliced_std"] = std
        ads = df.family == "adsgan"
        rank = df.loc[ads, "privacy_param"].rank(method="dense").astype(int) - 1
        df.loc[ads, "wd_sliced"] = [w1_by_rank[k] for k in rank]
        return {"domias_fig6": df}

    return f


def _vae(tvae_auc, std):
    def f(t):
        df = _fig6_shape()
        df["auc_std"] = std
        df.loc[_own_rows(df) & df.family.isin(["gan", "wgan_gp", "ctgan", "pategan", "adsgan"]), "auc_mean"] = 0.55
        df.loc[_own_rows(df) & (df.family == "tvae"), "auc_mean"] = tvae_auc
        return {"domias_fig6": df}

    return f


def _pareto(frontier_first, auc_step=0.01, n_seeds=4):
    """Points on a clean trade-off (W1 from 0.01 up by 0.01, AUC from 0.40 down by ``auc_step``) for one group of
    models, every setting of the others at W1 0.5 and AUC 0.6 (dominated beyond the noise, std 0.005 over
    ``n_seeds`` seeds: a difference's se 0.004 at 4): the paper's frontier (noise, TVAE, NFlow, PrivBayes) first, or
    the other models. With ``auc_step`` 0.001 neighbours' AUCs lie within the noise: only the point of the lowest W1
    is undominated beyond it."""

    def f(t):
        df = _fig6_shape(n_seeds=n_seeds)
        df["auc_std"] = 0.005
        on = df.family.isin(["noise", "tvae", "nflow", "privbayes"])
        good = on if frontier_first else (~on & (df.family != "baynet"))
        for own in OWN:
            rows = df.index[(df.attack == own) & good]
            df.loc[rows, "wd_sliced"] = 0.01 + 0.01 * np.arange(len(rows))
            df.loc[rows, "auc_mean"] = 0.40 - auc_step * np.arange(len(rows))
            df.loc[(df.attack == own) & ~good, ["wd_sliced", "auc_mean"]] = 0.5, 0.6
        return {"domias_fig6": df}

    return f


def _minority_excess(std, excesses):
    """Fig. 5's table with every group's accuracy 0.55, plus, on the minority group, each ``(attacks, excess)``."""

    def f(t):
        df = t["domias_fig5"].copy()
        df["accuracy_std"] = std
        df.loc[df.group.isin(["minority", "majority", "all"]), "accuracy_mean"] = 0.55
        mi = df.group == "minority"
        for attacks, excess in excesses:
            df.loc[mi & df.attack.isin(attacks), "accuracy_mean"] = 0.55 + excess
        return {"domias_fig5": df}

    return f


def _excess(own_excess, eq1_excess, std):
    return _minority_excess(std, [(OWN, own_excess), (["eq1_flow"], eq1_excess)])


def _ref_precision(delta, std):
    """At q = 0.2, each DOMIAS = Eq. 1 with its density estimator + ``delta``; every std ``std``."""

    def f(t):
        df = t["domias_fig13"].copy()
        df["precision_std"] = std
        at = np.isclose(df.q, 0.2)
        for est in ("kde", "flow"):
            eq1 = df.loc[at & (df.attack == f"eq1_{est}"), "precision_mean"].iloc[0]
            df.loc[at & (df.attack == f"domias_{est}"), "precision_mean"] = eq1 + delta
        return {"domias_fig13": df}

    return f


def _top(top, drop_extra, std):
    """DOMIAS at 0.60 at the smallest q and 0.58 at q = 0.2; MC and GAN-Leaks 0 at 0.5 + ``top`` at the smallest q,
    falling to q = 0.2 by DOMIAS's 0.02 + ``drop_extra``; every std ``std``."""

    def f(t):
        df = t["domias_fig13"].copy()
        df["precision_std"] = std
        q0, at = np.isclose(df.q, df.q.min()), np.isclose(df.q, 0.2)
        df.loc[q0 & df.attack.isin(OWN), "precision_mean"] = 0.60
        df.loc[at & df.attack.isin(OWN), "precision_mean"] = 0.58
        eq1 = df.attack.isin(["mc", "gan_leaks"])
        df.loc[q0 & eq1, "precision_mean"] = 0.5 + top
        df.loc[at & eq1, "precision_mean"] = 0.5 + top - 0.02 - drop_extra
        return {"domias_fig13": df}

    return f


# --------------------------------------------------------------------------- perturbations (lost)


def _rmsd_rows(
    rmsd, low, high, floor, names=("lost_table_rmsd", "lost_fig3_rmsd", "lost_fig4_rmsd", "lost_census_rmsd")
):
    def f(t):
        out = {}
        for name in names:
            df = t[name].copy()
            offset = 1e-4 * np.arange(len(df)) + 1e-3 * names.index(name)  # distinct settings stay distinct
            df["rmsd"], df["rmsd_low"], df["rmsd_high"] = rmsd + offset, low + offset, high + offset
            df["floor"] = floor + offset
            out[name] = df
        return out

    return f


MISS = ("lost_table_miss", "lost_fig3_miss", "lost_fig4_miss", "lost_census_miss")


def _miss(at_t, rate, low, high, noise, n_low, n_high, names=MISS, n_records=50):
    def f(t):
        out = {}
        for name in names:
            df = t[name].copy()
            rows = np.isclose(df.t, at_t)
            offset = 1e-4 * np.arange(rows.sum()) + 1e-3 * names.index(name)
            df.loc[rows, "miss_rate"] = rate - offset
            df.loc[rows, "miss_rate_low"], df.loc[rows, "miss_rate_high"] = low - offset, high - offset
            df.loc[rows, "miss_rate_noise"] = noise
            df.loc[rows, "miss_rate_noise_low"], df.loc[rows, "miss_rate_noise_high"] = n_low, n_high
            df.loc[rows, "n_high"] = n_records
            out[name] = df
        return out

    return f


def _miss_vs_noise(rate, noise, n_records=2000):
    """Every cell with a miss rate at ``rate`` ± 0.05 and noise alone at ``noise`` ± 0.05, over ``n_records``
    high-risk records (the rule reads each share with its records' binomial interval too)."""

    def f(t):
        out = {}
        for name in MISS:
            df = t[name].copy()
            has = df.miss_rate.notna()
            off = 1e-4 * np.arange(has.sum())
            df.loc[has, "miss_rate"], df.loc[has, "miss_rate_noise"] = rate - off, noise
            df.loc[has, "miss_rate_low"], df.loc[has, "miss_rate_high"] = rate - 0.05 - off, rate + 0.05 - off
            df.loc[has, "miss_rate_noise_low"], df.loc[has, "miss_rate_noise_high"] = noise - 0.05, noise + 0.05
            df.loc[has, "n_high"] = n_records
            out[name] = df
        return out

    return f


def _miss_t(rates_by_t, half_width, n_records=500):
    """Every (setting, t) cell at ``rates_by_t[t]`` ± ``half_width``, over ``n_records`` high-risk records (the
    rule reads the records' binomial interval too: a rise shown on 2 records is no rise)."""

    def f(t):
        out = {}
        for name in MISS:
            df = t[name].copy()
            rate = df.t.map(rates_by_t) - 1e-4 * np.arange(len(df))
            df["miss_rate"], df["miss_rate_low"], df["miss_rate_high"] = rate, rate - half_width, rate + half_width
            df["n_high"] = n_records
            out[name] = df
        return out

    return f


def _trend(name, key, values, half_width):
    def f(t):
        df = t[name].copy().sort_values(key)
        v = np.interp(np.arange(len(df)), [0, len(df) - 1], values)
        df["rmsd"], df["rmsd_low"], df["rmsd_high"] = v, v - half_width, v + half_width
        return {name: df}

    return f


def _size10k(floor):
    def f(t):
        df = t["lost_fig3_rmsd"].copy()
        df["rmsd"], df["rmsd_low"], df["rmsd_high"], df["floor"] = 0.1, 0.09, 0.11, floor
        return {"lost_fig3_rmsd": df}

    return f


def _chance(low_eps, high_eps, floor=0.05, middle=0.55):
    def f(t):
        df = t["lost_fig4_rmsd"].copy()
        for g in ("traditional", "model_seeded"):
            df[f"mean_{g}"] = middle
            df.loc[df.epsilon == df.epsilon.min(), f"mean_{g}"] = low_eps
            df.loc[df.epsilon == df.epsilon.max(), f"mean_{g}"] = high_eps
            df[f"floor_{g}"] = floor
        return {"lost_fig4_rmsd": df}

    return f


def _record(**values):
    def f(t):
        df = t["lost_fig5"].copy()
        for k, v in values.items():
            df[k] = v
        return {"lost_fig5": df}

    return f


# --------------------------------------------------------------------------- perturbations (mca)


def _mca_table3(shift):
    def f(t):
        df = t["mca_table3"].copy()
        rows = df.statistic.isin(["Pr[#x = 1]", "Pr[#x <= 3]"])
        df.loc[rows, "ours"] = df.loc[rows, "paper"].astype(float) + shift
        counts = df.statistic.isin(["training records", "test records"])
        df.loc[counts, "ours"] = df.loc[counts, "paper"].astype(float) + (100 if shift else 0)
        return {"mca_table3": df}

    return f


def _collisions(shift, columns):
    def f(t):
        df = t["mca_collisions"].copy()
        w = df.generator == "WGAN-GP"
        for col, paper in columns.items():
            df.loc[w, col] = MCA[paper] + shift
        return {"mca_collisions": df}

    return f


FIG3 = {"members_among_freq_gt3": "members_among_freq_gt3", "nonmembers_among_unique": "nonmembers_among_unique"}
ATTACK = {"collision_rate": "wgan_gp_collision_rate", "precision": "wgan_gp_precision"}


# --------------------------------------------------------------------------- the cases, by claim


def _case(paper, result, quote_start):
    (c,) = [c for c in JUDGED if c.paper == paper and c.result == result and c.quote.startswith(quote_start)]
    return key(c)


CASES = {
    _case("achilles", "§1; §6.1; §7", "we show"): _average_gap("achilles_table2", 0.072),
    _case("achilles", "§1; §6.2", "the performance"): _average_gap("achilles_table3", 0.052),
    _case("achilles", "§7", "When we use"): {
        "holds": _std_census(2.0, 100), "does not hold": _std_census(0.5, 10), "inconclusive": _std_census(1.2, 10)},
    _case("achilles", "§6.1 (Fig. 1)", "The median"): _median_cases("achilles_fig1_targets", 0.186),
    _case("achilles", "§6.2 (Fig. 2)", "The median"): _median_cases("achilles_fig2_targets", 0.1089),
    _case("achilles", "Table 2", "Table 2"): _cells("achilles_table2"),
    _case("achilles", "§6.1 (Fig. 1, Table 2)", "Figure 1"): _ahead("achilles_table2"),
    _case("achilles", "Table 2, Census Ω", "Table 2"): _cells("achilles_census_omega"),
    _case("achilles", "§6.1 (Table 2, log-likelihood; §5.2)", "our vulnerable"): {
        "holds": _loglik(0.2, 0.01), "does not hold": _loglik(-0.2, 0.01), "inconclusive": _loglik(0.001, 0.1)},
    _case("achilles", "Table 3", "Table 3"): _cells("achilles_table3"),
    _case("achilles", "§6.2 (Fig. 2, Table 3)", "Figure 2"): _ahead("achilles_table3"),
    _case("achilles", "§6.1 (Fig. 1, Table 2)", "Importantly"): _equivalently("achilles_table2"),
    _case("achilles", "§6.2 (Fig. 2, Table 3)", "Importantly"): _equivalently("achilles_table3"),
    _case("achilles", "§1 (Fig. 4)", "We confirm"): {
        "holds": _smallest_eps(0.49, 0.51), "does not hold": _smallest_eps(0.6, 0.7), "inconclusive": _smallest_eps(0.3, 0.7)},
    _case("achilles", "§1 (Fig. 4)", "find that"): _ahead("achilles_fig4"),
    _case("achilles", "§6.3 (Fig. 3a)", "The mean AUC"): {
        "holds": _fig3a(0.0, 0.01), "does not hold": _fig3a(0.3, 0.01), "inconclusive": _fig3a(0.07, 0.1)},
    _case("achilles", "§6.4 (Fig. 3b)", "mean AUC"): {
        "holds": _fig3b({"cosine": 0.8, "p=1": 0.8, "p=2": 0.8, "p=3": 0.77, "p=4": 0.77}),  # 'slightly': 0.03
        "does not hold": _fig3b({"cosine": 0.8, "p=1": 0.6, "p=2": 0.6, "p=3": 0.9, "p=4": 0.9}),
        "inconclusive": _fig3b({"cosine": 0.8, "p=1": 0.8, "p=2": 0.8, "p=3": 0.8, "p=4": 0.8}, std=0.2)},
    _case("achilles", "§6.5 (Fig. 4)", "Figure 4"): _ahead("achilles_fig4"),
    _case("achilles", "§6.5 (Fig. 4)", "As expected"): {
        "holds": _fig4_drop(0.5, 0.7, 0.9, 0.01), "does not hold": _fig4_drop(0.9, 0.3, 0.5, 0.01, at100=0.3),
        "inconclusive": _fig4_drop(0.5, 0.5, 0.5, 0.1, at100=0.5, rest=0.5),
        # everything else as the paper says, but at chance at ε = 100: no longer "holds"
        "holds in part": _fig4_drop(0.5, 0.7, 0.9, 0.01, at100=0.45)},
    _case("domias", "§5.1 (Figs. 3a, 3b)", "In both"): _outperforms(FIG3_SWEEPS),
    _case("domias", "§5.1 (Fig. 3a)", "For small"): {
        "holds": _ends("domias_fig3a", "n_mem", -0.2, 0.01), "does not hold": _ends("domias_fig3a", "n_mem", 0.2, 0.01),
        "inconclusive": _ends("domias_fig3a", "n_mem", 0.0, 0.05)},
    _case("domias", "§6 (Discussion; Fig. 3a)", "We have seen"): {
        "holds": _ends("domias_fig3a", "n_mem", -0.1, 0.01), "does not hold": _ends("domias_fig3a", "n_mem", 0.1, 0.01),
        "inconclusive": _ends("domias_fig3a", "n_mem", -0.08, 0.1)},
    _case("domias", "§5.1 (Fig. 3b)", "Again"): {
        "holds": _ends("domias_fig3b", "epochs", 0.2, 0.01), "does not hold": _ends("domias_fig3b", "epochs", -0.2, 0.01),
        "inconclusive": _ends("domias_fig3b", "epochs", 0.0, 0.05)},
    _case("domias", "§5.2 (Fig. 4)", "Evidently"): {
        "holds": _ref_gain(0.1, 0.005), "does not hold": _ref_gain(-0.1, 0.005), "inconclusive": _ref_gain(0.0, 0.05)},
    _case("domias", "§5.2 (Fig. 4)", "As expected"): {
        "holds": _kde_flow(1, 0.005), "does not hold": _kde_flow(-1, 0.005), "inconclusive": _kde_flow(0, 0.05)},
    _case("domias", "§5.2 (Fig. 4)", "Also note"): {
        "holds": _n_syn(0.05, 0.005), "does not hold": _n_syn(-0.05, 0.005), "inconclusive": _n_syn(0.0, 0.05)},
    _case("domias", "§5.3 (Fig. 5)", "DOMIAS is"): {
        "holds": _minority(0.1, 0.01), "does not hold": _minority(-0.1, 0.01), "inconclusive": _minority(0.0, 0.05)},
    _case("domias", "§5.3 (Fig. 5)", "Importantly"): {
        "holds": _understate(-0.1, 0.01), "does not hold": _understate(0.1, 0.01), "inconclusive": _understate(0.0, 0.05)},
    _case("domias", "§5.4 (Fig. 6)", "Though"): {
        "holds": _fig6(0.05, 0.005), "does not hold": _fig6(-0.05, 0.005), "inconclusive": _fig6(0.0, 0.05)},
    _case("domias", "§5.4 (Fig. 6)", "We see"): {
        "holds": _noise_curve(0.1, 0.005), "does not hold": _noise_curve(-0.1, 0.005), "inconclusive": _noise_curve(0.0, 0.05)},
    # holds: CAL and DOMIAS see the excess, the others none; fails: CAL below, the others as much as DOMIAS (they
    # capture it); inconclusive: all within the seeds' noise.
    _case("domias", "§5.3 (Fig. 5 caption)", "Except"): {
        "holds": _calibrated(0.1, 0.1, 0.0, 0.01), "does not hold": _calibrated(0.1, -0.1, 0.1, 0.01),
        "inconclusive": _calibrated(0.05, 0.05, 0.0, 0.1)},
    _case("domias", "§5.3 (Fig. 5 caption)", "Comparing"): {
        "holds": _excess(0.1, 0.0, 0.01), "does not hold": _excess(0.0, 0.1, 0.01), "inconclusive": _excess(0.05, 0.0, 0.1)},
    _case("domias", "§5.4 (Fig. 6)", "ADS-GAN"): {
        "holds": _adsgan(0.0, 0.05, 0.005), "does not hold": _adsgan(0.2, -0.05, 0.005),
        "inconclusive": _adsgan(0.0, 0.0, 0.05)},
    _case("domias", "§5.4 (Fig. 6)", "At first"): {
        "holds": _quality([0.5, 0.3, 0.4, 0.45, 0.5, 0.55, 0.6], 0.001),
        "does not hold": _quality([0.3, 0.4, 0.5, 0.5, 0.5, 0.5, 0.6], 0.001),
        "inconclusive": _quality([0.5, 0.3, 0.4, 0.45, 0.5, 0.55, 0.6], 0.5)},
    _case("domias", "§5.4 (Fig. 6)", "In contrast"): {
        "holds": _vae(0.45, 0.005), "does not hold": _vae(0.65, 0.005), "inconclusive": _vae(0.56, 0.1)},
    # holds: the frontier's points each lead their neighbours beyond the noise; holds in part: their AUCs within the
    # noise of each other (the point estimates alone would make a frontier of them); inconclusive: one run, no spread
    _case("domias", "§5.4 (Fig. 6)", "The Pareto"): {
        "holds": _pareto(True), "does not hold": _pareto(False), "holds in part": _pareto(True, auc_step=0.001),
        "inconclusive": _pareto(True, n_seeds=1)},
    _case("domias", "App. B.2 (Fig. 10)", "Indeed"): {
        "holds": _own_vs_best("domias_fig6", "generator", 0.1, 0.005),
        "does not hold": _own_vs_best("domias_fig6", "generator", -0.1, 0.005),
        "inconclusive": _own_vs_best("domias_fig6", "generator", 0.0, 0.05)},
    _case("domias", "App. D.1 (Fig. 13 caption)", "Additionally"): {
        "holds": _ref_precision(0.1, 0.01), "does not hold": _ref_precision(-0.1, 0.01),
        "inconclusive": _ref_precision(0.01, 0.1)},
    _case("domias", "App. D.1 (Fig. 13)", "We see that"): {
        "holds": _top(0.3, 0.2, 0.01), "does not hold": _top(-0.2, -0.1, 0.01), "inconclusive": _top(0.05, 0.05, 0.3)},
    _case("domias", "App. D.1 (Fig. 13)", "if the"): {
        "holds": _precision(0.1, 0.01), "does not hold": _precision(-0.1, 0.01), "inconclusive": _precision(0.0, 0.05)},
    _case("lost", "abstract", "show across"): {
        "holds": _miss(0.8, 0.94, 0.939, 0.941, 0.2, 0.1, 0.3, n_records=100_000),
        "does not hold": _miss(0.8, 0.5, 0.45, 0.55, 0.2, 0.1, 0.3),
        "inconclusive": _miss(0.8, 0.94, 0.9, 0.97, 0.94, 0.9, 0.97)},
    _case("lost", "§5 (summary)", "Experimente auf dem Adult-Datensatz und dem Synthpop-Generator zeigen: ... RMSD"): {
        "holds": _rmsd_rows(0.08, 0.07, 0.09, 0.03), "does not hold": _rmsd_rows(0.3, 0.28, 0.32, 0.03),
        "inconclusive": _rmsd_rows(0.08, 0.07, 0.09, 0.08)},
    _case("lost", "abstract", "the two privacy"): {
        "holds": _rmsd_rows(0.08, 0.07, 0.09, 0.03), "does not hold": _rmsd_rows(0.08, 0.07, 0.09, 0.2),
        "inconclusive": _rmsd_rows(0.08, 0.07, 0.09, 0.08)},
    _case("lost", "§5 (summary)", "Experimente auf dem Adult-Datensatz und dem Synthpop-Generator zeigen: ... Miss"): {
        "holds": _miss(0.8, 0.8, 0.75, 0.85, 0.1, 0.05, 0.15, n_records=2000), "does not hold": _miss(0.8, 0.4, 0.35, 0.45, 0.05, 0.0, 0.1),
        "inconclusive": _miss(0.8, 0.8, 0.75, 0.85, 0.8, 0.75, 0.85)},
    _case("lost", "§5 (summary)", "Bei t=0,6"): {
        "holds": _miss(0.6, 0.5, 0.45, 0.55, 0.1, 0.05, 0.15), "does not hold": _miss(0.6, 0.1, 0.05, 0.15, 0.02, 0.0, 0.04, n_records=2000),
        "inconclusive": _miss(0.6, 0.2, 0.1, 0.3, 0.02, 0.0, 0.04)},
    _case("lost", "§5 (summary)", "Bei t=0,9"): {
        "holds": _miss(0.9, 0.8, 0.799, 0.801, 0.1, 0.05, 0.15, n_records=100_000),
        "does not hold": _miss(0.9, 1.0, 0.98, 1.0, 0.1, 0.05, 0.15),
        "inconclusive": _miss(0.9, 0.8, 0.7, 0.9, 0.8, 0.7, 0.9)},
    _case("lost", "§5 (summary)", "Für alle"): {
        "holds": _miss_vs_noise(0.8, 0.1), "does not hold": _miss_vs_noise(0.1, 0.8), "inconclusive": _miss_vs_noise(0.5, 0.5)},
    _case("lost", "§5 (summary)", "Die Miss Rate"): {
        "holds": _miss_t({0.6: 0.1, 0.7: 0.35, 0.8: 0.6, 0.9: 0.85}, 0.05),
        "does not hold": _miss_t({0.6: 0.85, 0.7: 0.6, 0.8: 0.35, 0.9: 0.1}, 0.05),
        "inconclusive": _miss_t({0.6: 0.5, 0.7: 0.5, 0.8: 0.5, 0.9: 0.5}, 0.4)},
    _case("lost", "abstract; §5 (Fig. 3)", "records in"): {
        "holds": _trend("lost_fig3_rmsd", "n_records", (0.2, 0.05), 0.01),
        "does not hold": _trend("lost_fig3_rmsd", "n_records", (0.05, 0.2), 0.01),
        "inconclusive": _trend("lost_fig3_rmsd", "n_records", (0.1, 0.09), 0.05)},
    _case("lost", "§5 (summary, Fig. 3)", "Auch bei"): {
        "holds": _size10k(0.05), "does not hold": _size10k(0.2), "inconclusive": _size10k(0.1)},
    _case("lost", "§5 (summary, Fig. 4)", "Die MIA"): {
        "holds": _chance(0.5, 0.6, floor=0.01), "does not hold": _chance(0.7, 0.6),
        "inconclusive": _chance(0.5, 0.6, floor=0.1)},
    _case("lost", "abstract; §5 (summary, Fig. 4)", "models not"): {
        "holds": _trend("lost_fig4_rmsd", "epsilon", (0.05, 0.2), 0.01),
        "does not hold": _trend("lost_fig4_rmsd", "epsilon", (0.2, 0.05), 0.01),
        "inconclusive": _trend("lost_fig4_rmsd", "epsilon", (0.09, 0.1), 0.05)},
    _case("lost", "§5 (summary, Fig. 5)", "Das modell"): {
        "holds": _record(model_seeded_min=0.5, model_seeded_max=0.8, traditional=0.62, between_datasets_sd=0.1,
                         noise_sd=0.001),
        "does not hold": _record(model_seeded_min=0.95, model_seeded_max=0.97, traditional=0.3,
                                 between_datasets_sd=0.01, noise_sd=0.01)},
    _case("mca", "§5.1 (Table 3, Adult)", "Table 3"): {"holds": _mca_table3(0.0), "does not hold": _mca_table3(0.05)},
    _case("mca", "§4.1 (Fig. 3, left: Adult)", "In Fig. 3"): {
        "holds": _collisions(0.0, FIG3), "does not hold": _collisions(-0.2, FIG3)},
    _case("mca", "authors' notebook (not the paper's text)", "the WGAN"): {
        "holds": _collisions(0.0, ATTACK), "does not hold": _collisions(-0.15, ATTACK)},
}  # fmt: skip


def test_every_rule_has_holds_and_fails_cases():
    missing = [key(c) for c in JUDGED if key(c) not in CASES]
    assert not missing, f"rules without holds/fails tests: {missing}"
    assert all({"holds", "does not hold"} <= set(v) for v in CASES.values())


PARAMS = [
    pytest.param(c, expected, make, id=f"{short(c)} -> {expected}")
    for c in JUDGED
    for expected, make in CASES.get(key(c), {}).items()
]


@pytest.mark.parametrize("claim, expected, make", PARAMS)
def test_rule_gives_the_verdict_its_table_supports(claim, expected, make):
    tables = {**tables_of(claim), **make(tables_of(claim))}
    outcome = claim.rule(tables)
    assert outcome is not None, "the rule could not read its perturbed tables"
    assert verdict(outcome.checks) == expected, outcome.why(10)


# Claims whose committed tables cannot judge them yet, by design, each saying why (its rule's "not run").
NOT_RUN_BY_DESIGN: set[str] = set()


def quick_tables_of(c) -> dict[str, pd.DataFrame]:
    folder = PROJECT_ROOT / "figures" / "quick" / "tables"
    return {n: pd.read_csv(folder / f"{n}.csv") for n in c.tables if (folder / f"{n}.csv").exists()}


@pytest.mark.parametrize("claim", JUDGED, ids=short)
def test_rule_runs_on_the_committed_tables(claim):
    tables = tables_of(claim)
    outcome = claim.rule(tables)
    if outcome is None:  # as the scorecard does: the paper-size table lacks what the rule needs, quick's is read
        tables = quick_tables_of(claim)
        outcome = claim.rule(tables)
    assert outcome is not None
    if f"{claim.result} | {claim.quote[:8]}" in NOT_RUN_BY_DESIGN:
        assert verdict(outcome.checks) == "not run" and outcome.why()
    elif set(claim.tables) <= set(tables):
        assert outcome.checks
    else:  # a table no run has committed: not run (no check, never "inconclusive"), and it says why
        assert verdict(outcome.checks) == "not run" and outcome.why()


def _papers_own_run(table: str, attack: str) -> pd.DataFrame:
    """The committed table with the paper's own numbers as ours: its means and stds, 10 targets per method."""
    from vrlib.experiments.achilles import paper_table

    df = committed(table).drop(columns=["paper_mean", "paper_std"], errors="ignore")
    p = paper_table(attack)[["method", "dataset", "generator", "paper_mean", "paper_std"]]
    df = df.merge(p, on=["method", "dataset", "generator"])
    df["auc_mean"], df["auc_std"], df["n_targets"] = df.paper_mean, df.paper_std, 10
    return df


@pytest.mark.parametrize(
    "result, quote, table, attack",
    [
        ("§1; §6.1; §7", "we show", "achilles_table2", "query"),
        ("Table 2", "Table 2", "achilles_table2", "query"),
        ("Table 3", "Table 3", "achilles_table3", "attention"),
        ("§7", "When we use", "achilles_table2", "query"),
    ],
)
def test_the_papers_own_run_reproduces_itself(result, quote, table, attack):
    # A rule that compares ours with the paper's value must say "holds" when ours IS the paper's, at the paper's own
    # noise (10 targets): a margin of the paper's half-width alone could not be met by a run as noisy as the paper's.
    (c,) = [c for c in JUDGED if c.paper == "achilles" and c.result == result and c.quote.startswith(quote)]
    outcome = c.rule({table: _papers_own_run(table, attack)})
    assert verdict(outcome.checks) == "holds", outcome.why(20)


def test_replication_margin_by_hand():
    from vrlib.scorecard.rules import equivalent, replication_margin

    assert replication_margin(0.03, 0.04) == pytest.approx(1.96 * 0.05)
    m = replication_margin(0.02, 0.02)  # 0.0554
    assert equivalent(0.0, 0.02, m, paper_se=0.02) is True  # 0 ± 0.0392 inside ± 0.0554
    assert equivalent(0.02, 0.02, m, paper_se=0.02) is None  # 0.02 ± 0.0392 reaches past it, not significant
    assert equivalent(0.06, 0.02, m, paper_se=0.02) is False  # beyond 1.96 √2 se: significantly apart
    # a noisier run has less room, never more: the same difference holds at se 0.01 and not at se 0.05
    assert equivalent(0.01, 0.01, replication_margin(0.01, 0.02), paper_se=0.02) is True
    assert equivalent(0.01, 0.05, replication_margin(0.05, 0.02), paper_se=0.02) is None


def test_headline_average_gap_on_the_papers_own_tables():
    # By hand from the paper's Table 2: (0.804-0.742 + 0.810-0.787 + 0.879-0.802 + 0.858-0.731) / 4.
    assert headline.paper_average_gap("query")["gap"] == pytest.approx(
        (0.804 - 0.742 + 0.810 - 0.787 + 0.879 - 0.802 + 0.858 - 0.731) / 4
    )
    # Table 3: (0.797-0.765 + 0.763-0.745 + 0.838-0.783 + 0.737-0.674) / 4 = 0.042, not the stated 5.2 p.p.
    assert headline.paper_average_gap("attention")["gap"] == pytest.approx(0.042)


def test_headline_average_gap_se_bounds_the_settings_that_share_targets():
    # The two generators' settings of one dataset judge the same 10 targets of each method (the committed per-target
    # tables: every target of a method appears under both generators), so their gaps covary; the se of the average
    # was that of four independent settings. By hand: each setting's gap has se sqrt(0.05² / 9 + 0.03² / 9); per
    # dataset the two add as if fully correlated (0.02 ... and 0.04 ... apart), the two datasets as independent.
    rows = []
    for dataset, std in (("adult", 0.05), ("census", 0.1)):
        for generator in ("synthpop", "baynet"):
            rows += [dict(method="distance", dataset=dataset, generator=generator, auc_mean=0.8, auc_std=std,
                          n_targets=10),
                     dict(method="loglik", dataset=dataset, generator=generator, auc_mean=0.7, auc_std=0.03,
                          n_targets=10)]  # fmt: skip
    g = headline.average_gap(pd.DataFrame(rows))
    one = {std: np.hypot(std / 3, 0.03 / 3) for std in (0.05, 0.1)}
    assert g["se"] == pytest.approx(np.sqrt(2 * one[0.05] ** 2 + 2 * one[0.1] ** 2) / 4)
    assert g["se_shared"] == pytest.approx(np.sqrt((2 * one[0.05]) ** 2 + (2 * one[0.1]) ** 2) / 4)
    # 5.2 p.p. (Table 3): ours +0.002 against the stated 0.052 was 'does not hold' only with the four settings taken
    # as independent (ours se 0.015, the paper's 0.017); with the bound (0.021, 0.021) the two are not apart
    (c,) = [c for c in JUDGED if c.paper == "achilles" and c.result == "§1; §6.2"]
    out = c.rule({"achilles_table3": committed("achilles_table3")})
    assert out.checks == [None], out.why()


@pytest.mark.parametrize("result, table", [("§6.1 (Fig. 1)", "achilles_fig1_targets"),
                                           ("§6.2 (Fig. 2)", "achilles_fig2_targets")])  # fmt: skip
def test_median_gap_match_never_passes_more_easily_on_a_noisier_run(result, table):
    # The paper's median gap was taken as noisy as ours, so the margin (1.96 √2 se) grew faster than our interval
    # (1.96 se): a gap 0.05 above the stated one was inconclusive at a bootstrap se of 0.04 and 'equal' to it at
    # 0.08 to 0.11. The check on the stated gap may pass at a smaller noise only, never first at a larger one.
    (c,) = [c for c in JUDGED if c.paper == "achilles" and c.result == result]
    stated = {"§6.1 (Fig. 1)": 0.186, "§6.2 (Fig. 2)": 0.1089}[result]
    passed = []
    for spread in (0.1, 0.15, 0.2, 0.25, 0.3):
        out = c.rule({**tables_of(c), **_targets(table, stated + 0.05, 0.15, spread)(None)})
        passed.append(out.checks[-1] is True)  # the last check: Census/BayNet against the stated gap
    assert passed == sorted(passed, reverse=True), passed


def test_paper_median_gap_se_by_hand():
    # Census/BayNet: distance 0.858 ± 0.040 and log-likelihood (the highest other mean) 0.731 ± 0.090 over 10
    # targets in Table 2; 0.737 ± 0.118 and 0.674 ± 0.085 in Table 3.
    assert headline.paper_median_gap_se("query") == pytest.approx(np.sqrt(np.pi / 2) * np.hypot(0.040, 0.090) / 3)
    assert headline.paper_median_gap_se("attention") == pytest.approx(np.sqrt(np.pi / 2) * np.hypot(0.118, 0.085) / 3)


def test_headline_median_gaps_and_std_ratios_by_hand():
    rows = []
    for method, aucs in {"distance": [0.9, 0.8, 0.7], "rare": [0.6, 0.65, 0.9], "random": [0.5, 0.5, 0.5]}.items():
        rows += [dict(dataset="d", generator="g", method=method, auc=a) for a in aucs]
    m = headline.median_gaps(pd.DataFrame(rows))
    assert (m.best_other.iloc[0], m.gap.iloc[0]) == ("rare", pytest.approx(0.8 - 0.65))
    table = pd.DataFrame(
        dict(method=["distance", "loglik"], dataset="census", generator="g", auc_std=[0.02, 0.04], n_targets=10)
    )
    r = headline.std_ratios(table).iloc[0]
    from scipy import stats

    lo, hi = stats.f.ppf([0.025, 0.975], 9, 9)
    assert r.ratio == pytest.approx(2.0)
    assert (r.ratio_low, r.ratio_high) == (pytest.approx(np.sqrt(4 / hi)), pytest.approx(np.sqrt(4 / lo)))


def test_lost_rows_shared_by_two_tables_count_once():
    from vrlib.scorecard.lost import RMSD_KEY, settings

    t = {n: committed(n) for n in ("lost_table_rmsd", "lost_fig3_rmsd")}
    rows = settings(t, ("lost_table_rmsd", "lost_fig3_rmsd"), RMSD_KEY)
    shared = set(zip(t["lost_table_rmsd"].rmsd.round(12), t["lost_table_rmsd"].floor.round(12))) & set(
        zip(t["lost_fig3_rmsd"].rmsd.round(12), t["lost_fig3_rmsd"].floor.round(12))
    )
    assert len(rows) == len(t["lost_table_rmsd"]) + len(t["lost_fig3_rmsd"]) - len(shared)


@pytest.mark.parametrize("result, table", [("§6.1 (Fig. 1)", "achilles_table2"), ("§6.2 (Fig. 2)", "achilles_table3")])
def test_median_claims_without_per_target_aucs_are_not_run_and_say_why(result, table):
    # Nothing measured is nothing within the noise: "not run", never "inconclusive".
    (claim,) = [c for c in JUDGED if c.result == result and c.quote.startswith("The median")]
    outcome = claim.rule({table: committed(table)})
    assert verdict(outcome.checks) == "not run"
    assert "no per-target AUC table" in outcome.why() and "median" in outcome.why()


def test_median_gap_se_by_hand():
    # Two targets per method: a bootstrap median of distance's is a (1/4), (a + b) / 2 (1/2) or b (1/4), so its
    # variance is (b - a)² / 8; the other method's targets are equal, its median fixed.
    a, b = 0.6, 1.0
    rows = [dict(dataset="d", generator="g", method="distance", auc=x) for x in (a, b)]
    rows += [dict(dataset="d", generator="g", method="rare", auc=0.5) for _ in range(2)]
    m = headline.median_gaps(pd.DataFrame(rows), n_boot=40_000, seed=1).iloc[0]
    assert m.gap == pytest.approx(0.3)
    assert m.se == pytest.approx(abs(b - a) / np.sqrt(8), rel=0.02)
    # no spread at all: no noise
    flat = pd.DataFrame(
        [dict(dataset="d", generator="g", method=k, auc=v) for k, v in (("distance", 0.7), ("rare", 0.6))] * 3
    )
    assert headline.median_gaps(flat, n_boot=100).se.iloc[0] == pytest.approx(0.0, abs=1e-12)


# --------------------------------------------------------------------------- "every baseline", not the best mean


def test_against_each_is_decided_by_every_other_not_the_best_mean():
    from vrlib.scorecard.rules import against_each

    # Ahead of the best mean (b) beyond the noise, but within the noise of a lower, noisier one (c): not "holds".
    v, name, d, _ = against_each([("b", 0.05, 0.001), ("c", 0.06, 0.1)])
    assert (v, name, d) == (None, "c", 0.06)
    assert against_each([("b", 0.05, 0.001), ("c", 0.06, 0.001)])[:2] == (True, "b")  # the closest one decides
    assert against_each([("b", 0.05, 0.001), ("c", -0.06, 0.001)])[:2] == (False, "c")
    assert against_each([("b", 0.05, 0.001), ("c", float("nan"), 0.001)])[0] is None  # a missing value never passes
    with pytest.raises(ValueError):
        against_each([])


def _domias_noisy_runner_up(name, by, value="auc", own_margin=0.1, noisy_std=0.3, group=None):
    """DOMIAS ``own_margin`` above every baseline's mean; the best baseline (LOGAN 0) 0.05 below DOMIAS with a tiny
    std, MC 0.06 below it with ``noisy_std``: the best mean is cleared, MC is not (with a large ``noisy_std``)."""

    def f(t):
        df = t[name].copy()
        sel = df.index if group is None else df.index[df.group == group]
        df.loc[sel, f"{value}_std"] = 0.001
        # 0.5, each setting apart by 1e-5 and each table by 1e-7 per code point of its name (every attack alike):
        # distinct settings keep distinct values, in one table and across two (Fig. 3a's and 3b's)
        apart = 1e-5 * df.loc[sel].groupby(by).ngroup() + 1e-7 * sum(map(ord, name))
        df.loc[sel, f"{value}_mean"] = 0.5 + apart
        df.loc[sel.intersection(df.index[df.attack.isin(OWN)]), f"{value}_mean"] += own_margin
        df.loc[sel.intersection(df.index[df.attack == "logan_0"]), f"{value}_mean"] += own_margin - 0.05
        mc = sel.intersection(df.index[df.attack == "mc"])
        df.loc[mc, f"{value}_mean"] += own_margin - 0.06
        df.loc[mc, f"{value}_std"] = noisy_std
        if group is not None:  # outside the group DOMIAS is clearly less accurate (the first check holds)
            rest = df.index[(df.group != group) & df.attack.isin(OWN)]
            df.loc[rest, f"{value}_mean"], df.loc[rest, f"{value}_std"] = 0.3, 0.001
        return {name: df}

    return f


NOISY_RUNNER_UP = [
    (("domias", "§5.1 (Figs. 3a, 3b)", "In both"), ("domias_fig3a", "domias_fig3b"), ("n_mem", "epochs"), "auc", None),
    (("domias", "App. B.2 (Fig. 10)", "Indeed"), "domias_fig6", "generator", "auc", None),
    (("domias", "App. D.1 (Fig. 13)", "if the attacker"), "domias_fig13", "q", "precision", None),
    (("domias", "§5.3 (Fig. 5)", "DOMIAS is"), "domias_fig5", "subgroup", "accuracy", "minority"),
]


@pytest.mark.parametrize("case, name, by, value, group", NOISY_RUNNER_UP, ids=lambda x: str(x)[:40])
def test_outperforming_every_baseline_is_not_judged_on_the_best_mean_alone(case, name, by, value, group):
    (claim,) = [c for c in JUDGED if key(c) == _case(*case)]
    tables = tables_of(claim)
    pairs = list(zip(name, by)) if isinstance(name, tuple) else [(name, by)]

    def made(**kw):
        return {
            k: v for n, b in pairs for k, v in _domias_noisy_runner_up(n, b, value, group=group, **kw)(tables).items()
        }

    noisy = claim.rule({**tables, **made()})
    # Ahead of the best mean beyond the noise, within the noise of MC: the claim is not shown.
    assert verdict(noisy.checks) != "holds", noisy.ours
    assert "MC" in noisy.why(20) + noisy.ours
    # The same table with MC as sure as the others: holds.
    sure = claim.rule({**tables, **made(noisy_std=0.001)})
    assert verdict(sure.checks) == "holds", sure.why(10)


def _achilles_noisy(name, distance, loglik, random_std, loglik_std=0.001):
    """Per setting: random the best mean (0.8) with ``random_std``; loglik at ``loglik`` with ``loglik_std``; the rest
    at 0.5; distance at ``distance``; every other std tiny."""

    def f(t):
        df = t[name].copy()
        df["auc_std"], df["auc_mean"] = 0.001, 0.5
        df.loc[df.method == "random", ["auc_mean", "auc_std"]] = 0.8, random_std
        df.loc[df.method == "loglik", ["auc_mean", "auc_std"]] = loglik, loglik_std
        df.loc[df.method == "distance", "auc_mean"] = distance
        return {name: df}

    return f


@pytest.mark.parametrize("table", ["achilles_table2", "achilles_table3"])
def test_not_behind_checks_every_other_method(table):
    (claim,) = [c for c in JUDGED if c.tables == (table,) and c.quote.startswith("Importantly")]
    tables = tables_of(claim)
    # Within the noise of the best mean (random, std 0.3), below loglik by 0.05, beyond the margin (0.023 / 0.018)
    # with a tight interval: distance *is* behind one.
    behind = claim.rule({**tables, **_achilles_noisy(table, 0.7, 0.75, 0.3)(tables)})
    assert verdict(behind.checks) == "does not hold", behind.ours
    # Ahead of loglik, 0.01 below random: with random as sure as the others, "equivalently" (inside the margin) ...
    level = claim.rule({**tables, **_achilles_noisy(table, 0.79, 0.75, 0.001)(tables)})
    assert verdict(level.checks) == "holds", level.why(10)
    # ... with random's std 0.3, within the noise but its interval (± 0.196) reaches past the margin: too noisy to
    # tell, never "holds" (the rule before passed it for being within the noise).
    noisy = claim.rule({**tables, **_achilles_noisy(table, 0.79, 0.75, 0.3)(tables)})
    assert verdict(noisy.checks) == "inconclusive", noisy.why(10)
    # 0.03 below random with tight intervals: inside the cell's own half-width (0.042 / 0.048) the rule before called
    # "equivalently", but larger than the paper's smallest outperformance (Table 2: 0.023, Table 3: 0.018) -- behind.
    deficit = claim.rule({**tables, **_achilles_noisy(table, 0.77, 0.75, 0.001)(tables)})
    assert verdict(deficit.checks) == "does not hold", deficit.why(10)


def test_equivalently_margin_is_the_papers_smallest_outperformance_by_hand():
    """Table 2 (the paper's means): distance − the best other per setting 0.879 − 0.802, 0.858 − 0.731, 0.804 − 0.742,
    0.810 − 0.787: the least 0.023; Table 3: 0.838 − 0.783, 0.737 − 0.674, 0.797 − 0.765, 0.763 − 0.745: 0.018."""
    from vrlib.scorecard.achilles import smallest_paper_advantage

    assert smallest_paper_advantage("query") == pytest.approx(0.810 - 0.787)
    assert smallest_paper_advantage("attention") == pytest.approx(0.763 - 0.745)


def test_equivalently_fails_only_at_the_family_z():
    """ "Consistently ... more or equivalently": 12 comparisons (4 settings × 3 others); one deficit beyond the margin
    by 2.5 se (beyond 1.96, within the family's 2.87) is inconclusive, by 4 se fails."""
    from vrlib.scorecard.rules import family_z, not_below

    z = family_z(12)
    assert round(z, 2) == 2.87
    assert not_below(-0.02 - 2.5 * 0.01, 0.01, 0.02) is False
    assert not_below(-0.02 - 2.5 * 0.01, 0.01, 0.02, fail_z=z) is None
    assert not_below(-0.02 - 4 * 0.01, 0.01, 0.02, fail_z=z) is False
    assert not_below(0.0, 0.005, 0.02, fail_z=z) is True


OUTPERFORMS = [("achilles_table2", "outperforms"), ("achilles_table3", "outperforms"),
               ("achilles_fig4", "Figure 4 shows"), ("achilles_fig4", "find that our metric")]  # fmt: skip


@pytest.mark.parametrize("table, quote", OUTPERFORMS)
def test_outperforms_checks_every_other_method(table, quote):
    (claim,) = [c for c in JUDGED if c.tables == (table,) and quote in c.quote]
    tables = tables_of(claim)
    # distance 0.85 clears the best mean (random 0.8, tiny std) but not loglik (0.79, std 0.3): within the noise of
    # one other method, never "holds".
    noisy = claim.rule({**tables, **_achilles_noisy(table, 0.85, 0.79, 0.001, loglik_std=0.3)(tables)})
    assert verdict(noisy.checks) == "inconclusive", noisy.ours
    assert "loglik" in noisy.ours + noisy.why(20)
    sure = claim.rule({**tables, **_achilles_noisy(table, 0.85, 0.79, 0.001)(tables)})
    assert verdict(sure.checks) == "holds", sure.why(10)
    behind = claim.rule({**tables, **_achilles_noisy(table, 0.7, 0.79, 0.001, loglik_std=0.3)(tables)})
    assert verdict(behind.checks) == "does not hold", behind.ours


# --------------------------------------------------------------------------- lost: how many records a miss rate has


def test_up_to_80_at_t09_uses_the_records_binomial_noise():
    (claim,) = [c for c in JUDGED if c.paper == "lost" and c.quote.startswith("Bei t=0,9")]
    tables = tables_of(claim)
    # 6 of 6 high-risk records missed, every bootstrap replicate 1.0, noise alone 0.1: a true rate of 0.8 misses
    # all 6 with probability 0.8⁶ = 0.26, so 0.8 is not excluded (Clopper-Pearson [0.54, 1]) -- but neither is
    # anything from 0.54 to 1: too noisy to tell, never "holds" (the rule before passed it for covering 0.8).
    few = claim.rule({**tables, **_miss(0.9, 1.0, 1.0, 1.0, 0.1, 0.05, 0.15, n_records=6)(tables)})
    assert verdict(few.checks) == "inconclusive", few.why(10)
    # 0.8 of 100,000 records, the bootstrap interval [0.799, 0.801]: inside 0.80 ± 0.005, holds.
    exact = claim.rule({**tables, **_miss(0.9, 0.8, 0.799, 0.801, 0.1, 0.05, 0.15, n_records=100_000)(tables)})
    assert verdict(exact.checks) == "holds", exact.why(10)
    # 600 of 600: the interval [0.994, 1] excludes 0.8.
    many = claim.rule({**tables, **_miss(0.9, 1.0, 1.0, 1.0, 0.1, 0.05, 0.15, n_records=600)(tables)})
    assert verdict(many.checks) == "does not hold", many.ours


def test_records_interval_is_clopper_pearson_by_hand():
    from types import SimpleNamespace

    from scipy import stats

    from vrlib.scorecard.lost import _records_interval

    row = SimpleNamespace(miss_rate=0.5, miss_rate_low=0.45, miss_rate_high=0.55, n_high=10)
    low, high = _records_interval(row)
    assert low == pytest.approx(stats.beta.ppf(0.025, 5, 6)) and high == pytest.approx(stats.beta.ppf(0.975, 6, 5))
    assert (low, high) == pytest.approx((0.187, 0.813), abs=1e-3)
    # With many records the bootstrap interval is the wider one and is kept.
    wide = SimpleNamespace(miss_rate=0.5, miss_rate_low=0.3, miss_rate_high=0.7, n_high=10_000)
    assert _records_interval(wide) == (0.3, 0.7)


# --------------------------------------------------------------------------- lost: the summary's Adult/Synthpop ranges


def _only_others_out_of_range(kind, swap=False):
    """Adult/Synthpop rows inside the stated range (beyond the noise, narrow); every other setting's rows (BayNet,
    PrivBayes, Census) far outside it: a rule that reads those rows says no. ``swap``: the other way round."""
    from vrlib.scorecard.lost import LOST_RMSD

    def f(t):
        out = {}
        for name in LOST_RMSD if kind == "rmsd" else MISS:
            df = t[name].copy()
            if kind == "rmsd":
                inside, outside = 0.07, 0.5
                col, lo, hi = "rmsd", "rmsd_low", "rmsd_high"
                df["floor"] = 0.01
            else:
                inside, outside = 0.8, 0.1
                col, lo, hi = "miss_rate", "miss_rate_low", "miss_rate_high"
                df["miss_rate_noise"], df["miss_rate_noise_low"], df["miss_rate_noise_high"] = 0.01, 0.0, 0.02
                df["n_high"] = 5000
            if name.startswith("lost_table"):
                mask = df.generator == "synthpop"
            else:
                mask = pd.Series(name.startswith("lost_fig3"), index=df.index)
            value = np.where(mask != swap, inside, outside) - 1e-4 * np.arange(len(df))  # each setting distinct
            df[col], df[lo], df[hi] = value, value - 0.005, value + 0.005
            out[name] = df
        return out

    return f


@pytest.mark.parametrize("kind, quote", [("rmsd", "RMSD-Bereich"), ("miss", "Miss Rate-Bereich")])
def test_adult_synthpop_ranges_do_not_read_other_settings(kind, quote):
    (claim,) = [c for c in JUDGED if c.paper == "lost" and quote in c.quote]
    tables = tables_of(claim)
    outcome = claim.rule({**tables, **_only_others_out_of_range(kind)(tables)})
    assert verdict(outcome.checks) == "holds", outcome.why(10)
    assert not any(w in outcome.why(50) for w in ("BayNet", "baynet", "PrivBayes", "Census"))
    # Adult/Synthpop outside the range, the rest inside: does not hold.
    swapped = claim.rule({**tables, **_only_others_out_of_range(kind, swap=True)(tables)})
    assert verdict(swapped.checks) == "does not hold", swapped.ours


def test_one_record_checks_the_stated_traditional_risk():
    (claim,) = [c for c in JUDGED if c.paper == "lost" and c.quote.startswith("Das modell")]
    tables = tables_of(claim)
    # The range as the paper's, but R_T = 0.87 where the quote states 0.62: not "holds" (before, no check read R_T
    # itself; only worst case − R_T, which fails here too).
    paper = dict(model_seeded_min=0.5, model_seeded_max=0.8, between_datasets_sd=0.1, noise_sd=0.001)
    assert verdict(claim.rule({**tables, **_record(**paper, traditional=0.62)(tables)}).checks) == "holds"
    off = claim.rule({**tables, **_record(**paper, traditional=0.87)(tables)})
    assert verdict(off.checks) == "holds in part" and "traditional risk 0.870 against 0.620" in off.why(10)


def test_chance_is_inconclusive_where_the_targets_shared_noise_could_explain_the_gap():
    (claim,) = [c for c in JUDGED if c.paper == "lost" and c.quote.startswith("Die MIA")]
    tables = tables_of(claim)
    # 250 targets, floor 0.05: se 0.0022 with independent errors, 0.035 with one shared error. 0.524 is 0.024 from
    # 0.5: inside 0.5 ± 0.05 with the first se, reaching past it with the second: inconclusive.
    mid = claim.rule({**tables, **_chance(0.524, 0.8)(tables)})
    assert verdict(mid.checks) == "holds in part" and mid.checks.count(None) == 2, mid.why(10)
    # 0.1 from 0.5: wholly beyond the margin with the first se, not with the second (0.1 − 1.96 × 0.035 = 0.031):
    # still inconclusive; 0.2 from 0.5: wholly beyond with both, fails.
    near = claim.rule({**tables, **_chance(0.6, 0.8)(tables)})
    assert False not in near.checks and near.checks.count(None) == 2, near.why(10)
    far = claim.rule({**tables, **_chance(0.7, 0.9, middle=0.8)(tables)})  # rising with ε at every step
    assert far.checks.count(False) == 2, far.why(10)


def test_outperforms_also_shows_the_papers_own_baseline_set():
    (claim,) = [c for c in JUDGED if key(c) == _case("domias", "§5.1 (Figs. 3a, 3b)", "In both")]
    tables = tables_of(claim)
    # DOMIAS clears every baseline but LOGAN D1 (ours), which is far above it: the verdict does not hold, and the
    # line for the paper's set (LOGAN D1 as published in its place) shows DOMIAS above every one.
    made = {}
    for name, by in FIG3_SWEEPS:
        df = _domias_noisy_runner_up(name, by, noisy_std=0.001)(tables)[name]
        df.loc[df.attack == "logan_d1", "auc_mean"] = 0.9
        made[name] = df
    out = claim.rule({**tables, **made})
    n = made["domias_fig3a"].n_mem.nunique() + made["domias_fig3b"].epochs.nunique()  # made apart: none shared
    assert verdict(out.checks) == "does not hold"
    assert (
        f"as the paper ran them (LOGAN D1 as published, not ours): above every one beyond the noise at {n}" in out.ours
    )


def test_in_both_plots_is_one_row_with_the_shared_setting_once():
    # "In both plots, we see DOMIAS consistently outperforms baseline methods" is one sentence: before, two rows (Fig.
    # 3a, Fig. 3b) counted it as two claims, and Fig. 3b's 2,000 epochs (Fig. 3a's |D_mem| = 500: the same runs, the
    # same values) failed in both.
    rows = [c for c in JUDGED if c.paper == "domias" and c.quote.startswith("In both plots")]
    assert len(rows) == 1
    (claim,) = rows
    tables = tables_of(claim)
    a, b = tables["domias_fig3a"], tables["domias_fig3b"]
    shared = a[a.n_mem == 500].drop(columns="n_mem").sort_values("attack").reset_index(drop=True)
    assert shared.equals(b[b.epochs == 2000].drop(columns="epochs").sort_values("attack").reset_index(drop=True))
    out = claim.rule(tables)
    n = a.n_mem.nunique() + b.epochs.nunique() - 1
    assert len(out.checks) == n and f"of {n} settings" in out.ours
    assert "epochs = 2000 is n_mem = 500's runs, counted once" in out.ours
    # DOMIAS behind LOGAN D1 at the shared setting alone, ahead everywhere else: one failed check, not two
    made = {name: _own_vs_best(name, by, 0.1, 0.005)(tables)[name] for name, by in FIG3_SWEEPS}
    for name, key_, x in (("domias_fig3a", "n_mem", 500), ("domias_fig3b", "epochs", 2000)):
        df = made[name]
        df.loc[(df[key_] == x) & (df.attack == "logan_d1"), "auc_mean"] = 0.99
    behind = claim.rule({**tables, **made})
    assert behind.checks.count(False) == 1 and behind.checks.count(True) == n - 1, behind.why(10)
    # made different (another run at 2,000 epochs), the two are two settings
    made["domias_fig3b"].loc[made["domias_fig3b"].epochs == 2000, "auc_std"] = 0.006
    assert len(claim.rule({**tables, **made}).checks) == n + 1
    # one plot's table alone (a run of one section): judged on its settings
    assert len(claim.rule({"domias_fig3b": b}).checks) == b.epochs.nunique()


# --------------------------------------------------------------------------- the equivalence logic


def test_equivalent_holds_only_when_the_interval_lies_inside_the_margin():
    from vrlib.scorecard.rules import equivalent

    assert equivalent(0.01, 0.005, 0.05) is True  # [0.0002, 0.0198] inside ± 0.05
    assert equivalent(0.3, 0.01, 0.05) is False  # [0.2804, 0.3196] wholly beyond 0.05
    assert equivalent(-0.3, 0.01, 0.05) is False  # and on the other side
    assert equivalent(0.0, 0.1, 0.05) is None  # within the noise, but ± 0.196 reaches beyond the margin
    # A difference of 0.082 within the noise (se 0.05) never "matches" a margin of 0.05, however large the noise.
    for se in (0.05, 0.5, 5.0):
        assert equivalent(0.082, se, 0.05) is not True
    # Boundaries by hand: 0.03 + 1.96 × 0.01 = 0.0496 ≤ 0.05 holds; 0.031 + 0.0196 = 0.0506 does not.
    assert equivalent(0.03, 0.01, 0.05) is True
    assert equivalent(0.031, 0.01, 0.05) is None
    assert equivalent(0.0701, 0.01, 0.05) is False  # 0.0701 − 0.0196 = 0.0505 > 0.05


def test_not_significantly_different_fails_on_a_significant_difference_inside_the_margin():
    from vrlib.scorecard.rules import equivalent

    assert equivalent(0.02, 0.005, 0.05) is True
    assert equivalent(0.02, 0.005, 0.05, significant_fails=True) is False  # 0.02 > 1.96 × 0.005
    assert equivalent(0.005, 0.005, 0.05, significant_fails=True) is True


def test_a_paper_value_with_its_own_error_fails_when_the_two_are_significantly_apart():
    from vrlib.scorecard.rules import equivalent

    # ours 0.002 ± 0.015 (se) against the paper's 0.052 ± 0.017: the intervals overlap ([-0.028, 0.032] and
    # [0.019, 0.085]) but the difference, 0.050, is beyond 1.96 × √(0.015² + 0.017²) = 0.0444: apart.
    assert equivalent(-0.050, 0.015, 1.96 * 0.017) is None  # the intervals-apart reading: too noisy to tell
    assert equivalent(-0.050, 0.015, 1.96 * 0.017, paper_se=0.017) is False
    assert equivalent(-0.040, 0.015, 1.96 * 0.017, paper_se=0.017) is None  # 0.040 < 0.0444: not apart
    assert equivalent(-0.005, 0.005, 1.96 * 0.017, paper_se=0.017) is True  # inside the paper's own interval


def test_equivalent_without_noise_is_the_point_against_the_margin():
    from vrlib.scorecard.rules import equivalent, not_below

    assert equivalent(0.04, 0.0, 0.05) is True  # a count: no sampling noise
    assert equivalent(0.06, 0.0, 0.05) is False
    assert equivalent(0.0, float("nan"), 0.05) is None  # noise not recorded: a match is never called
    assert not_below(0.0, float("nan"), 0.05) is None
    assert equivalent(float("nan"), 0.01, 0.05) is None
    with pytest.raises(ValueError, match="absolute value"):
        equivalent(0.0, 0.01, -0.05)


def test_not_below_is_one_sided():
    from vrlib.scorecard.rules import not_below

    assert not_below(0.5, 0.01, 0.05) is True  # far above: "more"
    assert not_below(-0.02, 0.01, 0.05) is True  # [-0.0396, -0.0004] above −0.05: "equivalently"
    assert not_below(-0.2, 0.01, 0.05) is False
    assert not_below(0.0, 0.1, 0.05) is None


def test_all_inconclusive_checks_give_inconclusive_never_does_not_hold():
    assert verdict([None, None, None]) == "inconclusive"
    assert verdict([None]) == "inconclusive"
    assert verdict([None, False]) == "does not hold"
    assert verdict([True, None]) == "holds in part"
    assert verdict([True, True]) == "holds"
    assert verdict([]) == "not run"


def test_census_omega_cell_far_off_within_the_noise_is_not_holds():
    """The review's case: one Census Ω cell 0.082 off, within the noise of two means: no longer "holds"."""
    (c,) = [c for c in JUDGED if c.result == "Table 2, Census Ω"]
    df = committed("achilles_census_omega").copy()
    df["auc_mean"] = df.paper_mean
    df.loc[df.index[0], "auc_mean"] = df.paper_mean.iloc[0] + 0.082
    df["auc_std"] = 0.005
    df.loc[df.index[0], "auc_std"] = 0.3  # so noisy that 0.082 is within its noise
    out = c.rule({"achilles_census_omega": df})
    assert out.checks[0] is None and verdict(out.checks) == "holds in part"


# --------------------------------------------------------------------------- lost: a setting is what defines its game


def _lost_claim(quote_start):
    (claim,) = [c for c in JUDGED if c.paper == "lost" and c.quote.startswith(quote_start)]
    return claim


def test_fig4_epsilon_inf_is_the_headline_baynet_setting_counted_once():
    # Fig. 4's ε = ∞ is the headline's Adult/BayNet game on a prefix of its records (250 of 1,000): one setting, read
    # on its 1,000 records. Before, rows were one setting only when their numbers were equal: 10 settings, BayNet twice.
    from vrlib.scorecard.lost import LOST_RMSD, RMSD_KEY, settings

    t = {n: committed(n) for n in LOST_RMSD}
    rows = settings(t, LOST_RMSD, RMSD_KEY)
    names = [n for n, _ in rows]
    assert len(names) == len(set(names)) == 9
    assert "Adult, baynet" in names and "Adult, BayNet (ε = ∞)" not in names
    assert dict(rows)["Adult, baynet"].n_targets == 1000
    # Without the headline table, Fig. 4's ε = ∞ is the only row of that setting and is read.
    alone = settings({n: t[n] for n in LOST_RMSD if n != "lost_table_rmsd"}, LOST_RMSD, RMSD_KEY)
    assert "Adult, BayNet (ε = ∞)" in dict(alone)


def _baynet_rows(headline_above: bool):
    """Every RMSD clearly above its floor, but Adult/BayNet: above in the headline table (1,000 records) and within
    the noise in Fig. 4's ε = ∞ (its 250-record prefix), or the other way round."""

    def f(t):
        out = {}
        for name in ("lost_table_rmsd", "lost_fig3_rmsd", "lost_fig4_rmsd", "lost_census_rmsd"):
            df = t[name].copy()
            df["rmsd"], df["rmsd_low"], df["rmsd_high"], df["floor"] = 0.08, 0.07, 0.09, 0.03
            if name == "lost_table_rmsd":
                at = df.generator == "baynet"
            elif name == "lost_fig4_rmsd":
                at = np.isinf(df.epsilon)
            else:
                at = pd.Series(False, index=df.index)
            above = headline_above if name == "lost_table_rmsd" else not headline_above
            if not above:
                df.loc[at, ["rmsd", "rmsd_low", "rmsd_high", "floor"]] = 0.06, 0.05, 0.07, 0.058
            out[name] = df
        return out

    return f


def test_two_games_differ_judges_baynet_on_its_headline_records():
    claim = _lost_claim("the two privacy")
    tables = tables_of(claim)
    # must say yes: the setting is above its floor on its 1,000 records; its 250-record prefix is noisier.
    yes = claim.rule({**tables, **_baynet_rows(headline_above=True)(tables)})
    assert verdict(yes.checks) == "holds", yes.why(10)
    # must say no to "every setting": the 1,000-record reading is within the noise (the prefix's "above" is not a
    # second setting that could carry it).
    no = claim.rule({**tables, **_baynet_rows(headline_above=False)(tables)})
    assert verdict(no.checks) == "holds in part" and no.checks.count(None) == 1, no.why(10)
    assert "of 9 settings" in no.ours


# --------------------------------------------------------------------------- lost: "up to x %" can hold at the paper's size


def test_up_to_94_can_hold_on_a_count_the_papers_size_allows():
    claim = _lost_claim("show across")
    tables = tables_of(claim)
    # must say no: the committed table, 0.80 of 80 (interval [0.70, 0.88]) lies wholly below 0.94 ± 0.05.
    assert verdict(claim.rule(tables).checks) == "does not hold"
    # must say yes: 0.94 of 300 high-risk records (of |D| = 1,000), bootstrap [0.92, 0.96]: the binomial interval
    # [0.906, 0.964] lies inside 0.94 ± 0.05. With the old margin (± 0.005, the printed half percent) no count
    # a |D| = 1,000 run can have would ever hold (the test needed 100,000 records).
    yes = claim.rule({**tables, **_miss(0.8, 0.94, 0.92, 0.96, 0.2, 0.1, 0.3, names=("lost_table_miss",),
                                         n_records=300)(tables)})  # fmt: skip
    assert verdict(yes.checks) == "holds", yes.why(10)
    # The committed count (80 records) at 0.94: [0.866, 0.979] reaches past the margin: inconclusive, never holds.
    few = claim.rule({**tables, **_miss(0.8, 0.94, 0.92, 0.96, 0.2, 0.1, 0.3, names=("lost_table_miss",),
                                         n_records=80)(tables)})  # fmt: skip
    assert verdict(few.checks) == "inconclusive", few.why(10)


def test_up_to_94_is_read_on_the_adult_synthpop_settings_the_summary_names():
    # "Experimente auf dem Adult-Datensatz und dem Synthpop-Generator zeigen: 94 % ... (Schwellenwert t=0,8)": the
    # 94 % is Adult/Synthpop's. Before, the rule read the headline table's BayNet row too and took the largest: BayNet
    # at 0.94 made it hold with Synthpop at 0.5.
    claim = _lost_claim("show across")
    tables = {n: committed(n) for n in MISS}
    df = tables["lost_table_miss"].copy()
    at = np.isclose(df.t, 0.8)
    for generator, rate in (("baynet", 0.94), ("synthpop", 0.5)):
        rows = at & (df.generator == generator)
        df.loc[rows, ["miss_rate", "miss_rate_low", "miss_rate_high"]] = [rate, rate - 0.01, rate + 0.01]
        noise = ["miss_rate_noise", "miss_rate_noise_low", "miss_rate_noise_high", "n_high"]
        df.loc[rows, noise] = [0.1, 0.05, 0.15, 2000]
    fig3 = tables["lost_fig3_miss"].copy()
    small = np.isclose(fig3.t, 0.8) & (fig3.n_records == 100)
    fig3.loc[small, ["miss_rate", "miss_rate_low", "miss_rate_high", "n_high"]] = [0.5, 0.49, 0.51, 2000]
    out = claim.rule({**tables, "lost_table_miss": df, "lost_fig3_miss": fig3})
    assert verdict(out.checks) == "does not hold", out.why(10)
    assert "the largest: Adult, synthpop 0.50" in out.ours
    # the same 0.94 on Synthpop: holds
    df.loc[at & (df.generator == "synthpop"), ["miss_rate", "miss_rate_low", "miss_rate_high"]] = [0.94, 0.93, 0.95]
    assert verdict(claim.rule({**tables, "lost_table_miss": df, "lost_fig3_miss": fig3}).checks) == "holds"


# --------------------------------------------------------------------------- lost: the rise over t on the records' noise


def _baynet_at_09(n_high):
    def f(t):
        df = t["lost_table_miss"].copy()
        at = (df.generator == "baynet") & np.isclose(df.t, 0.9)
        df.loc[at, "n_high"] = n_high
        return {"lost_table_miss": df}

    return f


def test_rise_with_t_reads_the_few_records_at_t09_as_few():
    from vrlib.scorecard.lost import miss_rises_with_t

    tables = {n: committed(n) for n in MISS}

    def baynet_check(out):
        (i,) = [k for k, w in enumerate(out.ours.split("; ")) if w.startswith("Adult, baynet")]
        return out.checks[i]

    # must not say yes: 2 of 2 BayNet records missed at t = 0.9 (every bootstrap replicate 1.0, the interval
    # [0.67, 1.00] apart from t = 0.6's [0.23, 0.45]); 2 of 2 is binomially [0.16, 1.00]: 1.00 − 0.28 against an se
    # of √(0.84² + 0.17²) / 1.96 = 0.44, within the noise (Fisher's exact test of 2/2 against 66/234: p = 0.08).
    assert baynet_check(miss_rises_with_t({**tables, **_baynet_at_09(2)(tables)})) is None
    # the committed 4 of 4 ([0.40, 1.00]): 0.72 against an se of 0.32, beyond (Fisher: p = 0.007).
    assert baynet_check(miss_rises_with_t(tables)) is True
    # must say yes: the same rates over 60 records at t = 0.9 ([0.94, 1.00]).
    assert baynet_check(miss_rises_with_t({**tables, **_baynet_at_09(60)(tables)})) is True
    # must say no: the rate at t = 0.9 far below t = 0.6's, over 60 records.
    low = _baynet_at_09(60)(tables)["lost_table_miss"]
    at = (low.generator == "baynet") & np.isclose(low.t, 0.9)
    low.loc[at, ["miss_rate", "miss_rate_low", "miss_rate_high"]] = 0.0, 0.0, 0.0
    assert baynet_check(miss_rises_with_t({**tables, "lost_table_miss": low})) is False


# --------------------------------------------------------------------------- lost: what an unclear range check says


def test_an_interval_across_the_range_end_is_not_called_within_the_noise():
    claim = _lost_claim(
        "Experimente auf dem Adult-Datensatz und dem Synthpop-Generator zeigen: ... RMSD"
    )  # |D| = 100: 0.105 [0.095, 0.115], far above its floor 0.052, across the paper's 0.11
    out = claim.rule(tables_of(claim))
    assert "interval across an end of the range: Adult, Synthpop, |D| = 100" in out.why(10)
    assert "within the noise: Adult, Synthpop, |D| = 100" not in out.why(10)


# --------------------------------------------------------------------------- lost: t = 0.6 against noise alone


def test_above_20_percent_but_below_noise_alone_is_unclear_not_false():
    claim = _lost_claim("Bei t=0,6")
    tables = tables_of(claim)
    # must say yes: 0.5 [0.45, 0.55] of 50 records, noise alone 0.1: above 20 % beyond noise, in every setting.
    assert verdict(claim.rule({**tables, **_miss(0.6, 0.5, 0.45, 0.55, 0.1, 0.05, 0.15)(tables)}).checks) == "holds"
    # 0.5 [0.45, 0.55] with noise alone 0.9 [0.85, 0.95]: the games agree more than two runs of one game; that
    # says nothing about "above 20 %" (before: "does not hold").
    odd = claim.rule({**tables, **_miss(0.6, 0.5, 0.45, 0.55, 0.9, 0.85, 0.95)(tables)})
    assert verdict(odd.checks) == "inconclusive", odd.why(10)
    # must say no: 0.1 [0.05, 0.15] of 2,000 records.
    no = claim.rule({**tables, **_miss(0.6, 0.1, 0.05, 0.15, 0.02, 0.0, 0.04, n_records=2000)(tables)})
    assert verdict(no.checks) == "does not hold"


# --------------------------------------------------------------------------- domias App. B.2: most of the paper's models


def _fig10(won_generators):
    """The quick Fig. 6 table (every generator of the paper's figure): the paper's DOMIAS 0.1 above the best baseline
    on the named generators, 0.1 below it on every other one (BayNet included), every std 0.005."""

    def f(t):
        df = pd.read_csv(PROJECT_ROOT / "figures" / "quick" / "tables" / "domias_fig6.csv")
        df["auc_std"] = 0.005
        for g, rows in df.groupby("generator"):
            best = rows[rows.attack.isin(BASE)].auc_mean.max()
            delta = 0.1 if g in won_generators else -0.1
            df.loc[rows.index[rows.attack.isin(OWN)], "auc_mean"] = best + delta
        return {"domias_fig6": df}

    return f


SINGLE = ("GAN", "WGAN-GP", "CTGAN", "TVAE", "NFlow", "PATE-GAN ε=1")  # the models with one setting in the table


def test_most_generative_models_counts_models_not_their_privacy_settings():
    (claim,) = [c for c in JUDGED if c.paper == "domias" and c.result.startswith("App. B.2")]
    table = pd.read_csv(PROJECT_ROOT / "figures" / "quick" / "tables" / "domias_fig6.csv")
    several = [g for g in table.generator.unique() if g.startswith(("ADS-GAN", "PrivBayes"))]
    # must say yes: ahead on the six one-setting models, behind on ADS-GAN (4 λ), PrivBayes (2 ε) and BayNet: 6 of
    # the paper's 8 models. Counted by setting (BayNet in), 6 of 13: it said "does not hold".
    yes = claim.rule(_fig10(SINGLE)({}))
    assert verdict(yes.checks) == "holds", yes.ours
    assert "beyond the noise on 6, below one on 2, within the noise on 0 of 8 models (12 settings)" in yes.ours
    # must say no: ahead only on ADS-GAN's 4 λ, PrivBayes's 2 ε and BayNet: 2 of 8 models. Counted by setting,
    # 7 of 13: it said "holds".
    no = claim.rule(_fig10(several + ["BayNet"])({}))
    assert verdict(no.checks) == "does not hold", no.ours
    assert "not in the paper's figure (not judged): BayNet" in no.ours


def test_most_by_hand():
    from vrlib.scorecard.rules import most

    assert most([True, True, None]) is True  # 2 of 3
    assert most([True, None, None, False]) is None  # 1, 2 or 3 of 4 possible
    assert most([False, False, None]) is False  # at most 1 of 3
    assert most([True, False]) is False  # exactly half is not most
    assert most([]) is None


# --------------------------------------------------------------------------- mca Fig. 3: the shares' own noise


def _fig3_counts(members_gt3, non_members_gt3, frequency=4):
    """``mca_fig3`` with WGAN-GP's records above frequency 3 replaced by one row at ``frequency``, and
    ``mca_collisions``'s share made to match."""

    def f(t):
        df = t["mca_fig3"].copy()
        w = df.generator == "WGAN-GP"
        df = df[~(w & (df.frequency > 3))]
        row = dict(frequency=frequency, members=members_gt3, non_members=non_members_gt3, generator="WGAN-GP")
        df = pd.concat([df, pd.DataFrame([row])], ignore_index=True)
        col = t["mca_collisions"].copy()
        col.loc[col.generator == "WGAN-GP", "members_among_freq_gt3"] = members_gt3 / (members_gt3 + non_members_gt3)
        col.loc[col.generator == "WGAN-GP", "nonmembers_among_unique"] = MCA["nonmembers_among_unique"]
        return {"mca_fig3": df, "mca_collisions": col}

    return f


def test_mca_fig3_share_is_judged_with_its_count_noise():
    (claim,) = [c for c in JUDGED if c.paper == "mca" and c.result.startswith("§4.1 (Fig. 3, left")]
    tables = tables_of(claim)
    # must not say yes: 92 of 96 records (24 values released 4 times, one a non-member; se 0.041): a point within
    # 0.05 of the paper's 96 %, an interval far past it. Before (se 0), "holds".
    few = claim.rule({**tables, **_fig3_counts(92, 4)(tables)})
    assert few.checks[0] is None and verdict(few.checks) == "holds in part", few.why(10)
    # must say yes: 96 % of 40,000 records in 10,000 values.
    many = claim.rule({**tables, **_fig3_counts(38_400, 1_600)(tables)})
    assert verdict(many.checks) == "holds", many.why(10)
    # must say no: 83 % of 40,000 records.
    off = claim.rule({**tables, **_fig3_counts(33_200, 6_800)(tables)})
    assert verdict(off.checks) == "holds in part" and off.checks[0] is False, off.why(10)


def test_mca_notebook_row_says_how_far_its_lower_bound_se_can_grow_from_the_table():
    # The rule text said "an se four times as large would still pass", typed in; from the committed numbers the
    # precision's check (0.809 against 0.81, binomial se 0.0077 over 2,623 flagged) turns inconclusive at 3.3 times.
    (claim,) = [c for c in JUDGED if c.paper == "mca" and c.result.startswith("authors' notebook")]
    assert "four times" not in claim.rule_text
    tables = tables_of(claim)
    w = tables["mca_collisions"].set_index("generator").loc["WGAN-GP"]
    se_p = np.sqrt(w.precision * (1 - w.precision) / w.n_flagged)
    se_c = np.sqrt(w.collision_rate * (1 - w.collision_rate) / w.n_released)
    by_hand = min((0.05 - abs(w.precision - MCA["wgan_gp_precision"])) / (1.96 * se_p),
                  (0.05 - abs(w.collision_rate - MCA["wgan_gp_collision_rate"])) / (1.96 * se_c))  # fmt: skip
    out = claim.rule(tables)
    assert f"stands for an se up to {by_hand:.1f} times the binomial one" in out.ours and round(by_hand, 1) == 3.3
    # precision 0.03 off the notebook's: room for a much smaller factor, read from the table again
    df = tables["mca_collisions"].copy()
    df.loc[df.generator == "WGAN-GP", "precision"] = MCA["wgan_gp_precision"] + 0.03
    near = claim.rule({**tables, "mca_collisions": df})
    p = MCA["wgan_gp_precision"] + 0.03
    room = 0.02 / (1.96 * np.sqrt(p * (1 - p) / w.n_flagged))  # 1.4
    assert verdict(near.checks) == "holds" and f"stands for an se up to {room:.1f} times" in near.ours, near.ours
    assert room < 2


def test_mca_cluster_se_by_hand():
    from vrlib.scorecard.mca import _share_se

    # Two member values released 4 times, one non-member value released 4 times: p = 2/3 over 3 clusters of 4;
    # se = √(2·16·(1/3)² + 16·(2/3)²) / 12 = √(96/9) / 12.
    df = pd.DataFrame(dict(frequency=[4], members=[8], non_members=[4], generator=["WGAN-GP"]))
    se, n, k = _share_se({"mca_fig3": df}, 2 / 3, lambda x: x > 3)
    assert (n, k) == (12, 3) and se == pytest.approx(np.sqrt(96 / 9) / 12)
    # Unique records: the binomial se.
    one = pd.DataFrame(dict(frequency=[1], members=[30], non_members=[70], generator=["WGAN-GP"]))
    assert _share_se({"mca_fig3": one}, 0.3, lambda x: x == 1)[0] == pytest.approx(np.sqrt(0.3 * 0.7 / 100))
    # No table: unknown noise.
    assert np.isnan(_share_se({}, 0.5, lambda x: x > 3)[0])


# --------------------------------------------------------------------------- lost Fig. 5: a match its noise allows


def test_one_record_can_hold_at_the_noise_of_the_papers_games():
    claim = _lost_claim("Das modell")
    tables = tables_of(claim)
    noise = float(tables["lost_fig5"].noise_sd.iloc[0])  # 0.028: one risk from 200 games, the authors' count too
    # must say yes: the paper's values (0.5–0.8, R_T 0.62) at the committed noise, the spread beyond it. With margins
    # of ± 0.05 / ± 0.005 the intervals (± 0.056) could never fit: "holds" needed a noise sd of 0.001.
    paper = dict(model_seeded_min=0.5, model_seeded_max=0.8, traditional=0.62, between_datasets_sd=0.1, noise_sd=noise)
    yes = claim.rule({**tables, **_record(**paper)(tables)})
    assert verdict(yes.checks) == "holds", yes.why(10)
    # must say no: the committed record (R_T 0.873, range 0.761–0.969): every value check wholly outside its margin
    # but the worst case − traditional (0.096 against 0.18 ± 0.11, its interval across the margin).
    no = claim.rule(tables)
    assert no.checks == [True, None, False, False, False], no.why(10)
    # R_T 0.1 off at that noise: [0.045, 0.155] reaches across the margin (0.079): inconclusive; 0.2 off: fails.
    near = claim.rule({**tables, **_record(**{**paper, "traditional": 0.72})(tables)})
    assert near.checks[2] is None, near.why(10)
    off = claim.rule({**tables, **_record(**{**paper, "traditional": 0.82})(tables)})
    assert off.checks[2] is False, off.why(10)


def test_one_record_match_never_passes_more_easily_on_a_noisier_run():
    # The paper's risks were taken as noisy as ours (margin 1.96 √2 of our noise sd against an interval of 1.96 of
    # it): R_T 0.005 off the paper's 0.62 was inconclusive at a noise sd of 0.003-0.005 and matched it at 0.01-0.03.
    # Their noise is now that of an AUC from the paper's 100 + 100 games at its value (Hanley & McNeil: 0.0395 at 0.62,
    # independently of our run), so a check may pass at a smaller noise only, never first at a larger one.
    from vrlib.scorecard.lost import auc_sd

    a, m = 0.62, 100
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    assert auc_sd(a) == pytest.approx(np.sqrt((a * (1 - a) + (m - 1) * (q1 - a * a) + (m - 1) * (q2 - a * a)) / m**2))
    claim = _lost_claim("Das modell")
    tables = tables_of(claim)
    paper = dict(model_seeded_min=0.505, model_seeded_max=0.805, traditional=0.625, between_datasets_sd=0.1)
    passed = []
    for noise in (0.003, 0.005, 0.01, 0.02, 0.03):
        out = claim.rule({**tables, **_record(**paper, noise_sd=noise)(tables)})
        passed.append(out.checks[1:])  # the four equivalences (the first check is the F test of the spread)
    for k in range(4):
        seq = [p[k] is True for p in passed]
        assert seq == sorted(seq, reverse=True), (k, passed)


def test_overall_higher_mia_reads_every_attack_not_domias_alone():
    # "leading to higher MIA for large number of epochs": DOMIAS rising alone (every other attack flat, tight) is not
    # "higher MIA" overall. Before, the rule read DOMIAS only and said "holds".
    (claim,) = [c for c in JUDGED if c.paper == "domias" and c.quote.startswith("Again")]
    tables = tables_of(claim)
    flat = _ends("domias_fig3b", "epochs", 0.0, 0.005)(tables)
    alone = claim.rule({**tables, **_ends("domias_fig3b", "epochs", 0.2, 0.005, OWN)(flat)})
    assert verdict(alone.checks) == "holds in part", alone.why(10)
    # every attack rising: holds; the committed table: LOGAN D1 as published flat (0.495 to 0.500) within the noise
    assert verdict(claim.rule({**tables, **_ends("domias_fig3b", "epochs", 0.2, 0.005)(tables)}).checks) == "holds"
    committed_now = claim.rule(tables)
    assert verdict(committed_now.checks) == "holds in part" and "LOGAN D1 as published" in committed_now.why(10)


def _n_syn_split(density_slope, logan_slope, std=0.005):
    """The committed Fig. 4 table, its n_syn sweep with every AUC 0.5 + slope × the rank of n_syn: ``density_slope``
    for the ablation's four density attacks (DOMIAS and Eq. 1, BNAF and KDE), ``logan_slope`` for LOGAN D1 (ours and
    as published); every std ``std``."""

    def f(t):
        df = t["domias_fig4"].copy()
        df["auc_std"] = std
        rows = (df.ablation == "n_syn") & df.auc_mean.notna()
        rank = df.loc[rows, "n_syn"].rank(method="dense")
        slope = np.where(df.loc[rows, "attack"].str.startswith("logan_d1"), logan_slope, density_slope)
        df.loc[rows, "auc_mean"] = 0.5 + slope * rank
        return {"domias_fig4": df}

    return f


def test_n_syn_growth_is_judged_on_the_ablations_density_attacks():
    # "MIA performance goes up with |D_syn| across methods due to the better p_G approximation": the methods whose p_G
    # approximation improves are the ablation's density attacks. Before, LOGAN D1 (a classifier added beside them)
    # was judged too: its published training falling gave "holds in part" while all four rose, and all four falling
    # with LOGAN D1 rising gave "holds in part" too.
    (claim,) = [c for c in JUDGED if c.paper == "domias" and c.quote.startswith("Also note")]
    tables = tables_of(claim)
    assert {"logan_d1", "logan_d1_published"} <= set(tables["domias_fig4"].attack)  # the case is the committed one
    up = claim.rule({**tables, **_n_syn_split(0.02, -0.02)(tables)})
    assert verdict(up.checks) == "holds", up.why(10)
    assert len(up.checks) == 4 and "not judged (a classifier, no p_G estimate): LOGAN D1" in up.ours
    down = claim.rule({**tables, **_n_syn_split(-0.02, 0.02)(tables)})
    assert verdict(down.checks) == "does not hold", down.why(10)
    # the committed table: all four rise beyond the noise; LOGAN D1 as published (0.530 to 0.499) shown, not judged
    now = claim.rule(tables)
    assert verdict(now.checks) == "holds" and "LOGAN D1 as published -0.031" in now.ours


def _understate_by(excess, std=0.005):
    """The committed Fig. 5 table, every accuracy 0.55 outside each group and 0.55 + ``excess[attack]`` on it (0 for an
    attack not named); each attack's std ``std`` apart by 1 % steps (so that no two attacks are made identical),
    but MC's and GAN-Leaks 0's the same: given the same excess they keep identical rows, as committed."""

    def f(t):
        df = t["domias_fig5"].copy()
        steps = {a: std * (1 + 0.01 * i) for i, a in enumerate(dict.fromkeys(df.attack))}
        steps["gan_leaks"] = steps["mc"]
        df["accuracy_std"] = df.attack.map(steps)
        df.loc[df.group.isin(["minority", "majority", "all"]), "accuracy_mean"] = 0.55
        on = df.group == "minority"
        df.loc[on, "accuracy_mean"] = 0.55 + df.loc[on, "attack"].map(excess).fillna(0.0)
        return {"domias_fig5": df}

    return f


def test_most_baselines_counts_identical_baselines_once():
    # MC and GAN-Leaks 0 have the same accuracy in every row of the committed table: one behaviour under two names.
    # Before, they counted twice: 3 of 5 baselines lower on the group (those two and LOGAN 0) read as "most".
    (claim,) = [c for c in JUDGED if c.paper == "domias" and c.quote.startswith("Importantly, most")]
    tables = tables_of(claim)
    acc = tables["domias_fig5"].set_index(["subgroup", "group", "attack"])[["accuracy_mean", "accuracy_std"]]
    assert acc.xs("mc", level="attack").equals(acc.xs("gan_leaks", level="attack"))  # the case is the committed one
    lower = {"mc": -0.1, "gan_leaks": -0.1, "logan_0": -0.1}
    no = claim.rule({**tables, **_understate_by({**lower, "logan_d1": 0.1, "gan_leaks_cal": 0.1})(tables)})
    assert verdict(no.checks) == "does not hold", no.ours
    assert "2 of 4 distinct baselines" in no.ours and "GAN-Leaks 0 counted once with MC" in no.ours
    yes = claim.rule({**tables, **_understate_by({**lower, "logan_d1": -0.1, "gan_leaks_cal": 0.1})(tables)})
    assert verdict(yes.checks) == "holds", yes.ours
    # made different, the two count as two: 3 of 5 lower is most
    apart = _understate_by({**lower, "logan_d1": 0.1, "gan_leaks_cal": 0.1})(tables)["domias_fig5"]
    apart.loc[apart.attack == "gan_leaks", "accuracy_std"] *= 1.001
    two = claim.rule({**tables, "domias_fig5": apart})
    assert verdict(two.checks) == "holds" and "3 of 5 distinct baselines" in two.ours, two.ours
    # the caption's row counts the other baselines the same way (its verdict reads every one, so it is unchanged)
    (caption,) = [c for c in JUDGED if c.paper == "domias" and c.quote.startswith("Except for GAN-leaks CAL")]
    assert "of 3 distinct (GAN-Leaks 0 counted once with MC)" in caption.rule(tables).ours


# --------------------------------------------------------------------------- lost: RMSD − floor, the floor's noise counted

RMSD_TABLES = ("lost_table_rmsd", "lost_fig3_rmsd", "lost_fig4_rmsd", "lost_census_rmsd")


def _excess_rows(rmsd, half_width, floor, excess_se=None):
    """Every RMSD row of the tables given: ``rmsd`` ± ``half_width`` (its interval, so its se is half_width / 1.96)
    and ``floor`` (each setting kept distinct by a small offset of both); ``excess_se``: the bootstrap's se of
    RMSD − floor as a column, None: no such column (the committed paper tables have none)."""

    def f(t):
        out = {}
        for name in RMSD_TABLES:
            if name not in t:
                continue
            df = t[name].copy().drop(columns=["floor_se", "excess_se"], errors="ignore")
            offset = 1e-4 * np.arange(len(df)) + 1e-3 * RMSD_TABLES.index(name)
            df["rmsd"], df["floor"] = rmsd + offset, floor + offset
            df["rmsd_low"], df["rmsd_high"] = df.rmsd - half_width, df.rmsd + half_width
            if excess_se is not None:
                df["excess_se"] = excess_se
            out[name] = df
        return out

    return f


def test_excess_se_approximation_by_hand_on_a_committed_row():
    from vrlib.scorecard.lost import Z, excess, excess_se_approx, floor_se_approx

    r = next(committed("lost_census_rmsd").itertuples())
    d, se, basis = excess(r)
    rmsd_se = (r.rmsd_high - r.rmsd) / Z  # the interval is rmsd ± 1.959964 rmsd_se
    assert rmsd_se == pytest.approx(r.rmsd_se, rel=1e-4)
    assert d == pytest.approx(r.rmsd - r.floor)
    # by hand: S = rmsd² − floor²; se(floor) = rmsd_se · rmsd / √(2S + floor²)
    by_hand = rmsd_se * r.rmsd / np.sqrt(2 * (r.rmsd**2 - r.floor**2) + r.floor**2)
    assert floor_se_approx(r.floor, r.rmsd, rmsd_se) == pytest.approx(by_hand)
    assert se == pytest.approx(np.sqrt(rmsd_se**2 + by_hand**2))
    assert excess_se_approx(floor=r.floor, rmsd=r.rmsd, rmsd_se=rmsd_se) == pytest.approx(se)
    assert basis.startswith("se ≈") and "no covariance" in basis
    # an RMSD at or below its floor has no signal: S = 0, se(floor) = rmsd_se · rmsd / floor
    assert floor_se_approx(0.05, 0.04, 0.01, inflation=1.0) == pytest.approx(0.01 * 0.04 / 0.05)
    # with the bootstrap's se in the table, that one is read as it is
    assert excess(_with(r, excess_se=0.0123)) == (d, 0.0123, "bootstrap se")


def _with(row, **values):
    return next(pd.DataFrame([{**row._asdict(), **values}]).itertuples())


def test_floor_se_scaled_from_the_rmsd_se_by_simulation():
    """Independent records, each risk an estimate with noise: over 20,000 repeated experiments, the sd of a floor
    of one pair of runs is what floor_se_approx makes of the sd of the RMSD (normal theory); the floor of two pairs
    pooled (as the tables') has a smaller sd, which the approximation overstates."""
    from vrlib.scorecard.lost import floor_se_approx

    rng = np.random.default_rng(0)
    n, noise, sims = 200, 0.04, 20_000
    signal = rng.normal(0, 0.06, n)  # the games' difference per record, fixed over the experiments

    def runs():
        return rng.normal(0, noise, (sims, n))

    def rms(a, b):
        return np.sqrt(np.mean((a - b) ** 2, axis=1))

    t0, t1, m0, m1 = runs(), runs(), runs() + signal, runs() + signal
    rmsd, one_pair = rms(t0, m0), rms(t0, t1)
    pooled = np.sqrt((one_pair**2 + rms(m0, m1) ** 2) / 2)
    approx = floor_se_approx(one_pair.mean(), rmsd.mean(), rmsd.std(), inflation=1.0)
    assert approx == pytest.approx(one_pair.std(), rel=0.05)
    assert approx > 1.2 * pooled.std()
    # a wrong scaling is caught: the RMSD's se as the floor's (no signal term) is 40 % off here
    assert rmsd.std() != pytest.approx(one_pair.std(), rel=0.2)
    assert floor_se_approx(one_pair.mean(), rmsd.mean(), rmsd.std(), inflation=2.0) == pytest.approx(2 * approx)
    assert np.isnan(floor_se_approx(0.05, 0.06, np.nan))


def test_a_floor_without_its_noise_is_never_judged_on_point_values():
    from vrlib.scorecard.lost import above_floor

    df = committed("lost_census_rmsd").drop(columns=["rmsd_se", "rmsd_low", "rmsd_high"])
    r = next(df.itertuples())
    assert r.rmsd > 1.5 * r.floor and above_floor(r) is None  # clearly above on the point values, but no se
    zero = committed("lost_census_rmsd").assign(rmsd_se=0.0, excess_se=0.0)
    zero["rmsd_low"] = zero["rmsd_high"] = zero["rmsd"]  # an interval of zero width: no noise measured
    assert above_floor(next(zero.itertuples())) is None


FLOOR_RULES = {
    # quote -> the verdict when the floor is far above the RMSD (the rule's must-say-no on the floor), and a table
    # that must say no where the floor alone cannot (the RMSD range: an RMSD at or below its floor is unclear)
    "the two privacy": dict(floor_no=_excess_rows(0.08, 0.01, 0.2)),
    "Auch bei": dict(floor_no=_excess_rows(0.08, 0.01, 0.2)),
    "Experimente auf dem Adult-Datensatz und dem Synthpop-Generator zeigen: ... RMSD": dict(
        floor_no=_excess_rows(0.3, 0.01, 0.03)
    ),
}


@pytest.mark.parametrize("quote", list(FLOOR_RULES))
def test_rmsd_against_its_floor_counts_the_floors_noise(quote):
    claim = _lost_claim(quote)
    tables = tables_of(claim)

    def run(make):
        out = claim.rule({**tables, **make(tables)})
        return verdict(out.checks), out

    # must say yes: RMSD 0.08 ± 0.01, floor 0.03: 0.05 above it, far beyond both noises
    v, out = run(_excess_rows(0.08, 0.01, 0.03))
    assert v == "holds", out.why(10)
    # must say no
    v, out = run(FLOOR_RULES[quote]["floor_no"])
    assert v == "does not hold", out.why(10)
    # now inconclusive: RMSD 0.080 [0.078, 0.082] above a floor of 0.0775, the interval clear of the floor taken as
    # a constant (the old rule: holds), but the floor is an estimate over the same records: 0.0025 above it is
    # within 1.96 se of the difference (RMSD se 0.00102, the floor's scaled from it about 0.001: 1.96 × 0.0014)
    perturbed = _excess_rows(0.08, 0.002, 0.0775)(tables)
    assert all((df.rmsd_low > df.floor).all() for df in perturbed.values())
    v, out = run(_excess_rows(0.08, 0.002, 0.0775))
    assert v == "inconclusive", out.why(10)
    assert "se ≈ hypot(RMSD se" in out.why(10) and "bootstrap se" not in out.why(10)
    # the same difference with the bootstrap's se of RMSD − floor in the table, small: it is read, and says yes
    v, out = run(_excess_rows(0.08, 0.002, 0.0775, excess_se=0.0005))
    assert v == "holds", out.why(10)
    # ... large: within the noise though the approximation would clear it
    v, out = run(_excess_rows(0.08, 0.002, 0.03, excess_se=0.05))
    assert v == "inconclusive" and "bootstrap se" in out.why(10), out.why(10)


def test_a_table_from_summarise_rmsd_is_judged_on_its_bootstrap_se():
    """The path a next run of notebook 06 takes: summarise_rmsd's excess_se in the table, read by the rule as is."""
    from test_lost import _boot_frame
    from vrlib.experiments.lost import summarise_rmsd
    from vrlib.scorecard.lost import Z, above_floor, excess

    s = summarise_rmsd(_boot_frame(np.random.default_rng(5), n_records=6, noisy_run0=0.3))
    r = next(s.itertuples())
    d, se, basis = excess(r)
    assert (d, se, basis) == (pytest.approx(r.rmsd - r.floor), r.excess_se, "bootstrap se")
    assert above_floor(r) is (True if d > Z * se else False if d < -Z * se else None)
    # the same row without the column: the approximation, from the RMSD's interval
    assert excess(next(s.drop(columns=["floor_se", "excess_se"]).itertuples()))[2].startswith("se ≈")


def test_fig5_caption_baseline_above_a_negative_excess_does_not_capture_it():
    # A baseline's excess above DOMIAS's beyond the noise, while DOMIAS's is below 0 and the baseline's at 0, was
    # judged "captures the excess" (fails), though the rule fails a baseline only when its excess is above 0 beyond
    # the noise. Here no attack sees an excess: CAL and the others at 0, DOMIAS at −0.1.
    (claim,) = [c for c in JUDGED if c.paper == "domias" and c.quote.startswith("Except for GAN-leaks CAL")]
    tables = tables_of(claim)
    out = claim.rule({**tables, **_calibrated(-0.1, 0.0, 0.0, 0.01)(tables)})
    assert verdict(out.checks) == "inconclusive", out.why(10)
    assert "captures the excess" not in out.why(10)
    # the same with the others at +0.1, above 0 beyond the noise: they capture an excess, and the check fails
    out = claim.rule({**tables, **_calibrated(-0.1, 0.0, 0.1, 0.01)(tables)})
    assert verdict(out.checks) == "does not hold" and "captures the excess" in out.why(10), out.why(10)


@pytest.mark.parametrize("result", ["§6.1 (Fig. 1)", "§6.2 (Fig. 2)"])
def test_median_claim_says_which_comparison_decided(result):
    """A gap above 0 but short of the stated one fails against the stated gap alone (the words must not say it
    failed against 0); a gap equal to 0 is not taken for the stated one, and the words say so when that decides."""
    (claim,) = [c for c in JUDGED if c.result == result and c.quote.startswith("The median")]
    name = "achilles_fig1_targets" if "Fig. 1" in result else "achilles_fig2_targets"
    # clearly above 0, far below 0.186 / 0.1089 (beyond the paper's own noise too: its median gap's se, from its
    # table's spread, is 0.041 / 0.061, so Fig. 2's stated gap is apart from no gap above 0 and is not tried here)
    if "Fig. 1" in result:
        short = claim.rule(_targets(name, 0.03, 0.05, 0.01)({}))
        (said,) = [w for w in short.failed if "census/baynet: ours" in w]
        assert said.startswith(f"{FAILS}: ") and "against 0" not in said and "above 0" not in said
    for spread in (0.1, 0.2, 0.4):  # a median gap of 0 with noise up to as large as the claim: never "holds"
        noisy = claim.rule(_targets(name, 0.0, 0.25, spread)({}))
        (said,) = [w for w in noisy.failed if "census/baynet: ours" in w]
        decided_by_zero = said.startswith("within the stated gap's margin but not above 0 beyond the noise: ")
        assert decided_by_zero or said.startswith((f"{FAILS}: ", f"{PAST_MARGIN}: "))


def test_median_claim_inconclusive_by_zero_says_so():
    """§6.2: a median gap of 0 whose interval sits inside the stated gap's margin is inconclusive because it is
    not above 0, and says that, not that its interval reaches past the margin. (A gap of 0 is within the paper's own
    noise of its 0.1089: its median gap's se, from its Table 3's spread, is 0.061.)"""
    (claim,) = [c for c in JUDGED if c.result == "§6.2 (Fig. 2)" and c.quote.startswith("The median")]
    noisy = claim.rule(_targets("achilles_fig2_targets", 0.0, 0.25, 0.01)({}))
    (said,) = [w for w in noisy.failed if "census/baynet: ours" in w]
    assert said.startswith("within the stated gap's margin but not above 0 beyond the noise: ")


# --------------------------------------------------------------------------- DOMIAS §5.3: the group against the overall population


def test_minority_is_compared_with_the_overall_population():
    """ "Better at attacking this vulnerable group compared to the overall population": the committed Fig. 5 table with
    every accuracy 0.55 and DOMIAS's on the group 0.6 (every std 0.005 over 8 seeds). With its overall row at 0.55
    the group check holds; with the overall row at 0.6 (as on the group) it is not "holds" any more, though the
    group is still 0.05 above the rest: the rule reads the overall population, as the sentence says. A table without
    the overall rows falls back to the rest, and says so."""
    (claim,) = [c for c in JUDGED if c.paper == "domias" and c.quote.startswith("DOMIAS is significantly better")]
    tables = tables_of(claim)
    base = _minority(0.05, 0.005)(tables)["domias_fig5"]
    assert verdict(claim.rule({**tables, "domias_fig5": base}).checks) == "holds"
    high = base.copy()
    high.loc[high.attack.isin(OWN) & (high.group == "all"), "accuracy_mean"] = 0.6
    out = claim.rule({**tables, "domias_fig5": high})
    assert verdict(out.checks) != "holds" and "group − overall +0.000" in out.why(10), out.why(10)
    rest = claim.rule({**tables, "domias_fig5": high[high.group != "all"]})
    assert verdict(rest.checks) == "holds" and "group − rest" in rest.ours


# --------------------------------------------------------------------------- lost: a range the noise floor lies in


@pytest.mark.parametrize(
    "rmsd, floor, expected",
    [
        (0.055, 0.055, "inconclusive"),  # noise alone: inside 0.04–0.11, but the floor's own value
        (0.060, 0.070, "inconclusive"),  # inside the range, below its own floor: no pass
        (0.090, 0.050, "holds"),  # beyond its floor, inside the range
        (0.200, 0.050, "does not hold"),  # beyond its floor, above the range
    ],
)
def test_rmsd_range_is_judged_only_beyond_each_settings_floor(rmsd, floor, expected):
    """ "RMSD-Bereich von 0,04 bis 0,11": our noise floors (0.052–0.056) lie inside the stated range, so a setting
    whose RMSD is its floor's, or below it, would pass an "inside the range" check on noise alone; such a setting is
    inconclusive, never a pass. Every Adult/Synthpop setting at ``rmsd`` ± 0.005 with floor ``floor``."""
    (claim,) = [c for c in JUDGED if c.paper == "lost" and "RMSD-Bereich" in c.quote]
    tables = tables_of(claim)
    out = claim.rule({**tables, **_rmsd_rows(rmsd, rmsd - 0.005, rmsd + 0.005, floor)(tables)})
    assert verdict(out.checks) == expected, out.why(10)


def test_most_baselines_no_signal_rarely_fails():
    """ "Most MIA baselines give the false pretense that this minority group is less vulnerable": every attack as
    accurate on each group as overall in truth, each mean drawn at its se over 8 seeds: "does not hold" (at most half
    of the baselines can be less accurate on a group) in at most ~5 % of 300 replicates (measured: 1; the other 299
    inconclusive)."""
    (claim,) = [c for c in JUDGED if c.paper == "domias" and c.quote.startswith("Importantly, most")]
    base = committed("domias_fig5").copy()
    rng = np.random.default_rng(5)
    base["accuracy_std"] = 0.02
    se = 0.02 / np.sqrt(base.n_seeds - 1)
    verdicts = []
    for _ in range(300):
        df = base.copy()
        df["accuracy_mean"] = 0.55 + se * rng.standard_normal(len(df))
        verdicts.append(verdict(claim.rule({"domias_fig5": df}).checks))
    assert verdicts.count("does not hold") / 300 <= 0.05, verdicts.count("does not hold")


def test_gap_trend_compares_the_gap_beyond_each_floor_not_the_raw_rmsd():
    """ "Records in smaller datasets ... a larger gap": RMSD 0.20 at |D| = 100 against 0.10 at 10,000 (intervals
    ± 0.01, apart: the rule before said holds), but the floor at 100 is 0.19 (two runs of one game differ by that
    much there) and at 10,000 0.05: beyond its floor the gap is 0.01 at 100 and 0.05 at 10,000, the other way round
    (does not hold). With the floors equal (0.05) the raw reading and the gap agree (holds)."""
    (claim,) = [c for c in JUDGED if c.paper == "lost" and c.quote.startswith("records in smaller")]
    tables = tables_of(claim)

    def table(floor_small):
        df = tables["lost_fig3_rmsd"].copy().sort_values("n_records")
        df["rmsd"] = np.interp(df.n_records, [100, 10_000], [0.20, 0.10])
        df["rmsd_low"], df["rmsd_high"] = df.rmsd - 0.01, df.rmsd + 0.01
        df["floor"] = np.where(df.n_records == df.n_records.min(), floor_small, 0.05)
        return {"lost_fig3_rmsd": df}

    out = claim.rule({**tables, **table(0.19)})
    assert verdict(out.checks) == "does not hold", out.why()
    assert verdict(claim.rule({**tables, **table(0.05)}).checks) == "holds"


def test_equivalent_fails_at_the_family_z_when_given():
    """0.5 ± ABOUT, a value 0.075 off with se 0.01: its 95 % interval [0.055, 0.095] lies wholly beyond the margin
    (fails at 1.96), but at the z of 9 comparisons (2.77: [0.047, 0.103]) it reaches inside: inconclusive. The
    pass side keeps 1.96."""
    from vrlib.scorecard.rules import equivalent, family_z

    z = family_z(9)
    assert equivalent(0.075, 0.01, 0.05) is False
    assert equivalent(0.075, 0.01, 0.05, fail_z=z) is None
    assert equivalent(0.09, 0.01, 0.05, fail_z=z) is False
    assert equivalent(0.02, 0.01, 0.05, fail_z=z) is True  # [0.0004, 0.0396] inside at 1.96


def test_rmsd_range_fails_only_beyond_the_family_z():
    """Three Adult/Synthpop settings beyond their floors, each RMSD 0.125 ± 0.01 (95 %): wholly above 0.11 at 1.96
    ([0.115, 0.135]) but not at the z of 3 (2.39: [0.113, 0.137] still above): fails; at 0.118 ± 0.01 ([0.108,
    0.128]) across the end: inconclusive; at 0.1205 ± 0.01, above at 1.96 ([0.1105, 0.1305]) but not at 2.39
    ([0.1083, 0.1327]): inconclusive, not "does not hold" (the settings sit up to 0.0012 apart: still across)."""
    (claim,) = [c for c in JUDGED if c.paper == "lost" and "RMSD-Bereich" in c.quote]
    tables = tables_of(claim)
    for rmsd, expected in ((0.125, "does not hold"), (0.118, "inconclusive"), (0.1205, "inconclusive")):
        out = claim.rule({**tables, **_rmsd_rows(rmsd, rmsd - 0.01, rmsd + 0.01, 0.03)(tables)})
        assert verdict(out.checks) == expected, (rmsd, out.why(10))


@pytest.mark.parametrize("result", ["§6.1 (Fig. 1)", "§6.2 (Fig. 2)"])
def test_median_claim_fails_a_setting_only_at_the_family_z(result):
    """ "Consistently higher" is a claim about every setting: one setting's median gap below 0 by 2.2 se (beyond 1.96,
    within the Bonferroni 2.50 of four settings) is within the noise, not a failure; by 3 se it fails."""
    from vrlib.scorecard import headline

    (claim,) = [c for c in JUDGED if c.result == result and c.quote.startswith("The median")]
    name = "achilles_fig1_targets" if "Fig. 1" in result else "achilles_fig2_targets"
    base = _targets(name, 0.3, 0.3, 0.02)({})[name]

    def behind(z):
        # adult/synthpop's distance moved to z se below the best other median (its se from the rule's bootstrap)
        df = base.copy()
        rows = (df.dataset == "adult") & (df.generator == "synthpop") & (df.method == "distance")
        df.loc[rows, "auc"] -= 0.3
        gap = headline.median_gaps(df, n_boot=2000, seed=0).set_index(["dataset", "generator"])
        for _ in range(3):  # the se moves a little with the gap: settle it
            se = float(gap.loc[("adult", "synthpop"), "se"])
            df.loc[rows, "auc"] += -z * se - float(gap.loc[("adult", "synthpop"), "gap"])
            gap = headline.median_gaps(df, n_boot=2000, seed=0).set_index(["dataset", "generator"])
        r = gap.loc[("adult", "synthpop")]
        return claim.rule({name: df}), r.gap / r.se

    out, ratio = behind(2.2)
    assert -2.5 < ratio < -1.96, ratio
    (said,) = [w for w in out.failed if w.split(": ", 1)[1].startswith("adult/synthpop")]
    assert said.startswith("within the noise: ") and "Bonferroni over 4 comparisons" in said, said
    out, ratio = behind(3.0)
    assert ratio < -2.5, ratio
    (said,) = [w for w in out.failed if w.split(": ", 1)[1].startswith("adult/synthpop")]
    assert said.startswith(f"{FAILS}: "), said


@pytest.mark.parametrize("result", ["§6.1 (Fig. 1)", "§6.2 (Fig. 2)"])
def test_median_claim_up_to_fails_where_another_setting_is_above_the_stated_gap(result):
    """ "Up to X p.p. higher on the UK Census dataset using BayNet": the largest gap is X, on Census/BayNet. A table with
    Census/BayNet's gap at the stated value but another setting 0.3 above it beyond the noise contradicts "up to"
    and must not hold; the same with the others below it does."""
    (claim,) = [c for c in JUDGED if c.result == result and c.quote.startswith("The median")]
    name = "achilles_fig1_targets" if "Fig. 1" in result else "achilles_fig2_targets"
    stated = 0.186 if "Fig. 1" in result else 0.1089
    below = claim.rule(_targets(name, stated, stated / 2, 0.01)({}))
    assert verdict(below.checks) == "holds", below.why(10)
    above = claim.rule(_targets(name, stated, stated + 0.3, 0.01)({}))
    assert verdict(above.checks) == "holds in part", above.why(10)
    (said,) = [w for w in above.failed if "census/baynet: ours" in w]
    assert said.startswith(f"{FAILS}: ") and "above the stated largest beyond the noise" in said, said
    # the same from the committed per-target table (its targets' spread, so its noise): distance moved to the stated
    # gap on Census/BayNet and 0.3 above it elsewhere
    committed_above = claim.rule(_shift_distance(name, stated, stated + 0.3)(tables_of(claim)))
    assert verdict(committed_above.checks) == "holds in part", committed_above.why(10)


def test_higher_p_slightly_decreasing_is_not_met_by_a_steep_fall():
    """§6.4 "while slightly decreasing for higher p values": p = 3, 4 at 0.30 below cosine (std 0.01 over 10 targets)
    fall far beyond 'slightly' (0.05, as for k in Fig. 3a): those checks fail, the row is not "holds"; a fall of 0.03
    holds; one of 0.03 too noisy to bound (std 0.05) is inconclusive."""
    (claim,) = [c for c in JUDGED if c.result == "§6.4 (Fig. 3b)"]

    def run(fall, std=0.01):
        values = {"cosine": 0.8, "p=1": 0.8, "p=2": 0.8, "p=3": 0.8 - fall, "p=4": 0.8 - fall}
        return claim.rule(_fig3b(values, std)(tables_of(claim)))

    steep = run(0.3)
    assert verdict(steep.checks) == "holds in part" and steep.checks[2:] == [False, False], steep.why(10)
    assert "a fall beyond 'slightly' = 0.05" in steep.why(10)
    assert verdict(run(0.03).checks) == "holds"
    assert run(0.03, std=0.05).checks[2:] == [None, None]


def test_largely_due_to_the_reference_data_needs_most_of_the_excess():
    """Fig. 5's caption: "the minority vulnerability is largely due to the availability of the reference data". DOMIAS's
    excess 0.10 against Eq. 1 (BNAF)'s 0.08 (std 0.001 over the seeds): above it beyond the noise, but the reference
    set carries a fifth of the excess, not most of it: does not hold. Against Eq. 1's 0.02 it holds; against 0.045
    (the reference set's share 55 %, within the noise of one half at std 0.01) inconclusive."""
    (claim,) = [c for c in JUDGED if c.quote.startswith("Comparing DOMIAS with Eq. 1")]
    tables = tables_of(claim)
    assert verdict(claim.rule(_excess(0.10, 0.08, 0.001)(tables)).checks) == "does not hold"
    assert verdict(claim.rule(_excess(0.10, 0.02, 0.001)(tables)).checks) == "holds"
    assert verdict(claim.rule(_excess(0.10, 0.045, 0.01)(tables)).checks) == "inconclusive"


def test_up_to_94_fails_where_another_dataset_or_model_misses_more():
    """The abstract: "across multiple datasets and models ... up to 94% of high-risk records being overlooked". With
    Adult/Synthpop at 0.94 (the summary's setting) it holds; with Census/Synthpop at t = 0.8 missing 0.99 of 1,000
    high-risk records (noise alone 0.1) too, "up to 94 %" is false and the row must not hold."""
    claim = _lost_claim("show across")
    tables = tables_of(claim)
    yes = {**tables, **_miss(0.8, 0.94, 0.92, 0.96, 0.2, 0.1, 0.3, names=("lost_table_miss",), n_records=300)(tables)}
    assert verdict(claim.rule(yes).checks) == "holds"
    census = yes["lost_census_miss"].copy()
    at = np.isclose(census.t, 0.8)
    census.loc[at, ["miss_rate", "miss_rate_low", "miss_rate_high", "n_high"]] = [0.99, 0.98, 1.0, 1000]
    census.loc[at, ["miss_rate_noise", "miss_rate_noise_low", "miss_rate_noise_high"]] = [0.1, 0.08, 0.12]
    out = claim.rule({**yes, "lost_census_miss": census})
    assert verdict(out.checks) == "does not hold", out.why(10)
    assert "Census, synthpop: 0.99 of 1000 records, above 0.94 beyond the noise" in out.why(10)


def test_std_halved_fails_a_generator_only_at_the_family_z():
    """§7 "by a factor of two, across generators": a claim about both Census generators. A ratio of stds of 0.787
    (10 targets each) is log(0.787 / 2.25) = −1.05 from BayNet's 2.25, 2.09 se of the difference (beyond 1.96,
    within the 2.24 of two generators): inconclusive, not "does not hold"; 0.5 (2.9 and 2.6 se) fails."""
    (claim,) = [c for c in JUDGED if c.result == "§7"]
    tables = tables_of(claim)
    near = claim.rule(_std_census(0.787, 10)(tables))
    assert verdict(near.checks) == "inconclusive", near.why(10)
    assert "Bonferroni over 2 comparisons" in near.why(10)
    assert verdict(claim.rule(_std_census(0.5, 10)(tables)).checks) == "does not hold"


def test_auc_drop_with_epsilon_fails_only_at_the_family_z():
    """§6.5: fourteen comparisons (per dataset, the drop, chance at ε = 100 and 10, and the four steps between
    neighbouring ε), one claim. Census at ε = 10 below chance by 2.2 se (beyond 1.96, within the 2.91 of fourteen) is
    within the noise; by 3 se it fails."""
    (claim,) = [c for c in JUDGED if c.result == "§6.5 (Fig. 4)" and c.quote.startswith("As expected")]
    tables = tables_of(claim)

    def at10(z):
        df = _fig4_drop(0.5, 0.7, 0.9, 0.01)(tables)["achilles_fig4"]
        rows = (df.dataset == "census") & np.isclose(df.epsilon, 10) & (df.method == "distance")
        df.loc[rows, "auc_mean"] = 0.5 - z * 0.01 / 3  # se of a mean of 10 targets at std 0.01: 0.01 / √9
        return claim.rule({"achilles_fig4": df})

    near = at10(2.2)
    assert verdict(near.checks) == "holds in part" and False not in near.checks, near.why(10)
    assert "Bonferroni over 14 comparisons" in near.why(10)
    assert False in at10(3.0).checks


def test_mias_fail_at_the_smallest_epsilon_fails_a_dataset_only_at_the_family_level():
    """§1 'MIAs fail ... at ε = 1' on both datasets: a dataset at 0.58 whose 95 % t interval over 4 root seeds
    (± 3.18 se) lies wholly above 0.55 but whose interval at the Bonferroni level of the 2 datasets (± 4.18 se) does
    not is within the noise; at 0.62 it fails."""
    (claim,) = [c for c in JUDGED if c.quote.startswith("We confirm that MIAs fail")]
    tables = tables_of(claim)

    def at(mean, se=0.008):
        df = tables["achilles_fig4_smallest_epsilon_interval"].copy()
        pooled = df.method == "all distinct targets"
        half = stats.t.isf(0.025, 3) * se
        df.loc[pooled, ["mean", "se", "ci_low", "ci_high", "n_seeds"]] = mean, se, mean - half, mean + half, 4
        return claim.rule({"achilles_fig4_smallest_epsilon_interval": df})

    near = at(0.58)
    assert verdict(near.checks) == "inconclusive", near.why(10)
    assert "Bonferroni level over 2 datasets" in near.why(10)
    assert verdict(at(0.62).checks) == "does not hold"
    assert verdict(at(0.5).checks) == "holds"


FIG5_SE = float(np.hypot(0.01, 0.01) / np.sqrt(7))  # se of an excess (group − overall) at std 0.01 over 8 seeds


def _fig5_claim(result, start):
    (claim,) = [c for c in JUDGED if c.paper == "domias" and c.result == result and c.quote.startswith(start)]
    return claim, tables_of(claim)


def test_minority_fails_a_groups_excess_only_at_the_family_z():
    """§5.3 'significantly better at attacking this vulnerable group compared to the overall population, as well as
    compared to other baselines': per group the excess and each baseline, one family (12 comparisons on the committed
    two groups and five baselines, 2.87 se). DOMIAS's excess 2.4 se below 0 on both groups (beyond 1.96, within 2.87),
    every baseline far below it on the group: within the noise; 3.5 se below fails."""
    claim, tables = _fig5_claim("§5.3 (Fig. 5)", "DOMIAS is")

    def run(z):
        return claim.rule(_minority_excess(0.01, [(OWN, -z * FIG5_SE), (BASE, -0.3)])(tables))

    near = run(2.4)
    assert False not in near.checks and verdict(near.checks) == "holds in part", near.why(10)
    assert "Bonferroni over 12 comparisons" in near.why(10)
    assert False in run(3.5).checks


def test_largely_due_to_the_reference_data_fails_only_at_the_family_z():
    """Fig. 5 caption: per group two comparisons (DOMIAS's excess above Eq. 1's, and above twice it), one family of 4
    on the committed two groups (2.50 se). DOMIAS's excess 2.2 se below Eq. 1's on both groups, its share check within
    the noise: inconclusive; 3 se below fails."""
    claim, tables = _fig5_claim("§5.3 (Fig. 5 caption)", "Comparing")
    s = FIG5_SE

    def run(z, eq1):
        return claim.rule(_excess(eq1 * s - z * np.sqrt(2) * s, eq1 * s, 0.01)(tables))

    near = run(2.2, 1.0)
    assert verdict(near.checks) == "inconclusive", near.why(10)
    assert "Bonferroni over 4 comparisons" in near.why(10)
    assert verdict(run(3.0, 0.5).checks) == "does not hold"


def test_except_gan_leaks_cal_fails_cals_excess_only_at_the_family_z():
    """Fig. 5 caption 'Except for GAN-leaks CAL, baselines fail to capture the excess': per group CAL's excess and each
    other baseline's, one family (10 on the committed two groups and four other baselines, 2.81 se). CAL's excess 2.3
    se below 0 on both groups (beyond 1.96, within 2.81), the others' far below DOMIAS's: within the noise; 3.5 se
    below fails."""
    claim, tables = _fig5_claim("§5.3 (Fig. 5 caption)", "Except")

    def run(z):
        return claim.rule(_calibrated(0.1, -z * FIG5_SE, 0.0, 0.01)(tables))

    near = run(2.3)
    assert False not in near.checks and verdict(near.checks) == "holds in part", near.why(10)
    assert "Bonferroni over 10 comparisons" in near.why(10)
    assert False in run(3.5).checks


def test_most_baselines_fails_a_baseline_only_at_the_family_z():
    """§5.3 'most MIA baselines give the false pretense that this minority group is less vulnerable': every distinct
    baseline more accurate on both groups by about 2.35 se (beyond 1.96, within the 2.73 of the 8 (group, distinct
    baseline) comparisons) is within the noise, not 'at most half less accurate'; by 4 se it fails."""
    (claim,) = [c for c in JUDGED if c.paper == "domias" and c.quote.startswith("Importantly, most")]
    tables = tables_of(claim)
    se = float(np.hypot(0.005, 0.005) / np.sqrt(7))

    def run(z):
        return claim.rule({**tables, **_understate_by({b: z * se for b in BASE})(tables)})

    near = run(2.35)
    assert verdict(near.checks) == "inconclusive", near.why(10)
    assert "Bonferroni over 8 comparisons" in near.why(10)
    assert verdict(run(4.0).checks) == "does not hold"


def test_risk_to_chance_fails_a_comparison_only_at_the_family_z():
    """lost 'Die MIA-Leistung nimmt mit sinkendem ε ab und konvergiert zur Zufallsbaseline': per game the fall between
    the ends, the 4 steps between neighbouring ε and 0.5 reached, twelve comparisons, one family (2.87 se). With
    floors of 0.01 (the se of the fall 0.01, of the mean at the smallest ε up to 0.0071): a rise of 2.2 se (by two
    steps of 1.1 se), or a mean at the smallest ε 2.2 se beyond 0.5 ± 0.05, is within the noise; 3 se fails."""
    claim = _lost_claim("Die MIA")
    tables = tables_of(claim)
    shared = 0.01 / np.sqrt(2)

    def run(low, high, middle=0.55):
        return claim.rule(_chance(low, high, floor=0.01, middle=middle)(tables))

    rise = run(0.5, 0.5 - 2.2 * 0.01, middle=0.5 - 1.1 * 0.01)
    assert False not in rise.checks and verdict(rise.checks) == "holds in part", rise.why(10)
    assert "Bonferroni over 12 comparisons" in rise.why(10)
    assert False in run(0.5, 0.5 - 3.0 * 0.01, middle=0.5 - 1.5 * 0.01).checks
    off = run(0.55 + 2.2 * shared, 0.7)
    assert False not in off.checks and verdict(off.checks) == "holds in part", off.why(10)
    assert False in run(0.55 + 3.0 * shared, 0.7).checks


def test_mc_and_gan_leaks_find_the_top_fail_only_at_the_family_z():
    """App. D.1 'Though MC and GAN-Leaks are able to find the most overfitted examples, they do not find all': per
    baseline, its precision at the smallest q above 0.5 and its drop larger than DOMIAS's, four comparisons, one family
    (2.50 se). Both baselines 2.2 se below 0.5 at the smallest q, falling far faster than DOMIAS: within the noise;
    3 se below fails."""
    (claim,) = [c for c in JUDGED if c.paper == "domias" and c.quote.startswith("We see that unlike")]
    tables = tables_of(claim)
    se = 0.01 / np.sqrt(7)

    def run(z):
        return claim.rule(_top(-z * se, 0.1, 0.01)(tables))

    near = run(2.2)
    assert False not in near.checks and verdict(near.checks) == "holds in part", near.why(10)
    assert "Bonferroni over 4 comparisons" in near.why(10)
    assert False in run(3.0).checks


def test_largest_gain_fails_only_at_the_family_z():
    """§5.2 'the source of the largest gain is the use of Eq. 2 over Eq. 1': per estimator the averaged gain and the
    reference set's gain against the estimator's, three comparisons, one family (2.39 se). Every DOMIAS 2.2 se below
    its Eq. 1 (and Eq. 1 the same with either estimator, so the estimator's gain is 0): within the noise, not 'does not
    hold'; 3 se below fails."""
    (claim,) = [c for c in JUDGED if c.paper == "domias" and c.quote.startswith("Evidently")]
    tables = tables_of(claim)
    std = 0.01
    se = std * np.sqrt(2) / np.sqrt(tables["domias_fig4"].n_seeds.iloc[0] - 1)  # of a difference of two attacks

    def run(z):
        df = _ref_gain(-z * se, std)(tables)["domias_fig4"]
        keys = ["ablation", "n_ref", "n_syn"]
        flow = df[df.attack == "eq1_flow"].set_index(keys).auc_mean
        for a, shift in (("eq1_kde", 0.0), ("domias_kde", -z * se)):
            rows = df.attack == a
            df.loc[rows, "auc_mean"] = [flow[k] + shift for k in zip(*(df.loc[rows, c] for c in keys))]
        return claim.rule({"domias_fig4": df})

    near = run(2.2)
    assert verdict(near.checks) == "inconclusive", near.why(10)
    assert "Bonferroni over 3 comparisons" in near.why(10)
    assert verdict(run(3.0).checks) == "does not hold"


def test_distance_variants_fail_only_at_the_family_z():
    """§6.4 'not significantly different for the cosine distance, p=1, and p=2, while slightly decreasing for higher
    p': four comparisons (p = 1 … 4 against cosine), one family (2.50 se). p = 1 above cosine by 2.2 se (significantly
    different at 1.96, not at 2.50), the rest as the paper says: within the noise; by 3 se it fails."""
    (claim,) = [c for c in JUDGED if c.paper == "achilles" and c.result == "§6.4 (Fig. 3b)"]
    tables = tables_of(claim)
    se = 0.01 * np.sqrt(2) / 3  # a difference of two cells of 10 targets at std 0.01

    def run(z):
        values = {"cosine": 0.8, "p=1": 0.8 + z * se, "p=2": 0.8, "p=3": 0.77, "p=4": 0.77}
        return claim.rule(_fig3b(values)(tables))

    near = run(2.2)
    assert False not in near.checks and verdict(near.checks) == "holds in part", near.why(10)
    assert "Bonferroni over 4 comparisons" in near.why(10)
    assert False in run(3.0).checks


def test_not_significantly_different_at_a_family_z():
    from vrlib.scorecard.rules import equivalent

    # 2.2 se apart, well inside the margin: different at 1.96, not at a family's 2.5 (nor 'not different' either)
    assert equivalent(2.2, 1.0, 100.0, significant_fails=True) is False
    assert equivalent(2.2, 1.0, 100.0, significant_fails=True, fail_z=2.5) is None
    assert equivalent(1.5, 1.0, 100.0, significant_fails=True, fail_z=2.5) is True
    assert equivalent(2.6, 1.0, 100.0, significant_fails=True, fail_z=2.5) is False


def test_adsgan_lambda_fails_only_at_the_family_z():
    """§5.4 ADS-GAN 'for small λ it gets a similar score [to WGAN-GP] ... this reduces vulnerability': the match, the
    fall between the ends and the 6 steps between neighbouring λ, one family of 8 (2.73 se). ADS-GAN's AUC rising by
    2.5 se from its smallest λ to its largest (beyond 1.96, within 2.73): within the noise; by 3 se it fails."""
    (claim,) = [c for c in JUDGED if c.paper == "domias" and c.quote.startswith("ADS-GAN is based")]
    tables = tables_of(claim)
    se = float(np.hypot(0.01, 0.01) / np.sqrt(3))  # a difference of two means over 4 seeds at std 0.01

    def run(z):
        return claim.rule(_adsgan(0.0, -z * se, 0.01)(tables))

    near = run(2.5)
    assert False not in near.checks and verdict(near.checks) == "holds in part", near.why(10)
    assert "Bonferroni over 8 comparisons" in near.why(10)
    assert False in run(3.0).checks


def test_adsgan_fall_with_lambda_is_judged_at_every_step_not_the_ends_alone():
    """'Increasing λ ... reduces vulnerability': ADS-GAN's AUC falling from its smallest λ to its largest but rising
    beyond the noise between two neighbouring λ (a spike at the fourth) does not fall as λ increases."""
    (claim,) = [c for c in JUDGED if c.paper == "domias" and c.quote.startswith("ADS-GAN is based")]
    df = _adsgan(0.0, 0.05, 0.005)(tables_of(claim))["domias_fig6"]
    ads = (df.family == "adsgan") & df.attack.isin(OWN)
    fourth = sorted(df.loc[ads, "privacy_param"].unique())[3]
    spike = df.copy()
    spike.loc[ads & (df.privacy_param == fourth), "auc_mean"] += 0.1
    out = claim.rule({"domias_fig6": spike})
    assert verdict(out.checks) == "holds in part", out.why(10)
    assert f"rises from λ = {sorted(df.loc[ads, 'privacy_param'].unique())[2]:g} to {fourth:g}" in out.why(10)
    assert verdict(claim.rule({"domias_fig6": df}).checks) == "holds"


@pytest.mark.parametrize(
    "between_sd, noise_sd, expected",
    [
        (0.1, 0.001, True),  # a real spread, as wide as 0.5 to 0.8 needs
        (0.012, 0.01, False),  # within 0.70–0.74: no spread beyond the noise, far less than the range needs
        (0.05, 0.045, None),  # as noisy as the spread: neither
    ],
)
def test_one_record_varies_can_fail(between_sd, noise_sd, expected):
    """lost Fig. 5 'Das modellgestützte Risiko R_MS variiert von etwa 0,5 (Zufallsrate) bis 0,8 (hohes Risiko)': the
    'varies' check holds on a spread beyond the noise, fails on one smaller beyond the noise than a range of about 0.5
    to 0.8 gives (at least 0.2 wide: an sd of 0.2 / √28 = 0.038 over 15 datasets), else is inconclusive. Before, it
    could not fail."""
    claim = _lost_claim("Das modell")
    tables = tables_of(claim)
    out = claim.rule(_record(model_seeded_min=0.70, model_seeded_max=0.74, traditional=0.62,
                             between_datasets_sd=between_sd, noise_sd=noise_sd)(tables))  # fmt: skip
    assert out.checks[0] is expected, out.why(10)
    if expected is False:
        assert "below the least a range of about 0.5 to 0.8 gives" in out.why(10)


def test_varies_too_little_rarely_fails_a_spread_the_range_allows():
    """The 'varies' fail side at its boundary: 15 true risks spanning exactly 0.2 (the least sd such a range has), two
    noisy runs in each dataset: it fails in at most 5 % of 1,000 draws (measured: 1.8 % at noise sd 0.06, 0.8 % at
    0.03), and in most draws where the true risks do not vary at all."""
    from vrlib.scorecard.lost import varies_least_sd, varies_too_little

    rng, n = np.random.default_rng(0), 15
    need = varies_least_sd(0.2, n)
    assert need == pytest.approx(np.r_[0.0, 0.2, np.full(n - 2, 0.1)].std(ddof=1))

    def share(true, sigma, draws=1000):
        hits = 0
        for _ in range(draws):
            r0, r1 = true + sigma * rng.standard_normal(n), true + sigma * rng.standard_normal(n)
            hits += varies_too_little(r0.std(ddof=1), np.sqrt(np.mean((r0 - r1) ** 2) / 2), need, n) < 0.05
        return hits / draws

    edge = np.r_[0.5, 0.7, np.full(n - 2, 0.6)]
    assert share(edge, 0.06) <= 0.05 and share(edge, 0.03) <= 0.05
    assert share(np.full(n, 0.6), 0.01) >= 0.9


def test_too_noisy_by_hand():
    from vrlib.scorecard.rules import too_noisy

    assert too_noisy(0.027, 0.05) and "0.053" in too_noisy(0.027, 0.05)  # 1.96 × 0.027 = 0.0529 ≥ 0.05
    assert too_noisy(0.025, 0.05) == ""  # 0.049: a difference near 0 could be shown inside
    assert too_noisy(float("nan"), 0.05) == ""


def _unclear_words(out) -> list[str]:
    return [w for w in out.failed if not w.startswith(f"{FAILS}: ")]


def test_rows_say_when_the_runs_noise_is_too_large_to_decide():
    """achilles Fig. 3a (range over k against 0.05), Fig. 3b (p = 1, 2 against ± 0.042) and lost Fig. 4 (the mean at
    the smallest ε against 0.5 ± 0.05, with one shared error): where 1.96 se alone reaches the margin the check is
    inconclusive and says the run's noise is too large to decide, not that its interval reaches past the margin; at a
    noise that could decide, a difference reaching past the margin still says so."""
    from vrlib.scorecard.rules import TOO_NOISY

    (k,) = [c for c in JUDGED if c.paper == "achilles" and c.quote.startswith("The mean AUC of the top ten")]
    se_to_std = 3 / np.sqrt(2)  # a difference of two cells of 10 targets
    noisy = k.rule(_fig3a(0.015, 0.027 * se_to_std)(tables_of(k)))
    assert verdict(noisy.checks) == "inconclusive" and noisy.why().startswith(TOO_NOISY), noisy.why()
    past = k.rule(_fig3a(0.04, 0.01 * se_to_std)(tables_of(k)))  # 0.04 ± 0.0196 reaches past 0.05
    assert verdict(past.checks) == "inconclusive" and past.why().startswith(PAST_MARGIN), past.why()

    (p,) = [c for c in JUDGED if c.paper == "achilles" and c.result == "§6.4 (Fig. 3b)"]
    values = {"cosine": 0.8, "p=1": 0.79, "p=2": 0.8, "p=3": 0.77, "p=4": 0.77}
    out = p.rule(_fig3b(values, std=0.029 * se_to_std)(tables_of(p)))
    assert [w.split(":")[0] for w in _unclear_words(out)][:2] == [TOO_NOISY] * 2, out.why(10)
    out = p.rule(_fig3b(values, std=0.02 * se_to_std)(tables_of(p)))  # -0.01 ± 0.039 past 0.042, not 1.96 se
    assert _unclear_words(out)[0].startswith(f"{PAST_MARGIN}: p=1"), out.why(10)

    chance = _lost_claim("Die MIA")
    out = chance.rule(_chance(0.5, 0.6, floor=0.06)(tables_of(chance)))  # one shared error: 1.96 × 0.042 = 0.083
    said = [w for w in _unclear_words(out) if "from 0.5" in w]
    assert len(said) == 2 and all(w.startswith(TOO_NOISY) for w in said), out.why(10)
    out = chance.rule(_chance(0.54, 0.7, floor=0.02)(tables_of(chance)))  # 0.04 ± 0.028 past 0.05, could decide
    said = [w for w in _unclear_words(out) if "from 0.5" in w]
    assert len(said) == 2 and all(w.startswith(PAST_MARGIN) for w in said), out.why(10)


def test_miss_rate_rising_with_t_is_judged_at_every_step_not_the_ends_alone():
    """lost 'Die Miss Rate nimmt mit zunehmendem Schwellenwert t zu': a miss rate that rises from t = 0.6 to 0.9 but
    falls from 0.6 to 0.3 between t = 0.7 and 0.8 (beyond the noise of 500 records) does not increase with t; a dip
    within the noise (0.6 to 0.59) leaves it holding."""
    claim = _lost_claim("Die Miss Rate")
    tables = tables_of(claim)
    dip = claim.rule(_miss_t({0.6: 0.1, 0.7: 0.6, 0.8: 0.3, 0.9: 0.85}, 0.05)(tables))
    assert verdict(dip.checks) == "does not hold", dip.why(10)
    assert "falls from 0.60 at t = 0.7 to 0.30 at t = 0.8" in dip.why(10)
    small = claim.rule(_miss_t({0.6: 0.1, 0.7: 0.6, 0.8: 0.59, 0.9: 0.85}, 0.05)(tables))
    assert verdict(small.checks) == "holds", small.why(10)


def test_step_against_by_hand():
    from vrlib.scorecard.rules import n_steps, step_against

    assert step_against([0.1, 0.5, 0.3, 0.9], [0.01] * 4, rising=True) == (
        1,
        pytest.approx(-0.2),
        pytest.approx(0.01 * np.sqrt(2)),
    )
    assert step_against([0.1, 0.5, 0.49, 0.9], [0.01] * 4, rising=True) is None  # 0.7 se: within the noise
    assert step_against([0.9, 0.5, 0.6], [0.01] * 3, rising=False)[0] == 1
    assert step_against([0.1, 0.5, 0.47], [0.01] * 3, rising=True, fail_z=3.0) is None  # 2.1 se, not beyond 3
    assert n_steps([0.1, np.nan, 0.3, 0.4]) == 1
    with pytest.raises(ValueError, match="differ in length"):
        step_against([0.1, 0.2], [0.01], rising=True)


def test_auc_drop_with_epsilon_is_judged_at_every_step_not_the_ends_alone():
    """§6.5 'the AUC drops when ε ... decreases': distance's AUC 0.5 at ε = 1, 0.7 at 10, 0.95 at 100, 0.7 at 1,000 and
    0.9 at ε = inf falls from its smallest ε to its largest, but rises as ε decreases from 1,000 to 100 (by 0.25, far
    beyond the noise): no longer 'holds'."""
    (claim,) = [c for c in JUDGED if c.result == "§6.5 (Fig. 4)" and c.quote.startswith("As expected")]
    tables = tables_of(claim)
    out = claim.rule(_fig4_drop(0.5, 0.7, 0.9, 0.01, at100=0.95)(tables))
    assert verdict(out.checks) == "holds in part", out.why(10)
    assert "rises as ε decreases from 1000 to 100" in out.why(10)
    # a dip within the noise (0.705 at ε = 100, 0.700 at 1,000: 1.1 se) leaves it holding
    assert verdict(claim.rule(_fig4_drop(0.5, 0.7, 0.9, 0.01, at100=0.705)(tables)).checks) == "holds"


def test_growth_with_n_syn_is_judged_at_every_step_not_the_ends_alone():
    """§5.2 'MIA performance goes up with |D_syn| across methods': every attack's AUC rising from its smallest n_syn to
    its largest but falling beyond the noise after a spike at the third n_syn does not go up with n_syn."""
    (claim,) = [c for c in JUDGED if c.paper == "domias" and c.quote.startswith("Also note")]
    tables = tables_of(claim)
    df = _n_syn(0.05, 0.005)(tables)["domias_fig4"]
    rows = df.ablation == "n_syn"
    third = sorted(df.loc[rows, "n_syn"].unique())[2]
    spike = df.copy()
    spike.loc[rows & (df.n_syn == third) & df.auc_mean.notna(), "auc_mean"] = 0.9
    out = claim.rule({"domias_fig4": spike})
    assert verdict(out.checks) == "does not hold", out.why(10)
    assert f"falls from n_syn = {third}" in out.why(10)
    assert verdict(claim.rule({"domias_fig4": df}).checks) == "holds"


def test_risk_falling_with_epsilon_is_judged_at_every_step_not_the_ends_alone():
    """lost 'Die MIA-Leistung nimmt mit sinkendem ε ab': the mean risk 0.5 at the smallest ε and 0.6 at the largest but
    0.75 in between (a fall from there to ε = inf beyond the larger noise, floors 0.01) does not fall with ε along the
    sweep: the fall's checks fail."""
    claim = _lost_claim("Die MIA")
    out = claim.rule(_chance(0.5, 0.6, floor=0.01, middle=0.75)(tables_of(claim)))
    falls = [w for w in out.failed if "between the ends" in w]
    failed = [w.startswith(f"{FAILS}: ") and "rises as ε decreases" in w for w in falls]
    assert len(falls) == 2 and all(failed), out.why(10)
    assert verdict(claim.rule(_chance(0.5, 0.6, floor=0.01)(tables_of(claim))).checks) == "holds"


def test_kde_then_flow_fails_only_at_the_family_z():
    """§5.2 'the deep density estimator gives further gains when enough data is available. For lower amounts of data,
    the KDE approach is more suitable': two comparisons, one family (2.24 se). BNAF 2.1 se behind KDE at the largest
    n_ref (beyond 1.96, within 2.24), KDE far ahead at the smallest: within the noise; 3 se behind fails."""
    (claim,) = [c for c in JUDGED if c.paper == "domias" and c.quote.startswith("As expected, the deep")]
    tables = tables_of(claim)
    se = float(np.hypot(0.005, 0.005) / np.sqrt(tables["domias_fig4"].n_seeds.iloc[0] - 1))

    def run(z):
        df = _kde_flow(1, 0.005)(tables)["domias_fig4"]
        at = (df.ablation == "n_ref") & (df.n_ref == df.loc[df.ablation == "n_ref", "n_ref"].max())
        df.loc[at & (df.attack == "domias_flow"), "auc_mean"] = 0.6 - z * se
        df.loc[at & (df.attack == "domias_kde"), "auc_mean"] = 0.6
        return claim.rule({"domias_fig4": df})

    near = run(2.1)
    assert False not in near.checks and verdict(near.checks) == "holds in part", near.why(10)
    assert "Bonferroni over 2 comparisons" in near.why(10)
    assert False in run(3.0).checks


def test_one_record_fails_a_comparison_only_at_the_family_z():
    """lost Fig. 5: five comparisons (the spread, worst case − traditional, R_T = 0.62, each end of the range), one
    family (2.58 se). At noise sd 0.01 (margin for 0.62: 1.96 √(0.01² + 0.0395²) = 0.080, the paper's risk as noisy as
    an AUC from its 100 + 100 games) a traditional risk 0.10 off (its interval wholly beyond the margin at 1.96 se, not
    at 2.58) is within the noise; 0.12 off fails."""
    claim = _lost_claim("Das modell")
    tables = tables_of(claim)

    def run(off):
        return claim.rule(_record(model_seeded_min=0.5, model_seeded_max=0.8, traditional=0.62 + off,
                                  between_datasets_sd=0.1, noise_sd=0.01)(tables))  # fmt: skip

    near = run(0.10)
    said = [w for w in near.failed if "traditional risk" in w]
    assert len(said) == 1 and not said[0].startswith(f"{FAILS}: "), near.why(10)
    assert "Bonferroni over 5 comparisons" in said[0]
    assert any(w.startswith(f"{FAILS}: traditional risk") for w in run(0.12).failed)


@pytest.mark.parametrize("name", ["achilles_table2", "achilles_table3"])
def test_table_cells_fail_only_at_the_family_z(name):
    """Tables 2 and 3 as the paper printed them, one claim over their 16 cells (2.96 se): every cell of ours, as
    noisy as the paper's, 2.5 se of the difference away from it (significantly apart at 1.96, not at 2.96) is too
    noisy to tell, not 'does not hold'; 3.5 se away fails."""
    (claim,) = [c for c in JUDGED if c.paper == "achilles" and c.result == name.replace("achilles_table", "Table ")]
    tables = tables_of(claim)

    def run(z):
        df = tables[name].copy()
        df["auc_std"] = df.paper_std
        df["auc_mean"] = df.paper_mean + z * np.sqrt(2) * df.paper_std / 3  # se of each: std / √9
        return claim.rule({name: df})

    near = run(2.5)
    assert verdict(near.checks) == "inconclusive", near.why(10)
    assert "Bonferroni over 16 comparisons" in near.why(10)
    assert verdict(run(3.5).checks) == "does not hold"


def test_mca_fig3_fails_a_share_only_at_the_family_z():
    """MCA §4.1 'approximately 96% ... Conversely, almost 91% ...': two shares, one family (2.24 se). 83 % of 400
    records in 100 values (se 0.038) is 2.1 se beyond 0.96 − 0.05: within the noise, not apart; 78 % (3.1 se) fails."""
    (claim,) = [c for c in JUDGED if c.paper == "mca" and c.result.startswith("§4.1 (Fig. 3, left")]
    tables = tables_of(claim)
    near = claim.rule({**tables, **_fig3_counts(332, 68)(tables)})
    assert near.checks[0] is None, near.why(10)
    assert "Bonferroni over 2 comparisons" in near.why(10)
    assert claim.rule({**tables, **_fig3_counts(312, 88)(tables)}).checks[0] is False


def test_mca_notebook_numbers_fail_only_at_the_family_z():
    """The authors' notebook's collision rate and precision, two numbers, one family (2.24 se): a precision of 0.90
    over 249 flagged records (binomial se 0.019) is 2.1 se beyond 0.81 + 0.05, within the noise; over 506 (3.0 se) it
    fails."""
    (claim,) = [c for c in JUDGED if c.paper == "mca" and c.result.startswith("authors' notebook")]
    tables = tables_of(claim)

    def run(n_flagged):
        df = tables["mca_collisions"].copy()
        w = df.generator == "WGAN-GP"
        df.loc[w, "precision"], df.loc[w, "n_flagged"] = 0.90, n_flagged
        return claim.rule({**tables, "mca_collisions": df})

    near = run(249)
    assert near.checks[1] is None and "Bonferroni over 2 comparisons" in near.why(10), near.why(10)
    assert run(506).checks[1] is False


def test_quality_over_lambda_fails_an_end_only_at_the_family_z():
    """§5.4 'At first, it also leads to an increase in quality ... but when λ increases further ... quality is
    significantly reduced': each end's W1 against the best intermediate λ's, two comparisons, one family (2.24 se).
    The largest λ's W1 2.1 se below the best intermediate one (beyond 1.96, within 2.24) is within the noise; 3 se
    below fails."""
    (claim,) = [c for c in JUDGED if c.paper == "domias" and c.quote.startswith("At first")]
    se = 0.01 * np.sqrt(2) / np.sqrt(3)  # a difference of two W1 means over 4 seeds at std 0.01

    def run(z):
        return claim.rule(_quality([0.5, 0.3, 0.4, 0.45, 0.5, 0.55, 0.3 - z * se], 0.01)(tables_of(claim)))

    near = run(2.1)
    assert verdict(near.checks) == "inconclusive" and "Bonferroni over 2 comparisons" in near.why(10), near.why(10)
    assert verdict(run(3.0).checks) == "does not hold"
