"""Target attention attack: preprocessing by hand, learning a planted signal, seeds, bad inputs."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
import torch

from vrlib.attacks.attention import AttentionAttack, TargetAttentionNet, preprocess
from vrlib.data import Schema
from vrlib.encoding import TableEncoder
from vrlib.errors import VrlibError
from vrlib.metrics import auc

SCHEMA = Schema(categorical=("a", "b"), continuous=("x",))


def _frame(a, b, x):
    return pd.DataFrame(
        {
            "a": pd.Categorical(a, categories=["u", "v"]),
            "b": pd.Categorical(b, categories=["p", "q"]),
            "x": np.asarray(x, dtype=np.float64),
        }
    )


# A hand-made synthetic dataset: 5 rows, 3 unique records.
DATASET = _frame(["v", "u", "u", "u", "v"], ["q", "q", "p", "p", "q"], [3.0, 2.0, 1.0, 1.0, 3.0])
TARGET = _frame(["u"], ["p"], [1.0])
ENCODER = TableEncoder(SCHEMA).fit(pd.concat([DATASET, TARGET], ignore_index=True))  # x in [1, 3]

CAT = [f"v{i}" for i in range(4)]
BIG_SCHEMA = Schema(categorical=("c0", "c1", "c2"), continuous=("x0", "x1"))


def _random_table(rng, n):
    data = {c: pd.Categorical(rng.choice(CAT, size=n), categories=CAT) for c in BIG_SCHEMA.categorical}
    data.update({c: rng.normal(size=n) for c in BIG_SCHEMA.continuous})
    return pd.DataFrame(data)


def _game(n_datasets, seed, planted=True, rows=40):
    """Datasets of random records; with ``planted``, IN datasets also hold 3 copies of the target."""
    rng = np.random.default_rng(seed)
    target = _random_table(np.random.default_rng(12345), 1)
    labels = rng.permutation(np.arange(n_datasets) % 2)
    datasets = []
    for label in labels:
        df = _random_table(rng, rows)
        if planted and label:
            df = pd.concat([df.iloc[3:], target, target, target], ignore_index=True)
        datasets.append(df)
    return datasets, labels, target


# ----------------------------------------------------------------- preprocessing


def test_preprocess_unique_records_counts_and_order():
    pre = preprocess([DATASET], TARGET, ENCODER, top_x=4)
    assert pre.records.shape == (1, 4, 2 + 2 + 1 + 2)  # one-hot a, one-hot b, x, multiplicity, distance
    assert pre.n_unique.tolist() == [3]
    assert pre.mask.tolist() == [[True, True, True, False]]
    # Columns: a=u, a=v, b=p, b=q, scaled x, multiplicity, distance.  Target (u, p, x=1 -> 0).
    # (u, p, 1): the target itself, twice, distance 0.
    # (u, q, 2): one categorical match of 2 -> cat similarity 1/2, weight 2/3; x=0.5 vs the
    #            target's zero vector -> similarity 0; distance 1 - 1/3 = 2/3.
    # (v, q, 3): nothing in common -> distance 1.
    expected = np.array(
        [
            [1, 0, 1, 0, 0.0, 2, 0.0],
            [1, 0, 0, 1, 0.5, 1, 2 / 3],
            [0, 1, 0, 1, 1.0, 2, 1.0],
            [0, 0, 0, 0, 0.0, 0, 0.0],  # padding
        ]
    )
    np.testing.assert_allclose(pre.records[0], expected, atol=1e-6)


def test_preprocess_target_row_has_multiplicity_one_and_distance_zero():
    pre = preprocess([DATASET], TARGET, ENCODER, top_x=2)
    np.testing.assert_allclose(pre.target, [1, 0, 1, 0, 0.0, 1, 0])


def test_preprocess_keeps_the_top_x_closest_and_pads_short_datasets():
    short = DATASET.iloc[[1]]  # a single record
    pre = preprocess([DATASET, short], TARGET, ENCODER, top_x=2)
    assert pre.mask.tolist() == [[True, True], [True, False]]
    np.testing.assert_allclose(pre.records[0, :, -1], [0.0, 2 / 3], atol=1e-6)  # the two closest
    np.testing.assert_allclose(pre.records[1, 0], [1, 0, 0, 1, 0.5, 1, 2 / 3], atol=1e-6)
    assert not pre.records[1, 1].any()


def test_preprocess_breaks_distance_ties_deterministically():
    # Four distinct records at the same distance to the target, keep 2.
    tied = _frame(["v"] * 4, ["q"] * 4, [1.5, 2.0, 2.5, 3.0])
    a = preprocess([tied], TARGET, ENCODER, top_x=2).records
    b = preprocess([tied.iloc[::-1].reset_index(drop=True)], TARGET, ENCODER, top_x=2).records
    np.testing.assert_array_equal(a, b)  # the row order of the dataset does not matter
    assert np.all(a[0, :, -1] == 1.0)


def test_preprocess_chunks_agree_with_one_at_a_time(monkeypatch):
    import vrlib.attacks.attention.features as features

    rng = np.random.default_rng(3)
    datasets = [DATASET.iloc[rng.integers(0, 5, size=rng.integers(1, 9))].reset_index(drop=True) for _ in range(12)]
    together = preprocess(datasets, TARGET, ENCODER, top_x=3)
    monkeypatch.setattr(features, "_CHUNK_ROWS", 1)  # one dataset per chunk
    alone = preprocess(datasets, TARGET, ENCODER, top_x=3)
    np.testing.assert_array_equal(together.records, alone.records)
    np.testing.assert_array_equal(together.mask, alone.mask)
    counts = together.records[..., -2].sum(axis=1)  # all records kept when <= 3 unique
    small = together.n_unique <= 3
    np.testing.assert_array_equal(counts[small], [len(d) for d, s in zip(datasets, small) if s])


def test_all_categorical_tables_census_like():
    schema = Schema(categorical=("a", "b"))
    data = DATASET[["a", "b"]]  # unique: (v,q) x2, (u,q) x1, (u,p) x2
    target = TARGET[["a", "b"]]
    encoder = TableEncoder(schema).fit(data)
    pre = preprocess([data], target, encoder, top_x=3)
    np.testing.assert_allclose(pre.records[0, :, -2:], [[2, 0.0], [1, 0.5], [2, 1.0]])
    np.testing.assert_allclose(pre.target, [1, 0, 1, 0, 1, 0])
    datasets = [data.iloc[[i % 5, (i + 1) % 5, (i + 2) % 5]].reset_index(drop=True) for i in range(10)]
    attack = AttentionAttack(schema, top_x=3, max_epochs=1).fit(datasets, np.arange(10) % 2, target)
    assert attack.predict_proba(datasets).shape == (10,)
    # The same datasets as a game's integer-coded batch (no continuous columns at all).
    from vrlib.encoding import encode_table
    from vrlib.games import SyntheticDatasets

    categories = {c: data[c].cat.categories for c in schema.categorical}
    batch = SyntheticDatasets.from_arrays(
        [encode_table(d, schema, categories) for d in datasets], np.arange(10) % 2, schema, categories, ("a", "b")
    )
    np.testing.assert_allclose(attack.predict_proba(batch), attack.predict_proba(datasets))


def test_unique_records_are_encoded_as_the_table_encoder_does():
    from vrlib.attacks.attention.features import _encode_codes, _frame_codes

    table = _random_table(np.random.default_rng(0), 30)
    encoder = TableEncoder(BIG_SCHEMA).fit(table)
    direct = encoder.transform(table)
    coded = _encode_codes(*_frame_codes(table, encoder), encoder)
    np.testing.assert_array_equal(coded.onehot, direct.onehot)
    np.testing.assert_allclose(coded.continuous, direct.continuous)


def test_game_batches_and_frames_give_the_same_features():
    from vrlib.encoding import encode_table
    from vrlib.games import SyntheticDatasets

    datasets, labels, target = _game(12, seed=11)
    categories = {c: pd.Index(CAT) for c in BIG_SCHEMA.categorical}
    arrays = [encode_table(df, BIG_SCHEMA, categories) for df in datasets]
    batch = SyntheticDatasets.from_arrays(arrays, labels, BIG_SCHEMA, categories, BIG_SCHEMA.columns)
    encoder = TableEncoder(BIG_SCHEMA).fit(pd.concat(datasets + [target], ignore_index=True))
    a = preprocess(datasets, target, encoder, top_x=8)
    b = preprocess(batch, target, encoder, top_x=8)
    np.testing.assert_array_equal(a.records, b.records)
    np.testing.assert_array_equal(a.mask, b.mask)
    # The attack takes the labels from the batch, and fits the same encoder either way.
    from_batch = AttentionAttack(BIG_SCHEMA, top_x=8, max_epochs=2).fit(batch, None, target)
    from_frames = AttentionAttack(BIG_SCHEMA, top_x=8, max_epochs=2).fit(datasets, labels, target)
    np.testing.assert_allclose(from_batch.encoder_.min_, from_frames.encoder_.min_)
    np.testing.assert_allclose(from_batch.encoder_.max_, from_frames.encoder_.max_)
    np.testing.assert_array_equal(from_batch.predict_proba(batch), from_frames.predict_proba(datasets))


def test_padding_gets_no_attention():
    torch.manual_seed(0)
    net = TargetAttentionNet(7).eval()
    pre = preprocess([DATASET, DATASET.iloc[[0]]], TARGET, ENCODER, top_x=4)
    records, mask, target = (torch.from_numpy(v) for v in (pre.records, pre.mask, pre.target))
    weights = net.attention(records, mask, target)
    assert torch.all(weights[~mask] == 0)
    torch.testing.assert_close(weights.sum(dim=1), torch.ones(2))
    # Changing what sits in padded slots changes nothing.
    noisy = records.clone()
    noisy[~mask] = 5.0
    with torch.no_grad():
        torch.testing.assert_close(net(records, mask, target), net(noisy, mask, target))


# ---------------------------------------------------------------------- learning

FAST = dict(top_x=10, max_epochs=40, patience=8, batch_size=20)


@pytest.fixture(scope="module")
def planted_fit():
    datasets, labels, target = _game(300, seed=1)
    attack = AttentionAttack(BIG_SCHEMA, seed=0, **FAST).fit(datasets, labels, target)
    return attack, target


def test_learns_a_planted_signal(planted_fit):
    attack, target = planted_fit
    test, labels, _ = _game(200, seed=2)
    proba = attack.predict_proba(test)
    assert proba.shape == (200,) and proba.dtype == np.float64
    assert np.all((proba >= 0) & (proba <= 1))
    assert auc(labels, proba) > 0.95
    assert 1 <= attack.best_epoch_ <= attack.n_epochs_ <= FAST["max_epochs"]
    assert len(attack.history_["val_loss"]) == attack.n_epochs_


def test_signal_free_task_stays_near_chance():
    datasets, labels, target = _game(300, seed=3, planted=False)
    attack = AttentionAttack(BIG_SCHEMA, seed=0, **FAST).fit(datasets, labels, target)
    test, test_labels, _ = _game(400, seed=4, planted=False)
    # Under the null the AUC of 200 + 200 datasets has a std of about 0.029; 0.12 is 4 std.
    assert abs(auc(test_labels, attack.predict_proba(test)) - 0.5) < 0.12


def test_same_seed_same_predictions(planted_fit):
    attack, target = planted_fit
    datasets, labels, _ = _game(300, seed=1)
    again = AttentionAttack(BIG_SCHEMA, seed=0, **FAST).fit(datasets, labels, target)
    test, _, _ = _game(50, seed=5)
    np.testing.assert_array_equal(attack.predict_proba(test), again.predict_proba(test))
    other = AttentionAttack(BIG_SCHEMA, seed=1, **{**FAST, "max_epochs": 2}).fit(datasets, labels, target)
    assert not np.array_equal(attack.predict_proba(test), other.predict_proba(test))


def test_fit_leaves_global_torch_state_alone():
    datasets, labels, target = _game(40, seed=6)
    torch.manual_seed(99)
    expected = torch.rand(3)
    torch.manual_seed(99)
    threads = torch.get_num_threads()
    AttentionAttack(BIG_SCHEMA, top_x=5, max_epochs=2, n_threads=1).fit(datasets, labels, target)
    torch.testing.assert_close(torch.rand(3), expected)
    assert torch.get_num_threads() == threads
    assert not torch.are_deterministic_algorithms_enabled()


def test_reference_fixes_the_scaling():
    datasets, labels, target = _game(40, seed=7)
    reference = _random_table(np.random.default_rng(8), 500)
    attack = AttentionAttack(BIG_SCHEMA, top_x=5, max_epochs=1, reference=reference).fit(datasets, labels, target)
    np.testing.assert_allclose(attack.encoder_.min_, reference[list(BIG_SCHEMA.continuous)].min())
    # Without a reference: the min over the training datasets and the target.
    default = AttentionAttack(BIG_SCHEMA, top_x=5, max_epochs=1).fit(datasets, labels, target)
    everything = pd.concat(datasets + [target])[list(BIG_SCHEMA.continuous)]
    np.testing.assert_allclose(default.encoder_.min_, everything.min())
    np.testing.assert_allclose(default.encoder_.max_, everything.max())


def test_category_sets_are_the_union_over_datasets_and_target():
    datasets, labels, target = _game(20, seed=10)
    # Plain string columns, and a value the target's categorical dtype does not know.
    datasets = [df.astype({c: str for c in BIG_SCHEMA.categorical}) for df in datasets]
    datasets[0].loc[0, "c0"] = "zz"
    attack = AttentionAttack(BIG_SCHEMA, top_x=5, max_epochs=1).fit(datasets, labels, target)
    assert list(attack.encoder_.categories_[0]) == CAT + ["zz"]  # the target's order, then new ones
    assert attack.predict_proba(datasets).shape == (20,)


# -------------------------------------------------------------------- bad inputs


@pytest.fixture(scope="module")
def small_game():
    return _game(20, seed=9)


def _fit(datasets, labels, target, **params):
    params = {"top_x": 5, "max_epochs": 1, **params}
    return AttentionAttack(BIG_SCHEMA, **params).fit(datasets, labels, target)


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda d, y, t: ([], [], t), "no synthetic datasets"),
        (lambda d, y, t: (d[0], y, t), "list of DataFrames"),
        (lambda d, y, t: (d, np.zeros(len(d)), t), "only class 0"),
        (lambda d, y, t: (d, None, t), "labels are required"),
        (lambda d, y, t: (d, y[:-1], t), "one label per dataset"),
        (lambda d, y, t: (d, np.full(len(d), 2), t), "labels must be 0"),
        (lambda d, y, t: (d, y, t.drop(columns="x1")), "target does not match the schema.*x1"),
        (lambda d, y, t: (d, y, t.assign(extra=1.0)), "unexpected column.*extra"),
        (lambda d, y, t: (d, y, pd.concat([t, t])), "exactly one row"),
        (lambda d, y, t: (d, y, t.iloc[0]), "not a Series"),
        (lambda d, y, t: (d[:-1] + [d[-1].drop(columns="c0")], y, t), "synthetic dataset 19 does not match"),
        (lambda d, y, t: (d[:-1] + [d[-1].iloc[:0]], y, t), "no rows"),
    ],
)
def test_bad_inputs_raise_clear_errors(small_game, change, match):
    datasets, labels, target = small_game
    with pytest.raises(VrlibError, match=match):
        _fit(*change(list(datasets), labels, target))


@pytest.mark.parametrize(
    "params, match",
    [
        ({"top_x": 0}, "top_x"),
        ({"patience": 0}, "patience"),
        ({"validation_fraction": 1.0}, "validation_fraction"),
        ({"validation_fraction": 0.0, "patience": 3}, "needs a validation set"),
        ({"device": "tpu9"}, "device"),
    ],
)
def test_bad_parameters_raise_clear_errors(small_game, params, match):
    with pytest.raises(VrlibError, match=match):
        _fit(*small_game, **params)


def test_predict_before_fit_and_unseen_categories(small_game):
    datasets, labels, target = small_game
    with pytest.raises(VrlibError, match="not fitted"):
        AttentionAttack(BIG_SCHEMA).predict_proba(datasets)
    attack = _fit(datasets, labels, target)
    odd = datasets[0].copy()
    odd["c0"] = pd.Categorical(["new"] * len(odd))
    with pytest.raises(VrlibError, match="unseen"):
        attack.predict_proba([odd])
    nan = datasets[0].copy()
    nan.loc[0, "x0"] = np.nan
    with pytest.raises(VrlibError, match="missing"):
        attack.predict_proba([nan])


def test_validation_fraction_zero_keeps_the_last_epoch(small_game):
    attack = _fit(*small_game, validation_fraction=0.0, max_epochs=3)
    assert attack.best_epoch_ == attack.n_epochs_ == 3
    assert attack.history_["val_loss"] == []


@pytest.mark.parametrize("n_in, n_out", [(5, 5), (50, 150), (1, 9)])
def test_validation_split_is_stratified_and_never_empty(n_in, n_out):
    attack = AttentionAttack(BIG_SCHEMA, validation_fraction=0.1)
    y = np.array([1] * n_in + [0] * n_out)
    train, val = attack._split(y, np.random.default_rng(0))
    assert len(val) == max(1, round(0.1 * len(y))) and len(np.intersect1d(train, val)) == 0
    assert len(train) + len(val) == len(y)
    if n_in >= 10:
        assert y[val].sum() == round(0.1 * n_in)


# ------------------------------------------------------------ grouped training


def test_grouped_forward_is_the_network_forward():
    """The stacked model (embedding_bag, keys and values folded) computes what each TargetAttentionNet does."""
    from vrlib.attacks.attention.training import GroupedAttentionNet, sparse_inputs

    datasets, _, target = _game(6, seed=21)
    encoder = TableEncoder(BIG_SCHEMA).fit(pd.concat(datasets + [target], ignore_index=True))
    pre = preprocess(datasets, target, encoder, top_x=12)
    widths = [len(c) for c in encoder.categories_]
    codes, dense = sparse_inputs(pre.records, sum(widths), widths)
    nets = []
    for seed in range(3):
        torch.manual_seed(seed)
        nets.append(TargetAttentionNet(pre.records.shape[2]).eval())
    grouped = GroupedAttentionNet(nets, sum(widths)).eval()
    g = len(nets)
    stack = lambda a: torch.from_numpy(np.stack([a] * g))  # noqa: E731
    with torch.no_grad():
        logits = grouped(stack(codes), stack(dense), stack(pre.mask), stack(pre.target))
        for k, net in enumerate(nets):
            expected = net(*(torch.from_numpy(v) for v in (pre.records, pre.mask, pre.target)))
            torch.testing.assert_close(logits[k], expected, rtol=1e-5, atol=1e-6)
    # unstack gives the networks back.
    for net, back in zip(nets, grouped.unstack()):
        for a, b in zip(net.parameters(), back.parameters()):
            torch.testing.assert_close(a, b, rtol=0, atol=0)


def grouped_and_alone(device):
    """Three targets' attacks trained each alone and as one group of 3 on ``device``: ``(alone, together)``."""
    from vrlib.attacks.attention import fit_attacks

    params = dict(top_x=10, max_epochs=12, patience=1, batch_size=20, lr=3e-2, device=device)
    games = [_game(120, seed=30 + k, planted=k != 1) for k in range(3)]
    alone = [AttentionAttack(BIG_SCHEMA, seed=k, **params).fit(d, y, t) for k, (d, y, t) in enumerate(games)]
    together = fit_attacks(
        (AttentionAttack(BIG_SCHEMA, seed=k, **params), d, y, t) for k, (d, y, t) in enumerate(games)
    )
    assert together[0].timings_["group_size"] == 3
    return alone, together


