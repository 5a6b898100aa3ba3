"""``vrlib audit`` on cases no benchmark names: a release that repeats one record many times.

A generator that memorises a record often writes it more than once.  The closeness of a record is
``log((d_nbr + eps) / (d_1 + eps))``; verbatim copies of one training record beyond the first used to
fill its neighbourhood (``k + 1`` of them made ``d_nbr = d_1 = 0``, so the most copied record scored 0 and was
never flagged; 3 copies already lost the flag that one copy got); now a released value counts once in the
neighbourhood, so a record released ``r`` times scores as one released once.  Small tables the tests make
themselves.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import vrlib
from vrlib.audit.inputs import NEAR_UNIQUE, check_tables
from vrlib.data import Schema

SCHEMA = Schema(["a", "c"], ["x", "y"])
FAST = dict(attacks=("copies", "distance"), wp29=False)


def population(n: int, seed: int) -> pd.DataFrame:
    """Two categorical and two continuous columns on a fine grid (no record repeats)."""
    rng = np.random.default_rng(seed)
    a = rng.choice(["p", "q", "r", "s"], n, p=[0.4, 0.3, 0.2, 0.1])
    c = rng.choice(["u", "v", "w"], n)
    x = rng.normal(size=n) + (a == "p")
    y = rng.gamma(2.0, size=n)
    return pd.DataFrame({"a": a, "c": c, "x": x.round(4), "y": y.round(4)})


@pytest.fixture(scope="module")
def split():
    pop = population(3400, 5)
    return pop.iloc[:600].reset_index(drop=True), pop.iloc[600:2400].reset_index(drop=True), pop.iloc[2400:]


def _release(other: pd.DataFrame, copied: pd.DataFrame, times: int, n: int = 1000) -> pd.DataFrame:
    """``n`` records: real records the generator never saw, then ``times`` verbatim copies of each row of ``copied``."""
    repeated = copied.loc[copied.index.repeat(times)]
    return pd.concat([other.iloc[: n - len(repeated)], repeated], ignore_index=True)


def _row(result, index: int) -> pd.Series:
    rec = result.records
    return rec.loc[rec["index"] == index].iloc[0]


def test_a_record_released_many_times_scores_as_one_released_once(split):
    train, holdout, other = split
    target = 3  # one training record, released k = 5 times and then 25 times
    five = vrlib.audit(train, _release(other, train.iloc[[target]], 5), holdout, SCHEMA, seed=0, **FAST)
    many = vrlib.audit(train, _release(other, train.iloc[[target]], 25), holdout, SCHEMA, seed=0, **FAST)
    ref, rep = _row(five, target), _row(many, target)
    assert (rep["copies"], rep["n_assigned"], ref["copies"]) == (25, 25, 5)
    # the 26th nearest released record is the first that is not a copy; Gower's distance to it (a changed
    # category counts 1, a continuous change its share of the range over the three tables, over F = 4 columns)
    release = _release(other, train.iloc[[target]], 25)
    ranges = pd.concat([train, holdout, release])[["x", "y"]].agg(np.ptp)
    rest, rec = release.iloc[:975], train.iloc[target]
    gower = (
        (rest[["a", "c"]] != rec[["a", "c"]]).sum(axis=1)
        + ((rest[["x", "y"]] - rec[["x", "y"]]).abs() / ranges).sum(axis=1)
    ) / 4
    eps = 1e-4 / 4
    # the copies beyond the first take no neighbourhood place: the 5 nearest other records make it
    nbr = np.sort(gower.to_numpy())[:5].mean()
    assert rep["d_neighbourhood"] == pytest.approx(nbr, rel=1e-6)
    assert rep["closeness"] == pytest.approx(np.log((nbr + eps) / eps), rel=1e-6)
    assert ref["d_neighbourhood"] == pytest.approx(rep["d_neighbourhood"], rel=0.05)  # as if released once
    # before 156171e: closeness 0, p-value about 0.5; the releases' other records differ (975 against 995)
    assert rep["p_value"] == pytest.approx(ref["p_value"], rel=0.25)
    assert rep["risk_rank"] <= 5 and ref["risk_rank"] <= 5


def test_a_holdout_record_released_many_times_flags_no_training_record(split):
    """The counter-case: the same treatment for a non-member, so its repeats lift the null, not a member."""
    train, holdout, other = split
    many = vrlib.audit(train, _release(other, holdout.iloc[[7]], 25), holdout, SCHEMA, seed=0, **FAST)
    assert many.summary["n_flagged"] == 0
    assert many.summary["n_verbatim"] == 0


def _gower(release: pd.DataFrame, record: pd.Series, ranges: pd.Series, columns: list[str]) -> pd.Series:
    """Gower's distance, written out: a changed category counts 1, a continuous change its share of the range."""
    cats = [c for c in columns if c in ("a", "c")]
    conts = [c for c in columns if c in ("x", "y")]
    diff = (release[cats] != record[cats]).sum(axis=1) if cats else 0
    return (diff + ((release[conts] - record[conts]).abs() / ranges[conts]).sum(axis=1)) / len(columns)


