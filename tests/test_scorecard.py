"""The reproduction scorecard: its verdict rule on hand-made tables, and the committed pages are current."""

import json
import shutil

import pandas as pd
import pytest

from conftest import PROJECT_ROOT
from vrlib import scorecard
from vrlib.errors import VrlibError
from vrlib.experiments.achilles import paper_table


def by_rule(rule):
    (c,) = [c for c in scorecard.CLAIMS if c.rule is rule]
    return c


@pytest.fixture
def root(tmp_path):
    """A project folder with the notebooks (for their headings) and no outputs."""
    shutil.copytree(
        PROJECT_ROOT / "notebooks", tmp_path / "notebooks", ignore=shutil.ignore_patterns("assignments", "executed")
    )
    return tmp_path


def put(root, profile, name, df, commit="abc1234def"):
    folder = root / "figures" / profile / "tables"
    folder.mkdir(parents=True, exist_ok=True)
    df.to_csv(folder / f"{name}.csv", index=False)
    manifest = root / "figures" / profile / "manifest.json"
    entries = json.loads(manifest.read_text()) if manifest.exists() else {}
    entries[f"tables/{name}.csv"] = {
        "notebook": "nb",
        "profile": profile,
        "seed": 0,
        "commit": commit,
        "written": "2026-01-01T00:00:00",
        "elapsed_s": 12.0,
        "machine": {
            "cpu_cores": 2,
            "gpu": None,
            "system": "Linux x86_64",
            "python": "3.11",
            "packages": {"numpy": "2.0"},
        },
    }
    manifest.write_text(json.dumps(entries))


@pytest.mark.parametrize(
    "checks, expected",
    [
        ([], "not run"),
        ([True], "holds"),
        ([True, True, True], "holds"),
        ([True, False, True], "holds in part"),
        ([False], "does not hold"),
        ([False, False], "does not hold"),
    ],
)
def test_verdict_rule(checks, expected):
    assert scorecard.verdict(checks) == expected


def test_every_claim_is_not_run_without_tables(root):
    rows = [scorecard.evaluate(c, root) for c in scorecard.CLAIMS]
    assert {r.verdict for r in rows} == {"not run"}
    page = scorecard.scorecard_markdown(root)
    assert page.count("not run") >= len(scorecard.CLAIMS)
    assert "not yet run at the paper's sizes" in page


def _table2(shift: dict) -> pd.DataFrame:
    """The paper's Table 2 as ours, each (dataset, generator, method) moved by ``shift`` (default 0)."""
    t = paper_table("query").copy()
    t["auc_mean"] = [
        m + shift.get((d, g, meth), 0.0) for d, g, meth, m in zip(t.dataset, t.generator, t.method, t.paper_mean)
    ]
    t["auc_std"] = 0.05
    return t


def test_table2_cells_within_the_papers_std(root):
    c = by_rule(scorecard._table2_values)
    put(root, "paper", "achilles_table2", _table2({}))
    assert scorecard.evaluate(c, root).verdict == "holds"
    # One cell moved by more than its paper std: in part; the reason names it.
    t = paper_table("query")
    std = float(t[(t.dataset == "adult") & (t.generator == "baynet") & (t.method == "rare")].paper_std.iloc[0])
    put(root, "paper", "achilles_table2", _table2({("adult", "baynet", "rare"): std + 0.001}))
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds in part" and "adult/baynet/rare" in row.reason
    assert row.ours.startswith(f"{len(t) - 1} of {len(t)} cells")
    # Every cell moved far away: does not hold.
    put(root, "paper", "achilles_table2", _table2({k: 0.5 for k in zip(t.dataset, t.generator, t.method)}))
    assert scorecard.evaluate(c, root).verdict == "does not hold"


