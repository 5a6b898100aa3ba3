"""``vrlib audit``: its statistics against independent computations, calibration on a null release,
detection of a copying release, reproducibility, bad input, the command line and the report in a browser.

Every table is made here: a small mixed population whose rows are split into training,
holdout and "other" records; a null release is drawn from the other records only, a
leaking release copies training records into it.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

import vrlib
from vrlib.audit import pvalues as pv
from vrlib.audit.inputs import check_tables, read_tables
from vrlib.audit.policy import EXIT_VIOLATED, check_policy, load_policy
from vrlib.audit.release import auc_by_decile, tpr_at_fpr
from vrlib.audit.report import render_html
from vrlib.audit.wp29 import threat_model
from vrlib.cli import main
from vrlib.data import Schema
from vrlib.distance import kneighbors_between, pairwise_distances
from vrlib.encoding import TableEncoder
from vrlib.errors import VrlibError
from vrlib.uncertainty import clopper_pearson, delong_auc, wilson_interval

SCHEMA = Schema(["a", "b", "c"], ["x", "y"])
FAST = dict(logan_epochs=20, n_wp29_attacks=300)


def population(n: int, seed: int) -> pd.DataFrame:
    """Mixed records with some structure (x depends on a), continuous values rounded so ties occur."""
    rng = np.random.default_rng(seed)
    a = rng.choice(list("abcd"), n, p=[0.4, 0.3, 0.2, 0.1])
    b = rng.choice(["x", "y"], n)
    c = rng.choice(["u", "v", "w"], n)
    x = rng.normal(size=n) + (a == "a")
    y = rng.gamma(2.0, size=n)
    return pd.DataFrame({"a": a, "b": b, "c": c, "x": x.round(3), "y": y.round(3)})


@pytest.fixture(scope="module")
def tables():
    pop = population(4000, 0)
    train, holdout, other = pop.iloc[:400], pop.iloc[400:2400], pop.iloc[2400:]
    return train.reset_index(drop=True), holdout.reset_index(drop=True), other.reset_index(drop=True)


@pytest.fixture(scope="module")
def null_result(tables):
    train, holdout, other = tables
    return vrlib.audit(train, other.iloc[:400], holdout, SCHEMA, seed=3, **FAST)


@pytest.fixture(scope="module")
def leak_result(tables):
    train, holdout, other = tables
    release = pd.concat([other.iloc[:320], train.iloc[:80]], ignore_index=True)
    return vrlib.audit(train, release, holdout, SCHEMA, seed=3, **FAST)


# --------------------------------------------------------------------------- statistics


def _brute_delong(pos, neg):
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    return psi.mean(), np.sqrt(v10.var(ddof=1) / len(pos) + v01.var(ddof=1) / len(neg))


@pytest.mark.parametrize("seed", [0, 1])
def test_delong_matches_sklearn_and_brute_force(seed):
    rng = np.random.default_rng(seed)
    pos, neg = rng.normal(0.5, 1, 70).round(1), rng.normal(0, 1, 90).round(1)  # rounded: ties
    labels = np.r_[np.ones(70), np.zeros(90)]
    res = delong_auc(labels, np.r_[pos, neg])
    auc, se = _brute_delong(pos, neg)
    assert res["auc"] == pytest.approx(roc_auc_score(labels, np.r_[pos, neg]), abs=1e-12)
    assert res["auc"] == pytest.approx(auc, abs=1e-12)
    assert res["se"] == pytest.approx(se, rel=1e-10)
    assert res["ci_low"] == pytest.approx(auc - stats.norm.ppf(0.975) * se)


def test_binomial_intervals_match_scipy():
    for k, n in [(0, 10), (3, 10), (10, 10), (57, 1000)]:
        exact = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
        wilson = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
        assert clopper_pearson(k, n) == pytest.approx((exact.low, exact.high), abs=1e-9)
        assert wilson_interval(k, n) == pytest.approx((wilson.low, wilson.high), abs=1e-9)
    with pytest.raises(VrlibError, match="successes"):
        clopper_pearson(11, 10)


def test_kneighbors_between_is_brute_force(tables):
    train, holdout, _ = tables
    both = vrlib.data.prepare(pd.concat([train.iloc[:150], holdout.iloc[:300]], ignore_index=True), SCHEMA)
    enc = TableEncoder(SCHEMA).fit(both)
    q, r = enc.transform(both.iloc[:150]), enc.transform(both.iloc[150:])
    for metric, p in (("minkowski", 2.0), ("cosine", None), ("minkowski", 1.0)):
        d, i = kneighbors_between(q, r, k=3, metric=metric, p=p)
        full = pairwise_distances(q, r, metric=metric, p=p)
        assert np.allclose(d, np.sort(full, axis=1)[:, :3], atol=1e-12)
        assert np.allclose(np.take_along_axis(full, i, axis=1), d, atol=1e-12)


def test_empirical_pvalues_by_hand():
    null = np.array([1.0, 2.0, 3.0, 3.0])
    assert pv.empirical_pvalues([3.0, 0.0, 5.0, 2.5], null).tolist() == [3 / 5, 5 / 5, 1 / 5, 3 / 5]
    assert pv.null_pvalues(null).tolist() == [4 / 5, 3 / 5, 2 / 5, 2 / 5]
    assert pv.calibrate([0.5, 3.0], [0.2, 0.6, 3.0, 0.9]).tolist() == [4 / 5, 2 / 5]


def test_merges_and_bh_by_hand():
    p = np.array([[0.01, 0.5, 1.0], [0.2, 0.2, 0.2]])
    assert pv.merge(p, "fisher") == pytest.approx([-np.log(0.005), -3 * np.log(0.2)])
    assert pv.merge(p, "bonferroni") == pytest.approx(-np.log([0.03, 0.6]))
    hm = np.e * np.log(3) * 3 / (1 / p).sum(axis=1)
    assert pv.merge(p, "harmonic") == pytest.approx(-np.log(np.minimum(1, hm)))
    raw = np.array([0.001, 0.04, 0.03, 0.5, 0.0125])
    q, rejected = pv.benjamini_hochberg(raw, 0.05)
    assert q == pytest.approx(stats.false_discovery_control(raw, method="bh"))
    assert rejected.tolist() == [True, True, True, False, True]


@pytest.mark.parametrize("n, m, q", [(150, 75, 0.05), (400, 1000, 0.05), (30, 9, 0.1), (10, 5, 0.05), (1, 19, 0.05)])
def test_flag_resolution_is_the_step_up_on_tied_floors(n, m, q):
    res = pv.flag_resolution(n, m, q)
    floor = 1 / (m + 1)
    assert res["p_min"] == floor

    def flags(records, nulls, tied):  # brute force: `tied` records at the floor of `nulls` null records, the rest at 1
        p = np.ones(records)
        p[:tied] = 1 / (nulls + 1)
        return pv.benjamini_hochberg(p, q)[1].any()

    need = res["min_records_to_flag"]
    if need is None:
        assert not flags(n, m, n)
    else:
        assert flags(n, m, need) and (need == 1 or not flags(n, m, need - 1))
    one = res["n_null_for_one"]
    assert flags(n, one, 1) and (one == 1 or not flags(n, one - 1, 1))


def test_flag_resolution_by_hand():
    res = pv.flag_resolution(150, 75, 0.05)  # 150 / (0.05 * 76) = 39.5; 150 / 0.05 - 1 = 2,999
    assert (res["min_records_to_flag"], res["n_null_for_one"]) == (40, 2999)
    assert "at least 40 of the 150 records" in res["note"] and "2,999 null records" in res["note"]
    nothing = pv.flag_resolution(10, 5, 0.05)  # floor 1/6 above 5 %
    assert nothing["min_records_to_flag"] is None and "no record can be flagged" in nothing["note"]
    with pytest.raises(VrlibError, match="null record"):
        pv.flag_resolution(10, 0, 0.05)


def test_tpr_at_fpr_by_hand():
    null = np.arange(1000, dtype=float)  # the 10 largest are 990..999
    members = np.array([995.5, 989.5, 1000.0, 5.0])
    res = tpr_at_fpr(members, null, 0.01)
    assert res["threshold"] == 989.0 and res["false_positives"] == 10
    assert res["true_positives"] == 3 and res["tpr"] == 0.75


def test_tpr_at_fpr_interval_covers_without_signal():
    """Members and null records from one distribution: the TPR at the true threshold is the FPR itself.

    Most of the noise is the threshold's (few null records above it), so an interval over the
    members alone would miss far more often than 5 %.
    """
    rng = np.random.default_rng(11)
    for fpr in (0.01, 0.001):
        covered = 0
        for _ in range(300):
            res = tpr_at_fpr(rng.normal(size=5000), rng.normal(size=2000), fpr)
            covered += res["ci_low"] <= fpr <= res["ci_high"]
        assert covered / 300 >= 0.93, (fpr, covered)


def test_tpr_at_fpr_interval_by_hand():
    """The bounds come from the members above the null order statistics that bracket the true threshold."""
    from scipy import stats

    null = np.arange(1000, dtype=float)[::-1]
    members = np.linspace(0, 1000, 401)
    res = tpr_at_fpr(members, null, 0.01, level=0.95)
    k_lo, k_hi = (int(k) for k in stats.binom.ppf([0.0125, 0.9875], 1000, 0.01))
    t_high, t_low = 999.0 - (k_lo - 1), 999.0 - k_hi  # the k_lo-th and (k_hi + 1)-th largest
    assert res["ci_low"] == clopper_pearson(int((members > t_high).sum()), 401, 0.975)[0]
    assert res["ci_high"] == clopper_pearson(int((members > t_low).sum()), 401, 0.975)[1]
    assert res["ci_low"] <= res["tpr"] <= res["ci_high"]


def test_auc_by_decile_compares_like_with_like():
    rng = np.random.default_rng(4)
    vk, null_vk = rng.uniform(size=200), rng.uniform(size=300)
    members, null = rng.normal(size=200) + vk, rng.normal(size=300) + null_vk
    table = auc_by_decile(members, null, vk, null_vk, n_groups=2)
    low, high = np.argsort(vk)[:100], np.argsort(vk)[100:]
    cut = vk[high].min()
    for row, part, keep in ((0, low, null_vk < cut), (1, high, null_vk >= cut)):
        labels = np.r_[np.ones(len(part)), np.zeros(keep.sum())]
        assert table.loc[row, "auc"] == pytest.approx(roc_auc_score(labels, np.r_[members[part], null[keep]]))
        assert table.loc[row, "n_null"] == keep.sum()


# --------------------------------------------------------------------------- the audit


def test_null_release_is_calibrated(null_result):
    s = null_result.summary
    assert s["membership_auc"]["ci_low"] <= 0.5 <= s["membership_auc"]["ci_high"]
    assert s["n_flagged"] == 0 and s["n_verbatim"] == 0
    p = null_result.records["p_value"]
    assert stats.kstest(null_result.records["p_distance"], "uniform").pvalue > 0.001
    assert (p > 0).all() and (p <= 1).all()
    for name in ("singling_out", "linkability", "inference"):
        assert s["wp29"][name]["ci_low"] == 0.0  # no evidence of risk
    assert s["flag_resolution"]["p_floor"] == 1 / 2001  # every holdout record is a null record of the evidence
    assert s["flag_resolution"]["note"] in render_html(null_result)
    assert not s["warnings"] and not s["holdout_check"]["shift"]


def test_copying_release_is_caught(leak_result):
    s, rec = leak_result.summary, leak_result.records
    assert s["n_verbatim"] == 80
    copied = set(range(80))
    assert len(copied & set(rec.head(100)["index"])) >= 75
    assert s["n_flagged"] >= 60
    false = set(rec.loc[rec["flagged"], "index"]) - copied
    assert len(false) <= 0.1 * s["n_flagged"]  # BH at 5 %: a few false discoveries may occur
    assert s["membership_auc"]["ci_low"] > 0.5
    assert any("copied verbatim" in sentence for sentence in s["disagreements"])
    assert rec["risk_rank"].tolist() == list(range(1, 401))
    assert sorted(rec["index"]) == list(range(400))


def test_records_columns_and_hidden_values(leak_result):
    cols = list(leak_result.records.columns)
    assert cols[:2] == ["index", "risk_rank"] and {"vk", "vk_rank", "copies", "closeness", "p_value", "flagged"} <= set(
        cols
    )
    assert not any(c.startswith("value_") for c in cols)


def test_same_seed_same_bytes(tables, tmp_path):
    train, holdout, other = tables
    release = pd.concat([other.iloc[:300], train.iloc[:20]], ignore_index=True)
    for run in ("one", "two"):
        vrlib.audit(train, release, holdout, SCHEMA, seed=5, out=tmp_path / run, show_values=True, **FAST)
    for name in ("summary.json", "records.csv"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    rec = pd.read_csv(tmp_path / "one" / "records.csv")
    assert "value_a" in rec.columns
    assert json.loads((tmp_path / "one" / "summary.json").read_text())["membership_auc"]["auc"] > 0


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda t, s, h: (t, s.drop(columns="y"), h), "release's columns differ"),
        (lambda t, s, h: (t, s, h.assign(x=h["x"].where(h.index != 7, np.nan))), "missing values"),
        (lambda t, s, h: (t, s, h.assign(x=h["x"].astype(object).where(h.index != 2, "ten"))), "non-numeric"),
        (lambda t, s, h: (t, s, h.iloc[:15]), "at least 20"),
        (lambda t, s, h: (t.iloc[:5], s, h), "at least 10"),
    ],
)
def test_bad_tables_are_named(tables, change, message):
    train, holdout, other = tables
    t, s, h = change(train, other.iloc[:300], holdout)
    with pytest.raises(VrlibError, match=message):
        check_tables(t, s, h, SCHEMA)


def test_default_secret_varies_and_a_constant_one_is_refused(tables):
    train = tables[0].assign(d="same", z=1.0)
    schema = Schema(["a", "b", "c", "d"], ["x", "y", "z"])
    assert threat_model(schema)["secret"] == "d"  # without the data: the last categorical column
    assert threat_model(schema, train=train)["secret"] == "c"  # d takes one value
    only_continuous = Schema(["d"], ["x", "y", "z"])
    assert threat_model(only_continuous, train=train)["secret"] == "y"
    with pytest.raises(VrlibError, match="'d' takes one value.*--secret"):
        threat_model(schema, secret="d", train=train)


def test_bad_threat_model_and_policy():
    with pytest.raises(VrlibError, match="not a column"):
        threat_model(SCHEMA, secret="nope")
    with pytest.raises(VrlibError, match="cannot also be known"):
        threat_model(SCHEMA, known=["a", "c"], secret="c")
    with pytest.raises(VrlibError, match="unknown policy rule"):
        load_policy({"max_auc": 0.5})
    verdict = check_policy(
        {"membership_auc": {"auc": 0.6}, "n_flagged": 0, "n_verbatim": 3},
        {"max_membership_auc": 0.55, "max_verbatim": 5, "max_empirical_epsilon": 1},
    )
    assert not verdict["passed"] and len(verdict["violations"]) == 1
    assert verdict["skipped"] == ["max_empirical_epsilon"]


# --------------------------------------------------------------------------- command line and report


@pytest.fixture(scope="module")
def csv_files(tables, tmp_path_factory):
    train, holdout, other = tables
    folder = tmp_path_factory.mktemp("audit_csv")
    release = pd.concat([other.iloc[:300], train.iloc[:40]], ignore_index=True)
    for name, df in (("train", train), ("holdout", holdout), ("release", release)):
        df.to_csv(folder / f"{name}.csv", index=False)
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
        "a,b,c",
        "--continuous",
        "x,y",
        "--out",
        str(out),
        *extra,
    ]


def test_cli_writes_report_and_policy_sets_exit_status(csv_files, tmp_path, capsys):
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"max_verbatim": 0}))
    code = main(_args(csv_files, tmp_path / "out", "--policy", str(policy), "--secret", "a"))
    out = capsys.readouterr().out
    assert code == EXIT_VIOLATED and "copied verbatim" in out and "policy:" in out
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["n_verbatim"] == 40 and summary["wp29"]["threat_model"]["secret"] == "a"
    assert len(summary["membership_auc_ci"]) == 2
    rec = pd.read_csv(tmp_path / "out" / "records.csv")
    assert len(rec) == 400 and rec.loc[rec["risk_rank"] == 1, "index"].iloc[0] < 40
    train, *_ = read_tables(
        csv_files / "train.csv", csv_files / "release.csv", csv_files / "holdout.csv", ["a", "b", "c"], ["x", "y"]
    )
    assert len(train) == 400


def test_cli_bad_input_is_one_line(csv_files, tmp_path, capsys):
    bad = tmp_path / "holdout.csv"
    pd.read_csv(csv_files / "holdout.csv").rename(columns={"y": "z"}).to_csv(bad, index=False)
    args = _args(csv_files, tmp_path / "out")
    args[args.index("--holdout") + 1] = str(bad)
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "holdout" in err and "'z'" in err


def test_report_renders_in_chromium(leak_result, tmp_path):
    from browser import render

    paths = leak_result.write(tmp_path / "out")
    seen = render(paths["report"].resolve().as_uri(), tmp_path / "shot.png")
    assert seen["n_images"] == 3 and not seen["broken_images"]
    first = seen["text"][:600]
    assert f"{leak_result.summary['n_flagged']} of the 400 training records are at risk" in first
    assert "copied verbatim" in seen["text"] and "Record values are hidden" in seen["text"]


def test_unknown_generator_is_refused_before_the_long_work(tables, monkeypatch):
    import vrlib.audit.pipeline as pipeline

    def never(*args, **kwargs):
        raise AssertionError("the audit ran before the generator's name was checked")

    monkeypatch.setattr(pipeline, "_audit", never)
    train, holdout, other = tables
    with pytest.raises(VrlibError, match=r"unknown generator 'synthpopp'; choose one of \[.*'synthpop'"):
        vrlib.audit(train, other.iloc[:400], holdout, SCHEMA, generator="synthpopp")


def test_audit_help_lists_the_generators(capsys):
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "with this generator (slow): one of adsgan, baynet," in help_text and "synthpop" in help_text


def test_docs_name_every_policy_rule():
    from conftest import PROJECT_ROOT
    from vrlib.audit.policy import RULES

    page = (PROJECT_ROOT / "docs" / "audit.md").read_text()
    assert [rule for rule in RULES if f"`{rule}`" not in page] == []


def test_docs_name_every_output(leak_result):
    """docs/audit.md's *What it writes* names every key of summary.json and every column of records.csv."""
    import re

    from conftest import PROJECT_ROOT
    from vrlib.audit.scores import ATTACKS

    page = (PROJECT_ROOT / "docs" / "audit.md").read_text()
    section = page.split("## What it writes", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`([\w.]+)`", section))
    per_attack = {f"{kind}_{attack}" for kind in ("score", "p") for attack in ATTACKS}  # "each attack's `score_*`"
    assert "`score_*` and `p_*`" in section
    assert sorted(set(leak_result.summary) - named) == []
    assert sorted({"n_train", "n_holdout", "n_reference", "n_null"} - named) == []  # the sizes in `settings`
    assert {"n_train", "n_holdout", "n_reference", "n_null"} <= set(leak_result.summary["settings"])
    assert sorted(set(leak_result.records.columns) - named - per_attack) == []
