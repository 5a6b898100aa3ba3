"""Fig. 6 from the runs whose parts are all saved (vrlib.experiments.fig6_runs): never a seed with a part missing."""

import json

import pandas as pd
import pytest

from vrlib import sittings
from vrlib.errors import VrlibError
from vrlib.experiments import fig6_runs

POINTS = ("noise", "tvae", "baynet")


def _parts(seeds=(0, 1, 2, 3), points=POINTS):
    return [sittings.Part(f"s{s}-{g}", f"key-{s}-{g}", {"seed": s, "label": g}, group=g) for s in seeds for g in points]


def _save(store, part, auc=0.5):
    rows = pd.DataFrame({"seed": [part.settings["seed"]], "generator": [part.settings["label"]], "auc": [auc]})
    store.write(part, rows, {"commit": "test"})


def test_only_seeds_with_every_part_saved_and_current_are_taken(tmp_path):
    parts = _parts()
    store = sittings.PartStore(tmp_path)
    for p in parts:
        if p.name not in ("s1-tvae", "s3-noise", "s3-tvae", "s3-baynet"):  # seed 1 lacks one part, seed 3 all
            _save(store, p)
    # seed 2: one part saved by other code (another key) is not current
    stale = sittings.Part("s2-baynet", "old-key", {"seed": 2, "label": "baynet"}, group="baynet")
    _save(store, stale)
    runs = fig6_runs.select(parts, store)
    assert runs.seeds == (0,) and runs.planned == (0, 1, 2, 3) and runs.pending == (1, 2, 3)
    assert runs.saved == {0: (3, 3), 1: (2, 3), 2: (2, 3), 3: (0, 3)}
    assert not runs.complete
    # rows of seed 0 alone, in the parts' order
    assert list(runs.rows.seed) == [0, 0, 0] and list(runs.rows.generator) == list(POINTS)
    assert runs.describe() == (
        "1 of 4 runs (seed 0); pending: seeds 1–3 (seed 1: 2 of 3 parts saved; seed 2: 2 of 3 parts saved; "
        "seed 3: none)"
    )


def test_all_seeds_saved_gives_every_row_like_assemble(tmp_path):
    parts = _parts(seeds=(0, 1))
    store = sittings.PartStore(tmp_path)
    for i, p in enumerate(parts):
        _save(store, p, auc=0.5 + i / 100)
    runs = fig6_runs.select(parts, store)
    assert runs.complete and runs.seeds == (0, 1) and runs.pending == ()
    # what domias_parts.assemble does once every part is done: every part's rows, in order
    expected = pd.concat([store.read(p) for p in parts], ignore_index=True)
    pd.testing.assert_frame_equal(runs.rows, expected)
    assert runs.describe() == "2 of 2 runs (seeds 0, 1), every part saved and current"


def test_no_complete_seed_gives_no_rows(tmp_path):
    parts = _parts(seeds=(0, 1))
    store = sittings.PartStore(tmp_path)
    _save(store, parts[0])
    runs = fig6_runs.select(parts, store)
    assert runs.rows is None and runs.seeds == () and runs.describe().startswith("0 of 2 runs; pending: seeds 0, 1")


def test_a_tampered_part_leaves_its_seed_out(tmp_path):
    parts = _parts(seeds=(0, 1))
    store = sittings.PartStore(tmp_path)
    for p in parts:
        _save(store, p)
    (tmp_path / "s1-noise.csv").write_text("seed,generator,auc\n1,noise,0.9\n")
    runs = fig6_runs.select(parts, store)
    assert runs.seeds == (0,) and set(runs.rows.seed) == {0}


def test_rows_of_another_seed_than_the_parts_say_are_refused(tmp_path):
    parts = _parts(seeds=(0, 1))
    store = sittings.PartStore(tmp_path)
    for p in parts:
        _save(store, p)
    # a part of seed 0 whose rows (saved with a matching record) hold seed 1
    bad = parts[0]
    store.write(bad, pd.DataFrame({"seed": [1], "generator": ["noise"], "auc": [0.5]}), {"commit": "test"})
    record = json.loads((tmp_path / f"{bad.name}.json").read_text())
    assert record["key"] == bad.key
    with pytest.raises(VrlibError, match="do not match its settings"):
        fig6_runs.select(parts, store)


def test_bad_parts_are_refused(tmp_path):
    store = sittings.PartStore(tmp_path)
    with pytest.raises(VrlibError, match="no parts"):
        fig6_runs.select([], store)
    with pytest.raises(VrlibError, match="'seed' setting"):
        fig6_runs.select([sittings.Part("a", "k", {"label": "x"})], store)


def _table(n_seeds, planned):
    t = pd.DataFrame({"generator": ["TVAE", "CTGAN"], "auc_mean": [0.55, 0.5], "n_seeds": n_seeds})
    if planned is not None:
        t["n_seeds_planned"] = planned
    return t


def test_the_title_says_how_many_runs_the_table_holds():
    assert fig6_runs.run_count(_table([4, 4], 8)) == (4, 4, 8)
    assert fig6_runs.title(_table([4, 4], 8)) == "Fig. 6: privacy vs quality\n4 of 8 runs, 4 pending (interim)"
    assert fig6_runs.title(_table([3, 4], 8)).endswith("3–4 of 8 runs, 5 pending (interim)")
    assert fig6_runs.title(_table([8, 8], 8)) == "Fig. 6: privacy vs quality"
    assert fig6_runs.title(_table([8, 8], None)) == "Fig. 6: privacy vs quality"  # a table of before the column
    assert fig6_runs.runs_phrase(4, 4, 8, "the paper's ") == "4 of the paper's 8 runs"
    assert fig6_runs.runs_phrase(1, 1, None) == "1 run"
    with pytest.raises(VrlibError, match="n_seeds"):
        fig6_runs.run_count(pd.DataFrame({"auc_mean": [0.5]}))


@pytest.mark.realdata
def test_complete_runs_reads_the_profiles_parts(tmp_path):
    """A tiny smoke sitting over two seeds, stopped after seed 0's parts and one of seed 1's: seed 0 alone."""
    from conftest import require_real

    from vrlib.experiments import domias_parts

    require_real("cal_housing.data")
    tiny = dict(fig6_generators=("noise", "baynet"), noise_scales=(0.7, 3.9), seeds=(0, 1))
    per_seed = len(domias_parts.fig6_parts("smoke", **tiny)) // 2
    domias_parts.run_sitting("smoke", figures_dir=tmp_path, n_jobs=1, cache=False, out=lambda _: None,
                             max_parts=per_seed + 1, **tiny)  # fmt: skip
    runs = fig6_runs.complete_runs("smoke", tmp_path, **tiny)
    assert runs.seeds == (0,) and runs.saved[1] == (1, per_seed)
    assert set(runs.rows.seed) == {0} and domias_parts.assemble("smoke", tmp_path, **tiny) is None
    domias_parts.run_sitting("smoke", figures_dir=tmp_path, n_jobs=1, cache=False, out=lambda _: None, **tiny)
    runs = fig6_runs.complete_runs("smoke", tmp_path, **tiny)
    assert runs.complete
    pd.testing.assert_frame_equal(runs.rows, domias_parts.assemble("smoke", tmp_path, **tiny))
