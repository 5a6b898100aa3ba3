"""Attacks from the distance to the closest records (achilles eq. 6, Minkowski p = 2).

A generator that remembers its training records puts released records close to them.
Distances are those of eq. 6 on one-hot and min-max scaled columns
(:class:`vrlib.encoding.TableEncoder`), with p = 2.

* :class:`DistanceRatio` (record level): a record of the population has no reason to be
  nearer to the release than to another sample of the population; the score of x is
  ``log((d_ref(x) + δ) / (d_syn(x) + δ))``, with ``d_syn`` and ``d_ref`` the distances to
  the nearest released and the nearest reference record.  δ keeps copies
  (``d_syn = 0``) finite; by default it is 1e-3 of the median reference distance of the
  scored records.
* :class:`TargetCloseness` (dataset level): a dataset made with the target in the
  training data has records nearer to it; the score of a dataset is minus the mean
  distance from the target to its ``n_neighbors`` nearest records.  Nothing is learnt
  from the labelled datasets: the attack of a game whose attacker knows everything but
  the target bit (the audit's model-seeded game).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.attacks.base import Attack
from vrlib.data import Schema
from vrlib.distance import kneighbors_between
from vrlib.encoding import EncodedTable, TableEncoder
from vrlib.errors import VrlibError
from vrlib.params import check_integer

__all__ = ["DistanceRatio", "TargetCloseness"]


def _nearest(records: EncodedTable, table: EncodedTable, k: int = 1) -> np.ndarray:
    """Distances (eq. 6, p = 2) from each record to its ``k`` nearest records of ``table``, shape (n, k)."""
    d, _ = kneighbors_between(records, table, k=k, metric="minkowski", p=2.0)
    return d


def _check_table(table, schema: Schema, what: str) -> None:
    if not isinstance(table, pd.DataFrame) or len(table) == 0:
        raise VrlibError(
            f"the {what} must be a non-empty DataFrame with the schema's columns, got "
            + (f"{type(table).__name__}" if not isinstance(table, pd.DataFrame) else "an empty one")
        )
    missing = [c for c in schema.columns if c not in table.columns]
    if missing:
        raise VrlibError(f"the {what} lack(s) column(s) {missing}")


def _check_schema(schema) -> None:
    if not isinstance(schema, Schema):
        raise VrlibError(f"schema must be a vrlib Schema, got {type(schema).__name__}")


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
        _check_schema(self.schema)
        _check_table(release, self.schema, "release")
        if reference is None:
            raise VrlibError("DistanceRatio needs a reference set: pass fit(release, reference)")
        _check_table(reference, self.schema, "reference")
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
        _check_table(records, self.schema, "records to score")
        encoded = self.encoder_.transform(records)
        d_syn, d_ref = _nearest(encoded, self.release_)[:, 0], _nearest(encoded, self.reference_)[:, 0]
        delta = (1e-3 * float(np.median(d_ref)) or 1e-9) if self.delta == "median" else float(self.delta)
        self.delta_ = delta
        return np.log((d_ref + delta) / (d_syn + delta))


class TargetCloseness(Attack):
    """Minus the mean distance from the target to its ``n_neighbors`` nearest records of each dataset.

    Parameters
    ----------
    schema : Schema
    n_neighbors : int
        Records of each dataset the distance is averaged over (all of a smaller dataset).
    encoder : TableEncoder, optional
        A fitted encoder for the target and every dataset; default fitted in :meth:`fit`
        on the target and the labelled datasets.
    """

    def __init__(self, schema: Schema, n_neighbors: int = 5, encoder: TableEncoder | None = None):
        self.schema = schema
        self.n_neighbors = n_neighbors
        self.encoder = encoder

    def _frames(self, synthetic_datasets) -> list[pd.DataFrame]:
        if isinstance(synthetic_datasets, pd.DataFrame):
            raise VrlibError("pass a list of synthetic datasets (DataFrames), not a single DataFrame")
        if hasattr(synthetic_datasets, "frame"):  # games.SyntheticDatasets
            synthetic_datasets = [synthetic_datasets.frame(i) for i in range(len(synthetic_datasets))]
        frames = list(synthetic_datasets)
        if not frames:
            raise VrlibError("no synthetic datasets given")
        for df in frames:
            _check_table(df, self.schema, "synthetic datasets")
        return frames

    def fit(self, synthetic_datasets, labels, target: pd.DataFrame) -> "TargetCloseness":
        """Keep the target (nothing is learnt; the datasets fit the encoder when none is given).

        Parameters
        ----------
        synthetic_datasets : list of DataFrame, or SyntheticDatasets
        labels : array-like of {0, 1}, or None
            One per dataset (checked, not used).
        target : DataFrame
            The target record, one row.
        """
        _check_schema(self.schema)
        check_integer("n_neighbors", self.n_neighbors, minimum=1)
        frames = self._frames(synthetic_datasets)
        _check_table(target, self.schema, "target")
        if len(target) != 1:
            raise VrlibError(f"the target must be one record (got a table of {len(target)} rows)")
        if labels is not None and len(np.asarray(labels)) != len(frames):
            raise VrlibError(f"got {len(frames)} synthetic datasets but {len(np.asarray(labels))} labels")
        self.encoder_ = self.encoder or TableEncoder(self.schema).fit(pd.concat([target, *frames], ignore_index=True))
        self.target_ = self.encoder_.transform(target)
        return self

    def score(self, synthetic_datasets) -> np.ndarray:
        """Minus the mean distance from the target to its nearest records, one per dataset (higher = IN)."""
        if not hasattr(self, "target_"):
            raise VrlibError("TargetCloseness is not fitted: call fit(synthetic_datasets, labels, target) first")
        out = []
        for df in self._frames(synthetic_datasets):
            d = _nearest(self.target_, self.encoder_.transform(df), min(self.n_neighbors, len(df)))
            out.append(-float(d.mean()))
        return np.array(out)
