"""The reproduction scorecard's machinery: the verdict, where tables are read from, the pages and the CLI.

Each rule's holds / fails / inconclusive cases are in ``test_scorecard_rules.py``."""

import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest

from conftest import PROJECT_ROOT
from vrlib import scorecard
from vrlib.errors import VrlibError
from vrlib.experiments.achilles import paper_table
from vrlib.scorecard import achilles, domias, lost, mca


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
        ([None], "inconclusive"),
        ([None, None], "inconclusive"),
        ([True, None], "holds in part"),
        ([False, None], "does not hold"),
        ([True, False, None], "holds in part"),
    ],
)
def test_verdict_rule(checks, expected):
    assert scorecard.verdict(checks) == expected


def test_every_claim_is_not_run_without_tables(root):
    rows = [scorecard.evaluate(c, root) for c in scorecard.CLAIMS]
    assert {r.verdict for r in rows if r.claim.reproduced} == {"not run"}
    assert {r.verdict for r in rows if not r.claim.reproduced} == {"not reproduced"}
    assert all(r.reason for r in rows if not r.claim.reproduced)  # every unreproduced claim says why
    page = scorecard.scorecard_markdown(root)
    assert page.count("not run") >= sum(c.reproduced for c in scorecard.CLAIMS)
    assert "none yet judged at the paper's sizes" in page


def _table2(shift: dict) -> pd.DataFrame:
    """The paper's Table 2 as ours (10 targets a cell, the paper's std), each (dataset, generator, method) moved by
    ``shift`` (default 0)."""
    t = paper_table("query").copy()
    t["auc_mean"] = [
        m + shift.get((d, g, meth), 0.0) for d, g, meth, m in zip(t.dataset, t.generator, t.method, t.paper_mean)
    ]
    t["auc_std"], t["n_targets"] = t.paper_std, 10
    return t


def test_table2_cells_name_the_cell_beyond_the_noise(root):
    c = by_rule(achilles.table2_cells)
    put(root, "paper", "achilles_table2", _table2({}))
    assert scorecard.evaluate(c, root).verdict == "holds"
    t = paper_table("query")
    put(root, "paper", "achilles_table2", _table2({("adult", "baynet", "rare"): 0.4}))
    row = scorecard.evaluate(c, root)
    assert row.verdict == "holds in part" and "adult/baynet/rare" in row.reason
    assert row.ours.startswith(f"{len(t) - 1} of {len(t)} cells")


def test_paper_profile_preferred_and_quick_marked(root):
    c = by_rule(achilles.table2_cells)
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
    achilles_line = next(line for line in lines if line.startswith("- **achilles**"))
    # Table 2's rows read the paper table: its values do not hold; the headline and the per-setting comparison
    # (every cell moved alike) keep their verdicts.
    assert "at the paper's sizes" in achilles_line and "does not hold" in achilles_line


def test_size_and_commits_are_those_of_the_tables_the_rule_read(root):
    # The median claim (§6.1) names Table 2 and the per-target table; its rule reads the per-target table alone. With
    # Table 2 at the paper's sizes and the per-target table from a quick run, the row is a quick-size row: it was
    # "paper + quick", and counted among the paper-size verdicts, though no paper-size number entered it.
    c = next(c for c in scorecard.CLAIMS if c.result == "§6.1 (Fig. 1)" and c.quote.startswith("The median"))
    t = paper_table("query")
    put(root, "paper", "achilles_table2", _table2({k: 0.5 for k in zip(t.dataset, t.generator, t.method)}),
        commit="2222222bbbb")  # fmt: skip
    rows = [dict(dataset=d, generator=g, method=m, target=i, auc=0.6 + 0.01 * i + (0.2 if m == "distance" else 0.0))
            for d in ("adult", "census") for g in ("synthpop", "baynet")
            for m in ("random", "rare", "loglik", "distance") for i in range(10)]  # fmt: skip
    put(root, "quick", "achilles_fig1_targets", pd.DataFrame(rows), commit="1111111aaaa")
    row = scorecard.evaluate(c, root)
    assert row.size == "quick" and row.commits == {"achilles_fig1_targets": "1111111"}, (row.size, row.commits)
    # A rule that reads both tables keeps both: the lost RMSD rule reads every RMSD table it is given, one paper-size
    # and one quick here (the committed ones), and the row is "paper + quick" with both commits.
    lost_claim = by_rule(lost.rmsd_above_floor)
    tables = PROJECT_ROOT / "figures"
    put(root, "paper", "lost_table_rmsd", pd.read_csv(tables / "paper" / "tables" / "lost_table_rmsd.csv"),
        commit="3333333cccc")  # fmt: skip
    put(root, "quick", "lost_fig3_rmsd", pd.read_csv(tables / "quick" / "tables" / "lost_fig3_rmsd.csv"),
        commit="4444444dddd")  # fmt: skip
    row = scorecard.evaluate(lost_claim, root)
    assert row.size == "paper + quick", (row.size, row.commits)
    assert row.commits == {"lost_table_rmsd": "3333333", "lost_fig3_rmsd": "4444444"}, row.commits
    # Without the per-target table the rule read only what it asked about: not run, and the row names no size.
    (root / "figures" / "quick" / "tables" / "achilles_fig1_targets.csv").unlink()
    row = scorecard.evaluate(c, root)
    assert row.verdict == "not run" and "no per-target AUC table" in row.reason


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
    c = by_rule(domias.kde_vs_flow)
    put(root, "paper", "domias_fig4", _fig4({"domias_kde": (0.55, 0.56), "eq1_kde": (0.52, 0.52)}))
    assert scorecard.evaluate(c, root).verdict == "not run"
    put(root, "quick", "domias_fig4", _fig4({"domias_kde": (0.58, 0.55), "domias_flow": (0.54, 0.59)}, auc_std=0.001))
    row = scorecard.evaluate(c, root)
    assert (row.size, row.verdict) == ("quick", "holds")
    put(root, "quick", "domias_fig4", _fig4({"domias_kde": (0.55, 0.59), "domias_flow": (0.59, 0.55)}, auc_std=0.001))
    assert scorecard.evaluate(c, root).verdict == "does not hold"


