"""``vrlib audit`` on cases no benchmark names: a release that repeats one record many times.

A generator that memorises a record often writes it more than once.  The closeness of a record is
``log((d_nbr + eps) / (d_1 + eps))``; before the fix, ``k + 1`` verbatim copies of one training
record made its neighbourhood as well as its match (``d_nbr = d_1 = 0``), so the most copied
record scored 0 and was never flagged; now it scores as one released ``k`` times.  Small tables the tests make themselves.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import vrlib
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


def test_a_record_released_many_times_scores_as_one_released_k_times(split):
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
    # the copies keep k - 1 = 4 of the 5 neighbourhood places (at 0), the nearest other record the fifth
    assert rep["d_neighbourhood"] == pytest.approx(gower.min() / 5, rel=1e-6)
    assert rep["closeness"] == pytest.approx(np.log((gower.min() / 5 + eps) / eps), rel=1e-6)
    assert ref["d_neighbourhood"] == pytest.approx(rep["d_neighbourhood"], rel=0.05)  # as if released k times
    assert rep["p_value"] == pytest.approx(ref["p_value"], rel=0.1)  # before: closeness 0, p-value about 0.5
    assert rep["risk_rank"] <= 5 and ref["risk_rank"] <= 5


def test_a_holdout_record_released_many_times_flags_no_training_record(split):
    """The counter-case: the same treatment for a non-member, so its repeats lift the null, not a member."""
    train, holdout, other = split
    many = vrlib.audit(train, _release(other, holdout.iloc[[7]], 25), holdout, SCHEMA, seed=0, **FAST)
    assert many.summary["n_flagged"] == 0
    assert many.summary["n_verbatim"] == 0
