"""``vrlib audit`` on more of the files a custodian has: booleans written as 0/1, an empty column, a release
spelled otherwise throughout, numbers a person writes (dates, commas), and a holdout too small to flag.

Each case fails the way such files fail, and has its counter-case where the audit must not change what
it says.  Small tables the tests make themselves.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import vrlib
from vrlib.attacks.collision import occurs_in
from vrlib.audit.inputs import check_tables, read_tables
from vrlib.cli import main
from vrlib.data import Schema
from vrlib.errors import VrlibError

SCHEMA = Schema(["a", "b", "c"], ["x", "y"])
FAST = dict(attacks=("copies", "distance"), wp29=False)


def population(n: int, seed: int) -> pd.DataFrame:
    """Text categories (``b`` a boolean written ``True`` / ``False``), continuous values on a fine grid."""
    rng = np.random.default_rng(seed)
    a = rng.choice(["p", "q", "r", "s"], n, p=[0.4, 0.3, 0.2, 0.1])
    b = rng.random(n) < 0.5
    c = rng.choice(["u", "v", "w"], n)
    x = rng.normal(size=n) + (a == "p") + 2.0 * b
    y = rng.gamma(2.0, size=n)
    return pd.DataFrame({"a": a, "b": b.astype(str), "c": c, "x": x.round(4), "y": y.round(4)})


@pytest.fixture(scope="module")
def split():
    pop = population(2400, 3)
    return pop.iloc[:600].reset_index(drop=True), pop.iloc[600:1400].reset_index(drop=True), pop.iloc[1400:]


def _release(split, n=300, copies=10):
    train, _, other = split
    return pd.concat([other.iloc[: n - copies], train.iloc[:copies]], ignore_index=True)


def _write(tmp_path, **tables):
    for name, df in tables.items():
        df.to_csv(tmp_path / f"{name}.csv", index=False)
    return [tmp_path / f"{name}.csv" for name in tables]


# --------------------------------------------------------------------------- booleans


def test_booleans_written_as_1_and_0_are_the_training_spelling(split):
    train, holdout, _ = split
    release = _release(split)
    as_01 = release.assign(b=release["b"].map({"True": "1", "False": "0"}))
    info = {}
    t, s, h = check_tables(train, as_01, holdout.assign(b=holdout["b"].str.lower()), SCHEMA, info=info)
    assert info["respelled_categories"] == {"release": {"b": 300}, "holdout": {"b": 800}}
    assert info["unseen_categories"] == {}
    assert s["b"].astype(str).tolist() == release["b"].tolist()
    # read as the training spelling, the ten copies equal their training records again
    assert occurs_in(t, s, SCHEMA)[:10].all()
    # and a training column written 0/1 takes True/False from the release the same way
    info = {}
    _, s2, _ = check_tables(
        train.assign(b=train["b"].map({"True": "1", "False": "0"})), release, holdout.assign(b="0"), SCHEMA, info=info
    )
    assert info["respelled_categories"]["release"] == {"b": 300} and set(s2["b"].astype(str)) == {"0", "1"}


def test_words_that_are_not_booleans_stay_categories_of_their_own(split):
    train, holdout, _ = split
    release = _release(split)
    info = {}
    _, s, _ = check_tables(
        train, release.assign(b=release["b"].map({"True": "yes", "False": "no"})), holdout, SCHEMA, info=info
    )
    assert info["respelled_categories"] == {} and info["unseen_categories"] == {"release": {"b": 300}}
    # a training column holding both 1 and True: either could be meant, so neither is chosen
    both = train.assign(b=train["b"].where(train.index % 2 == 0, "1"))
    info = {}
    check_tables(both, release.assign(b="true"), holdout, SCHEMA, info=info)
    assert info["unseen_categories"]["release"] == {"b": 300}


def test_a_release_spelled_otherwise_throughout_is_named(split):
    train, holdout, _ = split
    release = _release(split)
    renamed = release.assign(c=release["c"].map({"u": "cat-u", "v": "cat-v", "w": "cat-w"}))
    with pytest.warns(UserWarning, match=r"no value of the release's 'c' is one the training data has") as rec:
        check_tables(train, renamed, holdout, SCHEMA)
    assert len([w for w in rec if "unseen" in str(w.message) or "never has" in str(w.message)]) == 1
    # a few new values beside the training ones: counted, not called a spelling of the whole column
    partly = release.copy()
    partly.loc[:4, "c"] = "z"
    with pytest.warns(UserWarning, match="never has") as rec:
        check_tables(train, partly, holdout, SCHEMA)
    assert not any("no value of" in str(w.message) for w in rec)


# --------------------------------------------------------------------------- an empty column


def test_a_column_empty_in_every_row_is_left_out_not_its_rows(split, tmp_path):
    train, holdout, _ = split
    release = _release(split).assign(y="")  # a generator that did not release y
    files = _write(tmp_path, t=train, s=release, h=holdout)
    with pytest.raises(VrlibError, match=r"no value at all in column\(s\) \['y'\]") as err:
        read_tables(*files, ["a", "b", "c"], ["x", "y"])
    assert "--ignore" in str(err.value) and "remove those rows" not in str(err.value)
    # left out of all three files, the audit runs on the columns they share
    t, s, h, schema = read_tables(*files, ["a", "b", "c"], ["x"], ignore=["y"])
    assert list(schema.columns) == ["a", "b", "c", "x"] and len(s) == 300
    # the same from DataFrames
    with pytest.raises(VrlibError, match=r"no value at all in column\(s\) \['y'\]"):
        check_tables(train, release.assign(y=np.nan), holdout, SCHEMA)


def test_a_few_missing_values_keep_the_advice_for_rows(split, tmp_path):
    train, holdout, _ = split
    release = _release(split).astype(str)
    release.loc[[2, 7], "y"] = ""
    files = _write(tmp_path, t=train, s=release, h=holdout)
    with pytest.raises(VrlibError, match="missing values in 2 row") as err:
        read_tables(*files, ["a", "b", "c"], ["x", "y"])
    assert "no value at all" not in str(err.value)


# --------------------------------------------------------------------------- numbers people write


@pytest.mark.parametrize(
    "values, hint",
    [
        (["2021-03-04", "2020-12-31"], "look like dates"),
        (["1,234.5", "12,000"], "thousands separators"),
        (["0,5", "-1,25"], "decimal commas"),
        (["n/a", "abc"], None),
    ],
)
def test_numbers_a_person_writes_are_refused_with_what_to_write(split, tmp_path, values, hint):
    train, holdout, _ = split
    bad = train.astype(str)
    bad.loc[: len(values) - 1, "x"] = values
    files = _write(tmp_path, t=bad, s=_release(split), h=holdout)
    with pytest.raises(VrlibError, match="non-numeric") as err:
        read_tables(*files, ["a", "b", "c"], ["x", "y"])
    text = str(err.value)
    if hint is None:
        assert "dates" not in text and "comma" not in text
    else:
        assert hint in text


# --------------------------------------------------------------------------- a small holdout


def test_a_holdout_too_small_to_flag_says_so(split):
    train, holdout, _ = split
    release = _release(split)
    small = vrlib.audit(train, release, holdout.iloc[:40], SCHEMA, seed=0, **FAST)
    codes = [w["code"] for w in small.summary["warnings"]]
    assert codes.count("holdout_small") == 1 and small.summary["n_flagged"] == 0
    assert small.summary["n_verbatim"] == 10  # the copies are there: unflagged is not safe
    enough = vrlib.audit(train, release, holdout, SCHEMA, seed=0, **FAST)
    assert "holdout_small" not in [w["code"] for w in enough.summary["warnings"]]
    assert set(range(10)) <= set(enough.summary["at_risk"])


def test_help_describes_the_files_a_custodian_gives(capsys):
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    text = capsys.readouterr().out
    for needle in (".gz", "';'", "any order", "--ignore", "true or 1 for True", "thousands", "holdout_small"):
        assert needle in text, needle


# --------------------------------------------------------------------------- columns


def test_fields_written_with_a_blank_after_each_comma_read_as_plain_commas(split, tmp_path):
    """As the UCI Adult files are written: "39, State-gov, 77516": the header's names and values lose the blank."""
    train, holdout, _ = split
    release = _release(split)
    plain = _write(tmp_path, t=train, s=release, h=holdout)
    for name, df in (("t2", train), ("s2", release), ("h2", holdout)):
        text = df.astype(str).to_csv(index=False).replace(",", ", ")
        (tmp_path / f"{name}.csv").write_text(text)
    spaced = [tmp_path / f"{n}.csv" for n in ("t2", "s2", "h2")]
    one = read_tables(*plain, ["a", "b", "c"], ["x", "y"])
    two = read_tables(*spaced, ["a", "b", "c"], ["x", "y"])
    for a, b in zip(one[:3], two[:3]):
        pd.testing.assert_frame_equal(a, b)


