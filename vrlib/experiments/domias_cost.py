"""What notebook 05 (DOMIAS) costs under a profile: its units of work, counted and measured.

Every section of the notebook (Figs. 3a, 3b, 4, 6, App. D's Fig. 13, the Fig. 5 idea on
Adult) is made of a few kinds of unit: a generator's fit and sample, a BNAF density's fit,
a KDE's log densities of the test records, and each other attack's fit and scores.

* :func:`notebook_units` lists the units a run needs, section by section, from the
  profile's settings (:func:`vrlib.experiments.profile_settings`) and the attacks each
  section runs (the defaults of :mod:`vrlib.experiments.domias`' functions).  It counts
  once what the code shares: a synthetic dataset or a setting's scores that an earlier
  section of the run made come from the cache (Fig. 3b's point at the profile's epochs is
  Fig. 3a's at ``|D_mem| = n_mem``), ``p_R`` is fitted once per reference set and section,
  ``p_G`` once per setting for ``domias_*`` and ``eq1_*`` together.
* :func:`measure_units` times each kind of unit in this process on real data at the
  profile's sizes, with a fraction of its epochs (or steps) at two lengths, which gives
  a fixed part and a part per epoch (:func:`per_length`).
* :func:`unit_cpu_seconds` scales a measurement to a unit of the run (its epochs, and its
  rows for the kinds measured at one size only), :func:`predicted_cost` adds the units up
  per section and attack group.

What the cache already holds is not looked up (that needs the synthetic data themselves,
whose hash keys the scores): the prediction is for an empty cache, unless ``earlier``
names runs whose results the cache is assumed to hold.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import os
import time

import numpy as np
import pandas as pd

from vrlib.attacks.registry import make_attack
from vrlib.data import load
from vrlib.density import get_density
from vrlib.errors import VrlibError
from vrlib.experiments import domias
from vrlib.experiments.domias_scoring import applies, flow_trainer
from vrlib.parallel import derive_seed

SECTIONS = ("fig3a", "fig3b", "fig4", "fig6", "fig13", "fig5")

# The function that makes each section, whose default attacks are the section's (None: a profile setting).
_SECTION_FUNCTIONS = {
    "fig3a": domias.fig3a,
    "fig3b": domias.fig3b,
    "fig4": domias.fig4,
    "fig6": domias.fig6,
    "fig13": domias.precision_curves,
    "fig5": domias.minority,
}
_ATTACKS_SETTING = {"fig6": "fig6_attacks", "fig5": "minority_attacks"}

GENERATORS = ("tvae", "ctgan", "privbayes", "baynet", "noise", "gan", "wgan_gp", "adsgan", "pategan", "nflow")
NEURAL = ("tvae", "ctgan", "gan", "wgan_gp", "adsgan", "pategan", "nflow")  # fitted for a number of epochs
KINDS = GENERATORS + ("flow", "kde", "logan_0", "logan_d1", "logan_d1_published", "mc", "gan_leaks", "gan_leaks_cal")

# Attack group of each kind: one row of the prediction per section and group.
GROUPS = {
    "tvae": "TVAE fits",
    "ctgan": "CTGAN fits",
    "privbayes": "PrivBayes, BayNet and noise fits",
    "baynet": "PrivBayes, BayNet and noise fits",
    "noise": "PrivBayes, BayNet and noise fits",
    "gan": "GAN, WGAN-GP, ADS-GAN and PATE-GAN fits",
    "wgan_gp": "GAN, WGAN-GP, ADS-GAN and PATE-GAN fits",
    "adsgan": "GAN, WGAN-GP, ADS-GAN and PATE-GAN fits",
    "pategan": "GAN, WGAN-GP, ADS-GAN and PATE-GAN fits",
    "nflow": "NFlow fits",
    "flow": "BNAF (domias_flow, eq1_flow)",
    "kde": "KDE (domias_kde, eq1_kde)",
    "logan_0": "LOGAN 0",
    "logan_d1": "LOGAN D1 (both trainings)",
    "logan_d1_published": "LOGAN D1 (both trainings)",
    "mc": "MC, GAN-Leaks 0 and CAL",
    "gan_leaks": "MC, GAN-Leaks 0 and CAL",
    "gan_leaks_cal": "MC, GAN-Leaks 0 and CAL",
}

# Kinds measured at one size and scaled to each unit's: the size is what their work grows with
# (BNAF and LOGAN 0: rows per epoch; KDE: rows times records evaluated; LOGAN D1: the rows of
# its balanced classes; the published LOGAN D1: its steps, in proportion to the records scored).
# The generators are measured at each training size the run uses; MC and GAN-Leaks (tree
# searches, a fraction of a second) at the profile's sizes, counted as such everywhere.
# Under settings["flow_trainer"] = "ensemble" a flow unit is measured as its share of a stack of this many
# (DOMIAS's sections stack far more flows than this; the share per flow hardly falls beyond it on a CPU).
FLOW_STACK = 16

SCALED = ("flow", "kde", "logan_0", "logan_d1", "logan_d1_published")

_COLUMNS = ["section", "what", "kind", "data", "variant", "size", "length"]


# --------------------------------------------------------------------------- counting


def check_sections(sections) -> tuple:
    """``sections`` in the notebook's order (:data:`SECTIONS`, whatever order they are given in).

    Raises
    ------
    VrlibError
        For an unknown section (named, with the choices).
    """
    sections = (sections,) if isinstance(sections, str) else tuple(sections)
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        raise VrlibError(f"unknown section(s) {unknown}; choose from {SECTIONS}")
    return tuple(s for s in SECTIONS if s in sections)


def section_attacks(section: str, settings: dict, include_flow: bool = True, exclude_attacks=()) -> tuple:
    """The attacks notebook 05 runs in ``section``: its function's default, less BNAF and ``exclude_attacks``.

    ``include_flow=False`` drops ``domias_flow`` and ``eq1_flow``, as the notebook's
    parameter of that name does.
    """
    (section,) = check_sections((section,))
    default = inspect.signature(_SECTION_FUNCTIONS[section]).parameters["attacks"].default
    attacks = tuple(settings[_ATTACKS_SETTING[section]] if default is None else default)
    return tuple(a for a in attacks if (include_flow or not a.endswith("_flow")) and a not in set(exclude_attacks))


def _case(data, generator, param, seed, n_train, epochs, n_ref, n_syn, n_test) -> dict:
    """One setting: its synthetic dataset's identity and the sizes it is attacked at."""
    return dict(
        data=data,
        generator=generator,
        synthetic=(data, generator, param, seed, n_train),  # what the synthetic cache holds it under
        seed=seed,
        n_train=n_train,
        epochs=epochs,
        n_ref=n_ref,
        n_syn=n_syn,
        n_test=n_test,
    )


