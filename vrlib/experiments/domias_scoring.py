"""Scores of the DOMIAS family's attacks on settings of one experiment: fitted in parallel, cached by content.

A :class:`Setting` is what one attack run sees: the synthetic rows, the reference set and the
labelled test set of one seed.  :func:`score_settings` gives every attack's test scores on every
setting: the scores the cache holds are read back (namespace ``domias-scores``), ``p_R`` is fitted
once per reference set and estimator (and kept for later calls in the process, which score the
same reference set in turn: the sittings of Fig. 6, a notebook's sections), and one worker task per setting fits ``p_G`` (shared by
``domias_*`` and ``eq1_*``) and the other attacks.

The flows (BNAF) can be trained one by one or, under ``settings["flow_trainer"] = "ensemble"``
(or ``$VRLIB_FLOW_TRAINER=ensemble``, see :func:`flow_trainer`), all
those of a section that share a shape in stacks (:mod:`vrlib.density.bnaf_ensemble`): then the
plan fits every missing ``p_R`` and ``p_G`` flow first, each cached on its own (namespace
``bnaf-fits``, so an interrupted section keeps the flows it finished), and the settings' tasks
score with them.  A stacked fit rounds differently from a single one, so the trainer is part
of the score key: a score made one way is never read as the other's.

A score's key (:func:`score_key`) holds the exact arrays scored, every constructor parameter of
the attack and the code that shapes it: the attack's module, the density estimator it uses, and
this module, not the experiments' figure code, so that editing a figure keeps hours of BNAF fits.
"""

from __future__ import annotations

import math
import os
import time
from collections import OrderedDict

import numpy as np

from vrlib.attacks.domias import ATTACKS, DOMIAS, Eq1
from vrlib.attacks.registry import make_attack
from vrlib.audit.scores import density_view
from vrlib.cache import Cache, make_key, source_hash
from vrlib.density import base as density_base, bnaf, bnaf_ensemble, get_density, kde
from vrlib.errors import VrlibError
from vrlib.parallel import derive_seed, run
from vrlib.play.pointwise import score_pointwise

__all__ = [
    "ATTACKS",
    "ESTIMATOR_MODULES",
    "FLOW_TRAINERS",
    "Setting",
    "applies",
    "check_attacks",
    "flow_trainer",
    "score_key",
    "score_settings",
]

FLOW_TRAINERS = ("single", "ensemble")


def check_attacks(attacks) -> tuple:
    """``attacks`` as a tuple, each one of :data:`ATTACKS` (or a clear error)."""
    attacks = tuple(attacks)
    unknown = [a for a in attacks if a not in ATTACKS]
    if unknown:
        raise VrlibError(f"unknown attack(s) {unknown}; choose from {ATTACKS}")
    return attacks


def _attack_params(name: str, settings: dict, seed: int, n_test: int) -> dict:
    s = derive_seed(seed, "attack", name)
    if name.endswith("_flow"):
        return {"density_params": dict(settings["flow"]), "seed": s}
    if name == "logan_0":
        return {"epochs": settings["logan_epochs"], "seed": s}
    if name == "logan_d1":
        return {"seed": s}
    if name == "logan_d1_published":  # its batches and steps depend on the number of records scored
        return {"seed": s, "n_test": n_test}
    return {}


class Setting:
    """One attack setting: synthetic data, reference set and labelled test set of one seed.

    ``key`` is a hash of the exact arrays scored (synthetic, reference, test set and
    labels), so two settings share cached scores only when they score the same data
    (the first k rows of a longer draw are not a fresh draw of k rows);
    ``reference_key`` identifies the reference set alone, so that settings sharing it
    share ``p_R``.
    """

    def __init__(
        self,
        seed: int,
        synthetic: np.ndarray,
        reference: np.ndarray,
        reference_key: tuple,
        X: np.ndarray,
        labels: np.ndarray,
    ):
        self.seed, self.reference_key = seed, reference_key
        self.synthetic, self.reference, self.X, self.labels = synthetic, reference, X, labels
        self.key = make_key(
            kind="domias-setting",
            synthetic=np.ascontiguousarray(synthetic, np.float64),
            reference=np.ascontiguousarray(reference, np.float64),
            X=np.ascontiguousarray(X, np.float64),
            labels=np.asarray(labels, np.int64),
        )


def _density_params(estimator: str, settings: dict, seed: int, what: str) -> dict:
    if estimator != "flow":
        return {}
    return {**settings["flow"], "seed": derive_seed(seed, "density", what)}


