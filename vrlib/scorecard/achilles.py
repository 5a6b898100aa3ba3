"""Meeus et al., *Achilles' Heels* (ESORICS 2023): its quantitative claims, their quotes and their rules.

Two versions of the text are at hand (an arXiv version and the published one); the quotes are the
arXiv version's except where the published one corrects a slip (§6.5's "drops when ε decreases"),
and a claim notes where the two differ.

The noise: each cell of Tables 2 and 3 (and Figs. 3 and 4) is a mean over the 10 targets a method
chooses; the se of a difference between two cells is that of two independent means of 10
(:func:`vrlib.scorecard.rules.se_difference`). The paper's own ± are the same kind of std. The
committed tables come from one root seed, whose targets share their OUT datasets. Between two
methods of one setting that shared part enters both means (their covariance is expected to be
positive), so the se of two independent means is the conservative scale for their difference; for one cell against the paper's (and
for a ratio of stds) it does not cancel, and the se over targets is a lower bound of the noise: a
difference from the paper called beyond the noise is one a run over several root seeds should confirm.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
from scipy import stats

from vrlib.scorecard import headline
from vrlib.scorecard.rules import (
    ABOUT,
    PAST_MARGIN,
    TOO_NOISY,
    Z,
    Claim,
    Outcome,
    against_each,
    family_note,
    family_z,
    ahead,
    equivalent,
    equivalent_interval,
    f,
    not_below,
    replication_margin,
    se_difference,
    se_mean,
    signed,
    n_steps,
    step_against,
    too_noisy,
)

PAPER = "achilles"


def _headline() -> dict:
    """The paper's headline numbers, as its text states them, from :data:`vrlib.prose.PAPER_VALUES`."""
    from vrlib.prose import PAPER_VALUES

    gaps = next(v for k, v in PAPER_VALUES.items() if k.startswith("achilles headline gaps"))
    std = next(v for k, v in PAPER_VALUES.items() if k.startswith("achilles §7"))
    return {
        "table2_average_gap": gaps[0] / 100,  # "7.2 p.p. on average" (abstract, §6.1, §7)
        "table3_average_gap": gaps[1] / 100,  # "5.2 p.p. on average" (abstract, §6.2)
        "fig1_largest_median_gap": gaps[2] / 100,  # "up to 18.6 p.p. higher on the UK Census dataset using BayNet"
        "fig2_largest_median_gap": gaps[3] / 100,  # "up to 10.89 p.p. higher on the UK Census dataset using BayNet"
        # §7's Census stds, log-likelihood's / distance's ("reduce ... by a factor of two"): 0.041 / 0.021, 0.090 / 0.040
        "std_ratios": {"synthpop": std[1] / std[0], "baynet": std[3] / std[2]},
    }


HEADLINE = _headline()

CENSUS_SUBSTITUTE = (
    "UK Census: a 10,000-record random subset of the teaching file as Ω (the paper: all 569,741 records, "
    "not available here); Adult as the paper"
)


def _table_statement(attack: str) -> Callable[[], str]:
    def text() -> str:
        from vrlib.experiments.achilles import paper_table

        p = paper_table(attack)
        dist = p[p.method == "distance"]
        return (
            "mean ± std AUC of the 10 targets of each method on Adult and Census × Synthpop and BayNet; distance "
            f"{f(dist.paper_mean.min())}–{f(dist.paper_mean.max())}, the other methods "
            f"{f(p[p.method != 'distance'].paper_mean.min())}–{f(p[p.method != 'distance'].paper_mean.max())}"
        )

    return text


def paper_margin(std: float) -> float:
    """The paper's own 95 % half-width of a mean over its 10 targets, from its printed ± (a population std)."""
    return Z * se_mean(std, headline.PAPER_N_TARGETS)


def table_margin(attack: str) -> float:
    """The paper's own 95 % half-width of a typical cell of its table for ``attack``: :func:`paper_margin` of the
    median ± of that table (Table 2: 0.0645 → 0.042; Table 3: 0.0735 → 0.048)."""
    from vrlib.experiments.achilles import paper_table

    return paper_margin(float(paper_table(attack).paper_std.median()))


MARGIN_QUERY, MARGIN_ATTENTION = table_margin("query"), table_margin("attention")


def smallest_paper_advantage(attack: str) -> float:
    """The smallest advantage the paper's own table for ``attack`` shows the distance method with: per setting,
    distance's mean minus the best other method's, the least over the settings (Table 2: 0.023, Table 3: 0.018).

    The margin of "more or *equivalently* at-risk": a deficit as large as a gap the paper itself counts as
    "outperforms" cannot be "equivalent", so the margin is at most that gap. (A cell's own 95 % half-width,
    0.042 / 0.048, is twice as wide: it would call "equivalent" a deficit larger than the paper's smallest
    outperformance.)"""
    from vrlib.experiments.achilles import paper_table

    p = paper_table(attack)
    gaps = []
    for _, g in p.groupby(["dataset", "generator"]):
        g = g.set_index("method").paper_mean
        gaps.append(g["distance"] - g.drop("distance").max())
    return float(min(gaps))


EQUIV_QUERY, EQUIV_ATTENTION = smallest_paper_advantage("query"), smallest_paper_advantage("attention")


def cells_match_paper(df: pd.DataFrame) -> Outcome | None:
    """Per cell, ours equivalent to the paper's: the 95 % interval of ours − paper (our se over our targets) inside
    what two runs of that cell differ by (:func:`~vrlib.scorecard.rules.replication_margin` of our se and the
    paper's, from its printed ±) holds; the two significantly apart (a two-sample z-test on ours − paper, both
    standard errors) fails; else inconclusive."""
    need = {"method", "dataset", "generator", "auc_mean", "auc_std", "n_targets", "paper_mean", "paper_std"}
    if not need <= set(df.columns):
        return None
    df = df.dropna(subset=["auc_mean", "paper_mean", "paper_std"])
    if not len(df):
        return None
    gap = df.auc_mean - df.paper_mean
    se = [se_mean(s, n) for s, n in zip(df.auc_std, df.n_targets)]
    paper_se = [se_mean(ps, headline.PAPER_N_TARGETS) for ps in df.paper_std]
    margin = [replication_margin(e, p) for e, p in zip(se, paper_se)]
    # the table as the paper printed it: one claim over its cells, so a cell apart fails it only beyond their family z
    fail_z = family_z(len(df))
    v = [equivalent(g, e, m, paper_se=p, fail_z=fail_z) for g, e, m, p in zip(gap, se, margin, paper_se)]
    out = Outcome(
        f"{sum(x is True for x in v)} of {len(df)} cells equivalent to the paper's, {sum(x is False for x in v)} "
        f"apart from it, {sum(x is None for x in v)} too noisy to tell; mean |ours − paper| "
        f"{f(gap.abs().mean())}, largest {f(gap.abs().max())}"
    )
    out.ours = _with_note(out.ours, len(df))
    for row, ok, g, e, m in zip(df.itertuples(), v, gap, se, margin):
        out.check(ok, _with_note(f"{row.dataset}/{row.generator}/{row.method} {signed(g, e)} against ± {f(m)}", len(df)),
                  PAST_MARGIN)  # fmt: skip
    return out


