"""play(): each target's attack, checked against fitting it by hand; seeds, sides, the cache, resuming, grouping."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from test_games import SMALL, Bootstrap, make_table
from vrlib.cache import Cache, CacheWarning
from vrlib.errors import VrlibError
from vrlib.experiments import achilles
from vrlib.games import ModelSeededGame, TraditionalGame
from vrlib.parallel import derive_seed
from vrlib.play import GameAttack, attack_seed, play


class CountAttack:
    """Test attack: copies of the target in a dataset, against the middle of the shadow datasets' IN and OUT means.

    A seeded offset makes each target's seed visible in its scores.  ``fits`` and
    ``seeds`` record the fits made in this process (tests that read them use n_jobs=1).
    """

    fits = 0
    seeds: list = []
    stop_after: int | None = None  # raise KeyboardInterrupt at this fit (a stopped run)

    def __init__(self, seed, n_jobs=None):
        self.seed = seed

    def _copies(self, datasets):
        same = (datasets.codes == self.codes_).all(axis=2) & (datasets.continuous == self.values_).all(axis=2)
        return same.sum(axis=1).astype(float)

    def fit(self, datasets, labels, target):
        if type(self).stop_after is not None and type(self).fits >= type(self).stop_after:
            raise KeyboardInterrupt("stopped")
        type(self).fits += 1
        type(self).seeds.append(self.seed)
        self.codes_ = np.array([target[c].cat.codes.iloc[0] for c in datasets.schema.categorical])
        self.values_ = target[list(datasets.schema.continuous)].to_numpy(dtype=float)[0]
        copies = self._copies(datasets)
        self.middle_ = (copies[labels == 1].mean() + copies[labels == 0].mean()) / 2
        self.offset_ = np.random.default_rng(self.seed).uniform(0, 0.01)
        return self

    def score(self, datasets):
        return 1 / (1 + np.exp(self.middle_ - self._copies(datasets))) + self.offset_


COUNT = GameAttack("count", CountAttack, {"version": 1})


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path / "cache"))
    CountAttack.fits, CountAttack.seeds, CountAttack.stop_after = 0, [], None
    Bootstrap.fits = 0


def _game(cls=TraditionalGame, **kw):
    df, schema = make_table()
    params = {**SMALL, "cache": True, "seed": 5, **kw}
    return cls(Bootstrap(), **params).fit(df, schema)


def _targets(game, n=3):
    pool = game.dataset_index_ if isinstance(game, ModelSeededGame) else game.test_index_
    return list(pool[:n])


def _by_hand(game, targets, sides=("test",), stream="attack") -> dict:
    """What play should give: each target's attack fitted on its shadow datasets alone, in a plain loop."""
    out = {}
    for t in targets:
        data = game.datasets(t, sides)
        seed = derive_seed(game.seed, stream, str(t))
        model = CountAttack(seed).fit(data.shadow, data.shadow.labels, data.target)
        out[t] = {side: (data.tests[side].labels, model.score(data.tests[side])) for side in sides}
    return out


def _assert_same(got: dict, want: dict):
    assert list(got) == list(want)
    for t in want:
        assert list(got[t]) == list(want[t])
        for side, (labels, scores) in want[t].items():
            np.testing.assert_array_equal(got[t][side][0], labels)
            np.testing.assert_array_equal(got[t][side][1], scores)
            assert got[t][side][1].dtype == np.float64


