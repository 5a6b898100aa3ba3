"""Distances (eqs. 5, 6) and k-nearest neighbours against brute force and scikit-learn."""

import numpy as np
import pandas as pd
import pytest
from sklearn.neighbors import NearestNeighbors

from vrlib.data import Schema, prepare
from vrlib.distance import kneighbors, pairwise_distances
from vrlib.encoding import TableEncoder
from vrlib.errors import VrlibError

from conftest import make_table


def brute_force(df, schema, block_distance):
    """(F_cat/F) g(h_i, h_j) + (F_cont/F) g(c_i, c_j) one pair at a time, for a per-block distance g."""
    enc = TableEncoder(schema).fit(df).transform(df)
    h, c = enc.onehot, enc.continuous
    f_cat, f_cont = len(schema.categorical), len(schema.continuous)
    f = f_cat + f_cont
    n = len(df)
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if f_cat:
                out[i, j] += f_cat / f * block_distance(h[i], h[j])
            if f_cont:
                out[i, j] += f_cont / f * block_distance(c[i], c[j])
    return out


def cosine_block(a, b):
    """1 - cos(a, b), with a zero vector similar (1) only to another zero vector."""
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        return 0.0 if na == 0 and nb == 0 else 1.0
    return 1 - a @ b / (na * nb)


def brute_cosine(df, schema):
    """Eq. 5 straight from its definition (the weights sum to 1, so 1 - Σ w cos = Σ w (1 - cos))."""
    return brute_force(df, schema, cosine_block)


def brute_minkowski(df, schema, p):
    """Eq. 6 straight from its definition."""
    return brute_force(df, schema, lambda a, b: np.sum(np.abs(a - b) ** p) ** (1 / p))


@pytest.mark.parametrize("n_cat,n_cont", [(3, 2), (4, 0), (0, 3), (1, 1)])
def test_cosine_matches_brute_force(n_cat, n_cont):
    df, schema = make_table(n=40, n_cat=n_cat, n_cont=n_cont, seed=n_cat * 10 + n_cont)
    enc = TableEncoder(schema).fit_transform(df)
    np.testing.assert_allclose(pairwise_distances(enc), brute_cosine(df, schema), atol=1e-12)


@pytest.mark.parametrize("p", [1, 2, 3, 4, 1.5])
@pytest.mark.parametrize("n_cat,n_cont", [(3, 2), (3, 0), (0, 2)])
def test_minkowski_matches_brute_force(p, n_cat, n_cont):
    df, schema = make_table(n=30, n_cat=n_cat, n_cont=n_cont, seed=int(p * 7))
    enc = TableEncoder(schema).fit_transform(df)
    got = pairwise_distances(enc, metric="minkowski", p=p)
    np.testing.assert_allclose(got, brute_minkowski(df, schema, p), atol=1e-12)


def test_zero_continuous_vectors():
    # Rows 0 and 1 sit at every continuous minimum: their continuous vectors are zero.
    df = pd.DataFrame({"a": ["x", "x", "y", "x"], "u": [0.0, 0.0, 1.0, 0.5], "v": [2.0, 2.0, 3.0, 2.0]})
    schema = Schema(["a"], ["u", "v"])
    df = prepare(df, schema)
    enc = TableEncoder(schema).fit_transform(df)
    d = pairwise_distances(enc)
    # Same category, both zero vectors: similarity 1/3 * 1 + 2/3 * 1 -> distance 0.
    assert d[0, 1] == 0.0
    # Same category, zero vs non-zero vector: continuous similarity 0 -> distance 2/3.
    assert d[0, 3] == pytest.approx(2 / 3)
    # Different category, zero vs non-zero: distance 1.
    assert d[0, 2] == pytest.approx(1.0)
    np.testing.assert_allclose(d, brute_cosine(df, schema), atol=1e-12)


