"""The paper profile on one machine with 16 cores and one GPU, stage by stage, from costs measured on that machine.

Two JSON objects go in: the last line ``bench_gpu.py`` printed (GPU seconds of a WGAN-GP fit,
of a BNAF fit within a stack, of the attention attack per target) and what
``bench_paper_profile.py`` measured on the same machine's CPU with its GPU hidden
(``--cpu-only --cores 16``: stage costs of notebooks 01-04, notebook 05's units and their
measured CPU seconds).  :func:`assemble_gpu_box` adds them up notebook by notebook; each
stage says how it was obtained, one of :data:`HOW`:

* ``gpu``: measured on the GPU by ``bench_gpu.py`` and scaled to the stage's size;
* ``box cpu``: measured on the box's CPU, one core, and spread over its cores where the
  notebook spreads it (generator fits, forests, notebook 05's units): a lower bound, the
  work spread perfectly;
* ``fallback cpu``: a stage the box could not measure (a package it lacks), measured on
  another machine's CPU (``--cpu-fallback``: a ``bench_paper_profile.py`` JSON made there) and
  spread the same way;
* ``recorded, scaled``: the wall time of a recorded 2-core run (``docs/run_times.csv``) × 2 /
  cores, never a measurement of the box: the perfect-spread lower bound if the 2-core run
  kept both cores busy throughout (its cores were shared with other jobs, so it may lie
  above that bound), and the box's cores assumed no slower.

How the GPU figures are scaled (the GPU is launch-bound at these sizes: on an H200, WGAN-GP's
time per optimiser step was flat from a batch of 4,000 rows to 64,000, so a fit costs its steps):

* GAN-family fits (GAN, WGAN-GP, WGAN-WC, ADS-GAN, PATE-GAN, CTGAN, TVAE): WGAN-GP's seconds
  per optimiser step (``wgan_gp_300_epochs_wall_min`` over 300 epochs of its
  ``wgan_gp_rows // wgan_gp_batch_size`` steps) times the fit's steps (epochs × steps per
  epoch at its rows and batch, :func:`steps_per_epoch`).  This assumes a step of each of these
  models costs what a WGAN-GP step (5 critic updates with a gradient penalty, 1 generator
  update) does: neither bound (a GAN's step has one discriminator update; CTGAN, TVAE and
  PATE-GAN's teachers are other networks).  ``scaling="rows"`` scales by
  rows × epochs instead, which undercounts small training sets on a launch-bound GPU.
* BNAF fits (notebook 05's ``flow`` units): ``bnaf_fig6_fit_s`` (one flow of ``bnaf_fig6_rows``
  rows and 50 epochs within a stack) × the unit's rows / those rows × its epochs / 50 (its
  batch of 50 rows is below every unit's rows, so rows and steps scale alike); an upper
  bound per fit as ``bench_gpu.py``'s is (early stopping ends most fits sooner).  Their
  log densities of the test records are left out.
* The attention attack (notebook 02): ``attention_s_per_target`` (or the sum of
  ``attention_preprocess_s_per_target`` and ``attention_train_s_per_target``), per target,
  one target group after another.

Notebook 05's GPU seconds and its CPU seconds / cores are added (no overlap of the two).
Notebook 07: its GAN fits (:func:`vrlib.experiments.mca.paper_profile_fits`, on the 31,655
Adult training rows at batch 500, the size ``bench_gpu.py`` measures) on the GPU, one after
another; the rest of its recorded 2-core run less those fits' predicted CPU
(:func:`vrlib.experiments.mca.predicted_cost`), × 2 / cores: an estimate, not a bound (the
recorded run misses a sitting, and its GAN fits' CPU is itself predicted).  Notebook 06: its
own cost model's CPU hours measured on the box (``notebook06_paper_cpu_hours``) over the cores,
else its recorded run, scaled.  Notebook 08: its recorded paper run, scaled; while none is
recorded, its quick run (the paper's sizes, all its releases but TVAE's), scaled, plus the TVAE
release's fit on the GPU (as the GAN-family fits) and its audit taken as one quick release's
share of that run (neither bound).  A key missing from ``bench_gpu.py``'s JSON is named and its
stage falls back to its CPU figure; a stage with no figure at all is named under ``missing``
and left out of the sum.

Run (after the two measurements, on any machine with the repository)::

    python benchmarks/gpu_box.py --gpu gpu.json --box box.json [--box box05.json] [--cpu-fallback cpu.json]

The last printed line is one JSON object with ``paper_profile_hours_gpu_box``.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

NOTEBOOKS = ("01", "02", "03", "04", "05", "06", "07", "08")
HOW = ("gpu", "box cpu", "fallback cpu", "recorded, scaled")
RECORDED_CORES = 2  # the recorded paper runs (docs/run_times.csv) ran on 2 cores
GAN_KINDS = ("gan", "wgan_gp", "wgan_wc", "adsgan", "pategan", "ctgan", "tvae")
# What bench_gpu.py measures the WGAN-GP fit on when its JSON does not say (its docstring: Adult's training rows).
WGAN_DEFAULT = {"wgan_gp_rows": 31_655, "wgan_gp_batch_size": 500}
BNAF_FIG6_EPOCHS = 50  # bench_gpu.py's Fig. 6 flow: at most 50 epochs (no key gives them)
BNAF_FIG6_ROWS = 10_000  # and its rows, when its JSON does not say
NEEDS = {"tvae": "ctgan", "ctgan": "ctgan", "nflow": "zuko"}  # kinds whose generator needs a package


def steps_per_epoch(kind: str, rows: int, batch: int) -> int:
    """Optimiser steps of one epoch of a GAN-family fit on ``rows`` rows at ``batch`` (as each model loops).

    TVAE takes every batch, the last one short; the others take ``rows // batch`` full
    batches (at least one, of at most ``rows`` rows).
    """
    if rows < 1 or batch < 1:
        raise ValueError(f"rows and batch must be at least 1 (got {rows}, {batch})")
    if kind == "tvae":
        return math.ceil(rows / batch)
    return max(rows // min(batch, rows), 1)


def read_gpu(gpu: dict) -> tuple[dict, list[str]]:
    """The GPU figures of ``bench_gpu.py``'s JSON that the profile uses, and a note per figure it lacks.

    Returns
    -------
    figures : dict
        Any of ``gan_step_s`` (with ``gan_rows``, ``gan_batch``), ``bnaf_fit_s`` (with
        ``bnaf_rows``, ``bnaf_epochs``), ``attention_s`` (with ``attention_split`` where the
        JSON splits it).
    missing : list of str
        One line per stage whose key is absent (its stage falls back to a CPU figure).

    Raises
    ------
    ValueError
        For a ``--tiny`` run (its numbers mean nothing).
    """
    if gpu.get("tiny"):
        raise ValueError("the bench_gpu JSON is from a --tiny run, whose numbers mean nothing: use a full run's")
    out, missing = {}, []
    if gpu.get("wgan_gp_300_epochs_wall_min") is not None:
        rows = int(gpu.get("wgan_gp_rows") or WGAN_DEFAULT["wgan_gp_rows"])
        batch = int(gpu.get("wgan_gp_batch_size") or WGAN_DEFAULT["wgan_gp_batch_size"])
        steps = 300 * steps_per_epoch("wgan_gp", rows, batch)
        out.update(gan_step_s=gpu["wgan_gp_300_epochs_wall_min"] * 60 / steps, gan_rows=rows, gan_batch=batch)
        for key in WGAN_DEFAULT:
            if gpu.get(key) is None:
                missing.append(f"{key} absent: taken as {WGAN_DEFAULT[key]:,} (bench_gpu.py's default)")
    else:
        missing.append("wgan_gp_300_epochs_wall_min absent: GAN-family fits on the CPU")
    if gpu.get("bnaf_fig6_fit_s") is not None:
        out.update(
            bnaf_fit_s=float(gpu["bnaf_fig6_fit_s"]),
            bnaf_rows=int(gpu.get("bnaf_fig6_rows") or BNAF_FIG6_ROWS),
            bnaf_epochs=int(gpu.get("bnaf_fig6_epochs") or BNAF_FIG6_EPOCHS),
        )
        if gpu.get("bnaf_fig6_rows") is None:
            missing.append(f"bnaf_fig6_rows absent: taken as {BNAF_FIG6_ROWS:,} (bench_gpu.py's Fig. 6 flow)")
    else:
        missing.append("bnaf_fig6_fit_s absent: BNAF fits on the CPU")
    split = {k: gpu.get(f"attention_{k}_s_per_target") for k in ("preprocess", "train")}
    if gpu.get("attention_s_per_target") is not None:
        out["attention_s"] = float(gpu["attention_s_per_target"])
    elif None not in split.values():
        out["attention_s"] = float(sum(split.values()))
    else:
        missing.append("attention_s_per_target absent: the attention attack on the CPU")
    if "attention_s" in out and None not in split.values():
        out["attention_split"] = {k: float(v) for k, v in split.items()}
    return out, missing


def gan_fit_gpu_s(figures: dict, kind: str, rows: int, epochs: float, batch: int, scaling: str = "steps") -> float:
    """GPU seconds of one GAN-family fit, scaled from WGAN-GP's measured fit (module docstring)."""
    if scaling == "steps":
        return figures["gan_step_s"] * epochs * steps_per_epoch(kind, int(rows), int(batch))
    if scaling == "rows":
        per_row_epoch = figures["gan_step_s"] * steps_per_epoch("wgan_gp", figures["gan_rows"], figures["gan_batch"])
        return per_row_epoch / figures["gan_rows"] * rows * epochs
    raise ValueError(f"scaling must be 'steps' or 'rows' (got {scaling!r})")


