"""What every record-level attack on numeric matrices shares: one column layout from ``fit`` to ``score``.

DOMIAS (:mod:`vrlib.attacks.domias`), LOGAN (:mod:`vrlib.attacks.logan`) and the distance
baselines (:mod:`vrlib.attacks.proximity`) follow one protocol: ``fit(synthetic, reference) ->
self`` and ``score(X) -> ndarray``, higher meaning "more likely a member".  Inputs are numpy
arrays or DataFrames of numeric columns; DataFrames are matched by column name.
"""

from __future__ import annotations

import numpy as np

from vrlib.attacks.base import Attack
from vrlib.density import check_matrix
from vrlib.errors import VrlibError

__all__ = ["PointwiseAttack"]


class PointwiseAttack(Attack):
    """Input checks shared by the DOMIAS family's attacks: one column layout from ``fit`` to ``score``."""

    uses_reference = True

    def _check_fit(self, synthetic, reference):
        self.feature_names_in_ = _column_names(synthetic)
        ref_names = _column_names(reference) if reference is not None else None
        if self.feature_names_in_ is not None and ref_names is not None:
            if set(ref_names) != set(self.feature_names_in_):
                raise VrlibError(
                    "synthetic and reference tables have different columns: "
                    f"only in synthetic {sorted(set(self.feature_names_in_) - set(ref_names))}, "
                    f"only in reference {sorted(set(ref_names) - set(self.feature_names_in_))}; "
                    "give both the same columns"
                )
            reference = reference[list(self.feature_names_in_)]
        syn = check_matrix(synthetic, "the synthetic data", min_rows=2)
        self.n_features_in_ = syn.shape[1]
        if reference is None:
            if self.uses_reference:
                raise VrlibError(f"{type(self).__name__} needs a reference set: pass fit(synthetic, reference)")
            return syn, None
        ref = check_matrix(reference, "the reference data", min_rows=2 if self.uses_reference else 0)
        if ref.shape[1] != syn.shape[1]:
            raise VrlibError(
                f"the reference data has {ref.shape[1]} column(s) but the synthetic data {syn.shape[1]}; "
                "give both the same columns"
            )
        return syn, ref

    def _check_score(self, X) -> np.ndarray:
        if not hasattr(self, "n_features_in_"):
            raise VrlibError(f"{type(self).__name__} is not fitted: call fit(synthetic, reference) first")
        names = _column_names(X)
        if names is not None and self.feature_names_in_ is not None:
            missing = sorted(set(self.feature_names_in_) - set(names))
            if missing:
                raise VrlibError(f"the records to score lack column(s) {missing} seen in fit")
            X = X[list(self.feature_names_in_)]
        return check_matrix(X, "the records to score", n_features=self.n_features_in_)


def _column_names(X):
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        return [str(c) for c in X.columns] if all(isinstance(c, str) for c in X.columns) else list(X.columns)
    return None
