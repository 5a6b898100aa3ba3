"""The paper-profile assembly of ``benchmarks/bench_paper_profile.py``: recorded runs read and added up by hand."""

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_paper_profile as bench  # noqa: E402

HEADER = "notebook,profile,time,commit,how\n"


def write(tmp_path, rows, manifest=None):
    run_times = tmp_path / "run_times.csv"
    run_times.write_text(HEADER + "".join(r + "\n" for r in rows))
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest or {}))
    return run_times, path


def entry(notebook, elapsed_s, commit="abc1234"):
    return {"notebook": notebook, "elapsed_s": elapsed_s, "commit": commit, "machine": {"cpu_cores": 2}, "written": "t"}


def test_recorded_runs_parse_each_form(tmp_path):
    run_times, manifest = write(
        tmp_path,
        [
            '06,quick,"9,000 s",a,"not the paper profile"',
            '06,paper,"5,400 s",b,"one sitting"',
            "03,paper,90 min,c,shared",
            '04,paper,about 3.5 h,d,"two sittings"',
            '07,paper,three sittings,e,"the second 3,600 s, the third 1,800 s; one fit of the first 1,216-5,017 s"',
            '02,paper,four sittings,f,"the first 1,000 s, the second 800 s, the third 200 s, the last 1,600 s"',
            "05,paper,not run in one sitting,,sections apart",
        ],
        {"a.png": entry("05_domias", 720.0), "b.png": entry("05_domias", 1800.0), "c.png": entry("08_audit", None)},
    )
    read = {nb: bench.recorded_paper_run(nb, run_times, manifest) for nb in bench.NOTEBOOKS}
    assert read["06"]["hours"] == pytest.approx(1.5) and not read["06"]["lower_bound"]  # the paper row, not quick
    assert read["03"]["hours"] == pytest.approx(1.5)
    assert read["04"]["hours"] == pytest.approx(3.5) and not read["04"]["lower_bound"]
    # two of three sittings timed: their sum, a lower bound (the range of the first is not a sitting's time)
    assert read["07"]["hours"] == pytest.approx((3600 + 1800) / 3600) and read["07"]["lower_bound"]
    assert read["02"]["hours"] == pytest.approx(1.0) and not read["02"]["lower_bound"]  # all four timed
    # no time in the csv: the manifest's longest sitting, a lower bound
    assert read["05"]["hours"] == pytest.approx(0.5) and read["05"]["lower_bound"]
    assert "not run in one sitting" in read["05"]["source"]
    assert read["01"] is None and read["08"] is None  # no row; 08's manifest entry has no wall time


def test_assemble_adds_up_by_hand_and_labels_each_notebook():
    recorded = {
        "01": {"hours": 9.0, "lower_bound": False, "source": "run 01"},  # predicted below: not used
        "02": {"hours": 2.5, "lower_bound": False, "source": "run 02"},
        "05": {"hours": 1.0, "lower_bound": True, "source": "section run"},  # the cost model wins
        "06": {"hours": 8.0, "lower_bound": False, "source": "run 06"},
        "07": {"hours": 3.0, "lower_bound": True, "source": "two sittings"},
    }
    out = bench.assemble_profile({"01": 60.0, "03": 15.0, "04": 120.0}, 30.0, recorded, cores=2)
    nbs = out["notebooks"]
    assert {nb: r["hours"] for nb, r in nbs.items()} == {
        "01": 1.0,
        "02": 2.5,
        "03": 0.25,
        "04": 2.0,
        "05": 15.0,  # 30 CPU h / 2 cores
        "06": 8.0,
        "07": 3.0,
    }
    assert out["hours"] == pytest.approx(1 + 2.5 + 0.25 + 2 + 15 + 8 + 3)
    assert [nbs[nb]["how"] for nb in ("01", "02", "05", "07")] == [
        "predicted",
        "measured",
        "predicted, lower bound",
        "measured, lower bound",
    ]
    assert out["missing"] == ["08"] and out["lower_bound"]


def test_assemble_without_cost_model_or_bounds():
    recorded = {nb: {"hours": 1.0, "lower_bound": False, "source": nb} for nb in bench.NOTEBOOKS}
    out = bench.assemble_profile({}, None, recorded, cores=4)
    assert out["hours"] == pytest.approx(8.0)
    assert not out["lower_bound"] and out["missing"] == []
    assert {r["how"] for r in out["notebooks"].values()} == {"measured"}
    # notebook 05's CPU hours divide by the cores asked for
    assert bench.assemble_profile({}, 12.0, {}, cores=4)["notebooks"]["05"]["hours"] == pytest.approx(3.0)
    with pytest.raises(ValueError, match="cores"):
        bench.assemble_profile({}, 1.0, {}, cores=0)
