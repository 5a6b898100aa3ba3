"""Playing a privacy game: each target's attack fitted on its shadow datasets, scored on its test datasets, cached.

:func:`play` is the one loop of the game-based experiments (achilles' record
identification and target attention, lost's two games with one attack).  For each target
in turn it

1. plans the target's datasets once (:meth:`vrlib.games.TraditionalGame.plan`): its shadow
   datasets and the test datasets of each side asked for;
2. reads the target's result from the cache, under a key that holds the key and label of
   every one of those datasets, the game's identity, the attack's identity and code, the
   sides, the attack's seed and the code of this module and of the game;
3. otherwise makes the datasets (those the targets share once, kept in memory while
   playing: :meth:`~vrlib.games.TraditionalGame.shared_datasets`), fits the attack with
   the target's own seed (:func:`attack_seed`), scores the test datasets of every side,
   and writes the result as soon as it is known, so that a stopped run resumes at the
   first target without one.

Missing targets are attacked a batch at a time: spread over the game's workers
(:func:`vrlib.parallel.run`, one thread each), or, for an attack trained many targets at
once (:attr:`GameAttack.fit_together`, the attention attack), in groups in this process.
Only a batch's datasets are held in memory, besides the shared ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from vrlib import parallel
from vrlib.cache import Cache, make_key, source_hash
from vrlib.parallel import derive_seed
from vrlib.params import check_integer

__all__ = ["GameAttack", "attack_seed", "play"]


@dataclass(frozen=True)
class GameAttack:
    """How :func:`play` makes each target's attack, and what identifies the attack in cache keys.

    Attributes
    ----------
    name : str
        The attack's name (e.g. ``"query"``).
    make : callable
        ``make(seed, n_jobs)`` -> an unfitted attack whose ``fit(shadow datasets, labels,
        target)`` returns it fitted and whose ``score(datasets)`` gives one score
        per dataset (higher: more likely IN).  Picklable: it runs in the workers.
    identity : mapping
        Everything besides the data and the seed that shapes the scores: the attack's
        parameters and a hash of its code (:func:`vrlib.cache.source_hash`).
    fit_together : callable, optional
        For attacks trained many targets at once in this process: ``fit_together(jobs)``
        -> the fitted attacks in the order of ``jobs``, each job ``(attack, shadow
        datasets, labels, target)`` (as :func:`vrlib.attacks.attention.fit_attacks`).
    group : int
        Targets given to ``fit_together`` at a time (memory grows with it).
    """

    name: str
    make: Callable
    identity: Mapping
    fit_together: Callable | None = None
    group: int = 1

    def __post_init__(self):
        check_integer("group", self.group, minimum=1)


def attack_seed(seed: int, target, stream: str = "attack") -> int:
    """The seed of ``target``'s attack (its queries, forest or network): its own, so that targets share no attack noise.

    Parameters
    ----------
    seed : int
        The game's root seed.
    target : label
        The target's index label (its text enters the seed).
    stream : str
        Names the family's attack seeds (achilles ``"attack"``, lost ``"lost attack"``).
    """
    return derive_seed(seed, stream, str(target))


def play(
    game,
    attack: GameAttack,
    targets: Iterable,
    *,
    sides=("test",),
    seed_stream: str = "attack",
    namespace: str = "games",
    store_own: bool = True,
    progress: bool = True,
) -> dict:
    """Attack each target of a fitted game: fit on its shadow datasets, score its test datasets of each side.

    Parameters
    ----------
    game : TraditionalGame or ModelSeededGame
        Fitted (:meth:`~vrlib.games.TraditionalGame.fit`); its ``seed`` seeds each
        target's attack and its ``n_jobs`` and ``scheduler`` spread the work.
    attack : GameAttack
    targets : iterable of index labels of Ω
        Repeats are attacked once.
    sides : sequence of str
        Test sides among ``game.SIDES``: ``"test"`` (the game's own), and for the
        model-seeded game ``"traditional_test"`` (the traditional game's test datasets of
        the same target, scored by the same fitted attack).
    seed_stream : str
        Names the attack seeds: target ``t`` gets ``attack_seed(game.seed, t, seed_stream)``.
    namespace : str
        The cache's namespace for the results.
    store_own : bool
        Write each target's own datasets (those no other target shares) to the
        ``synthetic`` cache; ``False`` keeps only the shared ones there, for games whose
        targets' own datasets nothing reads again (the result is cached either way).
    progress : bool
        Show a progress bar over the targets.

    Returns
    -------
    dict
        target -> {side: (labels, scores)}: the test datasets' labels (1 = IN) and the
        attack's scores, float64, in the order of the side's plans (IN first, then OUT).
    """
    targets = list(dict.fromkeys(targets))
    sides = tuple(sides)  # checked by game.plan
    cache = Cache(namespace=namespace)
    base = dict(
        game=game.identity(),
        attack=attack.name,
        attack_identity=dict(attack.identity),
        sides=list(sides),
        seed_stream=seed_stream,
        code=source_hash(play, type(game)),
    )

    def seed_of(target) -> int:
        return attack_seed(game.seed, target, seed_stream)

    def planned():
        for t in targets:
            plans = game.plan(t, sides)
            game.forget(t)  # the plans hold the rows: the target's memoised draws are not needed again
            yield make_key(target=str(t), attack_seed=seed_of(t), datasets=plans.signature(), **base), plans

    memo: dict = {}  # the datasets the attacked targets share, kept while playing

    def attack_batch(batch, done):
        game.shared_datasets([p.target for p in batch], sides, memo)
        if attack.fit_together is None:
            tasks = [(attack, seed_of(p.target), game.game_data(p, memo, store_own)) for p in batch]
            parallel.run(
                _attack_target, tasks, n_jobs=game.n_jobs, scheduler=game.scheduler, progress=False, on_result=done
            )
            return
        tests = []

        def jobs():  # each target's datasets made as its turn comes; fit_together keeps what it needs of them
            for p in batch:
                data = game.game_data(p, memo, store_own)
                tests.append(data.tests)
                model = attack.make(seed_of(p.target), None)
                yield model, data.shadow, data.shadow.labels, data.target

        for i, model in enumerate(attack.fit_together(jobs())):
            done(i, _scores(model, tests[i]))

    width = attack.group if attack.fit_together is not None else parallel.width(game.n_jobs, game.scheduler)
    out = {}
    bar = tqdm(
        total=len(targets),
        desc=f"attacking targets ({attack.name})",
        mininterval=10,
        disable=not (progress and targets),
    )
    with bar:
        for plans, result in _get_or_make(cache, planned(), attack_batch, max(1, width)):
            out[plans.target] = result
            bar.update(1)
    return out


def _get_or_make(cache: Cache, jobs: Iterable, make: Callable, width: int) -> Iterator:
    """``(plans, result)`` of each ``(key, plans)`` of ``jobs``: the cached result, else made and written at once.

    This is the one place where :func:`play` reads and writes its cache.  Missing results
    are made ``width`` at a time by ``make(batch, done)``, which calls ``done(i, result)``
    as each one of the batch is known; it is written then, so that an interrupted run
    keeps every finished target.  A result is ``{side: (labels, scores)}``, stored as the
    arrays ``<side>_labels`` and ``<side>_scores``; an entry whose arrays do not fit the
    plans is unreadable (:meth:`vrlib.cache.Cache.get`) and made again.
    """
    pending: list = []

    def flush():
        made = {}

        def done(i, result):
            key, plans = pending[i]
            arrays = {
                f"{side}_{name}": a for side, pair in result.items() for name, a in zip(("labels", "scores"), pair)
            }
            cache.save(key, arrays, meta={"target": str(plans.target)})
            made[i] = result

        make([plans for _, plans in pending], done)
        batch = [(plans, made[i]) for i, (_, plans) in enumerate(pending)]
        pending.clear()
        return batch

    for key, plans in jobs:
        hit = cache.get(key, lambda arrays, meta, plans=plans: _decode(arrays, plans))
        if hit is not None:
            yield plans, hit
            continue
        pending.append((key, plans))
        if len(pending) == width:
            yield from flush()
    if pending:
        yield from flush()


def _decode(arrays: dict, plans) -> dict:
    """``{side: (labels, scores)}`` of a cache entry, checked against the target's plans."""
    out = {}
    for side, side_plans in plans.sides.items():
        labels, scores = arrays[f"{side}_labels"], arrays[f"{side}_scores"]
        if labels.shape != (len(side_plans),) or scores.shape != labels.shape:
            raise ValueError(
                f"{side}: labels / scores of shape {labels.shape} / {scores.shape}, expected ({len(side_plans)},)"
            )
        out[side] = (labels, scores)
    return out


def _attack_target(task) -> dict:
    """Fit one target's attack on its shadow datasets and score the test datasets of each side (runs in a worker)."""
    attack, seed, data = task
    # One thread for the attack: the other cores attack other targets (the result is the same either way).
    model = attack.make(seed, 1).fit(data.shadow, data.shadow.labels, data.target)
    return _scores(model, data.tests)


def _scores(model, tests: dict) -> dict:
    return {side: (test.labels, np.asarray(model.score(test), dtype=np.float64)) for side, test in tests.items()}
