"""Privacy games: sizes, labels, who is in which training set, sharing of OUT datasets, determinism."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vrlib.cache import Cache
from vrlib.data import Schema
from vrlib.errors import VrlibError
from vrlib.games import ModelSeededGame, SyntheticDatasets, TraditionalGame, split_population


class Bootstrap:
    """Test generator: a seeded bootstrap of the training rows, optional jitter on continuous columns."""

    fits = 0  # counts fits in this process (tests that count use n_jobs=1)

    def __init__(self, jitter: float = 0.0):
        self.jitter = jitter

    def fit(self, df, schema, seed):
        type(self).fits += 1
        self.data_, self.schema_ = df.reset_index(drop=True), schema
        return self

    def sample(self, n, seed):
        rng = np.random.default_rng(seed)
        out = self.data_.iloc[rng.integers(len(self.data_), size=n)].reset_index(drop=True)
        for c in self.schema_.continuous:
            out[c] = out[c] + rng.normal(0.0, self.jitter, n) if self.jitter else out[c]
        return out


def make_table(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "a": pd.Categorical(rng.choice(["u", "v", "w"], n), categories=["u", "v", "w"]),
            "x": rng.integers(0, 10, n).astype(float),
            "b": pd.Categorical(rng.integers(0, 4, n), categories=[0, 1, 2, 3]),
            "y": rng.normal(size=n),
        }
    )
    return df, Schema(["a", "b"], ["x", "y"])


SMALL = dict(
    n_aux=600,
    n_test=400,
    n_records=50,
    n_synth=40,
    n_shadow=10,
    n_test_datasets=6,
    n_jobs=1,
    progress=False,
    cache=False,
)


@pytest.fixture
def table():
    return make_table()


def fitted(table, cls=TraditionalGame, gen=None, **kw):
    df, schema = table
    params = {**SMALL, **kw}
    return cls(gen if gen is not None else Bootstrap(), **params).fit(df, schema)


def test_split_is_disjoint_sized_and_seeded():
    aux, test = split_population(100, 60, 30, seed=1)
    assert len(aux) == 60 and len(test) == 30 and not set(aux) & set(test)
    assert (aux == split_population(100, 60, 30, seed=1)[0]).all()
    assert not (aux == split_population(100, 60, 30, seed=2)[0]).all()
    with pytest.raises(VrlibError, match="proportionally"):
        split_population(100, 80, 30, seed=0)


def test_sizes_labels_and_membership(table):
    game = fitted(table)
    df = table[0]
    target = game.test_index_[0]  # in D_test: the shadow side never meets it, the test side must avoid it
    data = game.datasets(target)
    assert isinstance(data.shadow, SyntheticDatasets)
    assert len(data.shadow) == 10 and len(data.test) == 6
    assert data.shadow.labels.tolist() == [1] * 5 + [0] * 5
    assert data.test.labels.tolist() == [1] * 3 + [0] * 3
    assert data.shadow.codes.shape == (10, 40, 2) and data.shadow.continuous.shape == (10, 40, 2)
    assert data.target.index[0] == target and len(data.target) == 1
    pos = df.index.get_loc(target)
    for plans, pool in ((game.shadow_plans(target), game.aux_index_), (game.test_plans(target), game.test_index_)):
        pool_pos = set(df.index.get_indexer(pool))
        for p in plans:
            assert len(p.rows) == 50 and len(np.unique(p.rows)) == 50
            assert (pos in p.rows) == bool(p.label)  # target in every IN, in no OUT
            assert set(p.rows) - {pos} <= pool_pos
    # Every dataset decodes to Ω's columns, dtypes and categories.
    frame = data.shadow.frame(0)
    assert list(frame.columns) == list(df.columns)
    assert (frame.dtypes == df.dtypes).all()
    assert frame["a"].cat.categories.equals(df["a"].cat.categories)


def test_target_in_pool_is_removed_by_rejection(table):
    game = fitted(table, n_shadow=60)
    target = game.aux_index_[5]
    pos = table[0].index.get_loc(target)
    plans = game.shadow_plans(target)
    assert len(plans) == 60
    for p in plans:
        base = p.rows[p.rows != pos]
        assert len(base) == (49 if p.label else 50)
    # Draws that contained the target were skipped, so some indices are missing from the streams.
    other = game.aux_index_[6]
    keys_t = {p.key for p in plans if not p.label}
    keys_o = {p.key for p in game.shadow_plans(other) if not p.label}
    assert len(keys_t & keys_o) >= 20  # most OUT datasets are still common to both targets


def test_out_datasets_are_generated_once_for_all_targets(table):
    targets = list(table[0].index[:3])
    Bootstrap.fits = 0
    game = fitted(table)
    out = list(game.iter_targets(targets))
    shared_fits = Bootstrap.fits
    assert [d.target_index for d in out] == targets
    # Per target: 5 shadow IN + 3 test IN; OUT (5 + 3) once, plus the few extra draws rejection needed.
    assert 3 * 8 + 8 <= shared_fits <= 3 * 8 + 8 + 6
    assert game.stats_["generated"] == shared_fits and game.stats_["reused"] >= 2 * 8

    Bootstrap.fits = 0
    unshared = fitted(table, share_out=False)
    list(unshared.iter_targets(targets))
    assert Bootstrap.fits == 3 * 16

    # The shared OUT datasets are literally the same data for every target.
    a, b = out[0].shadow, out[1].shadow
    np.testing.assert_array_equal(a.codes[a.labels == 0], b.codes[b.labels == 0])


def test_in_datasets_are_drawn_per_target(table):
    """IN datasets are fitted per target anyway: their bases and seeds are the target's own, never shared."""
    game = fitted(table, n_shadow=8)
    a, b = game.aux_index_[:2]
    pa, pb = (table[0].index.get_loc(t) for t in (a, b))
    in_a = [p for p in game.shadow_plans(a) if p.label]
    in_b = [p for p in game.shadow_plans(b) if p.label]
    for p, q in zip(in_a, in_b):
        base_a, base_b = p.rows[p.rows != pa], q.rows[q.rows != pb]
        assert len(np.intersect1d(base_a, base_b)) < 49  # not the same base with another target
        assert p.fit_seed != q.fit_seed and p.sample_seed != q.sample_seed
    # OUT datasets stay shared.
    assert [p.key for p in game.shadow_plans(a) if not p.label] == [p.key for p in game.shadow_plans(b) if not p.label]