def _versus_others(g: pd.DataFrame):
    """``(difference, se)`` per other method of one setting (``g`` indexed by method): distance's mean minus its."""
    d = g.loc["distance"]
    return [
        (m, d.auc_mean - r.auc_mean, se_difference(d.auc_std, d.n_targets, r.auc_std, r.n_targets))
        for m, r in g.drop(index="distance").iterrows()
    ]


def _per_setting(df: pd.DataFrame, keys) -> tuple[list, int]:
    """Per setting (``keys``), :func:`against_each` of distance against every other method: ``(setting, check,
    method that decides, difference, se)``, and the number of comparisons over all settings. The claim is about
    every one of them, so "behind" is judged at their :func:`family_z` (ahead at :data:`Z`)."""
    groups = []
    for key, g in df.groupby(list(keys), sort=False):
        g = g.set_index("method")
        if "distance" not in g.index or len(g) < 2:
            continue
        groups.append((key, _versus_others(g)))
    m = sum(len(d) for _, d in groups)
    fail_z = family_z(m) if m else None
    return [(key, *against_each(d, fail_z=fail_z)) for key, d in groups], m


def _with_note(what: str, m: int) -> str:
    note = family_note(m)
    return f"{what} ({note})" if note else what


def distance_ahead_per_setting(df: pd.DataFrame) -> Outcome | None:
    """Per setting, the distance method's mean above every other method's, beyond the noise ("outperforms both the
    random baseline and the two ad-hoc techniques": each of them, not only the best mean)."""
    if not {"method", "dataset", "generator", "auc_mean", "auc_std", "n_targets"} <= set(df.columns):
        return None
    if "distance" not in set(df.method):
        return None
    rows, n = _per_setting(df, ["dataset", "generator"])
    out = Outcome(
        _with_note(
            f"distance ahead of every other method beyond the noise in {sum(v is True for _, v, *_ in rows)} of "
            f"{len(rows)} settings (the method that decides): "
            + "; ".join(f"{d}/{g} {signed(x, e)} vs {m}" for (d, g), _, m, x, e in rows),
            n,
        )
    )
    for (d, g), v, m, x, e in rows:
        out.check(v, _with_note(f"{d}/{g}: distance − {m} {signed(x, e)}", n))
    return out


def table2_cells(t):
    return cells_match_paper(t["achilles_table2"])


def table3_cells(t):
    return cells_match_paper(t["achilles_table3"])


def census_omega_cells(t):
    return cells_match_paper(t["achilles_census_omega"])


def table2_ahead(t):
    return distance_ahead_per_setting(t["achilles_table2"])


def table3_ahead(t):
    return distance_ahead_per_setting(t["achilles_table3"])


def _not_behind(table: str, margin: float):
    """Per setting, the distance method not below any other method by more than ``margin`` ("more or
    equivalently"): against each other method, :func:`not_below` of distance − it; the setting holds when every
    other holds, fails when any fails, else inconclusive. "Consistently": a claim about every (setting, method)
    comparison, so "below" is judged at their :func:`family_z`."""

    def rule(t):
        df = t[table]
        if not {"method", "dataset", "generator", "auc_mean", "auc_std", "n_targets"} <= set(df.columns):
            return None
        if "distance" not in set(df.method):
            return None
        groups = []
        for (d, g), grp in df.groupby(["dataset", "generator"], sort=False):
            grp = grp.set_index("method")
            if "distance" in grp.index and len(grp) >= 2:
                groups.append(((d, g), _versus_others(grp)))
        n = sum(len(o) for _, o in groups)
        if not n:
            return None
        fail_z = family_z(n)
        rows = []
        for (d, g), others in groups:
            each = [(m, x, e, not_below(x, e, margin, fail_z=fail_z)) for m, x, e in others]
            failed = [r for r in each if r[3] is False]
            unclear = [r for r in each if r[3] is None]
            # The other that decides: one that fails, else one too noisy to tell, else the closest.
            m, x, e, _ = min(failed or unclear or each, key=lambda r: r[1] - Z * r[2])
            rows.append(((d, g), False if failed else (None if unclear else True), m, x, e))
        out = Outcome(
            f"distance equivalent to or above every other method (not below by more than {f(margin)}) in "
            f"{sum(v is True for _, v, *_ in rows)} of {len(rows)} settings, below one in "
            f"{sum(v is False for _, v, *_ in rows)} (the method that decides): "
            + "; ".join(f"{d}/{g} {signed(x, e)} vs {m}" for (d, g), _, m, x, e in rows)
        )
        out.ours = _with_note(out.ours, n)
        for (d, g), v, m, x, e in rows:
            out.check(v, _with_note(f"{d}/{g}: distance − {m} {signed(x, e)} against −{f(margin)}", n), PAST_MARGIN)
        return out

    return rule


