"""DOMIAS Fig. 6 in parts: one part per seed and generator setting, saved as it finishes, the figure's rows from them.

Fig. 6 at the paper's sizes (29 generator settings × 8 seeds, every attack, BNAF) takes many
CPU hours, more than one run of a machine may have.  :func:`fig6_parts` cuts it into parts in a
fixed order: seed by seed (so that a sitting fits each seed's reference density ``p_R`` once
and a stopped run leaves whole seeds done), within a seed the settings as
:func:`vrlib.experiments.domias.fig6_configs` lists them.  :func:`run_sitting` makes the parts
not yet saved and saves each one (:mod:`vrlib.sittings`) into ``<figures>/<profile>/parts/domias_fig6/``
(``figures/paper/…`` and ``figures/quick/…`` are committed; a ``smoke`` run's go to
``results/smoke/figures/…``, as every smoke output does, :func:`vrlib.report.output_dirs`), so a fresh
clone continues from the repository.  :func:`assemble` gives :func:`vrlib.experiments.domias.fig6`'s
rows from the parts once every one is saved.

A part's key (:func:`part_key`) covers its settings (profile, seed, generator, its parameters,
the sizes, the attacks, BNAF's settings and trainer) and the code that makes it: the
generator's class, every attack's class, the density estimators, the scoring, synthesis and
metrics modules, the Fig. 6 functions of :mod:`~vrlib.experiments.domias` (by their own source,
so that editing another figure's code keeps the parts) and this module.  A part saved under
another key is made again.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import math
import sys
import textwrap
import time
from importlib import import_module
from pathlib import Path

import pandas as pd

from vrlib import metrics, report, sittings, synthesis
from vrlib.attacks.registry import REGISTRY as ATTACK_REGISTRY
from vrlib.cache import make_key, source_hash
from vrlib.density import base as density_base, bnaf_ensemble
from vrlib.errors import VrlibError
from vrlib.experiments import domias, domias_scoring
from vrlib.experiments.profiles import profile_settings
from vrlib.parallel import width as parallel_width

__all__ = ["EXPERIMENT", "parts_folder", "fig6_parts", "part_key", "run_sitting", "status", "assemble"]

EXPERIMENT = "domias_fig6"
# The profile settings a Fig. 6 point depends on besides its generator's (fig6_configs reads those).
SHARED = ("n_mem", "n_ref", "n_syn", "n_holdout", "domain_bins", "noise_values_are", "logan_epochs")
# The functions of vrlib.experiments.domias that make a Fig. 6 point.
_FIG6_CODE = (
    domias.fig6,
    domias.fig6_configs,
    domias.california,
    domias.split,
    domias.synthesize,
    domias.noise_sigma,
    domias.public_domain,
    domias._metric_row,
    domias._test_order,
    domias._test_set,
    domias._california_setting,
)


def _functions_hash(*functions) -> str:
    """SHA-256 of the syntax trees of these functions' own source (not their modules')."""
    h = hashlib.sha256()
    for f in functions:
        h.update(ast.dump(ast.parse(textwrap.dedent(inspect.getsource(f)))).encode())
    return h.hexdigest()


def _generator_class(name: str) -> type:
    from vrlib.generators import REGISTRY

    module, cls = REGISTRY[name].split(":")
    return getattr(import_module(f"vrlib.generators.{module}"), cls)


def _code(generator: str, attacks: tuple, trainer: str) -> str:
    estimators = {a.split("_", 1)[1] for a in attacks if a.startswith(("domias_", "eq1_"))}
    modules = [domias_scoring.ESTIMATOR_MODULES[e] for e in sorted(estimators)]
    if "flow" in estimators and trainer == "ensemble":
        modules.append(bnaf_ensemble)
    files = source_hash(
        _generator_class(generator),
        *(ATTACK_REGISTRY[a].load() for a in attacks),
        density_base,
        *modules,
        domias_scoring,
        synthesis,
        metrics,
        sys.modules[__name__],
    )
    return make_key(files=files, functions=_functions_hash(*_FIG6_CODE))


def part_key(settings: dict, code: str) -> str:
    """The key a part is saved under: its settings and the hash of the code that makes it."""
    return make_key(kind=EXPERIMENT, settings=settings, code=code)


def _plain(value):
    """JSON-ready settings: tuples as lists, NaN as None."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _slug(label: str) -> str:
    """A file-name form of a Fig. 6 label: ``ADS-GAN λ=0.2`` → ``ADS-GAN_lambda0.2``."""
    for a, b in (("σ²", "var"), ("σ", "sd"), ("λ", "lambda"), ("ε", "eps"), ("=", ""), (" ", "_")):
        label = label.replace(a, b)
    return label


def _settings(profile: str, overrides: dict) -> dict:
    return profile_settings(domias.FAMILY, profile, **overrides)