def test_a_gap_inside_the_seeds_noise_is_inconclusive(root):
    """BNAF − KDE = +0.006 with a std of 0.01 over 8 seeds a side: se = 0.01 · √(2/7) = 0.0053, 1.96 se = 0.0105."""
    c = by_rule(domias.kde_vs_flow)
    put(root, "paper", "domias_fig4", _fig4({"domias_kde": (0.556, 0.55), "domias_flow": (0.55, 0.556)}, n_seeds=8))
    assert scorecard.evaluate(c, root).verdict == "inconclusive"
    put(root, "paper", "domias_fig4", _fig4({"domias_kde": (0.57, 0.55), "domias_flow": (0.55, 0.57)}, n_seeds=8))
    assert scorecard.evaluate(c, root).verdict == "holds"


def test_n_syn_gain_of_an_attack_starts_at_its_own_first_value():
    """An attack without a value at the smallest n_syn is measured from its first one, and says so."""
    rows = []
    for n, (a, b) in {100: (0.50, None), 500: (0.52, 0.53), 10000: (0.56, 0.50)}.items():
        rows.append(
            dict(ablation="n_syn", n_ref=10000, n_syn=n, attack="domias_kde", auc_mean=a, auc_std=0.001, n_seeds=8)
        )
        if b is not None:
            rows.append(dict(ablation="n_syn", n_ref=10000, n_syn=n, attack="logan_d1_published", auc_mean=b,
                             auc_std=0.001, n_seeds=8))  # fmt: skip
    out = domias.grows_with_n_syn({"domias_fig4": pd.DataFrame(rows)})
    assert "LOGAN D1 as published -0.030" in out.ours and "from n_syn = 500 to 10000" in out.ours
    assert "DOMIAS (KDE) +0.060" in out.ours and "from n_syn = 100 to 10000" in out.ours


@pytest.mark.parametrize(
    "family, generator, name",
    [
        ("wgan_gp", "WGAN-GP", "WGAN-GP"),
        ("pate_gan", "PATE-GAN", "PATE-GAN"),
        ("ads_gan", "ADS-GAN λ=0.5", "ADS-GAN"),
        ("adsgan", "x", "ADS-GAN"),
        ("flows", "NFlow", "NFlow"),
        ("gan", "GAN", "GAN"),
        ("privbayes", "PrivBayes ε=1", "PrivBayes"),
        ("baynet", "BayNet", None),
        ("noise", "noise σ²=0.7", None),
    ],
)
def test_fig6_generators_are_matched_to_the_papers_names(family, generator, name):
    assert domias._fig6_name(family, generator) == name


def test_fig6_names_the_papers_generators_the_table_lacks():
    # a table as the paper-size run of before had it: TVAE, CTGAN, PrivBayes and BayNet beside the noise curve
    t = {"domias_fig6": _fig6_table({"tvae": -0.05, "ctgan": 0.05, "privbayes": -0.05, "baynet": -0.05})}
    out = domias.noise_curve_sides(t)
    missing = out.ours.split("not in the table: ")[1].split(";")[0]
    for name in ("WGAN-GP", "PATE-GAN", "GAN", "NFlow", "ADS-GAN"):
        assert name in missing
    assert "BAYNET" in out.ours.split("not in the paper's figure")[1]  # _fig6_table names a generator in capitals