def _average_gap_rule(table: str, attack: str, key: str):
    """One check, an equivalence: ours − the stated gap, ± 1.96 of our se, inside what two runs of that average
    differ by (:func:`~vrlib.scorecard.rules.replication_margin` of our se and the paper's, from the ± of its own
    table) while ours is above 0 beyond the noise (holds); significantly apart from it (fails); else inconclusive.

    Both se are :func:`headline.average_gap`'s ``se_shared``: the two settings of a dataset judge the same targets,
    so the four settings are not independent; the bound holds whatever their correlation (ours and the paper's)."""

    def rule(t):
        df = t[table]
        if not {"method", "dataset", "generator", "auc_mean", "auc_std", "n_targets"} <= set(df.columns):
            return None
        ours, own = headline.average_gap(df), headline.paper_average_gap(attack)
        stated = HEADLINE[key]
        diff = ours["gap"] - stated
        se, own_se = ours["se_shared"], own["se_shared"]
        margin = replication_margin(se, own_se)
        out = Outcome(
            f"distance − best other method, averaged over {ours['n_settings']} settings: {signed(ours['gap'], se)} "
            f"(se bounded for the settings of a dataset sharing their targets; {f(ours['se'])} were they independent; "
            f"the paper's own table gives {f(own['gap'])} ± {f(Z * own_se)} this way)"
        )  # fmt: skip
        v = equivalent(diff, se, margin, paper_se=own_se)
        v, unclear = _and_above_zero(v, ours["gap"], se)
        out.check(v, f"ours {signed(ours['gap'], se)} against the stated {f(stated)} ± {f(margin)}", unclear)
        return out

    return rule


def _and_above_zero(v, gap: float, se: float) -> tuple[bool | None, str]:
    """A gap equal to the stated one counts only when it is also above 0 beyond the noise; returns the check and
    the words for it when inconclusive, which say which of the two decided (a gap apart from the stated one is
    not read as one at or below 0)."""
    if v is True and not ahead(gap, se):
        return None, "within the stated gap's margin but not above 0 beyond the noise"
    return v, PAST_MARGIN


N_BOOT = 2000  # bootstrap replicates of a median gap's se (headline.median_gaps)
LARGEST_AT = ("census", "baynet")  # where the paper puts its largest median gap (§6.1, §6.2)


def _median_gap_rule(table: str, key: str, notebook: str, attack: str):
    """The median claims of Figs. 1 and 2: per setting, the median AUC of distance's targets above the highest
    median of the others beyond the noise ("consistently higher"); on Census/BayNet that gap equal to the stated
    one within the noise of ours and the paper's ("up to ... on the UK Census dataset using BayNet").

    The noise of a median gap is a bootstrap over the targets (:func:`headline.median_gaps`); the paper's
    per-target AUCs are not published, so its median gap's se comes from its own table's spread of the targets
    (:func:`headline.paper_median_gap_se`, ``attack``'s table). Without the per-target table (``table``) the rule
    is not run and says why."""

    def rule(t):
        if table not in t:
            # Not run (no check), never "inconclusive": nothing was measured, so nothing is within the noise.
            out = Outcome("–")
            out.failed.append(f"no per-target AUC table ({table}.csv) for this run: a table of means and stds over the "
                              f"targets cannot give their median; notebook {notebook} writes it")  # fmt: skip
            return out
        df = t[table]
        if not {"method", "dataset", "generator", "auc"} <= set(df.columns):
            return None
        gaps = headline.median_gaps(df, n_boot=N_BOOT, seed=0)
        top = gaps.iloc[0]
        out = Outcome(
            "median of distance's targets − highest median of the others: "
            + "; ".join(f"{r.dataset}/{r.generator} {signed(r.gap, r.se)}" for r in gaps.itertuples())
            + f"; largest {f(top.gap)} ({top.dataset}/{top.generator})"
        )
        # "consistently higher": a claim about every setting, so one behind fails it only beyond their family z
        fail_z = family_z(len(gaps))
        note = f" ({family_note(len(gaps))})" if family_note(len(gaps)) else ""
        for r in gaps.itertuples():
            out.check(
                ahead(r.gap, r.se, fail_z=fail_z),
                f"{r.dataset}/{r.generator}: distance's median − {r.best_other}'s {signed(r.gap, r.se)}{note}",
            )
        stated = HEADLINE[key]
        at = gaps[(gaps.dataset == LARGEST_AT[0]) & (gaps.generator == LARGEST_AT[1])]
        if not len(at):
            out.check(None, f"no {'/'.join(LARGEST_AT)} setting in the table: the stated {f(stated)} is not compared")
            return out
        r = at.iloc[0]
        # The paper's median gap is as noisy as its own targets' spread says (not as ours: a margin growing with our
        # noise would let a noisier run match more easily)
        paper_se = headline.paper_median_gap_se(attack, *LARGEST_AT)
        margin = replication_margin(r.se, paper_se)
        v = equivalent(r.gap - stated, r.se, margin, paper_se=paper_se)
        v, unclear = _and_above_zero(v, r.gap, r.se)
        what = (f"{'/'.join(LARGEST_AT)}: ours {signed(r.gap, r.se)} against the stated {f(stated)} ± {f(margin)} "
                f"(difference {signed(r.gap - stated, r.se)})")  # fmt: skip
        # "up to" the stated gap: a setting whose gap is above it beyond the noise (its se and the stated one's, taken
        # as Census/BayNet's; at the Bonferroni z of the other settings, any one of which would do) contradicts it
        others = gaps.drop(index=at.index)
        z_up = family_z(max(len(others), 1))
        above = [
            o for o in others.itertuples() if ahead(o.gap - stated, float(np.hypot(o.se, paper_se)), z=z_up) is True
        ]
        if above:
            o = max(above, key=lambda o: o.gap)
            v = False
            what += (f"; {o.dataset}/{o.generator}'s gap {signed(o.gap, o.se)} is above the stated largest beyond the "
                     f"noise (beyond {z_up:.2f} se)")  # fmt: skip
        out.check(v, what, unclear)
        return out

    return rule


def _median_statement(key: str, other_version: str = "") -> Callable[[], str]:
    def text() -> str:
        return f"largest median gap {100 * HEADLINE[key]:g} p.p. (UK Census, BayNet)" + other_version

    return text


def _headline_statement(key: str, attack: str) -> Callable[[], str]:
    def text() -> str:
        own = headline.paper_average_gap(attack)
        return (
            f"distance − best other method averaged over the 4 settings: {100 * HEADLINE[key]:g} p.p. "
            f"(the paper's own table gives {f(own['gap'])} this way)"
        )

    return text


def _log_ratio_se(n_other: int, n_distance: int) -> float:
    """The se of log(ratio of two stds) from their 95 % F interval (its log half-width / 1.96)."""
    f_lo, f_hi = stats.f.ppf([0.025, 0.975], n_other - 1, n_distance - 1)
    return float(np.log(f_hi / f_lo) / 4 / Z)


