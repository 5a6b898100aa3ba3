"""Metrics against hand-computed cases and independent formulas."""

import itertools

import numpy as np
import pandas as pd
import pytest

from vrlib import metrics
from vrlib.data import Schema, prepare
from vrlib.errors import VrlibError


def mann_whitney_auc(labels, scores):
    """AUC as the probability that a member outscores a non-member (ties count 1/2)."""
    pos = [s for y, s in zip(labels, scores) if y == 1]
    neg = [s for y, s in zip(labels, scores) if y == 0]
    wins = sum(1.0 if p > q else 0.5 if p == q else 0.0 for p, q in itertools.product(pos, neg))
    return wins / (len(pos) * len(neg))


def test_auc_against_mann_whitney():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 60)
    scores = rng.integers(0, 8, 60).astype(float)  # many ties
    assert metrics.auc(labels, scores) == pytest.approx(mann_whitney_auc(labels, scores))
    assert metrics.auc([0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4]) == 1.0


def test_accuracy_and_tpr_by_hand():
    labels = [0, 0, 0, 1, 1, 1]
    scores = [0.1, 0.2, 0.9, 0.3, 0.8, 0.7]
    # Median 0.5: called members 0.9, 0.8, 0.7 -> right on 1, 1 and wrong on 0.9; others right on 0, 0, wrong on 0.3.
    assert metrics.accuracy_at_median(labels, scores) == pytest.approx(4 / 6)
    # FPR <= 0: nothing above 0.9 is allowed; at FPR 1/3 (threshold 0.7 or 0.3) TPR reaches 1.
    assert metrics.tpr_at_fpr(labels, scores, 0.0) == 0.0
    assert metrics.tpr_at_fpr(labels, scores, 1 / 3) == 1.0
    assert metrics.accuracy([1, 0, 1], [1, 1, 1]) == pytest.approx(2 / 3)


def test_top_q_precision_handles_ties_whatever_the_order():
    labels = np.array([1, 0, 1, 0, 0, 1, 0, 0, 0, 0])
    scores = np.array([5, 5, 5, 5, 1, 9, 0, 0, 0, 0], dtype=float)
    # Top 30 %: the 9 (a member) plus 2 of the four tied 5s (half of them members) -> (1 + 2 * 0.5) / 3.
    assert metrics.top_q_precision(labels, scores, 0.3) == pytest.approx(2 / 3)
    order = np.random.default_rng(1).permutation(10)
    assert metrics.top_q_precision(labels[order], scores[order], 0.3) == pytest.approx(2 / 3)
    assert metrics.top_q_precision(labels, scores, 0.1) == 1.0
    with pytest.raises(VrlibError, match="q must be"):
        metrics.top_q_precision(labels, scores, 0.0)


def test_bad_inputs():
    with pytest.raises(VrlibError, match="both classes"):
        metrics.auc([1, 1], [0.2, 0.3])
    with pytest.raises(VrlibError, match="NaN"):
        metrics.auc([0, 1], [0.2, np.nan])
    with pytest.raises(VrlibError, match="equal length"):
        metrics.auc([0, 1, 1], [0.2, 0.3])


def test_mean_std_is_population_std():
    assert metrics.mean_std([1.0, 3.0]) == (2.0, 1.0)


def test_marginal_distance_by_hand():
    schema = Schema(["c"], ["x"])
    real = prepare(pd.DataFrame({"c": ["a", "a", "b", "b"], "x": [0.0, 0.0, 10.0, 10.0]}), schema)
    same = real.copy()
    assert metrics.marginal_distance(real, same, schema) == 0.0
    synth = real.copy()
    synth["c"] = pd.Categorical(["a", "a", "a", "b"], categories=real["c"].cat.categories)
    synth["x"] = [0.0, 10.0, 10.0, 10.0]
    # c: (1/2, 1/2) vs (3/4, 1/4) -> TVD 1/4; x (two bins): (1/2, 1/2) vs (1/4, 3/4) -> 1/4.
    assert metrics.marginal_distance(real, synth, schema, way=1, bins=2) == pytest.approx(0.25)
    # Joint (c, x): real {a0: 1/2, b10: 1/2}; synth {a0: 1/4, a10: 1/2, b10: 1/4} -> TVD 1/2.
    assert metrics.marginal_distance(real, synth, schema, way=2, bins=2) == pytest.approx(0.5)


def test_wasserstein_helpers():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(500, 3))
    assert metrics.sliced_wasserstein(a, a) == 0.0 and metrics.column_wasserstein(a, a) == 0.0
    shift = np.array([1.0, 0.0, 0.0])
    # a shift by v moves every projection by |θ·v|: the sliced distance is the mean of |θ_1|
    dirs = np.random.default_rng(7).normal(size=(100, 3))
    expected = np.mean(np.abs(dirs[:, 0]) / np.linalg.norm(dirs, axis=1))
    assert metrics.sliced_wasserstein(a, a + shift, seed=7) == pytest.approx(expected)
    assert metrics.column_wasserstein(a, a + shift) == pytest.approx(1 / 3)
