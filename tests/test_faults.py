"""Fault injection, cache side: damaged entries of every namespace, interrupted runs, concurrent writers, Dask.

Two small experiments stand for the project's experiment families: an achilles run
(target choice, traditional game with BayNet, query attack: namespaces ``neighbours``,
``synthetic`` and ``achilles-attacks``) and a DOMIAS Fig. 6 run (noise and BayNet
generators, DOMIAS / Eq. 1 / MC / GAN-Leaks: ``synthetic`` and ``domias-scores``), on
small tables made here.  Every fault must end in the table of a fault-free run, and
every damaged entry in a warning naming its file and a copy set aside.
"""

from __future__ import annotations

import io
import os
import shutil
import warnings
import zipfile
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vrlib.cache import Cache
from vrlib.data import Schema
from vrlib.experiments import achilles, domias

from conftest import make_table

ACHILLES = dict(
    methods=("distance", "random"),
    profile="smoke",
    progress=False,
    n_jobs=1,
    n_targets=1,
    n_records=30,
    n_synth=30,
    n_shadow=6,
    n_test_datasets=4,
    n_queries=200,
)
DOMIAS = dict(
    profile="smoke",
    n_jobs=1,
    seeds=(0,),
    n_mem=50,
    n_ref=300,
    n_syn=200,
    n_holdout=200,
    fig6_generators=("noise", "baynet"),
    noise_scales=(1.0,),
    fig6_attacks=("domias_kde", "eq1_kde", "mc", "gan_leaks"),
)


def small_omega(dataset, omega_rows=None, seed=0, census_variant="auto"):
    return make_table(n=400, n_cat=3, n_cont=2, seed=5)


def small_california():
    rng = np.random.default_rng(3)
    return pd.DataFrame(rng.normal(size=(1500, 3)), columns=["a", "b", "c"]), Schema([], ["a", "b", "c"])


def run_experiment(name: str, **kw) -> pd.DataFrame:
    """The small run of ``name`` with the small tables (also in worker processes, hence no fixtures)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(achilles, "load_omega", small_omega)
        mp.setattr(domias, "california", small_california)
        if name == "achilles":
            return achilles.record_identification("adult", "baynet", **{**ACHILLES, **kw})
        return domias.fig6(**{**DOMIAS, **kw})


def run_in(cache: Path, name: str, **kw) -> tuple[pd.DataFrame, list[str]]:
    """Run ``name`` on the cache folder ``cache``: its table and the messages of the warnings it gave."""
    old = os.environ.get("VRLIB_CACHE_DIR")
    os.environ["VRLIB_CACHE_DIR"] = str(cache)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            table = run_experiment(name, **kw)
    finally:
        if old is None:
            os.environ.pop("VRLIB_CACHE_DIR")
        else:
            os.environ["VRLIB_CACHE_DIR"] = old
    return table, [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


def same_table(got: pd.DataFrame, want: pd.DataFrame) -> None:
    """Equal tables; ``seconds`` (timing) only has to be a finite number."""
    if "seconds" in want:
        assert np.isfinite(got["seconds"]).all()
        got, want = got.drop(columns="seconds"), want.drop(columns="seconds")
    pd.testing.assert_frame_equal(got, want)


def entries(cache: Path, namespace: str) -> list[Path]:
    return sorted((cache / namespace).glob("??/*.npz"))


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """Fault-free tables and caches of both experiments."""
    out = {}
    for name in ("achilles", "domias"):
        cache = tmp_path_factory.mktemp(f"ref-{name}")
        table, messages = run_in(cache, name)
        assert not messages
        again, _ = run_in(cache, name)  # read back from the cache: the same table
        same_table(again, table)
        out[name] = (table, cache)
    return out


# --------------------------------------------------------------------------- kinds of damage


def _rebuild(payload: bytes, meta: bytes | None) -> bytes:
    """The entry's zip again, with the metadata member left out (``meta=None``) or replaced."""
    src = zipfile.ZipFile(io.BytesIO(payload))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as dst:
        for info in src.infolist():
            if info.filename != "__meta__.npy":
                dst.writestr(info, src.read(info))
            elif meta is not None:
                arr = io.BytesIO()
                np.lib.format.write_array(arr, np.frombuffer(meta, np.uint8))
                dst.writestr(info, arr.getvalue())
    return buf.getvalue()