def test_verdicts_judge_one_folder_and_never_read_another_profile(root):
    low, high = (lost.paper_value("rmsd")[k] for k in ("low", "high"))
    mid = (low + high) / 2
    inside = pd.DataFrame(
        dict(generator=["synthpop"], rmsd=[mid], rmsd_low=[mid - 0.01], rmsd_high=[mid + 0.01], floor=[0.01],
             n_targets=[100])
    )  # fmt: skip
    put(root, "quick", "lost_table_rmsd", inside)
    outside = dict(n_records=[100], rmsd=[high + 0.05], rmsd_low=[high + 0.04], rmsd_high=[high + 0.06], floor=[0.0],
                   n_targets=[100])  # fmt: skip
    put(root, "paper", "lost_fig3_rmsd", pd.DataFrame(outside))
    table = scorecard.verdicts("lost", root / "figures" / "quick" / "tables").set_index("rule")
    n_lost = sum(c.paper == "lost" for c in scorecard.CLAIMS)
    assert len(table) == n_lost
    (in_range,) = [r for r in table.index if "inside the range" in r and "RMSD" in r]
    (above_floor,) = [r for r in table.index if "above its noise floor" in r]
    # quick's one setting, inside the range; paper's |D| = 100 (outside) is not read
    assert table.loc[in_range, "verdict"] == "holds" and "over 1 settings" in table.loc[in_range, "ours"]
    assert table.loc[above_floor, "verdict"] == "holds"
    # the claims without their tables are not run; the one without a rule is not reproduced
    assert set(table.verdict) - {"holds"} == {"not run", "not reproduced"}
    paper = scorecard.verdicts("lost", root / "figures" / "paper" / "tables").set_index("rule")
    assert paper.loc[in_range, "verdict"] == "does not hold" and "|D| = 100" in paper.loc[in_range, "why"]
    # only the tables named: the folder's lost_table_rmsd is left out, so the RMSD claims are not run
    named = scorecard.verdicts("lost", root / "figures" / "quick" / "tables", names=["lost_fig5"]).set_index("rule")
    assert set(named.verdict) == {"not run", "not reproduced"}
    with pytest.raises(VrlibError, match="unknown paper"):
        scorecard.verdicts("nope", root)


def test_new_table_is_picked_up_by_name(root):
    c = by_rule(achilles.census_omega_cells)
    assert scorecard.evaluate(c, root).verdict == "not run"
    census = _table2({})
    census = census[census.dataset == "census"]
    put(root, "paper", "achilles_census_omega", census)
    assert scorecard.evaluate(c, root).verdict == "holds"


def test_a_missing_heading_is_an_error(root, monkeypatch):
    from vrlib.scorecard import report

    bad = scorecard.Claim("mca", "x", "q", "y", ("mca_table3",), mca.table3, "z", "07", "No such heading")
    monkeypatch.setattr(report, "CLAIMS", report.CLAIMS + (bad,))
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
    checked = capsys.readouterr()
    assert "differs: figures/SCORECARD.md" in checked.out and "run `vrlib scorecard`" in checked.err
    assert main(["scorecard", "--root", str(root)]) == 0
    assert "wrote: figures/SCORECARD.md" in capsys.readouterr().out
    assert "holds" in (root / "figures" / "SCORECARD.md").read_text()
    assert main(["scorecard", "--check", "--root", str(root)]) == 0
    assert capsys.readouterr().out.startswith("up to date: ")  # a check that passes says so
    put(root, "quick", "achilles_table2", _table2({("adult", "baynet", "rare"): 0.4}))  # a new run changes a table
    assert main(["scorecard", "--check", "--root", str(root)]) == 1
    assert "up to date" not in capsys.readouterr().out


def test_a_table_of_another_shape_is_not_run_with_its_reason(root):
    odd = pd.DataFrame({"subgroup": ["race=X"], "group": ["all"], "attack": ["domias_kde"], "accuracy_mean": [0.5],
                        "accuracy_std": [0.01], "n_seeds": [8]})  # fmt: skip
    put(root, "quick", "domias_fig5", odd)  # no minority / majority rows
    row = scorecard.evaluate(by_rule(domias.minority), root)
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
    assert scorecard.evaluate(by_rule(lost.one_record), root).verdict == "not run"  # an empty table
    assert "not run" in scorecard.scorecard_markdown(root)


