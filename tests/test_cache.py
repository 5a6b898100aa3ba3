"""Content-addressed cache: keys, round trips, atomic writes, no pickle, resuming an interrupted game."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import warnings

import numpy as np
import pandas as pd
import pytest

from vrlib import cache as cache_mod
from vrlib.cache import (
    Cache,
    CacheWarning,
    cache_dir,
    fingerprint_table,
    get_or_make,
    get_or_make_many,
    get_table,
    make_key,
    save_table,
    serialise,
    source_hash,
)
from vrlib.data import Schema
from vrlib.encoding import decode_table, encode_table
from vrlib.errors import VrlibError
from vrlib.games import TraditionalGame


def table(n=30, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "x": rng.normal(size=n),
            "a": pd.Categorical(rng.choice(["p", "q", "r"], n), categories=["p", "q", "r", "s"]),
            "b": pd.Categorical(rng.integers(0, 300, n), categories=list(range(300))),
        }
    )
    return df, Schema(["a", "b"], ["x"])


def test_cache_dir_env_and_default(monkeypatch, tmp_path):
    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
    assert Cache().root == tmp_path / "c"
    monkeypatch.delenv("VRLIB_CACHE_DIR")
    assert cache_dir().parts[-2:] == (".cache", "vrlib")


def test_keys_change_with_every_part():
    base = dict(data="abc", generator={"name": "baynet", "params": {"k": 2}}, seed=1, rows=np.arange(5), n=1.5)
    key = make_key(**base)
    assert key == make_key(**dict(reversed(list(base.items()))))  # keyword order is irrelevant
    variants = [
        {"data": "abd"}, {"generator": {"name": "baynet", "params": {"k": 3}}}, {"seed": 2},
        {"rows": np.arange(1, 6)}, {"rows": np.arange(5, dtype=np.int32)}, {"n": 1.5000001}, {"n": 2},
    ]  # fmt: skip
    keys = {make_key(**{**base, **v}) for v in variants}
    assert key not in keys and len(keys) == len(variants)
    assert make_key(x=1) != make_key(x=1.0) != make_key(x="1")
    assert make_key(x=np.int64(3)) == make_key(x=3)
    with pytest.raises(VrlibError, match="cache key"):
        make_key(x=object())


def test_fingerprint_sees_any_change():
    df, schema = table()
    fp = fingerprint_table(df, schema)
    assert fp == fingerprint_table(df.copy(), schema)
    changed = df.copy()
    changed.loc[3, "x"] += 1e-12
    assert fingerprint_table(changed, schema) != fp
    changed = df.copy()
    changed.loc[0, "a"] = "s"
    assert fingerprint_table(changed, schema) != fp
    assert fingerprint_table(df.set_axis(range(1, 31)), schema) != fp
    # a public domain shapes the Bayesian networks' bins, so it is part of the fingerprint
    assert fingerprint_table(df, schema.with_domains({"x": (0.0, 100.0)})) != fp


def test_round_trip_arrays_meta(tmp_path):
    c = Cache(tmp_path, namespace="t")
    key = make_key(a=1)
    assert c.get(key) is None
    path = c.save(key, {"u": np.arange(6, dtype=np.uint8).reshape(2, 3), "f": np.array([0.5])}, {"who": "me"})
    assert path.parent.parent == tmp_path / "t" and path == c.path(key)
    arrays, meta = c.get(key)
    assert arrays["u"].dtype == np.uint8 and arrays["u"].shape == (2, 3) and meta == {"who": "me"}
    assert list(c.keys()) == [key] and len(c) == 1
    # Plain npz: readable without pickle by any numpy.
    with np.load(path, allow_pickle=False) as npz:
        assert set(npz.files) == {"u", "f", "__meta__", "__made_with__"}
    # Compressed and stored entries hold the same data.
    raw = Cache(tmp_path, namespace="raw", compress=False)
    raw.save(key, {"u": np.arange(6, dtype=np.uint8).reshape(2, 3), "f": np.array([0.5])}, {"who": "me"})
    np.testing.assert_array_equal(raw.get(key)[0]["u"], arrays["u"])
    assert c.get(key, lambda a, m: m["who"]) == "me"  # decode hook


def test_entries_compress_only_what_shrinks():
    import io
    import zipfile

    rng = np.random.default_rng(0)
    arrays = {"codes": np.tile(np.arange(9, dtype=np.uint8), (1000, 1)), "noise": rng.random((1000, 6))}
    blob = cache_mod.serialise(arrays, {"k": 1})
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        kinds = {i.filename: i.compress_type for i in zf.infolist()}
    assert kinds["codes.npy"] == zipfile.ZIP_DEFLATED and kinds["noise.npy"] == zipfile.ZIP_STORED
    with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
        for name, arr in arrays.items():
            np.testing.assert_array_equal(npz[name], arr)
    assert cache_mod.serialise(arrays, {"k": 1}) == blob  # no timestamps: same arrays, same bytes
    assert len(cache_mod.serialise(arrays, {"k": 1}, compress=False)) > len(blob)


def test_no_pickle(tmp_path):
    c = Cache(tmp_path)
    with pytest.raises(VrlibError, match="no pickle"):
        c.save(make_key(a=1), {"o": np.array([{"x": 1}], dtype=object)})
    with pytest.raises(VrlibError, match="JSON"):
        c.save(make_key(a=1), {}, {"bad": object()})
    with pytest.raises(VrlibError, match="hex digests"):
        c.path("../../etc")


def test_atomic_write_leaves_nothing_after_a_crash(tmp_path, monkeypatch):
    c = Cache(tmp_path)
    key = make_key(a=2)

    def crash_midway(fh, payload):
        fh.write(payload[: len(payload) // 2])  # what a killed process leaves behind
        raise KeyboardInterrupt

    monkeypatch.setattr(cache_mod, "_write_all", crash_midway)
    with pytest.raises(KeyboardInterrupt):
        c.save(key, {"x": np.zeros(3)})
    assert c.get(key) is None
    assert list((tmp_path / "results").rglob("*")) == [tmp_path / "results" / key[:2]]  # no temp file left

    # A crash after the data is written but before the rename: the entry is still invisible.
    monkeypatch.undo()
    monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError("power cut")))
    with pytest.raises(OSError):
        c.save(key, {"x": np.zeros(3)})
    assert c.get(key) is None
    monkeypatch.undo()
    # A leftover temp file of a killed process is ignored, then cleaned.
    (tmp_path / "results" / key[:2] / ".tmp-zzz.npz").write_bytes(b"partial")
    assert list(c.keys()) == []
    assert c.remove_temporary() == 1
    c.save(key, {"x": np.ones(3)})
    np.testing.assert_array_equal(c.get(key)[0]["x"], np.ones(3))


def test_unreadable_entry_is_a_miss(tmp_path):
    c = Cache(tmp_path)
    key = make_key(a=3)
    c.path(key).parent.mkdir(parents=True)
    c.path(key).write_bytes(b"not a zip")
    with pytest.warns(CacheWarning, match="unreadable"):
        assert c.get(key) is None
    assert not c.path(key).exists()  # set aside, so it is reported once and never read again
    assert c.path(key).with_suffix(".npz.corrupt").read_bytes() == b"not a zip"
    c.save(key, {"x": np.ones(2)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert c.get(key)[1] == {}
    # a decode hook that fails marks the entry unreadable too
    with pytest.warns(CacheWarning, match="KeyError"):
        assert c.get(key, lambda a, m: a["missing"]) is None


def test_an_entry_made_under_other_package_versions_is_made_again(tmp_path, monkeypatch):
    import io
    import zipfile

    monkeypatch.setattr(cache_mod, "_WARNED_VERSIONS", set())
    c = Cache(tmp_path, namespace="t")
    ours = cache_mod.package_versions()
    theirs = {**ours, "scikit-learn": "0.0.1"}
    monkeypatch.setattr(cache_mod, "package_versions", lambda: theirs)
    c.save(make_key(a=1), {"x": np.zeros(2)})
    c.save(make_key(a=2), {"x": np.zeros(2)})
    with np.load(c.path(make_key(a=1)), allow_pickle=False) as npz:
        assert json.loads(npz["__made_with__"].tobytes()) == theirs
    monkeypatch.setattr(cache_mod, "package_versions", lambda: ours)
    with pytest.warns(CacheWarning, match=r"scikit-learn 0\.0\.1 \(now "):
        assert c.get(make_key(a=1)) is None
    with warnings.catch_warnings():  # said once per folder, and the entry is left in place, not set aside
        warnings.simplefilter("error")
        assert c.get(make_key(a=2)) is None
    assert c.path(make_key(a=1)).exists() and not list(tmp_path.rglob("*.corrupt"))
    made = get_or_make(c, make_key(a=1), lambda: ({"x": np.ones(2)}, {}))  # made again, over the old entry
    np.testing.assert_array_equal(made[0]["x"], np.ones(2))
    np.testing.assert_array_equal(c.get(make_key(a=1))[0]["x"], np.ones(2))
    # an entry from before entries recorded their versions (no such member) is read as it is
    src = zipfile.ZipFile(io.BytesIO(cache_mod.serialise({"x": np.full(2, 7.0)}, {"k": 1})))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as dst:
        for info in src.infolist():
            if info.filename != "__made_with__.npy":
                dst.writestr(info, src.read(info))
    c.write(make_key(a=3), buf.getvalue())
    arrays, meta = c.get(make_key(a=3))
    np.testing.assert_array_equal(arrays["x"], np.full(2, 7.0))
    assert meta == {"k": 1}
    with pytest.raises(VrlibError, match="reserved"):
        c.save(make_key(a=4), {"__made_with__": np.zeros(1)})


def test_tables_round_trip_with_schema_categories(tmp_path):
    df, schema = table()
    enc = encode_table(df, schema)
    assert enc["codes"].dtype == np.uint16 and enc["continuous"].dtype == np.float64  # 300 categories
    assert encode_table(df[["a", "x"]], Schema(["a"], ["x"]))["codes"].dtype == np.uint8
    cats = {c: df[c].cat.categories for c in schema.categorical}
    back = decode_table(enc["codes"], enc["continuous"], schema, cats, columns=df.columns)
    pd.testing.assert_frame_equal(back, df)
    c = Cache(tmp_path)
    save_table(c, make_key(t=1), df, schema)
    pd.testing.assert_frame_equal(get_table(c, make_key(t=1), schema, cats), df)
    assert get_table(c, make_key(t=2), schema, cats) is None
    # Categories are matched by value: a table with a smaller category set is recoded.
    sub = df.copy()
    sub["a"] = sub["a"].cat.remove_unused_categories()
    np.testing.assert_array_equal(encode_table(sub, schema, cats)["codes"], enc["codes"])
    bad = df.copy()
    bad["a"] = bad["a"].cat.add_categories(["new"])
    bad.loc[0, "a"] = "new"
    with pytest.raises(VrlibError, match="outside its category set"):
        encode_table(bad, schema, cats)


class Counting:
    """Test generator that copies its training rows; counts fits and can fail after a number of them."""

    fits = 0
    fail_after = None

    def fit(self, df, schema, seed):
        if Counting.fail_after is not None and Counting.fits >= Counting.fail_after:
            raise KeyboardInterrupt("simulated interruption")
        Counting.fits += 1
        self.df_ = df.reset_index(drop=True)
        return self

    def sample(self, n, seed):
        return self.df_.iloc[np.random.default_rng(seed).integers(len(self.df_), size=n)].reset_index(drop=True)


def test_interrupted_game_resumes_where_it_stopped(tmp_path):
    df, schema = table(400, 1)
    kw = dict(
        n_aux=200,
        n_test=150,
        n_records=20,
        n_synth=20,
        n_shadow=12,
        n_test_datasets=4,
        n_jobs=1,
        progress=False,
        cache=Cache(tmp_path, "synthetic"),
    )
    Counting.fits, Counting.fail_after = 0, 7
    game = TraditionalGame(Counting(), **kw).fit(df, schema)
    with pytest.raises(KeyboardInterrupt):
        game.datasets(5)
    assert len(kw["cache"]) == 7  # every finished dataset was kept
    Counting.fits, Counting.fail_after = 0, None
    resumed = TraditionalGame(Counting(), **kw).fit(df, schema)
    full = resumed.datasets(5)
    assert Counting.fits == 16 - 7 and resumed.stats_["cached"] == 7
    Counting.fits = 0
    again = TraditionalGame(Counting(), **kw).fit(df, schema)
    np.testing.assert_array_equal(again.datasets(5).shadow.codes, full.shadow.codes)
    assert Counting.fits == 0
    # Any parameter that changes the data changes the key: nothing is wrongly reused.
    for change in ({"n_synth": 21}, {"seed": 1}, {"n_records": 21}):
        Counting.fits = 0
        TraditionalGame(Counting(), **{**kw, **change}).fit(df, schema).datasets(5)
        assert Counting.fits == 16, change
    other = df.copy()
    other.loc[other.index[-1], "x"] += 1.0  # a record no dataset uses, but Ω changed
    Counting.fits = 0
    TraditionalGame(Counting(), **kw).fit(other, schema).datasets(5)
    assert Counting.fits == 16


def test_module_has_no_pickle():
    src = open(cache_mod.__file__).read()
    assert "import pickle" not in src and "allow_pickle=True" not in src


def _module(monkeypatch, path, text):
    """Write ``text`` to ``path`` and import it as a fresh module (registered, as imports are, until the test ends)."""
    import importlib.util
    import sys

    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"vrlib_test_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


def test_source_hash_follows_the_code_not_its_layout(tmp_path, monkeypatch):
    path = tmp_path / "shaped.py"
    original = 'def shape(x):\n    """Scale x."""\n    return x * 2\n'
    fn = _module(monkeypatch, path, original).shape
    before = source_hash(fn)
    # the hash is of the file's syntax tree
    tree = hashlib.sha256(ast.dump(ast.parse(original)).encode()).hexdigest()
    assert before == hashlib.sha256(tree.encode()).hexdigest()
    same = [
        "# a comment\ndef shape(x):  # another\n    '''Scale x.'''\n\n\n    return (x *\n            2)\n",
        'def shape( x ) :\n    """Scale x."""\n    return x*2  # fmt: skip\n',
    ]
    for text in same:
        path.write_text(text)
        assert source_hash(fn) == before, text
    changed = [
        'def shape(x):\n    """Scale x."""\n    return x * 3\n',  # a constant
        'def shape(x):\n    """Scale x twice."""\n    return x * 2\n',  # the docstring
        'def shape(y):\n    """Scale x."""\n    return y * 2\n',  # a name
        original + "\nLIMIT = 1\n",  # more code in the file
    ]
    for text in changed:
        path.write_text(text)
        assert source_hash(fn) != before, text
    path.write_text(original)
    assert source_hash(fn) == before


def test_source_hash_of_a_class_counts_its_bases_and_dependencies(tmp_path, monkeypatch):
    base = _module(monkeypatch, tmp_path / "base_mod.py", "class Base:\n    rate = 1\n")
    helper = _module(monkeypatch, tmp_path / "helper_mod.py", "def helper():\n    return 1\n")
    child = _module(
        monkeypatch,
        tmp_path / "child_mod.py",
        "from vrlib_test_base_mod import Base\n\n\nclass Child(Base):\n    pass\n",
    ).Child
    child.source_dependencies = (helper,)
    before = source_hash(child)
    assert len({before, source_hash(base.Base), source_hash(helper.helper), source_hash(base.Base, helper)}) == 4
    for name, edit in (
        ("base_mod.py", "class Base:\n    rate = 2\n"),
        ("helper_mod.py", "def helper():\n    return 2\n"),
    ):
        original = (tmp_path / name).read_text()
        (tmp_path / name).write_text(edit)
        assert source_hash(child) != before, name
        (tmp_path / name).write_text("# reformatted\n" + original.replace("    ", "        "))
        assert source_hash(child) == before, name
        (tmp_path / name).write_text(original)
    assert source_hash(int) == hashlib.sha256().hexdigest()  # builtins have no source file: nothing hashed


def test_get_or_make_reads_checks_makes_and_saves(tmp_path):
    c = Cache(tmp_path, namespace="t")
    calls = []

    def make():
        calls.append(1)
        return {"v": np.arange(3.0)}, {"n": 3}

    def decode(arrays, meta):
        if arrays["v"].shape != (meta["n"],):
            raise ValueError("wrong shape")
        return arrays["v"].sum()

    key = make_key(what="sum")
    assert get_or_make(c, key, make, decode) == 3.0 and len(calls) == 1 and len(c) == 1
    assert get_or_make(c, key, make, decode) == 3.0 and len(calls) == 1  # read back, not made
    arrays, meta = get_or_make(c, key, make)  # without decode: the entry itself
    np.testing.assert_array_equal(arrays["v"], np.arange(3.0))
    assert meta == {"n": 3}
    c.save(key, {"v": np.arange(5.0)}, {"n": 4})  # an entry its check refuses is made again
    with pytest.warns(CacheWarning, match="wrong shape"):
        assert get_or_make(c, key, make, decode) == 3.0
    assert len(calls) == 2 and c.get(key, decode) == 3.0
    assert get_or_make(None, key, make, decode) == 3.0 and len(calls) == 3  # no cache: always made


def _square_entries(task):
    """Entries ``{"x": i * i}`` for the positions of one task (module level: it runs in workers)."""
    values, fail = task
    if fail:
        raise RuntimeError("stopped")
    return [({"x": np.array([v * v])}, {"v": v}) for v in values]


def test_get_or_make_many_makes_each_missing_entry_once_and_saves_as_tasks_return(tmp_path):
    c = Cache(tmp_path, namespace="t")
    values = (1, 2, 3, 2, 4)
    keys = [make_key(v=v) for v in values]  # position 3 repeats position 1
    c.save(keys[2], {"x": np.array([9])}, {"v": 3})
    planned = []

    def plan(missing):
        planned.append(list(missing))
        return [((tuple(values[i] for i in part), False), part) for part in (missing[:2], missing[2:])]

    decode = lambda arrays, meta: int(arrays["x"][0])  # noqa: E731
    got = get_or_make_many(c, keys, _square_entries, plan, decode=decode, n_jobs=1, progress=False)
    assert got == [1, 4, 9, 4, 16] and planned == [[0, 1, 4]] and len(c) == 4
    # everything cached: nothing planned
    assert get_or_make_many(c, keys, _square_entries, plan, decode=decode, n_jobs=1, progress=False) == got
    assert len(planned) == 1
    # in worker processes, with one decoder per key
    keys2 = [make_key(v=v, run=2) for v in (5, 6)]
    plan2 = lambda missing: [(((5 + i,), False), [i]) for i in missing]  # noqa: E731
    decoders = [decode, lambda arrays, meta: -int(arrays["x"][0])]
    assert get_or_make_many(c, keys2, _square_entries, plan2, decode=decoders, n_jobs=2, progress=False) == [25, -36]


def test_get_or_make_many_keeps_finished_tasks_when_one_fails(tmp_path):
    c = Cache(tmp_path, namespace="t")
    keys = [make_key(v=v, fail=1) for v in (1, 2)]
    plan = lambda missing: [(((1 + i,), i == 1), [i]) for i in missing]  # noqa: E731
    with pytest.raises(RuntimeError, match="stopped"):
        get_or_make_many(c, keys, _square_entries, plan, n_jobs=1, progress=False)
    assert list(c.keys()) == [keys[0]]  # the first task finished: kept
    with pytest.raises(VrlibError, match="exactly one task"):
        get_or_make_many(c, keys, _square_entries, lambda missing: [], n_jobs=1, progress=False)


def _serialised_entries(task):
    """Entries serialised in the worker; the second is not to be stored (payload None)."""
    return [
        ({"x": np.array([1])}, {"m": 1}, serialise({"x": np.array([1])}, {"m": 1})),
        ({"x": np.array([2])}, {"m": 2}, None),
    ]


def test_get_or_make_many_writes_worker_serialised_entries_and_skips_unkept_ones(tmp_path):
    c = Cache(tmp_path, namespace="t")
    keys = [make_key(p=1), make_key(p=2)]
    got = get_or_make_many(c, keys, _serialised_entries, lambda missing: [(None, missing)], n_jobs=1, progress=False)
    assert [int(a["x"][0]) for a, _ in got] == [1, 2] and [m for _, m in got] == [{"m": 1}, {"m": 2}]
    assert list(c.keys()) == [keys[0]]
    arrays, meta = c.get(keys[0])
    assert meta == {"m": 1} and arrays["x"].tolist() == [1]
