"""Achilles experiment plumbing, profiles and the report module, on small tables made here."""

import json
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from vrlib import report  # noqa: E402
from vrlib.errors import VrlibError  # noqa: E402
from vrlib.experiments import achilles, profile_settings  # noqa: E402
from vrlib.selection import rank_records  # noqa: E402

from conftest import make_table  # noqa: E402


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize("include_self", [False, True])
def test_top_by_vk_matches_rank_records(include_self):
    df, schema = make_table(n=90, seed=21)
    distances = achilles.neighbour_distances(df, schema, k_max=10)
    for k in (1, 3, 10):
        if include_self and k == 1:
            continue
        want = rank_records(df, schema, "distance", k=k, include_self=include_self)
        got = achilles.top_by_vk(df, distances, k, 10, include_self=include_self)
        assert got == list(want.index[:10])


def test_neighbour_distances_are_cached():
    df, schema = make_table(n=40, seed=2)
    first = achilles.neighbour_distances(df, schema, k_max=5)
    from vrlib.cache import Cache

    assert len(Cache(namespace="neighbours")) == 1
    np.testing.assert_array_equal(first, achilles.neighbour_distances(df, schema, k_max=5))
    assert len(Cache(namespace="neighbours")) == 1


def test_paper_tables_have_every_cell():
    for attack in ("query", "attention"):
        t = achilles.paper_table(attack)
        assert len(t) == 16 and set(t.method) == set(achilles.METHODS)
    t2 = achilles.paper_table("query").set_index(["method", "dataset", "generator"])
    assert t2.loc[("distance", "census", "synthpop"), "paper_mean"] == 0.879
    assert t2.loc[("random", "adult", "baynet"), "paper_std"] == 0.120


def test_table_vs_paper_columns_and_std():
    rows = [dict(method="distance", dataset="adult", generator="synthpop", auc=a) for a in (0.6, 0.8, 1.0)]
    table = achilles.table_vs_paper(pd.DataFrame(rows))
    assert list(table.columns) == [
        "method",
        "dataset",
        "generator",
        "auc_mean",
        "auc_std",
        "paper_mean",
        "paper_std",
        "n_targets",
    ]
    assert table.auc_mean[0] == pytest.approx(0.8) and table.auc_std[0] == pytest.approx(np.std([0.6, 0.8, 1.0]))
    assert table.paper_mean[0] == 0.804 and table.n_targets[0] == 3


def test_pool_sizes():
    assert achilles.pool_sizes("adult", 45222) == (10_000, 5_000)
    assert achilles.pool_sizes("census", 569_741) == (50_000, 25_000)
    assert achilles.pool_sizes("census", 10_000) == (5_000, 2_500)
    assert achilles.pool_sizes("adult", 4_000) == (2_000, 1_000)


def test_profiles():
    quick = profile_settings("achilles", "quick")
    assert quick["n_targets"] == 10
    paper = profile_settings("achilles", "paper")
    assert (paper["n_shadow"], paper["n_test_datasets"], paper["n_queries"]) == (4000, 200, 100_000)
    assert profile_settings("achilles", "quick", n_shadow=7)["n_shadow"] == 7
    with pytest.raises(VrlibError, match="unknown profile"):
        profile_settings("achilles", "huge")
    with pytest.raises(VrlibError, match="unknown setting"):
        profile_settings("achilles", "quick", n_shadows=7)
    with pytest.raises(VrlibError, match="unknown experiment family"):
        profile_settings("nope", "quick")


def test_profiles_of_every_family_without_importing_its_module_first():
    # a fresh interpreter: only vrlib.experiments imported, as a reader trying profile_settings would
    code = (
        "from vrlib.errors import VrlibError\n"
        "from vrlib.experiments import profile_settings\n"
        "for family in ('achilles', 'domias', 'lost', 'mca'):\n"
        "    assert profile_settings(family, 'quick'), family\n"
        "try:\n"
        "    profile_settings('achiles', 'quick')\n"
        "except VrlibError as exc:\n"
        "    print(exc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == (
        "unknown experiment family 'achiles'; choose one of ['achilles', 'domias', 'lost', 'mca']"
    )


