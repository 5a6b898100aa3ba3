"""Shared fixtures: small random mixed tables made by the tests, and the real data when present."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vrlib.data import Schema, prepare, search_dirs


def make_table(n=60, n_cat=3, n_cont=2, seed=0, n_levels=4):
    """A random mixed table with ``n_cat`` categorical and ``n_cont`` continuous columns."""
    rng = np.random.default_rng(seed)
    data = {}
    for j in range(n_cat):
        data[f"c{j}"] = rng.choice([f"v{i}" for i in range(n_levels)], size=n)
    for j in range(n_cont):
        data[f"x{j}"] = rng.normal(size=n).round(2)  # rounding makes ties
    schema = Schema([f"c{j}" for j in range(n_cat)], [f"x{j}" for j in range(n_cont)])
    return prepare(pd.DataFrame(data), schema), schema


@pytest.fixture
def mixed_table():
    return make_table()


def real_file_present(name: str) -> bool:
    return any((d / name).is_file() for d in search_dirs())


def require_real(*names):
    """Skip unless every real data file in ``names`` is present (no download in tests)."""
    missing = [n for n in names if not real_file_present(n)]
    if missing:
        where = os.environ.get("VRLIB_DATA_DIR", "(VRLIB_DATA_DIR unset)")
        pytest.skip(f"real data file(s) {missing} not found in {where} or data/; set VRLIB_DATA_DIR=../shared/data")


PROJECT_ROOT = Path(__file__).resolve().parents[1]
