"""Lost in the Averages: each record's risk in the traditional and the model-seeded game, with the same attack.

For a fixed dataset D (``n_records`` records of D_test) and records x of D, the query-based
attack of the achilles family is trained once per record on shadow datasets from D_aux,
then scored on the test datasets of both games:

* **traditional** (Def. 2): every test dataset is a fresh draw from D_test, plus x (IN) or
  another record (OUT);
* **model-seeded** (Def. 3, SPEC §4): IN = D, OUT = D − x + one fixed reference record
  (``out_side="reference"``, the default and what the figures use) or D − x
  (``out_side="none"``, the paper's Definition 3 literally, ``n_records - 1`` records);
  only the generator's seed is fresh.

Per record and game the risk is the AUC (and TPR at 10 % FPR) over the test datasets.

**Noise floor.** Each risk is estimated from finitely many games.  Every game is played
``n_runs`` times with disjoint, independent draws and seeds (run ``r`` takes the ``r``-th
slice of the test datasets), with the same attack and the same D: two runs of the *same*
game disagree only by estimation noise, and their RMSD (:func:`summarise_rmsd`) is the
floor beside the between-games RMSD.

**What is shared** (and why summaries over records are not averages of independent
estimates): all records of one D share the model-seeded IN datasets (fitted once), the
traditional OUT test datasets and the OUT shadow datasets (which never contain x), the
reference record and D itself.  Errors of different records' risks are therefore
correlated; a summary over records describes this D and these games, and its variation
over datasets needs independent root seeds.

**Intervals.** Each risk comes with ``N_BOOT`` bootstrap replicates: the test datasets of each
game and run resampled with replacement (IN and OUT apart) at positions drawn from the seed,
the game and the run alone, the same for every record, so that a dataset the records share
stays shared in every replicate.  :func:`summarise_rmsd` and :func:`summarise_miss` give 95 %
intervals from them: the estimation noise of the test games, given each record's attack (its
shadow datasets and training are one draw, which only another root seed varies).  The miss
rate's is the replicates' percentile interval; the RMSD's is normal, with the replicates'
standard error, because the replicates' RMSD sits above the estimate (resampling adds noise to
each risk).  On records without any difference between the games both cover their expectations
at about the nominal rate (``tests/test_lost.py``).

The records are played by :func:`vrlib.play.play` (the model-seeded game's two test sides),
cached per record (namespace ``lost-attacks``): the test labels and scores of both games
(the runs follow from the labels); the datasets all records share go through the games'
cache (namespace ``synthetic``).
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pandas as pd
from scipy.stats import norm
from tqdm import tqdm

from vrlib import metrics, parallel
from vrlib.data.datasets import CENSUS_VARIANTS
from vrlib.errors import VrlibError
from vrlib.experiments.achilles import attack_identity, load_omega, make_attack
from vrlib.experiments.profiles import profile_settings, register
from vrlib.games import ModelSeededGame
from vrlib.params import check_integer, check_number, is_integer
from vrlib.play import GameAttack, play

FAMILY = "lost"
GAMES = ("traditional", "model-seeded")
SIDES = {"model-seeded": "test", "traditional": "traditional_test"}  # game -> side of ModelSeededGame that plays it
THRESHOLDS = (0.6, 0.7, 0.8, 0.9)
N_BOOT = 200  # bootstrap replicates of each risk, for the intervals of the summaries
LEVEL = 0.95  # coverage of those intervals
OUT_SIDES = {"reference": "fixed", "none": "none"}  # out_side -> ModelSeededGame(reference=...)

register(
    FAMILY,
    {
        # CI: checks that everything runs, numbers meaningless.
        "smoke": dict(omega_rows=4000, n_targets=4, n_records=100, n_synth=None, n_shadow=20, n_games=10, n_runs=2,
                      n_queries=2000, sizes=(50, 100), sweep_targets=3, size_targets=((50, 2),),
                      epsilons=(1.0, math.inf), epsilon_targets=3, n_datasets=3, generators=("synthpop", "baynet"),
                      census_targets=2, census_variant="first50000"),
        # Default: fits 20 minutes on 2 cores (see the notebook for the measured time).
        "quick": dict(omega_rows=None, n_targets=100, n_records=1000, n_synth=None, n_shadow=100, n_games=50,
                      n_runs=2, n_queries=100_000, sizes=(100, 1000), sweep_targets=30, size_targets=(),
                      epsilons=(1.0, 10.0, 100.0, 1000.0, math.inf), epsilon_targets=30, n_datasets=15,
                      generators=("synthpop", "baynet"), census_targets=30, census_variant="first50000"),
        # The paper's sizes where its summary gives them (authors' package: 500 + 500 shadow,
        # 100 + 100 evaluation datasets per record, 1,000 records, 30,000 auxiliary records).
        # |D| = 10,000 on the first 100 records of the seeded order only: a record there costs
        # about ten times one at |D| = 1,000 (the notebook measures and prints it, predicted_cost).
        # The ε sweep and Census on the first 250 records of that order: a record costs 8-10 CPU s
        # there (ε) and 18 (Census), so all 1,000 would add about 11 CPU hours (docs/runs.md).
        "paper": dict(omega_rows=None, n_targets=1000, n_records=1000, n_synth=None, n_shadow=1000, n_games=200,
                      n_runs=2, n_queries=100_000, sizes=(100, 1000, 10_000), sweep_targets=1000,
                      size_targets=((10_000, 100),),
                      epsilons=(1.0, 10.0, 100.0, 1000.0, math.inf), epsilon_targets=250, n_datasets=15,
                      generators=("synthpop", "baynet"), census_targets=250, census_variant="first50000"),
    },
)  # fmt: skip

# The authors' sizes per record, from their package (the summary gives none): shadow datasets
# (500 IN + 500 OUT), evaluation games per risk estimate (100 IN + 100 OUT), |D|, D_aux on Adult.
AUTHORS = dict(n_shadow=1000, n_games=200, n_records=1000, n_aux=30_000)


def sizes_vs_authors(settings: dict, n_aux: int) -> pd.DataFrame:
    """Our sizes per record (``settings``, and D_aux's ``n_aux`` records) beside the authors' (:data:`AUTHORS`)."""
    ours = dict(
        n_shadow=settings["n_shadow"], n_games=settings["n_games"], n_records=settings["n_records"], n_aux=n_aux
    )
    what = dict(n_shadow="shadow datasets per record", n_games="test games per risk estimate and run",
                n_records="|D|", n_aux="auxiliary records (D_aux)")  # fmt: skip
    return pd.DataFrame(
        [dict(size=what[k], ours=ours[k], authors=AUTHORS[k], ratio=ours[k] / AUTHORS[k]) for k in AUTHORS]
    )


# What the paper's summary states (papers/004_…txt); low/high bound the stated values.
_PAPER = [
    dict(quantity="rmsd", t=np.nan, setting="all settings", low=0.04, high=0.11, statement="RMSD 0.04–0.11"),
    dict(quantity="miss_rate", t=0.8, setting="Adult, Synthpop", low=np.nan, high=0.94,
         statement="up to 94 % of high-risk records missed at t = 0.8"),
    dict(quantity="miss_rate", t=np.nan, setting="all settings", low=0.73, high=0.94, statement="miss rate 0.73–0.94"),
    dict(quantity="miss_rate", t=0.6, setting="all settings", low=0.20, high=np.nan,
         statement="above 20 % in every setting at t = 0.6"),
    dict(quantity="miss_rate", t=0.9, setting="all settings", low=np.nan, high=0.80,
         statement="up to 80 % at t = 0.9"),
    dict(quantity="model_seeded_risk_over_15_datasets", t=np.nan, setting="one record", low=0.5, high=0.8,
         statement="from about 0.5 to 0.8"),
    dict(quantity="traditional_risk_of_that_record", t=np.nan, setting="one record", low=0.62, high=0.62,
         statement="0.62"),
    # Trends the paper states in words (its §5 on Figs. 2-4), without numbers.
    dict(quantity="miss_rate_trend_t", t=np.nan, setting="all settings", low=np.nan, high=np.nan,
         statement="the miss rate grows with the threshold t"),
    dict(quantity="rmsd_trend_size", t=np.nan, setting="Fig. 3", low=np.nan, high=np.nan,
         statement="records in smaller datasets show a larger gap between the two risks"),
    dict(quantity="rmsd_at_10000", t=np.nan, setting="Fig. 3, |D| = 10,000", low=np.nan, high=np.nan,
         statement="even at |D| = 10,000 the gap (RMSD) remains significant"),
    dict(quantity="risk_to_chance", t=np.nan, setting="Fig. 4", low=0.5, high=0.5,
         statement="as ε decreases the attack's AUC falls to chance (0.5)"),
    dict(quantity="rmsd_trend_epsilon", t=np.nan, setting="Fig. 4", low=np.nan, high=np.nan,
         statement="as ε decreases, with both risks crowded around 0.5, the gap between them shrinks"),
]  # fmt: skip


def paper_values() -> pd.DataFrame:
    """The paper's stated values: ``quantity, t, setting, low, high, statement``."""
    return pd.DataFrame(_PAPER)


# --------------------------------------------------------------------------- settings and the game


def pool_sizes(dataset: str, n_rows: int) -> tuple[int, int]:
    """D_aux and D_test: the authors' 30,000 auxiliary records for the full Adult (the rest, 15,222, is D_test),
    else half and a quarter of Ω (e.g. the 10,000-record Census subset, the smoke profile's subsets)."""
    if dataset == "adult" and n_rows == 45_222:
        return 30_000, 15_222
    return n_rows // 2, n_rows // 4


# The least value of each size of the settings, stated once: settings_for refuses less, and so does notebook 06
# for the sizes a run may override (through check_setting).
LEAST = {
    "n_records": 2,
    "n_shadow": 4,
    "n_runs": 1,
    "n_targets": 1,
    "n_games": 4,
    "n_synth": 1,
    "epsilon_targets": 1,
    "census_targets": 1,
}


def check_setting(name: str, value) -> None:
    """Refuse a value of the size ``name`` that is not an integer of at least ``LEAST[name]``, naming it.

    ``n_games`` counts the games of both sides (IN / OUT), at least 2 each.
    """
    if name == "n_games" and not is_integer(value, minimum=LEAST[name]):
        least = LEAST[name]
        raise VrlibError(f"n_games={value!r} gives fewer than 2 games per side (IN / OUT); use n_games >= {least}")
    check_integer(name, value, minimum=LEAST[name])


def _check_settings(settings: dict) -> dict:
    """Settings with ``n_synth`` filled in, or a VrlibError naming the bad one and its range."""
    settings = dict(settings)
    if settings["n_synth"] is None:
        settings["n_synth"] = settings["n_records"]
    for name in ("n_records", "n_shadow", "n_runs", "n_targets", "n_games", "epsilon_targets", "census_targets"):
        check_setting(name, settings[name])
    if settings["census_variant"] not in CENSUS_VARIANTS:
        raise VrlibError(f"census_variant must be one of {CENSUS_VARIANTS} (got {settings['census_variant']!r})")
    for eps in settings["epsilons"]:
        check_epsilon(eps)
    for pair in settings.get("size_targets", ()):
        if len(pair) != 2 or not all(is_integer(v, minimum=1) for v in pair):
            raise VrlibError(f"size_targets must hold (|D|, records) pairs of positive integers (got {pair!r})")
    check_setting("n_synth", settings["n_synth"])
    return settings


def settings_for(profile: str = "quick", **overrides) -> dict:
    """The family's settings under ``profile`` with ``overrides``, checked (``n_synth`` None becomes ``n_records``)."""
    return _check_settings(profile_settings(FAMILY, profile, **overrides))


def sweep_records(settings: dict, n_records: int | None = None) -> int:
    """Records assessed in the sweeps (Figs. 3–4) at |D| = ``n_records`` (default the profile's |D|).

    ``sweep_targets`` (at most ``n_targets``), lowered where ``size_targets`` names this |D|
    (the paper profile's |D| = 10,000, whose records cost about ten times more; see
    :func:`predicted_cost`), and never more than |D|.  The records are the first ones of :func:`choose_records`'
    seeded order, a rule, not a choice.
    """
    n_records = settings["n_records"] if n_records is None else n_records
    count = min(settings["sweep_targets"], settings["n_targets"], n_records)  # D has n_records records
    return min(count, dict(settings.get("size_targets", ())).get(n_records, count))


def epsilon_records(settings: dict) -> int:
    """Records assessed in the PrivBayes ε sweep (Fig. 4): the first ``epsilon_targets`` of the sweeps' records."""
    return min(settings["epsilon_targets"], sweep_records(settings))


def census_records(settings: dict) -> int:
    """Records assessed in the headline setting on Census: the first ``census_targets`` of the seeded order."""
    return min(settings["census_targets"], settings["n_targets"], settings["n_records"])


def check_epsilon(epsilon) -> float:
    """``epsilon`` as a float if it is a positive number (``math.inf`` = BayNet), else a VrlibError."""
    return check_number("epsilon", epsilon, above=0, allow_inf=True, want="a positive number, or math.inf for BayNet")


def generator_for(generator: str, epsilon=None) -> tuple[str, dict | None]:
    """``(name, params)`` of a game's generator: PrivBayes at ``epsilon``, BayNet when it is infinite."""
    if epsilon is None:
        return generator, None
    epsilon = check_epsilon(epsilon)
    return ("baynet", None) if math.isinf(epsilon) else ("privbayes", {"epsilon": epsilon})


def make_game(
    dataset: str,
    df: pd.DataFrame,
    schema,
    generator: str,
    generator_params: dict | None,
    settings: dict,
    seed: int,
    out_side: str = "reference",
    dataset_records=None,
    n_jobs=None,
) -> ModelSeededGame:
    """The model-seeded game (which also plays the traditional one) with the profile's sizes.

    ``n_test_datasets`` is ``n_games × n_runs``: run ``r`` plays the ``r``-th slice (see :func:`run_ids`).
    """
    if out_side not in OUT_SIDES:
        raise VrlibError(f"out_side must be one of {sorted(OUT_SIDES)} (got {out_side!r})")
    n_aux, n_test = pool_sizes(dataset, len(df))
    if settings["n_records"] >= n_test:
        raise VrlibError(
            f"n_records={settings['n_records']} (|D|) must be smaller than D_test ({n_test} records of {dataset}): "
            f"D is drawn from D_test and the reference record from the rest; choose n_records in [2, {n_test - 1}]"
        )
    game = ModelSeededGame(
        generator,
        generator_params,
        reference=OUT_SIDES[out_side],
        n_aux=n_aux,
        n_test=n_test,
        n_records=settings["n_records"],
        n_synth=settings["n_synth"],
        n_shadow=settings["n_shadow"],
        n_test_datasets=settings["n_games"] * settings["n_runs"],
        seed=seed,
        n_jobs=n_jobs,
        progress=False,
    )
    return game.fit(df, schema, dataset=dataset_records)


def check_records(game: ModelSeededGame, records) -> list:
    """``records`` as a list, or a VrlibError saying which record is not in D and where it is instead."""
    records = list(records)
    if not records:
        raise VrlibError("records is empty; give index labels of records of D (game.dataset_index_)")
    in_d = set(game.dataset_index_)
    aux = set(game.aux_index_)
    for r in records:
        if r in in_d:
            continue
        if r not in game.data_.index:
            raise VrlibError(f"record {r!r} is not an index label of the data; choose records of D")
        where = "in D_aux (the attacker's pool)" if r in aux else "not in D"
        raise VrlibError(f"record {r!r} is {where}; records must be records of D (game.dataset_index_)")
    if len(set(records)) != len(records):
        raise VrlibError("records lists a record twice; give distinct index labels")
    return records


def choose_records(game: ModelSeededGame, n_targets: int, seed: int) -> list:
    """The first ``n_targets`` records of a seeded random order of D (all of D when ``n_targets >= |D|``).

    Smaller selections are subsets of larger ones, so a sweep over fewer records reuses
    the cached results of a run over more.
    """
    d = game.dataset_index_
    order = np.random.default_rng(parallel.derive_seed(seed, "lost records")).permutation(len(d))
    return list(d[order[:n_targets]])


def run_ids(labels, n_runs: int) -> np.ndarray:
    """Run of each test dataset: the IN datasets (then the OUT ones) cut into ``n_runs`` consecutive slices.

    Games' test datasets come IN first, then OUT, each stream in draw order, so slice
    ``r`` of each holds draws and seeds no other slice uses: independent repetitions.
    """
    labels = np.asarray(labels)
    runs = np.empty(len(labels), dtype=np.int64)
    for label in (1, 0):
        where = np.flatnonzero(labels == label)
        for r, part in enumerate(np.array_split(where, n_runs)):
            runs[part] = r
    return runs


def attack_records(
    game: ModelSeededGame, records, settings: dict, seed: int | None = None, progress: bool = True
) -> dict:
    """Test labels, scores and runs of both games for each record, from the cache or computed.

    One attack per record, fitted on its shadow datasets and scored on the test datasets
    of both games (:func:`vrlib.play.play` on the model-seeded game's two sides), seeded
    from the game's seed.  The datasets all records need (:meth:`~vrlib.games.TraditionalGame.shared_plans`) are
    generated once, cached and kept in memory; each record's own datasets are made when
    its turn comes and not cached (so memory does not grow with the number of records).
    Each record's result is cached as soon as it is computed (namespace ``lost-attacks``):
    a stopped run resumes at the first record without one.

    Parameters
    ----------
    seed : int, optional
        The game's seed, if given (a different value is an error: the attacks are seeded by the game).

    Returns
    -------
    dict
        record -> ``{"<game>_labels", "<game>_scores", "<game>_runs"}`` for each game of :data:`GAMES`.
    """
    if seed is not None and seed != game.seed:
        raise VrlibError(f"seed={seed} differs from the game's seed {game.seed}; the attacks are seeded by the game")
    schema = game.schema_
    identity = attack_identity("query", schema, settings)
    attack = GameAttack("query", partial(make_attack, "query", schema, settings), identity)
    results = play(
        game,
        attack,
        records,
        sides=tuple(SIDES.values()),
        seed_stream="lost attack",
        namespace="lost-attacks",
        store_own=False,
        progress=progress,
    )
    out = {}
    for r, sides in results.items():
        arrays = {}
        for name in GAMES:
            prefix = name.replace("-", "_")
            labels, scores = sides[SIDES[name]]
            arrays[f"{prefix}_labels"], arrays[f"{prefix}_scores"] = labels, scores
            arrays[f"{prefix}_runs"] = run_ids(labels, settings["n_runs"])
        out[r] = arrays
    return out


def bootstrap_aucs(labels, scores, runs, seed: int, game: str, n_boot: int | None = None) -> dict[int, np.ndarray]:
    """``n_boot`` (default ``N_BOOT``) bootstrap replicates of one record's AUC in each run of ``game``.

    The run's IN and OUT test datasets are resampled with replacement, apart, at positions
    drawn from ``(seed, game, run)`` alone: the same positions for every record, so that a test
    dataset the records share (the traditional OUT, the model-seeded IN datasets, at the same
    position in every record's draw order) is shared in each replicate too.
    """
    n_boot = N_BOOT if n_boot is None else n_boot
    out = {}
    for r in np.unique(runs):
        sel = runs == r
        member, other = scores[sel & (labels == 1)], scores[sel & (labels == 0)]
        rng = np.random.default_rng(parallel.derive_seed(seed, "lost bootstrap", game, int(r)))
        pick_member = rng.integers(0, len(member), (n_boot, len(member)))
        pick_other = rng.integers(0, len(other), (n_boot, len(other)))
        out[int(r)] = metrics.auc_rows(member[pick_member], other[pick_other])
    return out


def _rows(arrays: dict, record, seed: int) -> list[dict]:
    rows = []
    for name in GAMES:
        prefix = name.replace("-", "_")
        labels, scores, runs = (arrays[f"{prefix}_{k}"] for k in ("labels", "scores", "runs"))
        replicates = bootstrap_aucs(labels, scores, runs, seed, name)
        for r in np.unique(runs):
            sel = runs == r
            rows.append(
                dict(
                    record=record,
                    game=name,
                    run=int(r),
                    n_games=int(sel.sum()),
                    auc=metrics.auc(labels[sel], scores[sel]),
                    tpr_at_fpr_10=metrics.tpr_at_fpr(labels[sel], scores[sel], 0.1),
                    auc_boot=replicates[int(r)],
                )
            )
    return rows


# --------------------------------------------------------------------------- experiments


def compare_games(
    dataset: str = "adult",
    generator: str = "synthpop",
    *,
    profile: str = "quick",
    seed: int = 0,
    generator_params: dict | None = None,
    epsilon=None,
    records=None,
    dataset_records=None,
    out_side: str = "reference",
    n_jobs=None,
    progress: bool = True,
    **overrides,
) -> pd.DataFrame:
    """Risk of each record of D in both games, with the same attack; one row per record × game × run.

    Parameters
    ----------
    dataset : {"adult", "census"}
    generator : str
        Generator name (``synthpop``, ``baynet``, ...); ignored when ``epsilon`` is given.
    profile : {"smoke", "quick", "paper"}
    seed : int
        Root seed: split, D, reference record, every game, the attack.
    generator_params : dict, optional
    epsilon : float, optional
        Use PrivBayes at this ε (``math.inf``: BayNet).
    records : sequence of index labels, optional
        Records of D to assess; default ``n_targets`` records of D drawn at random.
    dataset_records : sequence of index labels, optional
        The records of D (``n_records`` of D_test); default drawn from D_test.
    out_side : {"reference", "none"}
        Model-seeded OUT = D − x + reference record, or D − x (Def. 3).
    **overrides
        Profile settings to change (``n_records``, ``n_games``, ...).

    Returns
    -------
    DataFrame
        ``record, game, run, n_games, auc, tpr_at_fpr_10, auc_boot`` (the AUC's :func:`bootstrap_aucs`) plus the setting (``dataset,
        generator, epsilon, n_records, out_side, profile, seed``).
    """
    settings = settings_for(profile, **overrides)
    if epsilon is not None:
        generator, generator_params = generator_for(generator, epsilon)
    df, schema = load_omega(dataset, settings["omega_rows"], seed, settings["census_variant"])
    game = make_game(
        dataset, df, schema, generator, generator_params, settings, seed, out_side, dataset_records, n_jobs
    )
    records = choose_records(game, settings["n_targets"], seed) if records is None else check_records(game, records)
    results = attack_records(game, records, settings, progress=progress)
    out = pd.DataFrame([row for r in records for row in _rows(results[r], r, seed)])
    eps = (generator_params or {}).get("epsilon", math.inf if generator == "baynet" else np.nan)
    out = out.assign(
        dataset=dataset,
        generator=generator,
        epsilon=float(eps),
        n_records=settings["n_records"],
        out_side=out_side,
        profile=profile,
        seed=seed,
    )
    return out


def record_across_datasets(
    record,
    dataset: str = "adult",
    generator: str = "synthpop",
    *,
    n_datasets: int | None = None,
    profile: str = "quick",
    seed: int = 0,
    generator_params: dict | None = None,
    out_side: str = "reference",
    n_jobs=None,
    progress: bool = True,
    **overrides,
) -> pd.DataFrame:
    """One record placed in ``n_datasets`` different datasets D (the paper's 15): its risk in both games in each.

    D_j = the record + ``n_records - 1`` records of D_test drawn with a seed of ``(seed, record, j)``.
    The split, the shadow datasets and the attack are the same for every D_j, and so is
    the traditional game (it never looks at D): its risk is one number, repeated.

    Returns
    -------
    DataFrame
        As :func:`compare_games`, plus ``dataset_id`` (j).
    """
    settings = settings_for(profile, **overrides)
    n_datasets = settings["n_datasets"] if n_datasets is None else n_datasets
    check_integer("n_datasets", n_datasets, minimum=1)
    df, schema = load_omega(dataset, settings["omega_rows"], seed, settings["census_variant"])
    probe = make_game(dataset, df, schema, generator, generator_params, settings, seed, out_side, n_jobs=n_jobs)
    if record not in set(probe.test_index_):
        where = "in D_aux (the attacker's pool)" if record in set(probe.aux_index_) else "not in the data"
        raise VrlibError(f"record {record!r} is {where}; choose a record of D_test (game.test_index_)")
    others = probe.test_index_[probe.test_index_ != record]
    parts = []
    for j in tqdm(range(n_datasets), desc="datasets", disable=not progress):
        rng = np.random.default_rng(parallel.derive_seed(seed, "lost dataset", str(record), j))
        chosen = [record, *others[rng.choice(len(others), size=settings["n_records"] - 1, replace=False)]]
        part = compare_games(
            dataset,
            generator,
            profile=profile,
            seed=seed,
            generator_params=generator_params,
            records=[record],
            dataset_records=chosen,
            out_side=out_side,
            n_jobs=n_jobs,
            progress=False,
            **overrides,
        )
        parts.append(part.assign(dataset_id=j))
    return pd.concat(parts, ignore_index=True)


# --------------------------------------------------------------------------- summaries


def risks(results: pd.DataFrame, metric: str = "auc") -> pd.DataFrame:
    """One row per record, one column per ``(game, run)``: the risk estimates side by side."""
    return results.pivot_table(index="record", columns=["game", "run"], values=metric, aggfunc="first")


def _groups(results: pd.DataFrame, by):
    """``(setting dict, results of that setting)`` for each setting."""
    by = list(by)
    if not by:
        yield {}, results
        return
    for key, part in results.groupby(by, sort=False):
        yield dict(zip(by, key if isinstance(key, tuple) else (key,))), part


def _replicates(part: pd.DataFrame, records, metric: str) -> dict | None:
    """``(game, run)`` -> records × ``N_BOOT`` bootstrap risks, rows in the order of ``records``; None without them."""
    if metric != "auc" or "auc_boot" not in part:
        return None
    out = {}
    for (game, run), sub in part.groupby(["game", "run"], sort=False):
        out[(game, run)] = np.stack(sub.set_index("record")["auc_boot"].reindex(records).to_numpy())
    return out


def _replicate_rmsd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The RMSD over records (rows) of each bootstrap replicate (column) of two records × replicates arrays."""
    return np.sqrt(np.mean((a - b) ** 2, axis=0))


def summarise_rmsd(results: pd.DataFrame, by=(), metric: str = "auc") -> pd.DataFrame:
    """RMSD between the games and its noise floor, per setting.

    Columns: ``rmsd`` (traditional vs model-seeded, run 0 of each), ``rmsd_se``, ``rmsd_low``,
    ``rmsd_high`` (its bootstrap standard error and the normal ``LEVEL`` interval, from the
    risks' bootstrap replicates; NaN without them), ``floor_traditional``
    and ``floor_model_seeded`` (run 0 vs run 1 of the same game), ``floor`` =
    ``sqrt((floor_traditional² + floor_model_seeded²) / 2)``, the RMSD two games with
    identical risks would show from estimation noise alone, ``rmsd_beyond_noise`` =
    ``sqrt(max(0, rmsd² − floor²))``, ``floor_se`` and ``excess_se`` (the bootstrap standard
    errors of the floor and of ``rmsd − floor``; NaN without replicates or a second run), the
    mean risks, ``n_targets`` (records assessed), ``n_games`` (per run).

    The floor is an estimate over the same records and test datasets as the RMSD, and shares
    run 0 of each game with it: each replicate gives both (the same resampled test datasets for
    every record, game and run), so ``excess_se`` is the se of their difference with their
    covariance kept, not ``hypot(rmsd_se, floor_se)``.
    """
    z = norm.ppf(0.5 + LEVEL / 2)
    rows = []
    for setting, part in _groups(results, by):
        w = risks(part, metric)
        t0, m0 = w[("traditional", 0)], w[("model-seeded", 0)]
        row = dict(setting, rmsd=metrics.rmsd(t0, m0))
        boot = _replicates(part, w.index, metric)
        se = floor_se = excess_se = np.nan
        if boot is not None:
            replicate_rmsd = _replicate_rmsd(boot[("traditional", 0)], boot[("model-seeded", 0)])
            se = float(np.std(replicate_rmsd, ddof=1))
            if ("traditional", 1) in boot and ("model-seeded", 1) in boot:
                ft_b = _replicate_rmsd(boot[("traditional", 0)], boot[("traditional", 1)])
                fm_b = _replicate_rmsd(boot[("model-seeded", 0)], boot[("model-seeded", 1)])
                replicate_floor = np.sqrt((ft_b**2 + fm_b**2) / 2)
                floor_se = float(np.std(replicate_floor, ddof=1))
                excess_se = float(np.std(replicate_rmsd - replicate_floor, ddof=1))
        low = max(0.0, row["rmsd"] - z * se) if np.isfinite(se) else np.nan
        row.update(rmsd_se=se, rmsd_low=low, rmsd_high=row["rmsd"] + z * se)
        if ("traditional", 1) in w and ("model-seeded", 1) in w:
            ft, fm = metrics.rmsd(t0, w[("traditional", 1)]), metrics.rmsd(m0, w[("model-seeded", 1)])
            floor = float(np.sqrt((ft**2 + fm**2) / 2))
            beyond = float(np.sqrt(max(0.0, row["rmsd"] ** 2 - floor**2)))
        else:
            ft = fm = floor = beyond = np.nan
        row.update(
            floor_traditional=ft,
            floor_model_seeded=fm,
            floor=floor,
            rmsd_beyond_noise=beyond,
            floor_se=floor_se,
            excess_se=excess_se,
            mean_traditional=float(t0.mean()),
            mean_model_seeded=float(m0.mean()),
            n_targets=len(w),
            n_games=int(part["n_games"].min()),
        )
        rows.append(row)
    return pd.DataFrame(rows)


def _miss_interval(reference: np.ndarray, other: np.ndarray, t: float) -> tuple[float, float]:
    """Percentile ``LEVEL`` interval of the miss rate over bootstrap replicates (records × replicates arrays).

    Replicates in which no record is high-risk have no miss rate and are left out; NaN when all are.
    """
    high = reference >= t
    n_high = high.sum(axis=0)
    rates = (high & (other < t)).sum(axis=0)[n_high > 0] / n_high[n_high > 0]
    if len(rates) == 0:
        return np.nan, np.nan
    low, high_end = np.percentile(rates, [50 * (1 - LEVEL), 50 * (1 + LEVEL)])
    return float(low), float(high_end)


def summarise_miss(results: pd.DataFrame, by=(), thresholds=THRESHOLDS, metric: str = "auc") -> pd.DataFrame:
    """Miss rate at each threshold, and the miss rate noise alone produces, per setting × t.

    Columns: ``t``, ``n_high`` (records with model-seeded risk ``>= t``, run 0),
    ``n_high_traditional`` (the same in the traditional game), ``miss_rate`` (of the
    ``n_high`` records, the share the traditional game, run 0, puts below t; NaN when
    ``n_high`` is 0) and ``miss_rate_noise`` (the same with run 1 of the model-seeded
    game in place of the traditional game: what two runs of one game disagree on), each
    with its percentile ``LEVEL`` interval over the risks' bootstrap replicates
    (``miss_rate_low``, ``miss_rate_high``, ``miss_rate_noise_low``, ``miss_rate_noise_high``;
    NaN without replicates).
    """
    thresholds = [metrics.check_threshold(t) for t in thresholds]
    rows = []
    for setting, part in _groups(results, by):
        w = risks(part, metric)
        t0, m0 = w[("traditional", 0)], w[("model-seeded", 0)]
        m1 = w[("model-seeded", 1)] if ("model-seeded", 1) in w else None
        boot = _replicates(part, w.index, metric)
        for t in thresholds:
            miss_ci = noise_ci = (np.nan, np.nan)
            if boot is not None:
                miss_ci = _miss_interval(boot[("model-seeded", 0)], boot[("traditional", 0)], t)
                if ("model-seeded", 1) in boot:
                    noise_ci = _miss_interval(boot[("model-seeded", 0)], boot[("model-seeded", 1)], t)
            rows.append(
                dict(
                    setting,
                    t=t,
                    n_high=int((m0 >= t).sum()),
                    n_high_traditional=int((t0 >= t).sum()),
                    miss_rate=metrics.miss_rate(m0, t0, t),
                    miss_rate_low=miss_ci[0],
                    miss_rate_high=miss_ci[1],
                    miss_rate_noise=metrics.miss_rate(m0, m1, t) if m1 is not None else np.nan,
                    miss_rate_noise_low=noise_ci[0],
                    miss_rate_noise_high=noise_ci[1],
                )
            )
    return pd.DataFrame(rows)


def _paper(quantity: str) -> dict:
    return next(p for p in _PAPER if p["quantity"] == quantity)


def paper_miss_rate(t: float) -> str:
    """What the paper's summary says about the miss rate at threshold ``t`` (and over all thresholds)."""
    rows = [p for p in _PAPER if p["quantity"] == "miss_rate" and (p["t"] == t or np.isnan(p["t"]))]
    return "; ".join(p["statement"] for p in rows)


def table_rmsd_vs_paper(summary: pd.DataFrame) -> pd.DataFrame:
    """:func:`summarise_rmsd` with the paper's RMSD range beside ours (``paper_low``, ``paper_high``)."""
    rmsd = _paper("rmsd")
    return summary.assign(paper_low=rmsd["low"], paper_high=rmsd["high"])


def table_miss_vs_paper(summary: pd.DataFrame) -> pd.DataFrame:
    """:func:`summarise_miss` with the paper's statements about the miss rate at each t beside ours."""
    return summary.assign(paper=[paper_miss_rate(t) for t in summary["t"]])


def summarise_across_datasets(results: pd.DataFrame, metric: str = "auc") -> pd.DataFrame:
    """One record in several datasets D (:func:`record_across_datasets`): the spread of its model-seeded risk.

    Columns: ``traditional`` (its one traditional risk, run 0), ``model_seeded_min``,
    ``model_seeded_max``, ``model_seeded_mean`` (run 0 over the datasets),
    ``between_datasets_sd`` (sd of run 0 over the datasets), ``noise_sd`` (sd of one
    run's estimate, from run 0 vs run 1 in each dataset: ``sqrt(mean((r0 − r1)²) / 2)``),
    ``n_datasets``, and the paper's values.
    """
    wide = results.pivot_table(index="dataset_id", columns=["game", "run"], values=metric, aggfunc="first")
    m0 = wide[("model-seeded", 0)]
    noise = np.sqrt(np.mean((m0 - wide[("model-seeded", 1)]) ** 2) / 2) if ("model-seeded", 1) in wide else np.nan
    return pd.DataFrame(
        [
            dict(
                record=results["record"].iloc[0],
                traditional=float(wide[("traditional", 0)].iloc[0]),
                model_seeded_min=float(m0.min()),
                model_seeded_max=float(m0.max()),
                model_seeded_mean=float(m0.mean()),
                between_datasets_sd=float(m0.std(ddof=1)) if len(m0) > 1 else np.nan,
                noise_sd=float(noise),
                n_datasets=len(m0),
                paper_model_seeded_low=_paper("model_seeded_risk_over_15_datasets")["low"],
                paper_model_seeded_high=_paper("model_seeded_risk_over_15_datasets")["high"],
                paper_traditional=_paper("traditional_risk_of_that_record")["low"],
            )
        ]
    )


# --------------------------------------------------------------------------- cost


def _fits(settings: dict) -> tuple[int, int]:
    """``(per record, shared)`` generator fits of a game with these sizes (shared: before the redraws of rejection)."""
    n_shadow, n_test = settings["n_shadow"], settings["n_games"] * settings["n_runs"]
    own = n_shadow // 2 + n_test // 2 + (n_test - n_test // 2)  # shadow IN, traditional IN, model-seeded OUT
    shared = (n_shadow - n_shadow // 2) + (n_test - n_test // 2) + n_test // 2  # shadow OUT, traditional OUT, D
    return own, shared


def measure_record_cost(
    dataset: str = "adult",
    generator: str = "synthpop",
    *,
    profile: str = "quick",
    epsilon=None,
    fraction: float = 0.05,
    seed: int = 0,
    n_jobs: int = 1,
    **overrides,
) -> dict:
    """Measured CPU seconds of one record of the comparison, and of the datasets all records share, at the profile's sizes.

    Plays the comparison on two records of the seeded order (:func:`choose_records`) with
    ``fraction`` of the profile's shadow datasets and games (at least 4 of each), in a
    temporary cache and with a seed of its own (nothing of the real run is computed or
    cached here): first the shared datasets and the first record, then the second record
    alone.  Each part is scaled to the profile's sizes by its number of generator fits
    (the attack's cost grows more slowly, so the scaling overstates it a little).  CPU
    time is this process's (``n_jobs=1``, the default: everything runs here, so CPU time
    is the work whatever else loads the machine).

    Returns
    -------
    dict
        ``record_cpu_s`` (one record's own datasets and attack), ``shared_cpu_s`` (the
        shared datasets of one game), ``seeded_in_cpu_s`` (of which model-seeded IN: what
        each further D of Fig. 5 needs), the measured ``fits`` and ``wall_s``, and the
        setting (``dataset, generator, epsilon, n_records, fraction``).
    """
    import os
    import tempfile
    import time

    if not 0 < fraction <= 1:
        raise VrlibError(f"fraction must be in (0, 1] (got {fraction!r})")
    settings = settings_for(profile, **overrides)
    scaled = dict(
        settings,
        n_shadow=max(4, round(settings["n_shadow"] * fraction)),
        n_games=max(4, round(settings["n_games"] * fraction)),
    )
    name, params = generator_for(generator, epsilon)
    own_full, shared_full = _fits(settings)
    own_scaled, shared_scaled = _fits(scaled)
    cost_seed = parallel.derive_seed(seed, "lost cost")
    previous = os.environ.get("VRLIB_CACHE_DIR")
    try:
        with tempfile.TemporaryDirectory(prefix="vrlib-cost-") as tmp:
            os.environ["VRLIB_CACHE_DIR"] = tmp
            df, schema = load_omega(dataset, settings["omega_rows"], seed, settings["census_variant"])
            tiny = dict(scaled, n_shadow=4, n_games=4)  # imports and compiled code, not timed
            warm = make_game(dataset, df, schema, name, params, tiny, cost_seed + 1, n_jobs=n_jobs)
            attack_records(warm, choose_records(warm, 1, cost_seed + 1), tiny, cost_seed + 1, progress=False)
            game = make_game(dataset, df, schema, name, params, scaled, cost_seed, n_jobs=n_jobs)
            first, second = choose_records(game, 2, cost_seed)
            c0, w0 = time.process_time(), time.perf_counter()
            attack_records(game, [first], scaled, cost_seed, progress=False)
            c1 = time.process_time()
            fits_first = game.stats_["generated"]
            attack_records(game, [second], scaled, cost_seed, progress=False)
            c2, w2 = time.process_time(), time.perf_counter()
    finally:
        if previous is None:
            os.environ.pop("VRLIB_CACHE_DIR", None)
        else:
            os.environ["VRLIB_CACHE_DIR"] = previous
    record = (c2 - c1) * own_full / own_scaled
    shared = max(c1 - c0 - (c2 - c1), 0.0) * shared_full / shared_scaled
    n_test = settings["n_games"] * settings["n_runs"]
    eps = math.inf if name == "baynet" else (params or {}).get("epsilon", np.nan)
    return dict(
        dataset=dataset,
        generator=generator if epsilon is None else "privbayes",
        epsilon=float(eps),
        n_records=settings["n_records"],
        fraction=fraction,
        record_cpu_s=record,
        shared_cpu_s=shared,
        seeded_in_cpu_s=shared * (n_test // 2) / shared_full,
        fits=game.stats_["generated"],
        fits_first=fits_first,
        wall_s=w2 - w0,
    )


def notebook_parts(settings: dict, dataset: str = "adult", census: bool = False) -> pd.DataFrame:
    """What notebook 06 computes under ``settings``, part by part, and what each part adds to the earlier ones.

    Columns: ``part``, ``dataset``, ``generator``, ``epsilon``, ``n_records`` (|D|),
    ``records`` (records assessed), ``new_records`` (those whose results no earlier part
    has: a sweep at the profile's |D| assesses a prefix of the headline's records, with
    the same game, so its results come from the cache) and ``new_games`` (games whose
    shared datasets are made: 1 per new setting, ``n_datasets`` for Fig. 5, whose
    datasets D_j share the headline game's shadow and traditional datasets and need only
    their own model-seeded IN ones).  ``census=True`` adds the headline setting on Census.
    """
    rows, done = [], {}

    def add(part, data, generator, epsilon, n_records, records, fig5=False):
        key = (data, generator, None if np.isnan(epsilon) else float(epsilon), n_records)
        new = 0 if fig5 else max(records - done.get(key, 0), 0)
        rows.append(
            dict(
                part=part,
                dataset=data,
                generator=generator,
                epsilon=float(epsilon),
                n_records=n_records,
                records=records,
                new_records=records if fig5 else new,
                new_games=settings["n_datasets"] if fig5 else int(key not in done and new > 0),
            )
        )
        if not fig5:
            done[key] = max(done.get(key, 0), records)

    n = settings["n_records"]
    for g in settings["generators"]:
        add(f"Figs. 1-2, {g}", dataset, g, math.inf if g == "baynet" else np.nan, n, min(settings["n_targets"], n))
    for size in settings["sizes"]:
        add(f"Fig. 3, |D| = {size:,}", dataset, "synthpop", np.nan, size, sweep_records(settings, size))
    for eps in settings["epsilons"]:
        g = "baynet" if math.isinf(eps) else "privbayes"
        add(f"Fig. 4, epsilon = {eps:g}", dataset, g, eps, n, epsilon_records(settings))
    add("Fig. 5", dataset, "synthpop", np.nan, n, settings["n_datasets"], fig5=True)
    if census:
        add("Census, synthpop", "census", "synthpop", np.nan, n, census_records(settings))
    return pd.DataFrame(rows)


def predicted_cost(parts: pd.DataFrame, costs: pd.DataFrame, workers: int = 2) -> pd.DataFrame:
    """Predicted CPU hours of each part of :func:`notebook_parts` from measured costs (:func:`measure_record_cost`).

    A part costs ``new_records × record_cpu_s + new_games × shared_cpu_s`` of its setting's
    measurement (Fig. 5: ``n_datasets × (record_cpu_s + seeded_in_cpu_s)``).  ``hours_on_workers``
    divides by ``workers`` (the fits and the forest spread over the cores; the rest, about
    a tenth, does not, so it is a lower bound).

    Raises
    ------
    VrlibError
        When a part needs a setting that ``costs`` has no measurement of.
    """
    out = []
    for part in parts.itertuples(index=False):
        match = costs[
            (costs.dataset == part.dataset)
            & (costs.generator == part.generator)
            & (costs.n_records == part.n_records)
            & ((costs.epsilon == part.epsilon) | (costs.epsilon.isna() & np.isnan(part.epsilon)))
        ]
        if match.empty:
            raise VrlibError(
                f"no measured cost for {part.part!r} ({part.dataset}, {part.generator}, epsilon {part.epsilon}, "
                f"|D| = {part.n_records}); measure it with measure_record_cost"
            )
        m = match.iloc[0]
        if part.part == "Fig. 5":
            cpu = part.new_games * (m.record_cpu_s + m.seeded_in_cpu_s)
        else:
            cpu = part.new_records * m.record_cpu_s + part.new_games * m.shared_cpu_s
        out.append(
            dict(
                part._asdict(),
                record_cpu_s=float(m.record_cpu_s),
                cpu_hours=cpu / 3600,
                hours_on_workers=cpu / 3600 / workers,
            )
        )
    return pd.DataFrame(out)


def measure_notebook_cost(
    settings_profile: str = "quick",
    dataset: str = "adult",
    *,
    census: bool = False,
    fraction: float = 0.05,
    seed: int = 0,
    **overrides,
) -> pd.DataFrame:
    """:func:`measure_record_cost` for every setting :func:`notebook_parts` needs (one row each)."""
    settings = settings_for(settings_profile, **overrides)
    parts = notebook_parts(settings, dataset, census)
    rows = []
    for key, _ in parts.groupby(["dataset", "generator", "epsilon", "n_records"], dropna=False, sort=False):
        data, generator, eps, n = key
        kw = dict(overrides, n_records=int(n))
        if generator == "privbayes":
            rows.append(
                measure_record_cost(
                    data, "privbayes", profile=settings_profile, epsilon=eps, fraction=fraction, seed=seed, **kw
                )
            )
        else:
            rows.append(
                measure_record_cost(data, generator, profile=settings_profile, fraction=fraction, seed=seed, **kw)
            )
    costs = pd.DataFrame(rows)
    costs.loc[costs.generator == "synthpop", "epsilon"] = np.nan
    return costs