def test_reporter_writes_files_and_manifest(tmp_path):
    rep = report.Reporter("99_test", "smoke", 3, tmp_path / "fig", tmp_path / "fig" / "tables")
    out = tmp_path / "fig" / "smoke"  # outputs go to the profile's own folder
    assert rep.figures_dir == out and rep.tables_dir == out / "tables"
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    rep.savefig(fig, "demo", params={"k": 5})
    plt.close(fig)
    rep.write_table(pd.DataFrame({"method": ["a", "b"], "auc_mean": [0.51234, np.nan]}), "demo_table")
    for name in ("demo.png", "demo.pdf", "tables/demo_table.csv", "tables/demo_table.md", "tables/demo_table.tex"):
        assert (out / name).stat().st_size > 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["demo.png"]["notebook"] == "99_test" and manifest["demo.png"]["parameters"] == {"k": 5}
    assert manifest["tables/demo_table.csv"]["seed"] == 3
    md = (out / "tables" / "demo_table.md").read_text().splitlines()
    assert md[0] == "| method | auc_mean |" and md[2] == "| a | 0.512 |" and md[3] == "| b |  |"
    assert pd.read_csv(out / "tables" / "demo_table.csv").auc_mean[0] == 0.51234
    assert rep.tables_written == ["demo_table"]  # figures are not tables


def test_format_mean_std():
    assert report.format_mean_std(0.8044, 0.0716) == "0.804 ± 0.072"
    assert report.format_mean_std(float("nan"), 0.1) == ""


def test_attack_seed_is_the_targets_own():
    seeds = {achilles.attack_seed(0, t) for t in range(50)}
    assert len(seeds) == 50  # no two targets share their attack's queries and forest
    assert achilles.attack_seed(0, 7) == achilles.attack_seed(0, 7) != achilles.attack_seed(1, 7)


@pytest.mark.realdata
def test_omega_note_says_what_omega_is():
    import warnings

    from conftest import real_file_present, require_real

    require_real("uk_census2011_teaching_random10000.csv.gz")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        note = achilles.omega_note("census", omega_rows=4000)
        full = achilles.omega_note("census")
    if not real_file_present("2011 Census Microdata Teaching File.csv"):
        assert "10,000-record random subset of the UK Census" in full and "569,741" in full
    assert "4,000-record random subset" in note
    assert achilles.omega_label("adult", 45_222) == "all 45,222 records, as the paper"
    require_real("uk_census2011_teaching_first50000.csv.gz")
    first = achilles.omega_note("census", census_variant="first50000")
    assert "50,000 records of the first 50,000 rows" in first and "random" not in first
    df, _ = achilles.load_omega("census", census_variant="first50000")
    assert len(df) == 50_000 and df.index[0] == 0
    with pytest.raises(VrlibError, match="adult"):
        achilles.omega_note("california")


def test_attention_targets_trained_together_score_as_alone():
    """attack_targets trains attention attacks as groups; each target's scores are those of fitting it alone."""
    df, schema = make_table(n=400, seed=31)
    settings = profile_settings(
        achilles.FAMILY, "smoke", n_shadow=20, n_test_datasets=10, n_records=50, n_synth=50, attention_epochs=3
    )
    game = achilles.make_game("adult", df, schema, "synthpop", None, settings, seed=0, n_jobs=1)
    targets = list(df.index[:3])
    got = achilles.attack_targets(game, targets, "attention", settings, seed=0, progress=False)
    for data in game.iter_targets(targets):
        alone = achilles.make_attack("attention", schema, settings, achilles.attack_seed(0, data.target_index)).fit(
            data.shadow, None, data.target
        )
        labels, scores = got[data.target_index]
        np.testing.assert_array_equal(labels, data.test.labels)
        np.testing.assert_allclose(scores, alone.predict_proba(data.test), rtol=1e-5, atol=1e-7)