def test_a_column_the_release_lacks_says_how_to_leave_it_out(split, tmp_path):
    train, holdout, _ = split
    files = _write(tmp_path, t=train, s=_release(split).drop(columns="y"), h=holdout)
    with pytest.raises(VrlibError, match="has no column 'y'") as err:
        read_tables(*files, ["a", "b", "c"], ["x", "y"])
    assert "--ignore" in str(err.value) and str(err.value).startswith("release")
    t, s, h, schema = read_tables(*files, ["a", "b", "c"], ["x"], ignore=["y"])
    assert list(t.columns) == list(s.columns) == list(h.columns) == ["a", "b", "c", "x"]


def test_a_failed_tail_on_a_large_holdout_does_not_ask_for_a_larger_one(split, monkeypatch):
    from vrlib.audit import evidence

    real_check = evidence.NullTail.check
    monkeypatch.setattr(
        evidence.NullTail, "check", lambda self, *a, **k: {**real_check(self, *a, **k), "passed": False}
    )
    train, holdout, _ = split
    res = vrlib.audit(train.iloc[:300], _release(split), holdout, SCHEMA, seed=0, **FAST)
    small = [w["message"] for w in res.summary["warnings"] if w["code"] == "holdout_small"]
    assert len(small) == 1 and "tail_miscalibrated" in small[0] and "larger holdout" not in small[0]