def flow_trainer(settings: dict) -> str:
    """How the section's flows are trained: ``"single"`` (one by one) or ``"ensemble"`` (in stacks).

    ``settings["flow_trainer"]`` when the settings have it, else ``$VRLIB_FLOW_TRAINER``
    (so that a run can choose without a new profile setting), else ``"single"``.  Either
    way the choice is in the flow scores' keys.
    """
    trainer = settings.get("flow_trainer") or os.environ.get("VRLIB_FLOW_TRAINER") or "single"
    if trainer not in FLOW_TRAINERS:
        raise VrlibError(f"flow_trainer must be one of {FLOW_TRAINERS}, not {trainer!r} (check $VRLIB_FLOW_TRAINER)")
    return trainer


# p_R fitted by earlier calls in this process, by content (reference rows, estimator, parameters, code):
# calls that score one reference set in turn (the parts of a sitting, a notebook's sections) fit it once.
_REFERENCES: OrderedDict = OrderedDict()
_REFERENCES_KEPT = 16


def _reference_content(task: dict) -> str:
    module = ESTIMATOR_MODULES[task["estimator"]]
    return make_key(
        kind="p_R",
        reference=np.ascontiguousarray(task["reference"], np.float64),
        estimator=task["estimator"],
        params=task["params"],
        code=source_hash(get_density, density_base, module, _reference_task),
    )


def _reference_task(task: dict):
    """Fit ``p_R`` once for every setting that shares a reference set (a worker-process task)."""
    start = time.perf_counter()
    density = get_density(task["estimator"], **task["params"]).fit(task["reference"])
    return density, time.perf_counter() - start


def _setting_task(task: dict) -> dict:
    """Scores of the missing attacks of one setting (a worker-process task): ``{attack: (scores, meta)}``.

    ``meta`` holds the seconds the attack took to fit and score; a ``domias_*`` attack is
    charged the fit of the shared ``p_R`` too, and the first attack of a ``p_G`` shared by
    ``domias_*`` and ``eq1_*`` its fit.
    """
    setting, settings = task["setting"], task["settings"]
    out = {}
    p_g = {}
    fitted = task.get("synthetic_densities", {})  # flows fitted in stacks by the plan: (density, seconds)
    for name in task["attacks"]:
        start = time.perf_counter()
        seconds = 0.0
        if name.startswith(("domias_", "eq1_")):
            estimator = name.split("_", 1)[1]
            if estimator not in p_g:  # p_G is shared by domias_* and eq1_*; its fit is charged to the first
                if estimator in fitted:
                    p_g[estimator], seconds = fitted[estimator]
                else:
                    params = _density_params(estimator, settings, setting.seed, "syn")
                    p_g[estimator] = get_density(estimator, **params).fit(setting.synthetic)
            if name.startswith("domias_"):
                p_r, ref_seconds = task["reference_densities"][estimator]
                seconds += ref_seconds
                attack = DOMIAS(estimator, synthetic_density=p_g[estimator], reference_density=p_r)
            else:
                attack = Eq1(estimator, synthetic_density=p_g[estimator])
        else:
            attack = make_attack(name, **_attack_params(name, settings, setting.seed, len(setting.X)))
        scores = attack.fit(setting.synthetic, setting.reference).score(setting.X)
        out[name] = (scores, {"attack": name, "seconds": time.perf_counter() - start + seconds})
    return out


def applies(name: str, n_test: int, n_syn: int, n_ref: int) -> bool:
    """Whether the attack is defined on a setting of these sizes (records scored, synthetic, reference).

    The reference code's LOGAN D1 draws its batches from the first ``n_test`` rows of
    the stacked ``[synthetic; reference]`` array of ``2 · min(n_syn, n_ref)`` rows, so it
    cannot run when there are more records to score than that (Fig. 4's smallest sets).
    """
    return name != "logan_d1_published" or n_test <= 2 * min(n_syn, n_ref)


ESTIMATOR_MODULES = {"kde": kde, "flow": bnaf}  # the module of each density estimator, for the score keys


def score_key(setting_key: str, name: str, settings: dict, seed: int, n_test: int) -> str:
    params = _attack_params(name, settings, seed, n_test)
    # every constructor parameter, defaults included, so that a changed default is a new entry
    full = {k: v for k, v in make_attack(name, **params).get_params().items() if not k.endswith("_density")}
    estimator_code = ()
    if name.startswith(("domias_", "eq1_")):
        estimator = name.split("_", 1)[1]
        full["densities"] = {
            "syn": _density_params(estimator, settings, seed, "syn"),
            "ref": _density_params(estimator, settings, seed, "ref"),
        }
        estimator_code = (ESTIMATOR_MODULES[estimator],)  # only the estimator it uses: a BNAF change keeps KDE scores
        if estimator == "flow" and flow_trainer(settings) == "ensemble":
            full["densities"]["trainer"] = bnaf_ensemble.TRAINER
            estimator_code += (bnaf_ensemble,)
    # density_base: every attack checks its inputs with it; density_view: Adult's encoding (encode_adult)
    # lives there; score_pointwise: the loop that stores the scores
    code = source_hash(
        type(make_attack(name, **params)),
        get_density,
        density_base,
        *estimator_code,
        _setting_task,
        density_view,
        score_pointwise,
    )
    return make_key(setting=setting_key, attack=name, params=full, code=code)