def _fig6_table(sides: dict, std=0.005) -> pd.DataFrame:
    """A Fig. 6 table with the paper's 12 noise levels (AUC falling from 0.60 to 0.50 as W1 grows from 0.3 to 1.4)
    and one row per generator at W1 0.8, ``sides[name]`` above (+) or below (−) the curve there."""
    rows = []
    for i in range(12):
        wd = 0.3 + 0.1 * i
        rows.append(dict(family="noise", generator=f"noise {i}", attack="domias_flow", auc_mean=0.6 - 0.1 * i / 11,
                         auc_std=std, n_seeds=8, wd_sliced=wd))  # fmt: skip
    at = 0.6 - 0.1 * 5 / 11  # the curve at W1 0.8
    for family, delta in sides.items():
        rows.append(dict(family=family, generator=family.upper(), attack="domias_flow", auc_mean=at + delta,
                         auc_std=std, n_seeds=8, wd_sliced=0.8))  # fmt: skip
    return pd.DataFrame(rows)


def test_fig6_judges_the_papers_eight_generators():
    wrong = {"wgan_gp": 0.05, "pate_gan": 0.05, "ctgan": 0.05}
    better = {"gan": -0.05, "tvae": -0.05, "nflow": -0.05, "privbayes": -0.05, "ads_gan": -0.05}
    out = domias.noise_curve_sides({"domias_fig6": _fig6_table({**wrong, **better})})
    assert scorecard.verdict(out.checks) == "holds" and len(out.checks) == 8
    assert "not in the table: none" in out.ours
    # NFlow above the curve contradicts the paper: one check fails.
    out = domias.noise_curve_sides({"domias_fig6": _fig6_table({**wrong, **better, "nflow": 0.05})})
    assert scorecard.verdict(out.checks) == "holds in part" and "NFLOW" in out.why()


@pytest.mark.parametrize(
    "attacks, expected",
    [
        (["domias_kde", "domias_flow", "mc"], "domias_flow"),
        (["domias_flow", "mc"], "domias_flow"),
        (["domias_kde", "mc"], "domias_kde"),
        (["mc"], None),
    ],
)
def test_paper_domias_prefers_bnaf_wherever_kde_is_or_alone(attacks, expected):
    df = pd.DataFrame([dict(n=n, attack=a, auc_mean=0.5) for n in (1, 2) for a in attacks])
    assert domias.paper_domias(df) == expected
    if expected == "domias_flow" and "domias_kde" in attacks:  # BNAF missing at one setting: KDE
        assert domias.paper_domias(df[~((df.attack == "domias_flow") & (df.n == 2))]) == "domias_kde"


PAPERS_TEXT = PROJECT_ROOT.parent / "shared" / "papers"  # the papers' texts beside the project, when present


def _letters(text: str) -> str:
    """Lower-case letters, digits and % only: the texts carry their formulas twice (as glyphs and as LaTeX)."""
    return re.sub(r"[^a-z0-9%]", "", text.lower())


# Which paper a text is: the word it names itself by most (two versions of achilles are at hand).
PAPER_MARKS = {
    "achilles": r"achilles",
    "domias": r"domias",
    "mca": r"tablegan-mca",
    "lost": r"lost in the averages|modellgestützt",
}


def _paper_of(raw: str) -> str | None:
    """The paper a lower-cased text is (the one whose marks it names most), or None if it names none."""
    counts = {p: len(re.findall(m, raw)) for p, m in PAPER_MARKS.items()}
    paper = max(counts, key=counts.get)
    return paper if counts[paper] else None


def _texts_by_paper(folder) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path in sorted(folder.glob("*.txt")):
        raw = path.read_text(errors="replace").lower()
        if paper := _paper_of(raw):
            out.setdefault(paper, []).append(_letters(raw))
    return out


def _misquoted(claims, texts: dict[str, list[str]]) -> list[str]:
    """Each claim's quote, cut at its ellipses, found word for word in *its own* paper's text (not another's)."""
    wrong = []
    for c in claims:
        if "not the paper's text" in c.result:
            continue
        own = texts.get(c.paper, [])
        if not own:
            wrong.append(f"{c.paper} {c.result}: no text of this paper")
            continue
        parts = [_letters(p) for p in re.split(r"\.\.\.|…", c.quote)]  # an ellipsis leaves out a formula or a clause
        parts = [p for p in parts if p]
        if not any(_in_order(parts, t) for t in own):
            wrong.append(f"{c.paper} {c.result}: {c.quote!r}")
    return wrong


GAP = 1500  # letters an ellipsis may leave out: a clause or a formula, not a section