def std_halved(t):
    """On Census, per generator, log-likelihood's std / the distance method's equivalent to the paper's own ratio
    for that generator (§7: 0.041 / 0.021 = 1.95 for Synthpop, 0.090 / 0.040 = 2.25 for BayNet, "a factor of two"),
    on the log scale: the 95 % interval of log(ours / paper's) inside what two runs of that ratio differ by
    (:func:`~vrlib.scorecard.rules.replication_margin`; the paper's ratio comes from 10 targets per method, as
    noisy as an F interval of 10 and 10 says) holds, the two significantly apart fails, else inconclusive. A
    margin of "2 ± 0.5" alone could never be met over 10 targets, whose ratio of stds is uncertain by a factor
    of about two either way."""
    df = t["achilles_table2"]
    if not {"method", "dataset", "generator", "auc_std", "n_targets"} <= set(df.columns):
        return None
    r = headline.std_ratios(df)
    if not len(r):
        return None
    paper = HEADLINE["std_ratios"]
    se_paper = _log_ratio_se(headline.PAPER_N_TARGETS, headline.PAPER_N_TARGETS)
    out = Outcome(
        "Census, log-likelihood's std / distance's: "
        + "; ".join(
            f"{x.generator} {f(x.other_std)} / {f(x.distance_std)} = {x.ratio:.2f} [{x.ratio_low:.2f}, {x.ratio_high:.2f}]"
            for x in r.itertuples()
        )
    )
    judged = [x for x in r.itertuples() if x.generator in paper]
    # "by a factor of two, across generators": one generator apart fails it only at the family z of the generators
    fail_z = family_z(max(len(judged), 1))
    note = f" ({family_note(len(judged))})" if family_note(len(judged)) else ""
    for x in judged:
        se = float(np.log(x.ratio_high / x.ratio_low) / 2 / Z)  # the F interval's log half-width / 1.96
        diff = float(np.log(x.ratio / paper[x.generator]))
        margin = replication_margin(se, se_paper)
        v = equivalent(diff, se, margin, paper_se=se_paper, fail_z=fail_z)
        out.check(v, f"{x.generator}: ratio {x.ratio:.2f} [{x.ratio_low:.2f}, {x.ratio_high:.2f}] against the "
                  f"paper's {paper[x.generator]:.2f} (within a factor {np.exp(margin):.2f}){note}", PAST_MARGIN)  # fmt: skip
    return out


def loglik_below_distance(t):
    """Per generator and reading of the log-likelihood baseline, distance's mean above it beyond the noise; below it
    fails only beyond the :func:`family_z` of the pairs (any one of them below would fail the claim)."""
    df = t["achilles_loglik_readings"]
    if not {"generator", "setting", "auc_mean", "auc_std", "n_targets", "gap_to_distance"} <= set(df.columns):
        return None
    dist = df[df.setting == "distance"].set_index("generator")
    readings = df[df.setting != "distance"].dropna(subset=["gap_to_distance"])
    if not len(readings) or not len(dist):
        return None
    rows, fail_z = [], family_z(len(readings))
    for r in readings.itertuples():
        d = dist.loc[r.generator]
        se = se_difference(d.auc_std, d.n_targets, r.auc_std, r.n_targets)
        rows.append((r, r.gap_to_distance, se, ahead(r.gap_to_distance, se, fail_z=fail_z)))
    paper = readings.drop_duplicates("generator").set_index("generator").paper_gap
    out = Outcome(
        f"distance above log-likelihood beyond the noise in {sum(v is True for *_, v in rows)} of {len(rows)} "
        "(generator, reading) pairs; below it beyond the noise in "
        f"{sum(v is False for *_, v in rows)}; the paper's gap " + ", ".join(f"{g} {v:+.3f}" for g, v in paper.items())
    )
    out.ours = _with_note(out.ours, len(rows))
    for r, g, se, v in rows:
        out.check(v, _with_note(f"{r.generator}, {r.setting}: {signed(g, se)}", len(rows)))
    return out


def robust_in_k(t):
    """The mean AUC over k varies by at most ABOUT: the 95 % interval of the range (largest − smallest) inside ABOUT
    holds, wholly above it fails, else inconclusive (the k's share most targets, so their noise is shared).

    The range is the largest of the differences between the distinct cells (k's with the same top records give the
    same mean and std: one cell), so noise alone widens it with their number: it fails only when it lies above ABOUT
    by more than the Bonferroni z over those pairs (two-sided 5 %) times its se; with two distinct cells that z is
    1.96."""
    df = t["achilles_fig3a"]
    if not {"k", "auc_mean", "auc_std", "n_targets"} <= set(df.columns) or len(df) < 2:
        return None
    lo, hi = df.loc[df.auc_mean.idxmin()], df.loc[df.auc_mean.idxmax()]
    spread = hi.auc_mean - lo.auc_mean
    se = se_difference(hi.auc_std, hi.n_targets, lo.auc_std, lo.n_targets)
    out = Outcome(
        f"mean AUC {f(lo.auc_mean)} (k = {lo.k:g}) to {f(hi.auc_mean)} (k = {hi.k:g}) over {len(df)} values of k: "
        f"range {f(spread)} (se of a difference of two independent cells {f(se)})"
    )
    v = equivalent(spread, se, ABOUT)
    cells = len(df[["auc_mean", "auc_std"]].round(12).drop_duplicates())
    pairs = cells * (cells - 1) // 2
    z_max = family_z(max(pairs, 1))
    if v is False and spread - z_max * se <= ABOUT:
        v = None  # above the margin by less than the largest of `pairs` noisy differences can be by chance
    out.ours += f"; {cells} distinct cells, {pairs} pairs: the range fails only beyond {f(z_max, 2)} se"
    noisy = too_noisy(se, ABOUT) if v is None else ""
    out.check(v, f"range over k {f(spread)} (se {f(se)}) against 'slightly' = {ABOUT:g}" + (f": {noisy}" if noisy else ""),
              TOO_NOISY if noisy else PAST_MARGIN)  # fmt: skip
    return out


