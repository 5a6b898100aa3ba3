"""lost-in-the-averages figures drawn from their tables: Figs. 3 and 4 (the RMSD and the miss rates along a sweep).

Kept apart from :mod:`vrlib.experiments.lost` so that editing a figure leaves the experiments' code untouched.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.errors import VrlibError
from vrlib.experiments.lost import THRESHOLDS, paper_values

FEW_RECORDS = 3  # a miss rate over this many high-risk records or fewer: noise alone moves it anywhere in [0, 1]


def plot_sweep(rmsd: pd.DataFrame, miss: pd.DataFrame, labels, xlabel: str, few: int = FEW_RECORDS):
    """Figs. 3 and 4: the RMSD (left) and the miss rates (right) along a sweep, the paper's ranges marked.

    A miss rate over ``1..few`` high-risk records is drawn as a hollow marker with its count
    beside it (``n=2``): with so few records it says little (see the noise line).

    Parameters
    ----------
    rmsd : DataFrame
        One row per setting, in the sweep's order: ``rmsd, floor`` and, drawn as error bars
        where present, ``rmsd_low, rmsd_high`` (:func:`summarise_rmsd` or the ``lost_fig*_rmsd`` table).
    miss : DataFrame
        ``t, miss_rate, miss_rate_noise, n_high``, one row per setting and threshold, the
        settings in ``rmsd``'s order (:func:`summarise_miss` or the ``lost_fig*_miss`` table).
    labels : list of str
        The settings' tick labels.
    xlabel : str
    few : int
        Miss rates over at most this many high-risk records are marked as unreliable.
    """
    import matplotlib.pyplot as plt

    for name, frame, columns in [
        ("rmsd", rmsd, ["rmsd", "floor"]),
        ("miss", miss, ["t", "miss_rate", "miss_rate_noise", "n_high"]),
    ]:
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise VrlibError(f"plot_sweep: {name} lacks the columns {missing}")
    if len(labels) != len(rmsd):
        raise VrlibError(f"plot_sweep: {len(labels)} labels for {len(rmsd)} settings")
    paper = paper_values()
    rmsd_range = paper[paper.quantity == "rmsd"].iloc[0]
    # the range the paper states for every setting (its other miss-rate statements bound one side only)
    miss_range = paper[(paper.quantity == "miss_rate") & paper.t.isna() & paper.low.notna() & paper.high.notna()].iloc[
        0
    ]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 4.8), layout="constrained")
    x = np.arange(len(rmsd))
    if {"rmsd_low", "rmsd_high"} <= set(rmsd.columns):
        ax1.errorbar(x, rmsd.rmsd, yerr=[rmsd.rmsd - rmsd.rmsd_low, rmsd.rmsd_high - rmsd.rmsd], marker="o", capsize=3,
                     label="traditional vs model-seeded (95 % interval)")  # fmt: skip
    else:  # tables written before the intervals were computed
        ax1.plot(x, rmsd.rmsd, marker="o", label="traditional vs model-seeded")
    ax1.plot(x, rmsd.floor, marker="x", ls="--", label="noise floor")
    ax1.axhspan(rmsd_range["low"], rmsd_range["high"], color="0.85", zorder=0,
                label=f"paper's RMSD range {rmsd_range['low']:g}–{rmsd_range['high']:g}")  # fmt: skip
    ax1.set(xticks=x, xticklabels=labels, xlabel=xlabel, ylabel="RMSD of the risk (AUC)")
    ax1.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2))  # below: the points stay visible
    ax2.axhspan(miss_range["low"], miss_range["high"], color="0.85", zorder=0,
                label=f"paper's miss rates {miss_range['low']:g}–{miss_range['high']:g}")  # fmt: skip
    for i, t in enumerate(THRESHOLDS):
        m = miss[np.isclose(miss.t, t)]
        if len(m) != len(x):
            raise VrlibError(f"plot_sweep: {len(m)} miss rates at t = {t} for {len(x)} settings")
        n = m.n_high.to_numpy()
        rate = m.miss_rate.to_numpy(float)
        color = f"C{i}"
        ax2.plot(x, rate, color=color, label=f"t = {t}")
        solid = n > few
        ax2.plot(x[solid], rate[solid], "o", color=color, gid="miss-rate")
        hollow = (n >= 1) & (n <= few)
        ax2.plot(x[hollow], rate[hollow], "o", mfc="white", mec=color, color=color, gid="miss-rate-few")
        for xi, yi, ni in zip(x[hollow], rate[hollow], n[hollow]):
            # above a point in the lower half, below one in the upper half: the count stays inside the axes
            dy = 4 + 8 * (i % 2) if yi < 0.5 else -(9 + 8 * (i % 2))
            ax2.annotate(f"n={ni}", (xi, yi), xytext=(4, dy), textcoords="offset points", fontsize=6, color=color)
        ax2.plot(x, m.miss_rate_noise.to_numpy(float), marker="x", ls="--", color=color)
    ax2.plot([], [], "o", mfc="white", mec="0.3", ls="", label=f"from 1–{few} high-risk records (n beside)")
    ax2.set(xticks=x, xticklabels=labels, xlabel=xlabel, ylabel="miss rate (dashed: noise alone)", ylim=(-0.02, 1.02))
    ax2.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3)
    return fig


__all__ = ["FEW_RECORDS", "plot_sweep"]