def _in_order(parts: list[str], text: str) -> bool:
    """The parts in this order in ``text``, each within GAP letters after the one before (a quote cut by ellipses
    is one passage, not words gathered from anywhere in the paper)."""

    def from_(i: int, start: int, limit: int | None) -> bool:
        if i == len(parts):
            return True
        at = text.find(parts[i], start)
        while at != -1 and (limit is None or at <= limit):
            if from_(i + 1, at + len(parts[i]), at + len(parts[i]) + GAP):
                return True
            at = text.find(parts[i], at + 1)
        return False

    return from_(0, 0, None)


@pytest.mark.skipif(not PAPERS_TEXT.is_dir(), reason="the papers' texts are not beside the project")
def test_every_quote_is_the_papers_words():
    texts = _texts_by_paper(PAPERS_TEXT)
    assert set(texts) == set(scorecard.PAPERS), sorted(texts)
    wrong = _misquoted(scorecard.CLAIMS, texts)
    assert not wrong, wrong


@pytest.mark.skipif(not PAPERS_TEXT.is_dir(), reason="the papers' texts are not beside the project")
def test_the_quote_check_says_no_to_altered_words_and_to_another_papers_words():
    from dataclasses import replace

    texts = _texts_by_paper(PAPERS_TEXT)
    c = next(c for c in scorecard.CLAIMS if c.paper == "achilles" and "7.2 percentage" in c.quote)
    assert _misquoted([c], texts) == []
    assert _misquoted([replace(c, quote=c.quote.replace("7.2", "9.2"))], texts)  # one figure changed
    assert _misquoted([replace(c, quote=c.quote + " ... and a clause the paper never wrote")], texts)
    d = next(c for c in scorecard.CLAIMS if c.paper == "domias" and c.quote.startswith("In both plots"))
    assert _misquoted([replace(d, paper="lost")], texts)  # the right words, put on the wrong paper
    # Two true passages of the paper joined by an ellipsis, in the wrong order or far apart: not one passage.
    far = "In both plots, we see DOMIAS consistently outperforms baseline methods ... We see a clear privacy-utility"
    assert _misquoted([replace(d, quote=far)], texts)
    assert _in_order(["ab", "cd"], "xxabyycdzz") and not _in_order(["cd", "ab"], "xxabyycdzz")
    assert not _in_order(["ab", "cd"], "ab" + "x" * (GAP + 1) + "cd")


def test_every_claim_has_words_a_place_and_a_rule_or_a_reason():
    for c in scorecard.CLAIMS:
        assert c.paper in scorecard.PAPERS and c.result and c.quote, c
        assert c.reproduced or c.unjudged, f"{c.paper} {c.result}: no rule and no reason"
        assert not (c.reproduced and c.unjudged), f"{c.paper} {c.result}: a rule and a reason not to judge"
        assert c.reproduced == bool(c.rule_text), f"{c.paper} {c.result}: a rule says what it checks"


def test_site_links_a_section_the_published_copy_lacks_to_the_notebooks_top(root):
    name = scorecard.NOTEBOOKS["02"]
    source = json.loads((root / "notebooks" / f"{name}.ipynb").read_text())
    headline = "Where ours differs from the paper's headline number"
    older = dict(source, cells=[c for c in source["cells"] if headline not in "".join(c["source"])])
    executed = root / "notebooks" / "executed" / "paper"
    executed.mkdir(parents=True)
    (executed / f"{name}.ipynb").write_text(json.dumps(older))
    page = scorecard.scorecard_markdown(root, scorecard.Links(site=True, published=frozenset({name})))
    assert f'href="notebooks/{name}.html">notebook 02</a>' in page  # the headline rows: the page's top
    assert f'href="notebooks/{name}.html#table-3' in page  # a section the copy has keeps its anchor


def test_fig4_setting_shared_by_both_sweeps_counts_once():
    df = pd.read_csv(PROJECT_ROOT / "figures" / "paper" / "tables" / "domias_fig4.csv")
    kde = df[df.attack == "domias_kde"]
    settings = kde[["n_ref", "n_syn"]].drop_duplicates()
    assert len(settings) < len(kde)  # the table shows n_ref = n_syn = 10,000 in both sweeps
    out = domias.reference_set_gain({"domias_fig4": df})
    # Two estimators (KDE and BNAF), each averaged over the settings, each setting once; and the reference set's gain
    # against the estimator's.
    assert len(out.checks) == 3
    assert out.ours.count(f"averaged over {len(settings)} settings") == 2