def _cases(section: str, s: dict) -> list[dict]:
    """The settings a section attacks, from the profile's settings (as :mod:`vrlib.experiments.domias` makes them)."""
    n_ref, n_syn, n_mem, epochs = s["n_ref"], s["n_syn"], s["n_mem"], s["tvae_epochs"]
    seeds = s["seeds"]
    if section == "fig3a":
        return [
            _case("california", "tvae", epochs, seed, n, epochs, n_ref, n_syn, 2 * n)
            for seed in seeds
            for n in s["n_mem_grid"]
        ]
    if section == "fig3b":
        return [
            _case("california", "tvae", e, seed, n_mem, e, n_ref, n_syn, 2 * n_mem)
            for seed in seeds
            for e in s["epochs_grid"]
        ]
    if section == "fig4":
        grid = [(k, n_syn) for k in s["n_ref_grid"]] + [(n_ref, k) for k in s["n_syn_grid"]]
        return [
            _case("california", "tvae", epochs, seed, n_mem, epochs, r, k, 2 * n_mem) for seed in seeds for r, k in grid
        ]
    if section == "fig13":
        return [_case("california", "tvae", epochs, seed, n_mem, epochs, n_ref, n_syn, 2 * n_mem) for seed in seeds]
    if section == "fig5":
        n, e = s["adult_n_mem"], s["adult_epochs"]
        return [_case("adult", "tvae", e, seed, n, e, s["adult_n_ref"], s["adult_n_syn"], 2 * n) for seed in seeds]
    # fig6: every generator on the same D_mem, as domias.fig6_configs makes them
    configs = []
    for label, g, params, priv in domias.fig6_configs(s):
        key = params.get("epochs") if g == "tvae" else (label if g != "baynet" else None)
        configs.append((g, key, params.get("epochs", 0)))
    return [
        _case("california", g, param, seed, n_mem, e, n_ref, n_syn, 2 * n_mem)
        for seed in seeds
        for g, param, e in configs
    ]