def test_same_seed_same_datasets_other_seed_other(table):
    t = table[0].index[7]
    one = fitted(table, seed=3).datasets(t)
    two = fitted(table, seed=3).datasets(t)
    three = fitted(table, seed=4).datasets(t)
    np.testing.assert_array_equal(one.shadow.codes, two.shadow.codes)
    np.testing.assert_array_equal(one.test.continuous, two.test.continuous)
    assert not np.array_equal(one.shadow.continuous, three.shadow.continuous)


def test_cache_resume_and_one_entry_per_dataset(table, tmp_path):
    t = table[0].index[2]
    cache = Cache(tmp_path, namespace="synthetic")
    Bootstrap.fits = 0
    first = fitted(table, cache=cache).datasets(t)
    assert Bootstrap.fits == 16 and len(cache) == 16
    Bootstrap.fits = 0
    game = fitted(table, cache=cache)
    again = game.datasets(t)
    assert Bootstrap.fits == 0 and game.stats_["cached"] == 16
    np.testing.assert_array_equal(first.shadow.continuous, again.shadow.continuous)
    # Another generator parameter is another dataset.
    Bootstrap.fits = 0
    fitted(table, gen=Bootstrap(jitter=0.1), cache=cache).datasets(t)
    assert Bootstrap.fits == 16