def test_distance_best_counts_settings(root):
    c = by_rule(scorecard._table2_best)
    t = paper_table("query")
    # Lift log-likelihood above distance on Adult/Synthpop only.
    put(root, "paper", "achilles_table2", _table2({("adult", "synthpop", "loglik"): 0.3}))
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds in part"
    assert row.ours == f"distance best in 3 of {t.groupby(['dataset', 'generator']).ngroups} settings"


def test_paper_profile_preferred_and_quick_marked(root):
    c = by_rule(scorecard._table2_values)
    put(root, "quick", "achilles_table2", _table2({}), commit="1111111aaaa")
    row = scorecard.evaluate(c, root)
    assert (row.size, row.verdict, row.commits["achilles_table2"]) == ("quick", "holds", "1111111")
    t = paper_table("query")
    put(
        root,
        "paper",
        "achilles_table2",
        _table2({k: 0.5 for k in zip(t.dataset, t.generator, t.method)}),
        commit="2222222bbbb",
    )
    row = scorecard.evaluate(c, root)
    assert (row.size, row.verdict, row.commits["achilles_table2"]) == ("paper", "does not hold", "2222222")
    lines = scorecard.summary_lines([scorecard.evaluate(x, root) for x in scorecard.CLAIMS])
    achilles = next(line for line in lines if line.startswith("- **achilles**"))
    # Table 2's two rows read the paper table: its values do not hold, distance stays the best method.
    assert "at the paper's sizes 1 holds, 1 does not hold (of" in achilles


