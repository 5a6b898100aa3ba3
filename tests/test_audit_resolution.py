"""``vrlib audit``: evidence fine enough to flag planted copies, and no flag where nothing leaks.

Built to make the judge fail both ways: planted exact copies of isolated records and
near-copies (one continuous value moved, one category changed) must be flagged; null
releases (records the generator never saw, heavy ties included), a shifted holdout and
a holdout holding the population's own duplicates must not be.  Plus the tail model
and mid-rank p-values against hand computations, and the file handling of the command.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import vrlib
from vrlib.audit import pvalues as pv
from vrlib.audit.evidence import NullTail, closeness_scores, copy_evidence, gower_view
from vrlib.audit.holdout import holdout_check
from vrlib.audit.inputs import check_tables
from vrlib.audit.release import membership_auc
from vrlib.audit.report import render_html
from vrlib.cli import main
from vrlib.data import Schema, prepare
from vrlib.distance import pairwise_distances
from vrlib.encoding import TableEncoder
from vrlib.selection import vulnerability_scores
from vrlib.uncertainty import delong_auc

SCHEMA = Schema(["a", "b", "c", "d"], ["x", "y", "z"])
FAST = dict(attacks=("copies", "distance"), wp29=False)


def population(n: int, seed: int, women_only: bool = False) -> pd.DataFrame:
    """Mixed records, continuous values on a fine grid (so exact matches are rare unless copied)."""
    rng = np.random.default_rng(seed)
    a = rng.choice(list("abcd"), n, p=[0.4, 0.3, 0.2, 0.1])
    b = np.full(n, "f") if women_only else rng.choice(["f", "m"], n)
    c = rng.choice(["u", "v", "w"], n)
    d = rng.choice([f"k{i}" for i in range(6)], n)
    x = rng.normal(size=n) + (a == "a") + 2.0 * (b == "f")
    y = rng.gamma(2.0, size=n)
    z = rng.uniform(size=n) + 0.3 * (c == "u")
    return pd.DataFrame({"a": a, "b": b, "c": c, "d": d, "x": x.round(4), "y": y.round(4), "z": z.round(4)})


@pytest.fixture(scope="module")
def split():
    pop = population(9000, 1)
    return pop.iloc[:1000].reset_index(drop=True), pop.iloc[1000:4000].reset_index(drop=True), pop.iloc[4000:]


def planted_release(train, other, rng, n_release=2000, n_exact=0, n_cont=0, n_cat=0, isolated=False):
    """``other`` records with training records planted: exact copies, one continuous value moved, one category changed."""
    n = n_exact + n_cont + n_cat
    if isolated:  # the most isolated training records (largest V_5)
        idx = np.argsort(-vulnerability_scores(prepare(train, SCHEMA), SCHEMA).to_numpy(), kind="stable")[:n]
    else:
        idx = rng.choice(len(train), n, replace=False)
    planted = train.iloc[idx].copy().reset_index(drop=True)
    for i in range(n_exact, n_exact + n_cont):
        col = rng.choice(list(SCHEMA.continuous))
        planted.loc[i, col] += 0.001 * train[col].std()
    for i in range(n_exact + n_cont, n):
        col = rng.choice(list(SCHEMA.categorical))
        values = sorted(set(train[col]) - {planted.loc[i, col]})
        planted.loc[i, col] = rng.choice(values)
    release = pd.concat([other.iloc[: n_release - n], planted], ignore_index=True)
    return release, idx


# --------------------------------------------------------------------------- statistics by hand


def test_midrank_pvalues_by_hand_and_ties_give_half():
    null = np.array([1.0, 2.0, 2.0, 3.0])
    # s = 2: above 1, equal 2 -> (0.5 + 1 + 1) / 5
    assert pv.midrank_pvalues([2.0, 0.0, 5.0], null).tolist() == [2.5 / 5, 4.5 / 5, 0.5 / 5]
    # all scores tied: members and null records get one p-value, the AUC of the merge is exactly 0.5
    member, nul = np.zeros(50), np.zeros(80)
    merged_m = pv.merge(pv.midrank_pvalues(member, nul)[:, None])
    merged_n = pv.merge(pv.midrank_pvalues(nul, nul)[:, None])
    assert delong_auc(np.r_[np.ones(50), np.zeros(80)], np.r_[merged_m, merged_n])["auc"] == 0.5


def test_gower_view_is_gower_by_hand():
    df = pd.DataFrame({"a": ["p", "q", "p"], "x": [0.0, 1.0, 0.25], "y": [0.0, 4.0, 1.0]})
    schema = Schema(["a"], ["x", "y"])
    df = prepare(df, schema)
    enc = TableEncoder(schema).fit(df)
    table, factor = gower_view(enc, df)
    d = pairwise_distances(table, table, metric="minkowski", p=1.0) / factor
    # rows 0 and 2: same category, x differs by 0.25 of its range, y by 0.25 -> (0 + 0.25 + 0.25) / 3
    assert d[0, 2] == pytest.approx(0.5 / 3)
    assert d[0, 1] == pytest.approx(3 / 3)  # everything as different as it can be


def test_closeness_by_brute_force(split):
    train, holdout, other = split
    train, release, _ = check_tables(train.iloc[:50], other.iloc[:300], holdout, SCHEMA)
    out = closeness_scores({"t": train}, release, SCHEMA, k=3, resolution=0.01)["t"]
    full = pd.concat([train, release], ignore_index=True)
    # brute-force Gower with the min-max ranges of all the tables
    num = full[list(SCHEMA.continuous)].to_numpy(float)
    span = np.ptp(num, 0)
    q, r = (
        train.astype({c: object for c in SCHEMA.categorical}),
        release.astype({c: object for c in SCHEMA.categorical}),
    )
    cat = sum((q[c].to_numpy()[:, None] != r[c].to_numpy()[None, :]).astype(float) for c in SCHEMA.categorical)
    cont = sum(
        np.abs((q[c].to_numpy()[:, None] - r[c].to_numpy()[None, :]) / span[j]) for j, c in enumerate(SCHEMA.continuous)
    )
    g = np.sort((cat + cont) / 7, axis=1)
    assert np.allclose(out["d_release"], g[:, 0])
    assert np.allclose(out["d_neighbourhood"], g[:, 1:4].mean(axis=1))
    eps = 0.01 / 7
    assert np.allclose(out["closeness"], np.log((g[:, 1:4].mean(axis=1) + eps) / (g[:, 0] + eps)))


def test_null_tail_is_calibrated_beyond_its_data_and_never_below_exponential():
    rng = np.random.default_rng(0)
    null = rng.exponential(size=20_000)
    tail = NullTail().fit(null)
    # P(X >= s) = exp(-s): the conservative tail stays at or above it, within a factor ~2, far beyond the data
    s = np.array([8.0, 12.0, 20.0])
    p = tail.pvalues(s)
    assert (p >= np.exp(-s)).all() and (p <= 2.5 * np.exp(-s) * np.exp(0.1 * s)).all()
    assert p[-1] < 1 / (len(null) + 1) / 1000  # resolution far below the empirical floor
    check = tail.check(seed=1)
    assert check["passed"]
    # fresh null scores: their p-values are uniform enough at small levels
    fresh = tail.pvalues(rng.exponential(size=50_000))
    for t in (0.01, 0.001, 1e-4):
        assert stats.binom.sf((fresh <= t).sum() - 1, len(fresh), t) > 1e-3


def test_null_tail_check_fails_on_a_tail_it_cannot_extrapolate():
    # one non-member far beyond the rest: whichever half holds it, the tail fitted on the other half
    # gives it a p-value far too small for the smallest of 5,000, and the check says so
    rng = np.random.default_rng(2)
    null = np.r_[rng.exponential(size=9_999), 1000.0]
    assert not NullTail().fit(null).check(seed=0)["passed"]
    assert NullTail().fit(null).pvalues([1000.0])[0] == pytest.approx(2 / 10_001)  # within the data: empirical
    # and a tail it can extrapolate passes
    assert NullTail().fit(rng.exponential(size=10_000)).check(seed=0)["passed"]


# --------------------------------------------------------------------------- planted leaks must be flagged


def test_copies_of_isolated_records_are_flagged_at_the_top(split):
    train, holdout, other = split
    release, idx = planted_release(train, other, np.random.default_rng(0), n_exact=20, isolated=True)
    res = vrlib.audit(train, release, holdout, SCHEMA, seed=0, **FAST)
    rec, s = res.records, res.summary
    assert set(rec.head(20)["index"]) == set(idx)
    assert set(rec.loc[rec["flagged"], "index"]) >= set(idx)
    assert (rec.loc[rec["index"].isin(idx), "p_value"] < 0.05 / len(train)).all()  # below a single-record BH level
    assert s["n_flagged"] - len(idx) <= 1
    html = render_html(res)
    assert f"{s['n_flagged']} of the 1,000 training records are at risk" in html
    assert s["flag_resolution"]["p_copy_isolated"] < 0.05 / len(train)


def test_near_copies_rank_and_are_flagged(split):
    train, holdout, other = split
    release, idx = planted_release(train, other, np.random.default_rng(1), n_exact=10, n_cont=10, n_cat=10)
    res = vrlib.audit(train, release, holdout, SCHEMA, seed=0, **FAST)
    rec = res.records.set_index("index")
    cont, cat = idx[10:20], idx[20:]
    assert (rec.loc[idx[:20], "risk_rank"] <= 50).mean() >= 0.9  # exact and continuous near-copies
    assert rec.loc[idx[:20], "flagged"].mean() >= 0.8
    assert (rec.loc[cat, "risk_rank"] <= 50).mean() >= 0.9  # a changed category: exact on the continuous columns
    assert rec.loc[cat, "flagged"].mean() >= 0.8
    false = rec["flagged"].sum() - rec.loc[idx, "flagged"].sum()
    assert false <= max(1, 0.1 * rec["flagged"].sum())
    assert (rec.loc[cont, "d_release"] < 1e-3).all()


# --------------------------------------------------------------------------- no leak: no flag


def test_null_release_with_heavy_ties_flags_nothing_and_auc_covers_half():
    # categorical only, few values: most records have exact twins; the release is real unseen records
    rng = np.random.default_rng(3)
    n = 6000
    df = pd.DataFrame({c: rng.choice(list("pqr"), n, p=[0.6, 0.3, 0.1]) for c in "abcde"})
    schema = Schema(list("abcde"), [])
    train, holdout, release = df.iloc[:1500], df.iloc[1500:3500], df.iloc[3500:5500]
    res = vrlib.audit(train, release, holdout, schema, seed=0, attacks=("copies", "distance"), wp29=False)
    s = res.summary
    assert s["n_flagged"] == 0
    for auc in (s["membership_auc"], s["attack_auc"]["copies"]):
        assert auc["ci_low"] <= 0.5 <= auc["ci_high"]
    assert s["n_holdout_in_train"] > 1000  # population duplicates, accepted
    assert "holdout_duplicates" in [w["code"] for w in s["warnings"]]


def test_closeness_auc_interval_holds_its_level_with_heavy_ties():
    """The copy evidence's AUC on null releases where nearly every record has twins: most released records are
    tied between several pooled records and assigned to none, so the AUC rests on the few records that keep
    one. Over 24 such data sets its 95 % interval may miss 0.5 about once (more than 4 misses: binomial
    p < 0.01) and the AUCs must centre on 0.5 (mean within 3 standard errors)."""
    schema = Schema(list("abcde"), [])
    aucs, misses = [], 0
    for seed in range(24):
        rng = np.random.default_rng(200 + seed)
        df = pd.DataFrame({c: rng.choice(list("pqr"), 5500, p=[0.6, 0.3, 0.1]) for c in "abcde"})
        train, release, holdout = check_tables(df.iloc[:1500], df.iloc[3500:], df.iloc[1500:3500], schema)
        tr, ho, _ = copy_evidence(train, holdout, release, schema, seed=seed, assign=True, near_matches=False)
        auc = membership_auc(tr["effect"], ho["effect"])  # as the audit computes attack_auc["closeness"]
        aucs.append(auc["auc"])
        misses += not auc["ci_low"] <= 0.5 <= auc["ci_high"]
    assert misses <= 4, misses
    aucs = np.array(aucs)
    assert abs(aucs.mean() - 0.5) <= 3 * aucs.std(ddof=1) / np.sqrt(len(aucs)), aucs.mean()


def test_population_duplicates_in_the_holdout_give_no_false_flags(split):
    train, holdout, other = split
    dup = holdout.copy()
    dup.iloc[:450] = train.iloc[:450].to_numpy()  # 15 % of the holdout equals training rows
    res = vrlib.audit(train, other.iloc[:2000], dup, SCHEMA, seed=0, **FAST)
    s = res.summary
    assert s["n_holdout_in_train"] == 450 and s["n_flagged"] == 0
    assert not s["holdout_check"]["shift"]


def test_shifted_holdout_warns_and_claims_no_leak(split):
    train, _, other = split
    women = population(3000, 7, women_only=True)
    release = pd.concat([other.iloc[:1900], train.iloc[:100]], ignore_index=True)
    res = vrlib.audit(train, release, women, SCHEMA, seed=0, **FAST)
    s = res.summary
    codes = [w["code"] for w in s["warnings"]]
    assert codes.count("holdout_shift") == 1 and s["holdout_check"]["shift"]
    assert s["holdout_check"]["ci_low"] > 0.5
    assert s["n_flagged"] == 0 and s["flag_withheld"] and not res.records["flagged"].any()
    first = render_html(res).split("id='verdict'>")[1][:400]
    assert "cannot tell whether records leak" in first and "at risk" not in first
    assert not s["disagreements"]


def test_same_population_holdout_is_not_called_shifted(split):
    train, holdout, _ = split
    train, _, holdout = check_tables(train, train, holdout, SCHEMA)
    check = holdout_check(train, holdout, SCHEMA, seed=4)
    assert not check["shift"] and check["ci_low"] <= 0.5 <= check["ci_high"]


# --------------------------------------------------------------------------- files and messages


def test_unseen_categories_are_audited_and_counted(split):
    train, holdout, other = split
    release = other.iloc[:500].copy()
    release.iloc[:7, 0] = "new"
    res = vrlib.audit(train, release, holdout, SCHEMA, seed=0, **FAST)
    assert res.summary["unseen_categories"] == {"release": {"a": 7}}
    assert [w["code"] for w in res.summary["warnings"]].count("unseen_categories") == 1


def test_one_hot_wider_than_int8():
    df = pd.DataFrame({"a": [f"v{i}" for i in range(300)], "b": ["x"] * 300})
    schema = Schema(["b", "a"], [])
    df = prepare(df, schema)
    enc = TableEncoder(schema).fit_transform(df)
    assert enc.onehot.shape == (300, 301) and (enc.onehot.sum(axis=1) == 2).all()
    assert enc.onehot[299, 1 + list(df["a"].cat.categories).index("v299")] == 1


@pytest.fixture(scope="module")
def csv_files(split, tmp_path_factory):
    train, holdout, other = split
    folder = tmp_path_factory.mktemp("audit_files")
    train.to_csv(folder / "train.csv", index=False)
    holdout.to_csv(folder / "holdout.csv", index=False)
    release = other.iloc[:800].copy()
    release.iloc[:3, 3] = "Zoë"  # a value only a latin-1 reader gets right, unseen in training
    release.to_csv(folder / "release.csv", index=False, encoding="latin-1")
    return folder


def _args(folder, out, *extra):
    return [
        "audit",
        "--train",
        str(folder / "train.csv"),
        "--synthetic",
        str(folder / "release.csv"),
        "--holdout",
        str(folder / "holdout.csv"),
        "--categorical",
        "a,b,c,d",
        "--continuous",
        "x,y,z",
        "--attacks",
        "copies,distance",
        "--no-wp29",
        "--out",
        str(out),
        *extra,
    ]


def test_cli_per_file_encoding_warnings_once_and_atomic_folder(csv_files, tmp_path, capsys):
    out = tmp_path / "report"
    code = main(_args(csv_files, out, "--encoding", "utf-8,latin-1,utf-8"))
    err = capsys.readouterr().err
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["unseen_categories"] == {"release": {"d": 3}}
    assert err.count("unseen_categories") + err.count("never has") == 1  # once
    assert sorted(p.name for p in out.iterdir()) == ["records.csv", "report.html", "summary.json"]
    # rerun into the same folder: replaced whole, nothing left beside it
    (out / "summary.json").write_text("stale")
    capsys.readouterr()
    assert main(_args(csv_files, f"{out}/", "--encoding", "utf-8,latin-1,utf-8", "--seed", "2")) == 0
    assert json.loads((out / "summary.json").read_text())["seed"] == 2
    assert f"wrote {out / 'report.html'}," in capsys.readouterr().out  # '--out DIR/' printed without '//'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]


def test_cli_out_file_or_foreign_folder_fails_before_any_work(csv_files, tmp_path, capsys, monkeypatch):
    import vrlib.audit.inputs as inputs

    def no_work(*args, **kwargs):
        raise AssertionError("the tables were read")

    monkeypatch.setattr(inputs, "read_csv", no_work)
    target = tmp_path / "out.txt"
    target.write_text("keep me")
    assert main(_args(csv_files, target)) == 2
    assert "is a file" in capsys.readouterr().err and target.read_text() == "keep me"
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.md").write_text("mine")
    assert main(_args(csv_files, foreign)) == 2
    assert "other than an audit report" in capsys.readouterr().err


def test_missing_value_advice_names_options_that_exist(csv_files, tmp_path, capsys):
    bad = tmp_path / "holdout.csv"
    pd.read_csv(csv_files / "holdout.csv").assign(x=lambda d: d["x"].where(d.index != 4)).to_csv(bad, index=False)
    args = _args(csv_files, tmp_path / "out", "--encoding", "utf-8,latin-1,utf-8")
    args[args.index("--holdout") + 1] = str(bad)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "missing values" in err and "--dropna" not in err and "--na-values" in err


@pytest.mark.parametrize("small", ["--small"])
def test_validation_benchmark_small_runs_and_meets_its_goals(small, tmp_path):
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "bench_audit_validation.py"), small, "--cache", "rows"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    last = json.loads(done.stdout.strip().splitlines()[-1])
    rows = {r["scenario"]: r for r in last["rows"]}
    # the cached rows are named by the audit's code, so rows made by other code are made again, not read back
    sys.path.insert(0, str(root / "benchmarks"))
    try:
        from bench_audit_validation import code_hash
    finally:
        sys.path.remove(str(root / "benchmarks"))
    cached = sorted((tmp_path / "rows").glob("*.json"))
    assert len(cached) == len(rows) and all(p.stem.endswith(f"-{code_hash()}") for p in cached)
    assert rows["planted exact 0.5%"]["recall_top_k"] >= 0.9 and rows["planted exact 0.5%"]["flagged_tp"] >= 1
    for name, row in rows.items():
        if row["kind"] == "planted":
            # the best possible flag bounds the audit's: no planted p-value below its bound, no more flagged
            assert row["bound_violations"] == 0, name
            assert row["flagged_tp"] <= row["best_possible"], name
        if row["kind"] == "null":
            assert row["flagged_fp"] == 0, name
            assert row["auc_ci_low"] <= 0.5 <= row["auc_ci_high"], name
        if row["kind"] == "shift":
            assert row["shift_warning"] and row["flagged_fp"] == 0
