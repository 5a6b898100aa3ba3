"""TableGAN-MCA Fig. 3 drawn from its table, with the paper's two shares (96 %, 91 %) beside ours.

Kept apart from :mod:`vrlib.experiments.mca`, whose source is part of the cache key of the
attack (through ``_attack_task``): editing a figure must not throw cached attacks away.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.errors import VrlibError
from vrlib.experiments.mca import PAPER


def fig3_shares(histogram: pd.DataFrame) -> pd.DataFrame:
    """Fig. 3's two shares per release, from its histogram (:func:`frequency_histogram` plus ``generator``).

    ``members_among_freq_gt3``: members among the released records seen more than three times
    (the paper: about 96 %); ``nonmembers_among_unique``: non-members among those seen once
    (the paper: about 91 %).  Both equal :func:`summary`'s columns of the same names.
    """
    rows = []
    for generator, h in histogram.groupby("generator", sort=False):
        many, once = h[h.frequency > 3], h[h.frequency == 1]
        n_many, n_once = (
            many[["members", "non_members"]].to_numpy().sum(),
            once[["members", "non_members"]].to_numpy().sum(),
        )
        rows.append({
            "generator": generator,
            "members_among_freq_gt3": many.members.sum() / n_many if n_many else np.nan,
            "nonmembers_among_unique": once.non_members.sum() / n_once if n_once else np.nan,
        })  # fmt: skip
    return pd.DataFrame(rows)


def plot_fig3(histogram: pd.DataFrame, cols: int = 4, max_frequency: int = 30):
    """Fig. 3: members and non-members by their frequency in each release (log counts), the paper's shares beside ours.

    The log axis starts below 1, so a frequency held by a single record still shows its bar;
    each panel prints our two shares of :func:`fig3_shares` with the paper's (96 %, 91 %).

    Parameters
    ----------
    histogram : DataFrame
        ``frequency, members, non_members, generator`` (notebook 07's ``mca_fig3`` table).
    cols : int
        Panels per row.
    max_frequency : int
        Frequencies above it are left out of the axes (the shares count them).
    """
    import matplotlib.pyplot as plt

    missing = [c for c in ("frequency", "members", "non_members", "generator") if c not in histogram.columns]
    if missing:
        raise VrlibError(f"plot_fig3: the histogram lacks the columns {missing} (see mca.frequency_histogram)")
    releases = list(dict.fromkeys(histogram.generator))
    shares = fig3_shares(histogram).set_index("generator")
    rows = -(-len(releases) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.9 * rows), squeeze=False, layout="constrained")
    pct = lambda v: "–" if pd.isna(v) else f"{100 * v:.0f} %"
    for ax, release in zip(axes.flat, releases):
        h = histogram[histogram.generator == release]
        ax.bar(h.frequency - 0.2, h.members, 0.4, label="members")
        ax.bar(h.frequency + 0.2, h.non_members, 0.4, label="non-members")
        top = max(int(h[["members", "non_members"]].to_numpy().max()), 1)
        ax.set(yscale="log", title=release, xlabel="frequency #x in the release")
        ax.set_ylim(0.5, top * 30)  # below 1: a bar of one record shows; above: room for the shares
        ax.set_xlim(0, min(h.frequency.max(), max_frequency) + 1)
        s = shares.loc[release]
        ax.text(0.98, 0.97,
                f"members among #x > 3: {pct(s.members_among_freq_gt3)} (paper {pct(PAPER['members_among_freq_gt3'])})\n"
                f"non-members among #x = 1: {pct(s.nonmembers_among_unique)} (paper {pct(PAPER['nonmembers_among_unique'])})",
                transform=ax.transAxes, ha="right", va="top", fontsize=6.5, gid="paper-shares")  # fmt: skip
    for ax in axes.flat[len(releases) :]:
        ax.axis("off")
    axes.flat[0].set_ylabel("released records (log)")
    handles, names = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncol=2, fontsize=8)  # outside: it hides no bar
    fig.suptitle(
        f"Fig. 3: members vs non-members by frequency in the release (frequencies above {max_frequency} not shown)\n"
        f"paper (Adult, its generator not named): {pct(PAPER['members_among_freq_gt3'])} of records with #x > 3 are "
        f"members, {pct(PAPER['nonmembers_among_unique'])} with #x = 1 are not"
    )
    return fig


__all__ = ["fig3_shares", "plot_fig3"]
