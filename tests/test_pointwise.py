"""The pointwise scorer: settings × attacks → per-record scores, cached per (setting, attack), made per setting."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vrlib.cache import Cache, CacheWarning, make_key
from vrlib.play.pointwise import score_pointwise

CALLS: list = []  # (setting name, attacks) of every task run in this process


def _distance_attacks(task):
    """Two toy attacks on one setting: minus the distance to the nearest / mean synthetic point."""
    setting, names = task
    CALLS.append((setting["name"], tuple(names)))
    d = np.abs(setting["X"][:, None] - setting["synthetic"][None, :])
    scores = {"nearest": -d.min(axis=1), "mean": -d.mean(axis=1)}
    return {name: (scores[name], {"attack": name}) for name in names}


def _settings():
    rng = np.random.default_rng(0)
    return [{"name": f"s{i}", "X": rng.normal(size=5 + i), "synthetic": rng.normal(size=7)} for i in range(3)]


def _key(setting, attack):
    return make_key(X=setting["X"], synthetic=setting["synthetic"], attack=attack)


def _score(settings, cache, **kw):
    return score_pointwise(
        settings,
        ("nearest", "mean"),
        key=_key,
        n_records=lambda s: len(s["X"]),
        score=_distance_attacks,
        cache=cache,
        n_jobs=1,
        **kw,
    )


def _by_hand(setting, attack):
    out = []
    for x in setting["X"]:
        d = [abs(x - y) for y in setting["synthetic"]]
        out.append(-min(d) if attack == "nearest" else -sum(d) / len(d))
    return np.array(out)


def test_scores_every_setting_and_attack_and_reads_them_back(tmp_path):
    settings = _settings()
    cache = Cache(tmp_path, "scores")
    CALLS.clear()
    got = _score(settings, cache)
    assert CALLS == [(s["name"], ("nearest", "mean")) for s in settings]  # one task per setting
    assert len(cache) == 6
    for s, per in zip(settings, got):
        for attack in ("nearest", "mean"):
            scores, meta = per[attack]
            np.testing.assert_allclose(scores, _by_hand(s, attack), rtol=1e-12)
            assert scores.dtype == np.float64 and meta == {"attack": attack}
    CALLS.clear()
    again = _score(settings, cache)
    assert CALLS == []
    for per, per_again in zip(got, again):
        for attack in per:
            np.testing.assert_array_equal(per[attack][0], per_again[attack][0])


def test_only_missing_attacks_are_made_and_equal_settings_once(tmp_path):
    settings = _settings()
    cache = Cache(tmp_path, "scores")
    score_pointwise(
        settings[:1],
        ("nearest",),
        key=_key,
        n_records=lambda s: len(s["X"]),
        score=_distance_attacks,
        cache=cache,
        n_jobs=1,
    )
    CALLS.clear()
    got = _score([settings[0], settings[1], dict(settings[1], name="copy")], cache)
    assert CALLS == [("s0", ("mean",)), ("s1", ("nearest", "mean"))]
    np.testing.assert_array_equal(got[2]["mean"][0], got[1]["mean"][0])
    # an entry of the wrong length is not the setting's scores: made again, alone
    _score(settings[2:], cache)
    cache.save(_key(settings[2], "mean"), {"scores": np.zeros(2)}, {})
    CALLS.clear()
    with pytest.warns(CacheWarning, match="expected"):
        fixed = _score(settings[2:], cache)
    assert CALLS == [("s2", ("mean",))]
    np.testing.assert_allclose(fixed[0]["mean"][0], _by_hand(settings[2], "mean"))


def test_plan_builds_the_tasks_and_undefined_attacks_score_nan():
    settings = _settings()
    seen = []

    def plan(missing):
        seen.extend(missing)
        return [(settings[i], names) for i, names in missing]

    got = _score(settings, None, plan=plan, applies=lambda s, a: not (s["name"] == "s1" and a == "mean"))
    assert seen == [(0, ["nearest", "mean"]), (1, ["nearest"]), (2, ["nearest", "mean"])]
    scores, meta = got[1]["mean"]
    assert scores.shape == (6,) and np.isnan(scores).all() and meta == {}
    assert not math.isnan(got[1]["nearest"][0][0])


def test_scores_in_worker_processes(tmp_path):
    settings = _settings()
    got = score_pointwise(
        settings,
        ("nearest", "mean"),
        key=_key,
        n_records=lambda s: len(s["X"]),
        score=_distance_attacks,
        cache=Cache(tmp_path, "scores"),
        n_jobs=2,
    )
    for s, per in zip(settings, got):
        np.testing.assert_allclose(per["nearest"][0], _by_hand(s, "nearest"), rtol=1e-12)
