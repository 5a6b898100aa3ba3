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


# --------------------------------------------------------------------------- one machine with 16 cores and a GPU

import gpu_box  # noqa: E402

# Made-up figures for the tests (not measurements): WGAN-GP 1 min per 300 epochs of 1,000 rows at batch 100,
# i.e. 10 steps an epoch, 0.02 s a step.
GPU = {
    "benchmark": "bench_gpu",
    "device": "cuda",
    "gpu": "made up for a test",
    "wgan_gp_300_epochs_wall_min": 1.0,
    "wgan_gp_rows": 1000,
    "wgan_gp_batch_size": 100,
    "bnaf_fig6_fit_s": 10.0,
    "bnaf_fig6_rows": 10_000,
    "attention_s_per_target": 3.0,
}


def unit(kind, variant, size, length, count, batch=0):
    return dict(section="fig6", kind=kind, data="california", variant=variant, size=size, length=length,
                count=count, batch=batch)  # fmt: skip


def measured(kind, fixed, per, variant=0, size=1):
    return dict(kind=kind, data="california", variant=variant, measured_size=size, fixed_cpu_s=fixed,
                per_length_cpu_s=per)  # fmt: skip


BOX = {
    "benchmark": "bench_paper_profile",
    "cores": 16,
    "gpu_visible": False,
    "notebook_stage_minutes": {
        "01": {"fits": 6.0, "features": 12.0, "forest": 3.0},
        "02": {"fits": 6.0, "targets": 160, "attention_cpu_s": 50.0},
        "03": {"fits": 1.0, "features": 2.0, "forest": 0.5},
        "04": {"fits": 30.0, "features": 60.0, "forest": 6.0},
    },
    "notebook05_units": [
        unit("wgan_gp", 500, 1, 1000, 8, batch=100),  # 5 steps an epoch: 5,000 × 0.02 = 100 s each
        unit("tvae", 30, 1, 2000, 8, batch=500),  # one (short) batch an epoch: 2,000 × 0.02 = 40 s each
        unit("flow", 0, 5000, 50, 4),  # 10 s × 5,000 / 10,000 rows × 50 / 50 epochs = 5 s each
        unit("logan_0", 0, 10_000, 300, 16),  # (2 + 0.1 × 300) CPU s each, over 16 cores
        unit("nflow", 500, 1, 300, 8, batch=200),  # not measured on the box: the fallback's (1 + 0.5 × 300)
    ],
    "notebook05_measured": [measured("logan_0", 2.0, 0.1, size=10_000), measured("flow", 4.0, 2.0, size=10_000)],
}
FALLBACK = {"cpus": 2, "notebook05_measured": [measured("nflow", 1.0, 0.5, variant=500)]}
RECORDED = {
    "06": {"hours": 8.0, "lower_bound": False, "source": "run 06"},
    "07": {"hours": 3.4, "lower_bound": True, "source": "two sittings"},
    "08": None,
}
GANS07 = [
    dict(kind="wgan_gp", fits=6, rows=1000, epochs=300, batch=100, cpu_hours=1.5),  # 6 × 300 × 10 × 0.02 = 360 s
    dict(kind="tvae", fits=3, rows=1050, epochs=300, batch=500, cpu_hours=0.1),  # 3 × 300 × 3 × 0.02 = 54 s
]