@pytest.mark.parametrize("assign", [True, False])
def test_more_verbatim_copies_never_give_less_evidence(split, assign):
    """r = 1..6 verbatim copies of one isolated training record: the copies beyond the first are not its
    neighbourhood, so its closeness is that of one copy (Gower's distance computed here) and its p-value
    does not rise with r.  Before, 5 copies filled 4 of the 5 neighbourhood places (closeness 7.00 at r = 1,
    about 0.8 at r = 5)."""
    train, holdout, other = split
    target, background = 3, other.iloc[:994]
    eps = {"all": 1e-4 / 4, "continuous": 1e-4 / 2}
    closeness, p = [], []
    for r in range(1, 7):
        release = pd.concat([background, train.iloc[[target]].loc[[target] * r]], ignore_index=True)
        res = vrlib.audit(train, release, holdout, SCHEMA, seed=0, assign=assign, **FAST)
        row = _row(res, target)
        ranges = pd.concat([train, holdout, release])[["x", "y"]].agg(np.ptp)
        for view, column, cols in (
            ("all", "closeness", ["a", "c", "x", "y"]),
            ("continuous", "closeness_continuous", ["x", "y"]),
        ):
            # the nearest released record is a copy (d_1 = 0); the neighbourhood is the 5 nearest of the others
            nbr = np.sort(_gower(background, train.iloc[target], ranges, cols).to_numpy())[:5].mean()
            assert row[column] == pytest.approx(np.log((nbr + eps[view]) / eps[view]), rel=1e-6), (r, view)
        assert row["copies"] == r and row["flagged"]
        closeness.append((row["closeness"], row["closeness_continuous"]))
        p.append(row["p_value"])
    assert np.all(np.diff(np.array(closeness), axis=0) >= -1e-9), closeness
    assert np.all(np.diff(p) <= 1e-12), p  # more leakage, no less evidence


@pytest.mark.parametrize("assign", [True, False])
def test_population_twins_released_repeatedly_flag_no_one(split, assign):
    """The counter-case: the generator's data holds twins of 1 in 30 training records and 1 in 30 holdout
    records (the population repeats them), and the release writes each twin r = 2..6 times.  Members and
    non-members are then in the same place, scored alike, so nothing may be flagged; were the holdout's
    repeats still filling its neighbourhood while the training records' no longer did, the training twins
    would top the null (with the holdout left as before, r = 5 flags 20 records, 21 without the assignment)."""
    train, holdout, other = split
    twins = pd.concat([train.iloc[100:120], holdout.iloc[100:160]])  # 20 of 600 and 60 of 1,800
    for r in range(2, 7):
        written = pd.concat([twins] * r)
        release = pd.concat([other.iloc[: 1000 - len(written)], written], ignore_index=True)
        res = vrlib.audit(train, release, holdout, SCHEMA, seed=0, assign=assign, **FAST)
        assert res.summary["n_flagged"] == 0, r


# --------------------------------------------------------------------------- a holdout shifted a little


@pytest.fixture(scope="module")
def mild_shift():
    """Training records and a holdout whose ``x`` is moved by 0.35 (a standard deviation's third): told apart
    with AUC 0.547 [0.521, 0.572], below the 0.55 at which a holdout is called shifted; the release is 990
    records of the training data's population and 10 verbatim training records."""
    pop = population(4000, 1)
    train, holdout = pop.iloc[:2000].reset_index(drop=True), pop.iloc[2000:].reset_index(drop=True)
    release = _release(population(1000, 9), train.iloc[:10], 1)
    return train, holdout, release