def test_site_says_when_the_published_notebook_is_another_profiles_run(root):
    name = scorecard.NOTEBOOKS["02"]
    table3 = pd.read_csv(PROJECT_ROOT / "figures" / "paper" / "tables" / "achilles_table3.csv")
    put(root, "paper", "achilles_table3", table3)
    executed = root / "notebooks" / "executed" / "quick"
    executed.mkdir(parents=True)
    (executed / f"{name}.ipynb").write_text((root / "notebooks" / f"{name}.ipynb").read_text())
    page = scorecard.scorecard_markdown(root, scorecard.Links(site=True, published=frozenset({name})))
    assert "notebook 02 (its published run is the quick profile's, not this row's paper)" in page
    # With the paper run published, the link says nothing more.
    (root / "notebooks" / "executed" / "paper").mkdir()
    (root / "notebooks" / "executed" / "paper" / f"{name}.ipynb").write_text(
        (root / "notebooks" / f"{name}.ipynb").read_text()
    )
    page = scorecard.scorecard_markdown(root, scorecard.Links(site=True, published=frozenset({name})))
    assert "its published run" not in page and ">notebook 02</a>" in page


def test_fig4_largest_gain_is_judged_on_the_gains_not_on_every_setting():
    # Eq. 2 ahead of Eq. 1 by 0.05 on average (0.1 at half the settings, 0.0 at the others), the estimator's gain
    # 0: the sentence holds though half the settings show no gain (the rule before required every setting).
    df = pd.read_csv(PROJECT_ROOT / "figures" / "paper" / "tables" / "domias_fig4.csv")
    df["auc_std"], df["auc_mean"] = 0.005, 0.6
    keys = df[["n_ref", "n_syn"]].drop_duplicates().reset_index(drop=True)
    half = set(map(tuple, keys.iloc[::2].to_numpy()))
    on = np.array([(r, s) in half for r, s in zip(df.n_ref, df.n_syn)])
    df.loc[df.attack.isin(["domias_flow", "domias_kde"]) & on, "auc_mean"] = 0.7
    out = domias.reference_set_gain({"domias_fig4": df})
    assert scorecard.verdict(out.checks) == "holds", out.why(10)
    df.loc[df.attack == "domias_kde", "auc_mean"] = 0.5  # now the estimator's gain (BNAF over KDE) is the larger
    df.loc[df.attack == "eq1_flow", "auc_mean"] = df.loc[df.attack == "domias_flow", "auc_mean"].to_numpy() - 0.01
    out = domias.reference_set_gain({"domias_fig4": df})
    assert False in out.checks and "reference set's gain − estimator's" in out.why(10)


def test_evidence_says_which_checks_failed_and_shows_them_first():
    # A "does not hold" row whose failing check came fifth showed three "within the noise" items and "2 more":
    # the failure that decided it was hidden, and an unmarked failure read as one more inconclusive item.
    from vrlib.scorecard.rules import FAILS, PAST_MARGIN, Outcome

    out = Outcome("x")
    out.check(True, "a pass is not evidence")
    out.check(None, "first unclear")
    out.check(None, "second unclear", PAST_MARGIN)
    out.check(None, "third unclear")
    out.check(False, "the one that failed")
    assert out.why(3) == (
        f"{FAILS}: the one that failed; within the noise: first unclear; {PAST_MARGIN}: second unclear; 1 more"
    )
    assert scorecard.verdict(out.checks) == "holds in part"


def test_a_row_that_restates_a_claim_is_not_counted_as_one():
    # One statement of the paper judged twice (another Ω, another reading of a baseline), or a number outside the
    # paper's text, was counted as one more claim and its verdict added to the paper's: "20 claims", 3 "do not hold"
    # for achilles, where the register has 18 statements.
    from dataclasses import replace

    base = scorecard.Claim("mca", "§1", "words", "a value", rule=lambda t: None, rule_text="a check")
    rows = [
        scorecard.Row(base, "holds", "", "", {"t": "paper"}, {}),
        scorecard.Row(replace(base, result="§2"), "does not hold", "", "", {"t": "paper"}, {}),
        scorecard.Row(replace(base, result="§1 again", restates="§1 on other data"), "does not hold", "", "",
                      {"t": "paper"}, {}),
    ]  # fmt: skip
    (line,) = [x for x in scorecard.summary_lines(rows) if x.startswith("- **mca**")]
    assert "2 claims; at the paper's sizes 1 holds, 1 does not hold;" in line, line
    assert "besides, 1 row not counted as a claim (§1 on other data): 1 does not hold" in line, line
    (header,) = [x for x in scorecard.coverage_lines(rows) if x.startswith("**mca**")]
    assert header.endswith("2 claims and 1 row not counted as a claim:"), header
    # the register's own restating rows: each says what it restates
    restating = [c for c in scorecard.CLAIMS if c.restates]
    assert {c.result for c in restating} == {
        "Table 2, Census Ω",
        "§6.1 (Table 2, log-likelihood; §5.2)",
        "authors' notebook (not the paper's text)",
    }