def test_steps_per_epoch_as_the_training_loops_count():
    for rows in (1, 30, 99, 100, 101, 499, 500, 1050, 31_655):
        for batch in (50, 100, 500):
            tvae = len(range(0, rows, batch))  # every batch, the last short (neural.py)
            wgan = max(rows // min(batch, rows), 1)  # full batches only (wgan.py)
            assert gpu_box.steps_per_epoch("tvae", rows, batch) == tvae
            assert gpu_box.steps_per_epoch("wgan_gp", rows, batch) == wgan
    assert gpu_box.steps_per_epoch("ctgan", 31_655, 500) == 63
    with pytest.raises(ValueError, match="at least 1"):
        gpu_box.steps_per_epoch("gan", 0, 100)


def test_gpu_box_adds_up_by_hand():
    out = gpu_box.assemble_gpu_box(BOX, GPU, RECORDED, 16, FALLBACK, GANS07)
    nbs = out["notebooks"]
    # notebook 06's cost model, measured on the box, wins over its recorded run
    with06 = gpu_box.assemble_gpu_box({**BOX, "notebook06_paper_cpu_hours": 4.0}, GPU, RECORDED, 16, FALLBACK, GANS07)
    assert with06["notebooks"]["06"]["hours"] == pytest.approx(0.25)
    assert with06["notebooks"]["06"]["stages"][0]["how"] == "box cpu"
    assert with06["hours"] == pytest.approx(out["hours"] - 1.0 + 0.25)
    expected = {
        "01": 21 / 60,
        "02": 6 / 60 + 160 * 3.0 / 3600,
        "03": 3.5 / 60,
        "04": 96 / 60,
        "05": (8 * 100 + 8 * 40 + 4 * 5 + 16 * 32 / 16 + 8 * 151 / 16) / 3600,
        "06": 8.0 * 2 / 16,
        "07": (360 + 54) / 3600 + (3.4 * 2 - 1.6) / 16,
    }
    assert {nb: r["hours"] for nb, r in nbs.items()} == pytest.approx({nb: round(h, 3) for nb, h in expected.items()})
    assert out["hours"] == pytest.approx(sum(expected.values()))
    assert out["missing"] == ["08: no stage costs from the box and no recorded paper run"]
    assert out["gpu_notes"] == []
    assert sum(out["hours_by_how"].values()) == pytest.approx(out["hours"], abs=0.003)  # each rounded to 0.001
    assert sum(out["hours_by_bound"].values()) == pytest.approx(out["hours"], abs=0.003)
    recorded = expected["06"] + (3.4 * 2 - 1.6) / 16
    assert out["hours_by_how"]["recorded, scaled"] == pytest.approx(recorded, abs=5e-4)
    assert out["hours_by_bound"]["upper bound"] == pytest.approx(4 * 5 / 3600, abs=5e-4)  # the flows: every epoch run
    how = {(nb, s["stage"]): s["how"] for nb, r in nbs.items() for s in r["stages"]}
    assert how["02", "attention"] == "gpu" and how["02", "fits"] == "box cpu"
    assert how["05", "wgan_gp (8 units)"] == "gpu" and how["05", "flow (4 units)"] == "gpu"
    assert how["05", "logan_0 (16 units)"] == "box cpu" and how["05", "nflow (8 units)"] == "fallback cpu"
    assert "the 2-CPU machine of the --cpu-fallback JSON" in nbs["05"]["stages"][-1]["from"]
    assert how["06", "whole notebook"] == "recorded, scaled" and how["07", "the rest"] == "recorded, scaled"
    bound = {(nb, s["stage"]): s["bound"] for nb, r in nbs.items() for s in r["stages"]}
    assert bound["06", "whole notebook"] == "lower" and bound["07", "the rest"] == "none"
    assert bound["01", "features"] is None and bound["01", "fits"] == "lower"
    assert bound["05", "flow (4 units)"] == "upper" and bound["05", "tvae (8 units)"] == "none"
    # WGAN-GP at the size bench_gpu measures is its measurement; at another batch, a scaled figure
    assert bound["07", "wgan_gp fits (6)"] is None and bound["05", "wgan_gp (8 units)"] == "none"


def test_gpu_box_rows_scaling_differs_from_steps():
    # rows × epochs relative to WGAN-GP's 1,000 rows × 300 epochs = 60 s
    out = gpu_box.assemble_gpu_box(BOX, GPU, RECORDED, 16, FALLBACK, GANS07, scaling="rows")
    stages = {s["stage"]: s["hours"] for s in out["notebooks"]["05"]["stages"]}
    assert stages["wgan_gp (8 units)"] == pytest.approx(round(8 * 60 * 500 * 1000 / (1000 * 300) / 3600, 4))
    assert stages["tvae (8 units)"] == pytest.approx(round(8 * 60 * 30 * 2000 / (1000 * 300) / 3600, 4))
    with pytest.raises(ValueError, match="scaling"):
        gpu_box.assemble_gpu_box(BOX, GPU, RECORDED, 16, FALLBACK, GANS07, scaling="epochs")


def test_gpu_box_missing_keys_fall_back_and_are_named():
    absent = ("attention_s_per_target", "bnaf_fig6_fit_s", "wgan_gp_rows", "wgan_gp_batch_size")
    gpu = {k: v for k, v in GPU.items() if k not in absent}
    box = {**BOX, "notebook05_measured": [measured("logan_0", 2.0, 0.1, size=10_000)]}  # no flow on the box either
    out = gpu_box.assemble_gpu_box(box, gpu, RECORDED, 16, None, GANS07)
    notes = " | ".join(out["gpu_notes"])
    assert "attention_s_per_target absent" in notes and "bnaf_fig6_fit_s absent" in notes
    assert "wgan_gp_rows absent: taken as 31,655" in notes and "wgan_gp_batch_size absent: taken as 500" in notes
    st02 = {s["stage"]: s for s in out["notebooks"]["02"]["stages"]}
    assert st02["attention"]["how"] == "box cpu" and st02["attention"]["hours"] == pytest.approx(
        round(160 * 50 / 3600, 4)
    )
    # the flow units: neither a GPU figure nor a CPU one; nflow: no fallback file
    assert any(m.startswith("05 flow on california") for m in out["missing"])
    assert any(m.startswith("05 nflow on california") for m in out["missing"])
    # WGAN-GP's step from the default size: 60 s / (300 × 63 steps)
    step = 60 / (300 * 63)
    st05 = {s["stage"]: s["hours"] for s in out["notebooks"]["05"]["stages"]}
    assert st05["wgan_gp (8 units)"] == pytest.approx(round(8 * 5000 * step / 3600, 4))
    nobnafrows = {k: v for k, v in GPU.items() if k != "bnaf_fig6_rows"}
    assert gpu_box.read_gpu(nobnafrows)[1] == ["bnaf_fig6_rows absent: taken as 10,000 (bench_gpu.py's Fig. 6 flow)"]
    # the attention's split parts stand in for the total when only they are given
    split = {**gpu, "attention_preprocess_s_per_target": 1.0, "attention_train_s_per_target": 0.5}
    st02 = {
        s["stage"]: s
        for s in gpu_box.assemble_gpu_box(box, split, RECORDED, 16, None, GANS07)["notebooks"]["02"]["stages"]
    }
    assert st02["attention"]["how"] == "gpu" and st02["attention"]["hours"] == pytest.approx(round(160 * 1.5 / 3600, 4))
    # no GAN figure: notebook 07 is its recorded run, scaled
    nogan = {k: v for k, v in gpu.items() if k != "wgan_gp_300_epochs_wall_min"}
    out = gpu_box.assemble_gpu_box(box, nogan, RECORDED, 16, None, GANS07)
    assert out["notebooks"]["07"]["hours"] == pytest.approx(round(3.4 * 2 / 16, 3))
    assert "wgan_gp_300_epochs_wall_min absent" in out["gpu_notes"][0]


def test_gpu_box_refuses_meaningless_inputs():
    with pytest.raises(ValueError, match="tiny"):
        gpu_box.assemble_gpu_box(BOX, {**GPU, "tiny": True}, RECORDED, 16, None, GANS07)
    with pytest.raises(ValueError, match="cpu-only"):
        gpu_box.assemble_gpu_box({**BOX, "gpu_visible": True}, GPU, RECORDED, 16, None, GANS07)
    with pytest.raises(ValueError, match="cores"):
        gpu_box.assemble_gpu_box(BOX, GPU, RECORDED, 0, None, GANS07)
    # no box stages at all: every notebook its recorded run (08 none: named)
    out = gpu_box.assemble_gpu_box({"gpu_visible": False}, GPU, {**RECORDED, "01": RECORDED["06"]}, 16, None, GANS07)
    assert out["notebooks"]["01"]["stages"][0]["how"] == "recorded, scaled"
    assert {m[:2] for m in out["missing"]} == {"02", "03", "04", "05", "08"}


def test_gpu_box_combines_saved_files(tmp_path, capsys):
    gpu = tmp_path / "gpu.txt"
    gpu.write_text("WGAN-GP ... printout\n" + json.dumps(GPU) + "\n\n")
    first = {k: v for k, v in BOX.items() if not k.startswith("notebook05")}
    second = {k: v for k, v in BOX.items() if k != "notebook_stage_minutes"}
    paths = []
    for i, part in enumerate((first, second)):
        paths.append(tmp_path / f"box{i}.json")
        paths[-1].write_text(json.dumps(part))
    merged = gpu_box.merge_box([gpu_box.last_json(p) for p in paths])
    assert merged["notebook_stage_minutes"] == BOX["notebook_stage_minutes"]
    assert merged["notebook05_units"] == BOX["notebook05_units"]
    out = gpu_box.combine(gpu, paths)  # the recorded runs and notebook 07's GANs of the repository
    assert out["paper_profile_hours_gpu_box"] == pytest.approx(out["paper_profile_gpu_box"]["hours"], abs=0.005)
    assert "paper profile on one machine with 16 cores" in capsys.readouterr().out
    with pytest.raises(ValueError, match="not a bench_paper_profile"):
        gpu_box.merge_box([GPU])
    (tmp_path / "bad.json").write_text("no json here\n")
    with pytest.raises(ValueError, match="not one JSON"):
        gpu_box.last_json(tmp_path / "bad.json")


def test_notebook05_batches_and_absent_packages():
    from vrlib.experiments import domias  # noqa: F401  (registers the DOMIAS profiles)

    settings = bench.profile_settings("domias", "paper")
    assert bench.unit_batch("wgan_gp", settings) == settings["gan_batch_size"]
    assert bench.unit_batch("tvae", settings) == 500  # TVAE's default: Fig. 6 gives none
    assert bench.absent_packages(("ctgan",)) == {"tvae": "ctgan", "ctgan": "ctgan"} | bench.absent_packages()


def test_notebook08_from_its_quick_run_and_a_tvae_release():
    tvae08 = dict(rows=1000, epochs=300, batch=500, releases_quick=4)
    recorded = {**RECORDED, "08 quick": {"hours": 0.8, "lower_bound": False, "source": "quick 08"}}
    out = gpu_box.assemble_gpu_box(BOX, GPU, recorded, 16, FALLBACK, GANS07, tvae08=tvae08)
    stages = {s["stage"]: s for s in out["notebooks"]["08"]["stages"]}
    quick = 0.8 * 2 / 16  # the 4 releases of the quick run, scaled
    fit = 300 * 2 * 0.02  # 2 steps an epoch (1,000 rows at batch 500, the last batch short)
    assert stages["the quick profile's 4 releases and their audits"]["hours"] == pytest.approx(quick)
    assert stages["the TVAE release's fit"]["hours"] == pytest.approx(round(fit / 3600, 4))
    assert stages["the TVAE release's audit"]["hours"] == pytest.approx(quick / 4)
    assert out["notebooks"]["08"]["hours"] == pytest.approx(round(quick + fit / 3600 + quick / 4, 3))
    assert out["missing"] == []
    # a paper run of 08, once recorded, is taken instead
    paper08 = {**recorded, "08": {"hours": 1.6, "lower_bound": False, "source": "paper 08"}}
    out = gpu_box.assemble_gpu_box(BOX, GPU, paper08, 16, FALLBACK, GANS07, tvae08=tvae08)
    assert out["notebooks"]["08"]["hours"] == pytest.approx(0.2)
    # no GPU figure for the TVAE fit: the release is named as missing
    nogan = {k: v for k, v in GPU.items() if k != "wgan_gp_300_epochs_wall_min"}
    out = gpu_box.assemble_gpu_box(BOX, nogan, recorded, 16, FALLBACK, GANS07, tvae08=tvae08)
    assert out["missing"][-1] == "08: the TVAE release (paper only): no GPU figure for its fit"
    # the repository's notebook 08: the quick profile's sizes and releases plus TVAE's
    assert gpu_box.notebook08_tvae() == dict(rows=30_000, epochs=300, batch=500, releases_quick=4)


def test_recorded_quick_run_read_from_its_row_only(tmp_path):
    run_times, manifest = write(
        tmp_path, ['06,quick,"9,000 s",a,"quick"', '06,paper,"5,400 s",b,"paper"'], {"a.png": entry("08_audit", 600.0)}
    )
    assert bench.recorded_paper_run("06", run_times, manifest, profile="quick")["hours"] == pytest.approx(2.5)
    assert bench.recorded_paper_run("08", run_times, manifest)["hours"] == pytest.approx(600 / 3600)
    assert bench.recorded_paper_run("08", run_times, manifest, profile="quick") is None  # not the paper manifest


def test_main_adds_the_gpu_box_profile_and_writes_its_json(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)  # --cpu-only given without hiding the GPU: refused
    gpu = tmp_path / "gpu.json"
    gpu.write_text(json.dumps(GPU))
    out = tmp_path / "box.json"
    bench.main(["--only", "profile", "--cores", "16", "--gpu-costs", str(gpu), "--out", str(out)])
    printed = capsys.readouterr().out.strip().splitlines()
    result = json.loads(out.read_text())
    assert json.loads(printed[-1]) == result
    # profile only: every notebook from its recorded runs (07 with its GAN fits on the GPU)
    assert result["paper_profile_hours_gpu_box"] == pytest.approx(result["paper_profile_gpu_box"]["hours"], abs=0.005)
    assert not result["gpu_visible"] and "paper_profile_hours_16_cores" in result
    # a tiny GPU JSON: no GPU-box profile, the rest of the JSON kept
    gpu.write_text(json.dumps({**GPU, "tiny": True}))
    bench.main(["--only", "profile", "--cores", "16", "--gpu-costs", str(gpu), "--out", str(out)])
    result = json.loads(out.read_text())
    assert "tiny" in result["paper_profile_gpu_box_error"] and "paper_profile_hours_16_cores" in result
    for bad in (["--without", "papermill"], ["--cpu-fallback", str(out)], ["--cpu-only"]):
        with pytest.raises(SystemExit):
            bench.main(["--only", "profile", *bad])