# --------------------------------------------------------------------------- a high-cardinality column


def _with_postcodes(n: int, seed: int, codes) -> pd.DataFrame:
    df = population(n, seed)
    df["postcode"] = [f"P{v:03d}" for v in codes]
    return df


def test_a_holdout_from_other_postcodes_is_called_shifted():
    """400 postcodes: one-hot, each is a column seen a few times, and the classifier learnt nothing from them
    (a holdout from half the postcodes gave AUC 0.51); as one categorical column it tells them apart."""
    from vrlib.audit.holdout import holdout_check

    schema = Schema(["a", "b", "c", "postcode"], ["x", "y"])
    rng = np.random.default_rng(0)
    train = _with_postcodes(3000, 1, rng.integers(0, 400, 3000))
    same = _with_postcodes(3000, 2, rng.integers(0, 400, 3000))
    other = _with_postcodes(3000, 3, rng.integers(0, 200, 3000))  # another region: half the postcodes
    release = _with_postcodes(300, 4, rng.integers(0, 400, 300))
    t, _, h = check_tables(train, release, same, schema)
    assert not holdout_check(t, h, schema)["shift"]
    t, _, h = check_tables(train, release, other, schema)
    res = holdout_check(t, h, schema)
    assert res["shift"] and res["auc"] > 0.6