def gan_bound(figures: dict, kind: str, rows: int, batch: int) -> str | None:
    """The bound a GAN-family fit's GPU seconds are: None (as measured) for WGAN-GP at its measured size, else neither."""
    same = kind == "wgan_gp" and (int(rows), int(batch)) == (figures["gan_rows"], figures["gan_batch"])
    return None if same else "none"


def _stage(name, seconds, how, source, bound=None):
    """One stage: ``bound`` None (a prediction from a measurement at its size), "lower", "upper" or "none" (neither)."""
    if how not in HOW:
        raise ValueError(f"unknown how {how!r}")
    return {"stage": name, "hours": seconds / 3600, "how": how, "bound": bound, "from": source}


def _measured_table(rows) -> dict:
    return {(m["kind"], m["data"], int(m["variant"])): m for m in rows or ()}


def _unit_cpu_s(m: dict, unit: dict) -> float:
    # domias_cost.unit_cpu_seconds: (fixed + per × length) × size / measured size
    return (m["fixed_cpu_s"] + m["per_length_cpu_s"] * unit["length"]) * unit["size"] / m["measured_size"]


def notebook05_stages(box: dict, figures: dict, cores: int, fallback: dict | None, scaling: str) -> tuple[list, list]:
    """Notebook 05's stages on the box: GPU-able units from ``figures``, the others' CPU over ``cores``.

    Returns the stages (one per group of units of one kind and source) and the units left
    without any figure, named.
    """
    measured = _measured_table(box.get("notebook05_measured"))
    backup = _measured_table((fallback or {}).get("notebook05_measured"))
    backup_where = f"the {(fallback or {}).get('cpus', '?')}-CPU machine of the --cpu-fallback JSON"
    groups: dict = {}  # (kind, how) -> seconds, units
    missing = []
    for u in box["notebook05_units"]:
        kind, key, n = u["kind"], (u["kind"], u["data"], int(u["variant"])), int(u["count"])
        if kind in GAN_KINDS and "gan_step_s" in figures:
            how, s = "gpu", n * gan_fit_gpu_s(figures, kind, u["variant"], u["length"], u["batch"], scaling)
            bound = gan_bound(figures, kind, u["variant"], u["batch"])
        elif kind == "flow" and "bnaf_fit_s" in figures:
            s = n * figures["bnaf_fit_s"] * (u["size"] / figures["bnaf_rows"]) * (u["length"] / figures["bnaf_epochs"])
            how, bound = "gpu", "upper"  # bench_gpu.py's fit runs every epoch: early stopping ends most sooner
        elif key in measured:
            how, s, bound = "box cpu", n * _unit_cpu_s(measured[key], u) / cores, "lower"
        elif key in backup:
            how, s, bound = "fallback cpu", n * _unit_cpu_s(backup[key], u) / cores, "lower"
        else:
            missing.append(f"05 {kind} on {u['data']} (variant {u['variant']}): {n} units without a figure")
            continue
        g = groups.setdefault((kind, how), [0.0, 0, set()])
        g[0] += s
        g[1] += n
        g[2].add(bound)
    sources = {
        "gpu": "bench_gpu.py's figure, scaled to each unit (module docstring)",
        "box cpu": f"its units' CPU measured on the box, over {cores} cores",
        "fallback cpu": f"its units' CPU measured on {backup_where} (the box could not), over {cores} cores",
    }
    stages = [
        _stage(f"{kind} ({units} units)", s, how, sources[how], bounds.pop() if len(bounds) == 1 else "none")
        for (kind, how), (s, units, bounds) in groups.items()
    ]
    return stages, missing


