"""What every attack shares as a scikit-learn-style estimator: its constructor parameters.

An attack keeps each constructor argument as an attribute of the same name and sets
fitted state only in ``fit`` (names ending in ``_``), so its parameters can be read
back (:meth:`Attack.get_params`), changed (:meth:`Attack.set_params`) and used to build
an equal, unfitted attack: ``type(a)(**a.get_params())``.
"""

from __future__ import annotations

import inspect

from vrlib.errors import VrlibError

__all__ = ["Attack"]


class Attack:
    """Base of vrlib's attacks: ``get_params``, ``set_params`` and a ``repr`` from the constructor."""

    @classmethod
    def _param_names(cls) -> list[str]:
        return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]

    def get_params(self) -> dict:
        """The constructor parameters and their current values (scikit-learn style)."""
        return {k: getattr(self, k) for k in self._param_names()}

    def set_params(self, **params) -> "Attack":
        """Change constructor parameters (before ``fit``, or between calls that read them); returns self."""
        unknown = sorted(set(params) - set(self._param_names()))
        if unknown:
            raise VrlibError(
                f"{type(self).__name__} has no parameter(s) {unknown}; its parameters are {self._param_names()}"
            )
        for k, v in params.items():
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"
