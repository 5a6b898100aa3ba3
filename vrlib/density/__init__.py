"""Density estimators for DOMIAS: log densities of points under a Gaussian KDE or a normalising flow.

DOMIAS scores a record by ``log p_G(x) - log p_R(x)``, so all that is needed from a
density estimator is ``fit(X) -> self`` and ``log_density(X) -> ndarray``, in log space
so that no ratio of two tiny densities is ever formed.

* :class:`GaussianKDE` (:mod:`vrlib.density.kde`) is scipy's ``gaussian_kde`` evaluated
  blockwise in log space, about four times faster.
* :class:`BNAF` (:mod:`vrlib.density.bnaf`) is a block neural autoregressive flow, the
  estimator of the DOMIAS paper.  It is the only one that needs PyTorch, so it is
  imported when first asked for: importing the KDE never imports torch.

:func:`check_matrix` (:mod:`vrlib.density.base`) is the input check they share.
"""

from __future__ import annotations

from vrlib.density.base import check_matrix
from vrlib.density.kde import GaussianKDE
from vrlib.errors import VrlibError

__all__ = ["GaussianKDE", "BNAF", "get_density", "check_matrix"]

_FLOWS = ("flow", "bnaf")


def get_density(name: str, **params):
    """A new density estimator: ``"kde"`` (:class:`GaussianKDE`) or ``"flow"`` (:class:`BNAF`)."""
    if name != "kde" and name not in _FLOWS:
        raise VrlibError(f"unknown density estimator {name!r}; choose 'kde' or 'flow'")
    estimator = GaussianKDE if name == "kde" else __getattr__("BNAF")
    try:
        return estimator(**params)
    except TypeError as exc:
        raise VrlibError(f"bad parameter for the {name!r} density estimator: {exc}") from None


def __getattr__(name: str):
    # BNAF on first use only, so that `import vrlib.density` does not import torch.
    if name == "BNAF":
        from vrlib.density.bnaf import BNAF

        return BNAF
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