def unit_size(kind: str, n_fit: int = 0, n_syn: int = 0, n_ref: int = 0, n_test: int = 0) -> int:
    """What a unit's work grows with, for the kinds in :data:`SCALED` (1 for the others).

    ``n_fit`` is the rows a density is fitted on (BNAF, KDE).
    """
    if kind == "flow":
        return int(n_fit)
    if kind == "kde":
        return int(n_fit) * int(n_test)
    if kind == "logan_0":
        return int(n_syn)
    if kind == "logan_d1":
        return min(int(n_syn), int(n_ref))
    if kind == "logan_d1_published":
        return int(n_test)
    return 1


def _lengths(s: dict) -> dict:
    """The full length of each iterative attack kind: epochs, or the published LOGAN D1's steps per record."""
    return {
        "flow": s["flow"]["epochs"],
        "logan_0": s["logan_epochs"],
        "logan_d1_published": make_attack("logan_d1_published").get_params()["steps_per_record"],
    }


def _plan_section(section: str, s: dict, attacks: tuple, done: set, rows: list) -> None:
    """Append the units ``section`` adds to ``done`` (what earlier sections made) to ``rows``; update ``done``."""
    lengths = _lengths(s)

    def add(kind, data, variant=0, size=1, length=0):
        rows.append(
            dict(section=section, what=GROUPS[kind], kind=kind, data=data, variant=variant, size=size, length=length)
        )

    cases = _cases(section, s)
    for c in cases:
        if c["synthetic"] not in done:
            done.add(c["synthetic"])
            add(c["generator"], c["data"], variant=c["n_train"], length=c["epochs"])
    missing: dict = {}  # setting -> (case, attacks it still needs), in order
    for c in cases:
        setting = (c["synthetic"], c["n_ref"], c["n_syn"])
        for a in attacks:
            if (
                applies(a, c["n_test"], c["n_syn"], c["n_ref"])
                and (setting, a) not in done
                and a not in missing.get(setting, (c, []))[1]
            ):
                missing.setdefault(setting, (c, []))[1].append(a)
    references = set()  # one p_R per reference set and estimator in a section (domias_scoring.score_settings)
    for setting, (c, names) in missing.items():
        sizes = dict(n_syn=c["n_syn"], n_ref=c["n_ref"], n_test=c["n_test"])
        for est in ("kde", "flow"):
            domias_est, eq1_est = f"domias_{est}" in names, f"eq1_{est}" in names
            if est == "flow":
                if domias_est and (c["data"], c["seed"], c["n_ref"]) not in references:
                    references.add((c["data"], c["seed"], c["n_ref"]))
                    add("flow", c["data"], size=c["n_ref"], length=lengths["flow"])
                if domias_est or eq1_est:  # p_G, shared by the two
                    add("flow", c["data"], size=c["n_syn"], length=lengths["flow"])
            else:  # a KDE's fit is a covariance; its cost is the log densities of the test records
                for n_fit in ([c["n_syn"], c["n_ref"]] if domias_est else []) + ([c["n_syn"]] if eq1_est else []):
                    add("kde", c["data"], size=unit_size("kde", n_fit=n_fit, n_test=c["n_test"]))
        for a in names:
            if not a.startswith(("domias_", "eq1_")):
                add(a, c["data"], size=unit_size(a, **sizes), length=lengths.get(a, 0))
        done.update((setting, a) for a in names)


