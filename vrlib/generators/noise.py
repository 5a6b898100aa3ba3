"""Additive noise: the training records themselves, blurred (DOMIAS's privacy-utility baseline).

DOMIAS (van Breugel et al. 2023, §5 and Fig. 6) compares generators with "sampling
from training data and adding Gaussian noise", at noise levels 0.7 … 3.9 on
standardised data.  Here a synthetic record is a training record whose continuous
values get Gaussian noise of standard deviation ``scale`` in standardised units
(``scale`` × the column's standard deviation in its own units) and whose
categorical values are, each independently with probability ``resample_prob``,
replaced by a draw from that column's training frequencies.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

from vrlib.errors import VrlibError
from vrlib.generators.base import Generator


class AdditiveNoise(Generator):
    """Training records plus noise.

    Records are used as evenly as possible: ``n`` rows take every training record
    ``n // len(train)`` times plus a random subset of the rest, in random order (so
    ``n = len(train)`` releases each record exactly once, blurred).

    Parameters
    ----------
    scale : float
        Standard deviation of the Gaussian noise on standardised continuous values (≥ 0).
    resample_prob : float
        Probability, per categorical cell, of replacing the value by a draw from
        the column's training distribution (in [0, 1]).
    """

    def __init__(self, scale: float = 1.0, resample_prob: float = 0.1):
        self.scale = scale
        self.resample_prob = resample_prob
        self._check_params()

    def _check_params(self) -> None:
        s = self.scale
        if isinstance(s, bool) or not isinstance(s, numbers.Real) or not math.isfinite(s) or s < 0:
            raise VrlibError(f"scale must be a finite number >= 0 (noise std in standardised units), got {s!r}")
        p = self.resample_prob
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0 <= p <= 1:
            raise VrlibError(f"resample_prob must be a probability in [0, 1], got {p!r}")

    def _fit(self, df: pd.DataFrame, rng: np.random.Generator) -> None:
        self._values = {}
        self.std_ = {}
        self.frequencies_ = {}
        for c in self.columns_:
            if c in self.schema_.categorical:
                codes = df[c].cat.codes.to_numpy().astype(np.int64)
                self._values[c] = codes
                k = len(self.dtypes_[c].categories)
                self.frequencies_[c] = np.bincount(codes, minlength=k) / len(codes)
            else:
                x = df[c].to_numpy(dtype=np.float64, copy=True)  # not a view of the caller's table
                self._values[c] = x
                self.std_[c] = float(x.std())  # population std; 0 for a constant column (no noise)

    def _sample(self, n: int, rng: np.random.Generator) -> dict:
        m = self.n_train_
        rows = np.concatenate([np.tile(np.arange(m), n // m), rng.permutation(m)[: n % m]])
        rows = rng.permutation(rows)
        out = {}
        for c in self.columns_:
            v = self._values[c][rows]
            if c in self.schema_.categorical:
                redraw = rng.random(n) < self.resample_prob
                cdf = np.cumsum(self.frequencies_[c])
                cdf[-1] = 1.0
                fresh = np.searchsorted(cdf, 1.0 - rng.random(n), side="left")
                out[c] = np.where(redraw, fresh, v)
            else:
                out[c] = v + rng.normal(0.0, 1.0, n) * (self.scale * self.std_[c])
        return out


__all__ = ["AdditiveNoise"]