def notebook07_gans() -> list[dict]:
    """Notebook 07's GAN fits under ``paper``: kind, fits, rows, epochs, batch, and their predicted CPU hours (2 cores' machine)."""
    from vrlib.experiments import mca

    s = mca.profile_settings("mca", "paper")
    rows = s["n_train"] or mca.PAPER["n_train"]
    epochs = {"wgan_gp": s["wgan_epochs"], "wgan_wc": s["wgan_epochs"], "ctgan": s["ctgan_epochs"]}
    epochs["tvae"] = s["tvae_epochs"]
    cost = mca.predicted_cost("paper")  # one row per GAN, in paper_profile_fits' order
    return [
        dict(kind=k, fits=n, rows=rows, epochs=epochs[k], batch=s["batch_size"], cpu_hours=r.cpu_minutes / 60)
        for (k, n), r in zip(mca.paper_profile_fits("paper").items(), cost.itertuples(), strict=True)
    ]


def notebook08_tvae() -> dict:
    """What notebook 08 adds under ``paper`` to its ``quick`` run (same sizes): one TVAE release, its fit's size."""
    from vrlib.experiments.audit import PROFILES
    from vrlib.generators import get_generator

    paper, quick = PROFILES["paper"], PROFILES["quick"]
    added = [g for g in paper["generators"] if g not in quick["generators"]]
    same = all(paper[k] == quick[k] for k in ("n_train", "n_holdout", "n_synth"))
    if added != [("tvae", None)] or not same:
        raise ValueError(f"notebook 08's paper profile is no longer its quick one plus TVAE: {added}")
    params = get_generator("tvae").get_params()
    return dict(rows=paper["n_train"], epochs=params["epochs"], batch=params["batch_size"],
                releases_quick=len(quick["generators"]))  # fmt: skip


