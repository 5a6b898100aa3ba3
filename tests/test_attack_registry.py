"""The attack registry: every registered attack keeps the one contract, on data made here.

Dataset-level attacks see labelled datasets of a small mixed table in which the IN
datasets hold copies of a target; record-level attacks see a release in which every
member is repeated.  Attacks on tables read the mixed table, the others its numeric
columns.  Values of the two attacks new with the registry (copies, distance ratio) are
checked against brute force.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pandas as pd
import pytest

from vrlib.attacks import domias as domias_attacks
from vrlib.attacks.registry import KINDS, REGISTRY, attack_names, make_attack
from vrlib.data import Schema, prepare
from vrlib.encoding import TableEncoder
from vrlib.errors import VrlibError
from vrlib.experiments import achilles
from vrlib.metrics import auc

SCHEMA = Schema(["c0", "c1", "c2"], ["x0", "x1"])
LEVELS = ["a", "b", "c", "d", "e"]
TINY_FLOW = {"density_params": {"n_flows": 1, "n_layers": 1, "hidden_per_dim": 4, "epochs": 3, "batch_size": 64}}

# Fast settings of every attack, and whether it is meant to rank the planted members first here: not
# the flows and LOGAN 0 at a few epochs, nor the LOGAN D1 classifiers, whose few hundred rows show them
# a shift between release and reference, not 40 repeated points (test_domias checks them on a shift;
# the published one never sees a reference row at these sizes).
FAST = {
    "query": ({"n_queries": 64, "n_jobs": 1}, True),
    "attention": ({"max_epochs": 40, "top_x": 10, "batch_size": 5, "lr": 0.01, "device": "cpu"}, True),
    "closeness": ({"n_neighbors": 4}, True),
    "domias_kde": ({}, True),
    "domias_flow": (TINY_FLOW, False),
    "eq1_kde": ({}, True),
    "eq1_flow": (TINY_FLOW, False),
    "logan_0": ({"epochs": 3}, False),
    "logan_d1": ({"epochs": 30}, False),
    "logan_d1_published": ({"n_test": 80}, False),
    "mc": ({}, True),
    "gan_leaks": ({}, True),
    "gan_leaks_cal": ({}, True),
    "copies": ({}, True),
    "distance_ratio": ({}, True),
    "tablegan_mca": ({"shadow_generator": "synthpop"}, True),
}
NAMES = list(FAST)


def _grid_table(codes: np.ndarray) -> pd.DataFrame:
    """Records from rows of (c0, c1, c2, x0, x1) level codes; the continuous values are whole numbers."""
    data = {c: pd.Categorical.from_codes(codes[:, j], categories=LEVELS) for j, c in enumerate(SCHEMA.categorical)}
    data.update({c: codes[:, 3 + j].astype(float) for j, c in enumerate(SCHEMA.continuous)})
    return prepare(pd.DataFrame(data), SCHEMA)


@functools.cache
def planted_records(seed: int = 0):
    """Distinct records: 40 members, 40 non-members, a reference of 300; the release repeats each member
    3 times beside 120 fresh records."""
    rng = np.random.default_rng(seed)
    grid = np.array(list(itertools.product(range(5), repeat=5)))[rng.permutation(5**5)]
    members, non_members = _grid_table(grid[:40]), _grid_table(grid[40:80])
    fresh, reference = _grid_table(grid[80:200]), _grid_table(grid[200:500])
    release = pd.concat([members, members, members, fresh], ignore_index=True)
    release = release.sample(frac=1, random_state=seed).reset_index(drop=True)
    return release, reference, members, non_members


def _numeric(df: pd.DataFrame) -> np.ndarray:
    """The numeric view of a table: continuous columns and each categorical column's code, plus a little noise
    so that kernel densities are not singular."""
    X = np.column_stack(
        [df[c].cat.codes.to_numpy(float) for c in SCHEMA.categorical] + [df[list(SCHEMA.continuous)].to_numpy()]
    )
    return X + np.random.default_rng(len(df)).normal(scale=0.01, size=X.shape)


@functools.cache
def planted_datasets(seed: int = 0):
    """30 shadow and 20 test datasets of 60 records; the IN ones (every other) hold the target 3 times."""
    rng = np.random.default_rng(seed)
    target = _grid_table(np.array([[4, 4, 4, 9, 9]]))  # out of the population's range: easy to spot
    datasets, labels = [], []
    for i in range(50):
        table = _grid_table(rng.integers(0, 4, (60, 5)))
        if i % 2:
            table = pd.concat([table.iloc[:57], target, target, target], ignore_index=True)
        datasets.append(table)
        labels.append(i % 2)
    return datasets[:30], np.array(labels[:30]), datasets[30:], np.array(labels[30:]), target


def build(name: str, **extra):
    params = dict(FAST[name][0], **extra)
    if REGISTRY[name].needs_schema:
        params["schema"] = SCHEMA
    return make_attack(name, **params)


def fit_and_score(name: str, **extra):
    """(fit's return value, the attack, its scores, the member labels of the scored things)."""
    attack = build(name, **extra)
    if REGISTRY[name].kind == "dataset":
        shadow, labels, test, test_labels, target = planted_datasets()
        fitted = attack.fit(shadow, labels, target)
        return fitted, attack, attack.score(test), test_labels
    release, reference, members, non_members = planted_records()
    if name == "tablegan_mca":  # it scores the release's own records: the repeated ones are the members
        fitted = attack.fit(release)
        return fitted, attack, attack.score(release), release.duplicated(keep=False).to_numpy()
    X = pd.concat([members, non_members], ignore_index=True)
    y = np.r_[np.ones(len(members)), np.zeros(len(non_members))]
    if not REGISTRY[name].needs_schema:
        release, reference, X = _numeric(release), _numeric(reference), _numeric(X)
    return fit_records(attack, name, release, reference), attack, attack.score(X), y


def fit_records(attack, name: str, release, reference):
    """``fit(release, reference)``, or ``fit(release)`` for an attack that uses no reference."""
    return attack.fit(release, reference) if REGISTRY[name].uses_reference else attack.fit(release)


@functools.cache
def scored(name: str):
    return fit_and_score(name)


# --------------------------------------------------------------------------- the registry


def test_registry_lists_every_attack_once_with_its_kind():
    assert set(NAMES) == set(REGISTRY) == set(attack_names())
    assert attack_names("dataset") == ("query", "attention", "closeness")
    assert set(attack_names("dataset")) | set(attack_names("record")) == set(REGISTRY)
    # the DOMIAS paper's family, across the modules it is split into
    assert domias_attacks.ATTACKS == ("domias_kde", "domias_flow", "eq1_kde", "eq1_flow", "logan_0", "logan_d1",
                                      "logan_d1_published", "mc", "gan_leaks", "gan_leaks_cal")  # fmt: skip
    for name, spec in REGISTRY.items():
        assert spec.name == name and spec.kind in KINDS
        assert spec.description and "\n" not in spec.description, name
        cls = spec.load()
        assert callable(getattr(cls, "fit")) and callable(getattr(cls, "score")), name
    with pytest.raises(VrlibError, match="unknown kind"):
        attack_names("table")


def test_uses_reference_and_needs_schema_read_the_classes():
    uses = {n for n in REGISTRY if REGISTRY[n].uses_reference}
    assert uses == {"domias_kde", "domias_flow", "logan_d1", "logan_d1_published", "gan_leaks_cal", "distance_ratio"}
    assert {n for n in REGISTRY if REGISTRY[n].needs_schema} == {
        "query",
        "attention",
        "closeness",
        "copies",
        "distance_ratio",
        "tablegan_mca",
    }


def test_unknown_names_and_bad_parameters_are_clear_errors():
    with pytest.raises(VrlibError, match=r"unknown attack 'domias'.*domias_kde"):
        make_attack("domias")
    with pytest.raises(VrlibError, match="fixes.*domias_flow"):
        make_attack("domias_kde", estimator="flow")
    with pytest.raises(VrlibError, match=r"bad parameter\(s\) \['k'\].*epsilon"):
        make_attack("mc", k=3)
    with pytest.raises(VrlibError, match="schema="):
        make_attack("query", n_queries=10)
    with pytest.raises(VrlibError, match="has no parameter"):
        make_attack("gan_leaks").set_params(k=1)
    # the older lookups are views of the registry
    assert type(domias_attacks.get_attack("eq1_flow")) is type(make_attack("eq1_flow"))
    with pytest.raises(VrlibError, match="unknown attack"):
        domias_attacks.get_attack("query")


def test_achilles_builds_its_attacks_through_the_registry():
    settings = dict(n_queries=123, attention_epochs=7, attention_patience=3)
    query = achilles.make_attack("query", SCHEMA, settings, seed=5, n_jobs=1)
    assert query.get_params() == build("query", n_queries=123, seed=5).get_params()
    attention = achilles.make_attack("attention", SCHEMA, settings, seed=5)
    assert (attention.max_epochs, attention.patience, attention.seed) == (7, 3, 5)
    with pytest.raises(VrlibError, match="choose 'query' or 'attention'"):
        achilles.make_attack("mc", SCHEMA, settings, seed=0)


# --------------------------------------------------------------------------- the contract, attack by attack


@pytest.mark.parametrize("name", NAMES)
def test_fit_returns_self_and_scores_are_one_finite_number_each(name):
    fitted, attack, scores, y = scored(name)
    assert fitted is attack
    assert isinstance(scores, np.ndarray) and scores.shape == (len(y),) and scores.dtype == np.float64
    assert np.isfinite(scores).all()


@pytest.mark.parametrize("name", [n for n in NAMES if FAST[n][1]])
def test_members_score_higher_on_a_planted_case(name):
    _, _, scores, y = scored(name)
    assert auc(y, scores) > 0.8, name


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_scores(name):
    _, _, first, _ = scored(name)
    _, _, again, _ = fit_and_score(name)
    np.testing.assert_array_equal(first, again)


@pytest.mark.parametrize("name", NAMES)
def test_parameters_round_trip(name):
    attack = build(name)
    params = attack.get_params()
    assert set(params) == set(REGISTRY[name].parameters())
    assert {k: params[k] for k in REGISTRY[name].fixed} == REGISTRY[name].fixed
    assert type(attack)(**params).get_params() == params
    free = {k: v for k, v in params.items() if k not in REGISTRY[name].fixed}
    assert make_attack(name, **free).get_params() == params
    assert repr(attack).startswith(type(attack).__name__ + "(")
    if "seed" in params:
        assert attack.set_params(seed=11) is attack and attack.get_params()["seed"] == 11


@pytest.mark.parametrize("name", NAMES)
def test_bad_input_is_a_clear_error(name):
    spec = REGISTRY[name]
    if spec.kind == "dataset":
        shadow, labels, test, _, target = planted_datasets()
        with pytest.raises(VrlibError, match="not fitted"):
            build(name).score(test)
        with pytest.raises(VrlibError, match="label"):
            build(name).fit(shadow, labels[:-1], target)
        with pytest.raises(VrlibError, match="x1"):
            scored(name)[1].score([d.drop(columns="x1") for d in test])
        return
    release, reference, members, _ = planted_records()
    if spec.needs_schema:
        with pytest.raises(VrlibError, match="not fitted"):
            build(name).score(members)
        with pytest.raises(VrlibError, match="x1"):
            fit_records(build(name), name, release.drop(columns="x1"), reference)
        with pytest.raises(VrlibError, match="x1"):
            scored(name)[1].score(members.drop(columns="x1"))
    else:
        X = _numeric(members)
        with pytest.raises(VrlibError, match="not fitted"):
            build(name).score(X)
        bad = _numeric(release)
        bad[3, 1] = np.nan
        with pytest.raises(VrlibError, match="NaN"):
            fit_records(build(name), name, bad, _numeric(reference))
        with pytest.raises(VrlibError, match="column"):
            scored(name)[1].score(X[:, :2])
    if spec.uses_reference:
        with pytest.raises(VrlibError, match="reference"):
            build(name).fit(release if spec.needs_schema else _numeric(release), None)


@pytest.mark.parametrize("name", ["query", "attention"])
def test_trained_dataset_attacks_score_is_predict_proba(name):
    _, attack, scores, _ = scored(name)
    np.testing.assert_array_equal(scores, attack.predict_proba(planted_datasets()[2]))


# --------------------------------------------------------------------------- values of the table attacks


def test_copies_by_brute_force():
    release, _, members, non_members = planted_records()
    records = pd.concat([members, non_members, release.iloc[:5]], ignore_index=True)
    rows = [tuple(r) for r in release.astype(object).itertuples(index=False)]
    expected = [sum(tuple(r) == s for s in rows) for r in records.astype(object).itertuples(index=False)]
    np.testing.assert_array_equal(build("copies").fit(release).score(records), expected)
    assert set(expected[:40]) == {3} and set(expected[40:80]) == {0}


def eq6_distances(a: pd.DataFrame, b: pd.DataFrame, encoder: TableEncoder) -> np.ndarray:
    """All distances of eq. 6 with p = 2 between the rows of ``a`` and ``b``: the one-hot and continuous
    parts' Euclidean norms weighed by 3/5 and 2/5 (three categorical, two continuous columns)."""
    a, b = encoder.transform(a), encoder.transform(b)
    euclid = lambda u, v: np.sqrt(((u[:, None, :] - v[None, :, :]) ** 2).sum(-1))  # noqa: E731
    return 0.6 * euclid(a.onehot, b.onehot) + 0.4 * euclid(a.continuous, b.continuous)


def test_distance_ratio_by_hand():
    release, reference, members, non_members = planted_records()
    records = pd.concat([members.iloc[:10], non_members.iloc[:10]], ignore_index=True)
    encoder = TableEncoder(SCHEMA).fit(pd.concat([release, reference], ignore_index=True))
    d_syn = eq6_distances(records, release, encoder).min(axis=1)
    d_ref = eq6_distances(records, reference, encoder).min(axis=1)
    delta = 1e-3 * np.median(d_ref)
    attack = build("distance_ratio").fit(release, reference)
    np.testing.assert_allclose(attack.score(records), np.log((d_ref + delta) / (d_syn + delta)), rtol=1e-9)
    assert attack.delta_ == pytest.approx(delta)
    # a fixed δ, as the audit uses it to score a second set alike
    np.testing.assert_allclose(attack.set_params(delta=0.5).score(records), np.log((d_ref + 0.5) / (d_syn + 0.5)))
    with pytest.raises(VrlibError, match="delta"):
        build("distance_ratio", delta=-1.0).fit(release, reference)


def test_target_closeness_by_hand():
    shadow, labels, test, _, target = planted_datasets()
    attack = build("closeness").fit(shadow, labels, target)
    encoder = TableEncoder(SCHEMA).fit(pd.concat([target, *shadow], ignore_index=True))
    expected = [-np.sort(eq6_distances(target, df, encoder)[0])[:4].mean() for df in test]
    np.testing.assert_allclose(attack.score(test), expected, rtol=1e-9)
    # a dataset smaller than n_neighbors: all its records
    small = test[1].iloc[:2]
    assert attack.score([small])[0] == pytest.approx(-eq6_distances(target, small, encoder)[0].mean())