def notebook_units(
    settings: dict, sections=SECTIONS, include_flow: bool = True, exclude_attacks=(), earlier=()
) -> pd.DataFrame:
    """The units of work notebook 05 does under ``settings``, one row each, in the order of ``sections``.

    Parameters
    ----------
    settings : dict
        The profile's settings (:func:`vrlib.experiments.profile_settings`, ``"domias"``),
        with the run's seeds.
    sections : sequence of str
        Of :data:`SECTIONS`, made in the notebook's order (that of :data:`SECTIONS`).
    include_flow, exclude_attacks
        As the notebook's parameters (:func:`section_attacks`).
    earlier : sequence of dict
        Runs whose results the cache is assumed to hold, each with ``sections`` and
        optionally ``include_flow`` and ``exclude_attacks``: their units are not counted
        again (an assumption, not a look-up: their cache entries must match this code).

    Returns
    -------
    DataFrame
        ``section, what, kind, data, variant, size, length``: ``kind`` one of :data:`KINDS`,
        ``what`` its group (:data:`GROUPS`), ``data`` "california" or "adult",
        ``variant`` the training rows of a generator (0 otherwise), ``size`` the unit's
        :func:`unit_size`, ``length`` its epochs (the published LOGAN D1: steps per
        record; 0 for a unit that does not iterate).
    """
    sections = check_sections(sections)
    done: set = set()
    for run in earlier:
        for section in check_sections(run["sections"]):
            chosen = section_attacks(section, settings, run.get("include_flow", True), run.get("exclude_attacks", ()))
            _plan_section(section, settings, chosen, done, [])
    rows: list = []
    for section in sections:
        _plan_section(section, settings, section_attacks(section, settings, include_flow, exclude_attacks), done, rows)
    return pd.DataFrame(rows, columns=_COLUMNS)


# --------------------------------------------------------------------------- scaling


def per_length(length_1: float, cpu_1: float, length_2: float, cpu_2: float) -> tuple[float, float]:
    """``(fixed, per unit of length)`` CPU seconds of a unit from two runs of lengths ``length_1 < length_2``.

    A straight line through the two points, neither part below zero (the CPU clock's noise
    can make a short difference negative).
    """
    if not length_2 > length_1:
        raise VrlibError(f"measure at two lengths, the second longer (got {length_1} and {length_2})")
    slope = max((cpu_2 - cpu_1) / (length_2 - length_1), 0.0)
    return max(cpu_1 - slope * length_1, 0.0), slope


def unit_cpu_seconds(fixed: float, per: float, length: float, size: float = 1, measured_size: float = 1) -> float:
    """CPU seconds of one unit: ``(fixed + per × length) × size / measured_size``."""
    return (fixed + per * length) * size / measured_size


# --------------------------------------------------------------------------- measuring


def _measured_lengths(full: float, fraction: float) -> tuple[int, int]:
    """The two lengths a unit of ``full`` epochs is measured at: 1 and ``fraction`` of it (at least 2)."""
    return 1, max(2, math.ceil(fraction * full))


@contextlib.contextmanager
def _in_this_process():
    # CPU time is this process's: no Dask cluster, whatever the environment says
    previous = os.environ.pop("VRLIB_DASK_SCHEDULER", None)
    try:
        yield
    finally:
        if previous is not None:
            os.environ["VRLIB_DASK_SCHEDULER"] = previous


def _cpu(make) -> tuple[float, object]:
    start = time.process_time()
    out = make()
    return time.process_time() - start, out


class _Data:
    """Real rows at the profile's sizes for one data set: a D_mem of any size, reference, test and synthetic rows."""

    def __init__(self, data: str, s: dict, seed: int):
        self.seed = seed
        if data == "california":
            self.df, self.schema = domias.california()
            self.n_mem, self.n_ref, self.n_syn = s["n_mem"], s["n_ref"], s["n_syn"]
            self.epochs = s["tvae_epochs"]
            self.encode = lambda t, what: t.to_numpy(np.float64)
        else:  # the attacker's view of Adult, as domias.minority makes it
            full, full_schema = load("adult")
            self.schema = full_schema.subset(domias.ADULT_COLUMNS)
            self.df = full[list(domias.ADULT_COLUMNS)]
            cont = list(self.schema.continuous)
            mean, std = self.df[cont].mean(), self.df[cont].std()
            self.n_mem, self.n_ref, self.n_syn = s["adult_n_mem"], s["adult_n_ref"], s["adult_n_syn"]
            self.epochs = s["adult_epochs"]
            self.encode = lambda t, what: domias.encode_adult(
                t, self.schema, mean, std, s["adult_jitter"], derive_seed(seed, "jitter", what)
            )
        parts = domias.split(self.df, self.n_mem, self.n_ref, seed)
        self.reference = self.encode(parts["ref"], "ref")
        self.test = self.encode(pd.concat([parts["mem"], parts["non"]], ignore_index=True), "test")
        self.synthetic = None  # TVAE's rows at n_mem, from its measurement (or made when first asked for)

    def training(self, n_train: int) -> pd.DataFrame:
        return domias.split(self.df, n_train, self.n_ref, self.seed)["mem"]

    def public_schema(self, s: dict):
        ref = domias.split(self.df, self.n_mem, self.n_ref, self.seed)["ref"]
        return self.schema.with_domains(domias.public_domain(ref, self.schema, s["domain_bins"]))


