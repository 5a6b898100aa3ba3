"""DOMIAS Fig. 6 in sittings (vrlib.experiments.domias_parts) on California at toy sizes.

The sittings here run the smoke profile cut down to the cheap generators (additive noise at
three levels, BayNet), without the cache, into a temporary figures folder.
"""

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from vrlib.experiments import domias, domias_parts, domias_scoring

TINY = dict(fig6_generators=("noise", "baynet"), noise_scales=(0.7, 1.9, 3.9))
# a quick-profile run as small as the smoke one above
TINY_QUICK = dict(
    TINY, seeds=(0,), n_mem=200, n_ref=1000, n_syn=1000, n_holdout=1000, fig6_attacks=("domias_kde", "eq1_kde")
)


@pytest.fixture
def california():
    from conftest import require_real

    require_real("cal_housing.data")


def _quiet(line):
    pass


def _sit(tmp_path, profile="smoke", overrides=TINY, **kw):
    return domias_parts.run_sitting(profile, figures_dir=tmp_path, n_jobs=1, cache=False, out=_quiet, **kw, **overrides)


def _no_times(df):
    return df.drop(columns="seconds")


def test_the_parts_are_fig6_in_a_fixed_order():
    parts = domias_parts.fig6_parts("paper")
    configs = domias.fig6_configs(domias_parts._settings("paper", {}))
    assert len(parts) == 8 * len(configs) == 8 * 29  # 8 seeds × (7 generators + 3 PrivBayes ε + 7 λ + BayNet + 12 σ²)
    assert [p.settings["seed"] for p in parts[: len(configs)]] == [0] * len(configs)  # seed by seed
    assert [p.settings["label"] for p in parts[: len(configs)]] == [c[0] for c in configs]
    assert len({p.name for p in parts}) == len({p.key for p in parts}) == len(parts)
    assert "domias_flow" in parts[0].settings["attacks"] and parts[0].settings["flow"]["epochs"] == 50
    assert [p.key for p in parts] == [p.key for p in domias_parts.fig6_parts("paper")]  # the same code: the same keys


@pytest.mark.realdata
def test_interrupted_sitting_resumed_gives_the_uninterrupted_table(tmp_path, california):
    whole = _sit(tmp_path / "a")
    assert whole["done"] == whole["total"] == 4 and whole["left"] == []
    first = _sit(tmp_path / "b", max_parts=1)
    assert first["made"] == ["s0-noise_var0.7"] and len(first["left"]) == 3
    assert domias_parts.assemble("smoke", tmp_path / "b", **TINY) is None
    assert domias_parts.status("smoke", tmp_path / "b", **TINY)["done"] == 1
    second = _sit(tmp_path / "b")
    assert second["made"] == first["left"]
    a = domias_parts.assemble("smoke", tmp_path / "a", **TINY)
    b = domias_parts.assemble("smoke", tmp_path / "b", **TINY)
    pd.testing.assert_frame_equal(_no_times(a), _no_times(b))
    # and both are what domias.fig6 gives in one call
    direct = domias.fig6("smoke", cache=False, n_jobs=1, **TINY)
    pd.testing.assert_frame_equal(_no_times(a), _no_times(direct), check_dtype=False)
    record = json.loads(next((tmp_path / "b" / "smoke" / "parts" / "domias_fig6").glob("s0-BayNet.json")).read_text())
    assert record["settings"]["generator"] == "baynet" and record["commit"] and record["cost_s"] >= 0


@pytest.mark.realdata
def test_a_tampered_or_older_part_is_made_again(tmp_path, california):
    _sit(tmp_path)
    folder = domias_parts.parts_folder("smoke", tmp_path)
    before = domias_parts.assemble("smoke", tmp_path, **TINY)
    csv = folder / "s0-noise_var1.9.csv"
    rows = pd.read_csv(csv)
    rows["auc"] = 0.99  # a better-looking result, edited in
    rows.to_csv(csv, index=False)
    record_path = folder / "s0-BayNet.json"
    record = json.loads(record_path.read_text())
    record["key"] = "0" * 64  # as saved by older code
    record_path.write_text(json.dumps(record))
    assert domias_parts.assemble("smoke", tmp_path, **TINY) is None
    assert domias_parts.status("smoke", tmp_path, **TINY)["left"] == ["s0-noise_var1.9", "s0-BayNet"]
    again = _sit(tmp_path)
    assert again["made"] == again["redone"] == ["s0-noise_var1.9", "s0-BayNet"]
    pd.testing.assert_frame_equal(_no_times(domias_parts.assemble("smoke", tmp_path, **TINY)), _no_times(before))


