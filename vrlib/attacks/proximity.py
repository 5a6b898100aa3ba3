"""Distance baselines of DOMIAS: a record is a member when it lies close to the released records.

``MonteCarlo`` (MC, Hilprecht et al. 2019) counts released records within a radius;
``GANLeaks`` (GAN-Leaks 0, Chen et al. 2019) uses the distance to the nearest released record,
and ``GANLeaksCal`` subtracts it from the distance to the nearest reference record.  Distances
are squared Euclidean by default, as in GAN-Leaks and the DOMIAS reference implementation (for
``gan_leaks`` and ``mc`` only the ranking matters, which squaring keeps; for ``gan_leaks_cal`` it
does not, hence the explicit ``squared``).  Nearest neighbours come from scikit-learn's tree
searches, never a full distance matrix.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.neighbors import KDTree, NearestNeighbors

from vrlib.attacks.pointwise import PointwiseAttack
from vrlib.errors import VrlibError

__all__ = ["GANLeaks", "GANLeaksCal", "MonteCarlo"]


class MonteCarlo(PointwiseAttack):
    """MC (Hilprecht et al. 2019): share of synthetic points within ``ε`` of ``x``.

    ``ε`` follows Hilprecht et al.'s median heuristic, as the DOMIAS reference code does:
    the median, over the records being scored, of their distance to the nearest
    synthetic point.  The scores of a call therefore depend on the whole batch; score the
    full test set in one call.  A number fixes ``ε`` instead.  A synthetic point counts
    when its distance is strictly below ``ε``, as in the reference code (``strict=False``
    counts ``≤ ε``: with the median heuristic it adds the nearest point of the records
    whose nearest distance is exactly the median).

    Parameters
    ----------
    epsilon : "median" or float
        The neighbourhood radius (in the units of ``squared``).
    squared : bool
        Squared Euclidean distances (the reference code's) or plain ones; the counts are
        the same for the median heuristic either way.
    strict : bool
        Count distances ``< ε`` (default, the reference code's) or ``≤ ε``.

    Attributes
    ----------
    epsilon_ : float
        The radius used by the last call of :meth:`score`.
    """

    uses_reference = False

    def __init__(self, epsilon="median", squared: bool = True, strict: bool = True):
        self.epsilon = epsilon
        self.squared = squared
        self.strict = strict

    def fit(self, synthetic, reference=None) -> "MonteCarlo":
        syn, _ = self._check_fit(synthetic, reference)
        if not (self.epsilon == "median" or (isinstance(self.epsilon, (int, float)) and self.epsilon > 0)):
            raise VrlibError(f"epsilon must be 'median' or a positive number, got {self.epsilon!r}")
        self.synthetic_ = syn
        self.tree_ = KDTree(syn)
        return self

    def score(self, X) -> np.ndarray:
        """Fraction of synthetic points at distance < ε (``strict``) or ≤ ε of each row of ``X``."""
        X = self._check_score(X)
        if self.epsilon == "median":
            nearest = self.tree_.query(X, k=1)[0][:, 0]
            eps = float(np.median(nearest**2 if self.squared else nearest))
        else:
            eps = float(self.epsilon)
        self.epsilon_ = eps
        radius = math.sqrt(eps) if self.squared else eps
        if self.strict:  # the tree counts distances <= r; the largest float below r makes it < r
            radius = float(np.nextafter(radius, 0.0))
        counts = self.tree_.query_radius(X, r=radius, count_only=True)
        return counts / len(self.synthetic_)


class GANLeaks(PointwiseAttack):
    """GAN-Leaks 0 (Chen et al. 2019, full black box): ``exp(-min_s d(x, s))`` over synthetic ``s``.

    Parameters
    ----------
    squared : bool
        ``d`` is the squared Euclidean distance (default, as in GAN-Leaks) or the plain one.
    """

    uses_reference = False

    def __init__(self, squared: bool = True):
        self.squared = squared

    def fit(self, synthetic, reference=None) -> "GANLeaks":
        syn, _ = self._check_fit(synthetic, reference)
        self.neighbors_ = NearestNeighbors(n_neighbors=1).fit(syn)
        return self

    def score(self, X) -> np.ndarray:
        X = self._check_score(X)
        d = self.neighbors_.kneighbors(X)[0][:, 0]
        return np.exp(-(d**2 if self.squared else d))


class GANLeaksCal(PointwiseAttack):
    """GAN-Leaks CAL (Chen et al. 2019): the GAN-Leaks distance calibrated by the reference set.

    The score is ``d_ref(x) - d_syn(x)``, the log of ``exp(-d_syn) / exp(-d_ref)``, where
    ``d_syn`` and ``d_ref`` are the distances to the nearest synthetic and reference
    record.  Chen et al. calibrate with a reference generator trained on reference data.
    The DOMIAS reference code's ``GAN_leaks_cal`` takes the calibration set as an argument
    (its comment prefers ``D_ref`` itself), but its evaluation script passes
    ``|D_ref|`` rows sampled from the CTGAN it trains on the *synthetic* data for LOGAN 0,
    so the paper's CAL calibrates against a second model of the synthetic data, not of the
    population.  We use ``D_ref`` itself: the calibration Chen et al. intend, without the
    noise of a second generator.

    Parameters
    ----------
    squared : bool
        Squared Euclidean distances (default) or plain ones.
    """

    def __init__(self, squared: bool = True):
        self.squared = squared

    def fit(self, synthetic, reference) -> "GANLeaksCal":
        syn, ref = self._check_fit(synthetic, reference)
        self.synthetic_neighbors_ = NearestNeighbors(n_neighbors=1).fit(syn)
        self.reference_neighbors_ = NearestNeighbors(n_neighbors=1).fit(ref)
        return self

    def score(self, X) -> np.ndarray:
        X = self._check_score(X)
        d_syn = self.synthetic_neighbors_.kneighbors(X)[0][:, 0]
        d_ref = self.reference_neighbors_.kneighbors(X)[0][:, 0]
        if self.squared:
            d_syn, d_ref = d_syn**2, d_ref**2
        return d_ref - d_syn
