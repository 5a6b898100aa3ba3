"""The achilles paper's headline numbers, computed the way its text states them.

- "outperforms previous ad-hoc approaches by 7.2 p.p. on average" (abstract, §6.1, §7) and "5.2 p.p." (§6.2):
  per setting (dataset × generator), the distance method's mean AUC minus the best of the other
  three methods' means, averaged over the four settings (:func:`setting_gaps`, :func:`average_gap`).
  On the paper's own Table 2 this gives 0.0722; on its Table 3, 0.042 (not 5.2 p.p.).
- "up to 18.6 p.p." (Fig. 1) and "up to 10.89 p.p." (Fig. 2): the *median* AUC of the distance method's
  targets minus the highest median of the others, largest over the settings (:func:`median_gaps`); this
  needs each target's AUC, which the notebooks have and the committed tables do not.
- "we reduce the standard deviation in the results by a factor of two" on UK Census (§7): the distance
  method's std against log-likelihood's (0.021 vs 0.041 Synthpop, 0.040 vs 0.090 BayNet) (:func:`std_ratios`).

Tables in: a Table 2/3 as the notebooks write it (``method, dataset, generator, auc_mean, auc_std,
n_targets``) or :func:`vrlib.experiments.achilles.paper_table`'s (``paper_mean, paper_std``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.errors import VrlibError
from vrlib.scorecard.rules import se_difference

__all__ = [
    "setting_gaps", "average_gap", "paper_average_gap", "paper_median_gap_se", "median_gaps", "std_ratios",
    "shortfall_carrier",
    "PAPER_N_TARGETS",
]  # fmt: skip

PAPER_N_TARGETS = 10  # the paper's Tables 2 and 3: mean ± std over the 10 targets of each method
SETTING = ["dataset", "generator"]


def _need(table: pd.DataFrame, columns) -> None:
    missing = set(columns) - set(table.columns)
    if missing:
        raise VrlibError(f"the table lacks {sorted(missing)}; pass a Table 2/3 as notebooks 01/02 write it")


def setting_gaps(
    table: pd.DataFrame, mean: str = "auc_mean", std: str = "auc_std", n_targets: str | int = "n_targets"
) -> pd.DataFrame:
    """Per setting: the distance method's mean, the best other method and its mean, the gap and its se.

    ``n_targets`` is a column name or, for the paper's table, a number. The se is that of a
    difference of two independent means of ``n_targets`` targets each.
    """
    _need(table, ["method", *SETTING, mean, std] + ([n_targets] if isinstance(n_targets, str) else []))
    rows = []
    for (dataset, generator), g in table.groupby(SETTING, sort=False):
        g = g.set_index("method")
        if "distance" not in g.index or len(g) < 2:
            raise VrlibError(f"{dataset}/{generator}: the table needs the distance method and at least one other")
        n = g[n_targets] if isinstance(n_targets, str) else pd.Series(n_targets, index=g.index)
        others = g.drop(index="distance")
        best = others[mean].idxmax()
        rows.append(
            dict(
                dataset=dataset,
                generator=generator,
                distance=g.at["distance", mean],
                best_other=best,
                best_other_mean=others.at[best, mean],
                gap=g.at["distance", mean] - others.at[best, mean],
                se=se_difference(g.at["distance", std], n["distance"], others.at[best, std], n[best]),
            )
        )
    return pd.DataFrame(rows)


def average_gap(table: pd.DataFrame, **columns) -> dict:
    """The gap of :func:`setting_gaps` averaged over the settings, with its se: ``se`` with the settings independent,
    ``se_shared`` whatever the dependence of the settings of one dataset.

    The two generators' settings of one dataset judge the same targets of each method (a method picks its records
    from the dataset, not from the generator), so their gaps are correlated through the targets; the settings of
    different datasets are not. ``se_shared`` bounds the se however large that correlation is: per dataset, the sd of
    a sum of gaps is at most the sum of their sds (Cauchy–Schwarz), and the datasets add as independent.
    """
    g = setting_gaps(table, **columns)
    shared = np.sqrt(sum(d.se.sum() ** 2 for _, d in g.groupby("dataset", sort=False))) / len(g)
    return dict(
        gap=float(g.gap.mean()), se=float(np.sqrt((g.se**2).sum()) / len(g)), se_shared=float(shared), n_settings=len(g)
    )


def paper_average_gap(attack: str = "query") -> dict:
    """:func:`average_gap` on the paper's own Table 2 (``query``) or Table 3 (``attention``)."""
    from vrlib.experiments.achilles import paper_table

    return average_gap(paper_table(attack), mean="paper_mean", std="paper_std", n_targets=PAPER_N_TARGETS)


def paper_median_gap_se(attack: str, dataset: str = "census", generator: str = "baynet") -> float:
    """The se of the paper's median gap at one setting, from the spread of its own targets (Table 2 or 3's ±).

    The paper publishes no per-target AUC, but its table gives each method's std over its 10 targets; the median of
    n values of sd σ has an se of about √(π/2) σ / √(n − 1) (the normal case, with the table's population std), and
    the gap is distance's median minus that of the other method with the highest mean there.
    """
    from vrlib.experiments.achilles import paper_table

    p = paper_table(attack)
    g = p[(p.dataset == dataset) & (p.generator == generator)].set_index("method")
    best = g.drop(index="distance").paper_mean.idxmax()
    scale = np.sqrt(np.pi / 2)
    return float(scale * np.hypot(*(g.at[m, "paper_std"] / np.sqrt(PAPER_N_TARGETS - 1) for m in ("distance", best))))


