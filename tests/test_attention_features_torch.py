"""The attention attack's preprocessing in torch (the GPU path) against the numpy path, run on the CPU.

Both paths must keep the same records of each dataset, in the same order, with the same
values: bitwise, ties at the cut included, for every metric the attack supports.  The
distance both use (:class:`TargetDistance`) is checked against
:func:`vrlib.distance.pairwise_distances`, an independent computation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from vrlib.attacks.attention import AttentionAttack, preprocess
from vrlib.attacks.attention import features_torch
from vrlib.attacks.attention.features import TargetDistance, _frame_codes
from vrlib.data import Schema
from vrlib.distance import pairwise_distances
from vrlib.encoding import TableEncoder, encode_table
from vrlib.errors import VrlibError
from vrlib.games import SyntheticDatasets

CAT = ["a", "b", "c"]
SCHEMA = Schema(categorical=("c0", "c1"), continuous=("x0", "x1"))
METRICS = [("cosine", None), ("minkowski", 1), ("minkowski", 2), ("minkowski", 3.0), ("minkowski", np.inf)]


def _pool(rng, n, schema=SCHEMA):
    """Records on a coarse grid: many duplicates and many exact distance ties."""
    data = {c: pd.Categorical(rng.choice(CAT, size=n), categories=CAT) for c in schema.categorical}
    data.update({c: rng.choice([-1.0, -0.0, 0.0, 0.5, 1.0, 2.0], size=n) for c in schema.continuous})
    return pd.DataFrame(data)[list(schema.columns)]


def _game(seed, n_datasets=30, schema=SCHEMA):
    rng = np.random.default_rng(seed)
    datasets = [_pool(rng, int(rng.integers(1, 60)), schema) for _ in range(n_datasets)]
    target = _pool(rng, 1, schema)
    encoder = TableEncoder(schema).fit(pd.concat(datasets + [target], ignore_index=True))
    return datasets, target, encoder


def _assert_same(a, b):
    np.testing.assert_array_equal(a.mask, b.mask)
    np.testing.assert_array_equal(a.n_unique, b.n_unique)
    np.testing.assert_array_equal(a.target, b.target)
    assert a.records.dtype == b.records.dtype == np.float32
    np.testing.assert_array_equal(a.records, b.records)  # bitwise (up to the sign of zero)


@pytest.mark.parametrize("metric,p", METRICS)
def test_target_distance_is_pairwise_distances(metric, p):
    """The distance from codes equals vrlib.distance's, zero continuous vectors (record or target) included."""
    rng = np.random.default_rng(1)
    table = _pool(rng, 200)
    table.loc[:9, ["x0", "x1"]] = 0.0  # scaled: not zero (min is -1), so make a zero row by the scaling below
    encoder = TableEncoder(SCHEMA).fit(table)
    encoder.min_ = np.zeros(2)  # raw values are the scaled ones: rows 0-9 are zero vectors
    encoder.scale_ = np.ones(2)
    enc = encoder.transform(table)
    codes = _frame_codes(table, encoder)[0]
    for t in (0, 20):  # a zero target, a non-zero one
        expected = pairwise_distances(enc, type(enc)(enc.onehot[[t]], enc.continuous[[t]], 2), metric, p)[:, 0]
        got = TargetDistance(codes[t], enc.continuous[t], metric, p)(np, codes, enc.continuous)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
        assert got[t] == 0.0 and not np.signbit(got).any()
        got_torch = TargetDistance(codes[t], enc.continuous[t], metric, p)(
            torch, torch.from_numpy(codes), torch.from_numpy(enc.continuous)
        )
        np.testing.assert_array_equal(got_torch.numpy(), got)


@pytest.mark.parametrize("schema", [Schema(categorical=("c0", "c1")), Schema(continuous=("x0", "x1"))])
@pytest.mark.parametrize("metric,p", [("cosine", None), ("minkowski", 2)])
def test_target_distance_with_one_kind_of_column(schema, metric, p):
    table = _pool(np.random.default_rng(2), 50, schema)
    encoder = TableEncoder(schema).fit(table)
    enc = encoder.transform(table)
    codes = _frame_codes(table, encoder)[0]
    expected = pairwise_distances(enc, type(enc)(enc.onehot[[3]], enc.continuous[[3]], enc.n_categorical), metric, p)
    got = TargetDistance(codes[3], enc.continuous[3], metric, p)(np, codes, enc.continuous)
    np.testing.assert_allclose(got, expected[:, 0], rtol=0, atol=1e-12)


