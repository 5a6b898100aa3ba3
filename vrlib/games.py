"""Privacy games: labelled synthetic datasets for a target record, drawn so that what can be shared is shared.

A game turns a target record into two labelled batches of synthetic datasets:
*shadow* datasets (the attacker's training data, from the auxiliary pool D_aux) and
*test* datasets (the evaluation, from D_test).  Each synthetic dataset is described by
a :class:`DatasetPlan`: which records of Ω trained the generator and with which seeds.
Its cache key is a hash of exactly that (plus Ω's fingerprint, the generator and the
sizes), so any two plans that train on the same records with the same seeds are the
same dataset, whichever target asked for it:

* **Traditional game** (achilles §2, :class:`TraditionalGame`).  Draw ``i`` of a pool
  is ``n`` distinct records (``n-1`` base records + one "other" record) chosen by a seed
  derived from ``(seed, pool, stream, i)``.  An OUT dataset is base + other, an IN
  dataset is base + target.  OUT datasets never mention the target, so they are
  generated once and reused for every target.  The target is removed from the pools
  by *rejection*: a draw that contains the target is skipped and the next index used,
  which leaves exactly a uniform draw from the pool without the target (a uniform
  ``n``-subset conditioned on avoiding one record is a uniform ``n``-subset of the
  rest).  So every target sees the correct distribution and still shares almost all
  of its OUT datasets with the other targets.
* **Model-seeded game** (lost §4, :class:`ModelSeededGame`).  One fixed dataset D of
  ``n`` records; IN = D with a fresh generator seed, OUT = D without the target plus a
  reference record, fresh seed.  Here the IN datasets are the ones shared by all the
  targets of D.  The shadow side is the traditional one, so a traditional and a
  model-seeded game with the same parameters share their shadow datasets (and the
  attack trained on them).

**What is shared, and what is not.** OUT datasets are shared by all targets of a game
(``share_out=True``, the default; with half IN and half OUT datasets it saves a fraction
1/2 - 1/(2R) of the generator fits of R distinct targets, nearly half). Everything that
sharing would not make cheaper is drawn per target: the IN bases come from the target's
own stream (``"in-for-<target>"``), and so do the IN datasets' generator seeds. The
targets of one game are therefore correlated only through their common OUT datasets (and
the common split of Ω), so the spread of their AUCs is *not* the spread of independent
estimates: std/√R understates the standard error of a mean over targets. Valid intervals
come from independent root seeds (:func:`vrlib.uncertainty.seed_summary`);
``share_out=False`` removes the sharing at about twice the cost.

**IN and OUT bases are independent by default** (``paired=False``): IN datasets use
draws of their own stream, as in the paper, where half of the shadow datasets get the
target and the other half a random record.  Pairing (IN_i = base_i + target,
OUT_i = base_i + other_i) saves no generator fit (every IN dataset is still a new fit),
halves the number of distinct bases the meta-classifier learns from, and makes the
test AUC (which compares every IN with every OUT dataset) include ``n_test/2``
correlated same-base pairs, a small bias.  It is available as ``paired=True`` for
paired comparisons, where the shared base cancels noise.

Datasets are made by :func:`vrlib.synthesis.synthesize` (the one synthesis path: spread
by :func:`vrlib.parallel.run`, each dataset its own cache entry written by the calling
process), so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from vrlib import parallel
from vrlib.cache import fingerprint_table
from vrlib.encoding import decode_table
from vrlib.coded import CodedTable
from vrlib.data import Schema, prepare
from vrlib.errors import VrlibError
from vrlib.synthesis import GeneratorSpec, SynthesisJob, resolve_cache, dataset_key, synthesize

__all__ = [
    "TraditionalGame",
    "ModelSeededGame",
    "SyntheticDatasets",
    "GameData",
    "DatasetPlan",
    "TargetPlans",
    "split_population",
]


# --------------------------------------------------------------------------- containers


@dataclass(eq=False)
class SyntheticDatasets:
    """A batch of synthetic datasets of equal size, integer-encoded, with membership labels.

    Attributes
    ----------
    codes : ndarray, shape (n_datasets, n_synth, F_cat), unsigned int
        Categorical columns as codes into ``categories``.
    continuous : ndarray, shape (n_datasets, n_synth, F_cont), float64
    labels : ndarray, shape (n_datasets,), int
        1 = IN (the target was in the training data), 0 = OUT.
    schema : Schema
    categories : dict
        Column -> category Index (those of Ω).
    columns : tuple of str
        Column order of the DataFrames built by :meth:`frame`.
    """

    codes: np.ndarray
    continuous: np.ndarray
    labels: np.ndarray
    schema: Schema
    categories: dict
    columns: tuple

    def __post_init__(self):
        n = len(self.labels)
        if self.codes.shape[0] != n or self.continuous.shape[0] != n:
            raise VrlibError(
                f"{self.codes.shape[0]} / {self.continuous.shape[0]} datasets for {n} labels; "
                "give one label per dataset"
            )

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def n_synth(self) -> int:
        """Records per synthetic dataset."""
        return self.codes.shape[1]

    def frame(self, i: int) -> pd.DataFrame:
        """Synthetic dataset ``i`` as a DataFrame with Ω's dtypes and categories."""
        return decode_table(self.codes[i], self.continuous[i], self.schema, self.categories, columns=self.columns)

    def to_frames(self) -> list[pd.DataFrame]:
        """All datasets as DataFrames."""
        return [self.frame(i) for i in range(len(self))]

    def subset(self, idx) -> "SyntheticDatasets":
        """The datasets at positions (or boolean mask) ``idx``."""
        idx = np.asarray(idx)
        return SyntheticDatasets(
            self.codes[idx], self.continuous[idx], self.labels[idx], self.schema, self.categories, self.columns
        )

    @classmethod
    def from_arrays(cls, arrays: list[dict], labels, schema: Schema, categories: dict, columns) -> "SyntheticDatasets":
        """Stack per-dataset ``{"codes", "continuous"}`` dicts (as :func:`vrlib.encoding.encode_table` returns)."""
        if not arrays:
            raise VrlibError("no synthetic datasets to stack")
        codes = np.stack([a["codes"] for a in arrays])
        cont = np.stack([a["continuous"] for a in arrays]).astype(np.float64, copy=False)
        return cls(codes, cont, np.asarray(labels, dtype=np.int64), schema, categories, tuple(columns))


