"""Loaders on the real files (skipped when absent), checksums, CSV reading and every bad input."""

import hashlib

import numpy as np
import pandas as pd
import pytest

import vrlib.data as data
from vrlib.data import Schema, load, prepare, read_csv
from vrlib.errors import VrlibError

from conftest import require_real


@pytest.mark.realdata
def test_adult_is_omega():
    require_real("adult.data", "adult.test")
    df, schema = load("adult")
    assert df.shape == (45222, 15)
    assert list(df.index) == list(range(45222))
    assert len(schema.categorical) == 9 and len(schema.continuous) == 6
    assert set(df["income"].cat.categories) == {"<=50K", ">50K"}  # test labels lose their '.'
    assert df.isna().sum().sum() == 0
    # Train rows come first: 30,162 complete train rows, then the test rows.
    assert df.loc[0, "age"] == 39 and df.loc[0, "fnlwgt"] == 77516
    assert df.loc[30162, "age"] == 25 and df.loc[30162, "fnlwgt"] == 226802
    full, _ = load("adult", keep_missing=True)
    assert full.shape == (48842, 15)
    assert int(full.isna().any(axis=1).sum()) == 3620


@pytest.mark.realdata
def test_census_subset_warns_and_drops_person_id():
    require_real("uk_census2011_teaching_random10000.csv.gz")
    with pytest.warns(UserWarning, match="10,000 random-record subset"):
        df, schema = load("census")
    assert df.shape == (10000, 17)
    assert "Person ID" not in df.columns and len(schema.categorical) == 17 and not schema.continuous
    assert df.index.max() <= 569710  # positions in the full file
    first, _ = load("census", variant="first50000")
    assert first.shape == (50000, 17)
    assert first.iloc[0].astype(str).tolist() == "E12000001,H,2,1,2,6,2,2,1,2,1,2,5,8,2,-9,4".split(",")
    # The two subsets agree on the records they share.
    shared = df.index.intersection(first.index)
    assert len(shared) == 853
    pd.testing.assert_frame_equal(df.loc[shared].astype(str), first.loc[shared].astype(str), check_dtype=False)


@pytest.mark.realdata
def test_california_matches_sklearn_form():
    require_real("cal_housing.data")
    df, schema = load("california")
    assert df.shape == (20640, 9) and schema.continuous == tuple(df.columns)
    np.testing.assert_allclose(
        df.iloc[0].to_numpy(), [8.3252, 41, 6.984127, 1.02381, 322, 2.555556, 37.88, -122.23, 4.526], rtol=1e-5
    )


def test_checksum_mismatch(tmp_path, monkeypatch):
    bad = tmp_path / "adult.data"
    bad.write_text("not the real file\n")
    monkeypatch.setenv("VRLIB_DATA_DIR", str(tmp_path))
    with pytest.raises(VrlibError, match="checksum mismatch"):
        data.find_file("adult.data")


def test_checksum_accepts_the_right_bytes(tmp_path, monkeypatch):
    payload = b"1,2,3\n"
    spec = data.DataFile("toy.csv", hashlib.sha256(payload).hexdigest(), None)
    monkeypatch.setitem(data.FILES, "toy.csv", spec)
    (tmp_path / "toy.csv").write_bytes(payload)
    monkeypatch.setenv("VRLIB_DATA_DIR", str(tmp_path))
    assert data.find_file("toy.csv") == tmp_path / "toy.csv"


def test_git_blob_check(tmp_path):
    payload = b"hello\n"
    path = tmp_path / "f"
    path.write_bytes(payload)
    # `git hash-object` of "hello\n".
    data.verify(path, data.DataFile("f", None, None, git_blob="ce013625030ba8dba906f756967f9e9ca394464a"))
    with pytest.raises(VrlibError, match="git blob id"):
        data.verify(path, data.DataFile("f", None, None, git_blob="0" * 40))