def test_target_distance_rejects_bad_metrics():
    with pytest.raises(VrlibError, match="unknown metric"):
        TargetDistance([0], [0.5], "euclid")
    with pytest.raises(VrlibError, match="p >= 1"):
        TargetDistance([0], [0.5], "minkowski", 0.5)


@pytest.mark.parametrize("metric,p", METRICS)
@pytest.mark.parametrize("top_x", [1, 4, 70])
def test_torch_path_keeps_the_records_the_numpy_path_keeps(metric, p, top_x):
    """Frames and a game's coded batch, ties at the cut, padding, every metric: the same output, bitwise."""
    datasets, target, encoder = _game(seed=3)
    expected = preprocess(datasets, target, encoder, top_x, metric, p)
    # Exact ties at the cut (the top_x-th and the next closest unique record) do occur, and padding
    # where there are fewer records: the test is not vacuous.
    full = preprocess(datasets, target, encoder, 100, metric, p).records[..., -1]
    cut = expected.n_unique > top_x
    assert (full[cut, top_x - 1] == full[cut, top_x]).any() if top_x < 70 else (~cut).any()
    _assert_same(preprocess(datasets, target, encoder, top_x, metric, p, device="cpu"), expected)
    categories = {c: pd.Index(CAT) for c in SCHEMA.categorical}
    batch = SyntheticDatasets.from_arrays(
        [encode_table(df, SCHEMA, categories) for df in datasets[:1] * 5],
        np.arange(5) % 2,
        SCHEMA,
        categories,
        SCHEMA.columns,
    )
    _assert_same(
        preprocess(batch, target, encoder, top_x, metric, p, device="cpu"),
        preprocess(batch, target, encoder, top_x, metric, p),
    )


def test_torch_path_tie_breaking_by_hand():
    """Four distinct records at one distance, keep 2: the target's copy, then the tied record smallest by value."""

    def frame(c0, c1, x):
        return pd.DataFrame({"c0": pd.Categorical(c0, categories=CAT), "c1": pd.Categorical(c1, categories=CAT),
                             "x0": x, "x1": x})  # fmt: skip

    target = frame(["a"], ["a"], [1.0])
    tied = frame(["c", "b", "c", "b", "a", "a"], ["c", "c", "b", "b", "a", "a"], [1.0] * 6)  # no match, or the target
    encoder = TableEncoder(SCHEMA).fit(pd.concat([tied, frame(["a"], ["a"], [2.0])], ignore_index=True))
    for data in (tied, tied.iloc[::-1].reset_index(drop=True)):
        got = preprocess([data], target, encoder, 2, device="cpu")
        _assert_same(got, preprocess([data], target, encoder, 2))
        np.testing.assert_allclose(
            got.records[0, :, -2:], [[2, 0.0], [1, 0.5]], atol=1e-7
        )  # half the weight on categories
        np.testing.assert_array_equal(got.records[0, 1, :6], [0, 1, 0, 0, 1, 0])  # (b, b): the smallest codes


def test_torch_path_chunks_agree(monkeypatch):
    datasets, target, encoder = _game(seed=4)
    whole = preprocess(datasets, target, encoder, 5, device="cpu")
    monkeypatch.setattr(features_torch, "CHUNK_ROWS", 1)  # one dataset per chunk (coded batches)
    monkeypatch.setattr("vrlib.attacks.attention.features._CHUNK_ROWS", 1)  # and frames
    _assert_same(preprocess(datasets, target, encoder, 5, device="cpu"), whole)


def test_torch_path_bad_inputs_raise_the_numpy_paths_errors():
    datasets, target, encoder = _game(seed=5)
    bad = datasets[0].copy()
    bad.loc[0, "x0"] = np.nan
    with pytest.raises(VrlibError, match="missing continuous values"):
        preprocess([bad], target, encoder, 5, device="cpu")
    categories = {"c0": pd.Index(CAT + ["new"]), "c1": pd.Index(CAT)}
    frame = datasets[0].copy()
    frame["c0"] = pd.Categorical(["new"] * len(frame), categories=categories["c0"])
    batch = SyntheticDatasets.from_arrays(
        [encode_table(frame, SCHEMA, categories)], [1], SCHEMA, categories, SCHEMA.columns
    )
    with pytest.raises(VrlibError, match="unseen"):
        preprocess(batch, target, encoder, 5, device="cpu")


