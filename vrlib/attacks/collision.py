"""Membership collisions: synthetic records that are also training records, and the attack that finds them.

Hu et al. (TableGAN-MCA, CCS 2021) observe that a released synthetic record which
occurs often in the release is likely to be a *colliding member*: a copy of a
training record.  This module holds

* :func:`record_frequency` — the membership indicator (eq. 4): for each released
  record, how many records of the release are equal to it (optionally divided by
  the release size, the paper's empirical probability);
* :func:`frequency_share` — Table 3's statistics: the share of a table at frequency
  at most k, counting records or distinct records;
* :func:`occurs_in` — ground truth for evaluation: whether each record occurs in a
  reference table (e.g. the training data); :func:`count_in` how often;
* :class:`Copies` — the plainest attack: each record's number of verbatim copies in the
  release;
* :class:`TableGanMCA` — the attack (Alg. 1): fit a shadow generator on each
  released copy, sample a shadow set of ``N_s × n`` records from it, label each
  shadow record by whether it occurs in that copy, fit a classifier on
  (record, frequency) → label and score the released records;
* :func:`threshold` — the decision rule (default mean + 2·std of the scores, as the
  authors' notebook).

Records are compared exactly, column by column, on the values the schema declares
(categories by value, continuous columns as float64).  Everything works on any table
with a :class:`vrlib.data.Schema`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from vrlib.attacks.base import Attack
from vrlib.data import Schema, prepare
from vrlib.errors import VrlibError
from vrlib.parallel import derive_seed
from vrlib.params import check_integer, check_number

__all__ = [
    "record_frequency",
    "frequency_share",
    "occurs_in",
    "count_in",
    "match_precision",
    "threshold",
    "Copies",
    "TableGanMCA",
    "THRESHOLD_RULES",
]

THRESHOLD_RULES = ("mean_std", "top_q", "value")


# --------------------------------------------------------------------------- checks


def _check_table(df, schema: Schema, what: str = "release") -> pd.DataFrame:
    """``df`` checked against ``schema`` (same columns, no NaN, not empty), canonical dtypes."""
    if not isinstance(schema, Schema):
        raise VrlibError(f"schema must be a vrlib.Schema, got {type(schema).__name__}")
    if not isinstance(df, pd.DataFrame):
        raise VrlibError(f"the {what} must be a pandas DataFrame, got {type(df).__name__}")
    if set(df.columns) != set(schema.columns):
        extra = sorted(set(map(str, df.columns)) - set(schema.columns))
        missing = sorted(set(schema.columns) - set(map(str, df.columns)))
        raise VrlibError(
            f"the {what}'s columns differ from the schema (not in the schema: {extra}; missing: {missing}); "
            "pass the release with exactly the training data's columns"
        )
    if len(df) == 0:
        raise VrlibError(f"the {what} is empty: there are no records to attack")
    try:
        return prepare(df, schema)
    except VrlibError as exc:
        raise VrlibError(f"{what}: {exc}") from None


def _row_ids(tables: Sequence[pd.DataFrame], schema: Schema) -> list[np.ndarray]:
    """One integer per row, equal exactly when the rows are equal, shared across ``tables``.

    Each column is factorised jointly over all tables (categoricals by value, not by
    code, so tables with different category sets compare correctly); the column codes
    are then combined into one id per row (mixed radix while it fits in 63 bits,
    refactorised pairwise otherwise).
    """
    sizes = [len(t) for t in tables]
    ids = np.zeros(sum(sizes), dtype=np.int64)
    radix = 1
    for c in schema.columns:
        if c in schema.categorical:
            codes, k = _joint_codes([t[c] for t in tables])
        else:
            values = np.concatenate([t[c].to_numpy(dtype=np.float64) for t in tables]) + 0.0  # -0.0 == 0.0
            codes, uniques = pd.factorize(values, sort=False)
            k = max(len(uniques), 1)
        if radix * k >= 2**62:
            ids, _ = pd.factorize(ids, sort=False)
            ids = ids.astype(np.int64)
            radix = int(ids.max()) + 1
        ids = ids * k + codes
        radix *= k
    ids, _ = pd.factorize(ids, sort=False)
    ids = ids.astype(np.int64)
    return np.split(ids, np.cumsum(sizes)[:-1])


def _joint_codes(columns: list[pd.Series]) -> tuple[np.ndarray, int]:
    """Codes of categorical columns against the union of their category sets (by value), and its size."""
    union = columns[0].cat.categories
    for col in columns[1:]:
        if not col.cat.categories.equals(union):
            union = union.union(col.cat.categories, sort=False)
    parts = []
    for col in columns:
        cats = col.cat.categories
        codes = col.cat.codes.to_numpy()
        parts.append(codes if cats.equals(union) else union.get_indexer(cats)[codes])
    return np.concatenate(parts).astype(np.int64), max(len(union), 1)


def record_frequency(release: pd.DataFrame, schema: Schema, normalize: bool = False) -> np.ndarray:
    """The membership indicator (eq. 4): how often each record of ``release`` occurs in it.

    Parameters
    ----------
    release : DataFrame
        The released synthetic records (columns of ``schema``).
    schema : Schema
    normalize : bool
        Divide by the number of records (the paper's ``Pr[x_i | P_g]`` estimate);
        default the count (``#x_i``, at least 1).

    Returns
    -------
    ndarray, shape (len(release),)
    """
    release = _check_table(release, schema)
    (ids,) = _row_ids([release], schema)
    counts = np.bincount(ids)[ids]
    return counts / len(release) if normalize else counts


FREQUENCY_COUNTS = ("records", "distinct")


def frequency_share(
    table: pd.DataFrame, schema: Schema, at_most: int, count: str = "records", per: str = "records"
) -> float:
    """The share of ``table`` whose frequency in ``table`` is at most ``at_most`` (Table 3's ``Pr[#x <= k]``).

    Parameters
    ----------
    table : DataFrame
        E.g. the training data (columns of ``schema``).
    schema : Schema
    at_most : int
        k >= 1; ``at_most=1`` gives the share of unique records.
    count : {"records", "distinct"}
        What the numerator counts: ``records`` every record whose value occurs at most
        k times (a value seen twice counts twice); ``distinct`` each such value once.
    per : {"records", "distinct"}
        What it is divided by: the number of records, or of distinct values.

    Returns
    -------
    float
        With ``count="records", per="records"``: the probability that a record drawn from
        ``table`` occurs at most k times in it.  TableGAN-MCA's Table 3 divides the number
        of *distinct* values seen at most k times by the number of *records*
        (``count="distinct", per="records"``); for k = 1 every definition agrees.
    """
    check_integer("at_most", at_most, minimum=1)
    for name, value in (("count", count), ("per", per)):
        if value not in FREQUENCY_COUNTS:
            raise VrlibError(f"{name} must be one of {FREQUENCY_COUNTS}, got {value!r}")
    table = _check_table(table, schema, "table")
    (ids,) = _row_ids([table], schema)
    sizes = np.bincount(ids)  # the frequency of each distinct value (ids are 0 .. n_distinct - 1)
    numerator = sizes[sizes <= at_most].sum() if count == "records" else np.count_nonzero(sizes <= at_most)
    return float(numerator / (len(table) if per == "records" else len(sizes)))


def occurs_in(records: pd.DataFrame, reference: pd.DataFrame, schema: Schema) -> np.ndarray:
    """Whether each row of ``records`` is equal to some row of ``reference`` (boolean array)."""
    records = _check_table(records, schema, "records")
    reference = _check_table(reference, schema, "reference table")
    ids, ref = _row_ids([records, reference], schema)
    return np.isin(ids, ref)


def count_in(records: pd.DataFrame, reference: pd.DataFrame, schema: Schema) -> np.ndarray:
    """How many rows of ``reference`` are equal to each row of ``records`` (integer array, 0 = none).

    E.g. how often each training record occurs verbatim in a synthetic release.
    """
    records = _check_table(records, schema, "records")
    reference = _check_table(reference, schema, "reference table")
    ids, ref = _row_ids([records, reference], schema)
    counts = np.bincount(ref, minlength=int(max(ids.max(initial=0), ref.max(initial=0))) + 1)
    return counts[ids].astype(np.int64)


def match_precision(table: pd.DataFrame, reference: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """``table`` with each continuous column rounded to the decimals its column in ``reference`` uses.

    A release keeps its training data's format (ages in whole years); a generator that
    outputs real numbers would otherwise never produce a record equal to another.  Columns
    whose reference values need more than 6 decimals are left as they are.
    """
    out = table.copy()
    for c in schema.continuous:
        ref = reference[c].to_numpy(np.float64)
        decimals = next((d for d in range(7) if np.allclose(np.round(ref, d), ref, rtol=0, atol=1e-9)), None)
        if decimals is not None:
            out[c] = np.round(out[c].to_numpy(np.float64), decimals)
    return out


def threshold(scores, rule: str = "mean_std", k: float = 2.0, q: float = 0.05, value: float = 0.5) -> float:
    """The score above which records are flagged.

    Parameters
    ----------
    scores : array-like
    rule : {"mean_std", "top_q", "value"}
        ``mean_std``: mean + k·std of the scores (the authors' choice, k = 2);
        ``top_q``: the (1 − q) quantile, so that about a share q is flagged;
        ``value``: the fixed ``value``.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0 or not np.isfinite(scores).all():
        raise VrlibError("threshold needs a non-empty array of finite scores")
    if rule == "mean_std":
        return float(scores.mean() + k * scores.std())
    if rule == "top_q":
        check_number("q", q, above=0, below=1)
        return float(np.quantile(scores, 1 - q))
    if rule == "value":
        return float(value)
    raise VrlibError(f"unknown threshold rule {rule!r}; choose one of {THRESHOLD_RULES}")


# --------------------------------------------------------------------------- attacks


class Copies(Attack):
    """Verbatim copies: how many records of the release are equal to each scored record.

    Records are compared as :func:`count_in` compares them.  A generator that copies
    training records puts members at a count of one or more; a record of the population
    that the release happens to repeat scores alike, so the count is evidence, not proof.

    Parameters
    ----------
    schema : Schema
    """

    uses_reference = False

    def __init__(self, schema: Schema):
        self.schema = schema

    def fit(self, release: pd.DataFrame, reference=None) -> "Copies":
        """Keep the release (checked against the schema); ``reference`` is not used."""
        self.release_ = _check_table(release, self.schema)
        return self

    def score(self, records: pd.DataFrame) -> np.ndarray:
        """How many released records equal each row of ``records`` (float64, 0 = none)."""
        if not hasattr(self, "release_"):
            raise VrlibError("Copies is not fitted: call fit(release) first")
        return count_in(records, self.release_, self.schema).astype(float)


class TableGanMCA(Attack):
    """TableGAN-MCA (Hu et al. 2021, Alg. 1): recover training records from released synthetic data.

    Parameters
    ----------
    shadow_generator : str
        Name of the shadow generator (see :func:`vrlib.generators.get_generator`);
        the attacker does not know the real generator, the paper uses a GAN.
    shadow_params : dict or None
        Its parameters (e.g. ``{"epochs": 300, "batch_size": 500}``).
    shadow_multiplier : int or None
        Each shadow set has ``shadow_multiplier × n`` records; ``None``: ``N_s`` (the
        paper's ``|S̃_i| = N_s × |D_t|``).
    hidden_layer_sizes : tuple of int
        The attack classifier: an MLP as the authors' notebook (``(100,)``).
    max_iter : int
        MLP iterations (the authors: 200).
    match_format : bool
        Round the shadow records' continuous values to the precision of the release
        (see :func:`match_precision`); without it a shadow generator that outputs real
        numbers never reproduces a released record.
    features : {"all", "frequency"}
        Classifier inputs: every attribute (categorical codes, continuous values) plus
        the frequency (the paper), or the frequency alone.
    rule, k, q, value
        The decision rule (see :func:`threshold`).
    seed : int
    schema : Schema, optional
        The release's columns, here or as :meth:`fit`'s second argument.

    Attributes
    ----------
    n_releases_ : int
        N_s, the number of released copies the attacker holds (1: attack model (1)).
    shadow_sets_ : list of DataFrame
        The labelled shadow sets (attributes, ``frequency``, ``label``).
    classifier_ : sklearn Pipeline
    """

    uses_reference = False  # fitted on the release alone

    def __init__(
        self,
        shadow_generator: str = "ctgan",
        shadow_params=None,
        shadow_multiplier=None,
        hidden_layer_sizes=(100,),
        max_iter: int = 200,
        match_format: bool = True,
        features: str = "all",
        rule: str = "mean_std",
        k: float = 2.0,
        q: float = 0.05,
        value: float = 0.5,
        seed: int = 0,
        schema: Schema | None = None,
    ):
        self.shadow_generator = shadow_generator
        self.shadow_params = shadow_params
        self.shadow_multiplier = shadow_multiplier
        self.hidden_layer_sizes = hidden_layer_sizes
        self.max_iter = max_iter
        self.match_format = match_format
        self.features = features
        self.rule = rule
        self.k = k
        self.q = q
        self.value = value
        self.seed = seed
        self.schema = schema

    def _check_params(self):
        if self.features not in ("all", "frequency"):
            raise VrlibError(f"features must be 'all' or 'frequency', got {self.features!r}")
        if self.rule not in THRESHOLD_RULES:
            raise VrlibError(f"unknown threshold rule {self.rule!r}; choose one of {THRESHOLD_RULES}")
        check_integer("shadow_multiplier", self.shadow_multiplier, minimum=1, optional=True)
        check_integer("seed", self.seed, minimum=0)

    @staticmethod
    def _as_copies(releases) -> list[pd.DataFrame]:
        if isinstance(releases, pd.DataFrame):
            return [releases]
        if not isinstance(releases, Sequence) or isinstance(releases, str):
            raise VrlibError("releases must be a DataFrame (one release) or a list of DataFrames (N_s releases)")
        copies = list(releases)
        if len(copies) < 1:
            raise VrlibError("N_s must be >= 1: pass at least one released synthetic dataset")
        return copies

    def _features(self, df: pd.DataFrame, frequency: np.ndarray) -> np.ndarray:
        freq = np.asarray(frequency, dtype=np.float64)[:, None]
        if self.features == "frequency":
            return freq
        cols = [
            df[c].cat.codes.to_numpy(np.float64) if c in self.schema_.categorical else df[c].to_numpy(np.float64)
            for c in self.schema_.columns
        ]
        return np.column_stack([*cols, freq])

    def _frequency(self, df: pd.DataFrame) -> np.ndarray:
        (ids,) = _row_ids([df], self.schema_)
        return np.bincount(ids)[ids]

    def fit(self, releases, schema: Schema | None = None) -> "TableGanMCA":
        """Steps 2–5 of Alg. 1: shadow generators, labelled shadow sets, attack classifier.

        Parameters
        ----------
        releases : DataFrame or list of DataFrame
            One released synthetic dataset (attack model (1)) or ``N_s`` of them
            (attack model (2)); each has the training data's size ``n``.
        schema : Schema, optional
            Default the ``schema`` parameter.

        Returns
        -------
        self
        """
        from sklearn.neural_network import MLPClassifier
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        from vrlib.generators import get_generator

        self._check_params()
        if schema is not None and not isinstance(schema, Schema):
            raise VrlibError(
                f"fit's second argument is the release's schema (the attack needs no reference set), "
                f"got {type(schema).__name__}"
            )
        if schema is not None and self.schema is not None and schema != self.schema:
            raise VrlibError("fit's schema differs from the attack's schema parameter; give one of them")
        schema = self.schema if schema is None else schema
        if schema is None:
            raise VrlibError("TableGanMCA needs the release's schema: TableGanMCA(schema=...) or fit(releases, schema)")
        copies = [_check_table(c, schema, f"release {i}") for i, c in enumerate(self._as_copies(releases))]
        self.schema_ = schema
        self.n_releases_ = len(copies)
        multiplier = self.shadow_multiplier or self.n_releases_
        X, y, self.shadow_sets_ = [], [], []
        for i, copy in enumerate(copies):
            gen = get_generator(self.shadow_generator, **(self.shadow_params or {}))
            gen.fit(copy, schema, seed=derive_seed(self.seed, "shadow-fit", i))
            shadow = gen.sample(multiplier * len(copy), seed=derive_seed(self.seed, "shadow-sample", i))
            # the attacker sees the release's format: shadow values get its precision (e.g. whole years)
            shadow = (
                match_precision(prepare(shadow, schema), copy, schema) if self.match_format else prepare(shadow, schema)
            )
            freq = self._frequency(shadow)
            label = occurs_in(shadow, copy, schema)
            X.append(self._features(shadow, freq))
            y.append(label)
            self.shadow_sets_.append(shadow.assign(frequency=freq, label=label))
        X, y = np.vstack(X), np.concatenate(y)
        self.shadow_positive_rate_ = float(y.mean())
        if y.all() or not y.any():
            warnings.warn(
                f"every shadow record is labelled {'a member' if y.all() else 'a non-member'} of its release: "
                "the classifier learns nothing and every released record gets the same score "
                "(no collisions between shadow and release; coarsen the continuous columns to create some)",
                RuntimeWarning,
                stacklevel=2,
            )
            self.classifier_ = float(y.all())
            return self
        clf = MLPClassifier(
            hidden_layer_sizes=tuple(self.hidden_layer_sizes),
            max_iter=self.max_iter,
            random_state=derive_seed(self.seed, "classifier") % 2**31,
        )
        self.classifier_ = make_pipeline(StandardScaler(), clf)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*Maximum iterations.*")  # the authors' 200 iterations
            self.classifier_.fit(X, y)
        return self

    def score(self, release: pd.DataFrame) -> np.ndarray:
        """Steps 1 and 6: the probability that each released record is a colliding member.

        ``release`` is everything the attacker holds (for attack model (2), the
        ``N_s`` copies concatenated); frequencies are counted over it.
        """
        if not hasattr(self, "classifier_"):
            raise VrlibError("TableGanMCA is not fitted: call fit(releases, schema) first")
        if isinstance(release, (list, tuple)):
            release = pd.concat(self._as_copies(release), ignore_index=True)
        release = _check_table(release, self.schema_)
        if isinstance(self.classifier_, float):
            return np.full(len(release), self.classifier_)
        return self.classifier_.predict_proba(self._features(release, self._frequency(release)))[:, 1]

    def threshold(self, scores) -> float:
        """The decision threshold of this attack's rule on ``scores``."""
        return threshold(scores, self.rule, self.k, self.q, self.value)

    def attack(self, release) -> pd.DataFrame:
        """The released records with their ``frequency``, ``score`` and ``flagged`` (score above the threshold).

        Warns when the rule flags nothing or every record.
        """
        if isinstance(release, (list, tuple)):
            release = pd.concat(self._as_copies(release), ignore_index=True)
        release = _check_table(release, self.schema_)
        scores = self.score(release)
        t = self.threshold(scores)
        flagged = scores > t
        if not flagged.any():
            warnings.warn(
                f"the threshold {t:.4g} ({self.rule}) flags no record: the attack recovers nothing",
                RuntimeWarning,
                stacklevel=2,
            )
        elif flagged.all():
            warnings.warn(
                f"the threshold {t:.4g} ({self.rule}) flags every record: the attack cannot tell them apart",
                RuntimeWarning,
                stacklevel=2,
            )
        return release.assign(frequency=self._frequency(release), score=scores, flagged=flagged)
