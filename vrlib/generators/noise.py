"""Additive noise: the training records themselves, blurred (DOMIAS's privacy-utility baseline).

DOMIAS (van Breugel et al. 2023, §5 and Fig. 6) compares generators with "sampling
from training data and adding Gaussian noise", at noise levels 0.7 … 3.9 on
standardised data.  Here a synthetic record is a training record whose continuous
values get Gaussian noise of standard deviation ``scale`` in the units of the table it
is given (standardised units when the table was standardised with public statistics,
as DOMIAS's California table is) and whose categorical values are, each independently
with probability ``resample_prob``, replaced by a draw from that column's training
frequencies.  The noise never depends on the training set's own spread unless
``training_std=True`` asks for it (σ = ``scale`` × the column's standard deviation in
the training rows, which varies from one training set to the next: on a 500-row sample
of California a few outliers change it many times over).
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from vrlib.generators.base import Generator
from vrlib.params import check_number, check_probability


class AdditiveNoise(Generator):
    """Training records plus noise.

    Records are used as evenly as possible: ``n`` rows take every training record
    ``n // len(train)`` times plus a random subset of the rest, in random order (so
    ``n = len(train)`` releases each record exactly once, blurred).

    Parameters
    ----------
    scale : float
        Standard deviation of the Gaussian noise on continuous values, in the table's
        units (≥ 0).
    resample_prob : float
        Probability, per categorical cell, of replacing the value by a draw from
        the column's training distribution (in [0, 1]).
    training_std : bool
        Multiply ``scale`` by each column's standard deviation in the training rows
        (off by default: that σ depends on the training set).

    Attributes
    ----------
    sigma_ : dict str -> float
        The noise standard deviation of each continuous column.
    """

    def __init__(self, scale: float = 1.0, resample_prob: float = 0.1, training_std: bool = False):
        self.scale = scale
        self.resample_prob = resample_prob
        self.training_std = training_std
        self._check_params()

    def _check_params(self) -> None:
        check_number("scale", self.scale, minimum=0, want="a finite number >= 0 (noise std in the table's units)")
        check_probability("resample_prob", self.resample_prob)

    def _fit(self, df: pd.DataFrame, rng: np.random.Generator) -> None:
        self._values = {}
        self.sigma_ = {}
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
                # population std of the training rows only when asked: 0 for a constant column (no noise)
                self.sigma_[c] = self.scale * float(x.std()) if self.training_std else float(self.scale)

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
                out[c] = v + rng.normal(0.0, 1.0, n) * self.sigma_[c]
        return out


__all__ = ["AdditiveNoise"]