def test_grouped_training_equals_training_each_target_alone():
    """Each target's result in a group of 3 (own data, seed, early stopping) is its result alone, on the CPU.

    (On a GPU the float orders differ more: tests/test_cuda_paths.py holds the GPU's version.)"""
    # Grouped and single training add up the same numbers in different orders: their losses differ in
    # the last bits, and training amplifies that over epochs.  Twelve epochs keep it below 1e-6, far
    # under the smallest change of validation loss an early-stopping decision here rests on (5e-5),
    # while the three targets still stop at different epochs (11, 6 and 12).
    alone, together = grouped_and_alone("cpu")
    test, _, _ = _game(40, seed=40)
    for a, b in zip(alone, together):
        assert (a.best_epoch_, a.n_epochs_) == (b.best_epoch_, b.n_epochs_)
        np.testing.assert_allclose(a.history_["val_loss"], b.history_["val_loss"], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(a.predict_proba(test), b.predict_proba(test), rtol=1e-5, atol=1e-7)
    # The targets did learn different things (the group did not tie their weights).
    assert not np.allclose(together[0].predict_proba(test), together[1].predict_proba(test))
    # One target stopped early while the others trained on: their stopping states are separate.
    assert len({a.n_epochs_ for a in alone}) > 1


def test_fit_attacks_groups_only_alike_attacks():
    from vrlib.attacks.attention import fit_attacks

    d, y, t = _game(60, seed=50)
    attacks = [AttentionAttack(BIG_SCHEMA, top_x=x, max_epochs=2, seed=0) for x in (5, 8, 5, 5)]
    fit_attacks([(a, d, y, t) for a in attacks], max_group=1)
    assert [a.timings_["group_size"] for a in attacks] == [1, 1, 1, 1]
    fitted = fit_attacks([(a, d, y, t) for a in attacks], max_group=2)
    assert fitted == attacks
    assert [a.timings_["group_size"] for a in attacks] == [2, 1, 2, 1]
    with pytest.raises(VrlibError, match="must be a tuple"):
        fit_attacks([(attacks[0], d, y)])


def _grouped_inputs(n_datasets=8, top_x=50, n_targets=3):
    """Preprocessed inputs of a small game (datasets of 40 rows: top_x = 50 leaves padding) and initial networks."""
    from vrlib.attacks.attention.training import sparse_inputs

    datasets, y, target = _game(n_datasets, seed=61)
    encoder = TableEncoder(BIG_SCHEMA).fit(pd.concat(datasets + [target], ignore_index=True))
    pre = preprocess(datasets, target, encoder, top_x=top_x)
    widths = [len(c) for c in encoder.categories_]
    codes, dense = sparse_inputs(pre.records, sum(widths), widths)
    nets = []
    for seed in range(n_targets):
        torch.manual_seed(seed)
        nets.append(TargetAttentionNet(pre.records.shape[2]))
    return (codes, dense, pre.mask, pre.target), np.asarray(y), nets, sum(widths)


def test_code_segments_list_each_category_records_by_brute_force():
    from vrlib.attacks.attention.training import code_segments

    codes = np.random.default_rng(0).integers(0, 7, size=(4, 5, 3))
    rows, starts = code_segments(codes, 8)  # code 7 never occurs
    assert rows.shape == (4, 15) and starts.shape == (4, 8)
    for d in range(4):
        for k in range(8):
            end = starts[d, k + 1] if k < 7 else 15
            expected = [x for x in range(5) for c in range(3) if codes[d, x, c] == k]
            assert list(rows[d, starts[d, k] : end]) == expected


def test_hand_written_gradients_equal_autograd():
    """_Backprop's gradients (dropout on, padding present) are those autograd gives the stacked model."""
    from vrlib.attacks.attention.training import GroupedAttentionNet, _Backprop, code_segments

    (codes, dense, mask, target), y, nets, k = _grouped_inputs()
    assert not mask.all()  # padding is exercised
    g, (n, x) = len(nets), mask.shape
    model = GroupedAttentionNet(nets, k)
    rng = np.random.default_rng(3)
    masks = [
        torch.from_numpy((rng.random((g,) + shape) >= model.dropout).astype(np.uint8))
        for shape in [(n, x, 20), (20,), (n, 10)]
    ]
    stack = lambda a: torch.from_numpy(np.stack([a] * g))  # noqa: E731
    labels = torch.from_numpy(np.stack([y, 1 - y, y]).astype(np.float32))

    # Autograd on the stacked model's forward, dropout multipliers 0 or 1 / (1 - p).
    scaled = [m.float() / (1 - model.dropout) for m in masks]
    logits = model(stack(codes), stack(dense), stack(mask), stack(target), scaled)
    F = torch.nn.functional
    F.binary_cross_entropy_with_logits(logits, labels, reduction="none").mean(1).sum().backward()
    expected = {name: p.grad.clone() for name, p in model.named_parameters()}

    backprop = _Backprop(model)
    offsets = (torch.arange(g) * k).view(g, 1, 1)
    flat_codes = stack(codes).reshape(g, n * x, -1) + offsets
    dense1 = torch.cat([stack(dense), torch.ones(g, n, x, 1)], -1).view(g, n * x, -1)
    bias = torch.zeros(g, n, x).masked_fill_(~stack(mask), float("-inf"))
    with torch.no_grad():
        out, saved = backprop.forward(flat_codes, dense1, bias, stack(target), masks)
        torch.testing.assert_close(out, logits.detach(), rtol=1e-5, atol=1e-5)
        rows, starts = code_segments(codes, k)
        datasets = torch.arange(g * n).view(g * n, 1)
        seg_rows = (torch.from_numpy(np.concatenate([rows] * g)) + datasets * x).view(-1)
        seg_starts = (torch.from_numpy(np.concatenate([starts] * g)) + datasets * rows.shape[1]).view(-1)
        backprop.backward(saved, (torch.sigmoid(out) - labels) / n, (seg_rows, seg_starts))
    for name, p in model.named_parameters():
        torch.testing.assert_close(p.grad, expected[name], rtol=1e-4, atol=1e-6, msg=name)


def _train(inputs, y, nets, k, **kwargs):
    from vrlib.attacks.attention.training import train_group

    g = len(nets)
    n = len(y)
    split = (np.arange(n)[n // 4 :], np.arange(n)[: n // 4])
    params = dict(
        n_onehot=k, lr=1e-2, batch_size=4, max_epochs=4, patience=None, eval_batch_size=5, device=torch.device("cpu")
    )
    params.update(kwargs)
    return train_group(
        [copy.deepcopy(net) for net in nets],
        [inputs] * g,
        [y] * g,
        [split] * g,
        [np.random.default_rng(s) for s in range(g)],
        list(range(g)),
        **params,
    )


def test_hand_written_training_equals_the_previous_autograd_training():
    """Same dropout stream: the hand-written path trains each target as the previous (autograd) implementation did."""
    inputs, y, nets, k = _grouped_inputs(n_datasets=18)
    new = _train(inputs, y, nets, k, dropout_stream="torch")
    old = _train(inputs, y, nets, k, dropout_stream="torch", autograd=True)
    for (net_a, hist_a, best_a, n_a), (net_b, hist_b, best_b, n_b) in zip(new, old):
        assert (best_a, n_a) == (best_b, n_b)
        np.testing.assert_allclose(hist_a["train_loss"], hist_b["train_loss"], rtol=1e-5)
        np.testing.assert_allclose(hist_a["val_loss"], hist_b["val_loss"], rtol=1e-5)
        for a, b in zip(net_a.parameters(), net_b.parameters()):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    # Training moved the weights (the comparison is not between two untrained copies).
    assert not torch.allclose(next(new[0][0].parameters()), next(nets[0].parameters()))


def test_numpy_dropout_stream_keeps_units_at_rate_one_minus_p():
    """The CPU dropout masks: keep rate 1 - p (binomial bounds), fresh each step, own stream per seed."""
    from vrlib.attacks.attention.training import MASK_CHUNK_STEPS, _DropoutStream

    p, steps = 0.15, 2 * MASK_CHUNK_STEPS + 3
    stream = _DropoutStream([7, 8], batch_size=4, top_x=10, h1=20, h2=10, p=p, device="cpu", kind="numpy")
    draws = [stream.next(4) for _ in range(steps)]
    m1 = torch.stack([d[0] for d in draws]).double()  # (steps, 2, 4, 10, 20)
    assert m1.dtype == torch.float64 and set(torch.unique(m1).tolist()) <= {0.0, 1.0}
    all_bits = torch.cat([torch.stack([d[i] for d in draws]).reshape(-1).double() for i in range(3)])
    n = all_bits.numel()
    assert abs(all_bits.mean().item() - (1 - p)) < 5 * np.sqrt(p * (1 - p) / n)
    assert not torch.equal(m1[0], m1[1]) and not torch.equal(m1[:, 0], m1[:, 1])
    # Consecutive steps are uncorrelated (within 5 standard errors of 0).
    a, b = m1[:-1].reshape(-1) - (1 - p), m1[1:].reshape(-1) - (1 - p)
    corr = (a * b).mean() / (p * (1 - p))
    assert abs(corr.item()) < 5 / np.sqrt(a.numel())
    # A target's masks depend only on its seed.
    alone = _DropoutStream([8], batch_size=4, top_x=10, h1=20, h2=10, p=p, device="cpu", kind="numpy")
    for d in draws:
        assert all(torch.equal(x[1], y[0]) for x, y in zip(d, alone.next(4)))


@pytest.mark.parametrize(
    "part",
    [
        "attacks/attention/features",
        "attacks/attention/network",
        "attacks/attention/training",
        "attacks/attention/attack",
        "encoding",
        "distance",
    ],
)
def test_editing_any_part_of_the_attack_renews_its_key(monkeypatch, part):
    """The achilles key of the attention attack hashes its four files and the modules its features use (the query
    attack's key none of them)."""
    from pathlib import Path

    from vrlib.experiments.achilles import attack_identity

    settings = {"attention_epochs": 3, "attention_patience": 2, "n_queries": 10}
    before = {a: attack_identity(a, SCHEMA, settings) for a in ("attention", "query")}
    read = Path.read_bytes
    edited = f"vrlib/{part}.py"

    def read_bytes(self):  # the file as if a constant had been added to its code
        return read(self) + (b"\n_EDITED = True\n" if str(self).replace("\\", "/").endswith(edited) else b"")

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    after = {a: attack_identity(a, SCHEMA, settings) for a in ("attention", "query")}
    assert after["attention"]["source"] != before["attention"]["source"]
    assert after["attention"]["params"] == before["attention"]["params"]
    assert after["query"] == before["query"]
