"""DOMIAS (and its Eq. 1 ablation), and the family of attacks the DOMIAS paper compares, by name.

The one idea (van Breugel et al., AISTATS 2023, Eq. 2): a generator that overfits puts
more mass near its training records than the population does, so the density ratio
``p_G(x) / p_R(x)`` -- ``p_G`` estimated on the synthetic data, ``p_R`` on a reference
sample of the population -- is high for members.  Scores are computed as
``log p_G(x) - log p_R(x)``, so no ratio of two tiny densities is ever formed.

The baselines live in their own modules (:mod:`vrlib.attacks.logan`,
:mod:`vrlib.attacks.proximity`) and are imported here too, so that the whole family is at hand
from one place: :data:`ATTACKS` names them and :func:`get_attack` builds them.  Every one follows
one protocol (:class:`vrlib.attacks.pointwise.PointwiseAttack`): ``fit(synthetic, reference) ->
self`` and ``score(X) -> ndarray`` with higher meaning "more likely a member".  Inputs are numpy
arrays or DataFrames of numeric (continuous) columns; encode categorical columns first.

========================  ===================================================================
name                      score of a record x
========================  ===================================================================
``domias_kde``            ``log p_G(x) - log p_R(x)``, Gaussian KDEs (Scott's bandwidth)
``domias_flow``           the same with BNAF flows
``eq1_kde``               ``log p_G(x)`` only (the paper's Eq. 1 ablation), KDE
``eq1_flow``              the same with a BNAF flow
``logan_0``               discriminator of a small GAN trained on the synthetic data (Hayes et al. 2019)
``logan_d1``              MLP classifier's logit of P(synthetic | x), synthetic vs reference (Hayes et al. 2019, D1)
``logan_d1_published``    the same network trained as the DOMIAS reference code trains it: its
                          batches come from the synthetic rows only at the paper's sizes
``mc``                    fraction of synthetic points within ε of x; ε = median over the scored
                          records of their nearest-synthetic distance (Hilprecht et al. 2019)
``gan_leaks``             ``exp(-min_s ||x - s||^2)`` over synthetic s (Chen et al. 2019, full black box)
``gan_leaks_cal``         ``min_r ||x - r||^2 - min_s ||x - s||^2`` (r in the reference set): the log of
                          Chen et al.'s calibrated ``exp(-d_syn) / exp(-d_ref)``
========================  ===================================================================

Distances (``mc``, ``gan_leaks``, ``gan_leaks_cal``) are squared Euclidean by default
(:mod:`vrlib.attacks.proximity` says why).
"""

from __future__ import annotations

import numpy as np

from vrlib.attacks.logan import LOGAN0, LOGAND1, LOGAND1Published
from vrlib.attacks.pointwise import PointwiseAttack
from vrlib.attacks.proximity import GANLeaks, GANLeaksCal, MonteCarlo
from vrlib.attacks.registry import REGISTRY, make_attack
from vrlib.density import get_density
from vrlib.errors import VrlibError

__all__ = [
    "ATTACKS",
    "DOMIAS",
    "Eq1",
    "LOGAN0",
    "LOGAND1",
    "LOGAND1Published",
    "MonteCarlo",
    "GANLeaks",
    "GANLeaksCal",
    "get_attack",
]


def _density(estimator: str, params: dict | None, seed: int):
    params = dict(params or {})
    if estimator in ("flow", "bnaf"):
        params.setdefault("seed", seed)
    return get_density(estimator, **params)


class DOMIAS(PointwiseAttack):
    """DOMIAS (Eq. 2): ``log p_G(x) - log p_R(x)``.

    Parameters
    ----------
    estimator : {"kde", "flow"}
        Density estimator for both densities (see :mod:`vrlib.density`).
    density_params : dict, optional
        Passed to the estimator (e.g. ``{"epochs": 20, "batch_size": 256}`` for the flow).
    seed : int
        Seeds the flows (unless ``density_params`` holds a ``seed``).
    synthetic_density, reference_density : fitted estimator, optional
        Reuse densities fitted elsewhere (e.g. one ``p_R`` for every generator of an
        experiment); ``fit`` then fits only what is missing.

    Attributes
    ----------
    synthetic_density_, reference_density_ : fitted estimators
    """

    def __init__(
        self,
        estimator: str = "kde",
        density_params: dict | None = None,
        seed: int = 0,
        synthetic_density=None,
        reference_density=None,
    ):
        self.estimator = estimator
        self.density_params = density_params
        self.seed = seed
        self.synthetic_density = synthetic_density
        self.reference_density = reference_density

    def fit(self, synthetic, reference) -> "DOMIAS":
        """Fit ``p_G`` on ``synthetic`` and ``p_R`` on ``reference`` (both (n, d), same columns)."""
        syn, ref = self._check_fit(synthetic, reference)
        self.synthetic_density_ = self.synthetic_density or _density(
            self.estimator, self.density_params, self.seed
        ).fit(syn)
        self.reference_density_ = self.reference_density or _density(
            self.estimator, self.density_params, self.seed
        ).fit(ref)
        return self

    def score(self, X) -> np.ndarray:
        """``log p_G(x) - log p_R(x)`` for each row of ``X``."""
        X = self._check_score(X)
        return self.synthetic_density_.log_density(X) - self.reference_density_.log_density(X)


class Eq1(PointwiseAttack):
    """The Eq. 1 ablation: ``log p_G(x)`` alone (no reference set).

    Parameters are those of :class:`DOMIAS` without the reference density; the
    reference set passed to ``fit`` is checked but unused (it may be ``None``).
    """

    uses_reference = False

    def __init__(
        self, estimator: str = "kde", density_params: dict | None = None, seed: int = 0, synthetic_density=None
    ):
        self.estimator = estimator
        self.density_params = density_params
        self.seed = seed
        self.synthetic_density = synthetic_density

    def fit(self, synthetic, reference=None) -> "Eq1":
        syn, _ = self._check_fit(synthetic, reference)
        self.synthetic_density_ = self.synthetic_density or _density(
            self.estimator, self.density_params, self.seed
        ).fit(syn)
        return self

    def score(self, X) -> np.ndarray:
        """``log p_G(x)`` for each row of ``X``."""
        X = self._check_score(X)
        return self.synthetic_density_.log_density(X)


# --------------------------------------------------------------------------- by name

# The modules of the family; its attacks are named in :mod:`vrlib.attacks.registry`.
FAMILY_MODULES = ("domias", "logan", "proximity")
ATTACKS = tuple(name for name, spec in REGISTRY.items() if spec.factory.split(":")[0] in FAMILY_MODULES)


def get_attack(name: str, **params):
    """A new, unfitted attack of the DOMIAS family by name: :func:`vrlib.attacks.registry.make_attack` for :data:`ATTACKS`.

    Parameters
    ----------
    name : str
        One of ``domias_kde``, ``domias_flow``, ``eq1_kde``, ``eq1_flow``, ``logan_0``,
        ``logan_d1``, ``logan_d1_published``, ``mc``, ``gan_leaks``, ``gan_leaks_cal``.
    **params
        Constructor parameters (e.g. ``density_params={"epochs": 20}`` for a flow,
        ``epochs=50`` for LOGAN 0, ``seed=1``).
    """
    if name not in ATTACKS:
        raise VrlibError(f"unknown attack {name!r}; choose one of {sorted(ATTACKS)}")
    return make_attack(name, **params)