def test_paired_design_shares_bases(table):
    game = fitted(table, paired=True, n_shadow=8)
    t = game.test_index_[0]
    pos = table[0].index.get_loc(t)
    plans = game.shadow_plans(t)
    ins, outs = plans[:4], plans[4:]
    for i, o in zip(ins, outs):
        assert len(np.intersect1d(i.rows[i.rows != pos], o.rows)) == 49
    unpaired = fitted(table, n_shadow=8).shadow_plans(t)
    assert len(np.intersect1d(unpaired[0].rows, unpaired[4].rows)) < 49


def test_model_seeded_game(table):
    game = fitted(table, cls=ModelSeededGame, n_test_datasets=8)
    d = game.dataset_index_
    assert len(d) == 50 and set(d) <= set(game.test_index_)
    assert game.reference_index_ not in set(d)
    df = table[0]
    t1, t2 = d[0], d[1]
    p1, p2 = game.test_plans(t1), game.test_plans(t2)
    dpos = np.sort(df.index.get_indexer(d))
    ref = df.index.get_loc(game.reference_index_)
    for p in p1[:4]:
        np.testing.assert_array_equal(p.rows, dpos)  # IN = D itself
    for p in p1[4:]:
        expect = np.sort(np.append(dpos[dpos != df.index.get_loc(t1)], ref))
        np.testing.assert_array_equal(p.rows, expect)
    # Only the seed varies: the IN datasets differ by seed, and are shared by the targets of D.
    assert len({p.fit_seed for p in p1[:4]}) == 4
    assert [p.key for p in p1[:4]] == [p.key for p in p2[:4]]
    # Same shadow side as the traditional game with the same parameters.
    trad = fitted(table)
    assert [p.key for p in game.shadow_plans(t1)] == [p.key for p in trad.shadow_plans(t1)]
    Bootstrap.fits = 0
    list(game.iter_targets([t1, t2]))
    assert Bootstrap.fits == 2 * (5 + 4) + 5 + 4  # shared: shadow OUT + model-seeded IN
    with pytest.raises(VrlibError, match="not in the model-seeded dataset"):
        game.test_plans(game.aux_index_[0])
    rand = fitted(table, cls=ModelSeededGame, reference="random", n_test_datasets=8)
    refs = {tuple(np.setdiff1d(p.rows, dpos)) for p in rand.test_plans(rand.dataset_index_[0])[4:]}
    assert len(refs) > 1


def test_model_seeded_given_dataset(table):
    df, schema = table
    probe = fitted(table, cls=ModelSeededGame)
    chosen = list(probe.test_index_[:50])
    game = ModelSeededGame(Bootstrap(), **SMALL).fit(df, schema, dataset=chosen)
    assert list(game.dataset_index_) == sorted(chosen)
    with pytest.raises(VrlibError, match="not in D_test"):
        ModelSeededGame(Bootstrap(), **SMALL).fit(df, schema, dataset=list(probe.aux_index_[:50]))


def test_errors(table):
    df, schema = table
    with pytest.raises(VrlibError, match="not fitted"):
        TraditionalGame(Bootstrap()).shadow_plans(0)
    game = fitted(table)
    with pytest.raises(VrlibError, match="not an index label"):
        game.shadow_plans(10**9)
    with pytest.raises(VrlibError, match="n_records"):
        TraditionalGame(Bootstrap(), **{**SMALL, "n_records": 700}).fit(df, schema)
    with pytest.raises(VrlibError, match="at least 2"):
        TraditionalGame(Bootstrap(), **{**SMALL, "n_shadow": 1}).fit(df, schema)
    with pytest.raises(VrlibError, match="not a generator"):
        TraditionalGame(object(), **SMALL).fit(df, schema)
    with pytest.raises(VrlibError, match="unknown generator"):
        TraditionalGame("nope", **SMALL).fit(df, schema)
    unhashable = Bootstrap()
    unhashable.rng = np.random.default_rng(0)
    with pytest.raises(VrlibError, match="get_params"):
        TraditionalGame(unhashable, **SMALL).fit(df, schema)
    dup = df.copy()
    dup.index = [0] * len(df)
    with pytest.raises(VrlibError, match="duplicates"):
        TraditionalGame(Bootstrap(), **SMALL).fit(dup, schema)