def distance_variants(t):
    """p = 1, 2 not significantly different from cosine: the 95 % interval of the difference inside ± the paper's own
    precision of a cell (:data:`MARGIN_QUERY`) holds, a difference beyond the noise or wholly beyond that margin
    fails, else inconclusive; p = 3, 4 "slightly decreasing": below cosine beyond the noise with the fall's 95 %
    interval within 'slightly' (:data:`~vrlib.scorecard.rules.ABOUT`, as for k in Fig. 3a) holds, above cosine beyond
    the noise or a fall wholly beyond 'slightly' fails, else inconclusive."""
    df = t["achilles_fig3b"]
    if not {"distance", "auc_mean", "auc_std", "n_targets"} <= set(df.columns) or "cosine" not in set(df.distance):
        return None
    d = df.set_index("distance")
    cos = d.loc["cosine"]

    def diff(p):
        return d.at[p, "auc_mean"] - cos.auc_mean, se_difference(
            d.at[p, "auc_std"], d.at[p, "n_targets"], cos.auc_std, cos.n_targets
        )

    out = Outcome(
        ", ".join(f"{k} {f(v)}" for k, v in d.auc_mean.items())
        + f"; lowest {d.auc_mean.idxmin()}"
    )  # fmt: skip
    # one sentence, one comparison per p the table has: one against it fails the claim only beyond their family z
    m = max(sum(p in d.index for p in ("p=1", "p=2", "p=3", "p=4")), 1)
    fail_z, note = family_z(m), f" ({family_note(m)})" if family_note(m) else ""
    out.ours += note
    for p in ("p=1", "p=2"):
        if p in d.index:
            x, se = diff(p)
            v = equivalent(x, se, MARGIN_QUERY, significant_fails=True, fail_z=fail_z)
            noisy = too_noisy(se, MARGIN_QUERY) if v is None and abs(x) <= Z * se else ""
            out.check(v, f"{p} − cosine {signed(x, se)} against ± {f(MARGIN_QUERY)}" + (f": {noisy}" if noisy else "")
                      + note, TOO_NOISY if noisy else PAST_MARGIN)  # fmt: skip
    for p in ("p=3", "p=4"):
        if p in d.index:
            x, se = diff(p)
            # "slightly decreasing": below cosine beyond the noise, and the fall's 95 % interval within 'slightly' (as
            # for k in Fig. 3a); above cosine beyond the noise, or a fall wholly beyond 'slightly', is not that (each
            # at the family z)
            below = ahead(-x, se, fail_z=fail_z)
            if below is False or -x - fail_z * se > ABOUT:
                v = False
            else:
                v = True if below and -x + Z * se <= ABOUT else None
            steep = v is False and x < 0
            out.check(v, f"{p} − cosine {signed(x, se)}" + (f": a fall beyond 'slightly' = {ABOUT:g}" if steep else "")
                      + note, PAST_MARGIN if below else "within the noise")  # fmt: skip
    return out


def _fig4_wide(df):
    need = {"dataset", "epsilon", "method", "auc_mean", "auc_std", "n_targets"}
    return need <= set(df.columns)


def distance_ahead_under_dp(t):
    """Per dataset and ε, the distance method ahead of every other beyond the noise."""
    return _ahead_under_dp(t, larger_only=False)


def distance_ahead_at_larger_epsilon(t):
    """Per dataset and ε above the smallest, the distance method ahead of every other beyond the noise."""
    return _ahead_under_dp(t, larger_only=True)


def _ahead_under_dp(t, larger_only: bool):
    df = t["achilles_fig4"]
    if not _fig4_wide(df) or "distance" not in set(df.method):
        return None
    if larger_only:
        df = df[df.epsilon > df.epsilon.min()]
    per, n = _per_setting(df.sort_values(["dataset", "epsilon"]), ["dataset", "epsilon"])
    rows = [(dataset, eps, m, x, e, v) for (dataset, eps), v, m, x, e in per]
    out = Outcome(
        _with_note(
            f"distance ahead of every other method beyond the noise in {sum(v is True for *_, v in rows)}, behind one "
            f"in {sum(v is False for *_, v in rows)}, within the noise of one in {sum(v is None for *_, v in rows)} of "
            f"{len(rows)} (dataset, ε) settings",
            n,
        )
    )
    for dataset, eps, best, x, se, v in rows:
        out.check(v, _with_note(f"{dataset}, ε = {eps:g}: distance − {best} {signed(x, se)}", n))
    return out


def fails_at_smallest_epsilon(t):
    """Per dataset, the AUC of all distinct targets at the smallest ε, over several root seeds, equivalent to chance:
    its 95 % interval inside 0.5 ± ABOUT (holds); wholly outside it (fails); else inconclusive."""
    df = t["achilles_fig4_smallest_epsilon_interval"]
    if not {"dataset", "method", "mean", "ci_low", "ci_high", "n_seeds"} <= set(df.columns):
        return None
    pooled = df[df.method == "all distinct targets"]
    if not len(pooled):
        return None
    out = Outcome(
        "; ".join(
            f"{r.dataset} {f(r.mean)} [{f(r.ci_low)}, {f(r.ci_high)}] over {r.n_seeds} root seeds"
            for r in pooled.itertuples()
        )
    )
    # "MIAs fail" on every dataset: one dataset away from chance fails the claim, so "wholly outside" is judged on
    # its interval at the Bonferroni level of the datasets (the table's is a 95 % t interval over the root seeds)
    m = len(pooled)
    note = f" (fails only with its interval at the Bonferroni level over {m} datasets wholly outside)" if m > 1 else ""
    out.ours += note
    for r in pooled.itertuples():
        v = equivalent_interval(r.ci_low - 0.5, r.ci_high - 0.5, ABOUT)
        if v is False and m > 1:
            low, high = _widened(r.mean, r.ci_low, r.ci_high, r.n_seeds, m)
            v = False if equivalent_interval(low - 0.5, high - 0.5, ABOUT) is False else None
        out.check(v, f"{r.dataset}: {f(r.mean)} [{f(r.ci_low)}, {f(r.ci_high)}] against 0.5 ± {ABOUT:g}{note}",
                  PAST_MARGIN)  # fmt: skip
    return out


def _widened(mean: float, low: float, high: float, n_seeds: int, m: int) -> tuple[float, float]:
    """A 95 % t interval over ``n_seeds`` root seeds (:func:`vrlib.uncertainty.seed_summary`) widened to the
    Bonferroni level of a family of ``m``: each side scaled by t(1 − 0.025 / m) / t(0.975), ``n_seeds`` − 1 df."""
    df = max(int(n_seeds) - 1, 1)
    scale = float(stats.t.isf(0.025 / m, df) / stats.t.isf(0.025, df))
    return mean - scale * (mean - low), mean + scale * (high - mean)