def score_settings(
    settings_list: list[Setting],
    attacks,
    settings: dict,
    cache: bool = True,
    n_jobs: int | None = None,
    progress: bool = False,
) -> list[dict]:
    """Scores of every attack on every setting's test set, cached, fitted in parallel.

    Through :func:`vrlib.play.pointwise.score_pointwise` (namespace ``domias-scores``):
    the scores the cache holds are read; for the missing ``domias_*`` scores ``p_R`` is
    fitted once per reference set and estimator, in parallel; then one task per setting
    fits the synthetic-data densities (shared by ``domias_*`` and ``eq1_*``) and the other
    attacks, in parallel.

    Returns
    -------
    list of dict
        Per setting, ``{attack: (scores, seconds)}``; ``seconds`` is the time the attack
        took to fit and score when it was computed (read back from the cache later).
    """
    attacks = check_attacks(attacks)

    stacked = flow_trainer(settings) == "ensemble"

    def plan(missing: list[tuple[int, list[str]]]) -> list[dict]:
        # one p_R per (reference set, estimator) that a missing domias_* score needs
        ref_tasks, flow_jobs = {}, {}
        for i, names in missing:
            st = settings_list[i]
            for name in names:
                if not name.startswith(("domias_", "eq1_")):
                    continue  # the baselines fit no density
                est = name.split("_", 1)[1]
                if stacked and est == "flow":
                    flow_jobs.setdefault(("syn", i), (_density_params(est, settings, st.seed, "syn"), st.synthetic))
                    if name.startswith("domias_"):
                        flow_jobs.setdefault(
                            ("ref", st.reference_key),
                            (_density_params(est, settings, st.seed, "ref"), st.reference),
                        )
                elif name.startswith("domias_"):
                    ref_tasks.setdefault(
                        (st.reference_key, est),
                        {
                            "estimator": est,
                            "reference": st.reference,
                            "params": _density_params(est, settings, st.seed, "ref"),
                        },
                    )
        content = {k: _reference_content(t) for k, t in ref_tasks.items()}
        new = [k for k in ref_tasks if content[k] not in _REFERENCES]
        fitted = run(
            _reference_task, [ref_tasks[k] for k in new], n_jobs=n_jobs, desc="reference densities", progress=progress
        )
        ref_density = {k: _REFERENCES.get(content[k]) for k in ref_tasks}
        ref_density.update(zip(new, fitted))
        for k, density in ref_density.items():
            _REFERENCES[content[k]] = density
            _REFERENCES.move_to_end(content[k])
        while len(_REFERENCES) > _REFERENCES_KEPT:
            _REFERENCES.popitem(last=False)
        flows = bnaf_ensemble.fit_flows(
            list(flow_jobs.values()),
            cache=Cache(namespace="bnaf-fits") if cache else None,
            n_jobs=n_jobs,
            progress=progress,
        )
        flows = {job: (flow, flow.seconds_) for job, flow in zip(flow_jobs, flows)}
        tasks = []
        for i, names in missing:
            st = settings_list[i]
            refs = {est: ref_density[(rk, est)] for (rk, est) in ref_density if rk == st.reference_key}
            task = {"setting": st, "settings": settings, "attacks": names, "reference_densities": refs}
            if ("ref", st.reference_key) in flows:
                refs["flow"] = flows[("ref", st.reference_key)]
            if ("syn", i) in flows:
                task["synthetic_densities"] = {"flow": flows[("syn", i)]}
            tasks.append(task)
        return tasks

    scored = score_pointwise(
        settings_list,
        attacks,
        cache=Cache(namespace="domias-scores") if cache else None,
        plan=plan,
        key=lambda st, name: score_key(st.key, name, settings, st.seed, len(st.X)),
        n_records=lambda st: len(st.X),
        score=_setting_task,
        applies=lambda st, name: applies(name, len(st.X), len(st.synthetic), len(st.reference)),
        n_jobs=n_jobs,
        progress=progress,
    )
    return [
        {name: (scores, float(meta.get("seconds", math.nan))) for name, (scores, meta) in per.items()} for per in scored
    ]
