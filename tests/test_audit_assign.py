"""The audit's assignment (its default; ``assign=False`` / ``--no-assign`` turn it off): off, the former flag; on, self-masking is gone.

Built to say yes (ten training records copied into the release, each with a near-twin in
the holdout: flagged through ``vrlib.audit`` with the option, masked without it) and no
(training and holdout exchangeable, values on a four-level grid so that ties among the
three tables are common: nothing flagged), with the option's p-values checked against
:func:`vrlib.audit.assignment.assigned_evidence` (its own searches) and the default's
against a computation from the closeness scores and the tails alone.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from test_audit_assignment import SCHEMA, masked_case, population
from test_audit_flags import at_most_level

import vrlib
from vrlib.audit.assignment import assigned_evidence
from vrlib.audit.evidence import NullTail, closeness_scores, copy_evidence, distance_views
from vrlib.audit.inputs import check_tables
from vrlib.audit.pvalues import benjamini_hochberg
from vrlib.errors import VrlibError

FAST = dict(attacks=("copies", "distance"), wp29=False)


@pytest.fixture(scope="module")
def masked():
    return masked_case()


def test_off_is_the_default_flag(masked):
    (train, release, holdout), _ = masked
    tab, hold, info = copy_evidence(train, holdout, release, SCHEMA, near_matches=False, assign=False)
    assert "d_assigned" not in tab and "n_assigned" not in tab and info["assign"] is False
    # the flag from the closeness scores and the checked tails alone, as the default computes it
    p, closeness = [], {}
    for view, sub in distance_views(SCHEMA).items():
        cols = list(sub.columns)
        sc = closeness_scores(
            {"train": train[cols], "holdout": holdout[cols]}, release[cols], sub, k=5, resolution=1e-4
        )
        tail = NullTail().fit(sc["holdout"]["closeness"])
        if not tail.check(seed=0)["passed"]:
            tail = NullTail(extrapolate=False).fit(sc["holdout"]["closeness"])
        p.append(tail.pvalues(sc["train"]["closeness"]))
        closeness[view] = sc["train"]["closeness"].to_numpy()
    expected = np.minimum(1.0, len(p) * np.min(p, axis=0))
    np.testing.assert_allclose(tab["p_value"], expected, rtol=1e-12)
    np.testing.assert_allclose(tab["closeness"], closeness["all"], rtol=1e-12)
    np.testing.assert_allclose(tab["closeness_continuous"], closeness["continuous"], rtol=1e-12)
    default = copy_evidence(train, holdout, release, SCHEMA, near_matches=False)[0]
    pd.testing.assert_frame_equal(default, tab)


def test_on_is_the_assigned_evidence(masked):
    (train, release, holdout), idx = masked
    tab, hold, info = copy_evidence(train, holdout, release, SCHEMA, assign=True)
    ref, ref_hold, _ = assigned_evidence(train, holdout, release, SCHEMA)
    assert info["assign"] is True
    for got, want in ((tab, ref), (hold, ref_hold)):
        np.testing.assert_allclose(got["p_value"], want["p_value"], rtol=1e-12)
        np.testing.assert_allclose(got["closeness"], want["closeness_all"], rtol=1e-12)
        np.testing.assert_allclose(got["closeness_continuous"], want["closeness_continuous"], rtol=1e-12)
        np.testing.assert_array_equal(got["n_assigned"], want["n_assigned_all"])
    # the near-match view is untouched; p_rank is the Bonferroni minimum of the three views
    kept = copy_evidence(train, holdout, release, SCHEMA)[0]
    np.testing.assert_array_equal(tab["p_near_match"], kept["p_near_match"])
    np.testing.assert_allclose(tab["p_rank"], np.minimum(1, 3 * np.minimum(tab["p_value"] / 2, tab["p_near_match"])))
    assert (tab.loc[idx, "d_assigned"] == 0).all()


def test_audit_with_the_option_flags_masked_copies(masked):
    (train, release, holdout), idx = masked
    off = vrlib.audit(train, release, holdout, SCHEMA, seed=0, assign=False, **FAST)
    on = vrlib.audit(train, release, holdout, SCHEMA, seed=0, **FAST)  # the default
    assert off.summary["n_flagged"] <= 1 and off.summary["settings"]["assign"] is False
    flagged = on.records.loc[on.records["flagged"], "index"].to_numpy()
    assert sorted(flagged) == sorted(idx) and on.summary["settings"]["assign"] is True
    # the same p-values as the copy evidence with the option, and Benjamini–Hochberg on them
    ev = copy_evidence(train, holdout, release, SCHEMA, assign=True)[0]
    rec = on.records.sort_values("index")
    np.testing.assert_allclose(rec["p_value"], ev["p_value"], rtol=1e-12)
    assert (rec["flagged"].to_numpy() == benjamini_hochberg(ev["p_value"].to_numpy(), 0.05)[1]).all()


def test_audit_with_the_option_flags_nothing_without_signal():
    rng = np.random.default_rng(100)
    pop = population(600 + 1500 + 800, rng, grid=4)
    train, holdout, release = (pop.iloc[a:b].reset_index(drop=True) for a, b in ((0, 600), (600, 2100), (2100, 2900)))
    res = vrlib.audit(train, release, holdout, SCHEMA, seed=0, **FAST)
    assert res.summary["n_flagged"] == 0 and res.summary["settings"]["assign"] is True
    for t in (0.01, 0.05, 0.2):
        assert at_most_level(res.records["p_value"], t)


def test_option_and_tolerant_refused_together(masked):
    (train, release, holdout), _ = masked
    with pytest.raises(VrlibError, match="choose one"):
        vrlib.audit(train, release, holdout, SCHEMA, assign=True, tolerant=True, **FAST)
    with pytest.raises(VrlibError, match="choose one"):
        copy_evidence(train, holdout, release, SCHEMA, assign=True, tolerant=True)


def test_cli_assign(tmp_path, capsys):
    from vrlib.cli import main

    rng = np.random.default_rng(3)
    pop = population(1500, rng)
    tr, ho, rel = pop.iloc[:400], pop.iloc[400:1000], pop.iloc[1000:]
    tr, rel, ho = check_tables(tr, rel, ho, SCHEMA)
    for name, df in (("train", tr), ("release", rel), ("holdout", ho)):
        df.to_csv(tmp_path / f"{name}.csv", index=False)
    argv = ["audit", "--train", str(tmp_path / "train.csv"), "--synthetic", str(tmp_path / "release.csv")]
    argv += ["--holdout", str(tmp_path / "holdout.csv"), "--categorical", ",".join(SCHEMA.categorical)]
    argv += ["--continuous", ",".join(SCHEMA.continuous), "--no-wp29", "--attacks", "copies,distance"]
    expected = {(): True, ("--assign",): True, ("--no-assign",): False, ("--tolerant",): False}
    for i, (options, assign) in enumerate(expected.items()):
        assert main([*argv, "--out", str(tmp_path / f"out{i}"), *options]) == 0
        summary = json.loads((tmp_path / f"out{i}" / "summary.json").read_text())
        assert summary["settings"]["assign"] is assign and summary["settings"]["tolerant"] is ("--tolerant" in options)
        assert ("n_assigned" in pd.read_csv(tmp_path / f"out{i}" / "records.csv").columns) is assign
    assert main([*argv, "--out", str(tmp_path / "both"), "--assign", "--tolerant"]) == 2
    assert "choose one" in capsys.readouterr().err and not (tmp_path / "both").exists()
