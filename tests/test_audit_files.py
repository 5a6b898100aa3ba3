"""``vrlib audit`` on the files a custodian really has: spellings, identifiers, separators, extra columns.

Every case is built to fail the way such files fail: a release that writes category ``1``
as ``1.0`` or ``True`` as ``true`` (copies of training records must still be found), an
identifier column (it must be named), a file written with ``;`` or tabs, a column one file
alone has, a column named twice, a population that repeats its records (verbatim
occurrences of non-members must not be read as copying), and a shifted holdout (no
sentence may promise a flag).  Each has its counter-case where the audit must not change
what it says.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import vrlib
from vrlib.audit.inputs import check_tables, read_tables
from vrlib.audit.release import disagreements, verbatim_excess
from vrlib.audit.report import render_html
from vrlib.cli import main
from vrlib.data import Schema
from vrlib.errors import VrlibError

SCHEMA = Schema(["a", "b", "c"], ["x", "y"])
FAST = dict(attacks=("copies", "distance"), wp29=False)


def population(n: int, seed: int, shifted: bool = False) -> pd.DataFrame:
    """Integer-coded ``a``, boolean ``b``, text ``c``; continuous values on a fine grid."""
    rng = np.random.default_rng(seed)
    a = rng.choice([0, 1, 2, 3], n, p=[0.4, 0.3, 0.2, 0.1])
    b = rng.random(n) < (0.9 if shifted else 0.5)
    c = rng.choice(["u", "v", "w"], n)
    x = rng.normal(size=n) + (a == 0) + 2.0 * b
    y = rng.gamma(2.0, size=n)
    return pd.DataFrame({"a": a, "b": b, "c": c, "x": x.round(4), "y": y.round(4)})


@pytest.fixture(scope="module")
def split():
    pop = population(3000, 7)
    return (pop.iloc[:600].reset_index(drop=True), pop.iloc[600:1400].reset_index(drop=True), pop.iloc[1400:])


def _as_text(df: pd.DataFrame) -> pd.DataFrame:
    """The table as a CSV reader gives it: every value a string."""
    return df.astype(str)


# --------------------------------------------------------------------------- spellings


def test_release_spelling_categories_otherwise_still_shows_its_copies(split):
    train, holdout, other = split
    release = pd.concat([other.iloc[:590], train.iloc[:10]], ignore_index=True)
    spelled = _as_text(release).assign(
        a=lambda d: d["a"] + ".0",  # 1 -> "1.0", as a float column writes it
        b=lambda d: d["b"].str.lower(),  # True -> "true"
    )
    res = vrlib.audit(_as_text(train), spelled, _as_text(holdout), SCHEMA, seed=0, **FAST)
    s = res.summary
    assert s["respelled_categories"] == {"release": {"a": 600, "b": 600}}
    assert s["unseen_categories"] == {}
    assert [w["code"] for w in s["warnings"]].count("respelled_categories") == 1
    # read as the training spelling, the ten copies are verbatim again (as unseen categories none was)
    assert s["n_verbatim"] == 10
    same = vrlib.audit(_as_text(train), _as_text(release), _as_text(holdout), SCHEMA, seed=0, **FAST)
    assert same.summary["respelled_categories"] == {} and same.summary["n_verbatim"] == 10
    assert res.records["p_value"].tolist() == same.records["p_value"].tolist()


def test_respelling_leaves_new_and_ambiguous_categories_alone(split):
    train, holdout, other = split
    t, h = _as_text(train), _as_text(holdout)
    release = _as_text(other.iloc[:300]).reset_index(drop=True)
    release.loc[:4, "c"] = "U "  # blanks and case: read as "u"
    release.loc[5:9, "c"] = "z"  # a new category: audited as its own, counted
    info = {}
    _, s, _ = check_tables(t, release, h, SCHEMA, info=info)
    assert info["respelled_categories"] == {"release": {"c": 5}}
    assert info["unseen_categories"] == {"release": {"c": 5}}
    assert s["c"].iloc[:5].tolist() == ["u"] * 5 and s["c"].iloc[5:10].tolist() == ["z"] * 5
    # two training spellings of one number: "1.0" is no more one than the other, so it stays unseen
    t2 = t.copy()
    t2.loc[:3, "a"] = "1.0"
    s2 = release.assign(a=release["a"].where(release.index > 2, "1.00"))
    info = {}
    _, s2, _ = check_tables(t2, s2, h, SCHEMA, info=info)
    assert info["unseen_categories"]["release"]["a"] == 3 and "a" not in info["respelled_categories"]["release"]


# --------------------------------------------------------------------------- identifiers, names


def test_identifier_columns_are_named(split):
    train, holdout, other = split
    schema = Schema(["a", "b", "c", "id"], ["x", "y", "row"])

    def add(df, start):
        return df.assign(id=[f"p{start + i}" for i in range(len(df))], row=np.arange(len(df), dtype=float))

    with pytest.warns(vrlib.audit.inputs.AuditWarning, match=r"'id' \(a different.*'row' \(the consecutive"):
        check_tables(add(train, 0), add(other.iloc[:300], 10**6), add(holdout, 2 * 10**6), schema)
    # counter-case: a continuous column of distinct values that is no row number, a repeating category
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        info = {}
        check_tables(train, other.iloc[:300], holdout, SCHEMA, info=info)
    assert info["respelled_categories"] == {} and train["x"].nunique() > 0.9 * len(train)


def test_column_named_twice_is_refused(split, tmp_path):
    train, holdout, other = split
    with pytest.raises(VrlibError, match=r"\['a'\] are named more than once in --categorical"):
        check_tables(train, other.iloc[:300], holdout, Schema(["a", "b", "c", "a"], ["x", "y"]))
    for name, df in (("t", train), ("s", other.iloc[:300]), ("h", holdout)):
        df.to_csv(tmp_path / f"{name}.csv", index=False)
    files = [tmp_path / f"{n}.csv" for n in "tsh"]
    with pytest.raises(VrlibError, match=r"\['y'\] are named more than once in --continuous"):
        read_tables(*files, ["a", "b", "c"], ["x", "y", "y"])


# --------------------------------------------------------------------------- files


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_other_separators_read_as_commas(split, tmp_path, sep):
    train, holdout, other = split
    for name, df in (("t", train), ("s", other.iloc[:300]), ("h", holdout)):
        df.to_csv(tmp_path / f"{name}.csv", index=False)
        df.to_csv(tmp_path / f"{name}_sep.csv", index=False, sep=sep)
    # one file with ';' beside two with commas, as files from several tools are
    comma = read_tables(*[tmp_path / f"{n}.csv" for n in "tsh"], ["a", "b", "c"], ["x", "y"])
    other_sep = read_tables(
        tmp_path / "t_sep.csv", tmp_path / "s.csv", tmp_path / "h_sep.csv", ["a", "b", "c"], ["x", "y"]
    )
    for one, two in zip(comma[:3], other_sep[:3]):
        pd.testing.assert_frame_equal(one, two)


def test_ignore_drops_a_column_one_file_alone_has(split, tmp_path):
    train, holdout, other = split
    train.assign(person_id=np.arange(len(train))).to_csv(tmp_path / "t.csv", index=False)
    other.iloc[:300].to_csv(tmp_path / "s.csv", index=False)
    holdout[["y", "c", "x", "b", "a"]].to_csv(tmp_path / "h.csv", index=False)  # another column order
    files = [tmp_path / f"{n}.csv" for n in "tsh"]
    with pytest.raises(VrlibError, match="--ignore") as err:
        read_tables(*files, ["a", "b", "c"], ["x", "y"])
    assert "vrlib rank" not in str(err.value)
    t, s, h, schema = read_tables(*files, ["a", "b", "c"], ["x", "y"], ignore=["person_id"])
    assert list(t.columns) == list(h.columns) == list(schema.columns) and len(t) == len(train)
    with pytest.raises(VrlibError, match=r"none of the three files has"):
        read_tables(*files, ["a", "b", "c"], ["x", "y"], ignore=["person_id", "nope"])
    with pytest.raises(VrlibError, match="both declared and ignored"):
        read_tables(*files, ["a", "b", "c"], ["x", "y"], ignore=["x", "person_id"])


def test_missing_value_advice_does_not_send_the_user_in_a_circle(split, tmp_path):
    train, holdout, other = split
    bad = _as_text(train)
    bad.loc[[3, 8], "x"] = "?"
    bad.to_csv(tmp_path / "t.csv", index=False)
    other.iloc[:300].to_csv(tmp_path / "s.csv", index=False)
    holdout.to_csv(tmp_path / "h.csv", index=False)
    files = [tmp_path / f"{n}.csv" for n in "tsh"]
    with pytest.raises(VrlibError, match="non-numeric") as err:
        read_tables(*files, ["a", "b", "c"], ["x", "y"])
    assert "name its missing-value spellings" not in str(err.value)  # that makes them missing: refused too
    with pytest.raises(VrlibError, match="missing values") as err:
        read_tables(*files, ["a", "b", "c"], ["x", "y"], na_values=["?"])
    assert "name the spellings of a missing value with --na-values" not in str(err.value)


# --------------------------------------------------------------------------- what the report says


def test_verbatim_non_members_are_not_read_as_copying():
    rng = np.random.default_rng(3)
    pop = pd.DataFrame({c: rng.choice(["p", "q"], 2400) for c in "abc"})  # 8 patterns: every record repeats
    schema = Schema(["a", "b", "c"], [])
    train, holdout, release = pop.iloc[:600], pop.iloc[600:1400], pop.iloc[1400:2000]
    res = vrlib.audit(train, release, holdout, schema, seed=0, **FAST)
    s = res.summary
    assert s["n_verbatim"] == 600 and s["n_verbatim_null"] == s["settings"]["n_null"]
    assert s["verbatim_excess"] is False and s["n_flagged"] == 0
    assert not any("copied verbatim" in sentence for sentence in s["disagreements"])
    page = render_html(res)
    assert "does not show copying" in page and f"against {s['n_verbatim_null']:,} of the" in page
    # counter-case: training records verbatim where non-members are not
    assert verbatim_excess(80, 400, 0, 1000) and not verbatim_excess(400, 400, 1000, 1000)
    shares = {"dcr_safe": True, "dcr_share": 0.5}
    auc = {"auc": 0.5, "ci_low": 0.45, "ci_high": 0.55}
    assert any("copied verbatim" in x for x in disagreements(shares, 80, 0, auc, 0.05, 400, 0, 1000))
    assert not disagreements(shares, 400, 0, auc, 0.05, 400, 1000, 1000)


def test_shifted_holdout_no_sentence_promises_a_flag(split, tmp_path, capsys):
    train, _, other = split
    shifted = population(2000, 8, shifted=True).iloc[:800]
    release = pd.concat([other.iloc[:290], train.iloc[:10]], ignore_index=True)
    for name, df in (("t", train), ("s", release), ("h", shifted)):
        df.to_csv(tmp_path / f"{name}.csv", index=False)
    args = ["audit", "--train", str(tmp_path / "t.csv"), "--synthetic", str(tmp_path / "s.csv")]
    args += ["--holdout", str(tmp_path / "h.csv"), "--categorical", "a,b,c", "--continuous", "x,y"]
    args += ["--attacks", "copies,distance", "--no-wp29", "--out", str(tmp_path / "out")]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    s = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert s["flag_withheld"] and s["n_flagged"] == 0 and s["n_flagged_if_holdout_trusted"] > 0
    assert out[0].startswith("no record flagged: the holdout is not a sample") and "not a leak" in out[0]
    assert s["flag_resolution"]["note"].startswith("No record is flagged while the holdout")
    assert out[1] == s["flag_resolution"]["note"]


# --------------------------------------------------------------------------- the holdout check


def test_holdout_check_interval_holds_on_correct_splits():
    """On correctly split holdouts the AUC's spread must match its standard error (z-scores with sd 1).

    Scores pooled over k-fold cross-validation come from models that share training records;
    their DeLong interval was too narrow (z-scores with sd about 1.4: false holdout_shift
    warnings, which withhold every flag).
    """
    from vrlib.audit.holdout import holdout_check

    z = []
    for rep in range(40):
        pop = population(800, 100 + rep)
        train, _, holdout = check_tables(pop.iloc[:400], pop.iloc[:50], pop.iloc[400:], SCHEMA)
        res = holdout_check(train, holdout, SCHEMA, seed=rep)
        se = (res["ci_high"] - res["ci_low"]) / (2 * 1.959963984540054)  # as the interval states it
        z.append((res["auc"] - 0.5) / se)
    assert abs(np.mean(z)) < 0.6 and np.std(z) < 1.25, (np.mean(z), np.std(z))
    # and it still sees a shift: a holdout of another population
    pop = population(800, 1)
    train, _, shifted = check_tables(pop.iloc[:400], pop.iloc[:50], population(400, 2, shifted=True), SCHEMA)
    res = holdout_check(train, shifted, SCHEMA, seed=0)
    assert res["shift"] and res["ci_low"] > 0.55


def test_threat_model_without_wp29_is_refused(split):
    train, holdout, other = split
    with pytest.raises(VrlibError, match="drop --no-wp29"):
        vrlib.audit(train, other.iloc[:300], holdout, SCHEMA, secret="zz", **FAST)
    with pytest.raises(VrlibError, match="drop --no-wp29"):
        vrlib.audit(train, other.iloc[:300], holdout, SCHEMA, known=["a"], **FAST)


def _codes(*args, **kwargs):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        info = {}
        check_tables(*args, info=info, **kwargs)
    return [getattr(w.message, "code", None) for w in caught], info


def test_holdout_holding_training_records_is_told_from_population_duplicates(split):
    train, holdout, other = split
    release = other.iloc[:300]
    # the same file twice, and a split made after training (half the holdout are training records)
    for mixed in (train, pd.concat([train.iloc[:300], holdout.iloc[:300]], ignore_index=True)):
        codes, info = _codes(train, release, mixed, SCHEMA)
        assert codes == ["holdout_overlap"], codes
    # counter-case: a population that repeats its records (drawn with replacement), split correctly:
    # the holdout shares rows with the training data as often as training records share them
    rng = np.random.default_rng(4)
    pool = population(500, 9)
    drawn = pool.iloc[rng.integers(0, len(pool), 3000)].reset_index(drop=True)
    codes, info = _codes(drawn.iloc[:1000], drawn.iloc[2000:2300], drawn.iloc[1000:2000], SCHEMA)
    assert codes == ["holdout_duplicates"] and info["n_holdout_in_train"] > 500, (codes, info)
    assert info["n_train_repeated"] > 500


def test_unnamed_row_index_column_is_left_out(split, tmp_path):
    train, holdout, other = split
    release = other.iloc[:300]  # its index starts at 1400: written as pandas writes it by default
    train.to_csv(tmp_path / "t.csv", index=False)
    release.to_csv(tmp_path / "s.csv")
    holdout.to_csv(tmp_path / "h.csv", index=False)
    t, s, h, _ = read_tables(*[tmp_path / f"{n}.csv" for n in "tsh"], ["a", "b", "c"], ["x", "y"])
    assert list(s.columns) == ["a", "b", "c", "x", "y"] and s.index.tolist() == list(range(300))
    assert s["x"].tolist() == release["x"].tolist()
    # a named first column is data: undeclared, it is refused as before
    release.rename_axis("rowid").to_csv(tmp_path / "s.csv")
    with pytest.raises(VrlibError, match=r"\['rowid'\] are neither"):
        read_tables(*[tmp_path / f"{n}.csv" for n in "tsh"], ["a", "b", "c"], ["x", "y"])


# --------------------------------------------------------------------------- warnings once


def test_tails_failing_in_several_views_give_one_warning(split, monkeypatch):
    """Each warning code appears once in summary.json, however many views' tail models fail their check."""
    from vrlib.audit import evidence

    real_check = evidence.NullTail.check

    def failing(self, *args, **kwargs):
        return {**real_check(self, *args, **kwargs), "passed": False}

    monkeypatch.setattr(evidence.NullTail, "check", failing)
    train, holdout, other = split
    result = vrlib.audit(train, other.iloc[:600], holdout, SCHEMA, seed=0, **FAST)
    codes = [w["code"] for w in result.summary["warnings"]]
    assert codes.count("tail_miscalibrated") == 1
    message = next(w["message"] for w in result.summary["warnings"] if w["code"] == "tail_miscalibrated")
    assert "(all view)" in message and "(continuous view)" in message