def _generator_params(generator: str, s: dict, length: int) -> dict:
    """Parameters of one measured fit: the neural generators with ``length`` epochs, the others as in Fig. 6."""
    if generator in ("tvae", "ctgan"):
        return {"epochs": int(length)}
    if generator in NEURAL:  # Fig. 6's other neural generators: its first setting of each
        config = next(p for _, g, p, _ in domias.fig6_configs(s) if g == generator)
        return {**config, "epochs": int(length)}
    if generator == "privbayes":
        return {"epsilon": float(s["privbayes_epsilons"][0])}
    if generator == "noise":
        return {"scale": domias.noise_sigma(s["noise_scales"][0], s["noise_values_are"]), "training_std": False}
    return {}


def _fit_generator(data: _Data, s: dict, generator: str, n_train: int, length: int, n: int | None = None):
    schema = data.public_schema(s) if generator in ("baynet", "privbayes") else data.schema
    job = dict(
        train=data.training(n_train),
        schema=schema,
        generator=generator,
        params=_generator_params(generator, s, length),
        n=data.n_syn if n is None else n,
        seed=data.seed,
    )
    return domias.synthesize([job], cache=False, n_jobs=1)[0]


def _synthetic(data: _Data, s: dict, fraction: float) -> np.ndarray:
    if data.synthetic is None:
        table = _fit_generator(data, s, "tvae", data.n_mem, _measured_lengths(data.epochs, fraction)[1])
        data.synthetic = data.encode(table, "syn")
    return data.synthetic


def _run_attack(kind: str, data: _Data, s: dict, length: int, synthetic, reference, test, flow_compile="auto"):
    """One unit of an attack kind (``length``: epochs or steps per record where it iterates).

    ``flow_compile``: BNAF's ``compile``, so that a measurement of a few epochs trains as the
    full fit does (``"auto"`` would leave it eager).
    """
    seed = derive_seed(data.seed, "attack", kind)
    if kind == "flow":
        params = {**s["flow"], "epochs": int(length), "seed": seed, "compile": flow_compile}
        if flow_trainer(s) == "ensemble":  # FLOW_STACK flows in one stack, each on the reference set
            from vrlib.density import BNAF
            from vrlib.density.bnaf_ensemble import fit_bnaf_ensemble

            params["compile"] = False
            flows = [BNAF(**{**params, "seed": derive_seed(seed, "stack", k)}) for k in range(FLOW_STACK)]
            return fit_bnaf_ensemble(flows, [reference] * FLOW_STACK)[0].log_density(test)
        return get_density("flow", **params).fit(reference).log_density(test)
    if kind == "kde":
        return get_density("kde").fit(synthetic).log_density(test)
    params = {}
    if kind == "logan_0":
        params = {"epochs": int(length), "seed": seed}
    elif kind == "logan_d1":
        params = {"seed": seed}
    elif kind == "logan_d1_published":
        params = {"seed": seed, "n_test": len(test), "steps_per_record": length}
    return make_attack(kind, **params).fit(synthetic, reference).score(test)