def _scaled(r: dict, cores: int) -> tuple[float, str]:
    hours = r["hours"] * RECORDED_CORES / cores
    return hours, f"recorded {r['hours']:.2f} h on {RECORDED_CORES} cores × {RECORDED_CORES}/{cores}: {r['source']}"


def assemble_gpu_box(
    box: dict,
    gpu: dict,
    recorded: dict,
    cores: int = 16,
    fallback: dict | None = None,
    gans07: list | None = None,
    scaling: str = "steps",
    tvae08: dict | None = None,
) -> dict:
    """Hours of every notebook 01-08 under ``paper`` on one machine with ``cores`` cores and one GPU.

    Parameters
    ----------
    box : dict
        ``bench_paper_profile.py``'s JSON from the box (``--cpu-only``; parts merged when run apart).
    gpu : dict
        ``bench_gpu.py``'s JSON from the box.
    recorded : dict
        ``{"06": recorded_paper_run("06"), ...}`` (None where no run is recorded): 2-core runs.
    cores : int
    fallback : dict, optional
        A ``bench_paper_profile.py`` JSON from another machine, for notebook 05's units the box
        could not measure.
    gans07 : list of dict, optional
        Notebook 07's GAN fits (:func:`notebook07_gans`, the default).
    tvae08 : dict, optional
        What notebook 08 adds under ``paper`` to its quick run (:func:`notebook08_tvae`, the
        default), used when ``recorded`` has no paper run of 08 but its quick run (key ``"08 quick"``).
    scaling : {"steps", "rows"}

    Returns
    -------
    dict
        ``notebooks`` (per notebook: ``hours``, ``stages``), ``hours`` (their sum), ``gpu_notes``
        (keys ``bench_gpu.py``'s JSON lacks), ``missing`` (stages left out, named), ``lower_bound``.
    """
    if cores < 1:
        raise ValueError(f"cores must be at least 1 (got {cores})")
    if box.get("gpu_visible"):
        raise ValueError(
            "the box's CPU costs were measured with its GPU visible: rerun bench_paper_profile.py --cpu-only"
        )
    figures, notes = read_gpu(gpu)
    nbs: dict = {nb: [] for nb in NOTEBOOKS}
    missing: list = []
    split = box.get("notebook_stage_minutes") or {}

    def recorded_or_missing(nb):
        r = recorded.get(nb)
        if r:
            hours, source = _scaled(r, cores)
            nbs[nb].append(_stage("whole notebook", hours * 3600, "recorded, scaled", source, "lower"))
        else:
            missing.append(f"{nb}: no stage costs from the box and no recorded paper run")

    # 01, 03, 04: the query attack, all on the box's CPU
    for nb in ("01", "03", "04"):
        parts = split.get(nb)
        if not parts:
            recorded_or_missing(nb)
            continue
        for stage, minutes in parts.items():
            spread = "one core per target" if stage == "features" else f"over {cores} cores"
            nbs[nb].append(
                _stage(
                    stage,
                    minutes * 60,
                    "box cpu",
                    f"measured on the box, {spread}",
                    "lower" if stage != "features" else None,
                )
            )
    # 02: the fits on the box's CPU, the attention per target on the GPU (else its CPU figure)
    p02 = split.get("02")
    if p02:
        nbs["02"].append(
            _stage("fits", p02["fits"] * 60, "box cpu", f"measured on the box, over {cores} cores", "lower")
        )
        targets = int(p02["targets"])
        if "attention_s" in figures:
            detail = figures.get("attention_split")
            detail = f" (preprocess {detail['preprocess']:.1f} s + train {detail['train']:.1f} s)" if detail else ""
            source = f"{targets} targets × {figures['attention_s']:.2f} s on the GPU{detail}"
            nbs["02"].append(_stage("attention", targets * figures["attention_s"], "gpu", source))
        elif p02.get("attention_cpu_s") is not None:
            source = f"{targets} targets × {p02['attention_cpu_s']:.1f} s on one core of the box (no GPU figure)"
            nbs["02"].append(_stage("attention", targets * p02["attention_cpu_s"], "box cpu", source))
        else:
            missing.append("02 attention: no GPU figure and no CPU figure from the box")
    else:
        recorded_or_missing("02")
    # 05: its cost model's units
    if box.get("notebook05_units"):
        stages, lacking = notebook05_stages(box, figures, cores, fallback, scaling)
        nbs["05"] += stages
        missing += lacking
    else:
        recorded_or_missing("05")
    # 06: its cost model measured on the box (else its recorded run); 07: its GAN fits on the GPU, the rest
    # recorded; 08: its recorded run
    if box.get("notebook06_paper_cpu_hours") is not None:
        h = float(box["notebook06_paper_cpu_hours"])
        source = f"its cost model (lost.predicted_cost) measured on the box: {h:.2f} CPU h over {cores} cores"
        nbs["06"].append(_stage("whole notebook", h * 3600 / cores, "box cpu", source, "lower"))
    else:
        recorded_or_missing("06")
    gans = notebook07_gans() if gans07 is None else gans07
    r07 = recorded.get("07")
    if r07 and "gan_step_s" in figures:
        for g in gans:
            s = g["fits"] * gan_fit_gpu_s(figures, g["kind"], g["rows"], g["epochs"], g["batch"], scaling)
            source = "bench_gpu.py's WGAN-GP step × the fits' steps"
            bound = gan_bound(figures, g["kind"], g["rows"], g["batch"])
            nbs["07"].append(_stage(f"{g['kind']} fits ({g['fits']})", s, "gpu", source, bound))
        gan_cpu = sum(g["cpu_hours"] for g in gans)
        rest = max(r07["hours"] * RECORDED_CORES - gan_cpu, 0.0) / cores
        source = (
            f"recorded {r07['hours']:.2f} h on {RECORDED_CORES} cores × {RECORDED_CORES} less its GAN fits' predicted "
            f"{gan_cpu:.2f} CPU h, over {cores} cores: {r07['source']}"
        )
        nbs["07"].append(_stage("the rest", rest * 3600, "recorded, scaled", source, "none"))
    else:
        recorded_or_missing("07")
    q08 = recorded.get("08 quick")
    if recorded.get("08") or not q08:
        recorded_or_missing("08")
    else:  # its quick run has the paper's sizes and all but one of its releases: TVAE's
        t = notebook08_tvae() if tvae08 is None else tvae08
        hours, source = _scaled(q08, cores)
        stage = f"the quick profile's {t['releases_quick']} releases and their audits"
        nbs["08"].append(
            _stage(stage, hours * 3600, "recorded, scaled", f"its quick run (same sizes): {source}", "lower")
        )
        if "gan_step_s" in figures:
            s = gan_fit_gpu_s(figures, "tvae", t["rows"], t["epochs"], t["batch"], scaling)
            source = (
                f"bench_gpu.py's WGAN-GP step × its {t['epochs']} epochs of {t['rows']:,} rows at batch {t['batch']}"
            )
            nbs["08"].append(_stage("the TVAE release's fit", s, "gpu", source, "none"))
            source = f"one quick release's share of its run, {hours:.3f} h / {t['releases_quick']}"
            nbs["08"].append(
                _stage(
                    "the TVAE release's audit", hours * 3600 / t["releases_quick"], "recorded, scaled", source, "none"
                )
            )
        else:
            missing.append("08: the TVAE release (paper only): no GPU figure for its fit")

    by_how, by_bound = dict.fromkeys(HOW, 0.0), {}
    for stages in nbs.values():
        for st in stages:
            by_how[st["how"]] += st["hours"]
            key = {None: "at its measured size", "none": "scaled, neither bound"}.get(
                st["bound"], f"{st['bound']} bound"
            )
            by_bound[key] = by_bound.get(key, 0.0) + st["hours"]
    out = {}
    for nb, stages in nbs.items():
        if stages:
            out[nb] = {
                "hours": round(sum(s["hours"] for s in stages), 3),
                "stages": [{**s, "hours": round(s["hours"], 4)} for s in stages],
            }
    return {
        "notebooks": out,
        "hours": sum(sum(s["hours"] for s in stages) for stages in nbs.values()),
        "cores": cores,
        "scaling": scaling,
        "gpu": {"device": gpu.get("device"), "name": gpu.get("gpu")},
        "gpu_notes": notes,
        "missing": missing,
        "hours_by_how": {k: round(v, 3) for k, v in by_how.items()},
        "hours_by_bound": {k: round(v, 3) for k, v in by_bound.items()},
    }


