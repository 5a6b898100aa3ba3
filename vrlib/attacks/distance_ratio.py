"""The distance-ratio attack on tables: how much nearer a record lies to the release than to the population.

A generator that remembers its training records puts released records close to them;
a record of the population has no reason to be closer to the release than to another
sample of the population.  The score of a record x is

    ``log((d_ref(x) + δ) / (d_syn(x) + δ))``

with ``d_syn`` and ``d_ref`` the distances to the nearest released and the nearest
reference record (achilles eq. 6, Minkowski p = 2, on one-hot and min-max scaled
columns, :class:`vrlib.encoding.TableEncoder`).  δ keeps copies (``d_syn = 0``) finite;
by default it is 1e-3 of the median reference distance of the scored records.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.attacks.base import Attack
from vrlib.data import Schema
from vrlib.distance import kneighbors_between
from vrlib.encoding import TableEncoder
from vrlib.errors import VrlibError

__all__ = ["DistanceRatio", "nearest_distance"]


def nearest_distance(records: pd.DataFrame, table: pd.DataFrame, encoder: TableEncoder) -> np.ndarray:
    """Distance (eq. 6, Minkowski p = 2) from each record to its nearest record of ``table``."""
    return _nearest(encoder.transform(records), encoder.transform(table))


def _nearest(records, table) -> np.ndarray:
    d, _ = kneighbors_between(records, table, k=1, metric="minkowski", p=2.0)
    return d[:, 0]


class DistanceRatio(Attack):
    """Nearer to the release than to the reference: ``log((d_ref + δ) / (d_syn + δ))``.

    Parameters
    ----------
    schema : Schema
    delta : "median" or float
        δ; ``"median"``: 1e-3 of the median, over the records of a :meth:`score` call, of
        their distance to the nearest reference record (1e-9 when that median is 0).  The
        scores of a call then depend on the whole batch: to score two sets alike, score
        the first, then set ``delta`` to its ``delta_``.
    encoder : TableEncoder, optional
        A fitted encoder for every table (e.g. fitted on all the tables at hand, so that
        each is scaled alike); default fitted on the release and the reference in :meth:`fit`.

    Attributes
    ----------
    delta_ : float
        The δ used by the last call of :meth:`score`.
    """

    uses_reference = True

    def __init__(self, schema: Schema, delta="median", encoder: TableEncoder | None = None):
        self.schema = schema
        self.delta = delta
        self.encoder = encoder

    def fit(self, release: pd.DataFrame, reference: pd.DataFrame) -> "DistanceRatio":
        """Encode the release and the reference (both tables with the schema's columns)."""
        if not isinstance(self.schema, Schema):
            raise VrlibError(f"schema must be a vrlib Schema, got {type(self.schema).__name__}")
        for what, table in (("release", release), ("reference", reference)):
            if not isinstance(table, pd.DataFrame) or len(table) == 0:
                raise VrlibError(f"the {what} must be a non-empty DataFrame with the schema's columns"
                                 + (" (DistanceRatio needs a reference set)" if table is None else ""))  # fmt: skip
            missing = [c for c in self.schema.columns if c not in table.columns]
            if missing:
                raise VrlibError(f"the {what} lacks column(s) {missing}")
        if not (self.delta == "median" or (isinstance(self.delta, (int, float)) and self.delta > 0)):
            raise VrlibError(f"delta must be 'median' or a positive number, got {self.delta!r}")
        encoder = self.encoder or TableEncoder(self.schema).fit(pd.concat([release, reference], ignore_index=True))
        self.encoder_ = encoder
        self.release_ = encoder.transform(release)
        self.reference_ = encoder.transform(reference)
        return self

    def score(self, records: pd.DataFrame) -> np.ndarray:
        """``log((d_ref + δ) / (d_syn + δ))`` for each row of ``records``."""
        if not hasattr(self, "encoder_"):
            raise VrlibError("DistanceRatio is not fitted: call fit(release, reference) first")
        missing = [c for c in self.schema.columns if c not in getattr(records, "columns", ())]
        if missing:
            raise VrlibError(f"the records to score lack column(s) {missing}")
        encoded = self.encoder_.transform(records)
        d_syn, d_ref = _nearest(encoded, self.release_), _nearest(encoded, self.reference_)
        delta = (1e-3 * float(np.median(d_ref)) or 1e-9) if self.delta == "median" else float(self.delta)
        self.delta_ = delta
        return np.log((d_ref + delta) / (d_syn + delta))
