"""DOMIAS Fig. 6 with the noise curve's range enlarged (vrlib.experiments.fig6_figure)."""

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from vrlib.experiments import fig6_figure  # noqa: E402
from vrlib.experiments.domias_fig6 import label_boxes_intersect  # noqa: E402


def _table():
    """Four noise levels at W1 0.3–0.9; CTGAN, GAN and two ADS-GAN λ within that range; TVAE and PATE-GAN far out."""
    rows = [dict(family="noise", generator=f"noise σ²={v}", privacy_param=v, wd_sliced=w, auc_mean=a)
            for v, w, a in [(0.7, 0.3, 0.52), (1.5, 0.5, 0.51), (2.5, 0.7, 0.505), (3.9, 0.9, 0.50)]]  # fmt: skip
    rows += [
        dict(family="tvae", generator="TVAE", privacy_param=float("nan"), wd_sliced=0.05, auc_mean=0.55),
        dict(family="ctgan", generator="CTGAN", privacy_param=float("nan"), wd_sliced=0.4, auc_mean=0.50),
        dict(family="gan", generator="GAN", privacy_param=float("nan"), wd_sliced=0.8, auc_mean=0.49),
        dict(family="pategan", generator="PATE-GAN ε=1", privacy_param=1.0, wd_sliced=9.0, auc_mean=0.50),
        dict(family="adsgan", generator="ADS-GAN λ=0.2", privacy_param=0.2, wd_sliced=0.35, auc_mean=0.495),
        dict(family="adsgan", generator="ADS-GAN λ=1.5", privacy_param=1.5, wd_sliced=0.25, auc_mean=0.50),
    ]
    df = pd.DataFrame(rows).assign(attack="domias_flow", auc_std=0.01, n_seeds=4)
    return df


def _colours(ax):
    return {c.get_label(): matplotlib.colors.to_hex(c.lines[0].get_color()) for c in ax.containers}


def test_the_window_is_the_noise_curves_range_widened():
    assert fig6_figure.window(_table(), "domias_flow") == pytest.approx((0.3 / 1.6, 0.9 * 1.1))
    assert fig6_figure.window(_table(), "domias_kde") is None  # no curve for that attack


def test_the_enlarged_panel_keeps_each_generators_colour_and_names_those_left_out():
    fig, labels, zoom_labels = fig6_figure.draw(_table(), "domias_flow", ylabel="AUC", title="Fig. 6")
    top, zoom = fig.axes
    assert top.get_title() == "Fig. 6" and zoom.get_legend() is None and top.get_legend() is not None
    assert zoom.get_title().endswith("outside it: TVAE, PATE-GAN ε=1")
    assert _colours(zoom) == _colours(top)  # same colour per generator, though TVAE and PATE-GAN have no value below
    lo, hi = zoom.get_xlim()
    assert lo > 0.05 and hi < 9.0  # TVAE and PATE-GAN are outside the enlarged panel's axis
    assert len(labels) == 6 and len(zoom_labels) == 6  # 4 noise levels, 2 λ in each
    assert not label_boxes_intersect(labels) and not label_boxes_intersect(zoom_labels)


def test_without_a_noise_curve_it_is_one_panel():
    df = _table()
    fig, labels, zoom_labels = fig6_figure.draw(df[df.family != "noise"], "domias_flow", title="t")
    assert len(fig.axes) == 1 and zoom_labels == []


def _notes(ax):
    return [t.get_text() for t in ax.texts if t.get_text().startswith(fig6_figure.MISSING_NOTE)]


def test_a_curve_wholly_outside_the_window_is_not_called_missing_from_the_run():
    df = _table()
    df.loc[df.family == "adsgan", "wd_sliced"] = [3.0, 4.0]  # both λ outside the enlarged range
    fig, _, zoom_labels = fig6_figure.draw(df, "domias_flow", title="t")
    top, zoom = fig.axes
    assert _notes(zoom) == [] and len(zoom_labels) == 4  # the noise levels' labels only
    assert "ADS-GAN" not in " ".join(_notes(top)) and "NFlow" in " ".join(_notes(top))  # NFlow is the one lacking
    assert "ADS-GAN λ=0.2, ADS-GAN λ=1.5" in zoom.get_title()