def test_results_page_states_the_headline_numbers_the_committed_tables_give():
    # docs/results.md had no sentence on the headline numbers; the one it has now must follow the tables.
    from vrlib.scorecard import headline

    text = (PROJECT_ROOT / "docs" / "results.md").read_text()
    t2 = pd.read_csv(PROJECT_ROOT / "figures" / "paper" / "tables" / "achilles_table2.csv")
    t3 = pd.read_csv(PROJECT_ROOT / "figures" / "paper" / "tables" / "achilles_table3.csv")
    g2, g3 = headline.average_gap(t2), headline.average_gap(t3)
    assert f"{g2['gap']:+.3f} (standard error {g2['se']:.3f}) against the stated 7.2 p.p." in text
    assert f"{g3['gap']:+.3f} ({g3['se']:.3f}) against\n  the stated 5.2 p.p." in text
    r = headline.std_ratios(t2).set_index("generator").ratio
    assert f"{r['synthpop']:.2f} with Synthpop and {r['baynet']:.2f} with BayNet" in text
    quick = PROJECT_ROOT / "figures" / "quick" / "tables"
    for name in ("achilles_fig1_targets", "achilles_fig2_targets"):
        gaps = headline.median_gaps(pd.read_csv(quick / f"{name}.csv"))
        at = gaps[(gaps.dataset == "census") & (gaps.generator == "baynet")].gap.iloc[0]
        assert f"{at:+.3f}".replace("-", "−") in text, (name, at)


def _abstracts(folder) -> dict[str, list[str]]:
    """Each paper's abstract (its text up to the introduction, or up to the summary's header block), letters only."""
    out: dict[str, list[str]] = {}
    for path in sorted(folder.glob("*.txt")):
        raw = path.read_text(errors="replace").lower()
        paper = _paper_of(raw)
        ends = [i for i in (raw.find("introduction"), raw.find("- papier-id")) if i > 0]
        if paper and ends:
            out.setdefault(paper, []).append(_letters(raw[: min(ends)]))
    return out


@pytest.mark.skipif(not PAPERS_TEXT.is_dir(), reason="the papers' texts are not beside the project")
def test_a_claim_placed_in_the_abstract_is_in_the_abstract():
    # achilles' 7.2 and 5.2 p.p. sentences were placed in the abstract; they are in §1 (the contributions).
    abstracts = _abstracts(PAPERS_TEXT)
    placed = [c for c in scorecard.CLAIMS if "abstract" in c.result]
    assert placed
    wrong = _misquoted(placed, abstracts)
    assert not wrong, wrong
    # must say no: the 7.2 p.p. sentence, put back in the abstract
    from dataclasses import replace

    c = next(c for c in scorecard.CLAIMS if "7.2 percentage" in c.quote)
    assert _misquoted([replace(c, result="abstract")], abstracts)


# --------------------------------------------------------------------------- which tables a rule read


def _reads_of(rule, tables):
    """The names of the tables ``rule`` read, as the scorecard records them for a row's size and commits."""
    from types import SimpleNamespace

    from vrlib.scorecard.report import _apply_reading

    outcome, problem, read = _apply_reading(SimpleNamespace(rule=rule), tables)
    assert problem == "", problem
    return read


def _frames():
    return {"a": pd.DataFrame({"x": [1.0]}), "b": pd.DataFrame({"x": [2.0]})}


@pytest.mark.parametrize(
    "way",
    [
        lambda t: [df.x.sum() for df in t.values()],
        lambda t: [df.x.sum() for _, df in t.items()],
        lambda t: pd.concat(t.values()).x.sum(),
        lambda t: [df.x.sum() for df in {**t}.values()],
        lambda t: [df.x.sum() for df in dict(t).values()],
        lambda t: [df.x.sum() for df in t.copy().values()],
        lambda t: [df.x.sum() for df in (t | {}).values()],
        lambda t: [df.x.sum() for df in ({} | t).values()],
        lambda t: [df.x.sum() for name in t for df in [t[name]]],
        lambda t: [df.x.sum() for name in t.keys() for df in [t.get(name)]],
    ],
    ids=["values", "items", "concat-values", "unpack", "dict", "copy", "or", "ror", "iterate-index", "keys-get"],
)
def test_every_way_of_reading_a_table_is_recorded(way):
    # Before, only [] and .get were recorded: a rule reading through .values(), .items(), {**t}, dict(t), .copy() or
    # | read both tables and the row named neither, so its size and commits were those of no table.
    assert _reads_of(way, _frames()) == {"a", "b"}


def test_asking_about_a_table_or_listing_names_reads_nothing():
    def rule(t):
        return ("a" in t, "c" in t, list(t), len(t), sorted(t.keys()))

    assert _reads_of(rule, _frames()) == set()