def test_a_holdout_told_apart_below_the_shift_threshold_is_named_and_the_flag_kept(mild_shift):
    train, holdout, release = mild_shift
    shifted = holdout.assign(x=holdout["x"] + 0.35)
    res = vrlib.audit(train, release, shifted, SCHEMA, seed=0, **FAST)
    check = res.summary["holdout_check"]
    assert not check["shift"] and check["ci_low"] > 0.5 and check["auc"] < 0.55
    codes = [w["code"] for w in res.summary["warnings"]]
    assert codes.count("holdout_difference") == 1 and "holdout_shift" not in codes
    message = next(w["message"] for w in res.summary["warnings"] if w["code"] == "holdout_difference")
    assert f"{check['auc']:.3f}" in message and "rather than a leak" in message
    assert not res.summary["flag_withheld"]  # the flag is kept: copies are flagged as with a trusted holdout
    assert 0 < res.summary["n_flagged"] == res.summary["n_flagged_if_holdout_trusted"]
    assert set(res.summary["at_risk"]) <= set(range(10))
    same = vrlib.audit(train, release, holdout, SCHEMA, seed=0, **FAST)  # the counter-case: the same population
    assert same.summary["holdout_check"]["ci_low"] <= 0.5
    assert "holdout_difference" not in [w["code"] for w in same.summary["warnings"]]


def test_a_membership_auc_above_half_is_qualified_by_a_holdout_told_apart():
    from vrlib.audit.release import disagreements

    shares = {"dcr_safe": True, "dcr_share": 0.5}
    auc = {"auc": 0.531, "ci_low": 0.516, "ci_high": 0.547}
    check = {"auc": 0.546, "ci_low": 0.523, "ci_high": 0.569}
    (plain,) = disagreements(shares, 0, 0, auc, 0.05)
    (qualified,) = disagreements(shares, 0, 0, auc, 0.05, holdout_check=check)
    assert plain.endswith("above 0.5.") and "difference" not in plain
    assert (
        qualified.startswith(plain[:-1]) and "0.546 [0.523, 0.569]" in qualified and "rather than a leak" in qualified
    )


# --------------------------------------------------------------------------- an identifier column


def test_an_identifier_column_is_not_called_a_respelling(split):
    """Customer numbers differ between the files by design: the advice to respell them is wrong there."""
    train, holdout, other = split
    release = _release(other, train.iloc[:5], 1, n=300)
    tables = [
        df.assign(id=[f"{tag}{i}" for i in range(len(df))])
        for df, tag in ((train, "T"), (release, "R"), (holdout.iloc[:300], "H"))
    ]
    tables[1].loc[295:, "id"] = tables[0]["id"].iloc[:5].to_numpy()  # the copies keep their identifier
    schema = Schema(["a", "c", "id"], ["x", "y"])
    with pytest.warns(UserWarning) as caught:
        check_tables(*tables, schema)
    messages = {getattr(w.message, "code", ""): str(w.message) for w in caught}
    assert "'id'" in messages["identifier_column"]
    assert "the holdout's 'id'" not in messages["unseen_categories"]  # every holdout id is new, as ids are
    assert "spelled otherwise" not in messages["unseen_categories"]
    # the counter-case: a column spelled otherwise throughout keeps the advice
    respelled = tables[2].assign(c=tables[2]["c"].map({"u": "U1", "v": "V1", "w": "W1"}))
    with pytest.warns(UserWarning) as caught:
        check_tables(tables[0], tables[1], respelled, schema)
    messages = {getattr(w.message, "code", ""): str(w.message) for w in caught}
    assert "the holdout's 'c'" in messages["unseen_categories"] and "spelled otherwise" in messages["unseen_categories"]
    assert "the holdout's 'id'" not in messages["unseen_categories"]


# --------------------------------------------------------------------------- a continuous column coded otherwise


def test_a_release_column_outside_the_training_range_is_named(split):
    """A year stamped on the release (2021 against the training data's constant 2020) hides every copy."""
    train, holdout, other = split
    release = _release(other, train.iloc[:5], 1, n=300)
    schema = Schema(["a", "c"], ["x", "y", "year"])
    tables = [df.assign(year=2020.0) for df in (train, release, holdout.iloc[:300])]
    stamped = tables[1].assign(year=2021.0)
    with pytest.warns(UserWarning) as caught:
        check_tables(tables[0], stamped, tables[2], schema)
    messages = {getattr(w.message, "code", ""): str(w.message) for w in caught}
    assert "the release's 'year' (2021 to 2021; training data 2020 to 2020)" in messages["values_out_of_range"]
    assert "holdout" not in messages["values_out_of_range"]
    # the counter-cases: the same values, and a release whose x is partly beyond the training range
    wider = tables[1].assign(x=tables[1]["x"] * 3)
    for release_ in (tables[1], wider):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_tables(tables[0], release_, tables[2], schema)
        assert "values_out_of_range" not in [getattr(w.message, "code", "") for w in caught]


# --------------------------------------------------------------------------- a near-unique text column


def _dates(n: int, distinct: int, seed: int) -> list[str]:
    """``n`` dates, ``distinct`` of them different: the first ``distinct`` days, then repeats of earlier ones."""
    days = list(range(distinct)) + list(np.random.default_rng(seed).choice(distinct, n - distinct, replace=False))
    return [str(pd.Timestamp("1950-01-01") + pd.Timedelta(days=int(d)))[:10] for d in days]


