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


def plot_precision_recall(curves: pd.DataFrame, collisions: pd.DataFrame, cols: int = 4):
    """Precision–recall of attack model 1 per release, the authors' 0.81 marked on WGAN-GP's panel.

    Each panel draws the attack's score (solid) and the frequency alone (dashed), our default
    threshold (mean + 2·std of the scores) as a dot, and the share of members among the released
    records (grey: ``collision_rate``, the precision of flagging every record).

    Parameters
    ----------
    curves : DataFrame
        ``threshold, precision, recall, generator, scored_by`` (notebook 07's ``mca_precision_recall``
        table; ``scored_by`` is ``score`` or ``frequency``).
    collisions : DataFrame
        ``generator, precision, recall`` at the default threshold and ``collision_rate`` (notebook
        07's ``mca_collisions``).
    cols : int
        Panels per row.
    """
    import matplotlib.pyplot as plt

    need = {"curves": (curves, ("precision", "recall", "generator", "scored_by")),
            "collisions": (collisions, ("generator", "precision", "recall"))}  # fmt: skip
    for what, (frame, columns) in need.items():
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise VrlibError(f"plot_precision_recall: {what} lacks the columns {missing}")
    releases = list(dict.fromkeys(curves.generator))
    if not releases:
        raise VrlibError("plot_precision_recall: no curve to draw (no release had a collision)")
    rows = -(-len(releases) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.8 * rows), squeeze=False, sharey=True)
    at_default = collisions.set_index("generator")
    for ax, generator in zip(axes.flat, releases):
        mine = curves[curves.generator == generator]
        for scored_by, style in [("score", "-"), ("frequency", "--")]:
            pr = mine[mine.scored_by == scored_by].sort_values("recall")
            ax.plot(pr.recall, pr.precision, style, label="attack" if scored_by == "score" else "frequency")
        if generator in at_default.index:
            row = at_default.loc[generator]
            ax.plot(row.recall, row.precision, "o", color="k", ms=4, label="default threshold")
            if "collision_rate" in row.index:  # members among the released records: flagging all of them
                ax.axhline(row.collision_rate, color="grey", lw=0.8)
        if generator == "WGAN-GP":  # the only release the authors report a precision for (their notebook)
            ax.axhline(PAPER["wgan_gp_precision"], color="C3", ls=":", lw=1.2,
                       label=f"authors' notebook: {PAPER['wgan_gp_precision']:.2f} at their threshold")  # fmt: skip
        ax.set(title=generator, xlabel="recall", ylim=(0, 1.02))
    for ax in axes.flat[len(releases) :]:
        ax.axis("off")
    axes.flat[0].set_ylabel("precision")
    for ax in axes.flat[: len(releases)]:
        if ax is axes.flat[0] or any("authors" in t for t in ax.get_legend_handles_labels()[1]):
            ax.legend(fontsize=7)
    fig.suptitle("Precision–recall of TableGAN-MCA (attack model 1)")
    fig.tight_layout()
    return fig


def thin_curves(curves: pd.DataFrame, points: int = 400) -> pd.DataFrame:
    """At most ``points`` rows of each (generator, scored_by) curve, evenly spread, both ends kept.

    The exported table stays small, and :func:`plot_precision_recall` draws every curve from it
    (thinning the concatenated table instead dropped whole short curves, the frequency's).
    """
    if points < 2:
        raise VrlibError(f"thin_curves: points must be at least 2, got {points}")
    keep = []
    for _, curve in curves.groupby(["generator", "scored_by"], sort=False):
        at = np.unique(np.linspace(0, len(curve) - 1, min(points, len(curve))).round().astype(int))
        keep.append(curve.iloc[at])
    return pd.concat(keep, ignore_index=True) if keep else curves.iloc[:0]
