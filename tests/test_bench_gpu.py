"""The GPU benchmark runs end to end in its tiny mode on a CPU and ends with its JSON line."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.realdata
def test_bench_gpu_tiny_mode_runs_end_to_end():
    pytest.importorskip("torch")
    from vrlib.data import load_california

    try:
        load_california()
    except Exception as exc:  # noqa: BLE001  (no data here: say why and skip)
        pytest.skip(f"California Housing not available: {exc}")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_gpu.py"), "--tiny"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["tiny"] is True and result["ensemble_k"] == 3
    for key in (
        "wgan_gp_300_epochs_wall_min",
        "ensemble_throughput_ratio",
        "ensemble_throughput_ratio_no_graphs",
        "bnaf_fig6_fit_s",
        "bnaf_fig6_fit_s_no_graphs",
        "bnaf_wall_s",
        "attention_s_per_target",
    ):
        assert result[key] > 0, key
    # WGAN-GP: per fit within a stack of 3 (no CUDA graph on a CPU), and one fit alone
    assert result["wgan_gp_ensemble_k"] == 3 and result["wgan_gp_ensemble_cuda_graph"] is False
    assert result["wgan_gp_single_300_epochs_wall_min"] > 0


@pytest.mark.realdata
def test_attention_section_runs_tiny_on_cpu():
    """bench_gpu's attention section (tiny sizes, on the CPU): per-target seconds that add up."""
    pytest.importorskip("torch")
    import sys

    import torch

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_gpu

    try:
        import vrlib

        vrlib.load("adult")
    except Exception as exc:  # noqa: BLE001  (no data here: say why and skip)
        pytest.skip(f"Adult not available: {exc}")
    out = bench_gpu.attention_seconds(torch.device("cpu"), tiny=True)
    assert out["attention_group"] == 3
    pre, train = out["attention_preprocess_s_per_target"], out["attention_train_s_per_target"]
    assert pre > 0 and train > 0
    assert out["attention_s_per_target"] == pytest.approx(pre + train, abs=2e-3)
    assert out["attention_preprocess_numpy_s_per_target"] > 0 and out["attention_train_autograd_speedup"] > 0
    assert out["attention_preprocess_matches_numpy"] is True