def auc_drops_with_epsilon(t):
    """Per dataset, the distance method's AUC at the smallest ε below that at the largest, beyond the noise;
    and above 0.5 beyond the noise at ε = 100 ("still performs quite well": the paper gives no value for "quite
    well", so only the least it says is checked) and at ε = 10 ("manages to still identify at-risk records")."""
    df = t["achilles_fig4"]
    if not _fig4_wide(df) or "distance" not in set(df.method):
        return None
    dist = df[df.method == "distance"].sort_values("epsilon")
    # (the difference, its se, what it is, the sweep or None): each judged below once their number is known
    parts, diffs = [], []
    for dataset, g in dist.groupby("dataset", sort=False):
        lo, hi = g.iloc[0], g.iloc[-1]
        x = hi.auc_mean - lo.auc_mean
        se = se_difference(hi.auc_std, hi.n_targets, lo.auc_std, lo.n_targets)
        parts.append(f"{dataset}: {f(lo.auc_mean)} at ε = {lo.epsilon:g}, {f(hi.auc_mean)} at ε = {hi.epsilon:g}")
        # "drops when ε decreases": the ends, and no step between neighbouring ε rising as ε decreases
        diffs.append((x, se, f"{dataset}: AUC(ε = {hi.epsilon:g}) − AUC(ε = {lo.epsilon:g}) {signed(x, se)}", g))
        for eps in (100, 10):  # "still performs quite well for ε = 100", "manages to ... identify ... for ε = 10"
            at = g[np.isclose(g.epsilon, eps)]
            if len(at):
                r = at.iloc[0]
                e = se_mean(r.auc_std, r.n_targets)
                parts[-1] += f", {f(r.auc_mean)} at ε = {eps}"
                diffs.append((r.auc_mean - 0.5, e, f"{dataset}: AUC − 0.5 at ε = {eps} {signed(r.auc_mean - 0.5, e)}",
                              None))  # fmt: skip
    out = Outcome("distance: " + "; ".join(parts))
    # every dataset, ε and step the sentences name: one against them fails the claim only at the family z of their
    # number
    m = max(len(diffs) + sum(n_steps(g.auc_mean) for *_, g in diffs if g is not None), 1)
    fail_z = family_z(m)
    note = f" ({family_note(m)})" if family_note(m) else ""
    for x, se, what, g in diffs:
        v = ahead(x, se, fail_z=fail_z)
        if g is not None:
            ses = [se_mean(s_, n_) for s_, n_ in zip(g.auc_std, g.n_targets)]
            if (step := step_against(g.auc_mean, ses, rising=True, fail_z=fail_z)) is not None:
                k, d, e = step
                v = False
                what += (f"; rises as ε decreases from {g.epsilon.iloc[k + 1]:g} to {g.epsilon.iloc[k]:g} by "
                         f"{signed(-d, e)}")  # fmt: skip
        out.check(v, what + note)
    return out


def _largest_paper_mean_gap(attack: str) -> str:
    """The largest per-setting gap (distance − best other mean) of the paper's own table, in words."""
    from vrlib.experiments.achilles import paper_table

    g = headline.setting_gaps(
        paper_table(attack), mean="paper_mean", std="paper_std", n_targets=headline.PAPER_N_TARGETS
    )
    top = g.loc[g.gap.idxmax()]
    return f"{f(top.gap)} ({top.dataset}, {top.generator})"


T2 = "Table 2: mean ± std AUC of the 10 targets of each method, beside the paper's"
T3 = "Table 3: mean ± std AUC over each method's targets, beside the paper's"
HEAD1 = "Where ours differs from the paper's headline numbers"
CELLS_RULE = (
    "per cell, an equivalence: the 95 % interval of ours − paper (our se over our 10 targets) inside ± what two runs "
    "of that cell differ by (1.96 √(our se² + the paper's), its se from its ± / √9) (holds), the two significantly "
    "apart (fails, only at the Bonferroni z of the table's cells: one table), else inconclusive"
)
NOT_BEHIND_RULE = (
    "per setting and other method, the 95 % interval of distance − it wholly above −{margin:.3f} ('equivalently': the "
    "smallest advantage of distance over the best other method in a setting of the paper's own Table {table}, which "
    "the paper counts as 'outperforms', so a deficit that large is not 'equivalent') (holds), wholly below it "
    "(fails, only at the Bonferroni z of the comparisons: 'consistently'), else inconclusive"
)
MEDIAN_RULE = (
    "from each target's AUC: per setting, distance's median minus the highest median of the others above 0 beyond "
    "1.96 se (bootstrap over the targets), below 0 (fails) only at the Bonferroni z of the settings ('consistently'); on Census/BayNet the 95 % interval of that gap minus the stated value "
    "inside what two runs differ by (1.96 √(our se² + the paper's): the paper publishes no spread of its medians, so "
    "its gap's se is √(π/2) × that of the two means from the ± of its own table, for distance and the other method "
    "with the highest mean there) and the gap beyond 0 (holds), the two significantly apart (fails), "
    "else inconclusive, and it fails where another setting's gap is above the stated largest beyond the noise "
    "('up to'; at the Bonferroni z of the other settings); "
    "not run, and why, without the per-target table"
)