def test_hand_computed_cosine():
    df = pd.DataFrame({"a": ["x", "y"], "b": ["p", "p"], "u": [1.0, 3.0], "w": [0.0, 4.0]})
    schema = Schema(["a", "b"], ["u", "w"])
    df = prepare(df, schema)
    enc = TableEncoder(schema).fit_transform(df)
    # Scaled continuous: (0, 0) and (1, 1): zero vs non-zero -> cont cosine 0; categorical 1 of 2 match.
    assert pairwise_distances(enc)[0, 1] == pytest.approx(1 - 0.5 * 0.5 - 0.5 * 0.0)


@pytest.mark.parametrize("metric,p", [("cosine", None), ("minkowski", 1), ("minkowski", 3)])
@pytest.mark.parametrize("include_self", [False, True])
def test_kneighbors_matches_sklearn_on_precomputed(metric, p, include_self):
    df, schema = make_table(n=120, n_cat=3, n_cont=2, seed=4)
    df = pd.concat([df, df.iloc[:5]], ignore_index=True)  # duplicates at distance 0
    enc = TableEncoder(schema).fit_transform(df)
    full = pairwise_distances(enc, metric=metric, p=p)
    k = 7
    nn = NearestNeighbors(metric="precomputed").fit(full)
    if include_self:
        want, _ = nn.kneighbors(full, n_neighbors=k)
    else:
        want, _ = nn.kneighbors(n_neighbors=k)  # query=None excludes each point itself
    got, idx = kneighbors(enc, k, metric=metric, p=p, include_self=include_self, block_rows=17)
    np.testing.assert_allclose(got, np.sort(want, axis=1), atol=1e-12)
    # The returned indices point at records at those distances.
    np.testing.assert_allclose(np.take_along_axis(full, idx, axis=1), got, atol=1e-12)
    if not include_self:
        assert not (idx == np.arange(len(df))[:, None]).any()
        assert (got[:5, 0] == 0).all() and (got[-5:, 0] == 0).all()  # each duplicate finds its twin


def test_include_self_counts_the_zero():
    df, schema = make_table(n=50, seed=9)
    enc = TableEncoder(schema).fit_transform(df)
    with_self, _ = kneighbors(enc, 3, include_self=True)
    without, _ = kneighbors(enc, 2)
    assert (with_self[:, 0] == 0).all()
    np.testing.assert_allclose(with_self[:, 1:], without, atol=1e-12)


def test_bad_k_and_p():
    df, schema = make_table(n=10)
    enc = TableEncoder(schema).fit_transform(df)
    with pytest.raises(VrlibError, match="choose k <= 9"):
        kneighbors(enc, 10)
    kneighbors(enc, 10, include_self=True)  # allowed: the record itself is the 10th
    with pytest.raises(VrlibError, match="positive integer"):
        kneighbors(enc, 0)
    with pytest.raises(VrlibError, match="p >= 1"):
        kneighbors(enc, 2, metric="minkowski", p=0.5)
    with pytest.raises(VrlibError, match="unknown metric"):
        kneighbors(enc, 2, metric="euclid")


def test_constant_continuous_column_scaled_to_zero():
    df = pd.DataFrame({"a": ["x", "y", "x"], "u": [5.0, 5.0, 5.0], "v": [0.0, 1.0, 2.0]})
    schema = Schema(["a"], ["u", "v"])
    with pytest.warns(UserWarning, match="constant"):
        enc = TableEncoder(schema).fit_transform(prepare(df, schema))
    np.testing.assert_array_equal(enc.continuous[:, 0], 0.0)
    np.testing.assert_allclose(enc.continuous[:, 1], [0.0, 0.5, 1.0])


