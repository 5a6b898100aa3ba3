"""The figures drawn from tables: what they draw (legends clear of the data, paper values marked, few-record points
marked, Ω's subset named), checked on the drawn artists, on small tables made here."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

from vrlib.errors import VrlibError  # noqa: E402
from vrlib.experiments import achilles, achilles_figures, domias_figures, lost, lost_figures, mca, mca_figures  # noqa: E402
from vrlib.experiments.mca import PAPER as MCA_PAPER  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _box(artist, fig) -> Bbox:
    fig.canvas.draw()
    return artist.get_window_extent(fig.canvas.get_renderer())


def _overlap(a: Bbox, b: Bbox) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_overlap_helper_sees_a_legend_inside_the_axes():
    # the check the figure tests rely on says yes where a legend sits on the data
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="x")
    legend = ax.legend(loc="lower right")
    assert _overlap(_box(legend, fig), _box(ax.patch, fig))


# --------------------------------------------------------------------------- DOMIAS


def _curves(x_name, xs, metric="auc", low=None):
    rows = []
    for k, attack in enumerate(domias_figures.ATTACK_LABELS):
        for x in xs:
            mean = 0.5 if attack == "logan_d1_published" else 0.5 + 0.005 * k * np.log1p(x)
            rows.append({x_name: x, "attack": attack, f"{metric}_mean": mean, f"{metric}_std": 0.01, "n_seeds": 8})
    return pd.DataFrame(rows)


def test_fig3b_legend_hides_no_curve_and_names_every_attack():
    table = _curves("epochs", [100, 500, 1000, 2000, 3000])
    fig = domias_figures.plot_fig3b(table, n_mem=500)
    ax = fig.axes[0]
    legend = ax.get_legend()
    assert not _overlap(_box(legend, fig), _box(ax.patch, fig))
    texts = [t.get_text() for t in legend.get_texts()]
    assert "LOGAN D1 (as published)" in texts and "chance (0.5)" in texts
    assert set(domias_figures.ATTACK_LABELS.values()) <= set(texts)
    # the as-published curve along 0.5 is drawn, dotted, in its own colour
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == "LOGAN D1 (as published)"]
    assert np.allclose(line.get_ydata(), 0.5) and line.get_linestyle() == ":"
    assert "500" in ax.get_title()


def test_fig13_marks_the_papers_values_at_q_02_in_each_attacks_colour():
    table = _curves("q", [0.01, 0.1, 0.2, 0.5, 1.0], metric="precision")
    fig = domias_figures.plot_fig13(table)
    ax = fig.axes[0]
    colors = domias_figures.attack_colors()
    diamonds = [ln for ln in ax.get_lines() if ln.get_marker() == "D"]
    assert len(diamonds) == len(domias_figures.PAPER_FIG13)
    drawn = {}
    for ln in diamonds:
        (x,), (y,) = ln.get_xdata(), ln.get_ydata()
        assert x == pytest.approx(0.2, rel=0.1)
        drawn[tuple(np.round(to_rgba(ln.get_markerfacecolor()), 6))] = y
    for attack, (mean, _) in domias_figures.PAPER_FIG13.items():
        assert drawn[tuple(np.round(to_rgba(colors[attack]), 6))] == pytest.approx(mean)
    # the caption's values: DOMIAS 86.2 %, LOGAN 0 51.0 %, D1 72.6 %, MC 74.2 %, GAN-Leaks 74.9 %, CAL 57.0 %
    assert domias_figures.PAPER_FIG13["domias_flow"] == (0.862, 0.055)
    legend = ax.get_legend()
    assert any("paper" in t.get_text() for t in legend.get_texts())
    assert not _overlap(_box(legend, fig), _box(ax.patch, fig))


def test_domias_figures_refuse_a_table_without_their_columns():
    with pytest.raises(VrlibError, match="epochs"):
        domias_figures.plot_fig3b(pd.DataFrame({"attack": ["mc"], "auc_mean": [0.5], "auc_std": [0.0]}))
    with pytest.raises(VrlibError, match="unknown attacks"):
        domias_figures.plot_fig13(
            pd.DataFrame({"q": [0.1], "attack": ["x"], "precision_mean": [1], "precision_std": [0]})
        )


# --------------------------------------------------------------------------- lost


def _sweep(n_high):
    """Two settings; ``n_high[i][j]``: high-risk records of setting i at threshold j."""
    rmsd = pd.DataFrame(
        {"rmsd": [0.06, 0.05], "rmsd_low": [0.05, 0.04], "rmsd_high": [0.07, 0.06], "floor": [0.05] * 2}
    )
    rows = []
    for i, counts in enumerate(n_high):
        for t, n in zip(lost.THRESHOLDS, counts):
            rate = np.nan if n == 0 else 0.0 if n == 1 else 0.1 * (i + 1) + t / 10  # 0: a count by the axis
            rows.append({"setting": i, "t": t, "n_high": n, "miss_rate": rate, "miss_rate_noise": rate / 2})
    return rmsd, pd.DataFrame(rows)


def test_sweep_marks_miss_rates_from_one_to_three_records_and_the_papers_ranges():
    rmsd, miss = _sweep([[50, 12, 3, 0], [40, 4, 1, 2]])
    fig = lost_figures.plot_sweep(rmsd, miss, ["a", "b"], "setting")
    ax1, ax2 = fig.axes[:2]
    few = [ln for ln in ax2.get_lines() if ln.get_gid() == "miss-rate-few"]
    solid = [ln for ln in ax2.get_lines() if ln.get_gid() == "miss-rate"]
    hollow_points = {(x, round(y, 9)) for ln in few for x, y in zip(ln.get_xdata(), ln.get_ydata())}
    want = {(r.setting, round(r.miss_rate, 9)) for r in miss.itertuples() if 1 <= r.n_high <= 3}
    assert hollow_points == want and len(want) == 3
    assert all(to_rgba(ln.get_markerfacecolor()) == to_rgba("white") for ln in few if len(ln.get_xdata()))
    solid_points = {(x, round(y, 9)) for ln in solid for x, y in zip(ln.get_xdata(), ln.get_ydata())}
    assert solid_points == {(r.setting, round(r.miss_rate, 9)) for r in miss.itertuples() if r.n_high > 3}
    labels = sorted(t.get_text() for t in ax2.texts)
    assert labels == ["n=1", "n=2", "n=3"]
    inside = _box(ax2.patch, fig)
    for text in ax2.texts:  # each count inside the axes, clear of the tick labels
        box = _box(text, fig)
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1 + 30 and inside.y0 <= box.y0 and box.y1 <= inside.y1
    for ax, (low, high) in [(ax1, (0.04, 0.11)), (ax2, (0.73, 0.94))]:
        (band,) = [p for p in ax.patches if str(p.get_label()).startswith("paper's")]
        # axhspan: a rectangle in data units along y, the axes' width along x
        assert [band.get_y(), band.get_y() + band.get_height()] == pytest.approx([low, high])


def test_sweep_without_few_record_points_draws_none_hollow():
    rmsd, miss = _sweep([[50, 12, 9, 0], [40, 4, 0, 0]])
    fig = lost_figures.plot_sweep(rmsd, miss, ["a", "b"], "setting")
    assert not any(len(ln.get_xdata()) for ln in fig.axes[1].get_lines() if ln.get_gid() == "miss-rate-few")
    assert not fig.axes[1].texts


def test_sweep_refuses_mismatched_input():
    rmsd, miss = _sweep([[50, 12, 3, 0], [40, 4, 1, 2]])
    with pytest.raises(VrlibError, match="labels"):
        lost_figures.plot_sweep(rmsd, miss, ["a"], "setting")
    with pytest.raises(VrlibError, match="n_high"):
        lost_figures.plot_sweep(rmsd, miss.drop(columns="n_high"), ["a", "b"], "setting")
    with pytest.raises(VrlibError, match="floor"):
        lost_figures.plot_sweep(rmsd.drop(columns="floor"), miss, ["a", "b"], "setting")


def test_sweep_draws_error_bars_only_where_the_table_has_the_interval():
    rmsd, miss = _sweep([[50, 12, 3, 0], [40, 4, 1, 2]])
    with_interval = lost_figures.plot_sweep(rmsd, miss, ["a", "b"], "setting").axes[0]
    without = lost_figures.plot_sweep(rmsd.drop(columns=["rmsd_low", "rmsd_high"]), miss, ["a", "b"], "setting").axes[0]
    assert len(with_interval.containers) == 1 and not without.containers
    (line,) = [ln for ln in without.get_lines() if ln.get_label() == "traditional vs model-seeded"]
    assert list(line.get_ydata()) == list(rmsd.rmsd)


# --------------------------------------------------------------------------- TableGAN-MCA


def _records(seed=0):
    rng = np.random.default_rng(seed)
    frequency = rng.choice([1, 1, 1, 2, 3, 4, 5, 9, 40], size=400)
    member = rng.random(400) < np.where(frequency > 3, 0.9, 0.2)
    return pd.DataFrame({"frequency": frequency, "member": member})


def test_fig3_shares_equal_the_shares_counted_record_by_record():
    a, b = _records(0), _records(1)
    hist = pd.concat(
        [mca.frequency_histogram(a).assign(generator="A"), mca.frequency_histogram(b).assign(generator="B")]
    )
    shares = mca_figures.fig3_shares(hist).set_index("generator")
    for name, f in [("A", a), ("B", b)]:
        assert shares.loc[name, "members_among_freq_gt3"] == pytest.approx(f.member[f.frequency > 3].mean())
        assert shares.loc[name, "nonmembers_among_unique"] == pytest.approx((~f.member[f.frequency == 1]).mean())


def test_fig3_shows_bars_of_one_record_and_the_papers_shares():
    hist = pd.DataFrame(
        {"frequency": [1, 2, 3, 5, 7], "members": [3000, 800, 40, 2, 1], "non_members": [20000, 900, 3, 1, 0]}
    ).assign(generator="WGAN-GP")
    fig = mca_figures.plot_fig3(hist, cols=2)
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches if p.get_height() > 0]
    assert min(heights) == 1 and ax.get_ylim()[0] < 1  # the smallest bar rises above the axis' floor
    assert max(heights) < ax.get_ylim()[1]
    (text,) = [t for t in ax.texts if t.get_gid() == "paper-shares"]
    ours_gt3 = round(100 * (2 + 1) / (2 + 1 + 1 + 0))
    ours_unique = round(100 * 20000 / 23000)
    assert f"{ours_gt3} % (paper {100 * MCA_PAPER['members_among_freq_gt3']:.0f} %)" in text.get_text()
    assert f"{ours_unique} % (paper {100 * MCA_PAPER['nonmembers_among_unique']:.0f} %)" in text.get_text()
    (legend,) = fig.legends
    for panel in fig.axes:
        assert not _overlap(_box(legend, fig), _box(panel.patch, fig))


# --------------------------------------------------------------------------- achilles


def test_panel_titles_say_when_omega_is_a_subset():
    census = achilles_figures.panel_title("census", "BayNet", achilles.omega_label("census", 10_000))
    assert "subset" in census and "10,000" in census and "569,741" in census and census.startswith("UK Census, BayNet")
    first = achilles_figures.panel_title("census", None, achilles.omega_label("census", 10_000, "first50000"))
    assert "subset" in first and "10,000" in first
    adult = achilles_figures.panel_title("adult", "Synthpop", achilles.omega_label("adult", 45_222))
    assert adult == "Adult, Synthpop"
    assert achilles_figures.panel_title("census") == "UK Census"
    with pytest.raises(VrlibError):
        achilles_figures.panel_title("mnist")


def test_census_panel_titles_of_figs_1_and_2_do_not_run_into_each_other():
    # Notebooks 01 and 02 draw Figs. 1 and 2 as 4 panels 3.2 inches apart, in the project's style, with rotated method
    # names and the y label on the first: the two Census panels' titles, subset line included, keep a quarter of an
    # inch between them (the line "Ω subset: 10,000 of 569,741 records" left a tenth, and touched in the PNG).
    from vrlib import report

    report.use_style()
    omega = achilles.omega_label("census", 10_000)
    fig, axes = plt.subplots(1, 4, figsize=(3.2 * 4, 3.6), sharey=True)
    for ax, (d, g) in zip(
        axes, [("adult", "synthpop"), ("adult", "baynet"), ("census", "synthpop"), ("census", "baynet")]
    ):
        ax.scatter(range(4), [0.5, 0.6, 0.7, 0.8], label="paper mean")
        ax.set_xticks(range(4), ["Random", "Rare", "Log-lik.", "Distance"], rotation=30)
        ax.set_title(achilles_figures.panel_title(d, g, omega if d == "census" else None))
    axes[0].set_ylabel("AUC of the query-based attack")
    axes[0].legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    titles = [_box(ax.title, fig) for ax in axes]
    dpi = fig.dpi
    plt.close(fig)
    for left, right in zip(titles, titles[1:]):
        assert right.x0 - left.x1 > 0.25 * dpi, "two panel titles (nearly) run into each other"


def test_fig4_titles_name_the_census_subset():
    rows = []
    for d, n in [("census", 10_000), ("adult", 45_222)]:
        for eps in (1.0, np.inf):
            for m in achilles.METHODS:
                rows.append(dict(dataset=d, omega=achilles.omega_label(d, n), epsilon=eps, method=m, auc_mean=0.6,
                                 auc_std=0.05))  # fmt: skip
    fig = achilles_figures.plot_fig4(pd.DataFrame(rows))
    titles = [ax.get_title() for ax in fig.axes]
    assert "subset" in titles[0] and titles[0].startswith("UK Census") and titles[1] == "Adult"


def test_panel_titles_fit_the_four_panels_of_figs_1_and_2():
    # Figs. 1 and 2: one panel per dataset and generator, 3.2 inches each (notebooks 01 and 02)
    fig, axes = plt.subplots(1, 4, figsize=(12.8, 3.6), sharey=True)
    for ax, (d, n, g) in zip(
        axes,
        [
            ("adult", 4_000, "synthpop"),
            ("adult", 4_000, "baynet"),
            ("census", 10_000, "synthpop"),
            ("census", 10_000, "baynet"),
        ],
    ):
        ax.set_title(achilles_figures.panel_title(d, g, achilles.omega_label(d, n)))
    fig.tight_layout()
    boxes = [_box(ax.title, fig) for ax in axes]
    assert all(not _overlap(a, b) for a, b in zip(boxes, boxes[1:]))


def test_precision_recall_marks_the_authors_precision_on_wgan_gp_only():
    rng = np.random.default_rng(3)
    curves, rows = [], []
    for generator in ("WGAN-GP", "TVAE"):
        f = _records(len(curves)).assign(score=lambda d: d.frequency + rng.random(len(d)))
        for column in ("score", "frequency"):
            curves.append(mca.precision_recall(f, column).assign(generator=generator, scored_by=column))
        rows.append({"generator": generator, "precision": 0.7, "recall": 0.4, "collision_rate": f.member.mean()})
    fig = mca_figures.plot_precision_recall(pd.concat(curves, ignore_index=True), pd.DataFrame(rows), cols=2)
    wgan, tvae = fig.axes[:2]

    def horizontal(ax):
        return sorted(round(line.get_ydata()[0], 6) for line in ax.lines if len(set(line.get_ydata())) == 1
                      and len(line.get_ydata()) == 2)  # fmt: skip

    assert round(MCA_PAPER["wgan_gp_precision"], 6) in horizontal(wgan)
    assert round(MCA_PAPER["wgan_gp_precision"], 6) not in horizontal(tvae)
    assert round(rows[1]["collision_rate"], 6) in horizontal(tvae)  # flagging everything: the members' share
    assert any("authors" in t for t in wgan.get_legend_handles_labels()[1])
    with pytest.raises(VrlibError, match="lacks the columns"):
        mca_figures.plot_precision_recall(pd.concat(curves).drop(columns="scored_by"), pd.DataFrame(rows))


def test_thin_curves_keeps_every_curve_and_its_ends():
    long = pd.DataFrame({"precision": np.linspace(1, 0.2, 5000), "recall": np.linspace(0, 1, 5000)})
    short = pd.DataFrame({"precision": [0.9, 0.5, 0.2], "recall": [0.1, 0.6, 1.0]})
    curves = pd.concat(
        [long.assign(generator="A", scored_by="score"), short.assign(generator="A", scored_by="frequency")]
    )
    thin = mca_figures.thin_curves(curves, points=100)
    a = thin[thin.scored_by == "score"]
    assert len(a) == 100 and a.recall.iloc[0] == 0 and a.recall.iloc[-1] == 1
    pd.testing.assert_frame_equal(thin[thin.scored_by == "frequency"].reset_index(drop=True),
                                  short.assign(generator="A", scored_by="frequency"))  # fmt: skip