def _codes(*tables, schema):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_tables(*tables, schema)
    return [getattr(w.message, "code", "") for w in caught], {
        getattr(w.message, "code", ""): str(w.message) for w in caught
    }


def test_a_near_unique_text_column_is_named_once_with_its_share_and_the_way_to_leave_it_out(split):
    """Dates of birth, 93 % distinct (558 of 600): every record looks isolated and copies hide; not an identifier."""
    train, holdout, other = split
    release = _release(other, train.iloc[:5], 1, n=300)
    dob = _dates(len(train), 558, 0)
    assert len(set(dob)) / len(dob) == 0.93  # the share, counted apart from the audit
    tables = [
        train.assign(dob=dob),
        release.assign(dob=_dates(len(release), 290, 1)),
        holdout.iloc[:300].assign(dob=_dates(300, 290, 2)),
    ]
    schema = Schema(["a", "c", "dob"], ["x", "y"])
    codes, messages = _codes(*tables, schema=schema)
    assert codes.count("near_unique_column") == 1 and len(codes) == len(set(codes)), codes
    message = messages["near_unique_column"]
    assert "'dob' (93.0% of its 600 training values distinct)" in message, message
    assert "--ignore dob" in message and "drop them from the three tables and the schema" in message
    assert "identifier_column" not in codes
    # through vrlib.audit: summary.json lists it once, and the caller is warned once
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = vrlib.audit(*tables, schema, seed=0, **FAST)
    listed = [w["code"] for w in result.summary["warnings"]]
    assert listed.count("near_unique_column") == 1 and len(listed) == len(set(listed)), listed
    assert [getattr(w.message, "code", "") for w in caught].count("near_unique_column") == 1
    # two such columns: one warning naming both; a record number with repeats, new in the holdout, is not
    # called a column spelled otherwise (as an identifier is not)
    number = [f"R{i}" for i in range(570)] + [f"R{i}" for i in range(30)]
    tables = [
        tables[0].assign(no=number),
        tables[1].assign(no="R0"),
        tables[2].assign(no=[f"H{i}" for i in range(300)]),
    ]
    codes, messages = _codes(*tables, schema=Schema(["a", "c", "dob", "no"], ["x", "y"]))
    assert codes.count("near_unique_column") == 1, codes
    assert "'dob' (93.0%" in messages["near_unique_column"] and "'no' (95.0%" in messages["near_unique_column"]
    assert "--ignore dob,no" in messages["near_unique_column"]
    assert "the holdout's 'no'" not in messages["unseen_categories"]
    # the counter-cases: the same column below the share, a column distinct in every record (identifier_column
    # says so), continuous columns that are all distinct (x, y)
    for distinct, code in ((530, None), (600, "identifier_column")):
        tables = [
            train.assign(dob=_dates(600, distinct, 3)),
            release.assign(dob="x"),
            holdout.iloc[:300].assign(dob="y"),
        ]
        codes, _ = _codes(*tables, schema=schema)
        assert "near_unique_column" not in codes and (code is None or code in codes), (distinct, codes)
    assert train["x"].nunique() / len(train) >= NEAR_UNIQUE  # 598 of 600


@pytest.mark.parametrize("name", ["adult", "census", "california"])
def test_no_real_column_is_called_near_unique(name):
    """Small and larger samples of Adult's, Census's and California's real columns: none is named.

    Their categorical columns have at most 41 categories (Adult's native-country), most of them rare;
    their continuous columns (Adult's fnlwgt, California's coordinates) are often all distinct in a
    sample but are not categories.
    """
    from vrlib.data import load

    df, schema = load(name, **({"variant": "random10000"} if name == "census" else {}))
    rng = np.random.default_rng(1)
    highest = 0.0
    for n in (20, 50, 200, 1000):
        for _ in range(20 if n < 1000 else 2):
            rows = rng.choice(len(df), 3 * n, replace=False)
            tables = [df.iloc[rows[i * n : (i + 1) * n]] for i in range(3)]
            codes, _ = _codes(*tables, schema=schema)
            assert "near_unique_column" not in codes, (n, codes)
            highest = max([highest] + [tables[0][c].nunique() / n for c in schema.categorical])
    assert highest < NEAR_UNIQUE, highest  # the columns could not have been named: the counter-case is sound
    if name != "census":  # and some continuous column is near-unique in a sample, yet not named
        assert max(tables[0][c].nunique() / n for c in schema.continuous) >= NEAR_UNIQUE