def test_missing_file_without_network(tmp_path, monkeypatch):
    monkeypatch.setenv("VRLIB_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(data.files, "project_data_dir", lambda: tmp_path / "project")

    def offline(*args, **kwargs):
        raise OSError("network unreachable")

    monkeypatch.setattr(data.files.urllib.request, "urlopen", offline)
    with pytest.raises(VrlibError, match="adult.data.*downloading it from https://archive.ics.uci.edu.*failed"):
        data.find_file("adult.data")
    with pytest.raises(VrlibError, match="not found.*VRLIB_DATA_DIR"):
        data.find_file("uk_census2011_teaching_first50000.csv.gz")  # no public URL


def test_download_is_verified_and_atomic(tmp_path, monkeypatch):
    payload = b"a,b\n1,2\n"
    spec = data.DataFile("toy.csv", hashlib.sha256(payload).hexdigest(), "https://example.org/toy.csv")
    monkeypatch.setitem(data.FILES, "toy.csv", spec)
    monkeypatch.setenv("VRLIB_DATA_DIR", str(tmp_path / "empty"))
    monkeypatch.setattr(data.files, "project_data_dir", lambda: tmp_path / "project")

    class Response:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self):
            return payload

    monkeypatch.setattr(data.files.urllib.request, "urlopen", lambda *a, **k: Response())
    path = data.find_file("toy.csv")
    assert path.read_bytes() == payload
    assert [p.name for p in path.parent.iterdir()] == ["toy.csv"]  # no temporary left behind


def test_unknown_names():
    with pytest.raises(VrlibError, match="unknown dataset 'adults'"):
        load("adults")
    with pytest.raises(VrlibError, match="unknown census variant"):
        load("census", variant="huge")