def _fig4(attacks, n_refs=(100, 10000), auc_std=0.01, n_seeds=3):
    rows = []
    for i, n in enumerate(n_refs):
        for a, (low, high) in attacks.items():
            rows.append(
                dict(
                    ablation="n_ref", n_ref=n, n_syn=10000, attack=a, auc_mean=(low, high)[i], auc_std=auc_std,
                    n_seeds=n_seeds,
                )
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_rule_falls_back_to_quick_when_the_paper_table_lacks_an_attack(root):
    c = by_rule(scorecard._kde_vs_flow)
    put(root, "paper", "domias_fig4", _fig4({"domias_kde": (0.55, 0.56), "eq1_kde": (0.52, 0.52)}))
    assert scorecard.evaluate(c, root).verdict == "not run"
    put(root, "quick", "domias_fig4", _fig4({"domias_kde": (0.55, 0.56), "domias_flow": (0.54, 0.57)}, auc_std=0.001))
    row = scorecard.evaluate(c, root)
    assert (row.size, row.verdict) == ("quick", "holds")
    put(root, "quick", "domias_fig4", _fig4({"domias_kde": (0.55, 0.56), "domias_flow": (0.56, 0.55)}))
    assert scorecard.evaluate(c, root).verdict == "does not hold"


def test_bnaf_above_kde_must_clear_the_noise_between_seeds(root):
    """At the largest n_ref BNAF − KDE = +0.006 with std 0.01 over 8 seeds a side: Welch's t = 0.006 /
    (0.01 · √(2/8)) = 1.2 on 2 · 7 = 14 degrees of freedom, one-sided p = 0.125: within the noise.
    +0.02 gives t = 4.0, p = 0.00066: beyond it."""
    from scipy import stats

    c = by_rule(scorecard._kde_vs_flow)
    put(root, "paper", "domias_fig4", _fig4({"domias_kde": (0.55, 0.56), "domias_flow": (0.54, 0.566)}, n_seeds=8))
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds in part"
    assert f"p = {stats.t.sf(1.2, 14):.3f}" == "p = 0.125" and "p = 0.125" in row.ours
    assert "within the noise between seeds" in row.reason
    put(root, "paper", "domias_fig4", _fig4({"domias_kde": (0.55, 0.56), "domias_flow": (0.54, 0.58)}, n_seeds=8))
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds" and f"p = {stats.t.sf(4.0, 14):.3f}" in row.ours
    # one seed a side: no spread to test against, the sign alone decides
    put(root, "paper", "domias_fig4", _fig4({"domias_kde": (0.55, 0.56), "domias_flow": (0.54, 0.566)}, n_seeds=1))
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds" and "Welch" not in row.ours


def test_domias_above_every_baseline_per_size(root):
    c = by_rule(scorecard._domias_above_baselines)
    rows = [
        dict(n_mem=30, attack="domias_kde", auc_mean=0.9),
        dict(n_mem=30, attack="mc", auc_mean=0.8),
        dict(n_mem=30, attack="logan_d1", auc_mean=0.85),
        dict(n_mem=500, attack="domias_kde", auc_mean=0.55),
        dict(n_mem=500, attack="mc", auc_mean=0.54),
        dict(n_mem=500, attack="logan_d1", auc_mean=0.56),
        dict(n_mem=500, attack="domias_flow", auc_mean=0.99),
    ]  # DOMIAS's own flow is not a baseline
    put(root, "paper", "domias_fig3a", pd.DataFrame(rows).assign(auc_std=0.01, n_seeds=8))
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds in part"
    assert "at 500: LOGAN D1 at or above" in row.reason and "MC" not in row.reason


def test_domias_is_judged_with_bnaf_the_papers_estimator_where_the_table_has_it_everywhere(root):
    c = by_rule(scorecard._domias_above_baselines)
    aucs = {
        30: dict(domias_kde=0.90, domias_flow=0.95, logan_d1=0.92),
        500: dict(domias_kde=0.55, domias_flow=0.58, logan_d1=0.56),
    }
    rows = [dict(n_mem=n, attack=a, auc_mean=v) for n, d in aucs.items() for a, v in d.items()]
    put(root, "paper", "domias_fig3a", pd.DataFrame(rows).assign(auc_std=0.01, n_seeds=8))
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds"  # BNAF above LOGAN D1 at both sizes, KDE at neither
    assert row.ours.startswith("DOMIAS (BNAF)'s mean AUC above every baseline's at |D_mem| = 30, 500")
    assert row.ours.endswith("DOMIAS (KDE)'s at none")
    rows[1]["auc_mean"] = float("nan")  # BNAF missing at one size: KDE decides
    put(root, "paper", "domias_fig3a", pd.DataFrame(rows).assign(auc_std=0.01, n_seeds=8))
    row = scorecard.evaluate(c, root)
    assert row.verdict == "does not hold" and row.ours.startswith("DOMIAS (KDE)'s")


def test_training_gain_of_the_papers_domias_against_the_baselines(root):
    c = by_rule(scorecard._grows_with_training)
    first = dict(domias_kde=0.50, domias_flow=0.50, logan_d1=0.50, mc=0.50)
    last = dict(domias_kde=0.60, domias_flow=0.55, logan_d1=0.57, mc=0.52)
    rows = [dict(epochs=e, attack=a, auc_mean=v) for e, d in ((100, first), (3000, last)) for a, v in d.items()]
    put(root, "paper", "domias_fig3b", pd.DataFrame(rows).assign(auc_std=0.01, n_seeds=8))
    row = scorecard.evaluate(c, root)
    # every attack grows; BNAF's +0.05 is below LOGAN D1's +0.07 (KDE's +0.10 does not count for it)
    assert row.verdict == "holds in part" and row.reason.startswith("LOGAN D1's gain at or above DOMIAS (BNAF)'s")
    assert "DOMIAS (BNAF) +0.050, DOMIAS (KDE) +0.100, largest baseline LOGAN D1 +0.070" in row.ours
    only_domias = [r for r in rows if r["attack"].startswith("domias")]
    put(root, "paper", "domias_fig3b", pd.DataFrame(only_domias).assign(auc_std=0.01, n_seeds=8))
    row = scorecard.evaluate(c, root)  # no baseline to compare the gain with: not run, and not a misread table
    assert row.verdict == "not run" and "not the columns" not in row.reason


def test_reference_set_gain_is_checked_for_each_estimator(root):
    c = by_rule(scorecard._reference_set_gain)
    table = _fig4(
        {"domias_kde": (0.55, 0.56), "eq1_kde": (0.52, 0.52), "domias_flow": (0.50, 0.58), "eq1_flow": (0.51, 0.53)}
    )
    put(root, "paper", "domias_fig4", table)
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds in part"  # BNAF's Eq. 2 below its Eq. 1 at the smallest n_ref
    assert "DOMIAS (BNAF) − Eq. 1 (BNAF): -0.010 to +0.050" in row.ours and "DOMIAS (KDE) − Eq. 1 (KDE)" in row.ours
    assert row.reason.startswith("DOMIAS (BNAF), n_ref")


def test_noise_curve_judges_a_generator_beyond_the_noise_levels_only_where_the_curve_bounds_it(root):
    c = by_rule(scorecard._below_noise_curve)
    noise = [("noise σ²=0.7", 0.30, 0.52), ("noise σ²=1.5", 0.50, 0.51), ("noise σ²=3.9", 1.00, 0.50)]
    rows = [dict(family="noise", generator=g, wd_sliced=w, auc_mean=a) for g, w, a in noise]
    rows += [
        dict(family="tvae", generator="TVAE", wd_sliced=0.10, auc_mean=0.55),  # better quality, higher AUC: unknown
        dict(family="privbayes", generator="PrivBayes ε=1", wd_sliced=0.20, auc_mean=0.49),  # bounded: below
        dict(family="ctgan", generator="CTGAN", wd_sliced=0.40, auc_mean=0.50),  # inside: below (curve 0.515)
    ]
    put(root, "paper", "domias_fig6", pd.DataFrame(rows).assign(attack="domias_kde", auc_std=0.01, n_seeds=8))
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds in part"  # PrivBayes below, CTGAN below (the paper: above); TVAE not judged
    assert "below the noise curve: PrivBayes ε=1, CTGAN; above: none" in row.ours
    assert "not judged" in row.ours and "TVAE" in row.ours.split("not judged")[1]
    assert row.reason.startswith("CTGAN below the curve") and "TVAE" not in row.reason
    # a noise curve that does not fall with the noise bounds nothing beyond its levels
    rows[1]["auc_mean"] = 0.53  # noise σ²=1.5 above σ²=0.7
    put(root, "paper", "domias_fig6", pd.DataFrame(rows).assign(attack="domias_kde", auc_std=0.01, n_seeds=8))
    row = scorecard.evaluate(c, root)
    assert "not judged" in row.ours and "PrivBayes ε=1" in row.ours.split("not judged")[1]
    assert row.verdict == "does not hold"  # only CTGAN is judged


def test_minority_gap_is_shown_with_the_groups_spread_over_seeds(root):
    c = by_rule(scorecard._minority)
    rows = []
    for attack, minority in (("domias_kde", 0.53), ("eq1_kde", 0.51)):
        rows += [
            dict(subgroup="race=X", group="minority", attack=attack, accuracy_mean=minority, accuracy_std=0.031),
            dict(subgroup="race=X", group="majority", attack=attack, accuracy_mean=0.50, accuracy_std=0.004),
        ]
    put(root, "paper", "domias_fig5", pd.DataFrame(rows).assign(n_seeds=8))
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds"  # DOMIAS +0.030 on the group, Eq. 1 +0.010
    assert (
        row.ours
        == "race=X: DOMIAS (KDE) minority − majority accuracy +0.030 (its accuracy on the group: std 0.031 over 8 seeds)"
    )


def test_lost_rmsd_reads_every_sweep_table_it_finds(root):
    c = next(x for x in scorecard.CLAIMS if x.tables == scorecard.LOST_RMSD and "range" in x.rule_text)
    low, high = (scorecard._lost_paper("rmsd")[k] for k in ("low", "high"))
    put(
        root,
        "quick",
        "lost_table_rmsd",
        pd.DataFrame(dict(generator=["synthpop", "baynet"], rmsd=[low, high], floor=[0.0, 0.0])),
    )
    assert scorecard.evaluate(c, root).verdict == "holds"
    put(root, "paper", "lost_fig3_rmsd", pd.DataFrame(dict(n_records=[100], rmsd=[high + 0.01], floor=[0.0])))
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds in part" and "|D| = 100" in row.reason
    assert row.size == "paper + quick"
    lines = scorecard.summary_lines([scorecard.evaluate(x, root) for x in scorecard.CLAIMS])
    lost_line = next(line for line in lines if line.startswith("- **lost**"))
    # the mixed row is counted as such, not as quick only nor as paper
    n_lost = sum(x.paper == "lost" for x in scorecard.CLAIMS)
    assert f"no result yet wholly at the paper's sizes ({n_lost} results)" in lost_line
    assert f"others at reduced (quick) sizes, 1 holds, 1 holds in part; {n_lost - 2} not run" in lost_line


def test_lost_floor_rule_wants_the_whole_interval_above_the_floor(root):
    c = next(x for x in scorecard.CLAIMS if x.tables == scorecard.LOST_RMSD and "floor" in x.rule_text)
    put(root, "paper", "lost_table_rmsd", pd.DataFrame(dict(generator=["synthpop"], rmsd=[0.12], floor=[0.10])))
    assert scorecard.evaluate(c, root).verdict == "holds"  # no interval: the estimate against the floor
    table = pd.DataFrame(dict(generator=["synthpop"], rmsd=[0.12], rmsd_low=[0.09], rmsd_high=[0.15], floor=[0.10]))
    put(root, "paper", "lost_table_rmsd", table)
    row = scorecard.evaluate(c, root)
    assert row.verdict == "does not hold" and "interval from 0.090" in row.reason
    census = pd.DataFrame(dict(dataset=["census"], generator=["synthpop"], rmsd=[0.2], rmsd_low=[0.15], floor=[0.1]))
    put(root, "paper", "lost_census_rmsd", census)
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds in part" and "1 of 2 settings" in row.ours


def lost_claim(quantity):
    """The lost claim that quotes the paper's statement of ``quantity``."""
    statement = scorecard._lost_paper(quantity)["statement"]
    (c,) = [c for c in scorecard.CLAIMS if c.paper == "lost" and c.paper_statement() == statement]
    return c


def test_lost_miss_rate_trend_over_t(root):
    c = lost_claim("miss_rate_trend_t")
    assert scorecard.evaluate(c, root).verdict == "not run"
    t = [0.6, 0.7, 0.8, 0.9]
    table = pd.DataFrame(
        dict(
            generator=["synthpop"] * 4 + ["baynet"] * 4,
            t=t * 2,
            miss_rate=[0.3, 0.6, 0.6, 1.0, 0.3, 0.2, 0.5, None],  # baynet falls once; its t = 0.9 is undefined
            miss_rate_noise=[0.1, 0.2, 0.3, 0.5, 0.4, 0.1, 0.2, None],
        )
    )
    put(root, "paper", "lost_table_miss", table)
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds in part"
    assert (
        row.ours.startswith("the miss rate never falls as t grows in 1 of 2 settings")
        and "noise alone, in 1)" in row.ours
    )
    assert row.reason.startswith("baynet 0.30 at t = 0.6, 0.20 at t = 0.7, 0.50 at t = 0.8")
    assert "t = 0.9" not in row.reason
    put(root, "paper", "lost_table_miss", table.assign(miss_rate=[0.3, 0.6, 0.6, 1.0, 0.3, 0.4, 0.5, None]))
    assert scorecard.evaluate(c, root).verdict == "holds"


def test_lost_gap_falls_with_the_size_of_d(root):
    c = lost_claim("rmsd_trend_size")
    put(root, "paper", "lost_fig3_rmsd", pd.DataFrame(dict(n_records=[1000], rmsd=[0.1], floor=[0.05])))
    assert scorecard.evaluate(c, root).verdict == "not run"  # one size: no trend to judge
    sizes = dict(n_records=[10_000, 100, 1000])  # unsorted on purpose
    put(root, "paper", "lost_fig3_rmsd", pd.DataFrame(dict(**sizes, rmsd=[0.09, 0.15, 0.12], floor=[0.07, 0.05, 0.06])))
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds"
    assert row.ours.startswith("RMSD 0.150 at |D| = 100, 0.120 at |D| = 1,000, 0.090 at |D| = 10,000")
    # beyond the floor: sqrt(0.15² − 0.14²) = 0.054 at 100 against sqrt(0.10² − 0.02²) = 0.098 at 10,000
    put(root, "paper", "lost_fig3_rmsd", pd.DataFrame(dict(**sizes, rmsd=[0.10, 0.15, 0.12], floor=[0.02, 0.14, 0.06])))
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds in part"
    assert row.reason == "beyond the noise floor 0.054 and 0.098 at |D| = 100 and |D| = 10,000"


def test_lost_gap_at_ten_thousand_records_against_its_floor(root):
    c = lost_claim("rmsd_at_10000")
    put(root, "paper", "lost_fig3_rmsd", pd.DataFrame(dict(n_records=[100, 1000], rmsd=[0.2, 0.2], floor=[0.1, 0.1])))
    assert scorecard.evaluate(c, root).verdict == "not run"  # no |D| of 10,000
    table = pd.DataFrame(dict(n_records=[100, 10_000], rmsd=[0.2, 0.08], rmsd_low=[0.18, 0.07], floor=[0.1, 0.06]))
    put(root, "paper", "lost_fig3_rmsd", table)
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds"
    assert row.ours == "|D| = 10,000: RMSD 0.080 (95 % interval from 0.070), noise floor 0.060"
    put(root, "paper", "lost_fig3_rmsd", table.assign(rmsd_low=[0.18, 0.05]))  # the estimate is above, its interval not
    assert scorecard.evaluate(c, root).verdict == "does not hold"


def test_lost_risk_falls_to_chance_with_epsilon(root):
    c = lost_claim("risk_to_chance")
    table = pd.DataFrame(
        dict(
            epsilon=[float("inf"), 1.0, 10.0],
            mean_traditional=[0.70, 0.52, 0.60],
            floor_traditional=[0.05, 0.04, 0.05],
            mean_model_seeded=[0.72, 0.56, 0.61],
            floor_model_seeded=[0.05, 0.05, 0.05],
        )
    )
    put(root, "paper", "lost_fig4_rmsd", table)
    row = scorecard.evaluate(c, root)
    # three checks pass; model-seeded's 0.56 at ε = 1 lies 0.06 from 0.5, beyond its floor 0.05
    assert row.verdict == "holds in part"
    assert row.reason == "model-seeded: 0.560 at ε = 1, farther from 0.5 than its floor"
    assert "traditional: mean risk 0.520 at ε = 1 (noise floor 0.040), 0.700 at ε = ∞ (BayNet)" in row.ours
    put(root, "paper", "lost_fig4_rmsd", table.assign(mean_model_seeded=[0.72, 0.54, 0.61]))
    assert scorecard.evaluate(c, root).verdict == "holds"


def test_lost_gap_shrinks_as_epsilon_falls(root):
    c = lost_claim("rmsd_trend_epsilon")
    # the raw RMSD is larger at ε = 1, but all of it is noise there: sqrt(0.12² − 0.13²) → 0, sqrt(0.10² − 0.06²) = 0.08
    table = pd.DataFrame(dict(epsilon=[1.0, float("inf")], rmsd=[0.12, 0.10], floor=[0.13, 0.06]))
    put(root, "paper", "lost_fig4_rmsd", table)
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds in part"
    assert row.reason == "RMSD 0.100 and 0.120 at ε = ∞ (BayNet) and ε = 1"
    assert row.ours.endswith("beyond the noise floor 0.000, 0.080")
    put(root, "paper", "lost_fig4_rmsd", table.assign(rmsd=[0.09, 0.10]))
    assert scorecard.evaluate(c, root).verdict == "holds"
    # with intervals, a difference inside them is not a trend: they must not overlap
    overlapping = table.assign(rmsd=[0.09, 0.10], rmsd_low=[0.08, 0.085], rmsd_high=[0.10, 0.115])
    put(root, "paper", "lost_fig4_rmsd", overlapping)
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds in part"
    assert row.reason == (
        "RMSD 0.100 [0.085, 0.115] and 0.090 [0.080, 0.100] at ε = ∞ (BayNet) and ε = 1: the intervals overlap"
    )
    put(root, "paper", "lost_fig4_rmsd", overlapping.assign(rmsd_low=[0.08, 0.101]))
    assert scorecard.evaluate(c, root).verdict == "holds"


def test_lost_one_record_spread_against_noise_by_an_f_test(root):
    c = by_rule(scorecard._one_record)
    row = dict(record=[7], traditional=[0.87], model_seeded_min=[0.76], model_seeded_max=[0.97], n_datasets=[15])
    # sd ratio 1.6: F = 2.56 on (14, 15) degrees of freedom, p = 0.041 (scipy: stats.f.sf(2.56, 14, 15))
    put(root, "paper", "lost_fig5", pd.DataFrame(dict(**row, between_datasets_sd=[0.048], noise_sd=[0.030])))
    result = scorecard.evaluate(c, root)
    assert result.verdict == "holds" and "F test p = 0.041" in result.ours
    # sd ratio 1.3 is above 1 but within what noise gives 15 datasets (F = 1.69, p = 0.162)
    put(root, "paper", "lost_fig5", pd.DataFrame(dict(**row, between_datasets_sd=[0.039], noise_sd=[0.030])))
    result = scorecard.evaluate(c, root)
    assert result.verdict == "does not hold" and result.reason == (
        "spread over datasets not beyond estimation noise (F test p = 0.162)"
    )


def test_verdicts_judge_one_folder_and_never_read_another_profile(root):
    low, high = (scorecard._lost_paper("rmsd")[k] for k in ("low", "high"))
    inside = pd.DataFrame(
        dict(generator=["synthpop"], rmsd=[low], rmsd_low=[low - 0.01], rmsd_high=[low + 0.01], floor=[0.1])
    )
    put(root, "quick", "lost_table_rmsd", inside)
    put(root, "paper", "lost_fig3_rmsd", pd.DataFrame(dict(n_records=[100], rmsd=[high + 0.05], floor=[0.0])))
    table = scorecard.verdicts("lost", root / "figures" / "quick" / "tables").set_index("rule")
    n_lost = sum(c.paper == "lost" for c in scorecard.CLAIMS)
    assert len(table) == n_lost
    (in_range,) = [r for r in table.index if "inside the paper's range" in r and "RMSD" in r]
    (above_floor,) = [r for r in table.index if "above its noise floor" in r]
    # quick's one setting, inside the range; paper's |D| = 100 (outside) is not read
    assert table.loc[in_range, "verdict"] == "holds" and "(synthpop)" in table.loc[in_range, "ours"]
    assert table.loc[above_floor, "verdict"] == "does not hold"  # rmsd_low 0.03 < floor 0.1
    assert "interval from" in table.loc[above_floor, "why"]
    assert set(table.verdict) - {"holds", "does not hold"} == {"not run"}  # the claims without their tables
    paper = scorecard.verdicts("lost", root / "figures" / "paper" / "tables").set_index("rule")
    assert paper.loc[in_range, "verdict"] == "does not hold" and "|D| = 100" in paper.loc[in_range, "why"]
    # only the tables named: the folder's lost_table_rmsd is left out, so the RMSD claims are not run
    named = scorecard.verdicts("lost", root / "figures" / "quick" / "tables", names=["lost_fig5"]).set_index("rule")
    assert (named.verdict == "not run").all()
    with pytest.raises(VrlibError, match="unknown paper"):
        scorecard.verdicts("nope", root)


def test_new_table_is_picked_up_by_name(root):
    c = by_rule(scorecard._census_omega)
    assert scorecard.evaluate(c, root).verdict == "not run"
    census = _table2({})
    census = census[census.dataset == "census"]
    put(root, "paper", "achilles_census_omega", census)
    assert scorecard.evaluate(c, root).verdict == "holds"


def test_a_missing_heading_is_an_error(root, monkeypatch):
    bad = scorecard.Claim("mca", "x", "y", ("mca_table3",), scorecard._mca_table3, "z", "07", "No such heading")
    monkeypatch.setattr(scorecard, "CLAIMS", scorecard.CLAIMS + (bad,))
    with pytest.raises(VrlibError, match="No such heading"):
        scorecard.scorecard_markdown(root)


def test_provenance_groups_files_of_one_output(root):
    put(root, "quick", "lost_fig5", pd.DataFrame(dict(a=[1])), commit="feedbeef0000")
    manifest = root / "figures" / "quick" / "manifest.json"
    entries = json.loads(manifest.read_text())
    entries["tables/lost_fig5.md"] = entries["tables/lost_fig5.csv"]
    manifest.write_text(json.dumps(entries))
    page = scorecard.provenance_markdown(root)
    rows = [line for line in page.splitlines() if "`tables/lost_fig5`" in line]
    assert len(rows) == 1 and "`feedbeef0000`" in rows[0] and "| 12 |" in rows[0]


def test_readme_block_is_replaced_between_markers():
    text = f"intro\n{scorecard.README_BEGIN}\nold\n{scorecard.README_END}\nrest\n"
    new = scorecard.readme_with_summary(text, "new line")
    assert new == f"intro\n{scorecard.README_BEGIN}\nnew line\n{scorecard.README_END}\nrest\n"
    with pytest.raises(VrlibError, match="markers"):
        scorecard.readme_with_summary("no markers", "x")


def test_committed_pages_are_current():
    stale = scorecard.write(PROJECT_ROOT, check=True)
    assert not stale, f"regenerate with `python -m vrlib.scorecard` and commit: {[p.name for p in stale]}"


def test_cli_writes_then_checks(root, capsys):
    from vrlib.cli import main

    put(root, "quick", "achilles_table2", _table2({}))
    assert main(["scorecard", "--check", "--root", str(root)]) == 1  # nothing written yet
    assert main(["scorecard", "--root", str(root)]) == 0
    assert "holds" in (root / "figures" / "SCORECARD.md").read_text()
    assert main(["scorecard", "--check", "--root", str(root)]) == 0
    put(root, "quick", "achilles_table2", _table2({("adult", "baynet", "rare"): 0.4}))  # a new run changes a table
    assert main(["scorecard", "--check", "--root", str(root)]) == 1


def test_a_table_of_another_shape_is_not_run_with_its_reason(root):
    odd = pd.DataFrame({"subgroup": ["race=X"], "group": ["all"], "attack": ["domias_kde"], "accuracy_mean": [0.5]})
    put(root, "quick", "domias_fig5", odd)  # no minority / majority rows
    row = scorecard.evaluate(by_rule(scorecard._minority), root)
    assert row.verdict == "not run" and "domias_fig5: not the columns this check reads" in row.reason
    put(
        root,
        "quick",
        "lost_fig5",
        pd.DataFrame(
            columns=[
                "model_seeded_min",
                "model_seeded_max",
                "traditional",
                "between_datasets_sd",
                "noise_sd",
                "n_datasets",
            ]
        ),
    )
    assert scorecard.evaluate(by_rule(scorecard._one_record), root).verdict == "not run"  # an empty table
    assert "not run" in scorecard.scorecard_markdown(root)