def test_a_rule_cannot_change_the_tables_it_reads():
    from vrlib.scorecard.rules import Reads

    t = Reads(_frames())
    with pytest.raises(TypeError):
        t["a"] = pd.DataFrame()
    assert not hasattr(t, "pop") and not hasattr(t, "update") and not hasattr(t, "setdefault")


def test_peek_reads_a_table_without_recording_it_and_record_counts_it():
    from vrlib.scorecard.rules import Reads, peek, record

    t = Reads(_frames())
    assert peek(t, "a").x.iloc[0] == 1.0 and peek(t, "c") is None and t.read == set()
    record(t, ["a", "c"])  # a table not handed to the rule is never counted
    assert t.read == {"a"}
    plain = _frames()
    assert peek(plain, "b").x.iloc[0] == 2.0
    record(plain, ["a"])  # a plain dict records nothing and is left as it was
    assert set(plain) == {"a", "b"}


def _lost_rmsd(name, epsilon=None):
    df = pd.read_csv(PROJECT_ROOT / "figures" / "paper" / "tables" / f"{name}.csv")
    return df if epsilon is None else df[np.isinf(df.epsilon)].reset_index(drop=True)


def test_lost_table_whose_rows_are_all_replaced_is_not_read():
    # Fig. 4's ε = ∞ row is the headline's Adult/BayNet setting on 250 of its 1,000 records: with Fig. 4 cut to that
    # row, the headline's rows replace all of Fig. 4's, and no number of Fig. 4 enters the verdict. Before, Fig. 4
    # counted as read (the rule had asked for it), and the row showed both tables.
    head, inf_only = _lost_rmsd("lost_table_rmsd"), _lost_rmsd("lost_fig4_rmsd", epsilon="inf")
    assert len(inf_only) == 1
    tables = {"lost_table_rmsd": head, "lost_fig4_rmsd": inf_only}
    assert _reads_of(lost.rmsd_above_floor, tables) == {"lost_table_rmsd"}
    # Both contribute (Fig. 4's ε = 1 ... 1,000 are settings of its own): both count.
    tables = {"lost_table_rmsd": head, "lost_fig4_rmsd": _lost_rmsd("lost_fig4_rmsd")}
    assert _reads_of(lost.rmsd_above_floor, tables) == {"lost_table_rmsd", "lost_fig4_rmsd"}
    # The Adult/Synthpop range reads the headline's Synthpop row alone: every Fig. 4 row is BayNet or PrivBayes.
    assert _reads_of(lost.rmsd_in_range, tables) == {"lost_table_rmsd"}
    # Without the headline table, Fig. 4's ε = ∞ row is the setting's only row, and Fig. 4 is read.
    assert _reads_of(lost.rmsd_above_floor, {"lost_fig4_rmsd": inf_only}) == {"lost_fig4_rmsd"}


def test_lost_row_size_is_that_of_the_table_whose_rows_were_used(root):
    c = by_rule(lost.rmsd_above_floor)
    put(root, "paper", "lost_table_rmsd", _lost_rmsd("lost_table_rmsd"), commit="3333333cccc")
    put(root, "quick", "lost_fig4_rmsd", _lost_rmsd("lost_fig4_rmsd", epsilon="inf"), commit="4444444dddd")
    row = scorecard.evaluate(c, root)
    assert (row.size, row.commits) == ("paper", {"lost_table_rmsd": "3333333"}), (row.size, row.commits)
    put(root, "quick", "lost_fig4_rmsd", _lost_rmsd("lost_fig4_rmsd"), commit="4444444dddd")
    row = scorecard.evaluate(c, root)
    assert row.size == "paper + quick" and row.commits == {"lost_table_rmsd": "3333333", "lost_fig4_rmsd": "4444444"}


def test_mca_fig3_counts_read_only_when_they_give_the_se():
    def committed(name):
        return pd.read_csv(PROJECT_ROOT / "figures" / "paper" / "tables" / f"{name}.csv")

    collisions, counts = committed("mca_collisions"), committed("mca_fig3")
    assert _reads_of(mca.fig3, {"mca_collisions": collisions, "mca_fig3": counts}) == {"mca_collisions", "mca_fig3"}
    # Counts without the WGAN-GP release give no se (NaN, 0 records): none of their numbers enter the row.
    others = counts[counts.generator != "WGAN-GP"]
    assert _reads_of(mca.fig3, {"mca_collisions": collisions, "mca_fig3": others}) == {"mca_collisions"}
    assert _reads_of(mca.fig3, {"mca_collisions": collisions, "mca_fig3": counts.drop(columns="members")}) == {
        "mca_collisions"
    }