def test_attack_on_a_torch_device_uses_the_torch_path(monkeypatch):
    """What the attack trains on is the same, whichever path preprocessed it (the GPU's, here run on the CPU)."""
    from vrlib.attacks.attention import attack as attack_module

    rng = np.random.default_rng(6)
    datasets = [_pool(rng, 40) for _ in range(12)]
    labels, target = np.arange(12) % 2, _pool(rng, 1)
    numpy_inputs = AttentionAttack(SCHEMA, top_x=8)._prepare(datasets, labels, target)["inputs"]
    calls = []

    def spy(*args):
        calls.append(args[-1])
        return features_torch.preprocess_torch(*args[:-1], "cpu")

    monkeypatch.setattr(attack_module, "preprocess_torch", spy)
    fake = torch.device("meta")  # any non-CPU device takes the torch path
    monkeypatch.setattr(attack_module, "resolve_device", lambda _: fake)
    torch_inputs = AttentionAttack(SCHEMA, top_x=8)._prepare(datasets, labels, target)["inputs"]
    assert calls == [fake]
    for a, b in zip(numpy_inputs, torch_inputs):
        np.testing.assert_array_equal(a, b)


def test_gradients_parameter_is_checked_and_picks_the_path(monkeypatch):
    from vrlib.attacks.attention import attack as attack_module

    rng = np.random.default_rng(7)
    datasets = [_pool(rng, 20) for _ in range(10)]
    labels, target = np.arange(10) % 2, _pool(rng, 1)
    with pytest.raises(VrlibError, match="gradients must be one of"):
        AttentionAttack(SCHEMA, gradients="fast").fit(datasets, labels, target)
    seen = []
    real = attack_module.train_group

    def spy(*args, **kwargs):
        seen.append(kwargs["autograd"])
        return real(*args, **kwargs)

    monkeypatch.setattr(attack_module, "train_group", spy)
    for gradients in AttentionAttack.GRADIENTS:
        AttentionAttack(SCHEMA, top_x=5, max_epochs=1, gradients=gradients).fit(datasets, labels, target)
    assert seen == [None, True, False]


def spy_backprop(monkeypatch) -> list:
    """Records each hand-written backward pass that training builds: a test can tell which gradients trained."""
    from vrlib.attacks.attention import training

    built = []
    real = training._Backprop

    class Spy(real):
        def __init__(self, model):
            built.append(model)
            super().__init__(model)

    monkeypatch.setattr(training, "_Backprop", Spy)
    return built


def test_train_group_picks_the_hand_written_pass_on_the_cpu(monkeypatch):
    """autograd=None: the hand-written backward pass on a CPU (measured faster there)."""
    built = spy_backprop(monkeypatch)
    rng = np.random.default_rng(8)
    datasets = [_pool(rng, 20) for _ in range(10)]
    # on the CPU whatever the machine has (on a GPU, "auto" means autograd: tests/test_cuda_paths.py)
    AttentionAttack(SCHEMA, top_x=5, max_epochs=1, device="cpu").fit(datasets, np.arange(10) % 2, _pool(rng, 1))
    assert len(built) == 1
    AttentionAttack(SCHEMA, top_x=5, max_epochs=1, gradients="autograd", device="cpu").fit(
        datasets, np.arange(10) % 2, _pool(rng, 1)
    )
    assert len(built) == 1


def test_both_gradients_give_the_same_attack():
    """gradients="autograd" and "hand-written" train the same network (same seed, same dropout), up to rounding."""
    rng = np.random.default_rng(9)
    target = _pool(rng, 1)
    labels = np.arange(40) % 2
    datasets = [pd.concat([_pool(rng, 30)] + [target] * (2 * y), ignore_index=True) for y in labels]
    fits = {
        g: AttentionAttack(SCHEMA, top_x=10, max_epochs=6, batch_size=5, lr=1e-2, gradients=g, seed=3).fit(
            datasets, labels, target
        )
        for g in ("autograd", "hand-written")
    }
    a, b = fits["autograd"], fits["hand-written"]
    assert a.best_epoch_ == b.best_epoch_
    np.testing.assert_allclose(a.history_["val_loss"], b.history_["val_loss"], rtol=1e-5)
    np.testing.assert_allclose(a.predict_proba(datasets), b.predict_proba(datasets), rtol=1e-4, atol=1e-6)
    assert a.history_["train_loss"][-1] < a.history_["train_loss"][0]  # it trained