def _measure_one(kind: str, data: _Data, s: dict, variant: int, full: float, fraction: float, warm: set) -> dict:
    """Measured CPU seconds of one kind of unit: ``fixed``, ``per`` epoch (or step per record) and the size measured at."""
    iterative = kind in NEURAL or kind in _lengths(s)
    lengths = _measured_lengths(full, fraction) if iterative else (0,)
    # a kind runs once untimed first (imports, compiled code); BNAF's compiled code is made for one number of columns
    warm_key = (kind, data.reference.shape[1]) if kind == "flow" else kind
    if kind in GENERATORS:
        if warm_key not in warm:
            _fit_generator(data, s, kind, min(variant, 50), 1, n=50)
        runs = [_cpu(lambda n=n: _fit_generator(data, s, kind, variant, n)) for n in lengths]
        if kind == "tvae" and variant == data.n_mem and data.synthetic is None:
            data.synthetic = data.encode(runs[-1][1], "syn")
        size = 1
    else:
        syn = _synthetic(data, s, fraction)
        small = dict(synthetic=syn[:60], reference=data.reference[:60], test=data.test[:20])
        arrays = dict(synthetic=syn, reference=data.reference, test=data.test)
        if kind == "flow":  # train as the full fit will (compiled or not), warm-up included
            full_fit = get_density("flow", **{**s["flow"], "epochs": int(full)})
            small["flow_compile"] = arrays["flow_compile"] = full_fit.compiles(len(data.reference))
        if warm_key not in warm:
            _run_attack(kind, data, s, 1, **small)
        runs = [_cpu(lambda n=n: _run_attack(kind, data, s, n, **arrays)) for n in lengths]
        size = unit_size(kind, n_fit=len(data.reference) if kind == "flow" else len(syn), n_syn=len(syn),
                         n_ref=len(data.reference), n_test=len(data.test))  # fmt: skip
    warm.add(warm_key)
    if kind == "flow" and flow_trainer(s) == "ensemble":  # a flow's share of its stack
        runs = [(cpu / FLOW_STACK, out) for cpu, out in runs]
    if iterative:
        fixed, per = per_length(lengths[0], runs[0][0], lengths[1], runs[1][0])
    else:
        fixed, per = runs[0][0], 0.0
    return dict(
        measured_size=size if kind in SCALED else 1,
        lengths=tuple(lengths),
        cpu_s=tuple(r[0] for r in runs),
        fixed_cpu_s=fixed,
        per_length_cpu_s=per,
    )


def measure_units(
    settings: dict, units: pd.DataFrame, fraction: float = 0.02, seed: int = 0, synthetic: str = "tvae"
) -> pd.DataFrame:
    """CPU seconds of each kind of unit in ``units`` (:func:`notebook_units`), measured in this process.

    Generators are fitted on real training rows of each size the run uses and sample the
    profile's ``n_syn`` rows; attacks run on the profile's reference and test sets with
    rows of a TVAE fitted for the measurement as synthetic data, or, with
    ``synthetic="real"``, ``n_syn`` real rows drawn from the data set (an attack's cost
    depends on the sizes it is given, not on where the rows come from; for a machine
    without the ``ctgan`` package, with the TVAE and CTGAN units left out of ``units``).  Iterative units (the
    neural generators, BNAF, LOGAN 0, the published LOGAN D1) run twice, for 1 epoch (or
    step per record) and for ``fraction`` of their longest length in ``units`` (at least 2),
    giving a fixed part and a part per epoch (:func:`per_length`).  Each kind runs once on
    a few rows first, untimed (imports, compiled code).  Nothing is read from or written to
    the cache, and the seeds are the measurement's own.  CPU time is this process's
    (``time.process_time``, every thread of it), so it is the work whatever else loads the
    machine.

    Returns
    -------
    DataFrame
        ``kind, data, variant, measured_size, lengths, cpu_s, fixed_cpu_s, per_length_cpu_s``.
    """
    if not 0 < fraction <= 1:
        raise VrlibError(f"fraction must be in (0, 1] (got {fraction!r})")
    if synthetic not in ("tvae", "real"):
        raise VrlibError(f"synthetic must be 'tvae' or 'real' (got {synthetic!r})")
    cost_seed = derive_seed(seed, "domias cost")
    datas: dict = {}
    warm: set = set()  # kinds already run once, untimed
    rows = []
    # the generators first: TVAE's rows at n_mem serve as the attacks' synthetic data
    order = sorted(
        units.groupby(["kind", "data", "variant"], sort=False)["length"].max().items(),
        key=lambda item: item[0][0] not in GENERATORS,
    )
    with _in_this_process():
        for (kind, data, variant), full in order:
            if data not in datas:
                datas[data] = _Data(data, settings, cost_seed)
                if synthetic == "real":
                    d = datas[data]
                    pick = np.random.default_rng(cost_seed).choice(len(d.df), size=d.n_syn, replace=False)
                    d.synthetic = d.encode(d.df.iloc[pick].reset_index(drop=True), "syn")
            m = _measure_one(kind, datas[data], settings, int(variant), full, fraction, warm)
            rows.append(dict(kind=kind, data=data, variant=int(variant), **m))
    return pd.DataFrame(
        rows,
        columns=["kind", "data", "variant", "measured_size", "lengths", "cpu_s", "fixed_cpu_s", "per_length_cpu_s"],
    )


