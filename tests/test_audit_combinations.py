"""The candidate statistics of benchmarks/bench_audit_combinations.py, checked against brute force."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vrlib.data import Schema, prepare


@pytest.fixture(scope="module")
def combos():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_audit_combinations.py"
    spec = importlib.util.spec_from_file_location("bench_audit_combinations", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_audit_combinations", module)
    spec.loader.exec_module(module)
    return module


def _tables(seed=0, n=12):
    rng = np.random.default_rng(seed)

    def table(m):
        return pd.DataFrame(
            {
                "a": rng.choice(list("abc"), m),
                "b": rng.choice(list("uv"), m),
                "x": rng.normal(size=m).round(3),
                "y": rng.uniform(size=m).round(3),
            }
        )

    schema = Schema(["a", "b"], ["x", "y"])
    full = prepare(pd.concat([table(n), table(n), table(15)], ignore_index=True), schema)
    return full.iloc[:n].reset_index(drop=True), full.iloc[n : 2 * n].reset_index(drop=True), full.iloc[2 * n :], schema


def _brute(df, release, schema, full):
    """Gower distance (changed category 1, continuous change its share of the range, over F) less 1/F if a category differs."""
    n_cols = len(schema.columns)
    cont = list(schema.continuous)
    lo, hi = full[cont].min(), full[cont].max()
    out = []
    for _, r in df.iterrows():
        ds = []
        for _, s in release.iterrows():
            cats = sum(r[c] != s[c] for c in schema.categorical)
            cont = sum(abs(r[c] - s[c]) / (hi[c] - lo[c]) for c in schema.continuous)
            ds.append((cats + cont) / n_cols - (1.0 / n_cols if cats else 0.0))
        ds = np.sort(np.maximum(ds, 0.0))
        out.append((ds[0], ds[1:6].mean()))
    return np.array(out)


def test_tolerant_view_matches_brute_force(combos):
    # a release of 15 records: every record is a candidate (20 nearest per view), so the search is exact
    train, holdout, release, schema = _tables()
    full = pd.concat([train, holdout, release])
    got = combos.tolerant_view({"train": train, "holdout": holdout}, release.reset_index(drop=True), schema)
    for name, df in (("train", train), ("holdout", holdout)):
        want = _brute(df, release, schema, full)
        np.testing.assert_allclose(got[name][0], want[:, 0], atol=1e-9)
        np.testing.assert_allclose(got[name][1], want[:, 1], atol=1e-9)


def test_tolerant_view_makes_one_changed_category_an_exact_copy(combos):
    train, holdout, release, schema = _tables(seed=1)
    copy = train.iloc[[3]].copy()
    copy["a"] = "a" if copy["a"].iloc[0] != "a" else "b"
    release = pd.concat([release, copy], ignore_index=True)
    for c in schema.categorical:
        release[c] = pd.Categorical(release[c].astype(object), categories=train[c].cat.categories)
    d1, _ = combos.tolerant_view({"train": train}, release, schema)["train"]
    assert d1[3] == 0.0  # one category changed: free in this view
    two = train.iloc[[5]].copy()
    two["a"] = "a" if two["a"].iloc[0] != "a" else "b"
    two["b"] = "u" if two["b"].iloc[0] != "u" else "v"
    release = pd.concat([release, two], ignore_index=True)
    for c in schema.categorical:
        release[c] = pd.Categorical(release[c].astype(object), categories=train[c].cat.categories)
    d1, _ = combos.tolerant_view({"train": train}, release, schema)["train"]
    assert 0 < d1[5] <= 1.0 / 4 + 1e-12  # two changed: the second still counts (1/F), no continuous twin elsewhere


def test_audit_tolerant_view_equals_the_study(combos):
    # the audit's tolerant view (its own searches made for 20 neighbours) against the study's (searches of its own)
    from test_audit_resolution import SCHEMA, population

    from vrlib.audit.evidence import copy_evidence

    pop = prepare(population(2000, 3), SCHEMA)
    train, holdout, release = pop.iloc[:200], pop.iloc[200:500], pop.iloc[500:1100].reset_index(drop=True)
    ev, ev_ho, _ = copy_evidence(train, holdout, release, SCHEMA, k=5, resolution=1e-4, tolerant=True)
    study = combos.tolerant_view({"train": train, "holdout": holdout}, release, SCHEMA)
    eps = 1e-4 / len(SCHEMA.columns)
    for got, (d1, nbr) in ((ev, study["train"]), (ev_ho, study["holdout"])):
        np.testing.assert_allclose(got["closeness_tolerant"], np.log((nbr + eps) / (d1 + eps)), atol=1e-9)
    # and the audit-only mode of the script gives the audit's p-values, off and on
    flags = combos.audit_flags(train, holdout, release, SCHEMA)
    np.testing.assert_allclose(flags["audit, tolerant"], ev["p_value"])
    off, _, _ = copy_evidence(train, holdout, release, SCHEMA, k=5, resolution=1e-4)
    np.testing.assert_allclose(flags["bonferroni (kept)"], off["p_value"])
