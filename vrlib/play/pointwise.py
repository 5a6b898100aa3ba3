"""Per-record attacks over many settings: every record's score, per setting and attack, cached and made in parallel.

The DOMIAS-style families (the DOMIAS experiments, TableGAN-MCA) score each record of a
test set (or of a release) once per *setting*: one seed, generator and set of sizes,
with its synthetic data, reference data and records to score.  :func:`score_pointwise`
is their shared loop: settings × attacks → one array of scores per (setting, attack),
higher = more likely a member.  Each (setting, attack) is one cache entry; the missing
attacks of a setting are made by one task (so they can share work, such as a density of
the synthetic data), and the tasks run in parallel through
:func:`vrlib.cache.get_or_make_many`, which saves each setting's scores as it arrives.

What a setting is, how its key is made and how an attack is fitted stay with the
experiment family; the family's worker function does the fitting and scoring.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from vrlib.cache import Cache, get_or_make_many
from vrlib.errors import VrlibError

__all__ = ["score_pointwise"]


def score_pointwise(
    settings: Sequence,
    attacks: Sequence[str],
    *,
    key: Callable,
    n_records: Callable,
    score: Callable,
    plan: Callable | None = None,
    applies: Callable | None = None,
    cache: Cache | None = None,
    n_jobs: int | None = None,
    desc: str = "attacks",
    progress: bool = False,
) -> list[dict]:
    """The scores of every record under every attack on every setting: cached per (setting, attack), made in parallel.

    Parameters
    ----------
    settings : sequence
        The settings, in whatever form the family uses (each passed back to ``key``,
        ``n_records``, ``applies`` and, through ``plan``, to ``score``).
    attacks : sequence of str
        Attack names.
    key : callable
        ``key(setting, attack)``: the cache key of the scores, holding everything that
        determines them (the data scored, the attack's parameters and seed, the code).
    n_records : callable
        ``n_records(setting)``: how many records the setting scores (checked on every entry).
    score : callable
        ``score(task)`` runs in a worker (a module-level function) and returns
        ``{attack: (scores, meta)}`` for the attacks of its task: ``scores`` one number
        per record, ``meta`` a JSON-able dict kept with them (e.g. the seconds it took).
    plan : callable, optional
        ``plan(missing)`` with ``missing`` the list of ``(setting index, attacks)`` still
        to score (the attacks in the order of ``attacks``) returns one task per item,
        for ``score``; default ``(setting, attacks)``.  A family prepares shared work
        here (DOMIAS fits each reference density once for every setting that needs it).
    applies : callable, optional
        ``applies(setting, attack)``: False where an attack is not defined on a setting;
        its scores are then NaN (and ``meta`` empty), never cached.  Default: always.
    cache : Cache, optional
        Where the scores are kept (None: computed every time).
    n_jobs, desc, progress
        Worker processes, label and display of the progress bar (see :func:`vrlib.parallel.run`).

    Returns
    -------
    list of dict
        Per setting, ``{attack: (scores, meta)}`` with ``scores`` a float64 array.
    """
    attacks = tuple(attacks)
    applicable = applies if applies is not None else (lambda setting, attack: True)
    positions = [(i, a) for i, st in enumerate(settings) for a in attacks if applicable(st, a)]
    keys = [key(settings[i], a) for i, a in positions]
    decoders = [_checker(n_records(settings[i])) for i, _ in positions]

    def plan_tasks(missing: list[int]) -> list[tuple]:
        by_setting: dict[int, list[int]] = {}
        for p in missing:
            by_setting.setdefault(positions[p][0], []).append(p)
        wanted = [(i, [positions[p][1] for p in ps]) for i, ps in by_setting.items()]
        tasks = plan(wanted) if plan is not None else [(settings[i], names) for i, names in wanted]
        if len(tasks) != len(wanted):
            raise VrlibError(f"plan returned {len(tasks)} tasks for {len(wanted)} settings")
        return [((score, task, names), by_setting[i]) for task, (i, names) in zip(tasks, wanted)]

    values = get_or_make_many(
        cache, keys, _entries, plan_tasks, decode=decoders, n_jobs=n_jobs, desc=desc, progress=progress
    )
    out: list[dict] = [{} for _ in settings]
    found = dict(zip(positions, values))
    for i, st in enumerate(settings):
        for a in attacks:
            out[i][a] = found[(i, a)] if (i, a) in found else (np.full(n_records(st), math.nan), {})
    return out


def _entries(job) -> list[tuple[dict, dict]]:
    """Run one setting's task in a worker: the cache entries ``({"scores": ...}, meta)`` of its attacks."""
    score, task, names = job
    result = score(task)
    return [({"scores": np.asarray(result[a][0], dtype=np.float64)}, dict(result[a][1])) for a in names]


def _checker(n: int) -> Callable:
    """``decode`` for the cache: the entry must hold one score per record; gives ``(scores, meta)``."""

    def check(arrays, meta):
        scores = arrays["scores"]
        if scores.shape != (n,):
            raise ValueError(f"scores of shape {scores.shape}, expected ({n},)")
        return scores, meta

    return check