def print_profile(prof: dict) -> None:
    """The breakdown, one line per stage."""
    print(f"paper profile on one machine with {prof['cores']} cores and one GPU ({prof['gpu']['name']}):")
    for note in prof["gpu_notes"]:
        print(f"  bench_gpu JSON: {note}")
    for nb, r in prof["notebooks"].items():
        print(f"  {nb}: {r['hours']:.2f} h")
        for s in r["stages"]:
            bound = {None: "", "none": ", neither bound"}.get(s["bound"], f", {s['bound']} bound")
            print(f"      {s['stage']}: {s['hours']:.3f} h [{s['how']}{bound}] {s['from']}")
    for m in prof["missing"]:
        print(f"  left out: {m}")
    print(
        f"  all: {prof['hours']:.2f} h, not a bound of one kind: "
        + ", ".join(f"{h:.2f} h {k}" for k, h in prof["hours_by_bound"].items())
        + "; "
        + ", ".join(f"{h:.2f} h {k}" for k, h in prof["hours_by_how"].items() if h)
    )


def merge_box(parts: list[dict]) -> dict:
    """One box JSON from several runs of ``bench_paper_profile.py`` (different ``--only`` parts); later wins."""
    out: dict = {}
    for p in parts:
        if p.get("benchmark", "bench_paper_profile") != "bench_paper_profile":
            raise ValueError(f"not a bench_paper_profile JSON: {p.get('benchmark')!r}")
        out.update(p)
    return out