@dataclass(eq=False)
class GameData:
    """What a game produces for one target: its record, the shadow datasets and the test datasets of each side.

    Attributes
    ----------
    target_index : label
        The target's index label in Ω.
    target : DataFrame
        The target record (one row, Ω's dtypes).
    shadow : SyntheticDatasets
    tests : dict
        Side (``"test"``, ``"traditional_test"``; see :attr:`TraditionalGame.SIDES`) -> its test datasets.
    """

    target_index: object
    target: pd.DataFrame
    shadow: SyntheticDatasets
    tests: dict

    @property
    def test(self) -> SyntheticDatasets:
        """The test datasets of the game's own side (``tests["test"]``)."""
        return self.tests["test"]


@dataclass(frozen=True, eq=False)
class DatasetPlan:
    """How one synthetic dataset is made: training records, seeds, label and cache key.

    Attributes
    ----------
    rows : ndarray of int
        Positions in Ω of the training records (sorted, distinct).
    label : int
        1 = IN, 0 = OUT.
    fit_seed, sample_seed : int
        Seeds passed to the generator's ``fit`` and ``sample``.
    key : str
        Content address of the synthetic dataset.
    """

    rows: np.ndarray
    label: int
    fit_seed: int
    sample_seed: int
    key: str


@dataclass(eq=False)
class TargetPlans:
    """How every dataset one target is attacked with is made (:meth:`TraditionalGame.plan`).

    ``target`` is the target's index label, ``shadow`` the plans of its shadow datasets and
    ``sides`` maps each test side asked for to its plans (IN first, then OUT).
    """

    target: object
    shadow: list
    sides: dict

    def signature(self) -> dict:
        """The key and label of every dataset, per side: what the attack's result depends on besides the attack."""
        return {
            side: [(p.key, p.label) for p in plans] for side, plans in {"shadow": self.shadow, **self.sides}.items()
        }


# --------------------------------------------------------------------------- helpers