def test_the_key_follows_the_code_and_the_settings(monkeypatch):
    base = [p.key for p in domias_parts.fig6_parts("smoke", **TINY)]
    assert [p.key for p in domias_parts.fig6_parts("smoke", **{**TINY, "n_holdout": 900})] != base
    # another function among those that make a Fig. 6 point: every key changes
    monkeypatch.setattr(domias_parts, "_FIG6_CODE", domias_parts._FIG6_CODE + (domias.fig3a,))
    changed = [p.key for p in domias_parts.fig6_parts("smoke", **TINY)]
    assert all(a != b for a, b in zip(base, changed))


@pytest.mark.realdata
def test_profiles_never_overwrite_each_other(tmp_path, california):
    _sit(tmp_path, "smoke")
    smoke = domias_parts.parts_folder("smoke", tmp_path)
    saved = {p.name: p.read_bytes() for p in smoke.iterdir()}
    _sit(tmp_path, "quick", TINY_QUICK)
    quick = domias_parts.parts_folder("quick", tmp_path)
    assert smoke != quick and smoke.parent.parent.name == "smoke" and quick.parent.parent.name == "quick"
    assert {p.name: p.read_bytes() for p in smoke.iterdir()} == saved
    # a smoke part copied into quick's folder under a quick part's name is not taken for it
    q0 = domias_parts.fig6_parts("quick", **TINY_QUICK)[0]
    for ext in ("csv", "json"):
        shutil.copy(smoke / f"s0-noise_var0.7.{ext}", quick / f"{q0.name}.{ext}")
    assert domias_parts.status("quick", tmp_path, **TINY_QUICK)["left"] == [q0.name]
    # and smoke never writes into the project's committed figures/
    assert "results" in domias_parts.parts_folder("smoke").parts
    assert domias_parts.parts_folder("paper").parts[-4:] == ("figures", "paper", "parts", "domias_fig6")


def test_p_r_is_fitted_once_for_calls_that_share_a_reference_set(monkeypatch):
    fits = []
    real = domias_scoring._reference_task
    monkeypatch.setattr(domias_scoring, "_reference_task", lambda task: fits.append(1) or real(task))
    monkeypatch.setattr(domias_scoring, "_REFERENCES", type(domias_scoring._REFERENCES)())
    rng = np.random.default_rng(0)
    ref = rng.normal(size=(300, 3))

    def setting(seed, reference=ref):
        X = rng.normal(size=(40, 3))
        return domias_scoring.Setting(seed, rng.normal(size=(200, 3)), reference, ("ref", 0), X, np.arange(40) % 2)

    a, b = setting(0), setting(1)
    first = domias_scoring.score_settings([a], ("domias_kde",), {}, cache=False, n_jobs=1)
    second = domias_scoring.score_settings([b], ("domias_kde",), {}, cache=False, n_jobs=1)
    assert len(fits) == 1  # the second call reuses the first call's p_R
    domias_scoring._REFERENCES.clear()
    alone = domias_scoring.score_settings([b], ("domias_kde",), {}, cache=False, n_jobs=1)
    assert len(fits) == 2
    np.testing.assert_array_equal(second[0]["domias_kde"][0], alone[0]["domias_kde"][0])
    assert not np.array_equal(first[0]["domias_kde"][0], second[0]["domias_kde"][0])
    # another reference set under the same name is fitted anew: the reuse is by content
    domias_scoring.score_settings([setting(2, ref + 1.0)], ("domias_kde",), {}, cache=False, n_jobs=1)
    assert len(fits) == 3


def _script():
    import importlib.util

    from conftest import PROJECT_ROOT

    spec = importlib.util.spec_from_file_location("run_sitting", PROJECT_ROOT / "scripts" / "run_sitting.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_script_says_what_is_left_and_refuses_bad_arguments(tmp_path, capsys):
    main = _script().main
    assert main(["domias_fig6", "--profile", "smoke", "--status", "--figures-dir", str(tmp_path)]) == 3
    out = capsys.readouterr().out
    assert "0 of 12 parts saved" in out and "left, in order: s0-GAN, s0-WGAN-GP" in out
    for bad in (["--budget-min", "0"], ["--max-parts", "0"], ["--profile", "huge"]):
        with pytest.raises(SystemExit) as exc:
            main(["domias_fig6", "--profile", "smoke", *bad])
        assert exc.value.code == 2
