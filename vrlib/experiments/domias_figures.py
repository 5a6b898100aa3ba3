"""DOMIAS Fig. 3b and App. D (Fig. 13) drawn from their tables, with the paper's values marked.

Each function takes the table the notebook writes (``figures/<profile>/tables/domias_*.csv``)
and returns a matplotlib figure, so a committed figure can be drawn again from its committed
table (``scripts/redraw_figures.py``).  The colours and line styles are those of notebook 05:
one colour per attack in every figure.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.errors import VrlibError

ATTACK_LABELS = {
    "domias_kde": "DOMIAS (KDE)",
    "domias_flow": "DOMIAS (BNAF)",
    "eq1_kde": "Eq. 1 (KDE)",
    "eq1_flow": "Eq. 1 (BNAF)",
    "logan_0": "LOGAN 0",
    "logan_d1": "LOGAN D1",
    "logan_d1_published": "LOGAN D1 (as published)",
    "mc": "MC",
    "gan_leaks": "GAN-Leaks 0",
    "gan_leaks_cal": "GAN-Leaks CAL",
}
_STYLE = {
    "domias_kde": dict(lw=2.2),
    "domias_flow": dict(lw=2.2),
    "eq1_kde": dict(ls="--"),
    "eq1_flow": dict(ls="--"),
    "logan_d1_published": dict(ls=":"),
}

# App. D, Fig. 13's caption (heart-failure data, TVAE, 8 runs): top-20 % precision, mean and std.
# The paper's DOMIAS is the BNAF one; its "LOGAN D0" is LOGAN 0.
PAPER_FIG13_Q = 0.2
PAPER_FIG13 = {
    "domias_flow": (0.862, 0.055),
    "logan_0": (0.510, 0.039),
    "logan_d1": (0.726, 0.053),
    "mc": (0.742, 0.030),
    "gan_leaks": (0.749, 0.031),
    "gan_leaks_cal": (0.570, 0.041),
}


def attack_colors() -> dict:
    """One colour per attack (seaborn's colour-blind palette in :data:`ATTACK_LABELS`' order), as notebook 05."""
    import seaborn as sns

    return dict(zip(ATTACK_LABELS, sns.color_palette("colorblind", len(ATTACK_LABELS))))


def _check(table: pd.DataFrame, columns: list[str], name: str) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise VrlibError(f"{name} needs the columns {missing} (the notebook's tables/{name}.csv has them)")
    unknown = sorted(set(table.attack) - set(ATTACK_LABELS))
    if unknown:
        raise VrlibError(f"{name}: unknown attacks {unknown}; known: {list(ATTACK_LABELS)}")


def band(ax, table: pd.DataFrame, x: str, attack: str, metric: str = "auc", colors: dict | None = None):
    """Mean line with a ± std band for one attack; returns the line."""
    colors = colors or attack_colors()
    sub = table[table.attack == attack].sort_values(x)
    mean, std = sub[f"{metric}_mean"], sub[f"{metric}_std"]
    (line,) = ax.plot(
        sub[x], mean, marker="o", ms=3, label=ATTACK_LABELS[attack], color=colors[attack], **_STYLE.get(attack, {})
    )
    ax.fill_between(sub[x], mean - std, mean + std, color=line.get_color(), alpha=0.12)
    return line


def _legend_outside(ax) -> None:
    # beside the axes: inside, the legend hid curves that run along 0.5 (LOGAN D1 as published)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


def plot_fig3b(table: pd.DataFrame, n_mem: int | None = None):
    """Fig. 3b: AUC against TVAE's training epochs, one band per attack, the legend beside the axes.

    Parameters
    ----------
    table : DataFrame
        ``epochs, attack, auc_mean, auc_std`` (notebook 05's ``domias_fig3b`` table).
    n_mem : int, optional
        ``|D_mem|``, for the title.
    """
    import matplotlib.pyplot as plt

    _check(table, ["epochs", "attack", "auc_mean", "auc_std"], "domias_fig3b")
    colors = attack_colors()
    fig, ax = plt.subplots(figsize=(8, 3.8), layout="constrained")
    for attack in dict.fromkeys(table.attack):
        band(ax, table, "epochs", attack, colors=colors)
    size = f" ($|D_{{mem}}|$ = {n_mem})" if n_mem is not None else ""
    ax.set(xlabel="TVAE training epochs", ylabel="AUC", title=f"Fig. 3b: AUC vs training epochs{size}")
    ax.axhline(0.5, color="grey", lw=0.8, label="chance (0.5)")
    _legend_outside(ax)
    return fig


def plot_fig13(table: pd.DataFrame):
    """App. D (Fig. 13): top-q precision against q, with the paper's values at q = 0.2 marked.

    The paper's values (:data:`PAPER_FIG13`, from its caption, on the heart-failure data we do
    not have) are drawn as diamonds with their std, in the colour of the attack they belong to,
    at q = 0.2.

    Parameters
    ----------
    table : DataFrame
        ``q, attack, precision_mean, precision_std`` (notebook 05's ``domias_fig13`` table).
    """
    import matplotlib.pyplot as plt

    _check(table, ["q", "attack", "precision_mean", "precision_std"], "domias_fig13")
    colors = attack_colors()
    fig, ax = plt.subplots(figsize=(8, 3.8), layout="constrained")
    for attack in dict.fromkeys(table.attack):
        band(ax, table, "q", attack, metric="precision", colors=colors)
    ax.axhline(0.5, color="grey", lw=0.8, label="chance (0.5)")
    shown = [a for a in PAPER_FIG13 if a in set(table.attack)] or list(PAPER_FIG13)
    # side by side around q = 0.2 (a log axis: multiplicative offsets), so no diamond hides another
    offsets = np.exp(np.linspace(-0.08, 0.08, len(shown)))
    for k, attack in enumerate(shown):
        mean, std = PAPER_FIG13[attack]
        ax.errorbar(
            PAPER_FIG13_Q * offsets[k],
            mean,
            yerr=std,
            fmt="D",
            ms=6,
            mfc=colors[attack],
            mec="k",
            ecolor=colors[attack],
            capsize=2,
            zorder=5,
            label="paper (heart failure), q = 0.2" if k == 0 else None,
        )
    ax.set(
        xscale="log",
        xlabel="q (fraction of records attacked, highest scores first)",
        ylabel="precision",
        title="App. D: top-q precision (ours: California; ◆ paper's values at q = 0.2, in the attack's colour)",
    )
    ax.title.set_fontsize(9)
    _legend_outside(ax)
    return fig


__all__ = ["ATTACK_LABELS", "PAPER_FIG13", "PAPER_FIG13_Q", "attack_colors", "band", "plot_fig13", "plot_fig3b"]