# --------------------------------------------------------------------------- prediction


def predicted_cost(units: pd.DataFrame, measured: pd.DataFrame, workers: int = 2) -> pd.DataFrame:
    """Predicted CPU hours of each section and attack group, from :func:`notebook_units` and :func:`measure_units`.

    Each unit costs :func:`unit_cpu_seconds` of its kind's measurement.  ``hours_on_workers``
    divides by ``workers``: a lower bound on the wall time, since the units spread over
    the workers at best.  A section whose every unit an earlier one made gets one row of
    zeros.

    Returns
    -------
    DataFrame
        ``section, what, units, unit_cpu_s`` (mean CPU seconds per unit), ``cpu_hours``,
        ``hours_on_workers``.

    Raises
    ------
    VrlibError
        When a unit's kind has no measurement.
    """
    merged = units.merge(measured, on=["kind", "data", "variant"], how="left")
    lacking = merged[merged.fixed_cpu_s.isna()]
    if len(lacking):
        first = lacking.iloc[0]
        raise VrlibError(
            f"no measured cost for {first.kind!r} on {first.data} (variant {first.variant}) in section "
            f"{first.section!r}; measure it with measure_units"
        )
    merged["cpu_s"] = [
        unit_cpu_seconds(r.fixed_cpu_s, r.per_length_cpu_s, r.length, r.size, r.measured_size)
        for r in merged.itertuples(index=False)
    ]
    rows = []
    for section in dict.fromkeys(units.section):
        part = merged[merged.section == section]
        for what, g in part.groupby("what", sort=False):
            cpu = float(g.cpu_s.sum())
            rows.append(dict(section=section, what=what, units=len(g), unit_cpu_s=cpu / len(g), cpu_s=cpu))
    out = pd.DataFrame(rows, columns=["section", "what", "units", "unit_cpu_s", "cpu_s"])
    out["cpu_hours"] = out.pop("cpu_s") / 3600
    out["hours_on_workers"] = out.cpu_hours / workers
    return out


def empty_sections(units: pd.DataFrame, sections) -> list[str]:
    """The ``sections`` that add no unit to the earlier ones (everything from the cache)."""
    return [s for s in check_sections(sections) if s not in set(units.section)]


def measure_notebook_cost(
    settings: dict,
    sections=SECTIONS,
    include_flow: bool = True,
    exclude_attacks=(),
    *,
    earlier=(),
    fraction: float = 0.02,
    seed: int = 0,
    workers: int = 2,
) -> pd.DataFrame:
    """:func:`predicted_cost` of a run of notebook 05: its units counted, measured and added up.

    Arguments as :func:`notebook_units` and :func:`measure_units`; sections that add nothing
    (:func:`empty_sections`) get a row ``what="nothing new"`` with zeros.
    """
    units = notebook_units(settings, sections, include_flow, exclude_attacks, earlier)
    cost = predicted_cost(units, measure_units(settings, units, fraction, seed), workers)
    nothing = [
        dict(section=s, what="nothing new", units=0, unit_cpu_s=0.0, cpu_hours=0.0, hours_on_workers=0.0)
        for s in empty_sections(units, sections)
    ]
    if nothing:
        cost = pd.concat([cost, pd.DataFrame(nothing)], ignore_index=True)
        order = {s: i for i, s in enumerate(SECTIONS)}
        cost = cost.sort_values("section", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)
    return cost


__all__ = [
    "SECTIONS",
    "KINDS",
    "GENERATORS",
    "GROUPS",
    "SCALED",
    "FLOW_STACK",
    "check_sections",
    "section_attacks",
    "unit_size",
    "notebook_units",
    "per_length",
    "unit_cpu_seconds",
    "measure_units",
    "predicted_cost",
    "empty_sections",
    "measure_notebook_cost",
]
