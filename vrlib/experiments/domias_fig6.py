"""DOMIAS Fig. 6 drawn as the paper draws it: the additive-noise curve and one point per generator.

The x axis is the synthetic data's distance to a hold-out set (lower: better quality), the y
axis the attack's AUC (lower: more private).  The additive-noise baseline is a curve through
its noise levels, each labelled with its level; ADS-GAN is a curve through its λ values,
labelled likewise; every other generator is a point with its standard deviation over seeds.
A generator of the paper that the table lacks is named in a note under the legend, and
generators the paper does not have are marked "(ours)".  Labels are placed so that no two
overlap (:func:`place_labels`).
"""

from __future__ import annotations

import pandas as pd

# The paper's generators (vrlib.generators names) and how the figure names them.
PAPER_NAMES = {
    "gan": "GAN",
    "wgan_gp": "WGAN-GP",
    "ctgan": "CTGAN",
    "tvae": "TVAE",
    "nflow": "NFlow",
    "pategan": "PATE-GAN",
    "privbayes": "PrivBayes",
    "adsgan": "ADS-GAN",
}
# x values spread wider than this ratio (largest / smallest, all positive) are drawn on a log axis
LOG_X_ABOVE = 20
_MARKERS = {"gan": "o", "wgan_gp": "v", "ctgan": "^", "tvae": "s", "nflow": "D", "pategan": "P", "privbayes": "X"}


def _text_box(ann, renderer):
    """The box of an annotation's text alone (an Annotation's own extent includes its line to the point)."""
    from matplotlib.text import Text

    ann.update_positions(renderer)  # where the offset puts the text (otherwise done only when drawn)
    return Text.get_window_extent(ann, renderer)


def _overlaps(box, placed, pad: float) -> bool:
    return any(
        box.x0 < b.x1 + pad and b.x0 < box.x1 + pad and box.y0 < b.y1 + pad and b.y0 < box.y1 + pad for b in placed
    )


def place_labels(ax, points, texts, fontsize: float = 7, pad: float = 1.0, avoid=()) -> list:
    """Annotate ``points`` (data coordinates) with ``texts`` so that no two labels' boxes intersect.

    Each label tries offsets on rings of growing radius around its point (right, above,
    left, below, then the diagonals) and takes the first whose box (in display units,
    ``pad`` pixels apart) meets no label placed before it nor a box of ``avoid``; a label
    moved off its first ring gets a thin line to its point.

    Returns
    -------
    list of matplotlib.text.Annotation
    """
    fig = ax.figure
    fig.canvas.draw()  # a renderer, and the axes' final limits
    renderer = fig.canvas.get_renderer()
    placed = list(avoid)
    out = []
    directions = [(1, 0.3), (0.2, 1), (-1, 0.3), (0.2, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)]
    for (x, y), text in zip(points, texts):
        for ring in range(1, 60):
            done = False
            for dx, dy in directions:
                r = 4 * ring
                ann = ax.annotate(
                    text,
                    (x, y),
                    xytext=(dx * r, dy * r),
                    textcoords="offset points",
                    fontsize=fontsize,
                    ha="left" if dx > 0 else ("right" if dx < 0 else "center"),
                    va="bottom" if dy > 0 else ("top" if dy < 0 else "center"),
                    arrowprops=dict(arrowstyle="-", lw=0.4, color="0.5") if ring > 1 else None,
                )
                box = _text_box(ann, renderer)
                if not _overlaps(box, placed, pad):
                    placed.append(box)
                    out.append(ann)
                    done = True
                    break
                ann.remove()
            if done:
                break
        else:  # 60 rings without room: give up visibly rather than overlap
            raise RuntimeError(f"no room for the label {text!r} within 240 points of its point")
    return out


def plot_fig6(table: pd.DataFrame, attack: str, ax=None, quality: str = "wd_sliced", noise_symbol: str = "σ²"):
    """Draw Fig. 6 for one attack from ``domias_fig6``'s table.

    Parameters
    ----------
    table : DataFrame
        One row per generator setting and attack, with ``family``, ``generator``,
        ``privacy_param``, ``attack``, ``auc_mean``, ``auc_std`` and the ``quality`` column.
    attack : str
        The attack whose AUC is drawn.
    ax : matplotlib Axes, optional
    quality : str
        The x column.
    noise_symbol : str
        How the noise levels are labelled (``σ²`` when they are variances).

    Returns
    -------
    (Axes, list of Annotation)
        The axes and every level label placed on it.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 5))
    main = table[table.attack == attack]
    points, texts = [], []
    noise = main[main.family == "noise"].sort_values(quality)
    if len(noise):
        ax.plot(noise[quality], noise.auc_mean, "-o", color="0.45", ms=3, lw=1, label="additive noise", zorder=2)
        points += list(zip(noise[quality], noise.auc_mean))
        texts += [f"{noise_symbol}={v:g}" for v in noise.privacy_param]
    ads = main[main.family == "adsgan"].sort_values("privacy_param")
    if len(ads):
        ax.errorbar(ads[quality], ads.auc_mean, yerr=ads.auc_std, fmt="-*", ms=7, lw=1, capsize=2, color="tab:purple",
                    label="ADS-GAN (λ)", zorder=3)  # fmt: skip
        points += list(zip(ads[quality], ads.auc_mean))
        texts += [f"λ={v:g}" for v in ads.privacy_param]
    for _, r in main[~main.family.isin(["noise", "adsgan"])].iterrows():
        ours = "" if r.family in PAPER_NAMES else " (ours)"
        ax.errorbar(r[quality], r.auc_mean, yerr=r.auc_std, fmt=_MARKERS.get(r.family, "h"), ms=6, capsize=2,
                    label=f"{r.generator}{ours}", zorder=4)  # fmt: skip
    ax.axhline(0.5, color="0.7", lw=0.6, ls=":", zorder=1)
    missing = [name for g, name in PAPER_NAMES.items() if g not in set(main.family)]
    legend = ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    if missing:
        ax.text(1.01, 0.0, "paper's, not in this run:\n" + ", ".join(missing), transform=ax.transAxes, fontsize=7,
                va="bottom", color="tab:red")  # fmt: skip
    x = main[quality].dropna()
    log_x = len(x) and (x > 0).all() and x.max() / x.min() > LOG_X_ABOVE
    if log_x:  # one far point (PATE-GAN's) would squeeze every other into a sliver of a linear axis
        ax.set_xscale("log")
    ax.set(xlabel=f"{quality}: distance to a hold-out set (lower = better quality{', log scale' if log_x else ''})",
           ylabel=f"{attack} AUC")  # fmt: skip
    ax.figure.tight_layout()
    ax.figure.canvas.draw()
    avoid = [legend.get_window_extent(ax.figure.canvas.get_renderer())]
    labels = place_labels(ax, points, texts, avoid=avoid)
    return ax, labels


def label_boxes_intersect(labels) -> bool:
    """Whether any two of the labels' boxes (display units) intersect."""
    if not labels:
        return False
    renderer = labels[0].figure.canvas.get_renderer()
    boxes = [_text_box(a, renderer) for a in labels]
    return any(_overlaps(b, boxes[:i], 0.0) for i, b in enumerate(boxes))


__all__ = ["PAPER_NAMES", "place_labels", "plot_fig6", "label_boxes_intersect"]