CLAIMS: tuple[Claim, ...] = (
    Claim(PAPER, "§1; §6.1; §7", "we show our method to outperform previous ad-hoc approaches by 7.2 percentage "
          "points (p.p.) on average on 2 datasets and 2 generators", _headline_statement("table2_average_gap", "query"),
          ("achilles_table2",), _average_gap_rule("achilles_table2", "query", "table2_average_gap"),
          "per setting, distance's mean AUC minus the best other method's, averaged over the 4 settings: the 95 % "
          "interval of ours minus the stated 7.2 p.p. inside ± what two runs of that average differ by (1.96 √(our se² "
          "+ the paper's), its se from the ± of its own Table 2) and ours beyond 0 (holds), the two significantly "
          "apart (fails), else inconclusive; each se bounded for the two settings of a dataset judging the same "
          "targets (per dataset the sum of the settings' se, Cauchy–Schwarz), not taken as independent",
          "01", HEAD1, "achilles_fig1", substitute=CENSUS_SUBSTITUTE),
    Claim(PAPER, "§1; §6.2", "the performance of our attack increases also significantly when computed on "
          "records identified by our method, by 5.2 p.p. on average across datasets and generators",
          _headline_statement("table3_average_gap", "attention"), ("achilles_table3",),
          _average_gap_rule("achilles_table3", "attention", "table3_average_gap"),
          "as for 7.2 p.p., on Table 3 (target attention); the stated 5.2 p.p. is not what the paper's own Table 3 "
          "gives this way", "02", "Where ours differs from the paper's headline number", "achilles_fig2",
          substitute=CENSUS_SUBSTITUTE),
    Claim(PAPER, "§6.1 (Fig. 1)", "The median risk of records identified by our method is indeed consistently higher "
          "than all other methods, up to 18.6 p.p. higher on the UK Census dataset using BayNet.",
          _median_statement("fig1_largest_median_gap"), ("achilles_table2", "achilles_fig1_targets"),
          _median_gap_rule("achilles_fig1_targets", "fig1_largest_median_gap", "01", "query"),
          MEDIAN_RULE, "01", HEAD1, "achilles_fig1", substitute=CENSUS_SUBSTITUTE),
    Claim(PAPER, "§6.2 (Fig. 2)", "The median risk of records identified by our method is indeed consistently higher "
          "than all other methods, up to 10.89 p.p. higher on the UK Census dataset using BayNet.",
          _median_statement("fig2_largest_median_gap", "; the other version of the text says 'The mean risk ... up to "
                            "10.89 p.p.', but the largest mean gap of the paper's own Table 3 is "
                            f"{_largest_paper_mean_gap('attention')}, so the 10.89 p.p. is read as the medians'"),
          ("achilles_table3", "achilles_fig2_targets"),
          _median_gap_rule("achilles_fig2_targets", "fig2_largest_median_gap", "02", "attention"),
          MEDIAN_RULE, "02", "Where ours differs from the paper's headline number", "achilles_fig2",
          substitute=CENSUS_SUBSTITUTE),
    Claim(PAPER, "§7", "When we use only categorical columns, such as in UK Census, results show that we reduce the "
          "standard deviation in the results by a factor of two, across generators. With our method we obtained a "
          "standard deviation of 0.021 instead of 0.041 for Synthpop and 0.040 instead of 0.090 for BayNet.",
          "Census std: distance 0.021 vs log-likelihood 0.041 (Synthpop), 0.040 vs 0.090 (BayNet)",
          ("achilles_table2",), std_halved,
          "per Census generator, log-likelihood's std / distance's against the paper's own ratio (1.95 Synthpop, "
          "2.25 BayNet), on the log scale: the 95 % interval (F) of log(ours / paper's) inside what two runs of 10 "
          "targets per method differ by (1.96 √(our se² + the paper's)) (holds), the two significantly apart "
          "(fails, at the Bonferroni z of the generators: 'across generators'), else inconclusive", "01", HEAD1,
          "achilles_fig1",
          substitute=CENSUS_SUBSTITUTE),
    Claim(PAPER, "Table 2", "Table 2: Mean and standard deviation for AUC for the query-based attack method",
          _table_statement("query"), ("achilles_table2",), table2_cells,
          CELLS_RULE, "01", T2,
          "achilles_fig1", substitute=CENSUS_SUBSTITUTE),
    Claim(PAPER, "§6.1 (Fig. 1, Table 2)", "Figure 1 show that our vulnerable record identification method "
          "consistently outperforms both the random baseline and the two ad-hoc techniques previously used in the "
          "literature.", "distance ahead in all four settings", ("achilles_table2",), table2_ahead,
          "per setting, distance's mean AUC minus each other method's above 0 beyond the noise, for every other method "
          "(not only the best mean)", "01", T2,
          "achilles_fig1", substitute=CENSUS_SUBSTITUTE),
    Claim(PAPER, "Table 2, Census Ω", "Table 2: Mean and standard deviation for AUC for the query-based attack method",
          "the Census columns of Table 2 (the paper's Ω: all 569,741 records)", ("achilles_census_omega",), census_omega_cells,
          CELLS_RULE + ", on a larger Census Ω (its first 50,000 rows)", "01",
          "A larger census Ω: is the gap to the paper's Census columns the size of Ω?",
          substitute="UK Census: the first 50,000 rows of the teaching file as Ω (the paper: all 569,741 records)",
          restates="Table 2's Census cells again, on a larger Ω"),
    # The claim judged is §6.1's against one of "the two ad-hoc techniques" (§5.2's log-likelihood, whose words
    # leave its reading open), on Adult, under each reading; §5.2's words describe the method, they claim nothing.
    Claim(PAPER, "§6.1 (Table 2, log-likelihood; §5.2)", "our vulnerable record identification method consistently "
          "outperforms both the random baseline and the two ad-hoc techniques previously used in the literature",
          "distance above log-likelihood on Adult (the paper's Table 2 gaps: Synthpop +0.062, BayNet +0.023), under "
          "each reading of §5.2's baseline ('the lowest log-likelihood, assuming attribute values are independently "
          "drawn from their respective empirical distributions')", ("achilles_loglik_readings",), loglik_below_distance,
          "per generator and reading of the baseline, distance's mean AUC above log-likelihood's beyond the noise",
          "01", "The log-likelihood baseline: which reading is the paper's?",
          restates="§6.1's 'outperforms' against log-likelihood again, under each reading of that baseline"),
    Claim(PAPER, "Table 3", "Table 3: Mean and standard deviation for AUC for the Target Attention method",
          _table_statement("attention"), ("achilles_table3",), table3_cells,
          CELLS_RULE, "02", T3,
          "achilles_fig2", substitute=CENSUS_SUBSTITUTE),
    Claim(PAPER, "§6.2 (Fig. 2, Table 3)", "Figure 2 shows that, again, our vulnerable record identification method "
          "strongly outperforms both the random baseline and the two ad-hoc techniques previously used in the "
          "literature.", "distance ahead in all four settings", ("achilles_table3",), table3_ahead,
          "per setting, distance's mean AUC minus each other method's above 0 beyond the noise, for every other method "
          "(not only the best mean)", "02", T3,
          "achilles_fig2", substitute=CENSUS_SUBSTITUTE),
    Claim(PAPER, "§6.1 (Fig. 1, Table 2)", "Importantly, our method also consistently manages to identify records that "
          "are more or equivalently at-risk compared to other methods.", "distance never behind", ("achilles_table2",),
          _not_behind("achilles_table2", EQUIV_QUERY), NOT_BEHIND_RULE.format(margin=EQUIV_QUERY, table="2"), "01", T2, "achilles_fig1", substitute=CENSUS_SUBSTITUTE),
    Claim(PAPER, "§6.2 (Fig. 2, Table 3)", "Importantly, our method also consistently manages to identify records that "
          "are more or equivalently at-risk compared to other methods.", "distance never behind", ("achilles_table3",),
          _not_behind("achilles_table3", EQUIV_ATTENTION), NOT_BEHIND_RULE.format(margin=EQUIV_ATTENTION, table="3"),
          "02", T3, "achilles_fig2", substitute=CENSUS_SUBSTITUTE),
    Claim(PAPER, "§6.3 (Fig. 3a)", "The mean AUC of the top ten records varies indeed only slightly for different "
          "values of k.", "flat in k (Adult, Synthpop)", ("achilles_fig3a",), robust_in_k,
          f"the 95 % interval of the largest − smallest mean AUC over k inside {ABOUT:g} ('slightly', the scorecard's "
          "'about') (holds), above it by more than the largest difference of the distinct cells can be by chance "
          "(Bonferroni z over their pairs × its se) (fails), else inconclusive",
          "03", "Fig. 3a: mean ± std AUC of the top records by V_k (`n_targets`) against k", "achilles_fig3a"),
    Claim(PAPER, "§6.3 (Fig. 3a)", "Looking at the top 10 records selected for different values of k, we find that "
          "only a handful of records are distinct", "only a handful of distinct records over k",
          unjudged="no committed table lists the records chosen at each k", notebook="03",
          section="Fig. 3a: mean ± std AUC of the top records by V_k (`n_targets`) against k"),
    Claim(PAPER, "§1", "Running a state-of-the-art MIA on a record takes in our experiments, depending on the "
          "generator and the dataset, approximately 1.5 to 6 hours on dedicated computation facilities. Even for the "
          "(relatively) small datasets of 1,000 records we consider, fully estimating the privacy risk of a dataset, "
          "would take up to 250 days of compute.", "1.5 to 6 hours of compute per record; up to 250 days for 1,000 records",
          unjudged="a cost on the authors' computing facilities, not a result of the method: this companion's wall "
          "times, on other hardware, are in the runs page (docs/runs.md), not compared with it"),
    Claim(PAPER, "§6.4 (Fig. 3b)", "mean AUC is not significantly different for the cosine distance, p=1, and p=2, "
          "while slightly decreasing for higher p values.", "cosine ≈ p = 1 ≈ p = 2; p = 3, 4 lower",
          ("achilles_fig3b",), distance_variants,
          f"p = 1, 2: the 95 % interval of p − cosine inside ± {MARGIN_QUERY:.3f} (the paper's own 95 % half-width of a "
          "typical Table 2 cell) and not beyond 0 (holds), beyond 0 or wholly beyond the margin (fails), else "
          f"inconclusive; p = 3, 4: below cosine beyond the noise, the fall's 95 % interval within 'slightly' "
          f"({ABOUT:g}, as for k) (holds), above cosine beyond the noise or the fall wholly beyond {ABOUT:g} (fails), "
          "else inconclusive; every 'fails' at the Bonferroni z of the four comparisons", "03",
          "Fig. 3b: mean ± std AUC of the top records by V_k (`n_targets`) for each distance", "achilles_fig3b"),
    Claim(PAPER, "§6.5 (Fig. 4)", "Figure 4 shows that our approach outperforms both the random baseline and the two "
          "ad-hoc techniques previously used in the literature.", "distance ahead at every ε (PrivBayes)",
          ("achilles_fig4",), distance_ahead_under_dp,
          "per dataset and ε, distance's mean AUC minus each other method's above 0 beyond the noise", "04",
          "Fig. 4: mean ± std AUC against ε", "achilles_fig4", substitute=CENSUS_SUBSTITUTE),
    Claim(PAPER, "§1 (Fig. 4)", "We confirm that MIAs fail when the privacy budget is decreased to ε = 1",
          "AUC at chance at ε = 1", ("achilles_fig4_smallest_epsilon_interval",), fails_at_smallest_epsilon,
          f"per dataset, the 95 % interval over root seeds of all distinct targets' mean AUC at the smallest ε inside "
          f"0.5 ± {ABOUT:g} (the paper states no value for 'fail'; the scorecard's 'about') (holds), wholly outside it "
          "at the Bonferroni level of the datasets (fails: one of them), else inconclusive", "04",
          "Reading the result", "achilles_fig4", substitute=CENSUS_SUBSTITUTE),
    Claim(PAPER, "§1 (Fig. 4)", "find that our metric consistently identifies more vulnerable records for larger values "
          "of ε", "distance ahead at every ε above the smallest", ("achilles_fig4",), distance_ahead_at_larger_epsilon,
          "per dataset and ε above the smallest, distance's mean AUC minus each other method's above 0 beyond the noise",
          "04", "Fig. 4: mean ± std AUC against ε", "achilles_fig4", substitute=CENSUS_SUBSTITUTE),
    Claim(PAPER, "§6.5 (Fig. 4)", "As expected though, the AUC drops when ε ... decreases. The attack still performs quite "
          "well for ε ... = 100 and manages to identify at-risk records for ε ... = 10.",
          "AUC lower at small ε (the other version of the text says 'increases', a slip); above chance at ε = 100 "
          "('quite well', no value stated) and at ε = 10",
          ("achilles_fig4",), auc_drops_with_epsilon,
          "per dataset, distance's AUC at the largest ε above that at the smallest beyond the noise, and at ε = 100 "
          "and at ε = 10 above 0.5 beyond the noise (for 'quite well' at ε = 100 the paper states no value: only "
          "'above chance' is checked), and no step between neighbouring ε rising as ε decreases beyond the noise "
          "('drops when ε decreases', along the sweep); the other way fails only at the Bonferroni z of these "
          "comparisons", "04", "Fig. 4: mean ± std AUC against ε", "achilles_fig4",
          substitute=CENSUS_SUBSTITUTE),
)  # fmt: skip