@pytest.mark.parametrize("metric,p", [("cosine", None), ("minkowski", 1), ("minkowski", 2.5)])
@pytest.mark.parametrize("include_self", [False, True])
def test_same_profile_pruning_is_exact(metric, p, include_self):
    # Few categorical profiles, so most records have k same-profile neighbours and get pruned.
    df, schema = make_table(n=400, n_cat=2, n_cont=2, n_levels=2, seed=13)
    df = pd.concat([df, df.iloc[:20]], ignore_index=True)  # and some exact duplicates
    enc = TableEncoder(schema).fit_transform(df)
    pruned, pruned_idx = kneighbors(enc, 4, metric=metric, p=p, include_self=include_self)
    full, _ = kneighbors(enc, 4, metric=metric, p=p, include_self=include_self, prune=False)
    np.testing.assert_array_equal(pruned, full)
    brute = np.sort(
        pairwise_distances(enc, metric=metric, p=p) + np.diag(np.full(len(df), 0 if include_self else np.inf)), axis=1
    )[:, :4]
    np.testing.assert_allclose(pruned, brute, atol=1e-12)
    np.testing.assert_allclose(
        np.take_along_axis(pairwise_distances(enc, metric=metric, p=p), pruned_idx, axis=1), pruned, atol=1e-12
    )


@pytest.mark.parametrize("p", [1, 1.5, 2, 3, 4, np.inf])
@pytest.mark.parametrize("n_cat,n_cont", [(3, 2), (3, 0), (0, 3), (1, 4)])
@pytest.mark.parametrize("include_self", [False, True])
def test_euclidean_bounds_search_is_exact(p, n_cat, n_cont, include_self):
    df, schema = make_table(n=150, n_cat=n_cat, n_cont=n_cont, n_levels=3, seed=21)
    df = pd.concat([df, df.iloc[:6]], ignore_index=True)  # duplicates: ties at distance 0
    enc = TableEncoder(schema).fit_transform(df)
    full = pairwise_distances(enc, metric="minkowski", p=p)
    want = np.sort(full + np.diag(np.full(len(df), 0 if include_self else np.inf)), axis=1)[:, :5]
    got, idx = kneighbors(
        enc, 5, metric="minkowski", p=p, include_self=include_self, block_rows=23, prune=False, bounded=True
    )
    np.testing.assert_allclose(got, want, atol=1e-12)
    np.testing.assert_allclose(np.take_along_axis(full, idx, axis=1), got, atol=1e-12)
    if not include_self:
        assert not (idx == np.arange(len(df))[:, None]).any()
    # The same answer as the float32-candidate search, distance for distance.
    other, _ = kneighbors(enc, 5, metric="minkowski", p=p, include_self=include_self, prune=False, bounded=False)
    np.testing.assert_array_equal(got, other)


def test_bounded_search_is_for_minkowski_only():
    df, schema = make_table(n=20)
    enc = TableEncoder(schema).fit_transform(df)
    with pytest.raises(VrlibError, match="Minkowski"):
        kneighbors(enc, 2, bounded=True)


def test_bounded_search_hands_loose_blocks_to_the_float32_search(monkeypatch):
    # Many continuous columns make the Euclidean bounds loose; such blocks go to the float32 search.
    from vrlib import distance

    df, schema = make_table(n=200, n_cat=2, n_cont=12, seed=3)
    enc = TableEncoder(schema).fit_transform(df)
    want, _ = kneighbors(enc, 4, metric="minkowski", p=3, prune=False, bounded=False)
    calls = []
    search = distance._search
    monkeypatch.setattr(distance, "_search", lambda *a, **kw: calls.append(len(a[3])) or search(*a, **kw))
    monkeypatch.setattr(distance, "_MAX_CANDIDATES", 5)
    got, _ = kneighbors(enc, 4, metric="minkowski", p=3, prune=False, bounded=True, block_rows=50)
    np.testing.assert_array_equal(got, want)
    assert calls and sum(calls) % 50 == 0  # whole blocks handed over
    monkeypatch.setattr(distance, "_MAX_CANDIDATES", 10**6)
    calls.clear()
    got, _ = kneighbors(enc, 4, metric="minkowski", p=3, prune=False, bounded=True, block_rows=50)
    np.testing.assert_array_equal(got, want)
    assert not calls
    monkeypatch.setattr(distance, "_PAIR_FLOATS", 7)  # exact distances of the candidates in many small chunks
    got, _ = kneighbors(enc, 4, metric="minkowski", p=3, prune=False, bounded=True, block_rows=50)
    np.testing.assert_array_equal(got, want)