def fig6_parts(profile: str, **overrides) -> list[sittings.Part]:
    """Every part of Fig. 6 under ``profile`` (with ``overrides`` of its settings), in the order they are made.

    A part is one seed and one point of :func:`vrlib.experiments.domias.fig6_configs`; its name
    ``s<seed>-<label>`` names its files, its group is the generator (parts of one generator cost
    alike).
    """
    s = _settings(profile, overrides)
    attacks = domias_scoring.check_attacks(s["fig6_attacks"])
    trainer = domias_scoring.flow_trainer(s)
    shared = {k: s[k] for k in SHARED}
    if any(a.endswith("_flow") for a in attacks):
        shared["flow"] = dict(s["flow"])
        shared["flow_trainer"] = trainer
    codes = {}
    parts = []
    for seed in s["seeds"]:
        for label, gen, params, priv in domias.fig6_configs(s):
            if gen not in codes:
                codes[gen] = _code(gen, attacks, trainer)
            settings = _plain(
                {
                    "experiment": EXPERIMENT,
                    "profile": profile,
                    "seed": int(seed),
                    "label": label,
                    "generator": gen,
                    "params": params,
                    "privacy_param": priv,
                    "attacks": attacks,
                    **shared,
                }
            )
            name = f"s{int(seed)}-{_slug(label)}"
            parts.append(sittings.Part(name, part_key(settings, codes[gen]), settings, group=gen))
    return parts


def parts_folder(profile: str, figures_dir=None) -> Path:
    """Where ``profile``'s parts are saved: ``<figures of the profile>/parts/domias_fig6``.

    ``figures_dir`` defaults to the project's ``figures/``; a ``smoke`` run aimed there is
    sent to ``results/smoke/figures`` (:func:`vrlib.report.output_dirs`).
    """
    root = report.PROJECT_ROOT / "figures" if figures_dir is None else Path(figures_dir)
    return report.output_dirs(profile, root)[0] / "parts" / EXPERIMENT


def _maker(profile: str, overrides: dict, n_jobs, cache: bool, progress: bool):
    def make(batch: list[sittings.Part]) -> dict:
        points = [(p.settings["seed"], p.settings["label"]) for p in batch]
        rows = domias.fig6(profile, cache=cache, n_jobs=n_jobs, progress=progress, points=points, **overrides)
        out = {}
        for p, (seed, label) in zip(batch, points):
            out[p.name] = rows[(rows.seed == seed) & (rows.generator == label)].reset_index(drop=True)
        return out

    return make


def _info() -> dict:
    return {"commit": report.commit_id(), "machine": report.machine()}


def run_sitting(
    profile: str,
    budget_min: float | None = None,
    figures_dir=None,
    n_jobs: int | None = None,
    cache: bool = True,
    max_parts: int | None = None,
    progress: bool = False,
    clock=time.monotonic,
    out=print,
    **overrides,
) -> dict:
    """One sitting of Fig. 6 under ``profile``: make the parts not yet saved, save each, stop before the budget ends.

    Parameters
    ----------
    profile : {"smoke", "quick", "paper"}
    budget_min : float, optional
        Minutes the sitting may take (None: until every part is saved).
    figures_dir : path-like, optional
        The figures folder whose ``<profile>/parts/domias_fig6`` holds the parts (see :func:`parts_folder`).
    n_jobs : int, optional
        Worker processes; as many parts are made at once.
    cache : bool
        Use the cache of synthetic data and scores too (the parts never depend on it).
    max_parts : int, optional
        Stop after this many parts.
    **overrides
        Profile settings replaced (tests; the parts' keys record them).

    Returns
    -------
    dict
        As :func:`vrlib.sittings.run_sitting`.
    """
    if budget_min is not None and not budget_min > 0:
        raise VrlibError(f"budget_min must be > 0 minutes, got {budget_min}")
    parts = fig6_parts(profile, **overrides)
    store = sittings.PartStore(parts_folder(profile, figures_dir))
    return sittings.run_sitting(
        parts,
        store,
        _maker(profile, overrides, n_jobs, cache, progress),
        budget_s=None if budget_min is None else 60.0 * budget_min,
        width=parallel_width(n_jobs),
        max_parts=max_parts,
        info=_info,
        clock=clock,
        out=out,
    )


def status(profile: str, figures_dir=None, **overrides) -> dict:
    """How far Fig. 6 is under ``profile``: ``total``, ``done``, and ``left`` (part names, in order)."""
    parts = fig6_parts(profile, **overrides)
    store = sittings.PartStore(parts_folder(profile, figures_dir))
    left = [p.name for p in parts if store.state(p) != "done"]
    return {"total": len(parts), "done": len(parts) - len(left), "left": left, "folder": str(store.folder)}


def assemble(profile: str, figures_dir=None, **overrides) -> pd.DataFrame | None:
    """Fig. 6's rows (as :func:`vrlib.experiments.domias.fig6` gives them) from the saved parts, in order.

    Returns None while a part is missing or not current (:func:`status` says which).
    """
    parts = fig6_parts(profile, **overrides)
    store = sittings.PartStore(parts_folder(profile, figures_dir))
    if any(store.state(p) != "done" for p in parts):
        return None
    return pd.concat([store.read(p) for p in parts], ignore_index=True)
