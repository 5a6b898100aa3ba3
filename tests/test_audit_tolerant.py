"""The audit's tolerant flag (``tolerant=True``): a copy with one category changed is a copy, one with two is not.

Built to make it say yes (training records released with one category changed, on a
mixed table and on an all-categorical one) and no (null releases; released records that
differ from a training record in two categories, which the view must not take for
copies), with the tolerant distances checked against a brute-force Gower computation.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from test_audit_flags import at_most_level
from test_audit_matches import SPARSE, VALUES, sparse_population
from test_audit_resolution import SCHEMA as MIXED
from test_audit_resolution import planted_release, population

import vrlib
from vrlib.audit.evidence import TOLERANT_CANDIDATES, copy_evidence, gower_view, tolerant_distances
from vrlib.audit.inputs import check_tables
from vrlib.encoding import TableEncoder

FAST = dict(attacks=("copies", "distance"), wp29=False)


def brute_gower(query: pd.DataFrame, release: pd.DataFrame, schema, span) -> tuple[np.ndarray, np.ndarray]:
    """Gower distances (n_query, n_release) by hand, and the number of differing categories."""
    q = query.astype({c: object for c in schema.categorical})
    r = release.astype({c: object for c in schema.categorical})
    n_diff = sum((q[c].to_numpy()[:, None] != r[c].to_numpy()[None, :]).astype(float) for c in schema.categorical)
    cont = sum(
        np.abs(q[c].to_numpy(float)[:, None] - r[c].to_numpy(float)[None, :]) / span[c] for c in schema.continuous
    )
    return (n_diff + cont) / len(schema.columns), n_diff


def brute_tolerant(query, release, schema, span) -> np.ndarray:
    g, n_diff = brute_gower(query, release, schema, span)
    return np.where(n_diff > 0, g - 1.0 / len(schema.columns), g)


def change(df: pd.DataFrame, rows, columns, rng) -> pd.DataFrame:
    """``df`` with, in each of ``rows``, one category of each column in ``columns[i]`` changed."""
    out = df.copy()
    for i, cols in zip(rows, columns):
        for c in cols:
            values = sorted(set(df[c].astype(object)) - {out.at[i, c]})
            out.at[i, c] = values[rng.integers(len(values))]
    return out


@pytest.fixture(scope="module")
def mixed():
    pop = population(9000, 1)
    return pop.iloc[:1000].reset_index(drop=True), pop.iloc[1000:4000].reset_index(drop=True), pop.iloc[4000:]


def test_tolerant_distances_by_brute_force(mixed):
    train, holdout, other = mixed
    rng = np.random.default_rng(3)
    query = train.iloc[:40].reset_index(drop=True)
    # released: 10 records with one category changed, 10 with two, 10 exact copies, 30 others
    cat = list(MIXED.categorical)
    one = change(query.iloc[:10], range(10), [[cat[rng.integers(4)]] for _ in range(10)], rng)
    two = change(query.iloc[10:20], range(10, 20), [list(rng.choice(cat, 2, replace=False)) for _ in range(10)], rng)
    release = pd.concat([one, two, query.iloc[20:30], other.iloc[:30]], ignore_index=True)
    query, release, _ = check_tables(query, release, holdout, MIXED)
    enc = TableEncoder(MIXED).fit(pd.concat([query, release], ignore_index=True))
    q, _ = gower_view(enc, query)
    r, _ = gower_view(enc, release)
    # every released record a candidate, one position twice (it counts once)
    cand = np.tile(np.arange(len(release)), (len(query), 1))
    cand = np.hstack([cand, cand[:, :1]])
    got = tolerant_distances(q, r, cand, len(MIXED.columns))
    span = {c: float(np.ptp(pd.concat([query, release])[c].to_numpy(float))) for c in MIXED.continuous}
    want = brute_tolerant(query, release, MIXED, span)
    assert np.allclose(got[:, :-1], want)
    assert np.isinf(got[:, -1]).all()
    f = len(MIXED.columns)
    assert np.allclose(got[np.arange(10), np.arange(10)], 0.0)  # one category changed: a copy
    assert np.allclose(got[np.arange(10, 20), np.arange(10, 20)], 1.0 / f)  # two changed: one still counts
    assert np.allclose(got[np.arange(20, 30), np.arange(20, 30)], 0.0)  # exact copies


def test_tolerant_view_is_brute_force_where_every_released_record_is_a_candidate(mixed):
    # a release of TOLERANT_CANDIDATES records: the searches return all of them, so the view is exact
    train, holdout, other = mixed
    rng = np.random.default_rng(4)
    n_rel = TOLERANT_CANDIDATES
    cols = [[list(MIXED.categorical)[rng.integers(4)]] for _ in range(5)]
    release = pd.concat([change(train.iloc[:5], range(5), cols, rng), other.iloc[: n_rel - 5]], ignore_index=True)
    tr, rel, ho = check_tables(train.iloc[:300].reset_index(drop=True), release, holdout.iloc[:400], MIXED)
    ev, ev_ho, info = copy_evidence(tr, ho, rel, MIXED, k=3, tolerant=True)
    full = pd.concat([tr, ho, rel], ignore_index=True)
    span = {c: float(np.ptp(full[c].to_numpy(float))) for c in MIXED.continuous}
    eps = 0.0001 / len(MIXED.columns)
    for got, table in ((ev, tr), (ev_ho, ho)):
        d = np.sort(brute_tolerant(table, rel, MIXED, span), axis=1)
        want = np.log((d[:, 1:4].mean(axis=1) + eps) / (d[:, 0] + eps))
        assert np.allclose(got["closeness_tolerant"], want)
    # the five near-copies: at 1/F over all columns, at 0 in the tolerant view
    assert np.allclose(ev.loc[:4, "d_release"], 1.0 / len(MIXED.columns))
    d = np.sort(brute_tolerant(tr.iloc[:5], rel, MIXED, span), axis=1)
    assert np.allclose(d[:, 0], 0.0)
    # the flag's statistic is the largest closeness of the three views, one p-value with no Bonferroni factor
    views = ev[["closeness", "closeness_continuous", "closeness_tolerant"]].to_numpy()
    assert np.allclose(ev["effect"], views.max(axis=1))
    tail = info["views"]["combined"]["tail"]
    assert np.allclose(ev["p_value"], tail.pvalues(views.max(axis=1)))
    assert info["flag"] == "combined"


def test_one_category_copies_flagged_on_a_categorical_table():
    # no continuous view: over all columns a changed category is 1/12 away, in the tolerant view 0
    pop = sparse_population(7000, 4)
    train, holdout, other = pop.iloc[:1000].reset_index(drop=True), pop.iloc[1000:4000], pop.iloc[4000:]
    rng = np.random.default_rng(0)
    idx = rng.choice(len(train), 40, replace=False)
    one = change(train.iloc[idx[:20]], idx[:20], [[f"c{rng.integers(12)}"] for _ in range(20)], rng)
    pairs = [[f"c{j}" for j in rng.choice(12, 2, replace=False)] for _ in range(20)]
    two = change(train.iloc[idx[20:]], idx[20:], pairs, rng)
    release = pd.concat([other.iloc[:1960], one, two], ignore_index=True)
    holdout = holdout.reset_index(drop=True)
    rec = vrlib.audit(train, release, holdout, SPARSE, seed=0, tolerant=True, **FAST).records.set_index("index")
    assert rec.loc[idx[:20], "flagged"].mean() >= 0.8
    # the tolerant view puts one changed category at 0 and two at 1/12: a copy, and a record 1/12 away
    eps = 0.0001 / 12
    copy = np.log((rec.loc[idx, "d_neighbourhood"] + eps) / eps)
    assert np.allclose(rec.loc[idx[:20], "closeness_tolerant"], copy[:20], atol=np.log(2))
    assert (rec.loc[idx[20:], "closeness_tolerant"] < copy[20:] - 3).all()


def test_two_category_copies_are_not_copies_where_non_members_have_such_twins(mixed):
    # the case built to fool the view: the release holds training records with two categories changed, and
    # holdout records (non-members) changed alike at the same rate (2 %), as a generator reproducing
    # population near-twins with their categories resampled does: nothing tells those members apart
    train, holdout, other = mixed
    rng = np.random.default_rng(6)
    cat = list(MIXED.categorical)
    h = rng.choice(len(holdout), 60, replace=False)
    idx = rng.choice(len(train), 40, replace=False)
    twins = change(holdout.iloc[h], holdout.index[h], [list(rng.choice(cat, 2, replace=False)) for _ in h], rng)
    two = change(train.iloc[idx[:20]], idx[:20], [list(rng.choice(cat, 2, replace=False)) for _ in range(20)], rng)
    one = change(train.iloc[idx[20:]], idx[20:], [[cat[rng.integers(4)]] for _ in range(20)], rng)
    release = pd.concat([other.iloc[:1900], twins, two, one], ignore_index=True)
    res = vrlib.audit(train, release, holdout, MIXED, seed=0, tolerant=True, **FAST)
    rec = res.records.set_index("index")
    assert not rec.loc[idx[:20], "flagged"].any()  # two categories changed: no copy
    assert rec["flagged"].sum() - rec.loc[idx[20:], "flagged"].sum() <= 1
    # in the tolerant view the one-category copies stand above every two-category copy and every holdout record
    tr, rel, ho = check_tables(train, release, holdout, MIXED)
    _, ev_ho, _ = copy_evidence(tr, ho, rel, MIXED, tolerant=True)
    top = max(ev_ho["closeness_tolerant"].max(), rec.loc[idx[:20], "closeness_tolerant"].max())
    assert (rec.loc[idx[20:], "closeness_tolerant"] > top).all()
    # and the holdout's twins sit where the two-category copies do (1/F away in the tolerant view)
    assert ev_ho.loc[h, "closeness_tolerant"].median() < 3 and rec.loc[idx[:20], "closeness_tolerant"].median() < 3


def test_mixed_table_near_copies_flagged_and_two_category_copies_not_at_copy_level(mixed):
    train, holdout, other = mixed
    release, idx = planted_release(train, other, np.random.default_rng(2), n_exact=10, n_cont=10, n_cat=10)
    res = vrlib.audit(train, release, holdout, MIXED, seed=0, tolerant=True, **FAST)
    rec, s = res.records.set_index("index"), res.summary
    assert s["settings"]["tolerant"] is True and "combined" in s["copy_evidence"]["views"]
    assert rec.loc[idx, "flagged"].mean() >= 0.8
    false = int(rec["flagged"].sum() - rec.loc[idx, "flagged"].sum())
    assert false <= max(1, 0.1 * rec["flagged"].sum())
    # one category changed: at 0 in the tolerant view (closeness of a copy), found by the shared searches
    cat = rec.loc[idx[20:]]
    assert (cat["closeness_tolerant"] > cat["closeness"] + 3).all()
    # two categories changed: the tolerant view sees a record 1/F away, no copy
    rng = np.random.default_rng(5)
    cols = [list(rng.choice(list(MIXED.categorical), 2, replace=False)) for _ in range(10)]
    two = change(train.iloc[idx[:10]], idx[:10], cols, rng)
    release2 = pd.concat([other.iloc[:1990], two], ignore_index=True)
    tr, rel, ho = check_tables(train, release2, holdout, MIXED)
    ev, _, _ = copy_evidence(tr, ho, rel, MIXED, tolerant=True)
    full = pd.concat([tr, ho, rel], ignore_index=True)
    span = {c: float(np.ptp(full[c].to_numpy(float))) for c in MIXED.continuous}
    d = brute_tolerant(tr.iloc[idx[:10]], rel.iloc[1990:], MIXED, span)
    assert np.allclose(np.diag(d), 1.0 / len(MIXED.columns))  # its own two-category copy: 1/F, not 0
    eps = 0.0001 / len(MIXED.columns)
    copy_level = np.log((ev.loc[idx[:10], "d_neighbourhood"] + eps) / eps)
    assert (ev.loc[idx[:10], "closeness_tolerant"] < copy_level - 3).all()


def test_null_releases_flag_nothing(mixed):
    train, holdout, other = mixed
    res = vrlib.audit(train, other.iloc[:2000], holdout, MIXED, seed=0, tolerant=True, **FAST)
    assert res.summary["n_flagged"] == 0
    for t in (0.01, 0.05, 0.2):
        assert at_most_level(res.records["p_value"], t)
    pop = sparse_population(7000, 4)
    tr, ho, ot = pop.iloc[:1000], pop.iloc[1000:4000], pop.iloc[4000:6000]
    res = vrlib.audit(tr, ot, ho, SPARSE, seed=0, tolerant=True, **FAST)
    assert res.summary["n_flagged"] == 0
    for t in (0.01, 0.05, 0.2):
        assert at_most_level(res.records["p_value"], t)
    assert set(VALUES) >= set(np.unique(tr.to_numpy()))


def test_cli_tolerant_writes_a_report(mixed, tmp_path):
    from vrlib.cli import main

    train, holdout, other = mixed
    for name, df in (("train", train.iloc[:400]), ("release", other.iloc[:500]), ("holdout", holdout.iloc[:600])):
        df.to_csv(tmp_path / f"{name}.csv", index=False)
    argv = ["audit", "--train", str(tmp_path / "train.csv"), "--synthetic", str(tmp_path / "release.csv")]
    argv += ["--holdout", str(tmp_path / "holdout.csv"), "--categorical", ",".join(MIXED.categorical)]
    argv += ["--continuous", ",".join(MIXED.continuous), "--out", str(tmp_path / "out"), "--no-wp29", "--tolerant"]
    argv += ["--attacks", "copies,distance"]
    assert main(argv) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["settings"]["tolerant"] is True
    assert "closeness_tolerant" in pd.read_csv(tmp_path / "out" / "records.csv").columns
    assert 0 < summary["flag_resolution"]["p_copy_median"] <= 1