def last_json(path) -> dict:
    """The JSON object on the last non-empty line of ``path`` (a saved printout or a bare JSON file)."""
    lines = [line for line in Path(path).read_text().splitlines() if line.strip()]
    if not lines:
        raise ValueError(f"{path} is empty")
    try:
        return json.loads(lines[-1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"the last line of {path} is not one JSON object: {exc}") from exc


def combine(gpu_path, box_paths, fallback_path=None, cores=None, scaling="steps") -> dict:
    """:func:`assemble_gpu_box` from saved files, the recorded runs read from the repository."""
    from bench_paper_profile import NOTEBOOKS as NBS
    from bench_paper_profile import recorded_paper_run

    box = merge_box([last_json(p) for p in box_paths])
    gpu = last_json(gpu_path)
    fallback = last_json(fallback_path) if fallback_path else None
    recorded = {nb: recorded_paper_run(nb) for nb in NBS}
    recorded["08 quick"] = recorded_paper_run("08", profile="quick")
    cores = cores or int(box.get("cores") or 16)
    prof = assemble_gpu_box(box, gpu, recorded, cores, fallback, scaling=scaling)
    print_profile(prof)
    return {
        "benchmark": "gpu_box",
        "paper_profile_hours_gpu_box": round(prof["hours"], 2),
        "paper_profile_gpu_box": prof,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", required=True, help="bench_gpu.py's output (its last line is read)")
    parser.add_argument("--box", required=True, action="append", help="bench_paper_profile.py's output on the box")
    parser.add_argument("--cpu-fallback", help="bench_paper_profile.py's output on another machine")
    parser.add_argument("--cores", type=int, help="the box's cores (default: those the box run predicted for)")
    parser.add_argument("--scaling", choices=("steps", "rows"), default="steps")
    args = parser.parse_args(argv)
    print(json.dumps(combine(args.gpu, args.box, args.cpu_fallback, args.cores, args.scaling)))


if __name__ == "__main__":
    main()