def _flip(at: float):
    def damage(b: bytes) -> bytes:
        i = min(int(at * len(b)), len(b) - 1)
        return b[:i] + bytes([b[i] ^ 0xFF]) + b[i + 1 :]

    return damage


FAULTS = {
    "truncated": lambda b: b[: len(b) // 2],
    "garbage": lambda b: np.random.default_rng(len(b)).integers(0, 256, len(b), dtype=np.uint8).tobytes(),
    "empty": lambda b: b"",
    "flipped-start": _flip(0.0),
    "flipped-middle": _flip(0.5),
    "flipped-end": _flip(0.95),
    "missing-metadata": lambda b: _rebuild(b, None),
    "corrupt-metadata": lambda b: _rebuild(b, b'{"seconds": 0.1'),
}
# (experiment, namespace it writes, namespaces to empty so that the damaged one is read)
CASES = [
    ("achilles", "neighbours", ()),
    ("achilles", "synthetic", ("achilles-attacks",)),
    ("achilles", "achilles-attacks", ()),
    ("domias", "synthetic", ()),
    ("domias", "domias-scores", ()),
]


def test_cases_cover_every_namespace_written(reference):
    for name, (_, cache) in reference.items():
        written = {p.name for p in cache.iterdir() if entries(cache, p.name)}
        assert written == {ns for exp, ns, _ in CASES if exp == name}


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("name,namespace,masking", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_damaged_entries_are_recomputed(reference, tmp_path, name, namespace, masking, fault):
    want, ref_cache = reference[name]
    cache = tmp_path / "cache"
    shutil.copytree(ref_cache, cache)
    for ns in masking:
        shutil.rmtree(cache / ns)
    damaged = {}
    for path in entries(cache, namespace):
        damaged[path] = FAULTS[fault](path.read_bytes())
        path.write_bytes(damaged[path])
    assert damaged
    got, messages = run_in(cache, name)
    same_table(got, want)
    for path, bad in damaged.items():
        named = [m for m in messages if str(path) in m]
        if fault.startswith("flipped") and not named:
            # a flip in a field nothing reads (a zip timestamp): the entry is still read, and was right
            assert path.read_bytes() == bad
            continue
        assert len(named) == 1, (path, messages)  # reported once
        assert Path(f"{path}.corrupt").read_bytes() == bad  # set aside for inspection, not deleted
        assert Cache(cache, namespace).get(path.stem) is not None  # made again, readable
    # The cache is healthy again: a third run reads it without a word.
    again, messages = run_in(cache, name)
    same_table(again, want)
    assert not messages


@pytest.mark.parametrize("name,namespace", [(c[0], c[1]) for c in CASES], ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_every_single_byte_flip_is_caught_or_harmless(reference, tmp_path, name, namespace):
    """Flip each byte of a real entry in turn: ``get`` gives the entry unchanged, or None with a warning."""
    source = entries(reference[name][1], namespace)[0]
    good = source.read_bytes()
    cache = Cache(tmp_path, namespace)
    path = cache.path(source.stem)
    path.parent.mkdir(parents=True)
    want_arrays, want_meta = Cache(reference[name][1], namespace).get(source.stem)
    step = max(1, len(good) // 600)  # about 600 positions, every one for small entries
    caught = 0
    for i in range(0, len(good), step):
        path.write_bytes(good[:i] + bytes([good[i] ^ 0xFF]) + good[i + 1 :])
        Path(f"{path}.corrupt").unlink(missing_ok=True)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            got = cache.get(source.stem)
        if got is None:
            assert len(seen) == 1 and str(path) in str(seen[0].message), i
            assert not path.exists() and Path(f"{path}.corrupt").exists(), i
            caught += 1
        else:
            assert not seen, i
            arrays, meta = got
            assert meta == want_meta, i
            assert arrays.keys() == want_arrays.keys(), i
            for k in arrays:
                np.testing.assert_array_equal(arrays[k], want_arrays[k])
                assert arrays[k].dtype == want_arrays[k].dtype
    assert caught > 0


# --------------------------------------------------------------------------- interrupted runs


class Interrupt:
    """Replaces a method; raises KeyboardInterrupt (Ctrl-C) on its ``after + 1``-th call."""

    def __init__(self, original, after: int):
        self.original, self.after, self.calls = original, after, 0

    def __get__(self, obj, cls=None):
        def call(*args, **kwargs):
            self.calls += 1
            if self.calls > self.after:
                raise KeyboardInterrupt("simulated Ctrl-C")
            return self.original(obj, *args, **kwargs)

        return call


def newest(cache: Path) -> list[Path]:
    """The entry written last in each namespace."""
    out = []
    for ns in cache.iterdir():
        found = entries(cache, ns.name)
        if found:
            out.append(max(found, key=lambda p: p.stat().st_mtime_ns))
    return out


@pytest.mark.parametrize("name", ["achilles", "domias"])
def test_interrupted_run_resumes_to_the_same_table(reference, tmp_path, monkeypatch, name):
    """Ctrl-C in the middle of the attacks, and the last entry of each namespace torn by a power cut."""
    want, _ = reference[name]
    if name == "achilles":
        from vrlib.attacks.query import QueryAttack as Attacked

        method = "predict_proba"
    else:
        from vrlib.attacks.domias import MonteCarlo as Attacked

        method = "score"
    with monkeypatch.context() as mp:
        mp.setattr(Attacked, method, Interrupt(getattr(Attacked, method), after=1))
        with pytest.raises(KeyboardInterrupt):
            run_in(tmp_path, name)
    torn = newest(tmp_path)
    assert torn
    for path in torn:  # written without fsync, the rename survived but not the data
        path.write_bytes(path.read_bytes()[:100])
    got, messages = run_in(tmp_path, name)
    same_table(got, want)
    for path in torn:
        assert any(str(path) in m for m in messages), (path, messages)


# --------------------------------------------------------------------------- concurrent writers


def _run_both(cache: str) -> list[pd.DataFrame]:
    return [run_in(Path(cache), name)[0] for name in ("achilles", "domias")]


@pytest.mark.slow
def test_concurrent_runs_on_one_damaged_cache(reference, tmp_path):
    """Two processes run both experiments on one cache whose every entry is damaged: both end right."""
    cache = tmp_path / "cache"
    for name in ("achilles", "domias"):
        shutil.copytree(reference[name][1], cache, dirs_exist_ok=True)
    for ns in ("achilles-attacks", "domias-scores"):  # so that the runs read, set aside and write every entry
        shutil.rmtree(cache / ns)
    for path in cache.glob("*/??/*.npz"):
        path.write_bytes(path.read_bytes()[:-40])
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        runs = list(pool.map(_run_both, [str(cache)] * 2))
    for tables in runs:
        for name, table in zip(("achilles", "domias"), tables):
            same_table(table, reference[name][0])
    assert not list(cache.rglob(".tmp-*"))
    for name in ("achilles", "domias"):
        again, messages = run_in(cache, name)
        same_table(again, reference[name][0])
        assert not messages


# --------------------------------------------------------------------------- Dask without a shared disk


def _forbidden(*args, **kwargs):
    raise AssertionError("fitted in the client process; this work belongs to the workers")


@pytest.mark.slow
def test_dask_cluster_without_shared_disk(reference, tmp_path, monkeypatch):
    """Workers with a cache folder of their own (as on other machines): same tables as local runs.

    The workers must only compute and return (the client writes the cache), and every
    generator fit and attack must run on the workers.
    """
    distributed = pytest.importorskip("dask.distributed")
    from vrlib.attacks.domias import GANLeaks, MonteCarlo
    from vrlib.attacks.query import QueryAttack
    from vrlib.density import GaussianKDE
    from vrlib.generators.bayesnet import PrivBayes
    from vrlib.generators.noise import AdditiveNoise

    local = {}
    for name in ("achilles", "domias"):  # the local joblib run, two processes
        local[name], _ = run_in(tmp_path / "local", name, n_jobs=2)
        same_table(local[name], reference[name][0])
    workers_cache = tmp_path / "workers-cache"
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        env={"VRLIB_CACHE_DIR": str(workers_cache), "VRLIB_N_JOBS": "1"},
    ) as cluster:
        monkeypatch.setenv("VRLIB_DASK_SCHEDULER", cluster.scheduler_address)
        for cls in (PrivBayes, AdditiveNoise, QueryAttack, MonteCarlo, GANLeaks, GaussianKDE):
            monkeypatch.setattr(cls, "fit", _forbidden)
        for name in ("achilles", "domias"):
            got, messages = run_in(tmp_path / "client-cache", name)
            same_table(got, local[name])
            assert not messages
    assert entries(tmp_path / "client-cache", "synthetic")  # the client wrote the cache...
    assert not workers_cache.exists() or not any(workers_cache.rglob("*.npz"))  # ...the workers never did


# --------------------------------------------------------------------------- stale results


def _edited(monkeypatch, *files):
    """Pretend the source files ending in ``files`` were edited (their bytes as ``source_hash`` reads them).

    The edit is code (a new constant): ``source_hash`` reads the syntax tree, so a comment would not count.
    """
    read = Path.read_bytes

    def read_bytes(self):
        data = read(self)
        return data + b"\n_EDITED = True\n" if any(str(self).endswith(f) for f in files) else data

    monkeypatch.setattr(Path, "read_bytes", read_bytes)


@pytest.mark.parametrize(
    "name,edited,renewed",
    [
        ("achilles", "vrlib/generators/bayesnet.py", {"synthetic", "achilles-attacks"}),
        ("achilles", "vrlib/games.py", {"achilles-attacks"}),
        ("achilles", "vrlib/attacks/query.py", {"achilles-attacks"}),
        ("achilles", "vrlib/experiments/achilles.py", {"achilles-attacks"}),
        ("achilles", "vrlib/distance.py", {"neighbours"}),
        ("domias", "vrlib/generators/noise.py", {"synthetic"}),
        ("domias", "vrlib/attacks/domias.py", {"domias-scores"}),
        ("domias", "vrlib/density/base.py", {"domias-scores"}),
        ("domias", "vrlib/density/kde.py", {"domias-scores"}),
        ("domias", "vrlib/density/bnaf.py", set()),  # the run uses no BNAF attack: its scores keep their keys
        ("domias", "vrlib/experiments/domias_scoring.py", {"domias-scores"}),
        ("domias", "vrlib/experiments/domias.py", set()),  # the figures' code: the scores keep their keys
    ],
)
def test_editing_code_renews_what_it_shaped(reference, tmp_path, monkeypatch, name, edited, renewed):
    """Results shaped by a file get new keys when it changes (and results it did not shape keep theirs)."""
    want, ref_cache = reference[name]
    cache = tmp_path / "cache"
    shutil.copytree(ref_cache, cache)
    before = {ns.name: set(entries(cache, ns.name)) for ns in cache.iterdir()}
    with monkeypatch.context() as mp:
        _edited(mp, edited)
        got, _ = run_in(cache, name)
    same_table(got, want)  # an edit that changes nothing computes the same numbers again
    grown = {ns for ns, old in before.items() if set(entries(cache, ns)) - old}
    assert grown == renewed, grown


def test_first_rows_of_a_longer_draw_are_not_a_fresh_draw(tmp_path, monkeypatch):
    """Fig. 4 at n_syn = k scores the first k rows of a longer draw; Fig. 3a at n_syn = k a fresh draw of k."""
    monkeypatch.setattr(domias, "california", small_california)
    sizes = dict(
        profile="smoke", n_jobs=1, seeds=(0,), n_mem=50, n_ref=300, tvae_epochs=2, attacks=("domias_kde", "mc")
    )
    fig4 = dict(n_syn=300, n_syn_grid=(150,), n_ref_grid=(300,))
    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path / "alone"))
    alone = domias.fig4(**sizes, **fig4)
    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path / "after-fig3a"))
    fresh = domias.fig3a(**sizes, n_mem_grid=(50,), n_syn=150)
    after = domias.fig4(**sizes, **fig4)
    same_table(after, alone)
    prefix = alone[alone.n_syn == 150].set_index("attack").auc
    assert not np.allclose(prefix, fresh.set_index("attack").auc.loc[prefix.index])  # different data, scores
