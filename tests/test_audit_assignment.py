"""Copy evidence with released records assigned to their nearest real record (:mod:`vrlib.audit.assignment`).

Built to say yes (planted copies of training records whose population near-twins are in
the holdout: flagged with the assignment, masked by the twins without it) and no (releases
drawn from the population, training and holdout exchangeable, values on a coarse grid so
that exact ties between training, holdout and released records are common: the p-values
must not be too small, and nothing may be flagged), with the assignment checked against a
brute-force computation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from vrlib.audit.assignment import assigned_closeness, assigned_evidence
from vrlib.audit.evidence import copy_evidence
from vrlib.audit.inputs import check_tables
from vrlib.audit.pvalues import benjamini_hochberg
from vrlib.data import Schema

SCHEMA = Schema(["a", "b"], ["x", "y", "z"])


def population(n: int, rng, grid: int | None = None) -> pd.DataFrame:
    """Mixed records; with ``grid``, continuous values on that many levels (exact ties common)."""
    cont = rng.uniform(size=(n, 3))
    if grid:
        cont = np.floor(cont * grid) / grid
    return pd.DataFrame(
        {
            "a": rng.choice(list("pqr"), n),
            "b": rng.choice(["f", "m"], n),
            "x": cont[:, 0],
            "y": cont[:, 1],
            "z": cont[:, 2],
        }
    )


def masked_case(seed: int = 0, n_planted: int = 10):
    """400 training, 4,000 holdout, 2,000 released records; ``n_planted`` training records copied into the
    release, each with a near-twin in the holdout (x moved by 10⁻⁶ of its range, below the resolution)."""
    rng = np.random.default_rng(seed)
    pop = population(400 + 4000 + 2000, rng)
    train = pop.iloc[:400].reset_index(drop=True)
    holdout = pop.iloc[400:4400].reset_index(drop=True)
    release = pop.iloc[4400:].reset_index(drop=True)
    idx = rng.choice(len(train), n_planted, replace=False)
    twins = train.iloc[idx].copy()
    twins["x"] = twins["x"] + 1e-6
    holdout.iloc[:n_planted] = twins.to_numpy()
    release.iloc[:n_planted] = train.iloc[idx].to_numpy()
    return check_tables(train, release, holdout, SCHEMA), idx


def test_planted_copies_masked_by_holdout_twins_are_flagged_with_the_assignment():
    (train, release, holdout), idx = masked_case()
    planted = np.zeros(len(train), bool)
    planted[idx] = True
    kept = copy_evidence(train, holdout, release, SCHEMA, near_matches=False)[0]["p_value"].to_numpy()
    _, kept_flags = benjamini_hochberg(kept, 0.05)
    tab, hold_tab, _ = assigned_evidence(train, holdout, release, SCHEMA)
    _, flags = benjamini_hochberg(tab["p_value"].to_numpy(), 0.05)
    # without the assignment the ten twins score like the copies: at most the one beyond them all is flagged
    assert kept_flags.sum() <= 1
    # with it, each copy belongs to its own record (distance 0), the twins get nothing from it
    assert flags[idx].all() and not flags[~planted].any()
    assert (tab.loc[idx, "n_assigned_all"] >= 1).all()
    twins = hold_tab.iloc[: len(idx)]
    assert (twins["closeness_all"] < np.sort(hold_tab["closeness_all"].to_numpy())[-len(idx)]).all()


def test_assignment_by_brute_force():
    rng = np.random.default_rng(4)
    pop = population(700, rng, grid=20)
    train, holdout, release = pop.iloc[:200], pop.iloc[200:400], pop.iloc[400:]
    train, release, holdout = check_tables(
        train.reset_index(drop=True), release.reset_index(drop=True), holdout.reset_index(drop=True), SCHEMA
    )
    got = assigned_closeness(train, holdout, release, SCHEMA, k=5, resolution=1e-4)["all"]
    real = pd.concat([train, holdout], ignore_index=True)
    span = {c: np.ptp(pd.concat([real, release])[c].to_numpy(float)) for c in SCHEMA.continuous}
    g = sum(
        (real[c].astype(object).to_numpy()[:, None] != release[c].astype(object).to_numpy()[None, :]).astype(float)
        for c in SCHEMA.categorical
    ) + sum(
        np.abs(real[c].to_numpy(float)[:, None] - release[c].to_numpy(float)[None, :]) / span[c]
        for c in SCHEMA.continuous
    )
    g /= len(SCHEMA.columns)
    tied = np.isclose(g, g.min(axis=0), rtol=0, atol=1e-12)  # (real, released): a nearest real record
    unique = tied & (tied.sum(axis=0) == 1)
    d_assigned = np.concatenate([got["train"]["d_assigned"], got["holdout"]["d_assigned"]])
    n_assigned = np.concatenate([got["train"]["n_assigned"], got["holdout"]["n_assigned"]])
    assert tied.sum(axis=0).max() > 1 and (tied.sum(axis=0) == 1).any()  # the grid makes ties: both rules checked
    # a released record with one nearest real record goes to it; one tied with several goes to none of them
    assert n_assigned.sum() == (tied.sum(axis=0) == 1).sum()
    assert np.array_equal(n_assigned, unique.sum(axis=1))
    expected = np.where(unique, g, np.inf).min(axis=1)
    assert np.allclose(d_assigned[np.isfinite(expected)], expected[np.isfinite(expected)], rtol=0, atol=1e-9)
    assert np.isinf(d_assigned[~np.isfinite(expected)]).all()
    nbr = np.sort(g, axis=1)[:, 1:6].mean(axis=1)
    assert np.allclose(np.concatenate([got["train"]["d_neighbourhood"], got["holdout"]["d_neighbourhood"]]), nbr)


@pytest.mark.parametrize("grid", [4, None])
def test_no_signal_pvalues_are_not_too_small(grid):
    """Training and holdout exchangeable; a coarse grid makes exact ties among all three tables common,
    so a tie-break that favoured training records would give them too many small p-values (breaking
    ties by position, training records first, gave 393 of 3,600 at p <= 0.01 on the 4-level grid)."""
    counts, n, flagged = {0.01: 0, 0.05: 0, 0.2: 0}, 0, 0
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        pop = population(600 + 1500 + 800, rng, grid=grid)
        train, holdout, release = (
            pop.iloc[:600].reset_index(drop=True),
            pop.iloc[600:2100].reset_index(drop=True),
            pop.iloc[2100:].reset_index(drop=True),
        )
        train, release, holdout = check_tables(train, release, holdout, SCHEMA)
        p = assigned_evidence(train, holdout, release, SCHEMA, seed=seed)[0]["p_value"].to_numpy()
        flagged += int(benjamini_hochberg(p, 0.05)[1].sum())
        n += len(p)
        for t in counts:
            counts[t] += int((p <= t).sum())
    assert flagged == 0
    for t, c in counts.items():
        # too many small p-values is what would make flags false (one-sided, 6 seeds pooled)
        assert stats.binom.sf(c - 1, n, t) > 1e-3, (t, c, n * t)


def test_benchmark_counts_the_masked_case():
    """``benchmarks/bench_audit_assignment.py``'s per-release counts, on the masked case above."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_audit_assignment.py"
    spec = importlib.util.spec_from_file_location("bench_audit_assignment", path)
    bench = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_audit_assignment", bench)
    spec.loader.exec_module(bench)
    (train, release, holdout), idx = masked_case()
    row = bench.evaluate(train, holdout, release, SCHEMA, idx)
    assert row["assigned"]["flagged_tp"] == 10 and row["assigned"]["flagged_fp"] == 0
    assert row["assigned"]["top_k"] == 10 and row["kept"]["flagged_tp"] <= 1
    # the ten twins lift the kept view's null: its largest holdout score is a copy's, the assigned one's is not
    assert row["kept"]["holdout_top_all"][0] > row["assigned"]["holdout_top_all"][0]