@pytest.mark.parametrize(
    "cls,sides",
    [
        (TraditionalGame, ("test",)),
        (ModelSeededGame, ("test", "traditional_test")),
        (ModelSeededGame, ("traditional_test",)),
    ],
)
def test_play_equals_fitting_each_target_by_hand(cls, sides):
    game = _game(cls)
    targets = _targets(game)
    got = play(game, COUNT, targets + targets[:1], sides=sides, progress=False)  # a repeat is played once
    assert CountAttack.fits == len(targets)
    want = _by_hand(_game(cls, cache=False), targets, sides)
    _assert_same(got, want)
    # The labels are the sides' own: IN first, then OUT, as many as the game's test datasets.
    for t in targets:
        for side in sides:
            labels = got[t][side][0]
            assert labels.tolist() == [1] * (game.n_test_datasets // 2) + [0] * (game.n_test_datasets // 2)
    # The attack sees the bootstrap's copies of the target: IN datasets score higher on average.
    gaps = [
        scores[labels == 1].mean() - scores[labels == 0].mean() for r in got.values() for labels, scores in r.values()
    ]
    assert np.mean(gaps) > 0.1


def test_each_attack_has_the_seed_of_its_target_from_the_games_seed():
    game = _game()
    targets = _targets(game)
    play(game, COUNT, targets, progress=False)
    assert CountAttack.seeds == [derive_seed(5, "attack", str(t)) for t in targets]
    assert (
        attack_seed(5, targets[0]) == derive_seed(5, "attack", str(targets[0])) == achilles.attack_seed(5, targets[0])
    )
    CountAttack.seeds = []
    other = play(game, COUNT, targets, seed_stream="lost attack", progress=False)  # another stream: other seeds
    assert CountAttack.seeds == [derive_seed(5, "lost attack", str(t)) for t in targets]
    _assert_same(other, _by_hand(_game(cache=False), targets, stream="lost attack"))
    CountAttack.seeds = []
    play(_game(seed=6), COUNT, targets, progress=False)  # another game seed: other seeds (and other datasets)
    assert CountAttack.seeds == [derive_seed(6, "attack", str(t)) for t in targets]


def test_a_second_run_reads_every_result_from_the_cache():
    game = _game()
    targets = _targets(game)
    first = play(game, COUNT, targets, progress=False)
    CountAttack.fits = Bootstrap.fits = 0
    planned = []
    plan = TraditionalGame.plan

    def counting(self, target, sides=("test",)):
        planned.append(target)
        return plan(self, target, sides)

    again_game = _game()
    again_game.plan = counting.__get__(again_game)
    again = play(again_game, COUNT, targets, progress=False)
    assert CountAttack.fits == 0 and Bootstrap.fits == 0  # no dataset made, no attack fitted
    assert planned == targets  # each target planned once, for its key
    _assert_same(again, first)
    assert len(Cache(namespace="games")) == len(targets)


def test_the_key_holds_what_shapes_a_result():
    game = _game()
    targets = _targets(game, 2)
    play(game, COUNT, targets, progress=False)
    changes = [
        dict(attack=GameAttack("count", CountAttack, {"version": 2})),  # the attack's identity
        dict(attack=GameAttack("other", CountAttack, {"version": 1})),  # its name
        dict(seed_stream="another"),  # its seeds
        dict(game=_game(n_shadow=12)),  # the game's sizes (and so its datasets)
        dict(game=_game(seed=6)),  # the game's seed
        dict(game=_game(share_out=False)),  # its sharing (same datasets' seeds, other draws)
    ]
    for change in changes:
        CountAttack.fits = 0
        kw = dict(game=game, attack=COUNT) | change
        play(kw.pop("game"), kw.pop("attack"), targets, progress=False, **kw)
        assert CountAttack.fits == len(targets), change
    assert len(Cache(namespace="games")) == len(targets) * (1 + len(changes))


def test_a_stopped_run_resumes_at_the_first_target_without_a_result(tmp_path, monkeypatch):
    game = _game()
    targets = _targets(game, 4)
    CountAttack.stop_after = 2
    with pytest.raises(KeyboardInterrupt):
        play(game, COUNT, targets, progress=False)
    assert len(Cache(namespace="games")) == 2  # the finished targets were written as they finished
    CountAttack.stop_after, CountAttack.fits, CountAttack.seeds = None, 0, []
    resumed = play(_game(), COUNT, targets, progress=False)
    assert CountAttack.seeds == [derive_seed(5, "attack", str(t)) for t in targets[2:]]  # only the others
    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path / "fresh"))
    _assert_same(resumed, play(_game(), COUNT, targets, progress=False))


def test_an_entry_that_does_not_fit_the_plans_is_made_again():
    game = _game()
    targets = _targets(game, 2)
    want = play(game, COUNT, targets, progress=False)
    cache = Cache(namespace="games")
    for key in list(cache.keys()):
        arrays, meta = cache.get(key)
        cache.save(key, {k: v[:-1] for k, v in arrays.items()}, meta)  # one test dataset short
    CountAttack.fits = 0
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = play(_game(), COUNT, targets, progress=False)
    assert sum(issubclass(w.category, CacheWarning) for w in seen) == len(targets)
    assert CountAttack.fits == len(targets)
    _assert_same(got, want)


def test_sides_are_checked_and_enter_the_key():
    with pytest.raises(VrlibError, match="sides"):
        play(_game(), COUNT, _targets(_game()), sides=("traditional_test",), progress=False)
    game = _game(ModelSeededGame)
    with pytest.raises(VrlibError, match="sides"):
        play(game, COUNT, _targets(game), sides=("test", "test"), progress=False)
    targets = _targets(game, 2)
    both = play(game, COUNT, targets, sides=("test", "traditional_test"), progress=False)
    CountAttack.fits = 0
    one = play(game, COUNT, targets, sides=("test",), progress=False)
    assert CountAttack.fits == len(targets)  # another set of sides is another result
    for t in targets:  # the same attack on the same datasets scores the same
        np.testing.assert_array_equal(one[t]["test"][1], both[t]["test"][1])


def test_own_datasets_are_not_cached_without_store_own():
    game = _game(ModelSeededGame)
    targets = _targets(game)
    sides = ("test", "traditional_test")
    play(game, COUNT, targets, sides=sides, store_own=False, progress=False)
    shared = {p.key for t in targets for p in game.shared_plans(t, sides)}
    every = {k for t in targets for plans in game.plan(t, sides).signature().values() for k, _ in plans}
    assert shared and shared < every
    assert set(Cache(namespace="synthetic").keys()) == shared
    # Each distinct dataset was made once: the shared ones for all targets, the others per target.
    assert Bootstrap.fits == len(every)


def test_workers_give_the_results_of_one_process(tmp_path, monkeypatch):
    targets = _targets(_game(), 3)
    alone = play(_game(), COUNT, targets, progress=False)
    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path / "two"))
    _assert_same(play(_game(n_jobs=2), COUNT, targets, progress=False), alone)


def test_attacks_trained_together_are_given_groups_in_order():
    groups = []

    def fit_together(jobs):
        jobs = list(jobs)
        groups.append(len(jobs))
        return [model.fit(datasets, labels, target) for model, datasets, labels, target in jobs]

    grouped = GameAttack("count", CountAttack, {"version": 1}, fit_together=fit_together, group=2)
    game = _game()
    targets = _targets(game, 5)
    got = play(game, grouped, targets, progress=False)
    assert groups == [2, 2, 1]
    _assert_same(got, _by_hand(_game(cache=False), targets))


def test_achilles_attack_targets_takes_only_the_games_seed():
    game = _game()
    with pytest.raises(VrlibError, match="seed"):
        achilles.attack_targets(game, _targets(game), "query", {"n_queries": 10}, seed=4, progress=False)
