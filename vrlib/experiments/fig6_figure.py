"""DOMIAS Fig. 6 as notebook 05 saves it: the whole figure, and below it the additive-noise curve's range enlarged.

At the paper's sizes most generators and the twelve noise levels lie in a thin band near AUC 0.5,
while NFlow, TVAE and PATE-GAN stretch both axes, so the band's labels crowd and its markers hide one
another. :func:`draw` draws the figure twice with
:func:`vrlib.experiments.domias_fig6.plot_fig6`: on top everything, below the points whose quality
lies within the noise curve's range (:func:`window`), on a scale of their own. A point outside the
window keeps its place in the drawing order with no value, so that each generator has the same
colour and marker in both panels and the top legend serves both; the points left out are named.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["window", "draw"]

MISSING_NOTE = "paper's, not in this run"  # how plot_fig6's note on the paper's generators a table lacks begins
# the enlarged panel spans the noise curve's W1 from its least noise / LEFT to its most × RIGHT
LEFT, RIGHT = 1.6, 1.1


def window(table: pd.DataFrame, attack: str, quality: str = "wd_sliced") -> tuple[float, float] | None:
    """The W1 range of the enlarged panel: the additive-noise curve's, widened (None without a noise curve)."""
    noise = table[(table.attack == attack) & (table.family == "noise")][quality].dropna()
    if len(noise) < 2:
        return None
    return float(noise.min() / LEFT), float(noise.max() * RIGHT)


def draw(table: pd.DataFrame, attack: str, noise_symbol: str = "σ²", ylabel: str | None = None, title: str = ""):
    """Fig. 6 for ``attack``: the whole table on top, the noise curve's range enlarged below.

    Parameters
    ----------
    table : DataFrame
        As :func:`~vrlib.experiments.domias_fig6.plot_fig6` reads it.
    attack : str
    noise_symbol : str
    ylabel, title : str
        The y label of both panels and the figure's title.

    Returns
    -------
    (Figure, list of Annotation, list of Annotation)
        The figure and the labels placed on each panel.
    """
    import matplotlib.pyplot as plt

    from vrlib.experiments.domias_fig6 import plot_fig6

    span = window(table, attack)
    if span is None:  # no curve to enlarge around: the one panel
        fig, ax = plt.subplots(figsize=(10, 6.5))
        ax, labels = plot_fig6(table, attack, ax=ax, noise_symbol=noise_symbol)
        ax.set(title=title, **({"ylabel": ylabel} if ylabel else {}))
        return fig, labels, []
    fig, (ax, zoom) = plt.subplots(2, 1, figsize=(10, 12), height_ratios=[1, 1.2])
    lo, hi = span
    outside = ~table.wd_sliced.between(lo, hi)
    left_out = list(dict.fromkeys(table.generator[outside & (table.attack == attack)]))
    # titles first: plot_fig6 lays the figure out (tight_layout) before it places its labels
    ax.set_title(title)
    zoom.set_title(
        f"enlarged: W1 from {lo:.2g} to {hi:.2g}, the additive-noise curve's range"
        + (f"; outside it: {', '.join(map(str, left_out))}" if left_out else ""),
        fontsize=9,
    )
    ax, labels = plot_fig6(table, attack, ax=ax, noise_symbol=noise_symbol)
    curves = table.family.isin(["noise", "adsgan"])
    # a point outside keeps its row (its colour), without a value; a curve's point outside is dropped
    inner = table[~(outside & curves)].copy()
    inner.loc[outside & ~curves, ["wd_sliced", "auc_mean", "auc_std"]] = np.nan
    zoom, zoom_labels = plot_fig6(inner, attack, ax=zoom, noise_symbol=noise_symbol)
    zoom.get_legend().remove()  # the same generators, colours and markers as the top panel's legend
    # plot_fig6 names the paper's generators its table lacks; below, a curve left wholly outside would be named
    # as missing from the run: the top panel names those the run lacks
    for text in list(zoom.texts):
        if text.get_text().startswith(MISSING_NOTE):
            text.remove()
    if ylabel:
        ax.set_ylabel(ylabel)
        zoom.set_ylabel(ylabel)
    fig.canvas.draw()
    return fig, labels, zoom_labels
