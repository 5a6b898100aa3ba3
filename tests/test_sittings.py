"""Sittings (vrlib.sittings): parts saved as they finish, resumed, checked, redone when stale, stopped in time."""

import json

import numpy as np
import pandas as pd
import pytest

from vrlib.errors import VrlibError
from vrlib.sittings import Part, PartStore, run_sitting


def _parts(version="v1", n=5):
    return [Part(f"p{i}", f"key-{version}-{i}", {"i": i}, group="slow" if i % 2 else "fast") for i in range(n)]


class _Maker:
    """Makes a part's rows from its index alone (as a seeded experiment would); counts the calls; advances a clock."""

    def __init__(self, clock=None, seconds=None):
        self.calls, self.clock, self.seconds = [], clock, seconds or {}

    def __call__(self, batch):
        self.calls.append([p.name for p in batch])
        out = {}
        for p in batch:
            rng = np.random.default_rng(p.settings["i"])
            out[p.name] = pd.DataFrame({"i": p.settings["i"], "x": rng.normal(size=3), "label": ["a", "b", "c"]})
            if self.clock is not None:
                self.clock.t += self.seconds.get(p.group, 1.0)
        return out


class _Clock:
    t = 0.0

    def __call__(self):
        return self.t


def _table(store, parts):
    return pd.concat([store.read(p) for p in parts], ignore_index=True)


def test_interrupted_then_resumed_equals_one_uninterrupted_run(tmp_path):
    parts = _parts()
    whole = PartStore(tmp_path / "whole")
    r = run_sitting(parts, whole, _Maker(), out=lambda s: None)
    assert r["done"] == 5 and r["left"] == []
    split = PartStore(tmp_path / "split")
    first = run_sitting(parts, split, _Maker(), max_parts=2, out=lambda s: None)
    assert first["made"] == ["p0", "p1"] and first["left"] == ["p2", "p3", "p4"]
    maker = _Maker()
    second = run_sitting(parts, split, maker, out=lambda s: None)
    assert second["made"] == ["p2", "p3", "p4"]  # the saved ones are not made again
    assert [n for call in maker.calls for n in call] == ["p2", "p3", "p4"]
    pd.testing.assert_frame_equal(_table(split, parts), _table(whole, parts))
    # the rows read back are the rows made, to the last bit
    made = _Maker()([parts[1]])["p1"]
    pd.testing.assert_frame_equal(split.read(parts[1]), made)


def test_tampered_rows_are_made_again(tmp_path):
    parts = _parts()
    store = PartStore(tmp_path)
    run_sitting(parts, store, _Maker(), out=lambda s: None)
    csv = tmp_path / "p3.csv"
    before = csv.read_bytes()
    csv.write_text(csv.read_text().replace("a", "z", 1))
    assert store.state(parts[3]) == "its rows were changed after it was saved"
    with pytest.raises(VrlibError, match="changed after it was saved"):
        store.read(parts[3])
    lines = []
    r = run_sitting(parts, store, _Maker(), out=lines.append)
    assert r["made"] == ["p3"] and r["redone"] == ["p3"]
    assert any("p3: saved but not used" in line for line in lines)
    assert csv.read_bytes() == before


def test_parts_made_by_other_code_are_made_again(tmp_path):
    store = PartStore(tmp_path)
    run_sitting(_parts("v1"), store, _Maker(), out=lambda s: None)
    newer = _parts("v2")  # the same parts, keyed by newer code
    assert {store.state(p) for p in newer} == {"made by other code or settings"}
    maker = _Maker()
    r = run_sitting(newer, store, maker, out=lambda s: None)
    assert r["made"] == [p.name for p in newer]
    assert json.loads((tmp_path / "p0.json").read_text())["key"] == "key-v2-0"
    # and a record lost after its rows were written: made again
    (tmp_path / "p4.json").unlink()
    assert store.state(newer[4]) == "its record is missing or unreadable"
    assert run_sitting(newer, store, _Maker(), out=lambda s: None)["made"] == ["p4"]


def test_the_budget_stops_before_a_part_that_would_not_fit(tmp_path):
    clock = _Clock()
    parts = _parts(n=6)  # fast, slow, fast, slow, ...
    store = PartStore(tmp_path)
    maker = _Maker(clock, {"fast": 10.0, "slow": 40.0})
    r = run_sitting(parts, store, maker, budget_s=100.0, clock=clock, out=lambda s: None)
    # p0 (10 s) and p1 (40 s) are measured alone; p2 expects 1.25 × 10 s: fits in the 50 s left;
    # p3 expects 1.25 × 40 = 50 s against the 40 s left: the sitting stops there
    assert r["made"] == ["p0", "p1", "p2"]
    assert r["left"] == ["p3", "p4", "p5"]
    assert clock.t == 60.0 and clock.t <= 100.0
    assert "would need about" in r["stopped"]
    # the next sitting goes on from p3 with the saved times
    r2 = run_sitting(parts, store, _Maker(clock, {"fast": 10.0, "slow": 40.0}), budget_s=200.0, clock=clock,
                     out=lambda s: None)  # fmt: skip
    assert r2["made"] == ["p3", "p4", "p5"] and r2["left"] == []


def test_parts_of_measured_groups_run_side_by_side(tmp_path):
    clock = _Clock()
    parts = _parts(n=6)
    maker = _Maker(clock)
    run_sitting(parts, PartStore(tmp_path), maker, width=3, clock=clock, out=lambda s: None)
    # each group's first part alone (to be measured), then up to 3 at once
    assert maker.calls == [["p0"], ["p1"], ["p2", "p3", "p4"], ["p5"]]
    record = json.loads((tmp_path / "p3.json").read_text())
    assert record["batch"]["parts"] == ["p2", "p3", "p4"] and record["cost_s"] == pytest.approx(3.0)


def test_bad_parts_are_refused(tmp_path):
    with pytest.raises(VrlibError, match="letters, digits"):
        Part("../x", "k", {})
    twice = [Part("a", "k1", {"i": 0}), Part("a", "k2", {"i": 1})]
    with pytest.raises(VrlibError, match="share a name"):
        run_sitting(twice, PartStore(tmp_path), _Maker(), out=lambda s: None)
    with pytest.raises(VrlibError, match="gave no rows"):
        run_sitting(_parts(), PartStore(tmp_path), lambda batch: {}, out=lambda s: None)
