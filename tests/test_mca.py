"""TableGAN-MCA pre-processing of Adult (real data, skipped when absent) and the experiment summaries."""

import pandas as pd
import pytest

from vrlib.data import Schema, load, train_test_split
from vrlib.experiments.mca import preprocess_adult_mca
from vrlib.errors import VrlibError
from vrlib.experiments import mca

from conftest import require_real


@pytest.mark.realdata
def test_preprocessing_reproduces_the_papers_columns_and_split():
    require_real("adult.data", "adult.test")
    df, schema = load("adult")
    out, s = preprocess_adult_mca(df, schema)
    # 1 numerical feature; 12 categorical columns, the binary label among them (the authors' 13 columns)
    assert s.continuous == ("age",) and len(s.categorical) == 12 and "income" in s.categorical
    assert s.domain("age") == schema.domain("age")  # PrivBayes needs a public domain for age
    assert "fnlwgt" not in out.columns and "education" not in out.columns
    levels = {c: len(out[c].cat.categories) for c in s.categorical}
    assert levels == {
        "workclass": 7,
        "education-num": 16,
        "marital-status": 2,
        "occupation": 14,
        "relationship": 6,
        "race": 5,
        "sex": 2,
        "capital-gain": 3,
        "capital-loss": 3,
        "hours-per-week": 45,
        "native-country": 2,
        "income": 2,
    }
    # capital gain: 0 -> zero, (0, 7647.23] -> low, above -> high
    gain = df["capital-gain"]
    assert (out["capital-gain"][gain == 0] == "zero").all() and (out["capital-gain"][gain > 7647.23] == "high").all()
    assert (out["capital-gain"][(gain > 0) & (gain <= 7647.23)] == "low").all()
    assert set(out["marital-status"][df["marital-status"] == "Never-married"]) == {"Single"}
    assert (out["native-country"] == "US").sum() == (df["native-country"] == "United-States").sum()
    # hours: 45 equal-width bins over [1, 99]; 40 hours falls in bin floor((40 - 1) / (98 / 45)) = 17
    assert set(out["hours-per-week"][df["hours-per-week"] == 40]) == {17}
    train, test = train_test_split(out, 0.3, seed=0)
    assert (len(train), len(test)) == (31655, 13567)
    assert not set(train.index) & set(test.index)


def test_preprocessing_and_split_bad_input():
    with pytest.raises(VrlibError, match="missing"):
        preprocess_adult_mca(pd.DataFrame({"age": [1.0]}), Schema([], ["age"]))
    with pytest.raises(VrlibError, match="test_size"):
        train_test_split(pd.DataFrame({"a": [1, 2]}), 1.5)
    with pytest.raises(VrlibError, match="both parts"):
        train_test_split(pd.DataFrame({"a": [1]}), 0.3)


def test_summary_and_histogram_on_hand_made_records():
    records = pd.DataFrame({
        "frequency": [1, 1, 1, 4, 4, 4, 4, 2, 2],
        "member": [False, False, True, True, True, True, True, False, False],
        "score": [0.1, 0.1, 0.2, 0.9, 0.9, 0.9, 0.9, 0.3, 0.3],
        "distinct": [True, True, True, True, False, False, False, True, False],
    })  # fmt: skip
    row = mca.summary([{"label": "G", "n_releases": 1, "records": records}]).iloc[0]
    assert row.collision_rate == pytest.approx(5 / 9)
    assert row.collision_rate_distinct == pytest.approx(2 / 5)
    assert row.members_among_freq_gt3 == 1.0 and row.nonmembers_among_unique == pytest.approx(2 / 3)
    s = records.score.to_numpy()
    flagged = s > s.mean() + 2 * s.std()
    assert row.n_flagged == flagged.sum()
    hist = mca.frequency_histogram(records)
    assert hist.set_index("frequency").loc[4].tolist() == [4, 0] and hist.members.sum() == 5
    pr = mca.precision_recall(records)
    assert pr.recall.iloc[0] == 1.0 and pr.precision.iloc[0] == pytest.approx(5 / 9)  # lowest threshold: flag all
    assert pr.precision.iloc[-1] == 1.0 and pr.recall.iloc[-1] == pytest.approx(4 / 5)  # highest: the 4 at 0.9


def test_releases_reject_bad_settings():
    with pytest.raises(VrlibError, match="N_s"):
        mca.releases("smoke", n_releases=0)
    with pytest.raises(VrlibError, match="unknown setting"):
        mca.releases("smoke", epochs=3)


def test_synthesise_caches_by_content(tmp_path, monkeypatch):
    from conftest import make_table
    from vrlib.cache import Cache
    from vrlib.synthesis import NAMESPACE

    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path))
    df, schema = make_table(n=80)
    first = mca.synthesise("baynet", {}, df, schema, n=50, seed=3)
    assert len(Cache(namespace=NAMESPACE)) == 1
    again = mca.synthesise("baynet", {}, df, schema, n=50, seed=3)
    pd.testing.assert_frame_equal(first, again)
    other = mca.synthesise("baynet", {}, df, schema, n=50, seed=4)
    assert len(Cache(namespace=NAMESPACE)) == 2 and not other.equals(first)


