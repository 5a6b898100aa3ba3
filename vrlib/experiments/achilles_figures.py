"""achilles figures drawn from their tables: panel titles that say when Ω is a subset, and Fig. 4.

Kept apart from :mod:`vrlib.experiments.achilles`, whose source is part of the cache keys of
the attacks (through ``make_attack``): editing a figure must not throw cached games away.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from vrlib.errors import VrlibError
from vrlib.experiments.achilles import PAPER_OMEGA
from vrlib.selection import METHODS

DATASET_NAMES = {"adult": "Adult", "census": "UK Census"}


def omega_is_subset(omega: str) -> bool:
    """Whether an :func:`omega_label` describes less than the paper's Ω."""
    return not str(omega).startswith("all ")


def panel_title(dataset: str, generator: str | None = None, omega: str | None = None) -> str:
    """A panel's title: the dataset (and generator), and on a second line the size of Ω where it is a subset.

    ``omega`` is an :func:`omega_label` (the ``omega`` column of the tables); without it the
    title names only the dataset.
    """
    if dataset not in PAPER_OMEGA:
        raise VrlibError(f"achilles experiments use 'adult' or 'census', not {dataset!r}")
    title = DATASET_NAMES[dataset] + (f", {generator}" if generator else "")
    if omega is not None and omega_is_subset(omega):
        n = re.search(r"\d[\d,]*", omega)
        # short: the panels of Figs. 1 and 2 are 3.2 inches apart, and a longer line ran into the next panel's title
        title += f"\nΩ: subset, {n.group(0) if n else '?'} of {PAPER_OMEGA[dataset]:,}"
    return title


def plot_fig4(table: pd.DataFrame, epsilons=None):
    """Fig. 4: AUC of each method against PrivBayes' ε, one panel per dataset (Ω's subset named in its title).

    Parameters
    ----------
    table : DataFrame
        ``dataset, epsilon, method, auc_mean, auc_std`` and, where written, ``omega``
        (notebook 04's ``achilles_fig4`` table).
    epsilons : list of float, optional
        The ε values in the order drawn (default: the table's, ∞ last).
    """

    import matplotlib.pyplot as plt

    from vrlib.report import METHOD_LABELS

    missing = [c for c in ("dataset", "epsilon", "method", "auc_mean", "auc_std") if c not in table.columns]
    if missing:
        raise VrlibError(f"plot_fig4: the table lacks the columns {missing}")
    epsilons = sorted(set(table.epsilon)) if epsilons is None else list(epsilons)
    datasets = list(dict.fromkeys(table.dataset))
    fig, axes = plt.subplots(1, len(datasets), figsize=(5 * len(datasets), 3.7), sharey=True, squeeze=False)
    positions = {eps: i for i, eps in enumerate(epsilons)}
    for ax, d in zip(axes[0], datasets):
        for j, method in enumerate(METHODS):
            sub = table[(table.dataset == d) & (table.method == method)]
            x = [positions[e] + (j - 1.5) * 0.08 for e in sub.epsilon]
            ax.errorbar(x, sub.auc_mean, yerr=sub.auc_std, marker="o", capsize=2, label=METHOD_LABELS[method])
        ax.set_xticks(range(len(epsilons)), ["∞ (BayNet)" if math.isinf(e) else f"{e:g}" for e in epsilons])
        ax.set_xlabel("ε")
        omega = table.loc[table.dataset == d, "omega"].iloc[0] if "omega" in table.columns else None
        ax.set_title(panel_title(d, omega=omega))
        ax.axhline(0.5, color="0.5", lw=0.8, ls=":")
    axes[0][0].set_ylabel("AUC of the query-based attack")
    axes[0][-1].legend(fontsize=8)
    fig.tight_layout()
    return fig


__all__ = ["DATASET_NAMES", "omega_is_subset", "panel_title", "plot_fig4"]