def split_population(n_rows: int, n_aux: int, n_test: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Split ``range(n_rows)`` at random into disjoint D_aux and D_test positions (each sorted).

    Raises
    ------
    VrlibError
        When ``n_aux + n_test`` exceeds ``n_rows``.
    """
    if n_aux < 1 or n_test < 1:
        raise VrlibError(f"n_aux and n_test must be positive (got {n_aux}, {n_test})")
    if n_aux + n_test > n_rows:
        scale = n_rows / (n_aux + n_test)
        raise VrlibError(
            f"n_aux + n_test = {n_aux + n_test} exceeds the {n_rows} records of the data; use proportionally "
            f"smaller pools, e.g. n_aux={int(n_aux * scale)}, n_test={int(n_test * scale)}"
        )
    perm = np.random.default_rng(parallel.derive_seed(seed, "split")).permutation(n_rows)
    return np.sort(perm[:n_aux]), np.sort(perm[n_aux : n_aux + n_test])


# --------------------------------------------------------------------------- games


class TraditionalGame:
    """The traditional privacy game (achilles §2): fresh training data for every synthetic dataset.

    Parameters
    ----------
    generator : str or generator instance
        A name for :func:`vrlib.generators.get_generator`, or an unfitted object with
        ``fit(df, schema, seed)`` and ``sample(n, seed)`` (deep-copied for each dataset;
        its public attributes, or ``get_params()``, enter the cache key).  The cache key
        also holds a hash of the generator's source files, so editing a generator
        invalidates what it generated before.
    generator_params : dict, optional
        Parameters for a generator given by name.
    n_aux, n_test : int
        Sizes of the two pools Ω is split into (D_aux for shadow, D_test for test datasets).
    n_records : int
        Size ``n`` of each training dataset (``n - 1`` drawn records + target or other).
    n_synth : int
        Records sampled from each fitted generator.
    n_shadow, n_test_datasets : int
        Number of shadow and test datasets, half IN and half OUT (OUT gets the odd one).
    share_out : bool
        Reuse OUT datasets across targets (default; saves their fits, correlates the
        targets' AUCs through them).  ``False`` draws target-specific OUT datasets, so
        that the targets of one game are independent given the split of Ω.
    paired : bool
        IN datasets reuse the base records of the OUT datasets with the same index
        (see the module docstring for why this is off by default).
    seed : int
        Root seed: the split, every draw and every generator seed derive from it.
    n_jobs, scheduler
        Passed to :func:`vrlib.parallel.run`.
    cache : bool or Cache
        ``True``: the default store (namespace ``synthetic``); ``False``: no caching.
    progress : bool
        Show progress bars.

    Attributes
    ----------
    aux_index_, test_index_ : Index
        Labels of the records of D_aux and D_test.
    fingerprint_ : str
        Content hash of Ω.
    stats_ : Counter
        ``generated`` (generator fits), ``cached`` (read from the cache) and ``reused``
        (shared in memory between targets) datasets so far.
    """

    SIDES = ("test",)  # the test sides a target can be scored on (see plan)

    def __init__(
        self,
        generator,
        generator_params: dict | None = None,
        *,
        n_aux: int = 10_000,
        n_test: int = 5_000,
        n_records: int = 1000,
        n_synth: int = 1000,
        n_shadow: int = 4000,
        n_test_datasets: int = 200,
        share_out: bool = True,
        paired: bool = False,
        seed: int = 0,
        n_jobs: int | None = None,
        scheduler=None,
        cache=True,
        progress: bool = True,
    ):
        self.generator = generator
        self.generator_params = generator_params
        self.n_aux = n_aux
        self.n_test = n_test
        self.n_records = n_records
        self.n_synth = n_synth
        self.n_shadow = n_shadow
        self.n_test_datasets = n_test_datasets
        self.share_out = share_out
        self.paired = paired
        self.seed = seed
        self.n_jobs = n_jobs
        self.scheduler = scheduler
        self.cache = cache
        self.progress = progress

    # ---------------------------------------------------------------- setup

    def fit(self, df: pd.DataFrame, schema: Schema) -> "TraditionalGame":
        """Take Ω and split it into D_aux and D_test.

        Parameters
        ----------
        df : DataFrame
            Ω, with a unique index (targets are named by index label).
        schema : Schema
        """
        for name, least in (("n_records", 2), ("n_synth", 1), ("n_shadow", 2), ("n_test_datasets", 2)):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value < least:
                raise VrlibError(f"{name} must be an integer of at least {least} (got {value!r})")
        if not df.index.is_unique:
            raise VrlibError(
                "the table's index has duplicates; targets are named by index label, so reset_index() first"
            )
        self.data_ = prepare(df, schema)
        self.schema_ = schema
        self.columns_ = tuple(self.data_.columns)
        self.categories_ = {c: self.data_[c].cat.categories for c in schema.categorical}
        self.fingerprint_ = fingerprint_table(self.data_, schema)
        self.coded_ = CodedTable(self.data_, schema)  # what the workers fit on: training sets are row positions
        self.factory_ = GeneratorSpec(self.generator, self.generator_params)
        self.cache_ = resolve_cache(self.cache)
        aux, test = split_population(len(self.data_), self.n_aux, self.n_test, self.seed)
        self._pools = {"aux": aux, "test": test}
        for pool, positions in self._pools.items():
            if self.n_records >= len(positions):
                raise VrlibError(
                    f"n_records={self.n_records} needs a pool of more records than that, but {pool} has "
                    f"{len(positions)}; lower n_records or raise n_{pool}"
                )
        self.aux_index_ = self.data_.index[aux]
        self.test_index_ = self.data_.index[test]
        self._draws: dict = {}
        self._out_plans: dict = {}
        self.stats_ = Counter()
        return self

    def _check_fitted(self):
        if not hasattr(self, "data_"):
            raise VrlibError(f"{type(self).__name__} is not fitted: call fit(df, schema) first")

    def _position(self, target) -> int:
        self._check_fitted()
        try:
            pos = self.data_.index.get_loc(target)
        except KeyError:
            raise VrlibError(f"target {target!r} is not an index label of the table given to fit()") from None
        if not isinstance(pos, (int, np.integer)):
            raise VrlibError(f"target {target!r} does not name exactly one record")
        return int(pos)

    # ---------------------------------------------------------------- plans

    def _draw(self, pool: str, stream: str, i: int) -> np.ndarray:
        """Draw ``i`` of a stream: ``n_records`` distinct pool positions, the last one the "other" record."""
        key = (pool, stream, i)
        if key not in self._draws:
            rng = np.random.default_rng(parallel.derive_seed(self.seed, "draw", pool, stream, i))
            positions = self._pools[pool]
            self._draws[key] = positions[rng.choice(len(positions), size=self.n_records, replace=False)]
        return self._draws[key]

    def _plan(self, rows, label: int, *seed_keys) -> DatasetPlan:
        rows = np.sort(np.asarray(rows, dtype=np.int64))
        fit_seed = parallel.derive_seed(self.seed, "fit", *seed_keys)
        sample_seed = parallel.derive_seed(self.seed, "sample", *seed_keys)
        key = dataset_key(self.fingerprint_, self.factory_, self.n_synth, fit_seed, sample_seed, rows)
        return DatasetPlan(rows, label, fit_seed, sample_seed, key)

    def _traditional_plans(self, pool: str, target: int, count: int, labels=(1, 0)) -> list[DatasetPlan]:
        """IN plans then OUT plans for one side, skipping draws that contain the target (rejection).

        ``labels`` limits them to one side: ``(0,)`` gives the OUT plans alone.
        """
        n_in, n_out = count // 2, count - count // 2
        out_stream = "out" if self.share_out else f"out-for-{target}"
        # IN datasets are fitted per target anyway, so their bases come from the target's own
        # stream: sharing them would save nothing and would correlate the targets' AUCs.
        in_stream = out_stream if self.paired else f"in-for-{target}"
        plans = []
        for stream, label, wanted in ((in_stream, 1, n_in), (out_stream, 0, n_out)):
            if label not in labels:
                continue
            i = found = 0
            while found < wanted:
                draw = self._draw(pool, stream, i)
                if not (draw == target).any():
                    if label:
                        plans.append(self._plan(np.append(draw[:-1], target), 1, pool, stream, "in", i))
                    else:  # the same for every target: its key and seeds are computed once per game, not per target
                        key = (pool, stream, i)
                        if key not in self._out_plans:
                            self._out_plans[key] = self._plan(draw, 0, pool, stream, "out", i)
                        plans.append(self._out_plans[key])
                    found += 1
                i += 1
        return plans

    def _check_sides(self, sides) -> tuple:
        sides = tuple(sides)
        if not sides or len(set(sides)) != len(sides) or not set(sides) <= set(self.SIDES):
            raise VrlibError(f"sides must be distinct names among {self.SIDES} (got {sides!r})")
        return sides

    def shared_plans(self, target, sides=("test",)) -> list[DatasetPlan]:
        """The plans of ``target`` that other targets share: its OUT shadow datasets and the shared test
        datasets of each side (traditional: the OUT ones, none of either without ``share_out``;
        model-seeded: the IN ones, D itself); cheap, since they are computed once per game and only
        checked against the target."""
        sides = self._check_sides(sides)
        p = self._position(target)
        shadow = self._traditional_plans("aux", p, self.n_shadow, labels=(0,)) if self.share_out else []
        return [*shadow, *(q for side in sides for q in self._shared_side_plans(target, side))]

    def _shared_side_plans(self, target, side: str) -> list[DatasetPlan]:
        """The test plans of one side that every target shares (the traditional side's OUT plans)."""
        if not self.share_out:
            return []
        return self._traditional_plans("test", self._position(target), self.n_test_datasets, labels=(0,))

    def forget(self, target) -> None:
        """Drop the memoised draws of ``target``'s own streams (its IN bases; its OUT bases without ``share_out``).

        A game over many targets otherwise keeps every target's draws (``n_records``
        positions per dataset) for its whole life: gigabytes over 1,000 targets.
        """
        p = self._position(target)
        own = (f"in-for-{p}", f"out-for-{p}")
        for key in [k for k in self._draws if k[1] in own]:
            del self._draws[key]

    def shadow_plans(self, target) -> list[DatasetPlan]:
        """How each shadow dataset of ``target`` is made (IN first, then OUT)."""
        return self._traditional_plans("aux", self._position(target), self.n_shadow)

    def test_plans(self, target) -> list[DatasetPlan]:
        """How each test dataset of ``target`` is made (IN first, then OUT)."""
        return self._traditional_plans("test", self._position(target), self.n_test_datasets)

    def _side_plans(self, target, side: str) -> list[DatasetPlan]:
        return self.test_plans(target)

    def plan(self, target, sides=("test",)) -> TargetPlans:
        """How every dataset ``target`` is attacked with is made: its shadow plans and the test plans of each side.

        Parameters
        ----------
        target : index label of Ω
        sides : sequence of str
            Test sides among :attr:`SIDES` (the traditional game has one, ``"test"``).
        """
        sides = self._check_sides(sides)
        return TargetPlans(target, self.shadow_plans(target), {side: self._side_plans(target, side) for side in sides})

    def identity(self) -> dict:
        """What the game's datasets depend on besides the target: its kind, Ω, generator, sizes, sharing and seed."""
        self._check_fitted()
        return dict(
            game=type(self).__name__,
            omega=self.fingerprint_,
            generator=self.factory_.identity,
            n_aux=self.n_aux,
            n_test=self.n_test,
            n_records=self.n_records,
            n_synth=self.n_synth,
            n_shadow=self.n_shadow,
            n_test_datasets=self.n_test_datasets,
            share_out=self.share_out,
            paired=self.paired,
            seed=self.seed,
        )

    # ---------------------------------------------------------------- generation

    def _materialise(
        self, plans: list[DatasetPlan], desc: str, memo: dict | None = None, keep: bool = False, store: bool = True
    ) -> list[dict]:
        """Encoded synthetic dataset of every plan: from ``memo``, else :func:`vrlib.synthesis.synthesize`.

        With ``keep``, every dataset obtained here is also put in ``memo``.  With
        ``store=False`` the datasets made here are not written to the cache (for
        datasets no other target needs, whose results are cached by the caller).
        """
        out: list = [None] * len(plans)
        jobs, where = [], []
        for j, plan in enumerate(plans):
            if memo is not None and plan.key in memo:
                out[j] = memo[plan.key]
                self.stats_["reused"] += 1
                continue
            jobs.append(
                SynthesisJob(
                    self.data_,
                    self.schema_,
                    self.factory_,
                    self.n_synth,
                    plan.fit_seed,
                    plan.sample_seed,
                    rows=plan.rows,
                    categories=self.categories_,
                    fingerprint=self.fingerprint_,
                    coded=self.coded_,
                    keep=store,
                    known_key=plan.key,
                )
            )
            where.append(j)
        made = synthesize(
            jobs,
            cache=self.cache_ if self.cache_ is not None else False,
            n_jobs=self.n_jobs,
            scheduler=self.scheduler,
            desc=desc,
            progress=self.progress,
            stats=self.stats_,
        )
        for j, arrays in zip(where, made):
            out[j] = arrays
        if keep and memo is not None:
            memo.update((p.key, a) for p, a in zip(plans, out))
        return out

    def _datasets(self, plans, desc, memo=None) -> SyntheticDatasets:
        return self._dataset_groups([plans], desc, memo)[0]

    def _dataset_groups(
        self, groups: list[list[DatasetPlan]], desc, memo=None, store: bool = True
    ) -> list[SyntheticDatasets]:
        """A :class:`SyntheticDatasets` per group of plans, all generated in one parallel batch
        (each batch costs the pool a start and a tail of idle workers); ``store`` as for :meth:`_materialise`."""
        arrays = self._materialise([p for plans in groups for p in plans], desc, memo, store=store)
        out, start = [], 0
        for plans in groups:
            out.append(
                SyntheticDatasets.from_arrays(
                    arrays[start : start + len(plans)],
                    [p.label for p in plans],
                    self.schema_,
                    self.categories_,
                    self.columns_,
                )
            )
            start += len(plans)
        return out

    def shadow(self, target) -> SyntheticDatasets:
        """The labelled shadow datasets of ``target`` (index label of Ω)."""
        return self._datasets(self.shadow_plans(target), f"shadow datasets of {target}")

    def test(self, target) -> SyntheticDatasets:
        """The labelled test datasets of ``target`` (index label of Ω)."""
        return self._datasets(self.test_plans(target), f"test datasets of {target}")

    def shared_datasets(self, targets: Iterable, sides=("test",), memo: dict | None = None) -> dict:
        """The datasets these targets share (:meth:`shared_plans`), made once: ``memo`` (key -> encoded dataset).

        Those not in ``memo`` yet are made in one parallel batch, written to the cache and
        added to it; kept in memory while the targets are played, they are shared even
        without a cache.
        """
        memo = {} if memo is None else memo
        plans = {p.key: p for t in targets for p in self.shared_plans(t, sides) if p.key not in memo}
        if plans:
            self._materialise(list(plans.values()), "datasets shared by the targets", memo, keep=True)
        return memo

    def game_data(self, plans: TargetPlans, memo: dict | None = None, store: bool = True) -> GameData:
        """The datasets of one target's :meth:`plan`, made in one parallel batch (those in ``memo`` taken from it).

        ``store=False`` does not write the datasets made here to the cache (for datasets
        no other target needs, whose attack results the caller caches).
        """
        groups = [plans.shadow, *plans.sides.values()]
        shadow, *tests = self._dataset_groups(groups, f"datasets of {plans.target}", memo, store=store)
        target = self.data_.iloc[[self._position(plans.target)]]
        return GameData(plans.target, target, shadow, dict(zip(plans.sides, tests)))

    def datasets(self, target, sides=("test",)) -> GameData:
        """Shadow and test datasets of one target."""
        return self.game_data(self.plan(target, sides))

    def iter_targets(self, targets: Iterable, sides=("test",)) -> Iterator[GameData]:
        """:class:`GameData` of each target in turn, generating the datasets they share once.

        The datasets needed by every target (:meth:`shared_plans`: the OUT datasets of
        the traditional game, the IN datasets of the model-seeded one) are generated
        first, in one parallel batch, and kept in memory while iterating, so that
        sharing works even without a cache.

        Parameters
        ----------
        targets : iterable of index labels of Ω
        sides : sequence of str
            Test sides among :attr:`SIDES`.
        """
        targets = list(targets)
        memo = self.shared_datasets(targets, sides)
        for t in targets:
            yield self.game_data(self.plan(t, sides), memo)


class ModelSeededGame(TraditionalGame):
    """The model-seeded game (lost §4): one fixed dataset, only the generator's seed varies.

    The shadow datasets are those of the traditional game with the same parameters
    (the attacker still trains on D_aux).  The test datasets come from a fixed dataset
    D of ``n_records`` records of D_test that contains the target: IN = D, OUT = D
    without the target plus a reference record, each fitted with a fresh seed.  The IN
    datasets do not depend on the target, so they are shared by all targets of D.

    Parameters
    ----------
    reference : {"fixed", "random", "none"}
        ``fixed``: one reference record (drawn from D_test outside D) for every OUT
        dataset, so that each world is one dataset and only seeds vary; ``random``: a
        fresh reference record for each OUT dataset; ``none``: OUT = D without the
        target (``n_records - 1`` records), the paper's Definition 3.
    **kwargs
        As for :class:`TraditionalGame` (``n_test_datasets`` = number of model-seeded
        games, half each way).

    Attributes
    ----------
    dataset_index_ : Index
        Labels of the records of D.
    reference_index_ : label or None
        The fixed reference record.
    """

    def __init__(self, generator, generator_params: dict | None = None, *, reference: str = "fixed", **kwargs):
        super().__init__(generator, generator_params, **kwargs)
        self.reference = reference

    def fit(self, df: pd.DataFrame, schema: Schema, dataset=None) -> "ModelSeededGame":
        """Split Ω as the traditional game does and fix the dataset D.

        Parameters
        ----------
        df : DataFrame
        schema : Schema
        dataset : sequence of index labels, optional
            The ``n_records`` records of D, all in D_test (``test_index_``); default
            drawn from D_test with the game's seed.
        """
        if self.reference not in ("fixed", "random", "none"):
            raise VrlibError(f"reference must be 'fixed', 'random' or 'none' (got {self.reference!r})")
        super().fit(df, schema)
        test = self._pools["test"]
        if dataset is None:
            rng = np.random.default_rng(parallel.derive_seed(self.seed, "model-seeded dataset"))
            positions = np.sort(test[rng.choice(len(test), size=self.n_records, replace=False)])
        else:
            positions = np.sort(np.array([self._position(t) for t in dataset], dtype=np.int64))
            if len(np.unique(positions)) != len(positions):
                raise VrlibError("the dataset lists a record twice; give distinct index labels")
            if len(positions) != self.n_records:
                raise VrlibError(f"the dataset has {len(positions)} records but n_records={self.n_records}")
            outside = ~np.isin(positions, test)
            if outside.any():
                raise VrlibError(
                    f"{int(outside.sum())} record(s) of the dataset are not in D_test; choose them from "
                    "game.test_index_ (D_aux is the attacker's)"
                )
        self._dataset = positions
        self._outside = np.setdiff1d(test, positions)  # where reference records come from
        self.dataset_index_ = self.data_.index[positions]
        if self.reference == "fixed":
            rng = np.random.default_rng(parallel.derive_seed(self.seed, "reference"))
            self._reference = int(self._outside[rng.integers(len(self._outside))])
            self.reference_index_ = self.data_.index[self._reference]
        else:
            self._reference, self.reference_index_ = None, None
        return self

    SIDES = (
        "test",
        "traditional_test",
    )  # the model-seeded test datasets, and the traditional game's of the same target

    def _seeded_in_plans(self) -> list[DatasetPlan]:
        """The IN plans of the model-seeded side: D itself, a fresh seed each; the same for every target."""
        return [self._plan(self._dataset, 1, "model-seeded", "in", k) for k in range(self.n_test_datasets // 2)]

    def _in_dataset(self, target) -> int:
        p = self._position(target)
        if not (self._dataset == p).any():
            raise VrlibError(
                f"target {target!r} is not in the model-seeded dataset D; choose targets from game.dataset_index_"
            )
        return p

    def test_plans(self, target) -> list[DatasetPlan]:
        """IN plans (D, shared by all targets) then OUT plans (D - target + reference, or D - target)."""
        p = self._in_dataset(target)
        n_out = self.n_test_datasets - self.n_test_datasets // 2
        without = self._dataset[self._dataset != p]
        plans = self._seeded_in_plans()
        for k in range(n_out):
            if self.reference == "none":
                plans.append(self._plan(without, 0, "model-seeded", "out", k))
                continue
            if self._reference is not None:
                ref = self._reference
            else:
                rng = np.random.default_rng(parallel.derive_seed(self.seed, "reference", k))
                ref = int(self._outside[rng.integers(len(self._outside))])
            plans.append(self._plan(np.append(without, ref), 0, "model-seeded", "out", k))
        return plans

    def _side_plans(self, target, side: str) -> list[DatasetPlan]:
        if side == "traditional_test":
            return TraditionalGame.test_plans(self, target)
        return self.test_plans(target)

    def _shared_side_plans(self, target, side: str) -> list[DatasetPlan]:
        if side == "traditional_test":
            return super()._shared_side_plans(target, side)
        self._in_dataset(target)
        return self._seeded_in_plans()

    def identity(self) -> dict:
        """As :meth:`TraditionalGame.identity`, with D and the reference record."""
        seeded = dict(reference=self.reference, dataset=self._dataset, reference_record=self._reference)
        return super().identity() | seeded

    def traditional_test(self, target) -> SyntheticDatasets:
        """The traditional game's test datasets of the same target (for comparing the two games)."""
        return self._datasets(TraditionalGame.test_plans(self, target), f"traditional test datasets of {target}")