@pytest.mark.slow
@pytest.mark.realdata
def test_releases_on_a_dask_cluster_without_shared_disk(tmp_path, monkeypatch):
    """Workers with a cache folder of their own: the same records as a local run, and only the client writes."""
    from conftest import cluster_without_shared_disk, fitted_in_the_client
    from vrlib.generators.bayesnet import BayNet

    require_real("adult.data", "adult.test")
    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path / "local"))
    local = mca.releases("smoke", names=["baynet"], n_jobs=1, progress=False)
    with cluster_without_shared_disk(tmp_path, monkeypatch) as workers_cache:
        monkeypatch.setattr(BayNet, "fit", fitted_in_the_client)
        remote = mca.releases("smoke", names=["baynet"], progress=False)
    assert [r["label"] for r in remote] == [r["label"] for r in local]
    for a, b in zip(local, remote):
        pd.testing.assert_frame_equal(a["records"], b["records"])
    assert any((tmp_path / "client").rglob("*.npz"))  # the client wrote the cache...
    assert not workers_cache.exists() or not any(workers_cache.rglob("*.npz"))  # ...the workers never did


@pytest.mark.realdata
def test_authors_split_and_table3_counting_distinct_records():
    """The authors' split gives their printed first rows, and Table 3 counts distinct records per record."""
    require_real("adult.data", "adult.test")
    train, test, schema = mca.data(split="authors")
    assert (len(train), len(test)) == (31655, 13567) and not set(train.index) & set(test.index)
    assert tuple(train.index[:5]) == mca.AUTHORS_TRAIN_HEAD
    assert train.loc[33716, "age"] == 27 and train.loc[33716, "workclass"] == "Local-gov"  # the authors' first row
    # an independent count with pandas: value_counts of whole rows
    counts = train.value_counts()
    assert len(counts) == 27594
    assert round(100 * (counts == 1).sum() / len(train), 2) == 79.39
    assert round(100 * (counts <= 3).sum() / len(train), 2) == 86.07  # distinct values, per record
    assert round(100 * counts[counts <= 3].sum() / len(train), 2) == 94.02  # records, per record: not the paper's
    table = mca.table3_definitions()
    hit = table[table.matches_paper]
    assert hit[["split", "count", "per"]].values.tolist() == [["authors", "distinct", "records"]]
    ours = table.set_index(["split", "count", "per"])
    assert ours.loc[("authors", "distinct", "records"), "distinct_records"] == 27594
    stats = mca.training_statistics(train, test, schema)
    assert stats["at_most_3_share"] == ours.loc[("authors", "distinct", "records"), "at_most_3_share"]
    assert stats["at_most_3_share_records"] == ours.loc[("authors", "records", "records"), "at_most_3_share"]


def test_data_rejects_an_unknown_split():
    with pytest.raises(VrlibError, match="split"):
        mca.data(split="random")


def test_every_profile_releases_wgan_wc_beside_wgan_gp():
    from vrlib.experiments import profile_settings

    for profile in ("smoke", "quick", "paper"):
        settings = profile_settings("mca", profile)
        gens = {label: (name, params) for label, name, params in mca.generators(settings)}
        assert gens["WGAN-WC"][0] == "wgan_wc" and gens["WGAN-WC"][1] == gens["WGAN-GP"][1]
    assert profile_settings("mca", "paper")["split"] == "authors"
    assert profile_settings("mca", "paper")["wgan_epochs"] == 300


def test_fit_counts_and_predicted_cost(monkeypatch):
    # paper: each GAN 2 fits (release + shadow), +1 without pre-processing (all four are in raw_generators),
    # WGAN-GP +3 for attack model (2) (one model sampled twice, a shadow per copy)
    assert mca.paper_profile_fits("paper") == {"wgan_gp": 6, "wgan_wc": 3, "ctgan": 3, "tvae": 3}
    assert mca.paper_profile_fits("quick") == {"wgan_gp": 2, "wgan_wc": 2, "ctgan": 2, "tvae": 3}  # TVAE raw
    monkeypatch.setitem(
        mca.MEASURED_FIT_COST, "epoch_cpu_s", {"wgan_gp": 2.0, "wgan_wc": 1.0, "ctgan": 3.0, "tvae": 0.5}
    )
    monkeypatch.setitem(
        mca.MEASURED_FIT_COST, "fixed_cpu_s", {"wgan_gp": 0.0, "wgan_wc": 6.0, "ctgan": 12.0, "tvae": 6.0}
    )
    cost = mca.predicted_cost("paper").set_index("generator")
    assert cost.loc["WGAN-GP", "minutes_300_epochs"] == pytest.approx(10.0)  # 300 × 2 s
    assert cost.loc["CTGAN", "minutes_300_epochs"] == pytest.approx((12 + 900) / 60)
    assert cost.loc["WGAN-GP", "cpu_minutes"] == pytest.approx(60.0) and cost.loc[
        "TVAE", "cpu_minutes"
    ] == pytest.approx(7.8)
    smoke = mca.predicted_cost("smoke").set_index("generator")  # 1,500 rows: an epoch costs 1500 / 31655 of one
    assert smoke.loc["WGAN-WC", "cpu_minutes"] == pytest.approx(2 * (6 + 2 * 1.0 * 1500 / 31655) / 60)
