"""Every attack of vrlib by name, behind one contract.

An attack is one of two kinds:

``dataset`` (dataset level, one target at a time)
    ``fit(synthetic_datasets, labels, target) -> self`` on labelled shadow datasets (1 = the
    target was in the generator's training data), then ``score(synthetic_datasets)``: one
    number per dataset.
``record`` (record level)
    ``fit(release, reference) -> self`` on a synthetic release and a sample of the
    population (``fit(release)`` for the attacks that use no reference), then
    ``score(records)``: one number per record.

Higher scores always mean "more likely a member".  Attacks on tables take a
:class:`vrlib.data.Schema` as their ``schema`` parameter; the others read numeric
matrices (encode categorical columns first).  Every attack is a scikit-learn-style
estimator (:class:`vrlib.attacks.base.Attack`): parameters in ``__init__``, ``fit``
returns self, ``get_params`` gives back what built it.

:func:`make_attack` builds one by name from keyword parameters, :func:`attack_names`
lists the names; each entry of :data:`REGISTRY` says what the attack is.  Modules are
imported when an attack is built, so that listing the attacks never imports PyTorch.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from importlib import import_module

from vrlib.errors import VrlibError

__all__ = ["AttackSpec", "KINDS", "REGISTRY", "attack_names", "make_attack"]

KINDS = ("dataset", "record")


@dataclass(frozen=True)
class AttackSpec:
    """One registered attack.

    Parameters
    ----------
    name : str
    factory : str
        ``"module:Class"`` inside :mod:`vrlib.attacks`.
    kind : {"dataset", "record"}
        What the attack is fitted on and scores (see the module docstring).
    description : str
        One line: what the score is, and where it comes from.
    fixed : dict
        Constructor parameters the name sets (``domias_flow``: ``estimator="flow"``).
    """

    name: str
    factory: str
    kind: str
    description: str
    fixed: dict = field(default_factory=dict)

    def load(self) -> type:
        """The attack's class (imports its module)."""
        module, cls = self.factory.split(":")
        return getattr(import_module(f"vrlib.attacks.{module}"), cls)

    def parameters(self) -> list[str]:
        """The names of the class's constructor parameters (imports its module)."""
        return [p for p in inspect.signature(self.load().__init__).parameters if p != "self"]

    @property
    def needs_schema(self) -> bool:
        """Whether the attack reads tables: its constructor takes a ``schema`` (imports its module)."""
        return "schema" in self.parameters()

    @property
    def uses_reference(self) -> bool:
        """Whether a record-level attack is fitted on a reference sample besides the release (imports its module)."""
        return self.kind == "record" and bool(getattr(self.load(), "uses_reference", False))

    def build(self, **params):
        """A new, unfitted attack with ``params`` on top of :attr:`fixed`."""
        clash = sorted(set(self.fixed) & set(params))
        if clash:
            alike = [s.name for s in REGISTRY.values() if s.factory == self.factory and s.name != self.name]
            raise VrlibError(
                f"attack {self.name!r} fixes {clash} ({self.fixed}); use another name instead "
                f"({', '.join(alike) or 'none has other values'})"
            )
        accepted = self.parameters()
        unknown = sorted(set(params) - set(accepted))
        if unknown:
            raise VrlibError(f"bad parameter(s) {unknown} for attack {self.name!r}; it takes {accepted}")
        if "schema" in accepted and params.get("schema") is None:
            raise VrlibError(f"attack {self.name!r} reads tables: pass schema=<vrlib.data.Schema> of their columns")
        return self.load()(**self.fixed, **params)


_ENTRIES = [
    AttackSpec("query", "query:QueryAttack", "dataset",
               "random forest on counting queries about the target answered by each dataset (achilles §2)"),
    AttackSpec("attention", "attention.attack:AttentionAttack", "dataset",
               "target attention network over the records closest to the target (achilles appendix A)"),
    AttackSpec("closeness", "closest:TargetCloseness", "dataset",
               "minus the mean distance from the target to its nearest records of each dataset; nothing learnt "
               "(the audit's model-seeded game)"),
    AttackSpec("domias_kde", "domias:DOMIAS", "record",
               "log p_G(x) - log p_R(x), Gaussian KDEs of release and reference (DOMIAS Eq. 2)",
               fixed={"estimator": "kde"}),
    AttackSpec("domias_flow", "domias:DOMIAS", "record",
               "log p_G(x) - log p_R(x), BNAF flows of release and reference (DOMIAS Eq. 2)",
               fixed={"estimator": "flow"}),
    AttackSpec("eq1_kde", "domias:Eq1", "record",
               "log p_G(x) alone, Gaussian KDE of the release (DOMIAS Eq. 1 ablation)",
               fixed={"estimator": "kde"}),
    AttackSpec("eq1_flow", "domias:Eq1", "record",
               "log p_G(x) alone, BNAF flow of the release (DOMIAS Eq. 1 ablation)",
               fixed={"estimator": "flow"}),
    AttackSpec("logan_0", "logan:LOGAN0", "record",
               "logit of the discriminator of a small GAN trained on the release (LOGAN 0, Hayes et al. 2019)"),
    AttackSpec("logan_d1", "logan:LOGAND1", "record",
               "logit of an MLP told released from reference records (LOGAN D1, Hayes et al. 2019)"),
    AttackSpec("logan_d1_published", "logan:LOGAND1Published", "record",
               "LOGAN D1 trained as the DOMIAS reference code trains it (one class at the paper's sizes)"),
    AttackSpec("mc", "proximity:MonteCarlo", "record",
               "share of released records within the median nearest distance (MC, Hilprecht et al. 2019)"),
    AttackSpec("gan_leaks", "proximity:GANLeaks", "record",
               "exp(-squared distance to the nearest released record) (GAN-Leaks 0, Chen et al. 2019)"),
    AttackSpec("gan_leaks_cal", "proximity:GANLeaksCal", "record",
               "nearest reference minus nearest released squared distance (GAN-Leaks CAL, Chen et al. 2019)"),
    AttackSpec("copies", "collision:Copies", "record",
               "how many released records equal the record (verbatim copies)"),
    AttackSpec("distance_ratio", "closest:DistanceRatio", "record",
               "log of the nearest reference over the nearest released distance (eq. 6, p = 2, encoded tables)"),
    AttackSpec("tablegan_mca", "collision:TableGanMCA", "record",
               "probability that a released record copies a training record; scores the release's own records "
               "(TableGAN-MCA, Hu et al. 2021)"),
]  # fmt: skip

REGISTRY: dict[str, AttackSpec] = {spec.name: spec for spec in _ENTRIES}


def attack_names(kind: str | None = None) -> tuple[str, ...]:
    """The registered attacks' names, all or those of one ``kind`` (``"dataset"`` or ``"record"``)."""
    if kind is not None and kind not in KINDS:
        raise VrlibError(f"unknown kind of attack {kind!r}; choose one of {KINDS} (or None for all)")
    return tuple(name for name, spec in REGISTRY.items() if kind is None or spec.kind == kind)


def make_attack(name: str, **params):
    """A new, unfitted attack by name.

    Parameters
    ----------
    name : str
        One of :func:`attack_names`.
    **params
        Constructor parameters: ``schema`` for the attacks on tables, e.g. ``seed=1``,
        ``n_queries=1000`` (query), ``density_params={"epochs": 20}`` (a flow).

    Returns
    -------
    An attack of the entry's kind (see the module docstring).
    """
    if name not in REGISTRY:
        raise VrlibError(f"unknown attack {name!r}; choose one of {list(REGISTRY)}")
    return REGISTRY[name].build(**params)