def median_gaps(results: pd.DataFrame, n_boot: int = 0, seed: int = 0) -> pd.DataFrame:
    """Per setting, the median AUC of the distance method's targets minus the highest median of the others.

    ``results``: one row per target (``dataset, generator, method, auc``), as
    :func:`vrlib.experiments.achilles.record_identification` returns and notebooks 01/02 write
    (``achilles_fig1_targets``, ``achilles_fig2_targets``). Sorted by the gap, largest first.

    With ``n_boot`` > 0 a column ``se``: the standard deviation of the gap over ``n_boot`` bootstrap
    replicates that draw each method's targets again, with replacement, within the setting (the
    best other method chosen anew in each replicate), so the se covers which method is best too.
    """
    _need(results, ["method", *SETTING, "auc"])
    results = results.dropna(subset=["auc"])
    med = results.groupby([*SETTING, "method"], sort=False).auc.median().unstack("method")
    if "distance" not in med.columns or med.shape[1] < 2:
        raise VrlibError("the results need the distance method and at least one other")
    others = med.drop(columns="distance")
    out = pd.DataFrame(
        dict(
            distance_median=med["distance"],
            best_other=others.idxmax(axis=1),
            best_other_median=others.max(axis=1),
        )
    )
    out["gap"] = out.distance_median - out.best_other_median
    if n_boot > 0:
        rng = np.random.default_rng(seed)
        se = {}
        for setting, g in results.groupby(SETTING, sort=False):
            boot = {}
            for method, m in g.groupby("method", sort=False):
                auc = m.auc.to_numpy(np.float64)
                boot[method] = np.median(auc[rng.integers(0, len(auc), size=(n_boot, len(auc)))], axis=1)
            if "distance" not in boot or len(boot) < 2:
                se[setting] = np.nan
                continue
            best = np.max([v for k, v in boot.items() if k != "distance"], axis=0)
            se[setting] = float(np.std(boot["distance"] - best))
        out["se"] = [se.get(k, np.nan) for k in out.index]
    return out.reset_index().sort_values("gap", ascending=False, ignore_index=True)


def std_ratios(
    table: pd.DataFrame, dataset: str = "census", other: str = "loglik", std: str = "auc_std", n_targets="n_targets"
) -> pd.DataFrame:
    """Per generator on ``dataset``: ``other``'s std over the targets divided by the distance method's,
    with a 95 % interval of that ratio (an F interval on the ratio of variances of two samples of
    ``n_targets`` independent targets)."""
    from scipy import stats

    _need(table, ["method", *SETTING, std])
    rows = []
    for generator, g in table[table.dataset == dataset].groupby("generator", sort=False):
        g = g.set_index("method")
        if not {"distance", other} <= set(g.index):
            continue
        n_d = g.at["distance", n_targets] if isinstance(n_targets, str) else n_targets
        n_o = g.at[other, n_targets] if isinstance(n_targets, str) else n_targets
        ratio = g.at[other, std] / g.at["distance", std]
        f_lo, f_hi = stats.f.ppf([0.025, 0.975], n_o - 1, n_d - 1)
        rows.append(
            dict(
                generator=generator,
                distance_std=g.at["distance", std],
                other_std=g.at[other, std],
                ratio=ratio,
                ratio_low=float(np.sqrt(ratio**2 / f_hi)),
                ratio_high=float(np.sqrt(ratio**2 / f_lo)),
            )
        )
    return pd.DataFrame(rows)


def shortfall_carrier(trace: pd.DataFrame) -> str:
    """The sentence naming the setting that carries the largest share of the shortfall of our average gap from the
    paper's (:func:`average_gap`): per setting, the paper's gap minus ours, as a share of their sum.

    ``trace``: one row per setting with ``dataset, generator, gap_ours, gap_paper`` (:func:`setting_gaps` of our
    table and of the paper's, merged on the setting with those suffixes). "Most of the shortfall" only where that
    share is above one half; a setting where ours is above the paper's counts against the shortfall (a negative
    share); no shortfall to trace where ours is not below the paper's on average.
    """
    _need(trace, [*SETTING, "gap_ours", "gap_paper"])
    short = trace.gap_paper - trace.gap_ours
    total = float(short.sum())
    if not total > 0:
        return (f"Our average gap ({trace.gap_ours.mean():+.3f}) is not below the paper's ({trace.gap_paper.mean():+.3f}): "
                "no shortfall to trace.")  # fmt: skip
    share = short / total
    r = trace.loc[share.idxmax()]
    carries = "most of the shortfall" if share.max() > 0.5 else "the largest share of the shortfall"
    return (f"The setting that carries {carries}: {r.dataset}/{r.generator} ({share.max():.0%} of it; "
            f"ours {r.gap_ours:+.3f} vs the paper's {r.gap_paper:+.3f}).")  # fmt: skip