def test_read_csv_types_and_nans(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("job,age,code\na,30,01\nb,,02\n,40,01\nc,50,03\n")
    with pytest.raises(VrlibError, match=r"missing values in 2 row\(s\) \(job: 1, age: 1\).*--dropna"):
        read_csv(path, ["job", "code"], ["age"])
    with pytest.warns(UserWarning, match=r"dropped 2 of 4 row\(s\) with missing values"):
        df, schema = read_csv(path, ["job", "code"], ["age"], dropna=True)
    assert len(df) == 2 and df["age"].dtype == np.float64
    assert list(df["code"].cat.categories) == ["01", "03"]  # codes keep their spelling


def test_schema_errors(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b,c\nx,1,2\n")
    with pytest.raises(VrlibError, match=r"\['c'\] are neither categorical nor continuous"):
        read_csv(path, ["a"], ["b"])
    with pytest.raises(VrlibError, match=r"\['b'\] are declared both"):
        read_csv(path, ["a", "b"], ["b", "c"])
    with pytest.raises(VrlibError, match=r"has no column 'd' \(categorical\); its columns are \['a', 'b', 'c'\]"):
        read_csv(path, ["a", "d"], ["b", "c"])
    with pytest.raises(VrlibError, match=r"has no column 'bb' \(continuous\), did you mean 'b'\?"):
        read_csv(path, ["a"], ["bb", "c"])  # the typo is named, not the column it left undeclared
    df, schema = read_csv(path, ["a"], ["b"], ignore=["c"])
    assert list(df.columns) == ["a", "b"] and schema.columns == ("a", "b")
    with pytest.raises(VrlibError, match=r"\['c'\] are both declared and ignored"):
        read_csv(path, ["a"], ["b", "c"], ignore=["c"])
    with pytest.raises(VrlibError, match="non-numeric"):
        read_csv(path, ["b", "c"], ["a"])
    with pytest.raises(VrlibError, match="not found"):
        read_csv(tmp_path / "nope.csv", ["a"], [])


def test_prepare_dtypes():
    df = pd.DataFrame({"k": [3, 1, 2, 1], "x": [1, 2, 3, 4]})
    out = prepare(df, Schema(["k"], ["x"]))
    assert list(out["k"].cat.categories) == [1, 2, 3]
    assert out["x"].dtype == np.float64


def _fake_checkout(tmp_path, monkeypatch, *, shared: bool):
    """A checkout at tmp/repo (with ``../shared/data`` beside it when ``shared``), as the package would see it."""
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    if shared:
        (tmp_path / "shared" / "data").mkdir(parents=True)
    monkeypatch.setattr(data.files, "project_root", lambda: repo)
    return repo


def _toy(monkeypatch, url=None):
    payload = b"x\n1\n"
    monkeypatch.setitem(data.FILES, "toy.csv", data.DataFile("toy.csv", hashlib.sha256(payload).hexdigest(), url))
    return payload


def test_search_dirs_env_wins(tmp_path, monkeypatch):
    """VRLIB_DATA_DIR set: it, then data/; ../shared/data is not consulted even when present."""
    repo = _fake_checkout(tmp_path, monkeypatch, shared=True)
    mine = tmp_path / "mine"
    mine.mkdir()
    monkeypatch.setenv("VRLIB_DATA_DIR", str(mine))
    assert data.search_dirs() == [mine, repo / "data"]
    payload = _toy(monkeypatch)
    (tmp_path / "shared" / "data" / "toy.csv").write_bytes(payload)
    (mine / "toy.csv").write_bytes(payload)
    assert data.find_file("toy.csv") == mine / "toy.csv"


def test_search_dirs_shared_beside_checkout(tmp_path, monkeypatch):
    """VRLIB_DATA_DIR unset: ../shared/data beside the checkout, whatever the working directory."""
    repo = _fake_checkout(tmp_path, monkeypatch, shared=True)
    monkeypatch.delenv("VRLIB_DATA_DIR", raising=False)
    elsewhere = tmp_path / "elsewhere" / "notebooks"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)  # as a notebook opened in Jupyter, or the CLI run from another folder
    shared = tmp_path / "shared" / "data"
    assert data.search_dirs() == [shared, repo / "data"]
    payload = _toy(monkeypatch)
    (shared / "toy.csv").write_bytes(payload)
    assert data.find_file("toy.csv", download=False) == shared / "toy.csv"


def test_search_dirs_project_data_when_no_shared(tmp_path, monkeypatch):
    """Neither set nor beside: the project's data/ only; a file found there is used."""
    repo = _fake_checkout(tmp_path, monkeypatch, shared=False)
    monkeypatch.delenv("VRLIB_DATA_DIR", raising=False)
    assert data.search_dirs() == [repo / "data"]
    payload = _toy(monkeypatch)
    (repo / "data" / "toy.csv").write_bytes(payload)
    assert data.find_file("toy.csv", download=False) == repo / "data" / "toy.csv"


def test_download_only_where_the_source_is_public(tmp_path, monkeypatch):
    """Nowhere on disk: a public file is downloaded into data/, one without a public source is an error naming ../shared/data."""
    repo = _fake_checkout(tmp_path, monkeypatch, shared=False)
    monkeypatch.delenv("VRLIB_DATA_DIR", raising=False)
    calls = []

    class Response:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self):
            return payload

    def fake_urlopen(url, **kwargs):
        calls.append(url)
        return Response()

    monkeypatch.setattr(data.files.urllib.request, "urlopen", fake_urlopen)
    payload = _toy(monkeypatch, url="https://example.org/toy.csv")
    assert data.find_file("toy.csv") == repo / "data" / "toy.csv"
    assert calls == ["https://example.org/toy.csv"]
    _toy(monkeypatch, url=None)
    (repo / "data" / "toy.csv").unlink()
    with pytest.raises(VrlibError, match=r"no public download") as err:
        data.find_file("toy.csv")
    assert str(tmp_path / "shared" / "data") in str(err.value)
    assert calls == ["https://example.org/toy.csv"]  # no second download attempted
