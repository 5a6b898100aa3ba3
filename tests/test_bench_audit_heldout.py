"""The held-out near-copies of ``benchmarks/bench_audit_heldout.py``: each changes one value, as a person would."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import bench_audit_heldout as H  # noqa: E402

from vrlib.data import Schema, prepare  # noqa: E402

SCHEMA = Schema(["sex", "income"], ["age", "fnlwgt", "capital-gain", "hours-per-week"])


def adult_like(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "sex": rng.choice(["Female", "Male"], n),
            "income": rng.choice(["<=50K", ">50K"], n),
            "age": rng.integers(17, 91, n).astype(float),
            "fnlwgt": rng.integers(12285, 400000, n).astype(float),
            "capital-gain": np.where(rng.random(n) < 0.3, rng.integers(100, 20000, n), 0).astype(float),
            "hours-per-week": rng.integers(1, 100, n).astype(float),
        }
    )
    return prepare(df, SCHEMA)


def test_each_planted_record_differs_from_its_original_as_its_kind_says():
    train, release = adult_like(400, 0), adult_like(300, 1)
    counts = {"exact": 5, "age": 5, "hours": 5, "fnlwgt": 5, "gain": 5, "category": 5}
    out, idx, kinds = H.plant_person(train, release, SCHEMA, counts, seed=3)
    assert len(out) == len(release) and len(set(idx)) == len(idx) == 30
    planted = out.iloc[-30:].reset_index(drop=True)
    for i, (pos, kind) in enumerate(zip(idx, kinds)):
        new, old = planted.iloc[i], train.iloc[pos]
        changed = [c for c in SCHEMA.columns if new[c] != old[c]]
        if kind == "exact":
            assert changed == []
            continue
        column = {"age": "age", "hours": "hours-per-week", "fnlwgt": "fnlwgt", "gain": "capital-gain"}.get(kind)
        assert len(changed) == 1, (kind, changed)
        if kind == "category":
            assert changed[0] in SCHEMA.categorical
            continue
        assert changed == [column]
        step = abs(new[column] - old[column])
        if kind == "age":
            assert step == 1
        elif kind == "hours":
            assert step in (1, 2)
        elif kind == "fnlwgt":
            assert 0 < step < 1000 and (new[column] % 1000 == 0 or step % 100 == 0)
        else:
            assert old[column] > 0 and 0 < step < 100  # only records with a gain; rounded or moved by tens
