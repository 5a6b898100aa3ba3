"""The holdout-check benchmark: its small version runs, calls the shifted holdout shifted and no other."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_small_version_checks_every_scenario(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_audit_holdout_check.py"), "--small"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    rows = {r["scenario"]: r for r in out["rows"]}
    # the validation benchmark's small scenarios, each with both checks
    assert len(rows) == 8 and out["summary"]["n_scenarios"] == 8
    # one split for all but the shifted holdout (same training records, another holdout) and the duplicates
    assert out["summary"]["n_pairs_checked"] == 3
    for name, row in rows.items():
        for check in ("cross_fitted", "pooled"):
            res = row[check]
            assert res["ci_low"] <= res["auc"] <= res["ci_high"], name
            assert res["shift"] == (res["ci_low"] > 0.5 and res["auc"] >= 0.55), name
        if row["kind"] == "shift":
            assert row["cross_fitted"]["shift"] and row["pooled"]["shift"], name
        else:
            assert not row["cross_fitted"]["shift"], name
        # planting changes the release, never the training records
        if row["kind"] == "planted":
            assert row["train_as_first_scenario"], name
    # population duplicates: holdout rows equal to training rows, counted
    assert rows["population duplicates (drawn with replacement)"]["n_holdout_in_train"] > 0
    assert out["summary"]["shift_scenarios_called_shifted"] and out["summary"]["others_called_shifted"] == []


def test_pooled_check_is_the_former_audit_check():
    """On a null split the pooled check equals DeLong's AUC of the 5-fold scores computed here independently."""
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from threadpoolctl import threadpool_limits

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_audit_holdout_check as bench
    from vrlib.audit.scores import density_view
    from vrlib.parallel import derive_seed

    df, schema = bench.validation.small_population(800, 3)
    train, holdout = df.iloc[:400].reset_index(drop=True), df.iloc[400:].reset_index(drop=True)
    res = bench.pooled_check(train, holdout, schema, seed=0)
    # the same subsample, encoding, model and folds, scored by sklearn's AUC
    rng = np.random.default_rng(derive_seed(0, "audit holdout check"))
    parts = [t.iloc[np.sort(rng.permutation(len(t))[:400])] for t in (train, holdout)]
    cont = parts[0][list(schema.continuous)].to_numpy(np.float64)
    X = np.vstack([density_view(p, schema, cont.mean(axis=0), cont.std(axis=0)) for p in parts])
    y = np.r_[np.ones(400), np.zeros(400)]
    model = HistGradientBoostingClassifier(max_iter=50, random_state=derive_seed(0, "audit holdout model") % 2**31)
    folds = StratifiedKFold(5, shuffle=True, random_state=derive_seed(0, "audit holdout folds") % 2**31)
    with threadpool_limits(1):  # OpenMP threads spin on shared cores
        scores = cross_val_predict(model, X, y, cv=folds, method="predict_proba")[:, 1]
    assert abs(res["auc"] - roc_auc_score(y, scores)) < 1e-12
    assert not res["shift"]