def test_a_copy_of_a_record_with_an_exact_holdout_twin_goes_to_neither():
    """The twin case that rules out both other tie rules: given to the twin (a seeded order, or to all tied
    records), the copy makes a non-member score like a copy and lifts the null every record is calibrated on."""
    (train, release, holdout), idx = masked_case(n_planted=10)
    holdout = holdout.copy()
    holdout.iloc[:5] = train.iloc[idx[:5]].to_numpy()  # five of the twins made exact
    got = assigned_closeness(train, holdout, release, SCHEMA)["all"]
    assert (got["train"]["n_assigned"].iloc[idx[:5]] == 0).all()
    assert (got["holdout"]["n_assigned"].iloc[:5] == 0).all()
    assert (got["train"]["d_assigned"].iloc[idx[5:]] == 0).all()  # the others keep their copies
    # no twin is among the holdout's top scores, which only copies would reach
    assert got["holdout"]["closeness"].iloc[:5].max() < got["train"]["closeness"].iloc[idx[5:]].min()


def test_assigned_evidence_does_not_depend_on_the_seed_where_ties_abound():
    rng = np.random.default_rng(9)
    pop = population(500 + 1200 + 700, rng, grid=4)
    train, holdout, release = pop.iloc[:500], pop.iloc[500:1700], pop.iloc[1700:]
    train, release, holdout = check_tables(
        train.reset_index(drop=True), release.reset_index(drop=True), holdout.reset_index(drop=True), SCHEMA
    )
    a = copy_evidence(train, holdout, release, SCHEMA, seed=0, assign=True, near_matches=False)[0]
    b = copy_evidence(train, holdout, release, SCHEMA, seed=3, assign=True, near_matches=False)[0]
    assert (a["n_assigned"] == 0).sum() > 0  # ties left records with nothing assigned: the rule is exercised
    pd.testing.assert_series_equal(a["closeness"], b["closeness"])
    pd.testing.assert_series_equal(a["closeness_continuous"], b["closeness_continuous"])
